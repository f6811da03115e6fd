"""Framework calls that communicate only in some configurations (RNK102).

A state-dict getter of a module that the same function shards only later is
local; FSDP1's ``optim_state_dict_to_load`` communicates only with
``rank0_only=True``. The runtime facts behind both are pinned on gloo at the end.
"""

from __future__ import annotations

import datetime
import os
import textwrap
import time
from pathlib import Path

import libcst as cst
import pytest

from ranklint.analysis.walk.bodies import FunctionScan, TextGates, sharding_calls
from ranklint.analysis.walk.names import NameTable, dotted_name
from ranklint.config import Config
from tests.conftest import codes_by_line, findings_of

pytestmark = pytest.mark.timeout(60)
SELECT = ("RNK102",)


def _function(source: str) -> cst.FunctionDef:
    module = cst.parse_module(textwrap.dedent(source))
    return next(s for s in module.body if isinstance(s, cst.FunctionDef))


def _sharded_names(body: str) -> set[str]:
    function = _function(f"def f(model, m, mesh, self):\n    {body}\n")
    return set(sharding_calls(function)[1])


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("fully_shard(model)", {"model"}),
        ("fully_shard(module=model, mesh=mesh)", {"model"}),
        ("model = FSDP(model)", {"model"}),
        ("m = FullyShardedDataParallel(m)", {"m"}),
        ("prepare_fully_shard(model, config)", {"model"}),
        ("apply_fsdp(self.model)", {"self.model"}),
        ("parallelize_module(model, mesh, plan)", {"model"}),
        ("build(model)", set()),
        ("model.shard_params()", set()),
        ("torch.save(model, path)", set()),
        ("fully_shard()", set()),
        ("fully_shard(models[0])", set()),
    ],
)
def test_sharding_calls_name_the_module_a_sharding_function_is_given(
    body: str, expected: set[str]
) -> None:
    assert _sharded_names(body) == expected


def _later(source: str, getter: str = "get_model_state_dict") -> bool:
    function = _function(source)
    call = next(
        node
        for node in _calls(function)
        if isinstance(node.func, cst.Name) and node.func.value == getter
    )
    return FunctionScan(function, NameTable(), TextGates(gathers=False)).sharded_later(call)


def _calls(function: cst.FunctionDef) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    function.visit(Visitor())
    return found


def test_sharded_later_when_the_module_is_sharded_after_the_read_is_true() -> None:
    source = """
        def f(model):
            full = get_model_state_dict(model)
            fully_shard(model)
    """
    assert _later(source) is True


def test_sharded_later_when_the_module_was_sharded_before_the_read_is_false() -> None:
    source = """
        def f(model):
            fully_shard(model)
            full = get_model_state_dict(model)
    """
    assert _later(source) is False


def test_sharded_later_when_another_module_is_sharded_is_false() -> None:
    source = """
        def f(model, other):
            full = get_model_state_dict(model)
            fully_shard(other)
    """
    assert _later(source) is False


def test_sharded_later_reads_the_module_given_by_keyword() -> None:
    source = """
        def f(net):
            full = get_model_state_dict(model=net)
            fully_shard(net)
    """
    assert _later(source) is True


def test_sharded_later_when_sharded_both_before_and_after_is_true() -> None:
    # The last sharding call counts: a re-wrap after the read.
    source = """
        def f(model):
            fully_shard(model)
            full = get_model_state_dict(model)
            model = FSDP(model)
    """
    assert _later(source) is True


def test_sharded_later_outside_any_function_is_false() -> None:
    call = cst.parse_expression("get_model_state_dict(model)")
    assert isinstance(call, cst.Call)
    assert FunctionScan(None, NameTable(), TextGates(gathers=False)).sharded_later(call) is False


def test_sharded_later_of_a_call_from_another_function_is_false() -> None:
    function = _function("def f(model):\n    fully_shard(model)\n")
    call = cst.parse_expression("get_model_state_dict(model)")
    assert isinstance(call, cst.Call)
    assert (
        FunctionScan(function, NameTable(), TextGates(gathers=False)).sharded_later(call) is False
    )


