"""Models wrapped where the file configures the wrapper (RNK102, issue 15 item 2).

`deepspeed.initialize` returns the engine first; under ZeRO stage 3 its
forward all-gathers each layer's parameters, so every rank must run it. It
counts only where the file configures stage 3. `accelerator.prepare` wraps a
model as the launch configures it: FSDP (forward and `generate` all-gather)
where the file sets up accelerate's FSDP plugin. `DDP(model)`'s forward
broadcasts the module's buffers first unless `broadcast_buffers=False`.
"""

from __future__ import annotations

import libcst as cst
import pytest

from ranklint.analysis.walk.catalog import ACCELERATE_PREPARED, DEEPSPEED_ENGINE
from ranklint.analysis.walk.names import NameTable
from tests.conftest import codes_by_line, findings_of

pytestmark = pytest.mark.timeout(30)
SELECT = ("RNK102",)

_TRAIN = """
import deepspeed
import torch.distributed as dist

CONFIG_LINE


def sample(model, batch):
    UNPACK = deepspeed.initialize(model=model, config=DS_CONFIG)
    if dist.get_rank() == 0:
        out = CALL
    dist.barrier()
"""
_STAGE3 = 'DS_CONFIG = {"zero_optimization": {"stage": 3}}'


def _source(
    config: str = _STAGE3, unpack: str = "engine, optimizer, _, _", call: str = "engine(batch)"
) -> str:
    return _TRAIN.replace("CONFIG_LINE", config).replace("UNPACK", unpack).replace("CALL", call)


@pytest.mark.parametrize(
    "config",
    [
        _STAGE3,
        "DS_CONFIG = {'zero_optimization': {'stage':3, 'overlap_comm': True}}",
        "DS_CONFIG = get_config(zero_stage=3)",
        'DS_CONFIG = {"zero_stage": 3}',
        "INIT = deepspeed.zero.Init()",
    ],
)
def test_rnk102_on_a_zero3_engine_s_forward_under_a_rank_test_reports_it(config: str) -> None:
    assert codes_by_line(_source(config=config), select=SELECT) == [(10, "RNK102")]


def test_rnk102_on_a_zero3_engine_s_forward_method_reports_it() -> None:
    source = _source(call="engine.forward(batch)")
    assert codes_by_line(source, select=SELECT) == [(10, "RNK102")]


@pytest.mark.parametrize(
    "config",
    [
        'DS_CONFIG = {"zero_optimization": {"stage": 2}}',
        'DS_CONFIG = {"zero_optimization": {"stage": 30}}',
        'DS_CONFIG = "ds_config.json"',
    ],
)
def test_rnk102_on_an_engine_without_a_stage3_config_in_the_file_is_silent(config: str) -> None:
    assert codes_by_line(_source(config=config), select=SELECT) == []


@pytest.mark.parametrize(
    ("unpack", "call"),
    [
        ("optimizer, engine, _, _", "engine(batch)"),  # not the first element
        ("engine, optimizer, _, _", "model(batch)"),  # the plain module
        ("engine, optimizer, _, _", "engine.module.generate(batch)"),  # not followed
    ],
)
def test_rnk102_on_calls_that_are_not_the_engine_s_forward_is_silent(
    unpack: str, call: str
) -> None:
    assert codes_by_line(_source(unpack=unpack, call=call), select=SELECT) == []


def test_rnk102_on_an_engine_rebound_before_the_call_is_silent() -> None:
    source = _source().replace(
        "    if dist.get_rank() == 0:", "    engine = other\n    if dist.get_rank() == 0:"
    )
    assert codes_by_line(source, select=SELECT) == []


def test_rnk102_on_a_zero3_engine_s_forward_on_every_rank_is_silent() -> None:
    source = _source().replace("    if dist.get_rank() == 0:\n        out", "    out")
    assert "if dist.get_rank()" not in source
    assert codes_by_line(source, select=SELECT) == []


