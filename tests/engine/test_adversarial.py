"""Hostile inputs: every one ends in a finding (RNK001) or a clear message, never a
crash, and the other files of the run are still linted."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from ranklint import Config, lint_paths, lint_source
from tests.conftest import run_subprocess, write

ALL = Config(select=("ALL",))
IMPORT = b"import torch.distributed as dist\n"


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    # Codes expected in order; for RNK001, ``message`` must occur in its message.
    codes: tuple[str, ...]
    message: str = ""


CASES = [
    Case("tokenizer-unterminated-string", b"x = 'abc\n", ("RNK001",), "unterminated string"),
    Case(
        "tokenizer-unterminated-triple-quote",
        b'x = """abc\n\n',
        ("RNK001",),
        "unterminated triple-quoted string",
    ),
    Case(
        "tokenizer-bad-dedent",
        b"if x:\n        a = 1\n    b = 2\n",
        ("RNK001",),
        "unindent does not match",
    ),
    Case("parser-invalid-syntax", b"def f(:\n    pass\n", ("RNK001",), "invalid syntax"),
    Case("fstring-unclosed-brace", b'x = f"{"\n', ("RNK001",), "f-string"),
    Case("fstring-bad-conversion", b'x = f"{a!z}"\n', ("RNK001",), "conversion"),
    Case("python2-print", b"print 'hi'\n", ("RNK001",), "Missing parentheses"),
    # Python 2's `except E, e:` is valid Python 3.14 (PEP 758): libcst parses it.
    Case("python2-except-comma", b"try:\n    pass\nexcept Exception, e:\n    pass\n", ()),
    Case("python2-backticks", b"x = `1`\n", ("RNK001",), "invalid syntax"),
    Case("python2-octal", b"x = 0777\n", ("RNK001",), "leading zeros"),
    Case(
        "mixed-tabs-and-spaces",
        b"if x:\n\tif y:\n        pass\n",
        ("RNK001",),
        "inconsistent use of tabs and spaces",
    ),
    Case("tabs-only-indentation", b"if x:\n\tpass\n" + IMPORT + b"dist.new_group()\n", ("RNK101",)),
    Case("utf8-bom", b"\xef\xbb\xbf" + IMPORT + b"dist.new_group()\n", ("RNK101",)),
    Case(
        "latin1-cookie",
        b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + IMPORT + b"dist.new_group()\n",
        ("RNK101",),
    ),
    Case("undecodable-bytes", b"x = '\xff\xfe'\n", ("RNK001",), "cannot decode"),
    Case("bad-coding-cookie", b"# coding: nope\nx = 1\n", ("RNK001",), "encoding"),
    Case("nul-byte", b"x = 1\x00\n", ("RNK001",), "null bytes"),
    Case("empty-file", b"", ()),
    Case("only-comments", b"# nothing here\n", ()),
    Case("no-trailing-newline", IMPORT + b"dist.new_group()", ("RNK101",)),
    Case(
        "crlf-line-endings", IMPORT.replace(b"\n", b"\r\n") + b"dist.new_group()\r\n", ("RNK101",)
    ),
    Case(
        "very-long-line",
        IMPORT + b"x = [" + b"1, " * 100_000 + b"dist.new_group()]\n",
        ("RNK101",),
    ),
    Case(
        "deeply-nested-brackets",
        b"x = " + b"(" * 1500 + b"1" + b")" * 1500 + b"\n",
        ("RNK001",),
        "too many nested parentheses",
    ),
    Case(
        "long-operator-chain",
        b"x = " + b" + ".join([b"a"] * 20000) + b"\n",
        ("RNK001",),
        "nesting too deep",
    ),
    Case(
        "match-statement",
        IMPORT + b"match mode:\n    case 'dp':\n        G = dist.new_group([0])\n    case _:\n"
        b"        pass\n",
        ("RNK101",),
    ),
    Case(
        "pep695-generics",
        IMPORT + b"type Pair[T] = tuple[T, T]\n\n\nclass Box[T]:\n    group = dist.new_group()\n",
        ("RNK101",),
    ),
    Case("walrus", IMPORT + b"if (g := dist.new_group([0])):\n    pass\n", ("RNK101",)),
    Case(
        "async-comprehension",
        IMPORT + b"async def gather(xs):\n    return [await dist.new_group() async for x in xs]\n",
        (),
    ),
]


