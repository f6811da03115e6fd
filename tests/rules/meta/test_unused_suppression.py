"""RNK002 unused-suppression: codes checked in the file's own walk are judged at
once; codes of project-phase rules only by a run that saw the whole project. The
spans of its findings and what its fix removes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint import Config, lint_source
from ranklint.findings import Finding, Severity
from ranklint.fixing.edits import apply_fixes
from ranklint.rules.meta.unused_suppression import UnusedSuppression, unused_suppressions
from ranklint.suppressions import Suppressions
from tests.conftest import write

WILDCARD_USED = (
    "from torch.distributed import *  # noqa: RNK301\n\n\ndef f():\n    return get_rank()\n"
)


def _codes(source: str, select: tuple[str, ...], **config: object) -> list[tuple[int, str]]:
    result = lint_source(source, "pkg/mod.py", Config(select=select, **config))  # type: ignore[arg-type]
    assert result.errors == []
    return [(f.line, f.code) for f in result.findings]


def test_used_suppression_is_not_reported() -> None:
    assert _codes(WILDCARD_USED, ("RNK002", "RNK301")) == []


@pytest.mark.parametrize(
    "comment",
    ["# noqa: RNK301", "# ranklint: ignore[RNK301]", "# noqa: E501, RNK301 (why)"],
)
def test_stale_code_is_reported_at_its_comment(comment: str) -> None:
    source = f"import torch.distributed as dist  {comment}\n"

    result = lint_source(source, "pkg/mod.py", Config(select=("RNK002", "RNK301")))

    (finding,) = result.findings
    assert (finding.code, finding.line, finding.col) == ("RNK002", 1, 35)
    assert finding.message.startswith("`RNK301` is suppressed here but nothing on this line")


@pytest.mark.parametrize(
    ("source", "select", "config"),
    [
        ("x = 1  # noqa: RNK301\n", ("RNK002",), {}),  # RNK301 not selected
        ("x = 1  # noqa\n", ("RNK002", "RNK301"), {}),  # a bare noqa
        ("x = 1  # noqa: E501\n", ("RNK002", "RNK301"), {}),  # another tool's code
        (
            "x = 1  # noqa: RNK301\n",
            ("RNK002", "RNK301"),
            {"per_file_ignores": {"pkg/*": ("RNK301",)}},
        ),
    ],
    ids=["not-selected", "bare", "other-tool", "per-file-ignored"],
)
def test_suppression_that_cannot_be_judged_is_left_alone(
    source: str, select: tuple[str, ...], config: dict
) -> None:
    assert _codes(source, select, **config) == []


def test_suppression_on_the_last_line_of_a_statement_counts_as_used() -> None:
    source = (
        "import torch.distributed as dist\n\n\ndef f(objs, tp_group):\n"
        "    dist.broadcast_object_list(\n        objs,\n        group=tp_group,\n"
        "    )  # noqa: RNK103\n"
    )

    assert _codes(source, ("RNK002", "RNK103")) == []
    assert _codes(source.replace("RNK103", "RNK104"), ("RNK002", "RNK103", "RNK104")) == [
        (5, "RNK103"),
        (8, "RNK002"),
    ]


def test_cli_reports_rnk002_only_when_selected_and_again_from_the_cache(
    run_cli, tmp_path: Path
) -> None:
    write(tmp_path / "a.py", "import os  # noqa: RNK301\n")

    default = run_cli("check", str(tmp_path), "--cache-dir", str(tmp_path / "c"))
    selected = [
        run_cli(
            "check",
            str(tmp_path),
            "--cache-dir",
            str(tmp_path / "c"),
            "--extend-select",
            "RNK002",
            "--output-format",
            "concise",
        )
        for _ in range(2)
    ]

    assert default.code == 0
    assert [run.code for run in selected] == [1, 1]
    assert selected[0].out == selected[1].out
    assert ":1:12: RNK002 `RNK301` is suppressed here" in selected[0].out


def test_stale_code_after_a_form_feed_is_placed_on_the_tokenizers_line() -> None:
    source = "x = 1\x0c  # a form feed inside line 1\ny = 2  # noqa: RNK301\n"

    result = lint_source(source, "pkg/mod.py", Config(select=("RNK002", "RNK301")))

    assert [(f.line, f.col, f.end_col) for f in result.findings] == [(2, 8, 22)]


# RNK102 is decided in the project phase: a call of a helper that reaches a barrier.
HELPER = "import torch.distributed as dist\n\n\ndef save():\n    dist.barrier()\n"
CALLER = (
    "from helpers import save\n\n\ndef step(rank):\n"
    "    if rank == 0:\n        save()  # noqa: RNK102 (audited)\n"
    "    if rank == 1:\n        print(rank)  # noqa: RNK102\n"
)


def test_project_phase_code_is_judged_when_the_file_is_the_whole_project() -> None:
    assert _codes("x = 1  # noqa: RNK102\n", ("RNK002", "RNK102")) == [(1, "RNK002")]


def test_project_phase_code_is_left_alone_when_the_file_is_one_of_many() -> None:
    result = lint_source(
        "x = 1  # noqa: RNK102\n", "m.py", Config(select=("RNK002", "RNK102")), partial=True
    )

    assert result.findings == []


@pytest.fixture
def guarded_helper(tmp_path: Path) -> Path:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\nextend-select = ['RNK002']\n")
    write(tmp_path / "helpers.py", HELPER)
    write(tmp_path / "train.py", CALLER)
    return tmp_path


def test_project_phase_suppression_that_serves_a_call_chain_is_used_and_a_stale_one_reported(
    run_cli, guarded_helper: Path
) -> None:
    runs = [  # cold, then warm
        run_cli("check", ".", "--output-format", "concise", cwd=guarded_helper) for _ in range(2)
    ]

    assert [run.out.splitlines() for run in runs] == [
        [
            "train.py:8:22: RNK002 `RNK102` is suppressed here but nothing on this line "
            "reports it; remove it from the comment (a stale suppression would hide the next "
            "real finding here)"
        ]
    ] * 2


def test_project_phase_code_is_not_judged_without_the_rest_of_the_project(
    run_cli, guarded_helper: Path
) -> None:
    run = run_cli("check", "--no-project-index", "train.py", cwd=guarded_helper)

    assert run.out == ""
    assert run.code == 0


def test_fix_removes_a_stale_project_phase_suppression_and_keeps_the_used_one(
    run_cli, guarded_helper: Path
) -> None:
    run = run_cli("check", "--fix", ".", cwd=guarded_helper)

    assert run.code == 0
    assert (guarded_helper / "train.py").read_text() == CALLER.replace(
        "print(rank)  # noqa: RNK102", "print(rank)"
    )


# -- prefixes (`# noqa: RNK3` suppresses every RNK3xx code, as under flake8) ------


def test_used_prefix_is_not_reported() -> None:
    source = WILDCARD_USED.replace("RNK301", "RNK3")

    assert _codes(source, ("RNK002", "RNK3")) == []


def test_prefix_that_suppresses_nothing_is_reported_once_every_code_it_covers_is_checked() -> None:
    source = "x = 1  # noqa: RNK3\n"

    assert _codes(source, ("RNK002", "RNK3")) == [(1, "RNK002")]
    # RNK302 and RNK303 are not checked: the prefix may serve them.
    assert _codes(source, ("RNK002", "RNK301")) == []


def test_prefix_covering_project_phase_codes_is_judged_after_the_project_phase() -> None:
    # RNK1 covers per-file codes (RNK103) and project-phase ones (RNK102).
    used = (
        "import torch.distributed as dist\n\n\ndef f():\n"
        "    if dist.get_rank() == 0:\n        dist.barrier()  # noqa: RNK1\n"
    )
    stale = "x = 1  # noqa: RNK1\n"

    assert _codes(used, ("RNK002", "RNK1")) == []
    assert _codes(stale, ("RNK002", "RNK1")) == [(1, "RNK002")]
    # With the project phase's codes not judged (one file of many), the prefix waits.
    result = lint_source(stale, "pkg/mod.py", Config(select=("RNK002", "RNK1")), partial=True)
    assert [f.code for f in result.findings] == []


# -- the spans of its findings, and what its fix removes -----------------------

JUDGED = ("RNK002", "RNK301", "RNK103")


def _rnk002(source: str) -> list[Finding]:
    result = lint_source(source, "pkg/mod.py", Config(select=JUDGED))
    assert result.errors == []
    return [finding for finding in result.findings if finding.code == "RNK002"]


def test_stale_code_is_reported_as_a_one_line_warning_of_the_rule() -> None:
    (finding,) = _rnk002("x = 1  # noqa: RNK301\n")

    assert (finding.code, finding.name, finding.severity) == (
        "RNK002",
        "unused-suppression",
        Severity.WARNING,
    )
    assert (finding.line, finding.col, finding.end_line, finding.end_col) == (1, 8, 1, 22)


def test_stale_code_on_a_last_line_without_a_newline_is_reported() -> None:
    findings = _rnk002("y = 0\nx = 1  # noqa: RNK301")

    assert [(f.line, f.col, f.end_col) for f in findings] == [(2, 8, 22)]


@pytest.mark.parametrize(
    "first",
    ["x = 0  # noqa", "x = 0  # noqa: E501", "from torch.distributed import *  # noqa: RNK301"],
    ids=["bare-noqa", "unjudged-code", "used-code"],
)
def test_stale_code_after_a_line_with_nothing_stale_is_still_reported(first: str) -> None:
    source = f"{first}\nrank = get_rank()\ny = 1  # noqa: RNK103\n"

    findings = _rnk002(source)

    assert [(f.line, f.message[:8]) for f in findings] == [(3, "`RNK103`")]


def test_suppressed_line_without_a_suppression_comment_is_reported_from_column_1() -> None:
    text = "x = 1\n"

    found = unused_suppressions(
        UnusedSuppression,
        "m.py",
        text,
        Suppressions(by_line={1: frozenset({"RNK301"})}),
        set(),
        ["RNK301"],
    )

    ((code, finding),) = found
    assert code == "RNK301"
    assert (finding.line, finding.col, finding.end_col, finding.fix) == (1, 1, 6, None)


def _fixed(source: str) -> str:
    fixed, _ = apply_fixes(source, [f.fix for f in _rnk002(source) if f.fix is not None])
    return fixed


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "x = 1  # noqa: RNK301  # noqa: E501\n",
            "x = 1  # noqa: E501\n",
            id="earlier-of-two-noqa-comments",
        ),
        pytest.param(
            "x = 1  # noqa: RNK301 (old)  # keep: me # and me\n",
            "x = 1  # keep: me # and me\n",
            id="up-to-the-next-comment-only",
        ),
        pytest.param(
            "x = 1  # ranklint: ignore[RNK301]# keep\n",
            "x = 1  # keep\n",
            id="next-comment-right-after-it",
        ),
        pytest.param("x = 1  # noqa: RNK301 (was needed)\n", "x = 1\n", id="with-its-explanation"),
    ],
)
def test_fix_of_a_wholly_stale_suppression_removes_it_and_keeps_the_other_comments(
    before: str, after: str
) -> None:
    fixed = _fixed(before)

    assert fixed == after


def test_fix_of_several_stale_codes_names_them_all_in_order() -> None:
    findings = _rnk002("x = 1  # noqa: RNK301, RNK103\n")

    assert {f.fix.message for f in findings if f.fix is not None} == {
        "Remove the unused suppression of RNK103, RNK301"
    }
    assert len(findings) == 2