def test_sharded_later_of_a_call_that_reads_no_named_module_is_false() -> None:
    source = """
        def f(model):
            full = get_model_state_dict(build())
            fully_shard(model)
    """
    assert _later(source) is False


def test_sharding_calls_number_the_calls_in_source_order() -> None:
    function = _function("def f(model):\n    a()\n    b(c())\n    fully_shard(model)\n")
    order, sharded = sharding_calls(function)
    names = {
        dotted_name(node.func): position
        for node in _calls(function)
        for position in [order[id(node)]]
    }
    assert names == {"a": 0, "b": 1, "c": 2, "fully_shard": 3}
    assert sharded == {"model": 3}


# -- the rule ------------------------------------------------------------------

_INIT_FROM_RANK0 = """
    import torch.distributed as dist
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
    from torch.distributed.fsdp import fully_shard


    def init(model):
        full = {}
        if dist.get_rank() == 0:
            full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
        SHARD
        dist.barrier()
"""


def test_rnk102_on_a_state_dict_read_before_the_module_is_sharded_is_silent() -> None:
    source = _INIT_FROM_RANK0.replace("SHARD", "prepare_fully_shard(model)")
    assert findings_of(source, select=SELECT) == []


def test_rnk102_on_a_state_dict_read_after_the_module_is_sharded_reports_it() -> None:
    source = _INIT_FROM_RANK0.replace("        SHARD\n", "").replace(
        "        full = {}\n", "        fully_shard(model)\n        full = {}\n"
    )
    assert codes_by_line(source, select=SELECT) == [(10, "RNK102")]


def test_rnk102_on_a_state_dict_read_of_a_module_sharded_elsewhere_reports_it() -> None:
    source = _INIT_FROM_RANK0.replace("SHARD", "fully_shard(other)")
    assert codes_by_line(source, select=SELECT) == [(9, "RNK102")]


_OPTIONS = """
    import torch.distributed as dist
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        set_model_state_dict,
    )
    from torch.distributed.fsdp import fully_shard
    WRAP


    def save(model, state):
        fully_shard(model)
        if dist.get_rank() == 0:
            CALL
        dist.barrier()
"""


@pytest.mark.parametrize(
    "call",
    [
        "get_model_state_dict(model)",
        "get_model_state_dict(model, options=StateDictOptions(cpu_offload=True))",
        "get_model_state_dict(model, options=None)",
        "set_model_state_dict(model, state)",
        "get_model_state_dict(model, options=StateDictOptions(full_state_dict=False))",
    ],
)
def test_rnk102_on_a_state_dict_function_with_sharded_options_on_fsdp2_is_silent(
    call: str,
) -> None:
    source = _OPTIONS.replace("CALL", call).replace("    WRAP\n", "")
    assert findings_of(source, select=SELECT) == []


@pytest.mark.parametrize(
    ("call", "wrap"),
    [
        ("get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))", ""),
        ("set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True))", ""),
        ("get_model_state_dict(model, options=opts)", ""),
        ("set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=f))", ""),
        (
            "set_model_state_dict(model, state, options=StateDictOptions(broadcast_from_rank0=1))",
            "",
        ),
        (
            "get_model_state_dict(model)",
            "from torch.distributed.fsdp import FullyShardedDataParallel",
        ),
        ("set_model_state_dict(model, state)", "FSDP(net)"),
    ],
)
def test_rnk102_on_a_state_dict_function_that_communicates_as_configured_reports_it(
    call: str, wrap: str
) -> None:
    source = _OPTIONS.replace("CALL", call).replace("WRAP", wrap)
    line = textwrap.dedent(source).lstrip("\n").splitlines().index("        " + call) + 1
    assert codes_by_line(source, select=SELECT) == [(line, "RNK102")]


_TURNS = """
    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import FullOptimStateDictConfig


    def load(model, optim, state, local_rank, world):
        config = FullOptimStateDictConfig(rank0_only=FLAG)
        for turn in range(world):
            if turn == local_rank:
                FSDP.optim_state_dict_to_load(model, optim, state)
            dist.barrier()
"""


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("rank0_only=False", []),
        ("rank0_only=True", [(10, "RNK102")]),
        ("rank0_only = True", [(10, "RNK102")]),
        ("rank0_only=flag", []),
    ],
)
def test_rnk102_on_optimizer_loads_in_turns_reports_only_when_rank0_only_is_set(
    config: str, expected: list[tuple[int, str]]
) -> None:
    source = _TURNS.replace("rank0_only=FLAG", config)
    assert codes_by_line(source, select=SELECT) == expected


