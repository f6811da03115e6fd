"""RNK603 unmarked-distributed-test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.literals import string_value
from ranklint.analysis.walk.names import dotted_name
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding
from ranklint.rules.testsuite._test_rule import _TestRule

_INIT_GROUP = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.distributed.distributed_c10d.init_process_group",
    }
)
_SPAWN = frozenset(
    {
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
    }
)
_SPAWNS = (
    _INIT_GROUP
    | _SPAWN
    | {
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.init_device_mesh",
        "torch.distributed.launcher.api.elastic_launch",
    }
)

# Backends that run in one CPU process without an accelerator.
_CPU_BACKENDS = frozenset({"gloo", "fake"})

_CUDA_FINE = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})

_SKIP_CALLS = frozenset({"pytest.skip", "pytest.importorskip", "unittest.SkipTest"})

# Methods that set up every test of a class: a skip there skips them all.
_SETUP_METHODS = frozenset({"setUp", "setUpClass", "setup_method", "setup_class"})

# Name prefixes of decorators and helper calls that skip or select by hardware:
# `@skip_if_lt_x_gpu`, `@requires_nccl`, Lightning's `@RunIf(min_cuda_gpus=1)`,
# NeMo's `@pytest.mark.run_only_on("GPU")`, ColossalAI's
# `@run_on_environment_flag(name=...)`, `_require_cuda(...)`.
_CONDITION_PREFIXES = ("skip", "requires", "require_", "runif", "run_if", "run_on")


class UnmarkedDistributedTest(_TestRule):
    code = "RNK603"
    name = "unmarked-distributed-test"
    severity = Severity.WARNING
    summary = "A test starts process groups or uses an accelerator without a marker or skip"
    default_enabled = False
    what = """\
Reports test functions (`test_*`) in test files that initialise a process
group with an accelerator backend or a device mesh, spawn ranks
(`torch.multiprocessing.spawn` / `start_processes`), or use an accelerator
(`torch.cuda.*` calls other than `is_available`/`device_count`, `.cuda()`,
`.to("cuda")`, torch factories with `device="cuda"`), with none of:
- a marker named in `distributed-markers` (default `distributed`, `gpu`,
  `cuda`, `multigpu`, ...) on the function, its class (decorator or class
  `pytestmark`) or the module (`pytestmark = ...`, a single mark or a list);
- a skip or hardware condition: `skipif`, `skipIf`/`skipUnless`, a
  decorator named `skip*`, `requires*`, `run_if*` / `RunIf` or
  `run_on*` (`run_only_on`, `run_on_environment_flag`), or one whose arguments name a GPU
  (`@RunIf(min_cuda_gpus=1)`, `@pytest.mark.run_only_on("GPU")`);
- a `pytest.param(..., marks=...)` of its parametrization carrying such a
  marker or condition (only that case runs on the accelerator);
- a harness decorator whose name mentions `dist` (`@dist_init`);
- a test class deriving from a multi-process or distributed test case
  (`MultiProcessTestCase`, `DistributedTestBase`, `FSDPTest`,
  `DTensorTestBase`), or whose `setUp` / `setUpClass` / `setup_method`
  skips;
- a skip in the body (`pytest.skip`, `self.skipTest`, a check of
  `torch.cuda.is_available()`), or a call of a function of the same file that
  skips, or of a helper named `skip*` / `require*`;
- a folder of the file's path named after one of the `distributed-markers`
  (`tests/gpu/`, `tests/cuda/`).

Not reported either: `torch.device("cuda")` on its own (a descriptor, it
touches no GPU), process groups on the `fake` backend, or on `gloo`
without a literal `world_size` above 1, and `spawn` of a worker of the same file that
shows no accelerator use (no `torch.cuda.*`, `.cuda()`, `"cuda"` or
`"nccl"`): they run in the CPU job.

A convention, off by default: opt in with `extend-select = ["RNK603"]` in
`[tool.ranklint]`. Its premise, that a CPU unit job runs every unmarked test,
holds only for projects that have such a job.
"""
    why = """\
