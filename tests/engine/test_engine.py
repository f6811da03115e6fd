"""The engine: decoding, RNK001, internal-error isolation, traversal, parallelism."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import libcst as cst
import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.analysis.walk.context import FileContext
from ranklint.engine.walker import Walker
from ranklint.rules.imports.wildcard_import import WildcardImport
from ranklint.source import SourceError, parse_source
from tests.conftest import REPO_ROOT, write

BAD_IMPORT = "import torch.distributed as dist\ndist.init_process_group('gloo')\n"


def test_syntax_error_yields_one_rnk001_with_parser_position() -> None:
    result = lint_source("def f(:\n    pass\n", "bad.py")

    (finding,) = result.findings
    assert finding.code == "RNK001"
    assert finding.message.startswith("syntax error:")
    assert (finding.line, finding.col) == (1, 7)


def test_undecodable_bytes_yield_rnk001_with_byte_position() -> None:
    result = lint_source(b"x = 1\ny = '\xff'\n", "bad.py")

    (finding,) = result.findings
    assert finding.code == "RNK001"
    assert "cannot decode" in finding.message
    assert (finding.line, finding.col) == (2, 6)


def test_unknown_coding_cookie_yields_rnk001() -> None:
    result = lint_source(b"# -*- coding: no-such-codec -*-\nx = 1\n", "bad.py")

    assert [f.code for f in result.findings] == ["RNK001"]
    assert "encoding" in result.findings[0].message


def test_undecodable_byte_is_located_by_its_own_line_and_column() -> None:
    # A leading blank line and two earlier lines: the count starts at the first byte.
    result = lint_source(b"\nx = 1\ny = 2\nz = 'ab\xff\xfe'\n", "bad.py")

    assert [(f.line, f.col, f.end_line, f.end_col, f.message) for f in result.findings] == [
        (4, 8, 4, 9, "cannot decode byte b'\\xff' as utf-8: invalid start byte")
    ]


def test_bad_coding_cookie_is_reported_at_the_start_of_the_file() -> None:
    result = lint_source(b"# -*- coding: nonsense -*-\nx = 1\n", "bad.py")

    assert [(f.line, f.col, f.message) for f in result.findings] == [
        (1, 1, "invalid source encoding declaration: unknown encoding: nonsense")
    ]


def test_chain_too_deep_for_pythons_parser_is_one_rnk001_at_the_start() -> None:
    result = lint_source("x = " + " + ".join(["a"] * 20000) + "\n", "deep.py")

    assert [(f.line, f.col, f.message) for f in result.findings] == [
        (1, 1, "nesting too deep: Python's own parser gives up on this file")
    ]


@pytest.mark.parametrize(
    ("source", "message", "line", "col"),
    [
        ("x = 1\ndef f(:\n    pass\n", "syntax error: expected one of ), *, **, NAME", 3, 5),
        (
            "x = (1,\n",
            "syntax error: expected one of ), *, +, -, ..., AWAIT, False, NAME, NUMBER, None, "
            "True, lambda, not, ~",
            2,
            1,
        ),
    ],
)
def test_code_only_libcst_rejects_is_reported_with_libcsts_message_and_position(
    monkeypatch: pytest.MonkeyPatch, source: str, message: str, line: int, col: int
) -> None:
    # As if CPython had accepted the code (newer grammar than the running interpreter).
    monkeypatch.setattr("ranklint.source._cpython_check", lambda text: None)

    with pytest.raises(SourceError) as info:
        parse_source(source)

    assert (info.value.message, info.value.line, info.value.col) == (message, line, col)


def test_code_both_parsers_reject_is_reported_with_cpythons_message_and_position() -> None:
    with pytest.raises(SourceError) as info:
        parse_source("x = 1\ndef f(:\n    pass\n")

    assert (info.value.message, info.value.line, info.value.col) == (
        "syntax error: invalid syntax",
        2,
        7,
    )


def test_latin1_cookie_decodes_and_rules_still_run() -> None:
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + BAD_IMPORT

    result = lint_source(source.encode("latin-1"), "latin.py")

    assert [(f.line, f.code) for f in result.findings] == [(4, "RNK101")]


def test_utf8_bom_is_stripped_and_positions_are_unchanged() -> None:
    result = lint_source(b"\xef\xbb\xbf" + BAD_IMPORT.encode(), "bom.py")

    assert [(f.line, f.col, f.code) for f in result.findings] == [(2, 1, "RNK101")]


def test_nul_byte_yields_rnk001_not_a_crash() -> None:
    result = lint_source(b"x = 1\x00\n", "nul.py")

    assert result.errors == []
    assert [f.code for f in result.findings] == ["RNK001"]


def test_empty_file_has_no_findings() -> None:
    result = lint_source(b"", "empty.py")

    assert (result.findings, result.errors) == ([], [])


def test_parse_error_in_one_file_does_not_stop_the_others(tmp_path: Path) -> None:
    write(tmp_path / "a_bad.py", "def f(:\n")
    (tmp_path / "b_bytes.py").write_bytes(b"s = '\xff'\n")
    write(tmp_path / "c_good.py", BAD_IMPORT)

    result = lint_paths([tmp_path], jobs=1)

    assert [(Path(f.path).name, f.code) for f in result.findings] == [
        ("a_bad.py", "RNK001"),
        ("b_bytes.py", "RNK001"),
        ("c_good.py", "RNK101"),
    ]
    assert result.files_checked == 3


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="root can read files without permission"
)
def test_unreadable_file_yields_rnk001(tmp_path: Path) -> None:
    path = write(tmp_path / "secret.py", "x = 1\n")
    path.chmod(0)

    result = lint_paths([path])

    assert [f.code for f in result.findings] == ["RNK001"]
    assert "cannot read file" in result.findings[0].message


def test_permission_error_while_reading_yields_rnk001(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulated, so it also runs as root (where chmod 0 does not stop reads).
    path = write(tmp_path / "locked.py", "x = 1\n")

    def deny(file: str, mode: str = "r") -> None:
        raise PermissionError(13, "Permission denied", file)

    monkeypatch.setattr("ranklint.engine.linter.open", deny, raising=False)
    result = lint_paths([path], jobs=1)

    assert [(f.code, f.message) for f in result.findings] == [
        ("RNK001", "cannot read file: Permission denied")
    ]


def test_dangling_symlink_yields_rnk001(tmp_path: Path) -> None:
    link = tmp_path / "gone.py"
    link.symlink_to(tmp_path / "missing-target.py")

    result = lint_paths([link])

    assert [f.code for f in result.findings] == ["RNK001"]
    assert "cannot read file" in result.findings[0].message


def test_rule_crash_is_an_internal_error_and_other_rules_still_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def boom(self: WildcardImport, node: cst.ImportFrom) -> None:
        raise ValueError("kaboom")

    monkeypatch.setattr(WildcardImport, "visit_ImportFrom", boom)
    source = "from torch.distributed import *\n" + BAD_IMPORT

    result = lint_source(source, "crash.py")

    (error,) = result.errors
    assert error.where == "rule RNK301 (wildcard-import)"
    assert "kaboom" in error.message
    assert error.path == "crash.py"
    assert [f.code for f in result.findings] == ["RNK101"]


def test_findings_are_sorted_by_path_line_column_code(tmp_path: Path) -> None:
    write(tmp_path / "b.py", "from os import *; sep\n" + BAD_IMPORT)
    write(tmp_path / "a.py", BAD_IMPORT + "from os import *; sep\n")

    result = lint_paths([tmp_path], jobs=1)

    keys = [(Path(f.path).name, f.line, f.col, f.code) for f in result.findings]
    assert keys == sorted(keys)
    assert len(keys) == 4


def test_parallel_run_output_equals_serial_run(tmp_path: Path) -> None:
    for index in range(24):
        body = BAD_IMPORT if index % 3 else "from torch.distributed import *\n"
        write(tmp_path / f"pkg{index % 4}" / f"mod{index}.py", body)
    write(tmp_path / "broken.py", "def f(:\n")

    serial = lint_paths([tmp_path], jobs=1)
    parallel = lint_paths([tmp_path], jobs=2)

    assert parallel.findings == serial.findings
    assert parallel.files_checked == serial.files_checked == 25


class _CallCounter(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls = 0

    def visit_Call(self, node: cst.Call) -> None:
        self.calls += 1


class _CountingRule:
    """A stand-in rule object for the walker: counts the calls it is shown."""

    code = "TEST"
    name = "counting"
    handlers_on_visit = {cst.Call: "visit_Call"}
    handlers_on_leave: dict[type[cst.CSTNode], str] = {}

    def __init__(self) -> None:
        self.calls = 0

    def visit_Call(self, node: cst.Call) -> None:
        self.calls += 1


@pytest.mark.parametrize(
    "path",
    sorted((REPO_ROOT / "src").rglob("*.py")) + sorted((REPO_ROOT / "fixtures").rglob("*.py")),
    ids=lambda p: p.name,
)
def test_walker_reaches_every_call_libcst_visits(path: Path) -> None:
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    reference = _CallCounter()
    module.visit(reference)
    rule = _CountingRule()

    Walker(FileContext(str(path), module, Config().analysis_settings()), [rule]).walk(module)  # type: ignore[list-item]

    assert rule.calls == reference.calls


def test_walker_reaches_calls_in_every_construct() -> None:
    source = """