def test_rnk102_on_optimizer_loads_in_turns_with_rank0_only_set_in_another_function_is_silent() -> (
    None
):
    # OLMo's checkpointer: `rank0_only=True` when saving, `False` around the load.
    source = _TURNS.replace("        config = FullOptimStateDictConfig(rank0_only=FLAG)\n", "")
    source += """

    def save(model):
        return FullOptimStateDictConfig(rank0_only=True)
    """
    assert codes_by_line(source, select=SELECT) == []


def test_rnk102_on_an_optimizer_load_outside_functions_reads_the_file_configuration() -> None:
    source = """
        import torch.distributed as dist
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp import FullOptimStateDictConfig

        config = FullOptimStateDictConfig(rank0_only=True)
        if dist.get_rank() == 0:
            FSDP.optim_state_dict_to_load(model, optim, state)
        dist.barrier()
    """
    assert codes_by_line(source, select=SELECT) == [(7, "RNK102")]


def test_rnk102_on_shard_full_optim_state_dict_under_a_rank_test_is_silent() -> None:
    source = """
        import torch.distributed as dist
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


        def load(model, state):
            if dist.get_rank() == 0:
                state = FSDP.shard_full_optim_state_dict(state, model)
            dist.barrier()
    """
    assert findings_of(source, select=SELECT) == []


# -- the runtime facts (gloo) ---------------------------------------------------

# What gloo says on the rank whose peer timed out first and closed the pair; which
# one a run prints depends on the timing.
_PEER_GONE = ("Connection closed by peer", "Application timeout caused pair closure")


def _rank_main(rank: int, case: str, out: str) -> None:
    import torch
    import torch.distributed as dist
    from torch import nn

    dist.init_process_group(
        "gloo",
        init_method=f"file://{Path(out, 'store').absolute()}",
        rank=rank,
        world_size=2,
        timeout=datetime.timedelta(seconds=5),
    )
    outcome = "completes"
    try:
        torch.manual_seed(rank)
        model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
        if case.startswith("ddp-"):
            _ddp_forward_on_rank0(rank, case)
        elif case == "read-before-sharding":
            from torch.distributed.checkpoint.state_dict import (
                StateDictOptions,
                get_model_state_dict,
            )

            if rank == 0:
                options = StateDictOptions(full_state_dict=True, cpu_offload=True)
                # A plain module that is never sharded: nothing to gather (the
                # point of this case); ranklint cannot see that.
                get_model_state_dict(model, options=options)  # ranklint: ignore[RNK102]
            dist.barrier()
        else:
            _load_in_turns(rank, model, rank0_only=case == "turns-rank0-only")
    except RuntimeError as exc:
        message = str(exc)
        if "Timed out" in message:
            outcome = "timeout"
        elif any(sign in message for sign in _PEER_GONE):
            outcome = "peer-gone"  # the other rank timed out first and left
        else:
            outcome = f"error: {message}"
    finally:
        Path(out, f"rank{rank}").write_text(outcome, encoding="utf-8")
        os._exit(0)


def _ddp_forward_on_rank0(rank: int, case: str) -> None:
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    norm = nn.BatchNorm1d(4) if case != "ddp-no-buffers" else nn.ReLU()
    broadcast = case != "ddp-no-broadcast"
    model = DistributedDataParallel(
        nn.Sequential(nn.Linear(4, 4), norm), broadcast_buffers=broadcast
    )
    model.eval()
    if rank == 0:
        with torch.no_grad():
            model(torch.ones(3, 4))  # ranklint: ignore[RNK102]
    dist.barrier()


