"""Decorators of the project judged by what their wrapper does (analysis/project/wrappers.py).

A home-made guard (`def main_only(fn): def wrapper(...): if dist.get_rank() == 0:
return fn(...)`) runs the decorated function on some ranks only, whatever it is
called; a look-alike named `rank_zero_only` whose wrapper logs and then calls
the function on every rank does not. A decorator the run cannot read keeps the
judgement of its name. Each case compares the (file, line, code, confidence) of
every RNK102 finding with what the case expects.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ranklint import Config, lint_paths

pytestmark = pytest.mark.timeout(30)

_HEADER = """\
import functools
import os

import torch.distributed as dist

"""


def _source(text: str) -> str:
    """A file's text: its indented definitions dedented, then the unindented rest
    (`_DECORATED`) as it is."""
    indented, _, rest = text.partition("\n@")
    return textwrap.dedent(indented).lstrip() + ("\n@" + rest if rest else "")


def _findings(root: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    """(file, line, confidence) of each RNK102 finding, at every confidence."""
    for name, text in files.items():
        (root / name).write_text(_HEADER + _source(text), encoding="utf-8")
    config = Config(select=("RNK001", "RNK102"), root=root, confidence="low")
    result = lint_paths([root], config, jobs=1)
    assert result.errors == []
    assert [f for f in result.findings if f.code == "RNK001"] == []
    return sorted(
        (Path(f.path).name, f.line, f.confidence.value)
        for f in result.findings
        if f.code == "RNK102"
    )


def _line(files: dict[str, str], name: str, text: str) -> int:
    """The line of ``text`` in file ``name`` as written (after the header)."""
    lines = (_HEADER + _source(files[name])).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


_DECORATED = """
@{applied}
def sync(t):
    dist.barrier()


def main(t):
    sync(t)
