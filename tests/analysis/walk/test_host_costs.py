"""Host costs and tensor-ness (analysis/walk/host_costs.py, tensors.py), through RNK201-RNK203.

Each snippet is the body of ``train_step`` (hot by its name), so every host cost
the analysis records there becomes a finding. What the analysis believes an
expression to be is read back through the costs it causes:

- ``print(v)`` is a sync only on a tensor that may live on the device;
- ``n[v]`` is a data-dependent index only with a boolean tensor (a mask);
- ``for _ in v`` is a loop over a tensor for any tensor, on the host or not;
- ``v(n)`` is a forward (a tensor) only when ``v`` is an ``nn`` module.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from ranklint import Config, lint_source
from ranklint.findings import Finding

HOT = ("RNK201", "RNK202", "RNK203")

PRELUDE = """\
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
"""
HOT_WHERE = "it is in `train_step`, which runs once per step (its name matches `hot-functions`)"
SYNC_ADVICE = (
    "keep the value on the device (accumulate `x.detach()`) and read it on the host once "
    "per log interval (`if step % log_every == 0:`)"
)
LOOP_ADVICE = (
    "write it as one tensor operation over the whole tensor (broadcasting, "
    "`torch.where`, `gather`/`scatter`, a reduction)"
)
FACTORY_ADVICE = (
    "pass `device=` (for example `device=batch.device`) and `dtype=`, or create "
    "the tensor once outside the step"
)


def lint(source: str) -> list[Finding]:
    """Findings of RNK201-RNK203 (RNK203 is off by default) on a whole file."""
    # Every tier: these tests are about what is recorded (the tiers:
    # tests/rules/hot_path/test_host_sync_in_hot_path.py).
    result = lint_source(source, "snippet.py", Config(select=HOT, confidence="low"))
    assert result.errors == []
    return result.findings


def step_source(body: str, *, params: str = "x: torch.Tensor, n, model", header: str = "") -> str:
    """A file whose ``train_step(params)`` runs ``body``; ``header`` goes after the imports."""
    header = textwrap.dedent(header).strip("\n")
    lines = [PRELUDE, *([header, ""] if header else []), f"def train_step({params}):"]
    lines += ["    " + line for line in textwrap.dedent(body).strip("\n").splitlines()]
    return "\n".join(lines) + "\n"


def first_body_line(params: str = "x: torch.Tensor, n, model", header: str = "") -> int:
    return (
        step_source("pass", params=params, header=header)
        .splitlines()
        .index(f"def train_step({params}):")
        + 2
    )


def costs(
    body: str, *, params: str = "x: torch.Tensor, n, model", header: str = ""
) -> list[tuple[int, str, str]]:
    """(line in ``body``, code, the cost's text) of each hot-path finding in ``body``."""
    source = step_source(body, params=params, header=header)
    first = first_body_line(params, header)
    return [
        (f.line - first + 1, f.code, f.message.split("`")[1])
        for f in lint(source)
        if f.line >= first
    ]


def kind_of(
    expr: str, *, setup: str = "", params: str = "x: torch.Tensor, n, model", header: str = ""
) -> str:
    """What the analysis takes ``expr`` for after ``setup``.

    tensor, bool, output (a model's output: read as a tensor, not iterated as
    one), host (made on the host: iterated, not read as a tensor), copy (a copy
    on the host: neither), module or none.
    """
    setup_lines = textwrap.dedent(setup).strip("\n").splitlines() if setup.strip() else []
    probe = [
        f"v = {expr}",
        "print(v)",
        "n[v]",
        "for _ in v:",
        "    pass",
        "print(v(n))",
        "print(v.cuda())",
    ]
    body = "\n".join([*setup_lines, *probe])
    start = len(setup_lines) + 1  # the line of `v = ...`
    found = {(line - start, code) for line, code, _ in costs(body, params=params, header=header)}
    printed = (1, "RNK201") in found
    masked = (2, "RNK201") in found
    looped = (3, "RNK202") in found
    called = (5, "RNK201") in found
    moved = (6, "RNK201") in found
    if masked:
        assert printed
        assert looped
        return "bool"
    if printed:
        assert moved
        return "tensor" if looped else "output"
    if looped:
        assert moved
        return "host"
    if moved:
        return "copy"
    return "module" if called else "none"


# -- what is a tensor ----------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        # names and parameters
        ("x", "tensor"),
        ("n", "none"),
        # tensor methods on a tensor
        ("x.sum()", "tensor"),
        ("x.detach().float()", "tensor"),
        ("x.isnan()", "bool"),
        ("x.bool()", "bool"),
        ("(x > 0).float()", "tensor"),
        ("(x > 0).any()", "bool"),
        ("x.numel()", "none"),
        ("x.max()", "tensor"),
        ("x.median()", "tensor"),
        ("x.max(dim=1)", "none"),
        ("x.max(1)", "none"),
        ("n.sum()", "none"),
        # attributes
        ("x.grad", "tensor"),
        ("x.T", "tensor"),
        ("n.grad", "none"),
        ("x.shape", "none"),
        ("n.loss", "tensor"),
        ("n.logits", "tensor"),
        # indexing
        ("x[0]", "tensor"),
        ("(x > 0)[0]", "bool"),
        ("torch.zeros(3)[0]", "host"),
        ("n[0]", "none"),
        # arithmetic, bitwise and unary operators
        ("x + 1", "tensor"),
        ("1 - x", "tensor"),
        ("n * x", "tensor"),
        ("x / n", "tensor"),
        ("x // 2", "tensor"),
        ("x ** 2", "tensor"),
        ("x @ x", "tensor"),
        ("x % 2", "tensor"),
        ("n + 1", "none"),
        ("x << 1", "none"),
        ("torch.zeros(3) + 1", "host"),
        ("torch.zeros(3) * x", "tensor"),
        ("(x > 0) & (x < 1)", "bool"),
        ("(x > 0) | n", "bool"),
        ("(x > 0) ^ (x < 1)", "bool"),
        ("(x > 0) & x", "tensor"),
        ("(x > 0) + (x < 0)", "tensor"),
        ("'%s' % x", "none"),
        ("-x", "tensor"),
        ("~(x > 0)", "bool"),
        ("-torch.zeros(3)", "host"),
        ("-n", "none"),
        ("-nn.Linear(3, 3)", "none"),
        ("not x", "none"),
        # comparisons
        ("x > 0", "bool"),
        ("0 < x", "bool"),
        ("n < 0 < x", "bool"),
        ("n > 0", "none"),
        ("x is None", "none"),
        ("x is not None", "none"),
        ("x in n", "none"),
        ("x not in n", "none"),
        ("x == x.max()", "bool"),
        # conditional expressions
        ("x if n else x.abs()", "tensor"),
        ("x > 0 if n else x < 0", "bool"),
        ("x if n else n", "none"),
        ("x if n else x > 0", "none"),
        ("n if n else n", "none"),
        # other expressions
        ("[x]", "none"),
        ("(x, x)", "none"),
    ],
)
def test_kind_of_an_expression_in_a_hot_function(expr: str, expected: str) -> None:
    assert kind_of(expr) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        # torch functions: results on the device unless made on the host
        ("torch.abs(x)", "tensor"),
        ("torch.abs(n)", "tensor"),
        ("torch.linalg.norm(x)", "tensor"),
        ("torch.isnan(x)", "bool"),
        ("torch.logical_and(x > 0, x < 1)", "bool"),
        ("torch.numel(x)", "none"),
        ("torch.manual_seed(0)", "none"),
        ("np.sum(n)", "none"),
        ("np.zeros(3)", "none"),
        ("F.relu(x)", "tensor"),
        ("F.cross_entropy(x, n)", "tensor"),
        # host factories: on the host unless given `device=`
        ("torch.zeros(3)", "host"),
        ("torch.zeros(3, device='cuda')", "tensor"),
        ("torch.zeros(3, dtype=torch.float16)", "host"),
        ("torch.arange(x.max())", "host"),
        ("torch.tensor([1.0])", "host"),
        ("torch.tensor(x)", "tensor"),
        ("torch.as_tensor(x)", "tensor"),
        ("torch.as_tensor(n)", "host"),
        ("torch.tensor(n, device='cuda')", "tensor"),
        ("torch.from_numpy(n)", "host"),
        # a torch function of a host tensor stays on the host
        ("torch.abs(torch.zeros(3))", "host"),
        ("torch.isnan(torch.zeros(3))", "host"),
        # methods of host tensors
        ("torch.zeros(3).float()", "host"),
        ("torch.zeros(3).to('cuda')", "tensor"),
        ("torch.zeros(3).cuda()", "tensor"),
        ("torch.zeros(3).tolist()", "none"),
        # nn modules
        ("nn.Linear(3, 3)", "module"),
        ("nn.init.zeros_(n)", "none"),
        ("np.Array(3)", "none"),
        ("nn.Linear(3, 3)(x)", "tensor"),
        ("nn.CrossEntropyLoss()(x, n)", "tensor"),
        ("x.abs()(n)", "none"),
        ("n.forward(x)", "none"),
        # loss functions and models by name
        ("criterion(x, n)", "tensor"),
        ("self.criterion(x, n)", "tensor"),
        ("ce_loss(x, n)", "tensor"),
        ("self.ce_loss(x, n)", "tensor"),
        ("contrastiveLoss(x, n)", "tensor"),
        ("myloss(x, n)", "none"),
        ("x.cpu()", "copy"),
        ("x.to('cpu')", "copy"),
        ("x.to(device='cpu')", "copy"),
        ("n.cpu().detach()", "copy"),
        ("x.cpu().cuda()", "tensor"),
        ("x.cpu().to(n)", "tensor"),
        ("x.cpu().to(torch.float16)", "copy"),
        ("x.cpu().to(dtype=torch.float16)", "copy"),
        ("torch.mode(torch.tensor([1]))", "host"),
        ("torch.mode(x)", "none"),
        ("model(x)", "tensor"),
        ("model(x)[0]", "tensor"),
        ("model(x).sum()", "tensor"),
        ("n[0](x)", "none"),
        ("(lambda t: t)(x)", "none"),
    ],
)
def test_kind_of_a_call_in_a_hot_function(expr: str, expected: str) -> None:
    assert kind_of(expr, params="x: torch.Tensor, n, model, self") == expected