def _load_in_turns(rank: int, model: object, *, rank0_only: bool) -> None:
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import (
        FullOptimStateDictConfig,
        FullStateDictConfig,
        StateDictType,
    )
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    fsdp = FSDP(model, device_id=torch.device("cpu"))
    optim = torch.optim.Adam(fsdp.parameters(), lr=0.1)
    fsdp(torch.ones(2, 4)).sum().backward()
    optim.step()
    full = FullStateDictConfig(rank0_only=False)
    with FSDP.state_dict_type(
        fsdp, StateDictType.FULL_STATE_DICT, full, FullOptimStateDictConfig(rank0_only=False)
    ):
        state = FSDP.optim_state_dict(fsdp, optim)
    with FSDP.state_dict_type(
        fsdp, StateDictType.FULL_STATE_DICT, full, FullOptimStateDictConfig(rank0_only=rank0_only)
    ):
        for turn in range(2):
            if turn == rank:
                FSDP.optim_state_dict_to_load(fsdp, optim, state)
            dist.barrier()


def _run_two_ranks(case: str, tmp_path: Path) -> list[str]:
    mp = pytest.importorskip("torch.multiprocessing", reason="torch is a test extra")
    context = mp.start_processes(
        _rank_main, args=(case, str(tmp_path)), nprocs=2, join=False, start_method="fork"
    )
    deadline = time.monotonic() + 40
    try:
        while any(p.is_alive() for p in context.processes) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
            process.join(5)
    return [_outcome(tmp_path / f"rank{rank}") for rank in range(2)]


def _outcome(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else "did not finish"


@pytest.mark.distributed
@pytest.mark.parametrize(
    "case", ["read-before-sharding", "turns-default", "ddp-no-buffers", "ddp-no-broadcast"]
)
def test_configured_calls_on_gloo_when_local_complete_on_both_ranks(
    case: str, tmp_path: Path
) -> None:
    assert _run_two_ranks(case, tmp_path) == ["completes", "completes"]


@pytest.mark.distributed
@pytest.mark.parametrize("case", ["turns-rank0-only", "ddp-buffers"])
def test_configured_calls_on_gloo_when_communicating_on_one_rank_time_out(
    case: str, tmp_path: Path
) -> None:
    # A DDP model with a BatchNorm broadcasts its buffers in forward, in eval()
    # and no_grad() too.
    outcomes = _run_two_ranks(case, tmp_path)
    assert "timeout" in outcomes
    assert set(outcomes) <= {"timeout", "peer-gone"}


# -- FSDP1's state_dict_type context -------------------------------------------

_CONTEXT = """
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType


def save(model, lock, state):
    with CONTEXT:
        if dist.get_rank() == 0:
            out = model.METHOD
    dist.barrier()
"""
_FULL = "FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT)"


@pytest.mark.parametrize(
    ("context", "method", "reported"),
    [
        (_FULL, "state_dict()", True),
        (_FULL, "optim_state_dict()", True),
        (_FULL, "load_state_dict(state)", True),
        (_FULL, "parameters()", False),
        ("torch.no_grad()", "state_dict()", False),
        ("model.summon_state_dict_type()", "state_dict()", False),
        ("lock", "state_dict()", False),
    ],
)
def test_rnk102_on_state_dict_calls_inside_fsdp_state_dict_type_counts_them_as_collectives(
    context: str, method: str, reported: bool
) -> None:
    # Inside `with FSDP.state_dict_type(...)`, a module's state_dict() gathers
    # across the ranks whatever the receiver's type.
    source = _CONTEXT.replace("CONTEXT", context).replace("METHOD", method)
    expected = [(9, "RNK102")] if reported else []
    assert codes_by_line(source, select=SELECT) == expected


# -- extra-collectives: project wrappers named in the configuration ------------

_WRAPPER = """
import torch.distributed as dist
IMPORT


class Trainer:
    def step(self, rank, engine):
        if rank == 0:
            CALL
        dist.barrier()
"""


@pytest.mark.parametrize(
    ("imports", "call", "extra"),
    [
        ("from proj.comm import sync_all", "sync_all()", "proj.comm.sync_all"),
        ("import proj.comm as comm", "comm.sync_all()", "proj.comm.sync_all"),
        # A class of this file, by its dotted path (`@local:` targets).
        ("", "Registry.comm.sync()", "Registry.comm.sync"),
        ("", "engine.sync()", "Engine.sync"),
        ("", "self.sync()", "Engine.sync"),
        ("", "self.engine.sync()", "Engine.sync"),
    ],
)
def test_rnk102_on_a_wrapper_named_in_extra_collectives_reports_it(
    imports: str, call: str, extra: str
) -> None:
    source = _WRAPPER.replace("IMPORT", imports).replace("CALL", call)
    config = Config(select=SELECT, extra_collectives=(extra,), confidence="low")
    assert codes_by_line(source, config=config) == [(8, "RNK102")]


@pytest.mark.parametrize(
    ("imports", "call", "extra"),
    [
        ("from proj.comm import sync_all", "sync_all()", "proj.other.sync_all"),
        ("", "engine.sync()", "Engine.flush"),
        ("", "Registry.comm.sync()", "Registry.comm.flush"),
    ],
)
def test_rnk102_on_a_call_extra_collectives_does_not_name_is_silent(
    imports: str, call: str, extra: str
) -> None:
    source = _WRAPPER.replace("IMPORT", imports).replace("CALL", call)
    config = Config(select=SELECT, extra_collectives=(extra,))
    assert codes_by_line(source, config=config) == []


def test_rnk102_on_a_project_method_named_like_a_framework_method_is_silent() -> None:
    # `self.full_tensor()` is this class's own method, not DTensor's.
    source = """
        import torch.distributed as dist


        class Shard:
            def full_tensor(self):
                return self.data

            def show(self, rank):
                if rank == 0:
                    print(self.full_tensor())
                dist.barrier()
    """
    assert codes_by_line(source, select=SELECT) == []


# -- DeepSpeed's GatheredParameters: a collective under ZeRO stage 3 only ------------------

_GATHERED = """
import deepspeed
import torch.distributed as dist

CONFIG


def save(model):
    if dist.get_rank() == 0:
        with deepspeed.zero.GatheredParameters(list(model.parameters())):
            return model.state_dict()
"""


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ('ds_config = {"zero_optimization": {"stage": 3}}', [(9, "RNK102")]),
        ("zero_stage = 3", [(9, "RNK102")]),
        ('ds_config = {"zero_optimization": {"stage": 2}}', []),
        ("", []),
    ],
)
def test_gathered_parameters_on_one_rank_is_reported_where_the_file_configures_zero3(
    config: str, expected: list[tuple[int, str]]
) -> None:
    source = _GATHERED.replace("CONFIG", config or "pass")

    assert codes_by_line(source, select=SELECT) == expected


