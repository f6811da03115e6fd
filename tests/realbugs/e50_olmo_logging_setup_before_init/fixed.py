"""The process group is initialized before logging is configured, so the rank is the run's.

Report: https://github.com/allenai/OLMo/pull/387
Class: E import-time distributed state
"""

import logging
import os
import socket

import torch.distributed as dist

_log_extra_fields = {}


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized()


def get_global_rank() -> int:
    return int(os.environ.get("RANK") or dist.get_rank())


def log_extra_field(field_name, field_value):
    _log_extra_fields[field_name] = field_value


def setup_logging() -> None:
    log_extra_field("hostname", socket.gethostname())
    if is_distributed():
        log_extra_field("global_rank", get_global_rank())
    else:
        log_extra_field("global_rank", 0)

    old_log_record_factory = logging.getLogRecordFactory()

    def log_record_factory(*args, **kwargs):
        record = old_log_record_factory(*args, **kwargs)
        for field_name, field_value in _log_extra_fields.items():
            setattr(record, field_name, field_value)
        return record

    logging.setLogRecordFactory(log_record_factory)

    def rank0_filter(record):
        if record.levelno > logging.INFO:
            return 1
        return 1 if getattr(record, "global_rank", 0) == 0 else 0

    handler = logging.StreamHandler()
    handler.addFilter(rank0_filter)
    logging.basicConfig(handlers=[handler], level=logging.INFO)


def prepare_cli_environment():
    setup_logging()


def main(cfg) -> None:
    dist.barrier()
    train(cfg)


if __name__ == "__main__":
    # Initialize process group.
    dist.init_process_group(backend="nccl")

    prepare_cli_environment()
    main(load_config())