CI picks suites by marker: an unmarked distributed test runs in the CPU unit
job, where it hangs until the job's timeout or fails for want of a GPU, and is
then skipped wholesale or deleted. A marker or an explicit skip condition
keeps it running where it can.
"""
    limits = """\
Only what the test function itself calls is seen, not its helpers (except
helpers of the same file that skip). The linter sees one file: a suite that a
`conftest.py` skips as a whole, or that CI runs only on GPU runners, is not
known to it; exempt such folders with `per-file-ignores`
(`"tests/gpu/**" = ["RNK603"]`) or name their markers in
`distributed-markers`. A device chosen through a variable or a
parametrization (`.to(device)`) is not followed. Torch's own test decorators
are recognised by name (`skip_if_lt_x_gpu`, `requires_nccl`).
"""
    runtime_check = """\
Simulated ranks need no launcher and no marker of their own: the runtime
companion's pytest plugin runs a test body on N ranks in threads, in
milliseconds, and fails with a per-rank diff instead of hanging.

```python
import pytest
import torch
import torch.distributed as dist
from ranklint.runtime import run_ranks


# Instead of an unmarked test that starts process groups itself, run the body
# on simulated ranks: with the pytest plugin, `@pytest.mark.ranks(2)` on the
# test; here, the same through run_ranks.
def test_loss_is_averaged():
    def body(rank, world_size):
        loss = torch.tensor(float(rank))
        dist.all_reduce(loss, op=dist.ReduceOp.AVG)
        return loss.item()

    assert run_ranks(body, 2) == pytest.approx([0.5, 0.5], rel=0, abs=1e-6)


test_loss_is_averaged()
```
"""
    valid = (
        """
        import pytest
        import torch
        import torch.distributed as dist


        @pytest.mark.distributed
        def test_all_reduce(tmp_path):
            dist.init_process_group("nccl", f"file://{tmp_path}/s", rank=0, world_size=2)


        @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
        def test_on_gpu():
            torch.ones(2).cuda()
        """,
        """
        import unittest

        import pytest
        import torch
        import torch.distributed as dist

        from tests.helpers import RunIf


        # pytorch-lightning tests: Lightning's skip helper.
        @RunIf(min_cuda_gpus=1)
        def test_single_gpu():
            torch.ones(1).cuda()


        # nemo tests: a project marker whose argument names the GPU.
        @pytest.mark.run_only_on("GPU")
        def test_export():
            torch.ones(1).cuda()


        # litgpt tests/test_model.py: only the marked parameter uses the GPU.
        @pytest.mark.parametrize(
            "device", ["cpu", pytest.param("cuda", marks=RunIf(min_cuda_gpus=1))]
        )
        def test_against_reference(device):
            torch.ones(1, device="cuda") if device == "cuda" else None


        # torchrec test_memory_stashing.py: setUp skips every test of the class.
        class TestStash(unittest.TestCase):
            def setUp(self):
                if not torch.cuda.is_available():
                    self.skipTest("CUDA not available")

            def test_round_trip(self):
                torch.cuda.synchronize()


        # torchrec distributed/tests/test_utils.py: one gloo rank runs on the CPU.
        def test_module_names(tmp_path):
            dist.init_process_group("gloo", f"file://{tmp_path}/s", rank=0, world_size=1)


        # pytorch-lightning test_fabric.py: a device descriptor touches no GPU.
        def test_strategy_device():
            assert torch.device("cuda").type == "cuda"
        """,
        """
        import pytest
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp


        def _require_cuda():
            if not torch.cuda.is_available():
                pytest.skip("CUDA is required")


        # slime tests/test_deepgemm_moe_forward.py: a helper of the file skips.
        def test_kernel():
            _require_cuda()
            torch.cuda.set_device(0)


        def _worker(rank, world_size, path):
            dist.init_process_group("gloo", f"file://{path}", rank=rank, world_size=world_size)


        # slime tests/test_reloadable_process_group_world.py: gloo workers on the CPU.
        def test_reload(tmp_path):
            mp.spawn(_worker, args=(4, str(tmp_path / "s")), nprocs=4)
        """,
    )
    invalid = (
        """
        import torch
        import torch.distributed as dist


        def test_all_reduce(tmp_path):  # expect: RNK603
            dist.init_process_group("nccl", f"file://{tmp_path}/s", rank=0, world_size=2)


        def test_on_gpu():  # expect: RNK603
            torch.ones(2, device="cuda")
        """,
        """
        import pytest
        import torch
        import torch.distributed as dist


        def test_two_gloo_ranks_in_one_process(tmp_path):  # expect: RNK603
            dist.init_process_group("gloo", f"file://{tmp_path}/s", rank=0, world_size=2)


        @pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.slow)])
        def test_moves(device):  # expect: RNK603
            torch.ones(1).to("cuda")
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._module_marked = self.active and (_module_marked(ctx) or self._folder_marked())
        self._tests: list[tuple[cst.FunctionDef, tuple[cst.CSTNode | None, ...], list[str]]] = []
        self._class_marked: dict[int, bool] = {}
        self._helpers: dict[str, cst.FunctionDef] | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.active or self._module_marked or self._tests:
            return
        if not node.name.value.startswith("test"):
            return
        classes = self.ctx.classes
        decorators = [*node.decorators, *(d for c in classes[-1:] for d in c.decorators)]
        if any(self._marks(d.decorator) for d in decorators):
            return
        if any(self._marks(mark) for d in node.decorators for mark in _param_marks(d.decorator)):
            return  # only the parameters carrying the marker use the hardware
        if classes and self._class_is_marked(classes[-1]):
            return
        self._tests.append((node, self.here(), []))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self._tests or self._tests[-1][0] is not node:
            return
        test, where, uses = self._tests.pop()
        if uses and "skip" not in uses:
            self.report(
                test.name,
                f"`{test.name.value}` {uses[0]} but has no `distributed`/accelerator marker or "
                f"skip condition: the CPU unit job runs it and it hangs or fails there; mark it "
                f"(`@pytest.mark.distributed`) or skip it when the hardware is missing",
                where=where,  # type: ignore[arg-type]
            )

    def visit_Call(self, node: cst.Call) -> None:
        if not self._tests:
            return
        test = self._tests[-1][0]
        if not any(frame.node is test for frame in self.ctx.functions):
            return  # decorators and defaults of the test: not its body
        uses = self._tests[-1][2]
        use = self._use(node)
        if use is not None:
            uses.append(use)

    def _use(self, node: cst.Call) -> str | None:
        """ "skip", what the call uses that needs ranks or an accelerator, or None."""
        func = node.func
        name = self.ctx.names.resolve(func) or ""
        if (
            name in _SKIP_CALLS
            or name in _CUDA_FINE
            or (isinstance(func, cst.Attribute) and func.attr.value == "skipTest")
            or self._skipping_helper(func)
        ):
            return "skip"
        if name in _INIT_GROUP and self._cpu_group(node):
            return None
        if name in _SPAWN and self._cpu_workers(node):
            return None
        if name in _SPAWNS:
            return f"starts ranks (`{name.rsplit('.', 1)[-1]}`)"
        if name.startswith("torch.cuda."):
            return f"uses the accelerator (`{name}`)"
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and not node.args:
            return "uses the accelerator (`.cuda()`)"
        moves = _is_to(func) or (
            name.startswith("torch.") and name != "torch.device"
        )  # `.to(...)`, or a torch factory's `device=`
        if not moves:
            return None
        for arg in node.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if (keyword == "device" or (keyword is None and _is_to(func))) and _cuda_value(
                arg.value, self.ctx
            ):
                return 'uses the accelerator (`"cuda"`)'
        return None

    def _marks(self, decorator: cst.BaseExpression) -> bool:
        target = decorator.func if isinstance(decorator, cst.Call) else decorator
        name = dotted_name(target) or ""
        last = name.rsplit(".", 1)[-1]
        markers = self.ctx.settings.distributed_markers
        lowered = last.lower().lstrip("_")
        return (
            last in markers
            or lowered.startswith(_CONDITION_PREFIXES)
            or "gpu" in lowered
            or "dist" in lowered  # harness decorators: `@dist_init`, `@with_dist`
            or (isinstance(decorator, cst.Call) and _names_gpu(decorator))
        )

    def _class_is_marked(self, node: cst.ClassDef) -> bool:
        known = self._class_marked.get(id(node))
        if known is None:
            known = self._class_marked[id(node)] = (
                any(_distributed_base(arg.value) for arg in node.bases)
                or self._class_pytestmark(node)
                or any(
                    isinstance(item, cst.FunctionDef)
                    and item.name.value in _SETUP_METHODS
                    and self._skips(item)
                    for item in node.body.body
                )
            )
        return known

    def _class_pytestmark(self, node: cst.ClassDef) -> bool:
        for item in node.body.body:
            if isinstance(item, cst.SimpleStatementLine):
                for small in item.body:
                    if _is_pytestmark(small) and _marks_text(
                        self.ctx,
                        self.ctx.module.code_for_node(small.value),  # type: ignore[attr-defined]
                    ):
                        return True
        return False

    def _skips(self, function: cst.FunctionDef) -> bool:
        """The function calls a skip (`pytest.skip`, `self.skipTest`, `raise SkipTest`)."""
        for call in _calls(function):
            func = call.func
            name = self.ctx.names.resolve(func) or ""
            if name in _SKIP_CALLS or (
                isinstance(func, cst.Attribute) and func.attr.value == "skipTest"
            ):
                return True
        return False

    def _module_functions(self) -> dict[str, cst.FunctionDef]:
        if self._helpers is None:
            self._helpers = {
                statement.name.value: statement
                for statement in self.ctx.module.body
                if isinstance(statement, cst.FunctionDef)
            }
        return self._helpers

    def _skipping_helper(self, func: cst.BaseExpression) -> bool:
        """A call of a helper named `require*` / `skip*`, or of a function here that skips."""
        name = dotted_name(func)
        if name is None:
            return False
        last = name.rsplit(".", 1)[-1].lower().lstrip("_")
        if last.startswith(("skip", "require")):
            return True
        helper = self._module_functions().get(name) if isinstance(func, cst.Name) else None
        return helper is not None and self._skips(helper)

    def _cpu_group(self, node: cst.Call) -> bool:
        """`init_process_group` on fake, or on gloo without a literal `world_size` above 1."""
        backend = next(
            (
                arg.value
                for index, arg in enumerate(node.args)
                if (arg.keyword is None and index == 0)
                or (arg.keyword is not None and arg.keyword.value == "backend")
            ),
            None,
        )
        name = self._string(backend) if backend is not None else None
        if name not in _CPU_BACKENDS:
            return False
        if name == "fake":
            return True  # one process stands for any number of ranks
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "world_size":
                size = arg.value
                return not (isinstance(size, cst.Integer) and size.evaluated_value > 1)
        return True

    def _cpu_workers(self, node: cst.Call) -> bool:
        """`spawn(worker, ...)` of a function of this file that shows no accelerator use.

        Such workers start gloo groups (directly or through helpers) and run in
        the CPU job; one that names `cuda` or `nccl` or calls `torch.cuda.*` does not.
        """
        if not node.args or not isinstance(node.args[0].value, cst.Name):
            return False
        worker = self._module_functions().get(node.args[0].value.value)
        if worker is None:
            return False
        for call in _calls(worker):
            name = self.ctx.names.resolve(call.func) or ""
            if name.startswith("torch.cuda.") and name not in _CUDA_FINE:
                return False
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda":
                return False
        return not any(text.startswith("cuda") or text == "nccl" for text in _strings(worker))

    def _string(self, node: cst.BaseExpression) -> str | None:
        """A string literal, or a name the current test binds to one (`backend = "gloo"`)."""
        value = string_value(node)
        if value is not None or not isinstance(node, cst.Name) or not self._tests:
            return value
        found: str | None = None
        for statement in _assignments(self._tests[-1][0], node.value):
            found = string_value(statement)
        return found

    def _folder_marked(self) -> bool:
        markers = self.ctx.settings.distributed_markers
        return any(part in markers for part in PurePosixPath(self.ctx.path).parts[:-1])


