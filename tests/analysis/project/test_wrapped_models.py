"""Models wrapped in DDP/FSDP followed into helpers, annotations and wrapping helpers.

The forward of a DDP model broadcasts its buffers and that of an FSDP model
all-gathers its parameters: run under a rank test, it hangs. Besides a model
built in view (``model = DDP(net)``), ranklint follows one returned by a
function of the module that builds it, one a parameter's annotation names, and
one passed to a helper that runs its forward (analysis.walk.wrapped). Each
case compares the (file, line, code) of every RNK102 finding with the files'
``# expect:`` markers.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from ranklint import Config, lint_paths
from ranklint.analysis.walk.classify import CallClassifier
from ranklint.analysis.walk.names import NameTable
from ranklint.analysis.walk.wrapped import (
    WRAPPED_PREFIX,
    forwarded_parameter,
    returned_values,
    wrapped_argument,
)
from ranklint.findings import Confidence
from tests.conftest import marked_project

pytestmark = pytest.mark.timeout(30)

_CODES = ("RNK102",)
_DDP = "torch.nn.parallel.DistributedDataParallel"

_HEADER = """
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


    def ddp_wrap(model, enabled):
        if not enabled:
            return model
        return DDP(model, device_ids=[0])


    def fsdp_wrap(model):
        wrapped = FSDP(model) if model is not None else None
        return wrapped


    def evaluate(model, batch):
        return model(batch)


    def sample(model, batch):
        return model.generate(batch)


    def step(model, batch):
        return model.forward(batch)


    def unwrapped(model, batch):
        model = model.module if hasattr(model, "module") else model
        return model(batch)


    def outer(model, batch):
        return evaluate(model, batch)


    def apply(fn, batch):
        return fn(batch)
"""

_REPORTED = (
    _HEADER
    + """

    def made_by_helper(net, batch):
        model = ddp_wrap(net, True)
        if dist.get_rank() == 0:
            model(batch)  # expect: RNK102


    def passed_to_helpers(net, batch):
        model = ddp_wrap(net, True)
        if dist.get_rank() == 0:
            evaluate(model, batch)  # expect: RNK102
        if dist.get_rank() == 1:
            sample(model, batch)  # DDP has no generate: the helper would raise
        if dist.get_rank() == 0:
            step(model=model, batch=batch)  # expect: RNK102
        if dist.get_rank() == 0:
            outer(model, batch)  # expect: RNK102


    def built_in_view(net, batch):
        model = FSDP(net)
        if dist.get_rank() == 0:
            evaluate(model, batch)  # expect: RNK102
        if dist.get_rank() == 1:
            sample(model, batch)  # expect: RNK102


    def annotated(model: DistributedDataParallel, batch):
        if dist.get_rank() == 0:
            model.forward(batch)  # expect: RNK102


    def annotated_fsdp(model: FSDP, batch):
        if dist.get_rank() == 0:
            model(batch)  # expect: RNK102
"""
)

_QUIET = (
    _HEADER
    + """

    def unwrapped_by_the_helper(net, batch):
        model = ddp_wrap(net, True)
        if dist.get_rank() == 0:
            unwrapped(model, batch)


    def module_passed(net, batch):
        model = DDP(net)
        if dist.get_rank() == 0:
            evaluate(model.module, batch)


    def no_buffer_broadcast(net, batch):
        model = DDP(net, broadcast_buffers=False)
        if dist.get_rank() == 0:
            evaluate(model, batch)


    def no_forward_sync(net, batch):
        model = DDP(net, forward_sync_buffers=False)
        if dist.get_rank() == 0:
            evaluate(model, batch)


    def own_group(net, batch, pg):
        model = DDP(net, process_group=pg)
        if dist.get_rank() == 0:
            evaluate(model, batch)


    def plain_model(net, batch):
        if dist.get_rank() == 0:
            evaluate(net, batch)
            apply(print, batch)


    def on_every_rank(net, batch):
        model = ddp_wrap(net, True)
        evaluate(model, batch)
        outer(model, batch)


    def helper_shadowed(net, batch, ddp_wrap):
        model = ddp_wrap(net, True)
        if dist.get_rank() == 0:
            model(batch)


    def not_annotated_as_a_wrapper(model: "torch.nn.Module", batch):
        if dist.get_rank() == 0:
            model(batch)


    def made_by_a_helper_of_another_result(net, batch):
        model = fsdp_wrap(net)
        if dist.get_rank() == 0:
            model(batch)