@d(c1())
class K(c2(), metaclass=c3()):
    x: c4() = c5()
    def m(self, a: c6() = c7(), *args: c8(), k=c9(), **kw) -> c10():
        y = [c11() for i in c12() if c13() for j in c14()]
        z = {c15(): c16() for q in c17()}
        w = (c18() async for r in c19())
        with c20() as v, c21():
            pass
        try:
            c22()
        except c23() as e:
            c24()
        finally:
            del c25()[0]
        while c26():
            c27()
        else:
            c28()
        match c29():
            case [1, *rest] if c30():
                c31()
        lam = lambda p=c32(): c33()
        if (n := c34()):
            c35()
        elif c36():
            c37()
        return f"{c38()!r:{c39()}}"
"""
    module = cst.parse_module(source)
    reference = _CallCounter()
    module.visit(reference)
    rule = _CountingRule()

    Walker(FileContext("k.py", module, Config().analysis_settings()), [rule]).walk(module)  # type: ignore[list-item]

    assert rule.calls == reference.calls == 40


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = " + "(" * 1500 + "1" + ")" * 1500 + "\n", "too many nested parentheses"),
        ("x = " + " + ".join(["a"] * 20000) + "\n", "nesting too deep"),
        ("x = a" + ".b" * 20000 + "\n", "nesting too deep"),
        (
            "".join(" " * i + "if x:\n" for i in range(101)) + " " * 101 + "pass\n",
            "too many levels of indentation",
        ),
    ],
    ids=["brackets-1500", "plus-chain-20000", "attribute-chain-20000", "indent-101"],
)
def test_nesting_past_cpython_limits_is_a_fast_rnk001_not_a_crash(
    source: str, message: str
) -> None:
    # Before the CPython pre-check these segfaulted libcst or took minutes.
    result = lint_source(source, "deep.py")

    assert result.errors == []
    assert [f.code for f in result.findings] == ["RNK001"]
    assert message in result.findings[0].message


@pytest.mark.parametrize(
    "source",
    [
        "x = " + "f(" * 199 + "dist.new_group()" + ")" * 199 + "\n",
        "x = " + " + ".join(["a"] * 2000) + " + dist.new_group()\n",
    ],
    ids=["calls-199-deep", "plus-chain-2000"],
)
def test_valid_code_at_cpython_nesting_limits_is_analysed(source: str) -> None:
    result = lint_source("import torch.distributed as dist\n" + source, "deep.py")

    assert result.errors == []
    assert [f.code for f in result.findings] == ["RNK101"]


def test_recursion_limit_is_restored_after_linting() -> None:
    before = sys.getrecursionlimit()

    lint_source("import torch.distributed as dist\ndist.new_group()\n", "x.py")

    assert sys.getrecursionlimit() == before


@pytest.mark.parametrize(
    "source",
    [
        "type Pair[T] = tuple[T, T]\n\n\ndef first[T](pair: Pair[T]) -> T:\n    return pair[0]\n",
        "name = 'x'\nmessage = f\"{'quoted' + f'{name}'}\"\n",
    ],
    ids=["pep695-generics", "pep701-fstring"],
)
def test_syntax_newer_than_the_interpreter_is_linted_when_libcst_parses_it(source: str) -> None:
    result = lint_source(source + "from os import *; sep\n", "new.py")

    assert result.errors == []
    assert [f.code for f in result.findings] == ["RNK301"]


def test_python2_code_gets_cpython_message_and_position() -> None:
    result = lint_source("import os\nprint 'hello'\n", "py2.py")

    (finding,) = result.findings
    assert finding.code == "RNK001"
    assert "Missing parentheses in call to 'print'" in finding.message
    assert finding.line == 2


def test_identifier_valid_only_in_newer_unicode_is_rnk001_not_internal_error() -> None:
    # Found by fuzzing: libcst's tokenizer accepts U+13460 as an identifier,
    # its node validation (and CPython 3.11) reject it.
    identifier = "\U00013460"
    result = lint_source(identifier + "\n", "unicode.py")

    expected = [] if identifier.isidentifier() else ["RNK001"]  # per this Python's Unicode
    assert result.errors == []
    assert [f.code for f in result.findings] == expected