def _file_name(case: Case) -> str:
    """An importable module name: a file `import` cannot name is an entry script."""
    return f"{case.name.replace('-', '_')}.py"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_hostile_source_ends_in_a_finding_or_lints_normally(case: Case) -> None:
    result = lint_source(case.data, _file_name(case), ALL)

    assert result.errors == []
    assert tuple(f.code for f in result.findings) == case.codes
    if case.message:
        assert case.message in result.findings[0].message


def test_all_hostile_files_in_one_cli_run_do_not_stop_the_good_file(tmp_path: Path) -> None:
    for case in CASES:
        (tmp_path / _file_name(case)).write_bytes(case.data)
    write(tmp_path / "zz_good.py", "import torch.distributed as dist\ndist.new_group()\n")
    (tmp_path / "pkg.py").mkdir()
    write(tmp_path / "pkg.py" / "inner.py", "from os import *; sep\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "zz_good.py")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)

    result = run_subprocess(
        sys.executable,
        "-m",
        "ranklint",
        "check",
        "--output-format",
        "concise",
        "--select",
        "ALL",
        ".",
        "missing.py",
        cwd=tmp_path,
    )

    assert result.returncode == 2  # the missing path; every finding is still printed
    assert "missing.py: no such file or directory" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "internal error" not in result.stderr
    printed = {(line.split(":", 1)[0], line.split()[1]) for line in result.stdout.splitlines()}
    expected = {(_file_name(c), code) for c in CASES for code in c.codes}
    expected |= {("zz_good.py", "RNK101"), ("link.py", "RNK101"), ("pkg.py/inner.py", "RNK301")}
    assert printed == expected


def test_symlinked_file_is_linted_under_its_own_name(tmp_path: Path) -> None:
    target = write(tmp_path / "real.py", "from os import *; sep\n")
    link = tmp_path / "alias.py"
    link.symlink_to(target)

    result = lint_paths([link], jobs=1)

    assert [(f.path, f.code) for f in result.findings] == [(str(link), "RNK301")]


@pytest.mark.slow
def test_five_megabyte_generated_file_is_linted_completely(tmp_path: Path) -> None:
    block = (
        "\n\nclass Stage{i}:\n"
        "    {group} = {create}\n"
        "\n    def forward(self, x):\n"
        "        y = x * {i}\n"
        "        return dist.all_reduce(y, op=dist.ReduceOp.SUM, group=self.group)\n"
        "\n\ndef helper_{i}(values):\n"
        "    total = 0\n"
        "    for value in values:\n"
        "        total += value * {i}\n"
        "    return total\n"
    )
    blocks: list[str] = []
    size = 0
    while size < 5 * 1024 * 1024:
        index = len(blocks)
        # One class in 50 creates its group at import time (RNK101).
        bad = index % 50 == 0
        create = f"dist.new_group([{index}])" if bad else "None"
        blocks.append(block.format(i=index, group="group", create=create))
        size += len(blocks[-1])
    path = write(tmp_path / "huge.py", "import torch.distributed as dist\n" + "".join(blocks))

    start = time.perf_counter()
    result = lint_paths([path], ALL, jobs=1)
    elapsed = time.perf_counter() - start

    assert result.errors == []
    assert [f.line for f in result.findings] == [
        2 + 3 + index * block.count("\n") for index in range(0, len(blocks), 50)
    ]
    assert {f.code for f in result.findings} == {"RNK101"}
    print(f"5 MB file: {len(blocks)} blocks, {len(result.findings)} findings, {elapsed:.1f} s")  # noqa: T201