@pytest.mark.parametrize(
    ("header", "expr", "expected"),
    [
        ("from torch import zeros", "zeros(3)", "host"),
        ("from torch import abs", "abs(x)", "tensor"),
        ("from torch import abs", "abs(torch.zeros(3))", "host"),
        ("from torch import isnan", "isnan(x)", "bool"),
        ("from torch import numel", "numel(x)", "none"),
        ("from torch.nn.functional import relu", "relu(x)", "tensor"),
        ("from torch.nn import Linear", "Linear(3, 3)", "none"),
        ("from numpy import zeros", "zeros(3)", "none"),
        ("from numpy import abs", "abs(x)", "none"),
        ("class FocalLoss:\n    pass", "FocalLoss()", "none"),
    ],
)
def test_kind_of_a_call_of_an_imported_or_local_name(header: str, expr: str, expected: str) -> None:
    assert kind_of(expr, header=header) == expected


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("m = nn.Linear(3, 3)\nv2 = m(x)", "tensor"),
        ("m = nn.Linear(3, 3)\nv2 = m.forward(x)", "tensor"),
        ("m = nn.Linear(3, 3)\nv2 = m.train()", "none"),
        ("m = n\nv2 = m(x)", "none"),
    ],
)
def test_calling_an_nn_module_instance_gives_a_tensor(setup: str, expected: str) -> None:
    assert kind_of("v2", setup=setup) == expected