_FROM_LOCAL = """
    import torch.distributed as dist
    from torch.distributed.tensor import DTensor, Replicate


    def wrap(t, mesh):
        if dist.get_rank() == 0:
            out = DTensor.from_local(t, mesh, [Replicate()]ARGS)
        dist.barrier()
"""


def test_rnk102_on_from_local_with_run_check_on_one_rank_reports_it() -> None:
    source = _FROM_LOCAL.replace("ARGS", ", run_check=True")
    assert codes_by_line(source, select=SELECT) == [(7, "RNK102")]


@pytest.mark.parametrize("args", ["", ", run_check=False"])
def test_rnk102_on_from_local_without_run_check_is_silent(args: str) -> None:
    assert findings_of(_FROM_LOCAL.replace("ARGS", args), select=SELECT) == []


_CLIP = """
    import torch
    import torch.distributed as dist
    WRAP


    def step(model):
        if dist.get_rank() == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        dist.barrier()
"""


@pytest.mark.parametrize(
    "wrap",
    [
        "from torch.distributed.fsdp import fully_shard",
        "from torch.distributed.tensor.parallel import parallelize_module",
    ],
)
def test_rnk102_on_clip_grad_norm_in_a_file_that_makes_dtensors_reports_it(wrap: str) -> None:
    assert codes_by_line(_CLIP.replace("WRAP", wrap), select=SELECT) == [(8, "RNK102")]


@pytest.mark.parametrize(
    "wrap", ["", "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP"]
)
def test_rnk102_on_clip_grad_norm_of_plain_or_fsdp1_parameters_is_silent(wrap: str) -> None:
    assert findings_of(_CLIP.replace("WRAP", wrap), select=SELECT) == []