"""

_GUARDS = {
    "test-then-call": """
        def {name}(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                if dist.get_rank() == 0:
                    return fn(*args, **kwargs)
                return None
            return wrapper
    """,
    "exit-then-call": """
        def {name}(fn):
            def wrapper(*args, **kwargs):
                if int(os.environ["RANK"]) != 0:
                    return None
                return fn(*args, **kwargs)
            return wrapper
    """,
    "exit-in-else": """
        def {name}(fn):
            def wrapper(*args, **kwargs):
                if dist.get_rank() > 0:
                    pass
                else:
                    return None
                return fn(*args, **kwargs)
            return wrapper
    """,
    "nested-plain-test": """
        def {name}(fn):
            def wrapper(*args, **kwargs):
                if dist.get_rank() == 0:
                    if kwargs:
                        return fn(*args, **kwargs)
                return None
            return wrapper
    """,
    "exit-in-both-nested-arms": """
        def {name}(fn):
            def wrapper(*args, **kwargs):
                if dist.get_rank() != 0:
                    if kwargs:
                        return None
                    else:
                        return None
                return fn(*args, **kwargs)
            return wrapper
    """,
    "in-a-loop": """
        def {name}(fn):
            def wrapper(*args, **kwargs):
                for _ in range(1):
                    if dist.get_rank() == 0:
                        fn(*args, **kwargs)
            return wrapper
    """,
}


def _program(guard: str, name: str, applied: str) -> str:
    return textwrap.dedent(_GUARDS[guard]).format(name=name) + _DECORATED.format(applied=applied)


@pytest.mark.parametrize("guard", sorted(_GUARDS))
@pytest.mark.parametrize("name", ["main_only", "rank_zero_only"])
def test_home_made_rank_guard_reports_the_decorated_collective_as_high(
    tmp_path: Path, guard: str, name: str
) -> None:
    files = {"prog.py": _program(guard, name, name)}

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "high")]


def test_factory_guard_applied_with_arguments_reports_the_collective(tmp_path: Path) -> None:
    files = {
        "prog.py": """
            def only_on(which):
                def deco(fn):
                    def wrapper(*args, **kwargs):
                        if int(os.environ["RANK"]) == which:
                            return fn(*args, **kwargs)
                    return wrapper
                return deco
        """
        + _DECORATED.format(applied="only_on(0)")
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "high")]


def test_guard_imported_from_another_module_of_the_project_is_read(tmp_path: Path) -> None:
    files = {
        "guards.py": _GUARDS["exit-then-call"].format(name="leader"),
        "prog.py": "from guards import leader\n" + _DECORATED.format(applied="leader"),
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "high")]


def test_finding_evidence_names_the_wrappers_rank_test(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(
        _HEADER + _program("test-then-call", "main_only", "main_only"), encoding="utf-8"
    )
    config = Config(select=("RNK102",), root=tmp_path, confidence="low")

    (finding,) = lint_paths([tmp_path], config, jobs=1).findings

    assert finding.evidence is not None
    assert finding.evidence.source.kind == "rank-query"
    assert finding.evidence.guard.detail == (
        "`@main_only` calls the function only under its wrapper's test `dist.get_rank() == 0`"
    )
    assert "`@main_only` selects" in finding.message


_EVERY_RANK = {
    "logs-then-calls": """
        def {name}(fn):
            def wrapper(*args, **kwargs):
                print("calling", fn.__name__)
                return fn(*args, **kwargs)
            return wrapper
    """,
    "logs-on-rank-zero-then-calls": """
        def {name}(fn):
            def wrapper(*args, **kwargs):
                if dist.get_rank() == 0:
                    print("calling", fn.__name__)
                return fn(*args, **kwargs)
            return wrapper
    """,
    "calls-when-world-is-larger": """
        def {name}(fn):
            def wrapper(*args, **kwargs):
                if dist.get_world_size() > 1:
                    return fn(*args, **kwargs)
                return None
            return wrapper
    """,
    "calls-when-a-flag-is-set": """
        ENABLED = True


        def {name}(fn):
            def wrapper(*args, **kwargs):
                if ENABLED:
                    return fn(*args, **kwargs)
                return None
            return wrapper
    """,
    "rank-zero-exit-in-a-loop-only": """
        def {name}(fn):
            def wrapper(*args, **kwargs):
                for _ in range(1):
                    if dist.get_rank() == 0:
                        continue
                out = fn(*args, **kwargs)
                dist.barrier()
                return out
            return wrapper
    """,
}


@pytest.mark.parametrize("variant", sorted(_EVERY_RANK))
@pytest.mark.parametrize("name", ["rank_zero_only", "main_process_only", "wrapped"])
def test_decorator_that_calls_on_every_rank_is_not_a_rank_guard_whatever_its_name(
    tmp_path: Path, variant: str, name: str
) -> None:
    program = textwrap.dedent(_EVERY_RANK[variant]).format(name=name)
    files = {"prog.py": program + _DECORATED.format(applied=name)}

    assert _findings(tmp_path, files) == []


def test_guard_named_like_rank_zero_with_an_unread_test_keeps_its_names_judgement(
    tmp_path: Path,
) -> None:
    # Lightning's own implementation: the rank is an attribute set at import time.
    files = {
        "prog.py": """
            def rank_zero_only(fn):
                @functools.wraps(fn)
                def wrapped_fn(*args, **kwargs):
                    if rank_zero_only.rank == 0:
                        return fn(*args, **kwargs)
                    return None
                return wrapped_fn
        """
        + _DECORATED.format(applied="rank_zero_only")
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "high")]


def test_unnamed_guard_whose_test_may_read_the_rank_unseen_is_not_reported(
    tmp_path: Path,
) -> None:
    files = {
        "prog.py": """
            def logged(fn):
                def wrapper(*args, **kwargs):
                    if state.is_leader:
                        return fn(*args, **kwargs)
                    return None
                return wrapper
        """
        + _DECORATED.format(applied="logged")
    }

    assert _findings(tmp_path, files) == []


def test_guard_on_a_rank_known_by_its_name_only_is_medium(tmp_path: Path) -> None:
    files = {
        "prog.py": """
            def main_only(fn):
                def wrapper(rank, t):
                    if rank == 0:
                        return fn(t)
                    return None
                return wrapper


            @main_only
            def sync(t):
                dist.barrier()


            def main(t):
                sync(0, t)
        """
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "medium")]


def test_class_used_as_a_decorator_is_judged_by_its_name(tmp_path: Path) -> None:
    files = {
        "prog.py": """
            class rank_zero_only:
                def __init__(self, fn):
                    self.fn = fn

                def __call__(self, *args, **kwargs):
                    return self.fn(*args, **kwargs)
        """
        + _DECORATED.format(applied="rank_zero_only")
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "high")]


def test_method_inside_a_decorator_is_not_read_as_its_wrapper(tmp_path: Path) -> None:
    files = {
        "prog.py": """
            def main_only(fn):
                class Holder:
                    def call(self, *args, **kwargs):
                        if dist.get_rank() == 0:
                            return fn(*args, **kwargs)
                return Holder().call
        """
        + _DECORATED.format(applied="main_only")
    }

    assert _findings(tmp_path, files) == []


def test_unreachable_call_after_a_branch_whose_arms_both_leave_is_not_counted(
    tmp_path: Path,
) -> None:
    files = {
        "prog.py": """
            def main_only(fn):
                def wrapper(*args, **kwargs):
                    if dist.get_rank() == 0:
                        return fn(*args, **kwargs)
                    else:
                        return None
                    fn(*args, **kwargs)
                return wrapper
        """
        + _DECORATED.format(applied="main_only")
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "high")]


def test_project_call_in_a_rank_branch_leaves_the_later_call_unguarded(tmp_path: Path) -> None:
    files = {
        "prog.py": """
            def record(name):
                return name


            def main_only(fn):
                def wrapper(*args, **kwargs):
                    if dist.get_rank() == 0:
                        record(fn.__name__)
                    return fn(*args, **kwargs)
                return wrapper
        """
        + _DECORATED.format(applied="main_only")
    }

    assert _findings(tmp_path, files) == []


@pytest.mark.parametrize(
    "body",
    [
        "if is_main():\n    return fn(*args, **kwargs)\nreturn None",
        "for _ in range(1):\n    if is_main():\n        fn(*args, **kwargs)",
        "if is_main():\n    for _ in range(1):\n        fn(*args, **kwargs)",
        "if not is_main():\n    return None\nfor _ in range(1):\n    fn(*args, **kwargs)",
        "if kwargs:\n    if is_main():\n        return fn(*args, **kwargs)\nreturn None",
    ],
)
@pytest.mark.parametrize("helper", ["is_main", "first_process"])
def test_wrapper_testing_the_rank_through_a_project_helper_is_a_rank_guard(
    tmp_path: Path, body: str, helper: str
) -> None:
    wrapper = textwrap.indent(body.replace("is_main", helper), " " * 20)
    files = {
        "prog.py": f"""
            def {helper}():
                return dist.get_rank() == 0


            def main_only(fn):
                def wrapper(*args, **kwargs):
{wrapper}
                return wrapper
        """
        + _DECORATED.format(applied="main_only")
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "high")]


def test_factory_with_a_parameterless_helper_before_its_decorator_is_read(
    tmp_path: Path,
) -> None:
    files = {
        "prog.py": """
            def only_on(which):
                def describe():
                    return which

                def deco(fn):
                    def wrapper(*args, **kwargs):
                        if dist.get_rank() == which:
                            return fn(*args, **kwargs)
                    return wrapper
                return deco
        """
        + _DECORATED.format(applied="only_on(0)")
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "high")]


def test_guard_after_a_decorator_from_a_package_is_read(tmp_path: Path) -> None:
    files = {
        "prog.py": """
            import torch


            def main_only(fn):
                def wrapper(*args, **kwargs):
                    if dist.get_rank() == 0:
                        return fn(*args, **kwargs)
                return wrapper


            @torch.no_grad()
            @main_only
            def sync(t):
                dist.barrier()
        """
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "dist.barrier()"), "high")]


def test_each_decorator_is_judged_once_for_all_the_functions_it_decorates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ranklint.analysis.project import wrappers

    judged: list[str] = []
    original = wrappers.wrapped_calls

    def counting(ref, rank_of):  # type: ignore[no-untyped-def]
        judged.append(ref.function.qualname)
        return original(ref, rank_of)

    monkeypatch.setattr(wrappers, "wrapped_calls", counting)
    program = _program("test-then-call", "main_only", "main_only")
    files = {"prog.py": program + "\n\n@main_only\ndef other(t):\n    dist.barrier()\n"}

    found = _findings(tmp_path, files)

    assert judged == ["main_only"]
    assert [line for _, line, _ in found] == [
        _line(files, "prog.py", "dist.barrier()"),
        len((_HEADER + textwrap.dedent(files["prog.py"]).lstrip()).splitlines()),
    ]


def test_wrapper_testing_the_rank_along_one_axis_leaves_another_axiss_group_alone(
    tmp_path: Path,
) -> None:
    files = {
        "prog.py": """
            def tp_leader(fn):
                def wrapper(*args, **kwargs):
                    if dist.get_rank(group=tp_group) == 0:
                        return fn(*args, **kwargs)
                return wrapper


            @tp_leader
            def sync(t):
                dist.all_reduce(t, group=dp_group)


            @tp_leader
            def sync_tp(t):
                dist.all_reduce(t, group=tp_group)
        """
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "t, group=tp_group)"), "medium")]


def test_wrapper_testing_membership_leaves_a_collective_on_an_explicit_group_alone(
    tmp_path: Path,
) -> None:
    files = {
        "prog.py": """
            RANKS = [0, 1]
            group = dist.new_group(RANKS)


            def members_only(fn):
                def wrapper(*args, **kwargs):
                    if dist.get_rank() in RANKS:
                        return fn(*args, **kwargs)
                return wrapper


            @members_only
            def sync(t):
                dist.all_reduce(t, group=group)
        """
    }

    assert _findings(tmp_path, files) == []


def test_guard_on_one_rank_reports_a_collective_on_a_frameworks_group(tmp_path: Path) -> None:
    files = {
        "prog.py": """
            from torch.distributed.tensor import distribute_tensor


            def main_only(fn):
                def wrapper(*args, **kwargs):
                    if dist.get_rank() == 0:
                        return fn(*args, **kwargs)
                return wrapper


            @main_only
            def save(t, mesh):
                return distribute_tensor(t, mesh)
        """
    }

    found = _findings(tmp_path, files)

    assert found == [("prog.py", _line(files, "prog.py", "distribute_tensor(t, mesh)"), "high")]


def test_guard_known_by_its_name_only_is_named_in_the_message(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(
        _HEADER
        + "from lightning.pytorch.utilities import rank_zero_only\n\n\n"
        + "@rank_zero_only\ndef sync(t):\n    dist.all_reduce(t, group=tp_group)\n",
        encoding="utf-8",
    )
    config = Config(select=("RNK102",), root=tmp_path, confidence="low")

    (finding,) = lint_paths([tmp_path], config, jobs=1).findings

    assert "the rank that `@rank_zero_only` selects" in finding.message
    assert finding.evidence is not None
    assert finding.evidence.guard.detail == "`@rank_zero_only` runs the function on one rank"
