"""The README's first commands are the ones CI and newcomers run."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT


def readme_commands() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    head = text.split("---", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", head)


def test_readme_starts_with_an_install_and_run_and_an_install_and_test_command() -> None:
    commands = readme_commands()

    assert len(commands) == 2
    assert "ranklint check fixtures/" in commands[0]
    assert "'.[test]'" in commands[1]
    assert "pytest" in commands[1]


def test_ci_script_runs_the_readme_test_command_verbatim() -> None:
    ci_script = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")

    assert readme_commands()[1] in ci_script.splitlines()