"""
)


def test_wrapped_model_reaching_a_forward_under_a_rank_test_is_reported(
    tmp_path: Path,
) -> None:
    found, expected = marked_project(tmp_path, {"m.py": _REPORTED}, _CODES)

    assert found == expected


def test_model_unwrapped_unbuffered_on_its_own_group_or_plain_is_not_reported(
    tmp_path: Path,
) -> None:
    found, expected = marked_project(tmp_path, {"m.py": _QUIET}, _CODES)

    assert expected == []
    assert found == []


def test_helper_in_another_module_runs_the_forward_of_the_passed_model(tmp_path: Path) -> None:
    helpers = """
        def evaluate(model, loader):
            for batch in loader:
                model(batch)
    """
    main = """
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        from helpers import evaluate


        def main(net, loader):
            model = DDP(net)
            if dist.get_rank() == 0:
                evaluate(model, loader)  # expect: RNK102
    """
    found, expected = marked_project(tmp_path, {"helpers.py": helpers, "train.py": main}, _CODES)

    assert found == expected


def test_passed_model_finding_is_high_and_names_the_forward_in_its_chain(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "import torch.distributed as dist\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "\n"
        "def evaluate(model, batch):\n"
        "    return model(batch)\n"
        "\n"
        "def main(net, batch):\n"
        "    model = DDP(net)\n"
        "    if dist.get_rank() == 0:\n"
        "        evaluate(model, batch)\n",
        encoding="utf-8",
    )

    result = lint_paths([tmp_path], Config(select=_CODES, root=tmp_path), jobs=1)

    (finding,) = result.findings
    assert finding.line == 10
    assert finding.confidence is Confidence.HIGH
    assert "the forward of a DDP model" in finding.message
    assert "evaluate() -> model()" in finding.message
    assert [step.line for step in finding.trace] == [10, 5]


def _function(source: str) -> cst.FunctionDef:
    node = cst.parse_module(source).body[0]
    assert isinstance(node, cst.FunctionDef)
    return node


def test_returned_values_are_both_arms_of_a_conditional_and_skip_nested_functions() -> None:
    function = _function(
        "def f(m):\n"
        "    if m:\n"
        "        return a\n"
        "    def g():\n"
        "        return nested\n"
        "    return b if m else c\n"
        "    return\n"
    )

    values = [cst.Module([]).code_for_node(v) for v in returned_values(function)]

    assert values == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("call", "kept", "expected"),
    [
        ("model(x)", {"model"}, ("model", "__call__")),
        ("model.forward(x)", {"model"}, ("model", "forward")),
        ("model.generate(x)", {"model"}, ("model", "generate")),
        ("model.eval()", {"model"}, None),
        ("model(x)", set(), None),
        ("self.model(x)", {"model"}, None),
        ("make()(x)", {"make"}, None),
    ],
)
def test_forwarded_parameter_is_a_forward_of_a_kept_parameter_only(
    call: str, kept: set[str], expected: tuple[str, str] | None
) -> None:
    node = cst.parse_expression(call)
    assert isinstance(node, cst.Call)

    assert forwarded_parameter(node.func, kept.__contains__) == expected


def _names(*imports: str) -> NameTable:
    names = NameTable()
    for statement in imports:
        node = cst.parse_statement(statement)
        assert isinstance(node, cst.SimpleStatementLine)
        small = node.body[0]
        assert isinstance(small, (cst.Import, cst.ImportFrom))
        names.bind_import_statement(small)
    return names


def _calls(names: NameTable, source: str = "") -> CallClassifier:
    return CallClassifier(names, {}, {}, source=source)


def test_wrapped_argument_names_the_class_of_a_model_whose_forward_communicates() -> None:
    names = _names("from torch.nn.parallel import DistributedDataParallel as DDP")
    names.bind_other("model", value=cst.parse_expression("DDP(net)"))
    names.bind_other("helper", value=cst.parse_expression("Helper()"))
    names.bind_other("net", value=cst.parse_expression("build()"))
    calls = _calls(names)

    assert wrapped_argument(cst.Name("model"), calls) == WRAPPED_PREFIX + _DDP
    assert wrapped_argument(cst.Name("helper"), calls) is None
    assert wrapped_argument(cst.Name("net"), calls) is None
    assert wrapped_argument(cst.parse_expression("model.module"), calls) is None


def test_wrapped_argument_of_a_prepared_model_needs_the_file_to_configure_fsdp() -> None:
    names = NameTable()
    names.bind_other("model", value=cst.parse_expression("accelerator.prepare(net)"))
    configured = "plugin = FullyShardedDataParallelPlugin(sharding_strategy=1)"

    assert wrapped_argument(cst.Name("model"), _calls(names)) is None
    assert wrapped_argument(cst.Name("model"), _calls(names, configured)) == (
        WRAPPED_PREFIX + "accelerate.PreparedModel"
    )


def test_parameter_annotated_with_a_wrapper_class_is_an_instance_of_it() -> None:
    names = _names(
        "from torch.nn.parallel import DistributedDataParallel as DDP", "import torch.nn as nn"
    )
    function = _function("def f(a: DDP, b: nn.Module, c, d: 'DDP'):\n    pass\n")

    for param in function.params.params:
        names.bind_parameter(param)

    assert [names.instance_of(n) for n in "abcd"] == [_DDP, None, None, None]
    assert names.lookup("a") is None  # the parameter shadows any import of its name


def test_module_function_returning_a_wrapper_it_builds_makes_instances_of_it() -> None:
    names = _names("from torch.nn.parallel import DistributedDataParallel as DDP")
    maker = _function("def wrap(m):\n    if m is None:\n        return m\n    return DDP(m)\n")
    other = _function("def build(m):\n    return Net(m)\n")
    names.note_wrapper_maker("wrap", returned_values(maker))
    names.note_wrapper_maker("build", returned_values(other))
    names.bind_other("wrap")
    names.bind_other("build")

    names.bind_other("model", value=cst.parse_expression("wrap(net)"))
    names.bind_other("plain", value=cst.parse_expression("build(net)"))

    assert names.instance_of("model") == _DDP
    assert names.instance_of("plain") is None
