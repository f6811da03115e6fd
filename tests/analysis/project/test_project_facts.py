"""Whole-project collective facts: call resolution, rank predicates, conditions, paths.

Each case writes a small project into ``tmp_path``, runs RNK102 and RNK105 over
it and compares every finding: code, file, line, exact message (paths made
relative to the project) and the call-chain trace.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from tests.conftest import codes_by_line

# Each case runs in well under a second: a mutant that loops forever fails fast.
pytestmark = pytest.mark.timeout(30)

Found = tuple[str, str, int, str, list[tuple[str, int]]]


def _one_side(subject: str, condition: str, *, false: bool = False) -> str:
    negation = " is false" if false else ""
    return (
        f"{subject} is reached only when `{condition}`{negation}; ranks that skip it hang in "
        "their next collective; call it on every rank, outside the rank-dependent branch"
    )


def _mismatch(condition: str, subject: str, other: str, *, false: bool = False) -> str:
    negation = " is false" if false else ""
    return (
        f"ranks where `{condition}`{negation} call {subject} here, the others call {other}: the "
        "collectives pair up wrongly or hang; issue the same collectives in the same order on "
        "every rank"
    )


def _skipped(subject: str, exit_text: str, condition: str, *, false: bool = False) -> str:
    negation = " is false" if false else ""
    return (
        f"{subject} is skipped by ranks that {exit_text} when `{condition}`{negation}; the ranks "
        "that reach it hang in it; move the collective before the early exit or make every "
        "rank reach it"
    )


def _findings(root: Path, files: dict[str, str]) -> list[Found]:
    """RNK102/RNK105 findings of the project ``files``, paths relative to ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    result = lint_paths(
        [root], Config(select=("RNK102", "RNK105"), root=root, confidence="low"), jobs=1
    )
    assert result.errors == []
    prefix = str(root) + "/"
    return [
        (
            f.code,
            Path(f.path).relative_to(root).as_posix(),
            f.line,
            f.message.replace(prefix, ""),
            [(Path(step.path).relative_to(root).as_posix(), step.line) for step in f.trace],
        )
        for f in result.findings
    ]


_DIST = "import torch.distributed as dist\n\n\n"


def _predicate_chain(length: int) -> dict[str, str]:
    """``f0()`` -> ``f1()`` -> ... -> ``f<length-1>()``, the last one returning the rank test."""
    source = _DIST
    for index in range(length - 1):
        source += f"def f{index}():\n    return f{index + 1}()\n\n\n"
    source += f"def f{length - 1}():\n    return dist.get_rank() == 0\n\n\n"
    source += "def run():\n    if f0():\n        dist.barrier()\n"
    return {"m.py": source}


def _reexport_chain(hops: int) -> dict[str, str]:
    """``sync`` defined in ``pkg/m0.py`` and re-exported by m1, m2, ... m<hops>."""
    files = {"pkg/__init__.py": "", "pkg/m0.py": _DIST + "def sync():\n    dist.barrier()\n"}
    for index in range(1, hops + 1):
        files[f"pkg/m{index}.py"] = f"from .m{index - 1} import sync\n"
    files["use.py"] = (
        f"from pkg.m{hops} import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
    )
    return files


def _class_chain(levels: int) -> dict[str, str]:
    """``T`` derives from C<levels> ... C1, C0; only C0 defines ``sync``."""
    source = _DIST + "class C0:\n    def sync(self):\n        dist.barrier()\n\n\n"
    for index in range(1, levels + 1):
        source += f"class C{index}(C{index - 1}):\n    pass\n\n\n"
    source += (
        f"class T(C{levels}):\n    def f(self, rank):\n        if rank == 0:\n"
        "            self.sync()\n"
    )
    return {"m.py": source}


def _call_chain(length: int) -> dict[str, str]:
    """``h0()`` calls ``h1()`` ... ``h<length-1>()``, which issues the barrier."""
    source = _DIST
    for index in range(length - 1):
        source += f"def h{index}():\n    h{index + 1}()\n\n\n"
    source += f"def h{length - 1}():\n    dist.barrier()\n\n\n"
    source += "def run(rank):\n    if rank == 0:\n        h0()\n"
    return {"m.py": source}


def _elif_chain(length: int) -> dict[str, str]:
    """``if x == -1`` and ``length`` ``elif x == i`` arms, then ``elif rank == 0: barrier()``."""
    source = _DIST + "def f(rank, x):\n    if x == -1:\n        pass\n"
    for index in range(length):
        source += f"    elif x == {index}:\n        dist.all_reduce(x)\n"
    source += "    elif rank == 0:\n        dist.barrier()\n"
    return {"m.py": source}