def _table(source: str) -> NameTable:
    table = NameTable()
    module = cst.parse_module(source)
    for statement in module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            table.bind_import_statement(small)
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                table.bind_target(target.target, small.value)
    return table


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import deepspeed\nengine, opt, _, _ = deepspeed.initialize(model=m)\n", DEEPSPEED_ENGINE),
        ("import deepspeed\n[engine, opt] = deepspeed.initialize(model=m)\n", DEEPSPEED_ENGINE),
        ("import deepspeed as ds\nengine, opt = ds.initialize(model=m)\n", DEEPSPEED_ENGINE),
        ("engine, opt = initialize(model=m)\n", None),
        ("import deepspeed\nengine, opt = deepspeed.init_inference(m)\n", None),
        ("import deepspeed\nengine = deepspeed.initialize(model=m)\n", None),
    ],
)
def test_instance_of_the_first_name_unpacked_from_deepspeed_initialize_is_the_engine(
    source: str, expected: str | None
) -> None:
    assert _table(source).instance_of("engine") == expected


_EVALUATE = """
from accelerate import Accelerator, FullyShardedDataParallelPlugin

PLUGIN_LINE


def evaluate(model, optimizer, batch):
    PREPARE
    if accelerator.is_main_process:
        out = CALL
    accelerator.wait_for_everyone()
"""
_PLUGIN = "accelerator = Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin())"


def _evaluate(
    plugin: str = _PLUGIN,
    prepare: str = "model, optimizer = accelerator.prepare(model, optimizer)",
    call: str = "model.generate(batch)",
) -> str:
    return (
        _EVALUATE.replace("PLUGIN_LINE", plugin).replace("PREPARE", prepare).replace("CALL", call)
    )


@pytest.mark.parametrize(
    ("plugin", "prepare", "call"),
    [
        (
            _PLUGIN,
            "model, optimizer = accelerator.prepare(model, optimizer)",
            "model.generate(batch)",
        ),
        (_PLUGIN, "model = accelerator.prepare(model)", "model(batch)"),
        (_PLUGIN, "net, opt = accelerator.prepare(model, optimizer)", "net.forward(batch)"),
        (
            "accelerator = Accelerator()\n"
            "plugin = FullyShardedDataParallelPlugin(sync_module_states=True)",
            "model = self.accelerator.prepare(model)",
            "model.generate(batch)",
        ),
    ],
)
def test_rnk102_on_an_accelerate_fsdp_model_s_forward_under_the_main_process_reports_it(
    plugin: str, prepare: str, call: str
) -> None:
    source = _evaluate(plugin=plugin, prepare=prepare, call=call)
    line = source.lstrip("\n").splitlines().index(f"        out = {call}") + 1
    assert codes_by_line(source, select=SELECT) == [(line, "RNK102")]


@pytest.mark.parametrize(
    ("plugin", "prepare", "call"),
    [
        # No FSDP plugin in the file: DDP or a single process, as the launch says.
        (
            "accelerator = Accelerator()",
            "model = accelerator.prepare(model)",
            "model.generate(batch)",
        ),
        # Not an accelerator's `prepare`.
        (_PLUGIN, "model = trainer.prepare(model)", "model.generate(batch)"),
        # The unwrapped module.
        (_PLUGIN, "model = accelerator.prepare(model)", "model.module.generate(batch)"),
        (_PLUGIN, "model = accelerator.unwrap_model(model)", "model.generate(batch)"),
    ],
)
def test_rnk102_on_models_accelerate_does_not_shard_here_is_silent(
    plugin: str, prepare: str, call: str
) -> None:
    source = _evaluate(plugin=plugin, prepare=prepare, call=call)
    assert codes_by_line(source, select=SELECT) == []


