"""Rules whose behaviour the examples pin only in part: which files RNK107 leaves
alone, what RNK401 advises for each blocking call, and how rules register."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ranklint import Config, lint_source
from ranklint.findings import Severity
from ranklint.rules import RULE_MODULES, _import_rule_modules, rule_by_code
from ranklint.rules.base import Rule, registered_rules

RULES = Path(__file__).resolve().parent.parent / "src" / "ranklint" / "rules"

# -- RNK107: library code only ---------------------------------------------------

_BARRIER = """
import torch.distributed as dist


def save():
    dist.barrier()
"""


@pytest.mark.parametrize(
    ("path", "reported"),
    [
        ("pkg/checkpoint.py", True),
        ("pkg/testing.py", True),
        ("pkg/contest.py", True),
        ("mytests/save.py", True),
        ("pkg/latest/save.py", True),
        ("pkg/test_save.py", False),
        ("pkg/sub/test_save.py", False),
        ("pkg/save_test.py", False),
        ("pkg/conftest.py", False),
        ("pkg/__main__.py", False),
        ("tests/save.py", False),
        ("pkg/tests/save.py", False),
        ("pkg/test/save.py", False),
        ("pkg\\tests\\save.py", False),
        ("test_save.py", False),
    ],
)
def test_a_barrier_is_reported_in_library_code_and_not_in_tests_or_entry_files(
    path: str, reported: bool
) -> None:
    result = lint_source(_BARRIER.lstrip("\n"), path, Config(select=("RNK107",)))

    assert [f.line for f in result.findings] == ([5] if reported else [])


@pytest.mark.parametrize(
    "where",
    [
        'if __name__ == "__main__":\n    dist.barrier()\n',
        "def main():\n    dist.barrier()\n",
        "def main():\n    def inner():\n        dist.barrier()\n",
    ],
)
def test_a_barrier_in_an_entry_point_of_a_library_file_is_not_reported(where: str) -> None:
    source = "import torch.distributed as dist\n\n" + where

    result = lint_source(source, "pkg/launch.py", Config(select=("RNK107",)))

    assert (result.findings, result.errors) == ([], [])


def test_a_barrier_in_a_lambda_or_a_main_guard_inside_a_function_is_reported() -> None:
    source = textwrap.dedent(
        """
        import torch.distributed as dist

        wait = lambda: dist.barrier()


        def run():
            if __name__ == "__main__":
                dist.barrier()
        """
    ).lstrip("\n")

    result = lint_source(source, "pkg/launch.py", Config(select=("RNK107",)))

    assert [f.line for f in result.findings] == [3, 8]


# -- RNK401: what to use instead -------------------------------------------------

_THREAD = "run it in a thread: `await asyncio.to_thread(...)`"
_CLIENT = "an async client (`httpx.AsyncClient`, `aiohttp`)"


def _advice(call: str, header: str = "", config: Config | None = None) -> list[str]:
    source = f"{header}\n\nasync def rollout(x):\n    {call}\n"
    result = lint_source(source, "agent.py", config or Config(select=("RNK401",)))
    return [f.message.split("; use ", 1)[1] for f in result.findings]


@pytest.mark.parametrize(
    ("header", "call", "expected"),
    [
        ("import time", "time.sleep(1)", ["`await asyncio.sleep(...)`"]),
        ("from time import sleep", "sleep(1)", ["`await asyncio.sleep(...)`"]),
        ("", "open(x)", [f"`aiofiles.open(...)`, or {_THREAD}"]),
        ("import io", "io.open(x)", [f"`aiofiles.open(...)`, or {_THREAD}"]),
        ("import requests", "requests.get(x)", [_CLIENT]),
        ("import requests", "requests.sessions.Session().get(x)", [_CLIENT]),
        ("import requests", "requests(x)", []),
        ("import subprocess", "subprocess.run(x)", ["`await asyncio.create_subprocess_exec(...)`"]),
        ("import os", "os.system(x)", ["`await asyncio.create_subprocess_shell(...)`"]),
        ("import torch", "torch.save(x, 'f')", [_THREAD]),
        ("", "x.read_text()", [_THREAD]),
        ("import os", "os.getcwd()", []),
        ("def open(x):\n    return x", "open(x)", []),
        ("", "fetch(x)", []),
    ],
)
def test_a_blocking_call_in_async_code_is_reported_with_what_to_use_instead(
    header: str, call: str, expected: list[str]
) -> None:
    assert _advice(call, header) == expected


@pytest.mark.parametrize(
    ("header", "call", "configured", "expected"),
    [
        ("from pkg.io import fetch_weights", "fetch_weights(x)", "pkg.io.fetch_weights", [_THREAD]),
        ("import pkg.io", "pkg.io.fetch_weights(x)", "pkg.io.fetch_weights", [_THREAD]),
        ("", "fetch_weights(x)", "pkg.io.fetch_weights", [_THREAD]),
        ("", "fetch(x)", "pkg.io.fetch_weights", []),
        ("", "weights(x)", "pkg.io.fetch_weights", []),
    ],
)
def test_a_configured_blocking_function_is_reported_by_its_qualified_or_local_name(
    header: str, call: str, configured: str, expected: list[str]
) -> None:
    config = Config(select=("RNK401",), blocking_functions=(configured,))

    assert _advice(call, header, config) == expected


def test_a_blocking_call_is_named_by_its_dotted_name_in_the_message() -> None:
    source = "import requests\n\n\nasync def rollout(x):\n    requests.Session().get(x)\n"

    result = lint_source(source, "agent.py", Config(select=("RNK401",)))

    assert [f.message.split(" blocks")[0] for f in result.findings] == ["`requests.Session()`"]


def test_a_blocking_call_outside_an_async_def_is_not_reported() -> None:
    source = textwrap.dedent(
        """
        import time


        def wait():
            time.sleep(1)


        async def go():
            f = lambda: time.sleep(1)
        """
    )

    result = lint_source(source, "agent.py", Config(select=("RNK401",)))

    assert result.findings == []


# -- registration -----------------------------------------------------------------


def test_every_module_of_the_family_packages_is_imported_and_named() -> None:
    on_disk = sorted(
        "ranklint.rules." + ".".join(path.relative_to(RULES).with_suffix("").parts)
        for path in RULES.glob("*/*.py")
        if path.name != "__init__.py"
    )

    imported = _import_rule_modules()

    assert list(imported) == on_disk
    assert imported == RULE_MODULES


def test_every_registered_rule_is_found_by_its_code_and_unknown_codes_are_not() -> None:
    rules = registered_rules()

    assert [rule.code for rule in rules] == sorted(rule.code for rule in rules)
    assert all(rule_by_code(rule.code) is rule for rule in rules)
    assert rule_by_code("RNK999") is None


def _define(code: str, name: str, **extra: object) -> type[Rule]:
    attributes: dict[str, object] = {
        "code": code,
        "name": name,
        "severity": Severity.INFO,
        "summary": "x",
        "what": "x",
        "why": "x",
        "limits": "x",
        "valid": ("pass",),
        "invalid": ("pass",),
        **extra,
    }
    return type("Candidate", (Rule,), attributes)


@pytest.mark.parametrize("code", ["RNK12", "RNK1234", "XYZ123", "RNK12a", "RNKa12", "rnk123"])
def test_a_rule_code_not_of_the_form_rnk_and_three_digits_is_rejected(code: str) -> None:
    with pytest.raises(TypeError, match=f"Candidate: rule code '{code}' is not of the form RNK123"):
        _define(code, "candidate-rule")

    assert rule_by_code(code) is None


def test_a_rule_name_taken_by_another_code_is_rejected() -> None:
    with pytest.raises(
        TypeError,
        match=r"Candidate \(RNK998, parse-error\) clashes with ParseError \(RNK001, parse-error\)",
    ):
        _define("RNK998", "parse-error")

    assert rule_by_code("RNK998") is None


def test_a_rule_without_its_metadata_is_rejected_and_the_missing_names_are_listed() -> None:
    class Bare(Rule):  # a base class without a code is not registered
        pass

    with pytest.raises(TypeError, match=r"Incomplete \(RNK997\) lacks metadata: name, severity"):
        type("Incomplete", (Bare,), {"code": "RNK997"})

    assert rule_by_code("RNK997") is None