# -- annotations ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "annotation", "expected"),
    [
        ("", "torch.Tensor", "tensor"),
        ("", "Tensor", "tensor"),
        ("", "DTensor", "tensor"),
        ("", "torch.FloatTensor", "tensor"),
        ("", "torch.LongTensor", "tensor"),
        ("", "torch.distributed.tensor.DTensor", "tensor"),
        ("import torch as th", "th.Tensor", "tensor"),
        ("import torch.distributed.tensor.api as api", "api.DTensor", "tensor"),
        ("import tensorflow as tf", "tf.Tensor", "none"),
        ("", "np.ndarray", "none"),
        ("", "np", "none"),
        ("", "int", "none"),
        ("", "torch.Size", "none"),
    ],
)
def test_a_parameter_is_a_tensor_when_annotated_with_a_torch_tensor_type(
    header: str, annotation: str, expected: str
) -> None:
    assert kind_of("a", params=f"a: {annotation}, n", header=header) == expected


def test_positional_only_and_keyword_only_parameters_are_tensors_when_annotated() -> None:
    params = "a: torch.Tensor, /, b: int, c=None, *, d: torch.Tensor, n"

    assert [kind_of(name, params=params) for name in "abcd"] == [
        "tensor",
        "none",
        "none",
        "tensor",
    ]


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("def helper() -> torch.Tensor:\n    pass", "tensor"),
        ("def helper() -> Tensor:\n    pass", "tensor"),
        ("def helper() -> int:\n    pass", "none"),
        ("def helper():\n    pass", "none"),
        (
            "def helper() -> torch.Tensor:\n    pass\n\n\ndef helper() -> int:\n    pass",
            "none",
        ),
        (
            "def helper():\n    pass\n\n\ndef helper() -> torch.Tensor:\n    pass",
            "tensor",
        ),
    ],
)
def test_a_call_of_a_function_of_the_file_is_a_tensor_when_it_is_annotated_to_return_one(
    header: str, expected: str
) -> None:
    assert kind_of("helper()", header=header) == expected


def test_a_local_name_shadows_a_function_annotated_to_return_a_tensor() -> None:
    header = "def helper() -> torch.Tensor:\n    pass"

    assert kind_of("helper()", setup="helper = n", header=header) == "none"


# -- bindings ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        # assignments
        ("t = x.sum()", "tensor"),
        ("t = x.sum()\nt = t.item()", "none"),
        ("t = x.sum()\nt = n", "none"),
        ("t = x.sum()\nt, w = n", "none"),
        ("t = x.sum()\n[w, t] = n", "none"),
        ("t = x.sum()\n*t, w = n", "none"),
        ("t = u = x > 0", "bool"),
        ("if (t := x.sum()) is None:\n    pass", "tensor"),
        # annotated assignments
        ("t: torch.Tensor = n", "tensor"),
        ("t: torch.Tensor", "tensor"),
        ("t: int = x.sum()", "tensor"),
        ("t: float = n", "none"),
        ("t = x.sum()\nt: float = 1.0", "none"),
        ("t = x.sum()\nt: float", "tensor"),
        # augmented assignments: a Python number plus a tensor is a tensor
        ("t = 0.0\nt += x.sum()", "tensor"),
        ("t = 0.0\nt += x > 0", "tensor"),
        ("t = 0.0\nt += 1", "none"),
        ("t = 0.0\nt += n", "none"),
        ("t = x.sum()\nt += 1", "tensor"),
        ("t = torch.zeros(3)\nt += x", "tensor"),
        ("t = torch.zeros(3)\nt += 1", "host"),
        # loop targets
        ("for t in x:\n    pass", "tensor"),
        ("for t in model.parameters():\n    pass", "tensor"),
        ("for t in model.buffers():\n    pass", "none"),
        ("for t in n:\n    pass", "none"),
        ("t = x.sum()\nfor t in n:\n    pass", "none"),
        ("for t, w in x:\n    pass", "none"),
    ],
)
def test_a_name_has_the_kind_of_what_it_was_last_bound_to(setup: str, expected: str) -> None:
    assert kind_of("t", setup=setup) == expected


def test_names_are_tracked_per_function() -> None:
    header = """
    def other(x: torch.Tensor):
        t = x.sum()
        return t
    """

    assert kind_of("t", setup="", header=header) == "none"


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("torch.mode(torch.tensor(n))", "host"),
        ("torch.mode(torch.tensor(n), dim=0)", "host"),
        ("torch.mode(x.cpu())", "copy"),
        ("torch.mode(x)", "none"),
        # `device=` may move the result; torch.nn's functions take modules' tensors
        ("torch.mode(torch.tensor(n), device=n)", "none"),
        ("torch.nn.init.zeros_(torch.tensor(n))", "none"),
    ],
)
def test_another_torch_function_of_a_host_tensor_is_on_the_host_unless_given_a_device(
    expr: str, expected: str
) -> None:
    assert kind_of(expr) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        # a change of dtype keeps a copy on the host
        ("x.cpu().to(torch.float16)", "copy"),
        ("x.cpu().to(dtype=torch.float16)", "copy"),
        ("x.cpu().to(x.dtype)", "copy"),
        ("x.cpu().to(model_dtype)", "copy"),
        # a device, or anything else, may move it back
        ("x.cpu().to(torch.float16, device=n)", "tensor"),
        ("x.cpu().to(non_blocking=True)", "tensor"),
        ("x.cpu().to(n)", "tensor"),
        ("x.cpu().to(model_type)", "tensor"),
        ("x.cpu().cuda()", "tensor"),
    ],
)
def test_a_host_copy_moved_with_to_stays_on_the_host_only_for_a_change_of_dtype(
    expr: str, expected: str
) -> None:
    assert kind_of(expr, params="x: torch.Tensor, n, model_dtype, model_type") == expected


