"""Collectives that frameworks issue implicitly, reached by only some ranks (RNK102)."""

from __future__ import annotations

import pytest

from tests.conftest import codes_by_line, findings_of

SELECT = ("RNK102",)


def _lines(source: str) -> list[int]:
    return [line for line, _ in codes_by_line(source, select=SELECT)]


@pytest.mark.parametrize("attribute", ["log_dir", "callback_metrics"])
def test_synchronising_trainer_property_read_on_rank_zero_in_a_hook_is_reported(
    attribute: str,
) -> None:
    source = (
        "def on_validation_epoch_end(trainer):\n"
        "    if trainer.is_global_zero:\n"
        f"        value = trainer.{attribute}\n"
        "        print(value)\n"
    )

    [finding] = findings_of(source, select=SELECT)

    assert (finding.line, finding.col) == (3, 17)
    assert finding.message.startswith(f"`{attribute}` is reached only when")


@pytest.mark.parametrize("read", ["self.trainer.log_dir", "self._trainer.callback_metrics"])
def test_property_read_through_an_attribute_chain_is_reported(read: str) -> None:
    source = (
        "class Callback:\n"
        "    def on_train_end(self):\n"
        "        if self.trainer.is_global_zero:\n"
        f"            print({read})\n"
    )

    assert _lines(source) == [4]


@pytest.mark.parametrize(
    "read", ["args.log_dir", "self.log_dir", "config.callback_metrics", "trainer.log_every"]
)
def test_same_named_attribute_of_another_object_is_not_reported(read: str) -> None:
    source = (
        "def on_end(trainer, args, config):\n"
        f"    if trainer.is_global_zero:\n        print({read})\n"
    )

    assert _lines(source) == []


def test_property_read_by_every_rank_is_not_reported() -> None:
    source = (
        "def on_end(trainer):\n    path = trainer.log_dir\n"
        "    if trainer.is_global_zero:\n        print(path)\n"
    )

    assert _lines(source) == []


@pytest.mark.parametrize("synced", ["True", "self.sync", "sync_dist"])
def test_synced_log_on_rank_zero_is_reported(synced: str) -> None:
    source = (
        "class Model:\n"
        "    def validation_step(self, batch, sync_dist):\n"
        "        if self.trainer.is_global_zero:\n"
        f"            self.log('val', batch, sync_dist={synced})\n"
    )

    assert _lines(source) == [4]


@pytest.mark.parametrize(
    "call",
    [
        "self.log('val', batch)",
        "self.log('val', batch, sync_dist=False)",
        "logger.log('val', batch, sync_dist=True)",
    ],
)
def test_unsynced_log_or_other_loggers_on_rank_zero_are_not_reported(call: str) -> None:
    source = (
        "class Model:\n"
        "    def validation_step(self, batch, logger):\n"
        "        if self.trainer.is_global_zero:\n"
        f"            {call}\n"
    )

    assert _lines(source) == []


def test_synced_log_dict_whose_keys_depend_on_the_rank_is_reported() -> None:
    source = (
        "import torch.distributed as dist\n"
        "class Model:\n"
        "    def validation_epoch_end(self, outputs):\n"
        "        res = {}\n"
        "        if dist.get_rank() == 0:\n"
        "            res = {'metric': 0.1}\n"
        "        self.log_dict(res, sync_dist=True)\n"
    )

    [finding] = findings_of(source, select=SELECT)

    assert finding.line == 7
    assert finding.message.startswith(
        "`log_dict` all-reduces once per key of `res`, whose keys depend on the rank"
    )


def test_synced_log_dict_with_the_same_keys_on_every_rank_is_not_reported() -> None:
    source = (
        "class Model:\n"
        "    def validation_step(self, batch):\n"
        "        res = {'loss': batch.mean(), 'acc': batch.max()}\n"
        "        self.log_dict(res, sync_dist=True)\n"
    )

    assert _lines(source) == []


