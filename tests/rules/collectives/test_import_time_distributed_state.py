"""RNK111: the rank or world size read once, before the run has one."""

from __future__ import annotations

import pytest

from ranklint import Config
from tests.conftest import codes_by_line, findings_of

SELECT = ("RNK111",)
HEADER = "import os\n\nimport torch.distributed as dist\n"


def _lines(body: str, path: str = "pkg/state.py") -> list[int]:
    return [line for line, _ in codes_by_line(HEADER + body, path, Config(select=SELECT))]


@pytest.mark.parametrize(
    "value",
    [
        'int(os.environ["RANK"])',
        'int(os.environ["LOCAL_RANK"])',
        'os.environ.get("WORLD_SIZE", "1")',
        'os.getenv("LOCAL_WORLD_SIZE")',
        '"WORLD_SIZE" in os.environ',
        'int(os.environ.get("SLURM_PROCID", 0)) == 0',
        "dist.get_rank()",
        "dist.get_world_size()",
        "dist.is_initialized()",
        "dist.get_rank() if dist.is_initialized() else 0",
    ],
)
def test_module_level_store_of_distributed_state_is_reported(value: str) -> None:
    assert _lines(f"STATE = {value}\n") == [4]


@pytest.mark.parametrize(
    "value",
    [
        'os.environ.get("NCCL_TIMEOUT", "600")',
        'os.environ["HOME"]',
        '"MASTER_ADDR" in os.environ',
        "dist.is_available()",
        "lambda: dist.get_rank()",
        'getattr(rank_zero_only, "rank", int(os.environ.get("RANK", 0)))',
    ],
)
def test_module_level_store_of_other_values_is_not_reported(value: str) -> None:
    assert _lines(f"STATE = {value}\n") == []


def test_annotated_and_attribute_and_class_level_stores_are_reported() -> None:
    body = (
        'RANK: int = int(os.environ["RANK"])\n'
        "holder.world = dist.get_world_size()\n"
        "class Config:\n"
        '    local_rank = int(os.environ["LOCAL_RANK"])\n'
    )

    assert _lines(body) == [4, 5, 7]


def test_store_inside_a_function_is_not_reported() -> None:
    body = 'def rank():\n    value = int(os.environ["RANK"])\n    return value\n'

    assert _lines(body) == []


def test_store_through_a_helper_of_the_module_is_reported_with_what_it_reads() -> None:
    body = (
        "def _get_rank():\n"
        '    for key in ("RANK", "LOCAL_RANK"):\n'
        "        if key in os.environ:\n"
        "            return int(os.environ[key])\n"
        "    return 0\n"
        "RANK = _get_rank()\n"
    )

    [finding] = findings_of(HEADER + body, select=SELECT)

    assert finding.line == 9
    assert finding.message.startswith(
        "stores `_get_rank(), which reads os.environ['RANK']` when the module is imported"
    )


def test_helper_that_reads_no_distributed_state_is_not_followed() -> None:
    body = 'def _home():\n    return os.environ["HOME"]\nHOME = _home()\n'

    assert _lines(body) == []


@pytest.mark.parametrize(
    "tail",
    [
        'if __name__ == "__main__":\n    main()\n',
        "import argparse\nparser = argparse.ArgumentParser()\n",
        "import sys\nif not ok:\n    sys.exit(1)\n",
        "for batch in data:\n    model(batch).sum().backward()\n",
    ],
)
def test_entry_script_is_not_reported(tail: str) -> None:
    body = f'LOCAL_RANK = int(os.environ["LOCAL_RANK"])\n\n\ndef main():\n    pass\n\n\n{tail}'

    assert _lines(body) == []


def test_file_matching_script_patterns_is_not_reported() -> None:
    assert _lines('RANK = int(os.environ["RANK"])\n', "scripts/train.py") == []


@pytest.mark.parametrize(("path", "lines"), [("pkg/test-t5.py", []), ("pkg/test_t5.py", [4])])
def test_file_no_import_can_name_is_an_entry_script(path: str, lines: list[int]) -> None:
    config = Config(select=SELECT, confidence="low")
    found = codes_by_line(HEADER + 'RANK = int(os.environ["RANK"])\n', path, config)

    assert [line for line, _ in found] == lines


def test_code_under_a_main_guard_is_not_import_time() -> None:
    body = 'if __name__ == "__main__":\n    RANK = int(os.environ["RANK"])\n'

    assert _lines(body) == []


FALLBACK = (
    "def log_rank_zero(msg):\n"
    "    rank = dist.get_rank() if dist.is_initialized() else 0\n"
    "    if rank == 0:\n"
    "        print(msg)\n"
)


def test_fallback_helper_called_before_init_is_reported() -> None:
    body = FALLBACK + (
        "def main(cfg):\n"
        "    log_rank_zero(str(cfg))\n"
        "    if cfg.verbose:\n"
        "        log_rank_zero('verbose')\n"
        "    dist.init_process_group('nccl')\n"
        "    log_rank_zero('after')\n"
    )

    found = findings_of(HEADER + body, select=SELECT)

    assert [f.line for f in found] == [9, 11]
    assert found[0].message.startswith(
        "`log_rank_zero()` reads the rank before `init_process_group()` below"
    )


def test_fallback_helper_in_a_function_that_never_initialises_is_not_reported() -> None:
    body = FALLBACK + "def main(cfg):\n    log_rank_zero(str(cfg))\n"

    assert _lines(body) == []


def test_helper_that_falls_back_to_the_launcher_rank_is_not_reported() -> None:
    body = (
        "def log_rank_zero(msg):\n"
        "    if dist.is_initialized():\n"
        "        rank = dist.get_rank()\n"
        "    else:\n"
        '        rank = int(os.environ.get("RANK", "0"))\n'
        "    if rank == 0:\n"
        "        print(msg)\n"
        "def main(cfg):\n"
        "    log_rank_zero(str(cfg))\n"
        "    dist.init_process_group('nccl')\n"
    )

    assert _lines(body) == []


def test_deepspeed_init_distributed_counts_as_initialisation() -> None:
    body = FALLBACK + (
        "import deepspeed\n"
        "def main(cfg):\n"
        "    log_rank_zero(str(cfg))\n"
        "    deepspeed.init_distributed()\n"
    )

    assert _lines(body) == [10]


@pytest.mark.parametrize(
    ("class_name", "method", "value", "reported"),
    [
        ("CachedDataset", "__init__", "get_rank()", True),
        ("LabelsDataModule", "__init__", "get_rank()", True),
        ("CachedDataset", "setup", "get_rank()", False),
        ("Logger", "__init__", "get_rank()", False),
        ("CachedDataset", "__init__", "other()", False),
        ("CachedDataset", "__init__", "dist.get_rank()", False),
    ],
)
def test_fallback_rank_stored_when_a_dataset_is_built_is_reported(
    class_name: str, method: str, value: str, reported: bool
) -> None:
    source = (
        "\n"
        "\n"
        "def get_rank():\n"
        "    return dist.get_rank() if dist.is_initialized() else 0\n"
        "\n"
        "\n"
        "def other():\n"
        "    return 3\n"
        "\n"
        "\n"
        f"class {class_name}:\n"
        f"    def {method}(self):\n"
        f"        self.rank = {value}\n"
        "        local = get_rank()\n"
    )

    assert _lines(source) == ([16] if reported else [])