# -- nesting limit: 24 levels are followed, deeper is unknown ------------------

LIMIT = 24


@pytest.mark.parametrize(
    ("make", "within", "beyond"),
    [
        (lambda k: "x" + ".abs()" * k, "tensor", "none"),
        (lambda k: "x" + ".T" * k, "tensor", "none"),
        (lambda k: "x" + "[0]" * k, "tensor", "none"),
        (lambda k: "-" * k + "x", "tensor", "none"),
        (lambda k: "x" + " + 1" * k, "tensor", "none"),
        (lambda k: "1 + (" * k + "x" + ")" * k, "tensor", "none"),
        (lambda k: "(" * k + "x" + " > 0)" * k, "bool", "none"),
        (lambda k: "x if n else (" * k + "x" + ")" * k, "tensor", "none"),
        (lambda k: "(" * k + "x" + " if n else x)" * k, "tensor", "none"),
        # a torch function of an argument it cannot see through is taken as on the device
        (lambda k: "torch.abs(" * k + "torch.zeros(3)" + ")" * k, "host", "tensor"),
        (lambda k: "torch.as_tensor(x" + ".abs()" * (k - 1) + ")", "tensor", "host"),
        # any other torch function keeps a host argument on the host
        (lambda k: "torch.mode(" * k + "torch.tensor(n)" + ")" * k, "host", "none"),
    ],
)
def test_an_expression_is_followed_up_to_the_nesting_limit(
    make: Callable[[int], str], within: str, beyond: str
) -> None:
    assert (kind_of(make(LIMIT)), kind_of(make(LIMIT + 1))) == (within, beyond)


def test_a_torch_function_imported_by_name_is_followed_up_to_the_nesting_limit() -> None:
    def make(k: int) -> str:
        return "abs(" * k + "torch.zeros(3)" + ")" * k

    header = "from torch import abs"

    assert (kind_of(make(LIMIT), header=header), kind_of(make(LIMIT + 1), header=header)) == (
        "host",
        "tensor",
    )