def _class_reexport_chain(hops: int) -> dict[str, str]:
    """A base class defined in ``pkg/m0.py`` and re-exported by m1 ... m<hops>."""
    files = {
        "pkg/__init__.py": "",
        "pkg/m0.py": _DIST + "class Base:\n    def sync(self):\n        dist.barrier()\n",
    }
    for index in range(1, hops + 1):
        files[f"pkg/m{index}.py"] = f"from .m{index - 1} import Base\n"
    files["use.py"] = (
        f"from pkg.m{hops} import Base\n\n\nclass T(Base):\n    def f(self, rank):\n"
        "        if rank == 0:\n            self.sync()\n"
    )
    return files


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def is_head():\n"
                    "    return dist.get_rank() == 0\n"
                    "\n"
                    "\n"
                    "def run():\n"
                    "    if is_head():\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 10, _one_side("`barrier`", "is_head()"), []),
            ],
            id="direct",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def use_sync(cfg):\n"
                    "    return cfg.sync\n"
                    "\n"
                    "\n"
                    "def run(cfg):\n"
                    "    if use_sync(cfg):\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="not-rank",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def _which():\n"
                    "    return dist.get_rank()\n"
                    "\n"
                    "\n"
                    "def is_head():\n"
                    "    return _cfg() and _which() == 0\n"
                    "\n"
                    "\n"
                    "def run():\n"
                    "    if is_head():\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 14, _one_side("`barrier`", "is_head()"), []),
            ],
            id="via-skip-unresolved",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def _aaa():\n"
                    "    return 1\n"
                    "\n"
                    "\n"
                    "def _which():\n"
                    "    return dist.get_rank()\n"
                    "\n"
                    "\n"
                    "def is_head():\n"
                    "    return _aaa() and _which() == 0\n"
                    "\n"
                    "\n"
                    "def run():\n"
                    "    if is_head():\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 18, _one_side("`barrier`", "is_head()"), []),
            ],
            id="via-skip-nonrank",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "RANKS = [0, 1]\n"
                    "\n"
                    "\n"
                    "def in_group():\n"
                    "    return dist.get_rank() in RANKS\n"
                    "\n"
                    "\n"
                    "def run(t, dp_group):\n"
                    "    if in_group():\n"
                    "        dist.all_reduce(t, group=dp_group)\n"
                ),
            },
            [],
            id="membership-direct",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "RANKS = [0, 1]\n"
                    "\n"
                    "\n"
                    "def _member():\n"
                    "    return dist.get_rank() in RANKS\n"
                    "\n"
                    "\n"
                    "def in_group():\n"
                    "    return _member()\n"
                    "\n"
                    "\n"
                    "def run(t, dp_group):\n"
                    "    if in_group():\n"
                    "        dist.all_reduce(t, group=dp_group)\n"
                ),
            },
            [],
            id="membership-via",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def is_tp_head():\n"
                    "    return dist.get_rank() == 0\n"
                    "\n"
                    "\n"
                    "def run(t, dp_group, tp_group):\n"
                    "    if is_tp_head():\n"
                    "        dist.all_reduce(t, group=dp_group)\n"
                    "    if is_tp_head():\n"
                    "        dist.all_reduce(t, group=tp_group)\n"
                ),
            },
            [
                ("RNK102", "m.py", 12, _one_side("`all_reduce` on `tp_group`", "is_tp_head()"), []),
            ],
            id="named-tp-dp",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def is_head():\n"
                    "    return tp_rank == 0\n"
                    "\n"
                    "\n"
                    "def run(t, dp_group):\n"
                    "    if is_head():\n"
                    "        dist.all_reduce(t, group=dp_group)\n"
                ),
            },
            [],
            id="axis-from-return",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def a():\n"
                    "    return b()\n"
                    "\n"
                    "\n"
                    "def b():\n"
                    "    return a()\n"
                    "\n"
                    "\n"
                    "def run():\n"
                    "    if a():\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="cycle",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def is_head():\n"
                    "    return dist.get_rank() == 0\n"
                    "\n"
                    "\n"
                    "def one():\n"
                    "    if is_head():\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def two():\n"
                    "    if is_head():\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 10, _one_side("`barrier`", "is_head()"), []),
                ("RNK102", "m.py", 15, _one_side("`barrier`", "is_head()"), []),
            ],
            id="twice",
        ),
    ],
)
def test_rank_predicates_returned_by_project_functions_decide_which_branches_diverge(
    tmp_path: Path, files: dict[str, str], expected: list[Found]
) -> None:
    """Functions that return a rank test (directly, through helpers, with membership or axes)."""
    found = _findings(tmp_path, files)

    assert found == expected


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Base:\n"
                    "    def sync(self):\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "class Child(Base):\n"
                    "    def step(self, rank):\n"
                    "        if rank == 0:\n"
                    "            self.sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    12,
                    _one_side(
                        ("`sync()` (which reaches `barrier`: sync() -> dist.barrier() at m.py:6)"),
                        "rank == 0",
                    ),
                    [("m.py", 12), ("m.py", 6)],
                ),
            ],
            id="local-base",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Child(Base):\n"
                    "    def step(self, rank):\n"
                    "        if rank == 0:\n"
                    "            self.sync()\n"
                ),
            },
            [],
            id="local-base-missing",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "from .base import Base\n",
                "pkg/base.py": _DIST
                + ("class Base:\n    def sync(self):\n        dist.barrier()\n"),
                "pkg/child.py": (
                    "from pkg import Base\n"
                    "\n"
                    "\n"
                    "class Child(Base):\n"
                    "    def step(self, rank):\n"
                    "        if rank == 0:\n"
                    "            self.sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "pkg/child.py",
                    7,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/base.py:6)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/child.py", 7), ("pkg/base.py", 6)],
                ),
            ],
            id="reexported-base",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "from . import impl as b\n",
                "pkg/impl.py": _DIST
                + ("class Base:\n    def sync(self):\n        dist.barrier()\n"),
                "pkg/child.py": (
                    "import pkg\n"
                    "\n"
                    "\n"
                    "class Child(pkg.b.Base):\n"
                    "    def step(self, rank):\n"
                    "        if rank == 0:\n"
                    "            self.sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "pkg/child.py",
                    7,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/impl.py:6)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/child.py", 7), ("pkg/impl.py", 6)],
                ),
            ],
            id="reexported-module-base",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "from . import impl as b\n",
                "pkg/impl.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/use.py": (
                    "import pkg\n\n\ndef step(rank):\n    if rank == 0:\n        pkg.b.sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "pkg/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/impl.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/use.py", 6), ("pkg/impl.py", 5)],
                ),
            ],
            id="reexported-module-func",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Outer:\n"
                    "    class Inner:\n"
                    "        def sync(self):\n"
                    "            dist.barrier()\n"
                    "\n"
                    "        def step(self, rank):\n"
                    "            if rank == 0:\n"
                    "                self.sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    11,
                    _one_side(
                        ("`sync()` (which reaches `barrier`: sync() -> dist.barrier() at m.py:7)"),
                        "rank == 0",
                    ),
                    [("m.py", 11), ("m.py", 7)],
                ),
            ],
            id="nested-method-self",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def outer(rank):\n"
                    "    def sync():\n"
                    "        dist.barrier()\n"
                    "\n"
                    "    def inner():\n"
                    "        if rank == 0:\n"
                    "            sync()\n"
                    "\n"
                    "    inner()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    10,
                    _one_side(
                        ("`sync()` (which reaches `barrier`: sync() -> dist.barrier() at m.py:6)"),
                        "rank == 0",
                    ),
                    [("m.py", 10), ("m.py", 6)],
                ),
            ],
            id="local-nested-scope",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + ("def sync():\n    dist.barrier()\n\n\nif dist.get_rank() == 0:\n    sync()\n"),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    9,
                    _one_side(
                        ("`sync()` (which reaches `barrier`: sync() -> dist.barrier() at m.py:5)"),
                        "dist.get_rank() == 0",
                    ),
                    [("m.py", 9), ("m.py", 5)],
                ),
            ],
            id="module-level-call",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Saver:\n"
                    "    @staticmethod\n"
                    "    def save():\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        Saver.save()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    12,
                    _one_side(
                        ("`save()` (which reaches `barrier`: save() -> dist.barrier() at m.py:7)"),
                        "rank == 0",
                    ),
                    [("m.py", 12), ("m.py", 7)],
                ),
            ],
            id="class-static-local",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Saver:\n"
                    "    def __init__(self):\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        Saver()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    11,
                    _one_side(
                        (
                            "`Saver()` (which reaches `barrier`: Saver() -> "
                            "dist.barrier() at m.py:6)"
                        ),
                        "rank == 0",
                    ),
                    [("m.py", 11), ("m.py", 6)],
                ),
            ],
            id="class-ctor-local",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Base:\n"
                    "    def __init__(self):\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "class Saver(Base):\n"
                    "    pass\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        Saver()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    15,
                    _one_side(
                        (
                            "`Saver()` (which reaches `barrier`: Saver() -> "
                            "dist.barrier() at m.py:6)"
                        ),
                        "rank == 0",
                    ),
                    [("m.py", 15), ("m.py", 6)],
                ),
            ],
            id="inherited-ctor",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "from .a import sync\n",
                "pkg/a.py": "from .b import sync\n",
                "pkg/b.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/use.py": (
                    "from pkg import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "pkg/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/b.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/use.py", 6), ("pkg/b.py", 5)],
                ),
            ],
            id="reexport-func-chain",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "from .a import Saver\n",
                "pkg/a.py": _DIST
                + ("class Saver:\n    @staticmethod\n    def save():\n        dist.barrier()\n"),
                "pkg/use.py": (
                    "import pkg\n\n\ndef f(rank):\n    if rank == 0:\n        pkg.Saver.save()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "pkg/use.py",
                    6,
                    _one_side(
                        (
                            "`save()` (which reaches `barrier`: save() -> dist.barrier() "
                            "at pkg/a.py:7)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/use.py", 6), ("pkg/a.py", 7)],
                ),
            ],
            id="reexport-class-method",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/sub/__init__.py": "",
                "pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/sub/use.py": (
                    "from ..ops import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "pkg/sub/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/sub/use.py", 6), ("pkg/ops.py", 5)],
                ),
            ],
            id="relative-two-up",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/sub/__init__.py": "",
                "pkg/sub/deep/__init__.py": "",
                "pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/sub/deep/use.py": (
                    "from ...ops import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "pkg/sub/deep/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/sub/deep/use.py", 6), ("pkg/ops.py", 5)],
                ),
            ],
            id="relative-three-up",
        ),
        pytest.param(
            {
                "pkg/__init__.py": (
                    "from .ops import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
                "pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
            },
            [
                (
                    "RNK102",
                    "pkg/__init__.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/__init__.py", 6), ("pkg/ops.py", 5)],
                ),
            ],
            id="relative-from-init",
        ),
        pytest.param(
            {
                "pkg/__init__.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/use.py": (
                    "from . import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "pkg/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/__init__.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/use.py", 6), ("pkg/__init__.py", 5)],
                ),
            ],
            id="relative-dot-only",
        ),
        pytest.param(
            {
                "pkg/__init__.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/sub/__init__.py": "",
                "pkg/sub/use.py": (
                    "from .. import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "pkg/sub/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/__init__.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/sub/use.py", 6), ("pkg/__init__.py", 5)],
                ),
            ],
            id="relative-dotdot-only",
        ),
        pytest.param(
            {
                "src/pkg/__init__.py": "",
                "src/pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "other/use.py": (
                    "from pkg.ops import sync\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "other/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at src/pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("other/use.py", 6), ("src/pkg/ops.py", 5)],
                ),
            ],
            id="longer-package-path",
        ),
        pytest.param(
            {
                "helpers.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "use.py": (
                    "from helpers import sync\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at helpers.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("use.py", 6), ("helpers.py", 5)],
                ),
            ],
            id="top-level-module",
        ),
        pytest.param(
            {
                "src/ns/pkg/__init__.py": "",
                "src/ns/pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "src/pkg2/__init__.py": "",
                "src/pkg2/ops.py": ("def sync():\n    pass\n"),
                "use.py": (
                    "from ns.pkg.ops import sync\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at src/ns/pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("use.py", 6), ("src/ns/pkg/ops.py", 5)],
                ),
            ],
            id="namespace-longer-import",
        ),
        pytest.param(
            {
                "lib/__init__.py": "",
                "lib/pkg/__init__.py": "",
                "lib/pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "use.py": (
                    "from pkg.ops import sync\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at lib/pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("use.py", 6), ("lib/pkg/ops.py", 5)],
                ),
            ],
            id="shorter-import",
        ),
        pytest.param(
            {
                "ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/__init__.py": "",
                "pkg/ops.py": ("def sync():\n    pass\n"),
                "use.py": (
                    "from ops import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("use.py", 6), ("ops.py", 5)],
                ),
            ],
            id="ambiguous-last-name",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/ops.py": ("def sync():\n    pass\n"),
                "pkg/sub/__init__.py": "",
                "pkg/sub/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/sub/use.py": (
                    "from .ops import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
                "other/__init__.py": "",
                "other/ops.py": ("def sync():\n    pass\n"),
            },
            [
                (
                    "RNK102",
                    "pkg/sub/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/sub/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/sub/use.py", 6), ("pkg/sub/ops.py", 5)],
                ),
            ],
            id="relative-one-up-in-subpackage",
        ),
        pytest.param(
            {
                "pkg/__init__.py": (
                    "from .ops import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
                "pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "other/__init__.py": "",
                "other/ops.py": ("def sync():\n    pass\n"),
            },
            [
                (
                    "RNK102",
                    "pkg/__init__.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/__init__.py", 6), ("pkg/ops.py", 5)],
                ),
            ],
            id="relative-from-init-decoy",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/use.py": (
                    "from .ops import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
                "other/__init__.py": "",
                "other/ops.py": ("def sync():\n    pass\n"),
            },
            [
                (
                    "RNK102",
                    "pkg/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/use.py", 6), ("pkg/ops.py", 5)],
                ),
            ],
            id="relative-top-decoy",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/sub/__init__.py": "",
                "pkg/sub/use.py": (
                    "from ..ops import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
                "other/__init__.py": "",
                "other/ops.py": ("def sync():\n    pass\n"),
                "pkg/sub/ops.py": ("def sync():\n    pass\n"),
            },
            [
                (
                    "RNK102",
                    "pkg/sub/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/sub/use.py", 6), ("pkg/ops.py", 5)],
                ),
            ],
            id="relative-two-up-decoy",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/ops.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/sub/__init__.py": "",
                "pkg/sub/deep/__init__.py": "",
                "pkg/sub/deep/use.py": (
                    "from ...ops import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
                "pkg/sub/ops.py": ("def sync():\n    pass\n"),
                "other/__init__.py": "",
                "other/ops.py": ("def sync():\n    pass\n"),
            },
            [
                (
                    "RNK102",
                    "pkg/sub/deep/use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/ops.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("pkg/sub/deep/use.py", 6), ("pkg/ops.py", 5)],
                ),
            ],
            id="relative-three-up-decoy",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "from . import impl as b\n",
                "pkg/impl.py": _DIST
                + ("class Saver:\n    @staticmethod\n    def save():\n        dist.barrier()\n"),
                "use.py": (
                    "import pkg\n\n\ndef f(rank):\n    if rank == 0:\n        pkg.b.Saver.save()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "use.py",
                    6,
                    _one_side(
                        (
                            "`save()` (which reaches `barrier`: save() -> dist.barrier() "
                            "at pkg/impl.py:7)"
                        ),
                        "rank == 0",
                    ),
                    [("use.py", 6), ("pkg/impl.py", 7)],
                ),
            ],
            id="reexported-module-nested-class",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/a.py": "from .b import sync\n",
                "pkg/b.py": "from .a import sync\n",
                "use.py": (
                    "from pkg.a import sync\n\n\ndef f(rank):\n    if rank == 0:\n        sync()\n"
                ),
            },
            [],
            id="reexport-cycle",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/a.py": "from .b import Base\n",
                "pkg/b.py": "from .a import Base\n",
                "use.py": (
                    "from pkg.a import Base\n"
                    "\n"
                    "\n"
                    "class C(Base):\n"
                    "    def f(self, rank):\n"
                    "        if rank == 0:\n"
                    "            self.sync()\n"
                ),
            },
            [],
            id="reexport-class-cycle",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class A(B):\n"
                    "    pass\n"
                    "\n"
                    "\n"
                    "class B(A):\n"
                    "    pass\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        A.sync()\n"
                ),
            },
            [],
            id="inheritance-cycle",
        ),
    ],
)
def test_calls_resolve_across_files_classes_reexports_and_relative_imports(
    tmp_path: Path, files: dict[str, str], expected: list[Found]
) -> None:
    """Call targets resolve through imports, packages, classes, bases and re-exports."""
    found = _findings(tmp_path, files)

    assert found == expected


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {
                "m.py": _DIST
                + ("def f(rank, t):\n    if rank == 0:\n        dist.all_reduce(t, group=None)\n"),
            },
            [
                ("RNK102", "m.py", 6, _one_side("`all_reduce`", "rank == 0"), []),
            ],
            id="group-none",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, t):\n"
                    "    if rank == 0:\n"
                    "        dist.all_reduce(t, group=dist.group.WORLD)\n"
                ),
            },
            [
                ("RNK102", "m.py", 6, _one_side("`all_reduce`", "rank == 0"), []),
            ],
            id="group-world",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class T:\n"
                    "    def f(self, rank, t):\n"
                    "        if rank == 0:\n"
                    "            dist.all_reduce(t, group=self.world_group)\n"
                ),
            },
            [
                ("RNK102", "m.py", 7, _one_side("`all_reduce`", "rank == 0"), []),
            ],
            id="group-world-attr",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, t, dp_group):\n"
                    "    if rank == 0:\n"
                    "        dist.all_reduce(t, group=dp_group)\n"
                ),
            },
            [
                ("RNK102", "m.py", 6, _one_side("`all_reduce` on `dp_group`", "rank == 0"), []),
            ],
            id="group-dp-global",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, t, pg):\n    if rank == 0:\n        dist.all_reduce(t, group=pg)\n"
                ),
            },
            [],
            id="group-unknown",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(tp_rank, t, dp_group, tp_group):\n"
                    "    if tp_rank == 0:\n"
                    "        dist.all_reduce(t, group=dp_group)\n"
                    "        dist.all_reduce(t, group=tp_group)\n"
                ),
            },
            [
                ("RNK102", "m.py", 7, _one_side("`all_reduce` on `tp_group`", "tp_rank == 0"), []),
            ],
            id="group-dp-tp-cond",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(t, ranks, group):\n"
                    "    if dist.get_rank() in ranks:\n"
                    "        dist.all_reduce(t, group=group)\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 7, _one_side("`barrier`", "dist.get_rank() in ranks"), []),
            ],
            id="group-membership",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        g = dist.new_group([0, 1])\n"
                    "    else:\n"
                    "        g = dist.new_group([2, 3])\n"
                    "    return g\n"
                ),
            },
            [
                (
                    "RNK105",
                    "m.py",
                    6,
                    _mismatch("rank == 0", "`new_group([0, 1])`", "`new_group([2, 3])`"),
                    [],
                ),
            ],
            id="new-group-mismatch",
        ),
        pytest.param(
            {
                "m.py": _DIST + ("def f(rank, dt):\n    if rank == 0:\n        dt.full_tensor()\n"),
            },
            [("RNK102", "m.py", 6, _one_side("`full_tensor`", "rank == 0"), [])],
            id="full-tensor-one-rank",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, dt):\n    if rank != 0:\n        dt.full_tensor()\n"
                    "    if rank > 0:\n        dt.redistribute(placements)\n"
                ),
            },
            [],
            id="full-tensor-many-ranks",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
                    "\n"
                    "\n"
                    "def f(model, rank, kind):\n"
                    "    with FSDP.state_dict_type(model, kind):\n"
                    "        if rank == 0:\n"
                    "            sd = model.state_dict()\n"
                    "    return sd\n"
                ),
            },
            [
                ("RNK102", "m.py", 10, _one_side("`state_dict`", "rank == 0"), []),
            ],
            id="state-dict-ctx",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "import torch\n"
                    "\n"
                    "\n"
                    "def f(model, rank):\n"
                    "    with torch.no_grad():\n"
                    "        if rank == 0:\n"
                    "            sd = model.state_dict()\n"
                    "    return sd\n"
                ),
            },
            [],
            id="state-dict-other-ctx",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, t):\n"
                    "    if rank == 0:\n"
                    "        dist.all_reduce(t)\n"
                    "    else:\n"
                    "        dist.broadcast(t, 0)\n"
                    "        return\n"
                    "    dist.barrier()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    8,
                    _mismatch("rank == 0", "`broadcast`", "`all_reduce`", false=True),
                    [],
                ),
            ],
            id="mismatch-else-exits",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def helper():\n"
                    "    pass\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        x = 1\n"
                    "    else:\n"
                    "        dist.barrier()\n"
                    "        return\n"
                    "    helper()\n"
                ),
            },
            [
                ("RNK102", "m.py", 12, _one_side("`barrier`", "rank == 0", false=True), []),
            ],
            id="one-side-else-exits",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        x = 1\n"
                    "    else:\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 8, _one_side("`barrier`", "rank == 0", false=True), []),
            ],
            id="one-side-else",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        x = 1\n"
                    "    else:\n"
                    "        return\n"
                    "    dist.barrier()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    9,
                    _skipped("`barrier`", "return early", "rank == 0", false=True),
                    [],
                ),
            ],
            id="skipped-else-returns",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, t):\n"
                    "    if rank == 0:\n"
                    "        return\n"
                    "    else:\n"
                    "        dist.barrier()\n"
                    "    dist.all_reduce(t)\n"
                ),
            },
            [
                ("RNK102", "m.py", 8, _one_side("`barrier`", "rank == 0", false=True), []),
            ],
            id="in-arm-then-rest",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def sync():\n"
                    "    dist.barrier()\n"
                    "\n"
                    "\n"
                    "def f(rank, t):\n"
                    "    if rank == 0:\n"
                    "        return\n"
                    "    else:\n"
                    "        sync()\n"
                    "    dist.all_reduce(t)\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    12,
                    _one_side(
                        ("`sync()` (which reaches `barrier`: sync() -> dist.barrier() at m.py:5)"),
                        "rank == 0",
                        false=True,
                    ),
                    [("m.py", 12), ("m.py", 5)],
                ),
            ],
            id="in-arm-call-then-rest",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, t):\n"
                    "    if rank == 0:\n"
                    "        dist.all_reduce(t)\n"
                    "        dist.all_reduce(t)\n"
                    "        dist.barrier()\n"
                    "        dist.broadcast(t, 0)\n"
                    "    else:\n"
                    "        dist.all_reduce(t)\n"
                    "        dist.all_reduce(t)\n"
                    "        dist.all_gather(t, t)\n"
                    "        dist.reduce(t, 0)\n"
                ),
            },
            [
                ("RNK102", "m.py", 8, _mismatch("rank == 0", "`barrier`", "`all_gather`"), []),
            ],
            id="mismatch-third",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, t):\n"
                    "    if rank == 0:\n"
                    "        dist.all_reduce(t)\n"
                    "        dist.barrier()\n"
                    "        dist.broadcast(t, 0)\n"
                    "    else:\n"
                    "        dist.all_reduce(t)\n"
                    "        dist.all_gather(t, t)\n"
                    "        dist.reduce(t, 0)\n"
                ),
            },
            [
                ("RNK102", "m.py", 7, _mismatch("rank == 0", "`barrier`", "`all_gather`"), []),
            ],
            id="mismatch-second",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        raise ValueError()\n"
                    "    dist.barrier()\n"
                ),
            },
            [],
            id="raise-not-exit",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, items):\n"
                    "    if rank == 0:\n"
                    "        for i in items:\n"
                    "            return\n"
                    "    dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 8, _skipped("`barrier`", "return early", "rank == 0"), []),
            ],
            id="exit-in-loop",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, items):\n"
                    "    for i in items:\n"
                    "        if rank == 0:\n"
                    "            for j in items:\n"
                    "                break\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="break-in-loop",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, items):\n"
                    "    for i in items:\n"
                    "        if rank == 0:\n"
                    "            continue\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    8,
                    _skipped("`barrier`", "skip to the next iteration", "rank == 0"),
                    [],
                ),
            ],
            id="continue",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "WORLD = object()\n"
                    "\n"
                    "\n"
                    "def sync(t, group=None):\n"
                    "    if group is not WORLD:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def f(rank, t):\n"
                    "    if rank == 0:\n"
                    "        sync(t)\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    14,
                    _one_side(
                        ("`sync()` (which reaches `barrier`: sync() -> dist.barrier() at m.py:9)"),
                        "rank == 0",
                    ),
                    [("m.py", 14), ("m.py", 9)],
                ),
            ],
            id="is-not-a-name-other-than-none",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def make():\n"
                    "    return dist.new_group([0, 1])\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        make()\n"
                ),
            },
            [
                (
                    "RNK105",
                    "m.py",
                    10,
                    _one_side(
                        (
                            "`make()` (which reaches `new_group([0, 1])`: make() -> "
                            "dist.new_group() at m.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("m.py", 10), ("m.py", 5)],
                ),
            ],
            id="group-creation-through-a-helper",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class C:\n"
                    "    def group(self):\n"
                    "        if self.pg is None and self.enabled:\n"
                    "            self.pg = dist.new_group([0, 1])\n"
                    "        return self.pg\n"
                    "\n"
                    "    def step(self, rank):\n"
                    "        if rank == 0:\n"
                    "            self.group()\n"
                ),
            },
            [],
            id="lazy-creation-left",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class C:\n"
                    "    def group(self):\n"
                    "        if self.enabled and self.pg is None:\n"
                    "            self.pg = dist.new_group([0, 1])\n"
                    "        return self.pg\n"
                    "\n"
                    "    def step(self, rank):\n"
                    "        if rank == 0:\n"
                    "            self.group()\n"
                ),
            },
            [],
            id="lazy-creation-right",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class C:\n"
                    "    def group(self):\n"
                    "        if self.enabled:\n"
                    "            self.pg = dist.new_group([0, 1])\n"
                    "        return self.pg\n"
                    "\n"
                    "    def step(self, rank):\n"
                    "        if rank == 0:\n"
                    "            self.group()\n"
                ),
            },
            [
                (
                    "RNK105",
                    "m.py",
                    12,
                    _one_side(
                        (
                            "`group()` (which reaches `new_group([0, 1])`: group() -> "
                            "dist.new_group() at m.py:7)"
                        ),
                        "rank == 0",
                    ),
                    [("m.py", 12), ("m.py", 7)],
                ),
            ],
            id="creation-not-lazy",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "SYNC = True\n"
                    "\n"
                    "\n"
                    "def f(rank, t):\n"
                    "    if SYNC and rank == 0:\n"
                    "        dist.barrier()\n"
                    "    else:\n"
                    "        if rank == 0:\n"
                    "            pass\n"
                    "        else:\n"
                    "            dist.all_reduce(t)\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    9,
                    _mismatch("SYNC and rank == 0", "`barrier`", "`all_reduce`"),
                    [],
                ),
                ("RNK102", "m.py", 14, _one_side("`all_reduce`", "rank == 0", false=True), []),
            ],
            id="rank-operand-is-no-assumption",
        ),
        pytest.param(
            {
                "m.py": _DIST + ("@rank_zero_only()\ndef f(t):\n    dist.all_reduce(t)\n"),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    6,
                    (
                        "`all_reduce` runs only on the rank that `@rank_zero_only` "
                        "selects; the other ranks never call it and hang in their "
                        "next collective"
                    ),
                    [],
                ),
            ],
            id="called-rank-only-decorator",
        ),
    ],
)
def test_groups_exits_and_mismatches_give_the_expected_divergence(
    tmp_path: Path, files: dict[str, str], expected: list[Found]
) -> None:
    """Group arguments, early exits and the first differing collective of two paths."""
    found = _findings(tmp_path, files)

    assert found == expected


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def is_head():\n"
                    "    return dist.get_rank() == 0\n"
                    "\n"
                    "\n"
                    "def run(t, dp_group):\n"
                    "    if is_head():\n"
                    "        dist.all_reduce(t, group=dp_group)\n"
                ),
            },
            [
                ("RNK102", "m.py", 10, _one_side("`all_reduce` on `dp_group`", "is_head()"), []),
            ],
            id="membership-control",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "RANKS = [0, 1]\n"
                    "\n"
                    "\n"
                    "def _member():\n"
                    "    return dist.get_rank() in RANKS\n"
                    "\n"
                    "\n"
                    "def is_head():\n"
                    "    return dist.get_rank() == 0 and _member()\n"
                    "\n"
                    "\n"
                    "def run(t, dp_group):\n"
                    "    if is_head():\n"
                    "        dist.all_reduce(t, group=dp_group)\n"
                ),
            },
            [
                ("RNK102", "m.py", 17, _one_side("`all_reduce` on `dp_group`", "is_head()"), []),
            ],
            id="membership-and-direct",
        ),
        pytest.param(
            {
                "m.py": _DIST + ("def f(tp_rank):\n    if tp_rank == 0:\n        dist.barrier()\n"),
            },
            [
                ("RNK102", "m.py", 6, _one_side("`barrier`", "tp_rank == 0"), []),
            ],
            id="default-group-tp-cond",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank != 0:\n"
                    "        dist.barrier()\n"
                    "    if rank == 0:\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="balanced-ne",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank > 0:\n"
                    "        dist.barrier()\n"
                    "    if rank == 0:\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="balanced-gt",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank >= 1:\n"
                    "        dist.barrier()\n"
                    "    if rank == 0:\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="balanced-ge1",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if not rank == 0:\n"
                    "        dist.barrier()\n"
                    "    if rank == 0:\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="balanced-not",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank >= 1:\n"
                    "        dist.barrier()\n"
                    "    if rank > 0:\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 6, _one_side("`barrier`", "rank >= 1"), []),
                ("RNK102", "m.py", 8, _one_side("`barrier`", "rank > 0"), []),
            ],
            id="unbalanced-same",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank == 1:\n"
                    "        dist.barrier()\n"
                    "    if rank != 0:\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 6, _one_side("`barrier`", "rank == 1"), []),
                ("RNK102", "m.py", 8, _one_side("`barrier`", "rank != 0"), []),
            ],
            id="unbalanced-eq1",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if rank >= 2:\n"
                    "        dist.barrier()\n"
                    "    if rank == 0:\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 6, _one_side("`barrier`", "rank >= 2"), []),
                ("RNK102", "m.py", 8, _one_side("`barrier`", "rank == 0"), []),
            ],
            id="unbalanced-ge2",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if not rank % 2:\n"
                    "        dist.barrier()\n"
                    "    if rank % 3:\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 6, _one_side("`barrier`", "not rank % 2"), []),
                ("RNK102", "m.py", 8, _one_side("`barrier`", "rank % 3"), []),
            ],
            id="unbalanced-text",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    if not rank % 2:\n"
                    "        dist.barrier()\n"
                    "    if rank % 2:\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="balanced-text",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "SYNC = True\n"
                    "\n"
                    "\n"
                    "def f(rank, t):\n"
                    "    if SYNC and rank == 0:\n"
                    "        dist.barrier()\n"
                    "    elif SYNC:\n"
                    "        dist.barrier()\n"
                    "    else:\n"
                    "        dist.all_reduce(t)\n"
                ),
            },
            [],
            id="assume-and",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "SYNC = True\n"
                    "\n"
                    "\n"
                    "def f(rank, t):\n"
                    "    if rank == 0 and SYNC:\n"
                    "        dist.barrier()\n"
                    "    elif SYNC:\n"
                    "        dist.barrier()\n"
                    "    else:\n"
                    "        dist.all_reduce(t)\n"
                ),
            },
            [],
            id="assume-and-rank-first",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "QUIET = False\n"
                    "\n"
                    "\n"
                    "def f(rank, t):\n"
                    "    if not QUIET and rank == 0:\n"
                    "        dist.barrier()\n"
                    "    elif not QUIET:\n"
                    "        dist.barrier()\n"
                    "    else:\n"
                    "        dist.all_reduce(t)\n"
                ),
            },
            [],
            id="assume-not",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "QUIET = False\n"
                    "\n"
                    "\n"
                    "def f(rank, t):\n"
                    "    if QUIET or rank == 0:\n"
                    "        dist.barrier()\n"
                    "    elif QUIET:\n"
                    "        dist.all_reduce(t)\n"
                    "    else:\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="assume-or",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class T:\n"
                    "    def f(self, rank, t):\n"
                    "        if self.sync and rank == 0:\n"
                    "            dist.barrier()\n"
                    "        elif self.sync:\n"
                    "            dist.barrier()\n"
                    "        else:\n"
                    "            dist.all_reduce(t)\n"
                ),
            },
            [],
            id="assume-attr",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class T:\n"
                    "    def f(self, rank, t):\n"
                    "        if self.pg is None and rank == 0:\n"
                    "            dist.barrier()\n"
                    "        elif self.pg is None:\n"
                    "            dist.barrier()\n"
                    "        else:\n"
                    "            dist.all_reduce(t)\n"
                ),
            },
            [],
            id="assume-is-none",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, a):\n"
                    "    if rank == 0 and a.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb:\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    6,
                    _one_side(
                        "`barrier`", "rank == 0 and a.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                    ),
                    [],
                ),
            ],
            id="cond-60",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, a):\n"
                    "    if rank == 0 and a.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb:\n"
                    "        dist.barrier()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    6,
                    _one_side(
                        "`barrier`", "rank == 0 and a.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb..."
                    ),
                    [],
                ),
            ],
            id="cond-61",
        ),
        pytest.param(
            {
                "m.py": _DIST + ("def f(rank):\n    rank != 0 or dist.barrier()\n"),
            },
            [
                ("RNK102", "m.py", 5, _one_side("`barrier`", "rank != 0", false=True), []),
            ],
            id="or-short-circuit",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def log(msg, quiet=False):\n"
                    "    if not quiet:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    '        log("x", quiet=True)\n'
                ),
            },
            [],
            id="param-quiet",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def sync(t, group=None):\n"
                    "    if group is None:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def f(rank, t, g):\n"
                    "    if rank == 0:\n"
                    "        sync(t, False)\n"
                    "    if rank == 0:\n"
                    "        sync(t)\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    13,
                    _one_side(
                        ("`sync()` (which reaches `barrier`: sync() -> dist.barrier() at m.py:6)"),
                        "rank == 0",
                    ),
                    [("m.py", 13), ("m.py", 6)],
                ),
            ],
            id="param-none-default",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Logger:\n"
                    "    def log(self, msg, barrier=True):\n"
                    "        if barrier:\n"
                    "            dist.barrier()\n"
                    "\n"
                    "    def report(self, rank):\n"
                    "        if rank == 0:\n"
                    '            self.log("x", False)\n'
                ),
            },
            [],
            id="bind-method",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Logger:\n"
                    "    @classmethod\n"
                    "    def log(cls, msg, barrier=True):\n"
                    "        if barrier:\n"
                    "            dist.barrier()\n"
                    "\n"
                    "    @classmethod\n"
                    "    def report(cls, rank):\n"
                    "        if rank == 0:\n"
                    '            cls.log("x", False)\n'
                ),
            },
            [],
            id="bind-classmethod",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Logger:\n"
                    "    @staticmethod\n"
                    "    def log(msg, barrier=True):\n"
                    "        if barrier:\n"
                    "            dist.barrier()\n"
                    "\n"
                    "\n"
                    "def report(rank):\n"
                    "    if rank == 0:\n"
                    '        Logger.log("x", False)\n'
                ),
            },
            [],
            id="bind-staticmethod",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def log(self, barrier=True):\n"
                    "    if barrier:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def report(rank, obj):\n"
                    "    if rank == 0:\n"
                    "        log(obj, False)\n"
                ),
            },
            [],
            id="bind-self-named-function",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def log(msg, *rest, barrier=True):\n"
                    "    if barrier:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def report(rank):\n"
                    "    if rank == 0:\n"
                    '        log("x", "y", barrier=False)\n'
                ),
            },
            [],
            id="bind-varargs",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def log(msg, barrier=False):\n"
                    "    if barrier:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def report(rank, flag):\n"
                    "    if rank == 0:\n"
                    '        log("x", barrier=flag)\n'
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    11,
                    _one_side(
                        ("`log()` (which reaches `barrier`: log() -> dist.barrier() at m.py:6)"),
                        "rank == 0",
                    ),
                    [("m.py", 11), ("m.py", 6)],
                ),
            ],
            id="bind-unknown",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def log(msg, barrier=False):\n"
                    "    if barrier:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def report(rank):\n"
                    "    if rank == 0:\n"
                    '        log("x", barrier=True)\n'
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    11,
                    _one_side(
                        ("`log()` (which reaches `barrier`: log() -> dist.barrier() at m.py:6)"),
                        "rank == 0",
                    ),
                    [("m.py", 11), ("m.py", 6)],
                ),
            ],
            id="bind-true",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def log(msg, barrier=False):\n"
                    "    if barrier:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def quiet(rank):\n"
                    "    if rank == 0:\n"
                    '        log("x", barrier=False)\n'
                    "\n"
                    "\n"
                    "def loud(rank):\n"
                    "    if rank == 0:\n"
                    '        log("x", barrier=True)\n'
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    16,
                    _one_side(
                        ("`log()` (which reaches `barrier`: log() -> dist.barrier() at m.py:6)"),
                        "rank == 0",
                    ),
                    [("m.py", 16), ("m.py", 6)],
                ),
            ],
            id="bind-quiet-loud",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def log(msg, group=None, barrier=True):\n"
                    "    if barrier:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def report(rank):\n"
                    "    if rank == 0:\n"
                    '        log("x")\n'
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    11,
                    _one_side(
                        ("`log()` (which reaches `barrier`: log() -> dist.barrier() at m.py:6)"),
                        "rank == 0",
                    ),
                    [("m.py", 11), ("m.py", 6)],
                ),
            ],
            id="bind-mixed-defaults",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def log(msg, barrier=False):\n"
                    "    if barrier:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def report(rank, args):\n"
                    "    if rank == 0:\n"
                    "        log(*args)\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    11,
                    _one_side(
                        ("`log()` (which reaches `barrier`: log() -> dist.barrier() at m.py:6)"),
                        "rank == 0",
                    ),
                    [("m.py", 11), ("m.py", 6)],
                ),
            ],
            id="bind-unpacking",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def sync(t, dp_group):\n"
                    "    dist.all_reduce(t, group=dp_group)\n"
                    "\n"
                    "\n"
                    "def f(rank, t, g):\n"
                    "    if rank == 0:\n"
                    "        sync(t, g)\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    10,
                    _one_side(
                        (
                            "`sync()` (which reaches `all_reduce` on `dp_group`: sync() "
                            "-> dist.all_reduce() at m.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("m.py", 10), ("m.py", 5)],
                ),
            ],
            id="chain-group",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank):\n"
                    "    for _ in range(rank):\n"
                    "        if rank == 0:\n"
                    "            dist.barrier()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    7,
                    (
                        "`barrier` runs in a loop whose trip count or order depends "
                        "on the rank (`range(rank)`); ranks that iterate fewer times, "
                        "or over other items, hang in it or pair it with another "
                        "rank's collective; make the iteration the same on every rank: "
                        "all-reduce the count first, or iterate a list every rank "
                        "agrees on (the sorted union of the ranks' keys)"
                    ),
                    [],
                ),
            ],
            id="dedup-loop-branch",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, flag, t):\n"
                    "    if rank == 0:\n"
                    "        dist.barrier()\n"
                    "        if flag:\n"
                    "            return\n"
                    "    dist.all_reduce(t)\n"
                ),
            },
            [
                ("RNK102", "m.py", 6, _mismatch("rank == 0", "`barrier`", "`all_reduce`"), []),
            ],
            id="nested-exit-mismatch",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class T:\n"
                    "    def __init__(self):\n"
                    "        self.leader = dist.get_rank() == 0\n"
                    "\n"
                    "    def step(self):\n"
                    "        if self.leader:\n"
                    "            dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 10, _one_side("`barrier`", "self.leader"), []),
            ],
            id="self-attr-taint",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(flag):\n    g = lambda: dist.barrier() if flag else None\n    return g\n"
                ),
            },
            [],
            id="lambda-ifexp",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def is_head():\n"
                    "    def inner():\n"
                    "        return dist.get_rank() == 0\n"
                    "\n"
                    "    return False\n"
                    "\n"
                    "\n"
                    "def f():\n"
                    "    if is_head():\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="nested-def-return",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Outer:\n"
                    "    class Inner:\n"
                    "        def __init__(self):\n"
                    "            dist.barrier()\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        Outer.Inner()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    12,
                    _one_side(
                        (
                            "`Inner()` (which reaches `barrier`: Inner() -> "
                            "dist.barrier() at m.py:7)"
                        ),
                        "rank == 0",
                    ),
                    [("m.py", 12), ("m.py", 7)],
                ),
            ],
            id="nested-class-ctor",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Base:\n"
                    "    @staticmethod\n"
                    "    def sync():\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "class Outer:\n"
                    "    class Child(Base):\n"
                    "        pass\n"
                    "\n"
                    "\n"
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        Outer.Child.sync()\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    17,
                    _one_side(
                        ("`sync()` (which reaches `barrier`: sync() -> dist.barrier() at m.py:7)"),
                        "rank == 0",
                    ),
                    [("m.py", 17), ("m.py", 7)],
                ),
            ],
            id="nested-class-inherited-static",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "for _ in range(2):\n"
                    "    pass\n"
                    "if dist.get_rank() == 0:\n"
                    "    dist.barrier()\n"
                    "else:\n"
                    "    dist.all_reduce(t)\n"
                ),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    7,
                    _mismatch("dist.get_rank() == 0", "`barrier`", "`all_reduce`"),
                    [],
                ),
            ],
            id="module-if-else-loop",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, t):\n"
                    "    try:\n"
                    "        t.foo()\n"
                    "    except RuntimeError:\n"
                    "        if rank == 0:\n"
                    "            dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 9, _one_side("`barrier`", "rank == 0"), []),
            ],
            id="except-handler",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def log(msg, level, barrier=True):\n"
                    "    if barrier:\n"
                    "        dist.barrier()\n"
                    "\n"
                    "\n"
                    "def report(rank):\n"
                    "    if rank == 0:\n"
                    '        log("x", 1, False)\n'
                ),
            },
            [],
            id="bind-third-positional",
        ),
        pytest.param(
            {
                "m.py": _DIST + ("@rank_zero_only\ndef f(t):\n    dist.all_reduce(t)\n"),
            },
            [
                (
                    "RNK102",
                    "m.py",
                    6,
                    (
                        "`all_reduce` runs only on the rank that `@rank_zero_only` "
                        "selects; the other ranks never call it and hang in their "
                        "next collective"
                    ),
                    [],
                ),
            ],
            id="rank-only",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "def f(rank, t):\n"
                    "    if rank == 0:\n"
                    "        dist.all_reduce(t)\n"
                    "        raise ValueError()\n"
                    "    dist.barrier()\n"
                ),
            },
            [
                ("RNK102", "m.py", 6, _one_side("`all_reduce`", "rank == 0"), []),
            ],
            id="raise-after-collective",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "class Logger:\n"
                    "    def log(self, msg, barrier=True, *rest):\n"
                    "        if barrier:\n"
                    "            dist.barrier()\n"
                    "\n"
                    "    def report(self, rank):\n"
                    "        if rank == 0:\n"
                    '            self.log("x", False, "y")\n'
                ),
            },
            [],
            id="method-extra-positional",
        ),
        pytest.param(
            {
                "m.py": _DIST
                + (
                    "SYNC = True\n"
                    "\n"
                    "\n"
                    "def f(rank, t):\n"
                    "    if SYNC and rank == 0:\n"
                    "        if SYNC:\n"
                    "            dist.barrier()\n"
                    "        else:\n"
                    "            dist.all_reduce(t)\n"
                    "    elif SYNC:\n"
                    "        dist.barrier()\n"
                ),
            },
            [],
            id="assume-in-first-arm",
        ),
    ],
)
def test_conditions_and_literal_arguments_decide_branches_and_balance(
    tmp_path: Path, files: dict[str, str], expected: list[Found]
) -> None:
    """Canonical conditions, assumptions of `and`/`or` tests and literal arguments."""
    found = _findings(tmp_path, files)

    assert found == expected


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            _predicate_chain(9),
            [
                ("RNK102", "m.py", 42, _one_side("`barrier`", "f0()"), []),
            ],
            id="predicate-chain-9",
        ),
        pytest.param(
            _predicate_chain(10),
            [],
            id="predicate-chain-10",
        ),
        pytest.param(
            _reexport_chain(6),
            [
                (
                    "RNK102",
                    "use.py",
                    6,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/m0.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("use.py", 6), ("pkg/m0.py", 5)],
                ),
            ],
            id="function-reexports-6",
        ),
        pytest.param(
            _reexport_chain(7),
            [],
            id="function-reexports-7",
        ),
        pytest.param(
            _class_reexport_chain(5),
            [
                (
                    "RNK102",
                    "use.py",
                    7,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/m0.py:6)"
                        ),
                        "rank == 0",
                    ),
                    [("use.py", 7), ("pkg/m0.py", 6)],
                ),
            ],
            id="class-reexports-5",
        ),
        pytest.param(
            _class_reexport_chain(6),
            [],
            id="class-reexports-6",
        ),
        pytest.param(
            _class_chain(5),
            [
                (
                    "RNK102",
                    "m.py",
                    32,
                    _one_side(
                        ("`sync()` (which reaches `barrier`: sync() -> dist.barrier() at m.py:6)"),
                        "rank == 0",
                    ),
                    [("m.py", 32), ("m.py", 6)],
                ),
            ],
            id="base-classes-5",
        ),
        pytest.param(
            _class_chain(6),
            [],
            id="base-classes-6",
        ),
        pytest.param(
            _call_chain(8),
            [
                (
                    "RNK102",
                    "m.py",
                    38,
                    _one_side(
                        (
                            "`h0()` (which reaches `barrier`: h0() -> h1() -> h2() -> "
                            "h3() -> h4() -> h5() -> h6() -> h7() -> dist.barrier() at "
                            "m.py:33)"
                        ),
                        "rank == 0",
                    ),
                    [
                        ("m.py", 38),
                        ("m.py", 5),
                        ("m.py", 9),
                        ("m.py", 13),
                        ("m.py", 17),
                        ("m.py", 21),
                        ("m.py", 25),
                        ("m.py", 29),
                        ("m.py", 33),
                    ],
                ),
            ],
            id="call-chain-8",
        ),
        pytest.param(
            _call_chain(9),
            [],
            id="call-chain-9",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/m0.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/m1.py": "from .m0 import sync\n",
                "pkg/m2.py": "from .m1 import sync\n",
                "pkg/m3.py": "from .m2 import sync\n",
                "pkg/m4.py": "from .m3 import sync\n",
                "pkg/m5.py": "from .m4 import sync\n",
                "use.py": (
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        sync()\n"
                    "\n"
                    "\n"
                    "from pkg.m5 import sync  # noqa: E402\n"
                ),
            },
            [
                (
                    "RNK102",
                    "use.py",
                    3,
                    _one_side(
                        (
                            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() "
                            "at pkg/m0.py:5)"
                        ),
                        "rank == 0",
                    ),
                    [("use.py", 3), ("pkg/m0.py", 5)],
                ),
            ],
            id="import-below-the-call-reexports-5",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/m0.py": _DIST + ("def sync():\n    dist.barrier()\n"),
                "pkg/m1.py": "from .m0 import sync\n",
                "pkg/m2.py": "from .m1 import sync\n",
                "pkg/m3.py": "from .m2 import sync\n",
                "pkg/m4.py": "from .m3 import sync\n",
                "pkg/m5.py": "from .m4 import sync\n",
                "pkg/m6.py": "from .m5 import sync\n",
                "use.py": (
                    "def f(rank):\n"
                    "    if rank == 0:\n"
                    "        sync()\n"
                    "\n"
                    "\n"
                    "from pkg.m6 import sync  # noqa: E402\n"
                ),
            },
            [],
            id="import-below-the-call-reexports-6",
        ),
    ],
)
def test_resolution_and_call_depth_bounds_follow_chains_up_to_the_bound_and_no_further(
    tmp_path: Path, files: dict[str, str], expected: list[Found]
) -> None:
    """Predicate, re-export, base-class and call chains: the longest followed, and one more."""
    found = _findings(tmp_path, files)

    assert found == expected


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            _elif_chain(46),
            [
                ("RNK102", "m.py", 100, _one_side("`barrier`", "rank == 0"), []),
            ],
            id="elif-46",
        ),
        pytest.param(
            _elif_chain(47),
            [],
            id="elif-47",
        ),
    ],
)
def test_branches_nested_deeper_than_the_bound_join_the_enclosing_block(
    tmp_path: Path, files: dict[str, str], expected: list[Found]
) -> None:
    """An `elif` chain: the rank branch at the deepest kept level, and one level deeper."""
    found = _findings(tmp_path, files)

    assert found == expected


