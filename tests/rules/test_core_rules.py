"""Rules whose behaviour the examples pin only in part: which files RNK107 leaves
alone, what RNK401 advises for each blocking call, and how rules register."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.findings import Severity
from ranklint.rules import RULE_MODULES, _import_rule_modules, rule_by_code
from ranklint.rules.base import Rule, registered_rules
from tests.conftest import REPO_ROOT

RULES = REPO_ROOT / "src" / "ranklint" / "rules"

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


def test_a_barrier_at_module_level_outside_a_main_guard_is_reported() -> None:
    source = "import torch.distributed as dist\n\ndist.barrier()\n"

    result = lint_source(source, "pkg/setup_env.py", Config(select=("RNK107",)))

    assert ([f.line for f in result.findings], result.errors) == ([3], [])


# -- messages the examples do not show in full -------------------------------------

_SYNC = (
    "`{text}` copies a tensor to the host and waits for the device to finish all queued "
    "work, every step: {where}; keep the value on the device (accumulate `x.detach()`) "
    "and read it on the host once per log interval (`if step % log_every == 0:`)"
)


def test_a_host_sync_in_a_trainer_hook_says_the_framework_calls_it_every_step() -> None:
    source = textwrap.dedent(
        """
        from transformers import Trainer


        class MyTrainer(Trainer):
            def compute_loss(self, model, inputs):
                loss = model(**inputs).loss
                print(loss.item())
                return loss
        """
    ).lstrip("\n")

    result = lint_source(source, "trainer.py", Config(select=("RNK201",)))

    assert [f.message for f in result.findings] == [
        _SYNC.format(
            text="loss.item()",
            where="it is in `MyTrainer.compute_loss`, which is a step hook of a `Trainer` "
            "subclass (the framework calls it every step)",
        )
    ]


def test_a_host_sync_reached_from_a_forward_helper_in_another_file_shows_the_chain(
    tmp_path: Path,
) -> None:
    (tmp_path / "model.py").write_text(
        "import torch\nfrom torch import nn\nfrom helpers import log_value\n\n\n"
        "class Block(nn.Module):\n"
        "    def forward_step(self, x: torch.Tensor):\n"
        "        return log_value(x)\n",
        encoding="utf-8",
    )
    helpers = tmp_path / "helpers.py"
    helpers.write_text(
        "import torch\n\n\ndef log_value(x: torch.Tensor):\n    return x.item()\n",
        encoding="utf-8",
    )

    result = lint_paths([str(tmp_path)], Config(select=("RNK201",), confidence="medium"), jobs=1)

    assert [f.message for f in result.findings] == [
        _SYNC.format(
            text="x.item()",
            where="it is reached from `Block.forward_step`, which is a forward helper of an "
            f"`nn.Module`: log_value() -> x.item() at {helpers}:5",
        )
    ]


@pytest.mark.parametrize(
    ("ranks", "shown"),
    [
        # 40 characters: shown whole.
        ("ranks=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", "ranks=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"),
        # 41: cut to 37 and "...".
        ("ranks=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100]", "ranks=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..."),
        # none: the call as written.
        ("", ""),
    ],
)
def test_the_arguments_of_a_group_creation_are_shown_up_to_forty_characters(
    ranks: str, shown: str
) -> None:
    source = (
        "import torch.distributed as dist\n\n\n"
        f"def rebuild():\n    if dist.get_rank() == 0:\n        dist.new_group({ranks})\n"
    )

    result = lint_source(source, "groups.py", Config(select=("RNK105",)))

    assert [f.message.split(" is reached")[0] for f in result.findings] == [f"`new_group({shown})`"]


# -- RNK104 and RNK108: which arguments count ------------------------------------------


@pytest.mark.parametrize(
    ("call", "columns"),
    [
        ("dist.broadcast(t, group_src=dist.get_rank(), group=g)", [33]),
        ("dist.broadcast(t, src=dist.get_rank())", [27]),
        # point-to-point: the caller's own rank as the peer is not a shared root
        ("dist.send(t, dst=dist.get_rank())", []),
        ("dist.isend(t, dst=dist.get_rank())", []),
    ],
)
def test_every_root_argument_of_a_synchronising_collective_is_checked_for_the_own_rank(
    call: str, columns: list[int]
) -> None:
    source = f"import torch.distributed as dist\n\n\ndef f(t, g):\n    {call}\n"

    result = lint_source(source, "m.py", Config(select=("RNK104",)))

    assert [f.col for f in result.findings] == columns


@pytest.mark.parametrize(
    ("body", "lines"),
    [
        # a group used through `get_group()`, or passed positionally, is a group
        ("sub = mesh.get_group(0)\n    dist.barrier()", [6]),
        ("dist.broadcast(t, 0, mesh)\n    dist.barrier()", [6]),
        # a parameter whose methods are called is not therefore a group
        ("mesh.append(t)\n    dist.barrier()", []),
        # unpacked arguments may carry the group
        ("dist.all_reduce(*args)\n    sub = mesh.get_group(0)", []),
        # a condition that mentions the group, even inside a lambda, is a fallback
        (
            "if any(map(lambda r: r is mesh, args)):\n        dist.barrier()\n"
            "    x = mesh.get_group(0)",
            [],
        ),
        ("if any(args):\n        dist.barrier()\n    x = mesh.get_group(0)", [6]),
    ],
)
def test_a_collective_without_the_group_a_function_was_given_is_reported(
    body: str, lines: list[int]
) -> None:
    source = f"import torch.distributed as dist\n\n\ndef f(t, mesh, *args):\n    {body}\n"

    result = lint_source(source, "m.py", Config(select=("RNK108",), confidence="low"))

    assert [f.line for f in result.findings] == lines


# -- findings reported after the walk keep their statement ---------------------------


@pytest.mark.parametrize(
    ("comment_line", "lines"),
    [
        # On the first line of the statement holding the reported call: it applies.
        (1, []),
        # On a line of another statement: it does not.
        (0, [8]),
    ],
)
def test_a_suppression_on_its_statement_applies_to_a_finding_reported_after_the_walk(
    comment_line: int, lines: list[int]
) -> None:
    body = [
        "avg = torch.stack(outputs).mean()",
        "work = (",
        "    dist.all_reduce(avg, op=dist.ReduceOp.SUM)",
        ")",
    ]
    body[comment_line] += "  # noqa: RNK112"
    source = "import torch\nimport torch.distributed as dist\n\n\ndef end(outputs):\n"
    source += "".join(f"    {line}\n" for line in body)

    result = lint_source(source, "m.py", Config(select=("RNK112",)))

    assert [f.line for f in result.findings] == lines