# -- host costs ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        # copies to the host, on any value
        ("x.item()", [("RNK201", "x.item()")]),
        ("n.item()", [("RNK201", "n.item()")]),
        ("x.tolist()", [("RNK201", "x.tolist()")]),
        ("x.cpu()", [("RNK201", "x.cpu()")]),
        ("x.numpy()", [("RNK201", "x.numpy()")]),
        ("n.item(0)", []),
        ("x.detach()", []),
        ("x.to('cpu')", [("RNK201", "x.to('cpu')")]),
        ("x.to('cpu:0')", [("RNK201", "x.to('cpu:0')")]),
        ('x.to("""cpu""")', [("RNK201", 'x.to("""cpu""")')]),
        ("x.to(device='cpu')", [("RNK201", "x.to(device='cpu')")]),
        (
            "x.to(copy=True, device='cpu')",
            [("RNK201", "x.to(copy=True, device='cpu')")],
        ),
        ("x.to(torch.device('cpu'))", [("RNK201", "x.to(torch.device('cpu'))")]),
        ("x.to(device=torch.device('cpu'))", [("RNK201", "x.to(device=torch.device('cpu'))")]),
        ("x.to(device('cpu'))", [("RNK201", "x.to(device('cpu'))")]),
        ("x.to(torch.device(type='cpu'))", [("RNK201", "x.to(torch.device(type='cpu'))")]),
        ("x.to('cuda')", []),
        ("x.to('Xcpu')", []),
        ("x.to(device='cuda')", []),
        ("x.to(dtype=torch.float16)", []),
        ("x.to(torch.float16)", []),
        ("x.to(torch.float16, 'cpu')", []),
        ("x.to(torch.device('cuda', 0))", []),
        ("x.to(torch.device())", []),
        ("x.to(cpu_device)", []),
        ("x.to(n.cpu_device)", []),
        ("x.to(wrap('cpu'))", []),
        # what is called on a copy is on the host already
        ("x.cpu().numpy()", [("RNK201", "x.cpu()")]),
        ("x.to('cpu').numpy()", [("RNK201", "x.to('cpu')")]),
        ("x.to('cuda').item()", [("RNK201", "x.to('cuda').item()")]),
        ("x.float().item()", [("RNK201", "x.float().item()")]),
        ("x.to('cpu').to('cpu')", [("RNK201", "x.to('cpu')")]),
        # on a tensor made on the host, nothing is waited for
        ("torch.zeros(3).item()", [("RNK203", "torch.zeros(3)")]),
        ("torch.tensor([1]).tolist()", [("RNK203", "torch.tensor([1])")]),
        ("torch.zeros(3).sum().cpu()", [("RNK203", "torch.zeros(3)")]),
        # explicit synchronisation
        ("torch.cuda.synchronize()", [("RNK201", "torch.cuda.synchronize()")]),
        ("n.synchronize()", [("RNK201", "n.synchronize()")]),
        # data-dependent output sizes
        ("torch.nonzero(x)", [("RNK201", "torch.nonzero(x)")]),
        ("x.nonzero()", [("RNK201", "x.nonzero()")]),
        ("torch.masked_select(x, n)", [("RNK201", "torch.masked_select(x, n)")]),
        ("torch.unique(x)", [("RNK201", "torch.unique(x)")]),
        ("x.unique()", []),
        ("np.nonzero(n)", []),
        ("np.unique(n)", []),
        ("x[x > 0]", [("RNK201", "x[x > 0]")]),
        ("x[:, x > 0]", [("RNK201", "x[:, x > 0]")]),
        ("n[0, x > 0]", [("RNK201", "n[0, x > 0]")]),
        ("x[0]", []),
        ("x[x]", []),
        ("x[:]", []),
        # conversions of known tensors
        ("float(x)", [("RNK201", "float(x)")]),
        ("int(x.sum())", [("RNK201", "int(x.sum())")]),
        ("bool(x > 0)", [("RNK201", "bool(x > 0)")]),
        ("complex(x)", [("RNK201", "complex(x)")]),
        ("float(n)", []),
        ("float()", []),
        ("float(n, x)", []),
        # formatting of known tensors
        ("print(x)", [("RNK201", "print(x)")]),
        ("print('loss', x)", [("RNK201", "print('loss', x)")]),
        ("str(x)", [("RNK201", "str(x)")]),
        ("repr(x)", [("RNK201", "repr(x)")]),
        ("format(x)", [("RNK201", "format(x)")]),
        ("print(n)", []),
        ("print(n, end=x)", []),
        ("len(x)", []),
        ("'{}'.format(x)", [("RNK201", "'{}'.format(x)")]),
        ("'{} {}'.format(n, x)", [("RNK201", "'{} {}'.format(n, x)")]),
        ("'{}'.format(n)", []),
        ("n.format(x)", []),
        ("f'{x}'", [("RNK201", "x")]),
        ("f'{x.sum():.3f}'", [("RNK201", "x.sum()")]),
        ("f'{n}'", []),
        ("f'{x.item():.3f}'", [("RNK201", "x.item()")]),
        ("'%f' % x", [("RNK201", "'%f' % x")]),
        ("'%f' 'x' % x", [("RNK201", "'%f' 'x' % x")]),
        ("'%f %f' % (n, x)", [("RNK201", "'%f %f' % (n, x)")]),
        ("'%d' % n", []),
        ("'%d %d' % (n, n)", []),
        ("n % x", []),
        ("x % 2", []),
        ("'a' + x", []),
        # truth tests of known tensors
        ("if x > 0:\n    pass", [("RNK201", "x > 0")]),
        ("if n > 0:\n    pass", []),
        ("while x.any():\n    pass", [("RNK201", "x.any()")]),
        ("while n:\n    pass", []),
        ("assert x.all()", [("RNK201", "x.all()")]),
        ("assert n", []),
        ("v = 1 if x > 0 else 2", [("RNK201", "x > 0")]),
        ("v = 1 if n else x", []),
        ("v = x > 0 and n", [("RNK201", "x > 0")]),
        ("v = n or x.isnan()", [("RNK201", "x.isnan()")]),
        ("v = n or (x > 0 and n)", [("RNK201", "x > 0")]),
        ("v = n and n", []),
        ("v = not x.isnan()", [("RNK201", "x.isnan()")]),
        ("v = not n", []),
        ("v = -x", []),
        # loops over tensors
        ("for r in x:\n    pass", [("RNK202", "x")]),
        (
            "for r in torch.zeros(3):\n    pass",
            [("RNK202", "torch.zeros(3)"), ("RNK203", "torch.zeros(3)")],
        ),
        ("for r in n:\n    pass", []),
        ("v = [r for r in x]", [("RNK202", "x")]),
        ("v = {r: 1 for r in n}", []),
        ("for r in x.tolist():\n    pass", [("RNK201", "x.tolist()")]),
    ],
)
def test_host_cost_of_a_statement_in_a_hot_function(
    statement: str, expected: list[tuple[str, str]]
) -> None:
    found = costs(statement, params="x: torch.Tensor, n, cpu_device")

    assert [(code, text) for _, code, text in found] == expected


@pytest.mark.parametrize(
    ("loop", "expected"),
    [
        ("for i in range(len(x)):\n    v = x[i]", [("RNK202", "range(len(x))")]),
        ("for i in range(x.size(0)):\n    v = x[i]", [("RNK202", "range(x.size(0))")]),
        ("for i in range(x.shape[0]):\n    v = x[i, 0]", [("RNK202", "range(x.shape[0])")]),
        ("for i in range(len(h)):\n    v = h[i]", [("RNK202", "range(len(h))")]),
        ("for i in range(len(x)):\n    if n:\n        v = x[i] * 2", [("RNK202", "range(len(x))")]),
        # the loop does not index the tensor by the loop variable
        ("for i in range(len(x)):\n    v = n[i]", []),
        ("for i in range(len(x)):\n    v = x[0]", []),
        ("for i in range(len(x)):\n    v = x[n]", []),
        ("for i in range(len(x)):\n    v = x[:i]", []),
        ("for i in range(len(x)):\n    v = x.i", []),
        # the bound is not the length of a tensor
        ("for i in range(len(n)):\n    v = n[i]", []),
        ("for i in range(count(x)):\n    v = x[i]", []),
        ("for i in range(x.numel()):\n    v = x[i]", []),
        ("for i in range(x.dim[0]):\n    v = x[i]", []),
        ("for i in range(len(x.T)):\n    v = x[i]", []),
        ("for i in range(len()):\n    v = x[i]", []),
        ("for i in range(n):\n    v = x[i]", []),
        ("for i in range(0, len(x), 2):\n    v = x[i]", []),
        ("for i in enumerate(x.size(0)):\n    v = x[i]", []),
        ("for i, in range(len(x)):\n    v = x[i]", []),
    ],
)
def test_a_range_loop_over_a_tensor_is_reported_when_its_body_indexes_the_tensor(
    loop: str, expected: list[tuple[str, str]]
) -> None:
    found = costs("h = torch.zeros(3)\n" + loop)

    assert [(code, text) for line, code, text in found if line > 1] == expected


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        # The index is the 2000th node searched: found.
        ("v = -n", ["RNK202"]),
        # One node more (the parentheses) puts it 2001st, past the budget.
        ("v = (n)", []),
    ],
)
def test_a_range_loop_body_is_searched_for_the_index_within_a_budget_of_2000_nodes(
    last: str, expected: list[str]
) -> None:
    body = ["for i in range(len(x)):", "    v = x[i]", *["    v = n"] * 198, f"    {last}"]

    assert [code for _, code, _ in costs("\n".join(body))] == expected