def test_rnk102_on_an_accelerate_fsdp_model_s_forward_on_every_rank_is_silent() -> None:
    source = _evaluate().replace("    if accelerator.is_main_process:\n        out", "    out")
    assert "is_main_process" not in source
    assert codes_by_line(source, select=SELECT) == []


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("model = accelerator.prepare(model)\n", {"model": ACCELERATE_PREPARED}),
        ("model = self.accelerator.prepare(model)\n", {"model": ACCELERATE_PREPARED}),
        (
            "model, opt, loader = accel.prepare(model, opt, loader)\n",
            {"model": None, "opt": None, "loader": None},
        ),
        (
            "model, opt, loader = my_accelerator.prepare(model, opt, loader)\n",
            {
                "model": ACCELERATE_PREPARED,
                "opt": ACCELERATE_PREPARED,
                "loader": ACCELERATE_PREPARED,
            },
        ),
        ("model = prepare(model)\n", {"model": None}),
        ("model = accelerator.unwrap_model(model)\n", {"model": None}),
    ],
)
def test_instance_of_what_accelerator_prepare_returns_is_a_prepared_model(
    source: str, names: dict[str, str | None]
) -> None:
    table = _table(source)
    assert {name: table.instance_of(name) for name in names} == names


_VALIDATE = """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def validate(net, batch):
    WRAP
    if dist.get_rank() == 0:
        out = CALL
    dist.barrier()
"""


@pytest.mark.parametrize(
    ("wrap", "call", "reported"),
    [
        ("model = DDP(net)", "model(batch)", True),
        ("model = DDP(net, device_ids=[0])", "model.forward(batch)", True),
        ("model = DDP(net, broadcast_buffers=False)", "model(batch)", False),
        ("model = DDP(net, broadcast_buffers=True)", "model(batch)", True),
        ("model = DDP(net, process_group=pg)", "model(batch)", False),
        ("model = DDP(net)", "model.module(batch)", False),
        ("model = DDP(net)", "net(batch)", False),
    ],
)
def test_rnk102_on_a_ddp_model_s_forward_under_a_rank_test_depends_on_the_buffer_broadcast(
    wrap: str, call: str, reported: bool
) -> None:
    source = _VALIDATE.replace("WRAP", wrap).replace("CALL", call)
    expected = [(8, "RNK102")] if reported else []
    assert codes_by_line(source, select=SELECT) == expected


def test_rnk102_on_a_ddp_model_s_forward_names_the_buffer_broadcast() -> None:
    source = _VALIDATE.replace("WRAP", "model = DDP(net)").replace("CALL", "model(batch)")
    [finding] = findings_of(source, select=SELECT)
    assert finding.message.startswith("the forward of a DDP model (it broadcasts the module's")


def test_bind_target_of_an_empty_tuple_from_deepspeed_initialize_binds_nothing() -> None:
    table = _table("import deepspeed\n")
    call = cst.parse_expression("deepspeed.initialize(model=m)")

    table.bind_target(cst.Tuple([]), call)

    assert table.instance_of("engine") is None


_BUILD = """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def build(net, local_rank, pg):
    TEST
        model = WRAP
"""


@pytest.mark.parametrize(
    ("test", "wrap", "reported"),
    [
        ("if dist.get_rank() == 0:", "DDP(net)", True),
        ("if dist.get_rank() == 0:", "DDP(net, device_ids=[local_rank])", True),
        ("if local_rank != -1:", "DDP(net, device_ids=[local_rank])", False),
        ("if dist.is_initialized():", "DDP(net)", False),
        ("if dist.get_rank() == 0:", "DDP(net, process_group=pg)", False),
    ],
)
def test_rnk102_on_building_a_ddp_model_on_some_ranks_reports_the_construction(
    test: str, wrap: str, reported: bool
) -> None:
    source = _BUILD.replace("TEST", test).replace("WRAP", wrap)
    expected = [(7, "RNK102")] if reported else []  # the line of `DDP(...)`
    assert codes_by_line(source, select=SELECT) == expected
