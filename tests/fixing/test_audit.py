"""Fixes never hide a bug: every fix, applied alone and re-checked with every rule
selected, changes the code the way its finding (and every finding about the same
call) asked, keeps the rest of what a safe fix's file reports, and leaves no name
unbound. On the fixtures, on the defects reported against earlier fixes, and on
programs generated from a grammar of distributed idioms (ranklint.fixing.audit)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranklint import Config, lint_source
from ranklint.findings import Applicability, Edit, Finding, Fix, Severity
from ranklint.fixing.apply import fix_text
from ranklint.fixing.audit import _audit_blind_spots, _audit_names, _audit_one, audit_fixes
from ranklint.source import decode_source
from tests.conftest import FIXTURES, FUZZ_TIMEOUT

ALL = Config(select=("ALL",))

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fix_on_a_fixture_passes_the_audit(path: Path) -> None:
    violations = audit_fixes(decode_source(path.read_bytes()), str(path), ALL)

    assert [v.describe() for v in violations] == []


# -- the defects reported against earlier fixes ---------------------------------
# Each: (source, path, code, what is offered: "safe", "unsafe" or None, fixed text
# with unsafe fixes, or None when nothing changes).

DEFECTS = {
    "rnk103-subgroup-with-group-rank-test": (
        """
        import torch.distributed as dist


        def share(objs, tp_group):
            if dist.get_rank(tp_group) == 0:
                objs.append(1)
            dist.broadcast_object_list(objs, group=tp_group)
        """,
        "m.py",
        "RNK103",
        "unsafe",
        "dist.broadcast_object_list(objs, group=tp_group, group_src=0)",
    ),
    "rnk103-group-named-without-an-axis": (
        """
        import torch.distributed as dist


        def share(objs, pg):
            dist.scatter_object_list(objs, objs, group=pg)
        """,
        "m.py",
        "RNK103",
        "unsafe",
        "dist.scatter_object_list(objs, objs, group=pg, group_src=0)",
    ),
    "rnk103-default-group": (
        """
        import torch.distributed as dist


        def share(objs, out):
            dist.broadcast_object_list(objs)
            dist.gather_object(objs, out)
        """,
        "m.py",
        "RNK103",
        "safe",
        "dist.gather_object(objs, out, dst=0)",
    ),
    "rnk108-rooted-collective-keeps-its-global-root": (
        """
        import torch.distributed as dist
        from torch.distributed import ProcessGroup


        def share(t, pg: ProcessGroup):
            dist.broadcast(t, src=0)
        """,
        "m.py",
        "RNK108",
        None,
        None,
    ),
    "rnk301-name-bound-in-another-scope": (
        """
        from torch.distributed import *


        class Stage3:
            def step(self):
                import math

                return math.sqrt(get_world_size())


        SCALE = math.pi
        """,
        "m.py",
        "RNK301",
        None,
        None,
    ),
    "rnk301-name-bound-under-a-module-condition": (
        """
        import os
        from torch.distributed import *

        if os.environ.get("FAST"):
            all_reduce = None

        ALL = (all_reduce, get_rank())
        """,
        "m.py",
        "RNK301",
        None,
        None,
    ),
    "rnk301-name-read-only-in-annotations": (
        """
        from __future__ import annotations

        from helpers import *


        def run(engine: Engine) -> None:
            return launch(engine)
        """,
        "m.py",
        "RNK301",
        None,
        None,
    ),
    "rnk301-re-export-shim": (
        """
        import warnings

        from new.location import *  # noqa: F401,F403

        warnings.warn(f"moved: use new.location ({Engine.__name__})", DeprecationWarning)
        """,
        "m.py",
        "RNK301",
        None,
        None,
    ),
    "rnk301-implicit-class-cell": (
        """
        from helpers import *


        class Model(Base):
            def forward(self, x):
                return super().forward(x), __class__
        """,
        "m.py",
        "RNK301",
        "unsafe",
        "from helpers import Base\n",
    ),
    "rnk601-tolerances-in-args": (
        """
        import torch


        def test_close(args):
            assert torch.allclose(*args)
        """,
        "tests/test_x.py",
        None,
        None,
        None,
    ),
}


@pytest.mark.parametrize(
    ("source", "path", "code", "offered", "fixed"),
    [pytest.param(*case, id=name) for name, case in DEFECTS.items()],
)
def test_fix_reported_as_hiding_a_bug_is_now_right_or_not_offered(
    source: str, path: str, code: str | None, offered: str | None, fixed: str | None
) -> None:
    source = textwrap.dedent(source).lstrip("\n")
    findings = lint_source(source, path, ALL).findings

    assert audit_fixes(source, path, ALL) == []
    if code is None:
        assert findings == []
        return
    of_code = [f for f in findings if f.code == code]
    assert of_code
    kinds = {f.fix.applicability.value if f.fix is not None else None for f in of_code}
    assert kinds == {offered}
    after, _ = fix_text(source, findings, lambda t: lint_source(t, path, ALL).findings, unsafe=True)
    if fixed is None:
        assert [f for f in findings if f.fix is not None and f.code == code] == []
    else:
        assert fixed in after


# -- the audit itself: what it reports ------------------------------------------


def _finding(
    code: str, line: int, col: int, end_col: int, message: str, fix: Fix | None
) -> Finding:
    return Finding(
        code, "name", Severity.WARNING, message, "m.py", line, col, line, end_col, (), fix
    )


SAFE_ROOT = Fix(Applicability.SAFE, "root", (Edit(1, 30, 1, 30, ", src=0"),))
UNSAFE = Fix(Applicability.UNSAFE, "some change", SAFE_ROOT.edits)
BEFORE = "dist.broadcast_object_list(o, group=g)\n"
AFTER = "dist.broadcast_object_list(o, group=g, src=0)\n"


def test_audit_reports_a_finding_silenced_without_the_change_its_message_asks_for() -> None:
    fixed = _finding(
        "RNK103", 1, 1, 39, "pass `group_src=0` for the group's first member", SAFE_ROOT
    )

    (violation,) = _audit_one(fixed, [fixed], [], BEFORE, AFTER)

    assert violation.silenced is fixed
    assert "without making any change it asks for" in violation.why


@pytest.mark.parametrize(
    "message",
    [
        "pass `src=0`",
        "pass `src=`",
        "pass `op=ReduceOp.SUM`",  # written with a module prefix by the fix below
        "remove `group=g` from the call",
    ],
)
def test_audit_accepts_a_finding_silenced_by_the_change_its_message_asks_for(message: str) -> None:
    after = AFTER.replace("src=0", "src=0, op=dist.ReduceOp.SUM")
    if message.startswith("remove"):
        after = "dist.broadcast_object_list(o)\n"
    fixed = _finding("RNK103", 1, 1, 39, message, SAFE_ROOT)

    assert _audit_one(fixed, [fixed], [], BEFORE, after) == []


def test_audit_reports_a_safe_fix_that_changes_another_calls_findings() -> None:
    fixed = _finding("RNK103", 1, 1, 39, "pass `src=0`", SAFE_ROOT)
    elsewhere = _finding("RNK109", 3, 1, 10, "use `group_src=0`", None)

    (violation,) = _audit_one(fixed, [fixed], [elsewhere], BEFORE, AFTER)

    assert violation.silenced is None
    assert "nothing before, RNK109 x1 after" in violation.why


def test_audit_keeps_a_finding_that_is_still_reported_and_ignores_other_calls() -> None:
    fixed = _finding("RNK103", 1, 1, 39, "pass `src=0`", SAFE_ROOT)
    same_call = _finding("RNK102", 1, 1, 39, "a guard", None)
    other_call = _finding("RNK109", 3, 1, 10, "use `group_src=0`", None)
    unsafe = Fix(Applicability.UNSAFE, "root", SAFE_ROOT.edits)
    fixed_unsafe = _finding("RNK103", 1, 1, 39, "pass `src=0`", unsafe)

    assert _audit_one(fixed, [fixed, same_call], [same_call], BEFORE, AFTER) == []
    # An unsafe fix may change other calls' findings (it changes behaviour).
    assert _audit_one(fixed_unsafe, [fixed_unsafe, other_call], [], BEFORE, AFTER) == []


def test_audit_of_names_reports_each_way_a_wildcard_fix_breaks_a_name() -> None:
    fix = Fix(Applicability.UNSAFE, "names", (Edit(1, 1, 1, 1, ""),))
    fixed = _finding("RNK301", 1, 1, 17, "wildcard", fix)
    before = "from m import *\nif True:\n    x = 1\nprint(x, y, z)\ndef f(a: A): pass\n"
    after = (
        "from m import A, __class__, z\nif True:\n    x = 1\nprint(x, y, z)\ndef f(a: A): pass\n"
    )

    whys = sorted(v.why for v in _audit_names(fixed, before, after))

    assert whys == [
        "imports `A`, which the module reads only in annotations",
        "imports `__class__`, an implicit name no module exports",
        "leaves `x` bound only under a condition the wildcard covered",
        "leaves `y` unbound where it is read",
    ]


@pytest.mark.parametrize(
    ("line", "blind"),
    [
        ("torch.allclose(*args)", True),
        ("f(a, **kwargs)", True),
        ("f(a, b * c)", False),
        ("from m import *  # noqa: F401,F403", True),
        ("from m import *  # noqa: E501", False),
    ],
)
def test_audit_reports_fixes_of_what_a_rule_cannot_see(line: str, blind: bool) -> None:
    fixed = _finding("RNK601", 1, 1, len(line), "x", SAFE_ROOT)

    assert bool(_audit_blind_spots(fixed, line + "\n")) is blind


# -- generated programs ---------------------------------------------------------

ROOTED = ("broadcast_object_list", "gather_object", "scatter_object_list", "scatter", "gather")
ROOTS = ("", ", src=0", ", group_src=0", ", src=rank", ", src=i")
GROUPS = ("", ", group=pg", ", group=tp_group", ", group=None", ", group=dist.group.WORLD")
GUARDS = (
    "",
    "if dist.get_rank() == 0:",
    "if dist.get_rank(tp_group) == 0:",
    "if rank in ranks:",
    "for i in range(dist.get_world_size(tp_group)):",
)


@st.composite
def collective_lines(draw: st.DrawFn) -> list[str]:
    """One collective call (under a guard or not), as indented lines of a function."""
    kind = draw(st.sampled_from(("rooted", "reduce", "star", "barrier")))
    if kind == "rooted":
        call = f"dist.{draw(st.sampled_from(ROOTED))}(objs, out"
        call += draw(st.sampled_from(ROOTS)) + draw(st.sampled_from(GROUPS)) + ")"
    elif kind == "reduce":
        call = "dist.all_reduce(t" + draw(st.sampled_from(("", ", op=dist.ReduceOp.MAX")))
        call += draw(st.sampled_from(GROUPS)) + ")"
    elif kind == "star":
        call = draw(st.sampled_from(("dist.broadcast(t, *args)", "dist.all_reduce(t, **kwargs)")))
    else:
        call = "dist.barrier(" + draw(st.sampled_from(("", "group=pg"))) + ")"
    guard = draw(st.sampled_from(GUARDS))
    return [f"    {guard}", f"        {call}"] if guard else [f"    {call}"]


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, str]:
    """A module of distributed idioms with findings that have fixes, and its path."""
    lines = ["import torch", "import torch.distributed as dist"]
    lines.append("from torch.distributed import ProcessGroup")
    wildcard = draw(
        st.sampled_from(("", "from torch.distributed import *", "from helpers import *"))
    )
    if wildcard:
        lines.append(wildcard + draw(st.sampled_from(("", "  # noqa: F403"))))
    for index in range(draw(st.integers(1, 3))):
        params = draw(st.sampled_from(("t, objs, out", "t, objs, out, pg: ProcessGroup")))
        params += draw(st.sampled_from(("", ", tp_group", ", *args, **kwargs")))
        lines += ["", "", f"def step_{index}({params}, rank=0, ranks=()):"]
        if draw(st.booleans()):
            lines.append("    import math")
        for _ in range(draw(st.integers(1, 3))):
            lines += draw(collective_lines())
        if wildcard and draw(st.booleans()):
            lines.append("    return get_rank() + get_world_size()")
    if wildcard and draw(st.booleans()):
        lines += ["", draw(st.sampled_from(("SCALE = math.pi", "if rank:\n    get_rank = None")))]
    if draw(st.booleans()):
        lines += ["", "", "def test_close(a, b, args):"]
        lines.append(
            "    assert " + draw(st.sampled_from(("torch.allclose(a, b)", "torch.allclose(*args)")))
        )
    path = draw(st.sampled_from(("train.py", "tests/test_train.py")))
    return "\n".join(lines) + "\n", path


@pytest.mark.timeout(FUZZ_TIMEOUT)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_every_fix_on_a_generated_program_passes_the_audit(program: tuple[str, str]) -> None:
    source, path = program

    violations = audit_fixes(source, path, ALL)

    assert [v.describe() for v in violations] == []


# -- the audit's own paths, with findings made by hand ---------------------------


def _linting(monkeypatch: pytest.MonkeyPatch, by_text: dict[str, list[Finding]]) -> None:
    """The audit lints each text to the findings given for it."""
    import ranklint.fixing.audit as fix_audit

    class Result:
        def __init__(self, findings: list[Finding]) -> None:
            self.findings = findings

    monkeypatch.setattr(fix_audit, "lint_source", lambda text, path, config: Result(by_text[text]))


def test_audit_goes_on_past_a_fix_that_does_not_apply_and_collects_every_violation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "a = f(x)\nb = g(y)\n"
    stale = Fix(Applicability.SAFE, "stale", (Edit(9, 1, 9, 1, "z"),))  # no line 9
    first = Fix(Applicability.UNSAFE, "first", (Edit(1, 8, 1, 8, ", k=1"),))
    second = Fix(Applicability.UNSAFE, "second", (Edit(2, 8, 2, 8, ", k=1"),))
    before = [
        _finding("RNK899", 1, 1, 3, "no fix", None),
        _finding("RNK900", 1, 5, 9, "nothing asked", stale),
        _finding("RNK901", 1, 5, 9, "pass `op=1`", first),
        _finding("RNK902", 2, 5, 9, "pass `op=1`", second),
    ]
    _linting(
        monkeypatch,
        {
            text: before,
            "a = f(x, k=1)\nb = g(y)\n": [before[0], before[1], before[3]],
            "a = f(x)\nb = g(y, k=1)\n": [before[0], before[1], before[2]],
        },
    )

    violations = audit_fixes(text, "m.py", ALL)

    assert [(v.fixed.code, v.silenced.code if v.silenced else None) for v in violations] == [
        ("RNK901", "RNK901"),
        ("RNK902", "RNK902"),
    ]
    assert violations[0].describe() == (
        "m.py:1:5: the fix of RNK901 (first) silences RNK901 at line 1 (pass `op=1`) "
        "without making any change it asks for"
    )


def test_audit_counts_two_findings_of_one_code_on_one_line_apart() -> None:
    fixed = _finding("RNK103", 1, 1, 39, "pass `group_src=0`", SAFE_ROOT)
    twin = _finding("RNK103", 1, 5, 20, "pass `group_src=0`", None)

    unsafe = Fix(Applicability.UNSAFE, "root", SAFE_ROOT.edits)
    fixed_unsafe = _finding("RNK103", 1, 1, 39, "pass `group_src=0`", unsafe)

    violations = _audit_one(fixed, [fixed, twin], [twin], BEFORE, AFTER)

    assert [v.silenced for v in violations if v.silenced is not None] == [twin]
    assert _audit_one(fixed_unsafe, [fixed_unsafe, twin], [twin, twin], BEFORE, AFTER) == []


def test_audit_of_a_safe_fix_names_it_and_counts_every_code_it_changed() -> None:
    fixed = _finding("RNK103", 1, 1, 39, "pass `src=0`", SAFE_ROOT)
    after = [
        _finding("RNK110", 3, 1, 10, "x", None),
        _finding("RNK109", 4, 1, 10, "x", None),
        _finding("RNK109", 5, 1, 10, "x", None),
    ]

    (violation,) = _audit_one(fixed, [fixed], after, BEFORE, AFTER)

    assert violation.fixed is fixed
    assert violation.why.endswith("nothing before, RNK109 x2, RNK110 x1 after")


@pytest.mark.parametrize("length", [80, 81])
def test_audit_describes_a_violation_with_a_short_message(length: int) -> None:
    from ranklint.fixing.audit import FixViolation

    silenced = _finding("RNK102", 1, 1, 5, "q" * length, UNSAFE)
    fixed = _finding("RNK108", 1, 1, 5, "pass `group=pg`", None)

    described = _audit_one(silenced, [silenced], [], "f(t)\n", "f(t, y=1)\n")[0].describe()
    text = FixViolation(fixed, None, "why").describe()

    assert described.count("q") == (77 if length > 80 else length)
    assert ("q..." in described) is (length > 80)
    assert text == "m.py:1:1: the fix of RNK108 () why"


def test_audit_asks_for_a_span_only_on_the_findings_own_lines() -> None:
    finding = _finding("RNK106", 1, 1, 5, "pass `op=ReduceOp.SUM`", UNSAFE)
    before = "f(t)\nop=ReduceOp.SUM\n"

    assert len(_audit_one(finding, [finding], [], before, "f(t, x=1)\nop=ReduceOp.SUM\n")) == 1


def test_audit_follows_a_span_pushed_down_by_the_lines_a_fix_adds() -> None:
    before = "f(\n    t,\n)\n"
    after = "f(\n    t,\n    u,\n    op=dist.ReduceOp.SUM,\n)\n"
    finding = Finding(
        "RNK106", "n", Severity.WARNING, "pass `op=ReduceOp.SUM`", "m.py", 1, 1, 3, 2, (), UNSAFE
    )

    assert _audit_one(finding, [finding], [], before, after) == []


@pytest.mark.parametrize(
    ("other", "same"),
    [
        ((1, 39, 1, 45), True),  # starts where the fixed one ends
        ((1, 40, 1, 45), False),  # starts after it
        ((1, 1, 1, 50), True),  # holds its start, starting at the same place
        ((1, 5, 1, 45), True),  # starts inside it, ends after it
        ((2, 1, 2, 5), False),  # on another line
    ],
)
def test_audit_tells_findings_about_the_same_call_by_their_spans(
    other: tuple[int, int, int, int], same: bool
) -> None:
    from ranklint.fixing.audit import _same_call

    fixed = _finding("RNK103", 1, 1, 39, "m", None)
    line, col, end_line, end_col = other
    candidate = Finding("RNK1", "n", Severity.WARNING, "m", "m.py", line, col, end_line, end_col)
    holder = Finding("RNK1", "n", Severity.WARNING, "m", "m.py", 1, 1, 1, 60)

    assert _same_call(candidate, fixed) is same
    assert _same_call(fixed, holder)


def test_audit_reads_only_the_findings_lines_shifted_by_the_lines_a_fix_adds() -> None:
    before = "f(\n    t,\n)\n\n\nop = dist.ReduceOp.SUM\n"
    added = "f(\n    t,\n    op=dist.ReduceOp.SUM,\n)\n\n\nop = dist.ReduceOp.SUM\n"
    nothing = "f(\n    t,\n    x=1,\n)\n\n\nop=dist.ReduceOp.SUM\nop=dist.ReduceOp.SUM\n"
    fix = Fix(Applicability.UNSAFE, "op", (Edit(2, 7, 2, 7, "\n    op=dist.ReduceOp.SUM,"),))
    finding = Finding(
        "RNK106", "n", Severity.WARNING, "pass `op=ReduceOp.SUM`", "m.py", 1, 1, 3, 2, (), fix
    )

    assert _audit_one(finding, [finding], [], before, added) == []
    assert len(_audit_one(finding, [finding], [], before, nothing)) == 1


def test_audit_of_a_removal_needs_the_named_text_removed() -> None:
    fixed = _finding("RNK002", 1, 1, 39, "remove `group=g` from the call", SAFE_ROOT)

    (violation,) = _audit_one(fixed, [fixed], [], BEFORE, AFTER)

    assert violation.silenced is fixed


def test_audit_of_names_keeps_to_what_the_fix_changed_and_names_the_fixed_finding() -> None:
    fix = Fix(Applicability.UNSAFE, "names", (Edit(1, 1, 1, 1, ""),))
    fixed = _finding("RNK301", 1, 1, 17, "wildcard", fix)
    before = "from m import *\nc = 0\nif c:\n    x = 1\nprint(x, y)\ndef f(a: T): pass\n"
    # `x` is now bound on every path; `T` comes in under another name.
    after = (
        "from m import y, Thing as T\nc = 0\nx = 0\nif c:\n    x = 1\nprint(x, y)\n"
        "def f(a: T): pass\n"
    )

    violations = _audit_names(fixed, before, after)

    assert [(v.fixed, v.why) for v in violations] == [
        (fixed, "imports `T`, which the module reads only in annotations")
    ]
    assert _audit_names(fixed, "x = 1\n", "x = 2\n") == []  # no wildcard before


def test_audit_names_why_it_flags_a_fix_it_cannot_see_through() -> None:
    fixed = _finding("RNK601", 1, 1, 20, "x", SAFE_ROOT)

    (star,) = _audit_blind_spots(fixed, "torch.allclose(*args)\n")
    (shim,) = _audit_blind_spots(fixed, "from m import *  # noqa: F403\n")

    assert (
        star.why == "edits a call that passes `*args` or `**kwargs`, whose contents it cannot see"
    )
    assert shim.why == "edits an import marked deliberate for pyflakes (a re-export)"
    assert star.fixed is fixed
    assert shim.fixed is fixed


def test_audit_of_a_file_reports_a_wildcard_fix_that_leaves_a_name_unbound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "from m import *\nprint(a, b)\n"
    fix = Fix(Applicability.UNSAFE, "names", (Edit(1, 15, 1, 16, "a"),))
    plain = _finding("RNK303", 2, 1, 12, "use a logger", None)
    wildcard = _finding("RNK301", 1, 1, 16, "wildcard", fix)
    _linting(monkeypatch, {text: [plain, wildcard], "from m import a\nprint(a, b)\n": [plain]})

    violations = audit_fixes(text, "m.py", ALL)

    assert [(v.fixed, v.why) for v in violations if v.silenced is None] == [
        (wildcard, "leaves `b` unbound where it is read")
    ]