def test_a_range_loop_body_far_beyond_the_budget_is_not_searched() -> None:
    body = ["for i in range(len(x)):", "    v = x[i]", *["    v = n"] * 400]
    half = ["for i in range(len(x)):", "    v = x[i]", *["    v = n"] * 150]

    assert [code for _, code, _ in costs("\n".join(body))] == []
    assert [code for _, code, _ in costs("\n".join(half))] == ["RNK202"]


@pytest.mark.parametrize(
    ("loop", "expected"),
    [
        # A model's output read as records is a list of records, not a tensor.
        ("v = [r[0] for r in model(x)]", []),
        ("v = [r['text'] for r in model(x)]", []),
        ("for r in model(x):\n    print(r.text)", []),
        # ... and read as a tensor, or not read as a record, it is one.
        ("v = [r[n] for r in model(x)]", [("RNK202", "model(x)")]),
        ("v = [r[0, 1] for r in model(x)]", [("RNK202", "model(x)")]),
        ("v = [r[0:1] for r in model(x)]", [("RNK202", "model(x)")]),
        ("v = [n[0] for r in model(x)]", [("RNK202", "model(x)")]),
        ("v = [n[r] for r in model(x)]", [("RNK202", "model(x)")]),
        ("v = [n.text for r in model(x)]", [("RNK202", "model(x)")]),
        ("for r in model(x):\n    v = r.sum()", [("RNK202", "model(x)")]),
        ("v = [r for r in model(x)]", [("RNK202", "model(x)")]),
        # Host indices into Python data make no launch or sync per element.
        ("v = [n[i] for i in torch.arange(4)]", []),
        ("v = [n[0, i] for i in torch.arange(4)]", []),
        ("v = [i[0] for i in torch.arange(4)]", [("RNK202", "torch.arange(4)")]),
        ("v = [n[0] for i in torch.arange(4)]", [("RNK202", "torch.arange(4)")]),
        ("v = {i: n[i] for i in torch.arange(4)}", []),
        # ... and so do windows of it, sliced from a host index.
        ("v = [n[i : i + 8] for i in torch.randint(9, (4,))]", []),
        ("v = [n[i - 2 : i] for i in torch.randint(9, (4,))]", []),
        (
            "v = [n[j : j + 8] for i in torch.randint(9, (4,))]",
            [("RNK202", "torch.randint(9, (4,))")],
        ),
        ("v = [n[i * 2 :] for i in torch.randint(9, (4,))]", []),
        ("v = [n[::i] for i in torch.randint(1, 9, (4,))]", []),
        (
            "v = [n[:] for i in torch.randint(1, 9, (4,))]",
            [("RNK202", "torch.randint(1, 9, (4,))")],
        ),
        ("v = {i: n[0] for i in torch.arange(4)}", [("RNK202", "torch.arange(4)")]),
        ("v = [n[i] for b in n for i in torch.arange(4)]", []),
        ("v = [n[i] for b in n if b for i in torch.arange(4)]", []),
        # Elements of a host tensor are on the host: `.item()` waits for nothing.
        ("v = [i.item() for i in torch.arange(4)]", [("RNK202", "torch.arange(4)")]),
    ],
)
def test_a_loop_over_model_outputs_or_host_indices_is_reported_by_how_its_variable_is_read(
    loop: str, expected: list[tuple[str, str]]
) -> None:
    found = costs(loop)

    assert [(code, text) for _, code, text in found if code != "RNK203"] == expected


@pytest.mark.parametrize(
    ("loop", "expected"),
    [
        # a diffusion sampler's schedule, sliced or transformed, is walked on the host's terms
        ("for s in sigmas[1:]:\n    pass", []),
        ("for s in sigmas.abs():\n    pass", []),
        ("for s in sigmas[1:].abs()[::2]:\n    pass", []),
        ("v = [s for s in sigmas[1:]]", []),
        # the same tensor under another name is a tensor loop
        ("for s in values[1:]:\n    pass", [("RNK202", "values[1:]")]),
        ("for s in values.abs():\n    pass", [("RNK202", "values.abs()")]),
        ("for s in values[1:].abs()[::2]:\n    pass", [("RNK202", "values[1:].abs()[::2]")]),
    ],
)
def test_a_loop_over_a_schedule_is_not_reported_through_slices_and_methods(
    loop: str, expected: list[tuple[str, str]]
) -> None:
    found = costs("sigmas = x.abs()\nvalues = x.abs()\n" + loop)

    assert [(code, text) for line, code, text in found if line > 2] == expected