def test_hugging_face_save_model_on_the_main_process_is_reported() -> None:
    source = (
        "def finish(trainer, out):\n"
        "    if trainer.is_world_process_zero():\n"
        "        trainer.save_model(out)\n"
    )

    assert _lines(source) == [3]


def test_callback_metrics_read_outside_a_hook_is_not_reported() -> None:
    # After `fit` the metrics are computed and cached: reading them syncs nothing.
    source = (
        "def collect_results(trainer):\n"
        "    if trainer.local_rank == 0:\n"
        "        return dict(trainer.callback_metrics)\n"
    )

    assert _lines(source) == []


def test_log_dir_read_outside_a_hook_is_reported() -> None:
    source = "def save(trainer):\n    if trainer.is_global_zero:\n        print(trainer.log_dir)\n"

    assert _lines(source) == [3]


def test_property_read_reached_through_a_helper_reads_as_a_property_in_the_chain() -> None:
    source = (
        "def log_path(trainer):\n"
        "    return trainer.log_dir\n"
        "\n"
        "\n"
        "def on_train_end(trainer):\n"
        "    if trainer.is_global_zero:\n"
        "        print(log_path(trainer))\n"
    )

    [finding] = findings_of(source, select=SELECT)

    assert finding.line == 7
    assert "log_path() -> trainer.log_dir at " in finding.message


_SHARDED = (
    "import torch.distributed as dist\n"
    "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
    "from torch.distributed.fsdp import fully_shard\n"
    "\n"
    "\n"
    "def evaluate(model, batch, mesh):\n"
    "    {wrap}\n"
    "    if dist.get_rank() == 0:\n"
    "        {call}\n"
)


@pytest.mark.parametrize(
    ("wrap", "call", "subject"),
    [
        ("model = FSDP(model)", "model(batch)", "the forward of a sharded model"),
        ("model = FSDP(model, auto_wrap_policy=p)", "model.forward(batch)", "the forward of"),
        ("model = FSDP(model)", "model.generate(batch)", "`generate` of a sharded model"),
        ("model = FSDP(model)", "model.state_dict()", "`state_dict`"),
        ("fully_shard(model)", "model(batch)", "the forward of a sharded model"),
        ("fully_shard(model)", "model.generate(batch)", "`generate` of a sharded model"),
    ],
)
def test_call_of_a_sharded_model_on_rank_zero_is_reported(
    wrap: str, call: str, subject: str
) -> None:
    source = _SHARDED.format(wrap=wrap, call=call)

    [finding] = findings_of(source, select=SELECT)

    assert finding.line == 9
    assert finding.message.startswith(subject)


@pytest.mark.parametrize(
    ("wrap", "call"),
    [
        ("model = FSDP(model, process_group=mesh)", "model(batch)"),
        ("model = FSDP(model, device_mesh=mesh)", "model.generate(batch)"),
        ("fully_shard(model, mesh=mesh)", "model(batch)"),
        ("fully_shard(model)", "model.state_dict()"),  # FSDP2: sharded DTensors, no gather
        ("model = FSDP(model)\n    model = build()", "model(batch)"),
        ("model = torch.compile(model)", "model(batch)"),
        ("pass", "model(batch)"),
    ],
)
def test_call_of_a_model_not_known_to_be_sharded_on_the_default_group_is_not_reported(
    wrap: str, call: str
) -> None:
    source = _SHARDED.format(wrap=wrap, call=call)

    assert _lines(source) == []


def test_sharded_model_called_on_every_rank_is_not_reported() -> None:
    source = (
        "import torch.distributed as dist\n"
        "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
        "\n"
        "\n"
        "def evaluate(model, batch):\n"
        "    model = FSDP(model)\n"
        "    out = model(batch)\n"
        "    if dist.get_rank() == 0:\n"
        "        print(out)\n"
    )

    assert _lines(source) == []