def _calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    class _Calls(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: list[cst.Call] = []

        def visit_Call(self, call: cst.Call) -> None:
            self.found.append(call)

    collector = _Calls()
    node.visit(collector)
    return iter(collector.found)


def _strings(node: cst.CSTNode) -> list[str]:
    """The plain string literals inside ``node``."""

    class _Strings(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: list[str] = []

        def visit_SimpleString(self, string: cst.SimpleString) -> None:
            value = string_value(string)
            if value is not None:
                self.found.append(value)

    collector = _Strings()
    node.visit(collector)
    return collector.found


def _assignments(function: cst.FunctionDef, name: str) -> Iterator[cst.BaseExpression]:
    """Values assigned to ``name`` by simple statements of ``function``, in order."""

    class _Assigns(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: list[cst.BaseExpression] = []

        def visit_Assign(self, node: cst.Assign) -> None:
            if any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets):
                self.found.append(node.value)

    collector = _Assigns()
    function.visit(collector)
    return iter(collector.found)


def _param_marks(decorator: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The `marks=` of `pytest.param(...)` in a parametrize decorator's arguments."""
    if not isinstance(decorator, cst.Call):
        return
    for call in _calls(decorator):
        if (dotted_name(call.func) or "").endswith("param"):
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == "marks":
                    value = arg.value
                    if isinstance(value, (cst.List, cst.Tuple)):
                        yield from (element.value for element in value.elements)
                    else:
                        yield value


def _names_gpu(call: cst.Call) -> bool:
    """Arguments that name a GPU: `min_cuda_gpus=1`, `"GPU"`, `"cuda"`."""
    for arg in call.args:
        keyword = arg.keyword.value.lower() if arg.keyword is not None else ""
        if "gpu" in keyword or "cuda" in keyword:
            return True
        value = string_value(arg.value)
        if value is not None and value.lower() in ("gpu", "cuda", "gpus"):
            return True
    return False


def _cuda_value(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """`"cuda"`, `"cuda:0"` or `torch.device("cuda...")`."""
    value = string_value(node)
    if (
        value is None
        and isinstance(node, cst.Call)
        and node.args
        and ctx.names.resolve(node.func) == "torch.device"
    ):
        value = string_value(node.args[0].value)
    return value is not None and value.startswith("cuda")


def _distributed_base(node: cst.BaseExpression) -> bool:
    name = (dotted_name(node) or "").rsplit(".", 1)[-1].lower()
    return any(word in name for word in _DISTRIBUTED_BASE_WORDS)


# Test case base classes that run their tests in ranks they start themselves
# (`MultiProcessTestCase`, `DistributedTestBase`, `FSDPTest`, `DTensorTestBase`).
_DISTRIBUTED_BASE_WORDS = ("multiprocess", "multithread", "distributed", "fsdp", "dtensor")


def _is_to(func: cst.BaseExpression) -> bool:
    return isinstance(func, cst.Attribute) and func.attr.value == "to"


def _is_pytestmark(small: cst.BaseSmallStatement) -> bool:
    return isinstance(small, cst.Assign) and any(
        isinstance(t.target, cst.Name) and t.target.value == "pytestmark" for t in small.targets
    )


def _marks_text(ctx: FileContext, text: str) -> bool:
    markers = ctx.settings.distributed_markers
    return "skip" in text or any(f".{marker}" in text for marker in markers)


def _module_marked(ctx: FileContext) -> bool:
    """``pytestmark = ...`` at module level naming a marker or a skip condition."""
    for statement in ctx.module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if _is_pytestmark(small) and _marks_text(
                ctx,
                ctx.module.code_for_node(small.value),  # type: ignore[attr-defined]
            ):
                return True
    return False