@pytest.mark.parametrize(
    ("value", "reported"),
    [
        ("0", False),
        ("-1.5", False),
        ('float("-inf")', False),
        ('int("3")', False),
        ("pad_id", False),
        ("-pad_id", False),
        ("self.fill_value", False),
        # not a number written out, or a tensor: the assignment reads the mask's size
        ("float(n)", True),
        ("float()", True),
        ('abs("1")', True),
        ("y", True),
        ("x.abs()", True),
    ],
)
def test_a_masked_assignment_of_a_scalar_is_not_a_sync_and_of_a_tensor_is(
    value: str, reported: bool
) -> None:
    found = costs(f"y = x.abs()\nx[x > 0] = {value}", params="x: torch.Tensor, n, self, pad_id")

    assert [(line, code) for line, code, _ in found] == ([(2, "RNK201")] if reported else [])


def _record_read_after(last: str) -> str:
    """A comprehension whose record read ``r[0]`` is searched after 397 names and ``last``."""
    names = " + ".join(["n"] * 397 + [last])
    return f"v = [(r[0], {names}) for r in model(x)]"


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        # `r[0]` is the 2000th node searched: found, a list of records.
        ("n @ n", []),
        # `[n]` puts it 2001st, past the budget: taken for a tensor.
        ("[n]", ["RNK202"]),
    ],
)
def test_the_record_reads_of_a_loop_variable_are_searched_within_a_budget_of_2000_nodes(
    last: str, expected: list[str]
) -> None:
    found = costs(_record_read_after(last))

    assert [code for _, code, _ in found] == expected


def test_a_sync_in_the_test_of_an_assert_with_a_message_is_reported() -> None:
    found = costs('assert x.sum().item() > 0, "negative sum"')

    assert [(code, text) for _, code, text in found] == [("RNK201", "x.sum().item()")]


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        # `x.item()` is the 500th node searched: found in the message, not reported.
        ("n @ n", []),
        # `[n]` puts it 501st, past the budget: reported.
        ("[n]", [("RNK201", "x.item()")]),
    ],
)
def test_an_assert_message_is_searched_for_a_sync_within_a_budget_of_500_nodes(
    last: str, expected: list[tuple[str, str]]
) -> None:
    message = ", ".join(["x.item()"] + ["n"] * 97 + [last])

    found = costs(f"assert n, ({message})")

    assert [(code, text) for _, code, text in found] == expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("torch.zeros(3)", ("device",)),
        ("torch.ones(3)", ("device",)),
        ("torch.empty(3)", ("device",)),
        ("torch.full((3,), 0.5)", ("device",)),
        ("torch.rand(3)", ("device",)),
        ("torch.randn(3)", ("device",)),
        ("torch.randint(5, (3,))", ("device",)),
        ("torch.arange(3)", ("device",)),
        ("torch.linspace(0, 1, 3)", ("device",)),
        ("torch.zeros(3, dtype=torch.float16)", ("device",)),
        ("torch.tensor([1, 2])", ("device",)),
        ("torch.tensor(n)", ("device",)),
        ("torch.tensor()", ("device",)),
        ("torch.tensor([1.0])", ("device", "dtype")),
        ("torch.as_tensor([0.5, 1])", ("device", "dtype")),
        ("torch.tensor([-1.0])", ("device", "dtype")),
        ("torch.tensor([[1, 2], [3, 4.0]])", ("device", "dtype")),
        ("torch.tensor(((1,), (2.5,)))", ("device", "dtype")),
        ("torch.tensor(data=[1.0])", ("device", "dtype")),
        ("torch.tensor([1.0], device='cuda')", ("dtype",)),
        ("torch.tensor([1.0], dtype=torch.float16)", ("device",)),
        ("torch.tensor([1.0], device='cuda', dtype=torch.float16)", None),
        ("torch.tensor([n.x])", ("device",)),
        ("torch.tensor([f(1.0)])", ("device",)),
        ("torch.full((3,), 0.5, device='cuda')", None),
        ("torch.zeros(3, device=x.device)", None),
        ("torch.zeros(3, **n)", None),
        ("torch.from_numpy(n)", None),
        ("torch.zeros_like(x)", None),
        ("torch.randperm(3)", None),
        ("np.zeros(3)", None),
        ("zeros(3)", None),
        ("n.tensor([1.0])", None),
        ("torch.cuda.zeros(3)", None),
    ],
)
def test_a_tensor_factory_without_device_or_with_float_data_without_dtype_is_reported(
    call: str, expected: tuple[str, ...] | None
) -> None:
    found = [(code, text) for _, code, text in costs(f"v = {call}")]

    assert found == ([] if expected is None else [("RNK203", call)])
    if expected is not None:
        (finding,) = lint(step_source(f"v = {call}"))
        problems = {
            "device": "no `device=`: it is allocated on the CPU, then copied to the device",
            "dtype": "float data without `dtype=`: it is float32 whatever the model uses",
        }
        assert finding.message == (
            f"`{call}` has {' and '.join(problems[p] for p in expected)}, every step: "
            f"{HOT_WHERE}; {FACTORY_ADVICE}"
        )


def test_a_factory_imported_from_torch_by_name_is_reported() -> None:
    found = costs("v = zeros(3)", header="from torch import zeros")

    assert found == [(1, "RNK203", "zeros(3)")]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # The float is the 200th node searched: found.
        ("[1.5" + ", 0" * 65 + ",]", ["RNK203"]),
        # The float is the 201st node searched: past the budget.
        ("[1.5" + ", 0" * 64 + ", -0]", []),
        ("[1.5" + ", 0" * 40 + "]", ["RNK203"]),
        ("[1.5" + ", 0" * 500 + "]", []),
    ],
)
def test_float_data_is_searched_for_a_float_literal_within_a_budget_of_200_nodes(
    data: str, expected: list[str]
) -> None:
    found = costs(f"v = torch.tensor({data}, device='cuda')")

    assert [code for _, code, _ in found] == expected


