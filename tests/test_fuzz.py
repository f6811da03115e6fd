"""Property-based fuzzing with generated Python programs (hypothesmith) and raw bytes.

For every input: linting never raises and reports no internal error, every
finding lies inside the file, output is deterministic, and the CLI and the
flake8 plugin print the same codes and lines. Profiles: see conftest.py.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import assume, event, example, given, settings
from hypothesis import strategies as st

from ranklint import Config, Finding, lint_source
from ranklint.faces.cli import main as cli_main
from tests.conftest import FUZZ_TIMEOUT

hypothesmith = pytest.importorskip("hypothesmith", reason="hypothesmith is a test extra")
pytestmark = pytest.mark.timeout(FUZZ_TIMEOUT)
flake8_cli = pytest.importorskip("flake8.main.cli", reason="flake8 is a test extra")

ALL = Config(select=("ALL",))
# Built once: each from_grammar() call compiles the Python grammar anew (~1 s).
FROM_GRAMMAR = hypothesmith.from_grammar()
FROM_NODE = hypothesmith.from_node()
_NEWLINE = re.compile(r"\r\n|\r|\n")

# Module-level snippets that give the rules something to find, in every import form
# and import-time context; composed with generated programs below.
SNIPPETS = (
    "import torch.distributed as dist\ndist.init_process_group('gloo')\n",
    "from torch import distributed as d\nG = d.new_group([0, 1])\n",
    "from torch.distributed import new_subgroups as ns\nclass C:\n    g = ns()\n",
    "from torch.distributed.device_mesh import init_device_mesh\n"
    "def f(m=init_device_mesh('cpu', (2,))):\n    return m\n",
    "import torch\nif __name__ == '__main__':\n    torch.distributed.new_group([0])\n",
    "from torch.distributed import *\n",
    "from .x import *  # noqa: RNK301\n",
    "import torch.distributed as dist\nGROUP = dist.new_group(\n    [0, 1],\n)  # noqa\n",
    "import deepspeed\nwith ctx():\n    deepspeed.init_distributed()\n",
)


def _parses(source: str) -> bool:
    """CPython parses ``source`` as flake8 reads it back: with universal newlines
    (a line continuation before `\\r\\n` at the end of the file parses as a
    string, and not once the file is read as text)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(source.replace("\r\n", "\n").replace("\r", "\n"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


@st.composite
def distributed_programs(draw: st.DrawFn) -> str:
    """A generated program with distributed snippets spliced between its statements."""
    base = draw(FROM_GRAMMAR)
    parts = [base if base.endswith("\n") or not base else base + "\n"]
    for snippet in draw(st.lists(st.sampled_from(SNIPPETS), max_size=4)):
        position = draw(st.sampled_from(("before", "after")))
        parts.insert(0 if position == "before" else len(parts), snippet)
    return "".join(parts)


PROGRAMS = st.one_of(FROM_GRAMMAR, FROM_NODE, distributed_programs())


def assert_inside(source: str, finding: Finding) -> None:
    lines = _NEWLINE.split(source)
    assert 1 <= finding.line <= len(lines), finding
    assert 1 <= finding.col <= len(lines[finding.line - 1]) + 1, finding
    assert (finding.line, finding.col) <= (finding.end_line, finding.end_col), finding
    assert finding.end_line <= len(lines), finding
    assert finding.end_col <= len(lines[finding.end_line - 1]) + 1, finding


@given(PROGRAMS)
@example(
    # Found by the long profile: a parse error on an empty line had end_col past the line.
    source="\n\\\r\n",
).via("discovered failure")
def test_generated_program_lints_without_error_inside_the_file_deterministically(
    source: str,
) -> None:
    first = lint_source(source, "gen.py", ALL)
    second = lint_source(source, "gen.py", ALL)

    event(f"findings: {len(first.findings) > 0}")
    assert first.errors == []
    assert first.findings == second.findings
    for finding in first.findings:
        assert_inside(source, finding)


@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise_and_yield_at_most_one_parse_error(data: bytes) -> None:
    result = lint_source(data, "bytes.py", ALL)
    event(f"codes: {sorted({f.code for f in result.findings})}")

    assert result.errors == []
    parse_errors = [f for f in result.findings if f.code == "RNK001"]
    assert len(parse_errors) <= 1
    assert all(f.line >= 1 and f.col >= 1 for f in result.findings)


@given(st.text(max_size=2000))
def test_arbitrary_text_never_raises(text: str) -> None:
    result = lint_source(text, "text.py", ALL)

    assert result.errors == []
    for finding in result.findings:
        if finding.code != "RNK001":
            assert_inside(text, finding)


def _run_quietly(function, argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = function(argv)
    return code, out.getvalue()


_LONE_CR = re.compile(r"\r(?!\n)")

# The message of RNK507's whole-project check (a dimension no mesh of the project declares).
_WHOLE_PROJECT = "is not declared by any mesh this project builds"


@settings(max_examples=max(5, settings().max_examples // 6))
@given(st.lists(distributed_programs(), min_size=1, max_size=6))
def test_cli_and_flake8_print_the_same_lines_for_generated_programs(sources: list[str]) -> None:
    # flake8 runs plugins only on files Python itself parses. A lone carriage
    # return as a line break crashes pycodestyle, which flake8 runs whatever is
    # selected (`#\rB\n`: IndexError in its `_is_string_literal`).
    sources = [s for s in sources if _parses(s) and not _LONE_CR.search(s)]
    assume(sources)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for index, source in enumerate(sources):
            (root / f"gen{index:02}.py").write_text(source, encoding="utf-8")
        report = root / "flake8.txt"
        flake8_code, _ = _run_quietly(
            flake8_cli.main,
            ["--isolated", "--select", "RNK", "-j", "1", "--output-file", str(report), tmp],
        )
        cli_code, cli_out = _run_quietly(
            cli_main, ["check", "--format", "concise", "--select", "ALL", "-j", "1", tmp]
        )

        from_flake8 = sorted(report.read_text(encoding="utf-8").splitlines())
        # Checks that need every file of the project (`Rule.whole_project`) are
        # left out of flake8's one-file runs by design.
        # RNK002 is opt-in: the flake8 run reads the default selection.
        from_cli = sorted(
            line
            for line in cli_out.splitlines()
            if _WHOLE_PROJECT not in line and ": RNK002 " not in line
        )

    event(f"cli lines: {min(len(from_cli), 5)}+")
    assert cli_code in (0, 1)
    assert flake8_code in (0, 1)
    assert from_flake8 == from_cli