@pytest.mark.parametrize(
    ("guard", "expected"),
    [
        pytest.param("rank == 0", [], id="after-a-rank-dependent-return"),
        pytest.param("t is None", [(5, "RNK104")], id="after-a-rank-invariant-return"),
    ],
)
def test_own_rank_as_root_is_reported_only_where_no_rank_dependent_exit_came_before(
    guard: str, expected: list[tuple[int, str]]
) -> None:
    # After `if rank == 0: return`, naming oneself as root is the sending side
    # of a protocol; after an exit every rank takes alike, it is a mistake.
    source = f"""
    import torch.distributed as dist
    def share(t, rank):
        if {guard}:
            return
        dist.broadcast(t, src=dist.get_rank())
    """

    found = codes_by_line(source, select=("RNK104",))

    assert found == expected


_MESH = "from torch.distributed.device_mesh import init_device_mesh\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {"a.py": _MESH + 'mesh = init_device_mesh("cuda", (2,), mesh_dim_names=("dp",))\n'},
            [],
            id="declared-name",
        ),
        pytest.param(
            {
                "a.py": _MESH + 'mesh = init_device_mesh("cuda", (2,), mesh_dim_names=("dp",))\n'
                'x = mesh["foo"]\n',
            },
            [("a.py", 3)],
            id="undeclared-name",
        ),
        pytest.param(
            {
                "a.py": _MESH + 'mesh = init_device_mesh("cuda", (2,), mesh_dim_names=("dp",))\n'
                'x = mesh["foo"]\n',
                "b.py": _MESH + "\n\ndef build(names):\n"
                '    return init_device_mesh("cuda", (2,), mesh_dim_names=names)\n',
            },
            [],
            id="undeclared-name-while-another-file-builds-a-mesh-from-computed-names",
        ),
    ],
)
def test_mesh_dimension_uses_are_checked_unless_some_file_builds_a_mesh_from_computed_names(
    tmp_path: Path, files: dict[str, str], expected: list[tuple[str, int]]
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")

    result = lint_paths([tmp_path], Config(select=("RNK507",), root=tmp_path), jobs=1)

    assert result.errors == []
    assert [(Path(f.path).name, f.line) for f in result.findings] == expected


def test_host_costs_in_one_statement_of_a_hot_function_are_each_reported_at_their_place(
    tmp_path: Path,
) -> None:
    source = (
        "import torch\n\n\n"
        "def step(a, b):  # ranklint: hot\n"
        "    x = a.item() + b.item()\n"
        "    y = torch.zeros(3)\n"
        "    return x, y\n"
    )
    (tmp_path / "h.py").write_text(source, encoding="utf-8")
    where = "every step: it is in `step`, which is marked `# ranklint: hot`; "
    copy = (
        "copies a tensor to the host and waits for the device to finish all queued work, "
        + where
        + "keep the value on the device (accumulate `x.detach()`) and read it on the host once "
        "per log interval (`if step % log_every == 0:`)"
    )

    result = lint_paths([tmp_path], Config(select=("RNK201", "RNK203"), root=tmp_path), jobs=1)

    assert result.errors == []
    assert [(f.code, f.line, f.col, f.message) for f in result.findings] == [
        ("RNK201", 5, 9, "`a.item()` " + copy),
        ("RNK201", 5, 20, "`b.item()` " + copy),
        (
            "RNK203",
            6,
            9,
            "`torch.zeros(3)` has no `device=`: it is allocated on the CPU, then copied to the "
            "device, "
            + where
            + "pass `device=` (for example `device=batch.device`) and `dtype=`, or create the "
            "tensor once outside the step",
        ),
    ]