# -- builtins, module level, messages -------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        "from rich import print",
        "def float(value):\n    return value",
        "str = bytes",
    ],
)
def test_a_shadowed_builtin_is_not_a_conversion_or_formatting(header: str) -> None:
    body = "print(x)\nv = float(x)\nv = str(x)"

    assert costs(body, header=header) == [
        (line, "RNK201", text)
        for line, text in [(1, "print(x)"), (2, "float(x)"), (3, "str(x)")]
        if text.split("(")[0] not in header.split("(")[0].split()
    ]


def test_a_cost_text_longer_than_forty_characters_is_shortened() -> None:
    forty = "t" * 33  # `<name>.item()` is 40 characters
    body = f"v = {forty}.item()\nv = {forty}t.item()\nv = (x\n    .sum()\n    .item())"

    found = costs(body, params=f"{forty}, {forty}t, x")

    assert [text for _, _, text in found] == [
        f"{forty}.item()",
        f"{forty}t.it...",
        "(x .sum() .item())",
    ]


def test_module_level_code_in_a_step_loop_is_recorded_and_once_only_code_is_not() -> None:
    source = PRELUDE + textwrap.dedent(
        """
        loss = model(x).mean()
        print(loss.item())
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            print(loss.item())
        """
    )

    assert [(f.line, f.code) for f in lint(source)] == [(12, "RNK201")]


def test_code_of_a_function_called_from_a_hot_loop_at_module_level_is_recorded() -> None:
    source = PRELUDE + textwrap.dedent(
        """
        def log(loss):
            print(loss.item())


        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            log(loss)
        """
    )

    assert [(f.line, f.code) for f in lint(source)] == [(7, "RNK201")]


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (
            "x.item()",
            "`x.item()` copies a tensor to the host and waits for the device to finish all "
            f"queued work, every step: {HOT_WHERE}; {SYNC_ADVICE}",
        ),
        (
            "float(x)",
            "`float(x)` converts a tensor to a Python number: the host waits for the device, "
            f"every step: {HOT_WHERE}; {SYNC_ADVICE}",
        ),
        (
            "print(x)",
            "`print(x)` formats a tensor's value on the host: the host waits for the device, "
            f"every step: {HOT_WHERE}; {SYNC_ADVICE}",
        ),
        (
            "for r in x:\n    pass",
            "the loop over `x` runs Python code once per tensor element, every step: "
            f"{HOT_WHERE}; {LOOP_ADVICE}",
        ),
    ],
)
def test_the_message_of_a_host_cost_names_its_code_and_why_it_is_hot(
    statement: str, message: str
) -> None:
    (finding,) = lint(step_source(statement))

    assert finding.message == message


def test_a_function_s_tensor_names_are_forgotten_after_it() -> None:
    source = PRELUDE + textwrap.dedent(
        """
        def helper(t: torch.Tensor):
            return t


        class Holder:
            w: torch.Tensor


        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            print(t, w)
        """
    )

    assert lint(source) == []


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        # reads of the host copy `.cpu()` made: only the copy costs
        ("v = x.cpu().numpy()", ["x.cpu()"]),
        ("v = x.cpu().item()", ["x.cpu()"]),
        ("v = x.cpu().data.numpy()", ["x.cpu()"]),
        ("v = x.cpu().T.tolist()", ["x.cpu()"]),
        ("v = x.cpu().mT.tolist()", ["x.cpu()"]),
        ("v = x.cpu()[0].item()", ["x.cpu()"]),
        ("v = x.cpu().to(torch.float32).item()", ["x.cpu()"]),
        ("v = x.cpu().float().item()", ["x.cpu()"]),
        ("v = x.to('cpu').item()", ["x.to('cpu')"]),
        # moved back to the device first, or not a view of the copy: a second cost
        ("v = x.cpu().cuda().item()", ["x.cpu().cuda().item()", "x.cpu()"]),
        ("v = x.cpu().to('cuda').item()", ["x.cpu().to('cuda').item()", "x.cpu()"]),
        ("v = x.cpu().t.item()", ["x.cpu().t.item()", "x.cpu()"]),
        ("v = x.cpu()(n).item()", ["x.cpu()(n).item()", "x.cpu()"]),
        ("v = x.data.item()", ["x.data.item()"]),
        # a copy with arguments is not recognised as one; its reads cost
        ("v = x.numpy()[0].item()", ["x.numpy()"]),
        ("v = x.numpy(force=True).item()", ["x.numpy(force=True).item()"]),
        # the chain back to the copy is followed 24 links deep
        ("v = x.cpu()" + ".data" * 22 + ".item()", ["x.cpu()"]),
    ],
)
def test_a_read_of_a_value_already_copied_to_the_host_costs_nothing_more(
    statement: str, expected: list[str]
) -> None:
    found = costs(statement, params="x: torch.Tensor, n, cpu_device")

    assert [text for _, code, text in found if code == "RNK201"] == expected


def test_a_read_further_than_24_links_from_a_host_copy_is_taken_for_a_device_read() -> None:
    found = costs("v = x.cpu()" + ".data" * 24 + ".item()", params="x: torch.Tensor, n")

    texts = [text for _, code, text in found if code == "RNK201"]
    assert len(texts) == 2
    assert texts[0].startswith("x.cpu().data.data")  # the read (its text shortened)
    assert texts[1] == "x.cpu()"
