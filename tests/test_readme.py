"""The README's first commands are the ones CI and newcomers run, and its sample output
is an excerpt of a real run."""

from __future__ import annotations

import re

import pytest

from ranklint.docs_sample import (
    SAMPLE_END,
    SAMPLE_START,
    SampleError,
    SampleRun,
    excerpt,
    render_readme,
    run_sample,
)
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


def _sample_block(readme: str) -> str:
    start = readme.index(SAMPLE_START) + len(SAMPLE_START)
    return readme[start : readme.index(SAMPLE_END)]


def test_readme_sample_output_is_an_excerpt_of_a_fresh_run() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    run = run_sample(REPO_ROOT)

    fresh = render_readme(readme, run)

    assert fresh == readme, "run `python -m ranklint.docs docs/` to refresh the README sample"
    # Each part of the excerpt between `...` lines is printed text, whole and in order.
    block = _sample_block(readme)
    command = "$ ranklint check fixtures/\n"
    body = block[block.index(command) + len(command) : block.rindex("```")]
    pieces = [piece.strip("\n") for piece in body.split("\n...\n")]
    printed, position = run.stdout + run.stderr, 0
    for piece in pieces:
        found = printed.find(piece, position)
        assert found >= position, piece
        position = found + len(piece)
    assert len(pieces) == 4  # three parts of the findings, the closing lines


def test_readme_sample_shows_frames_a_call_chain_and_the_summary_without_local_paths() -> None:
    block = _sample_block((REPO_ROOT / "README.md").read_text(encoding="utf-8"))

    assert "$ ranklint check fixtures/\n" in block
    assert "\n    fixtures/samples/trainer_pkg/checkpoint.py:12:5: `dist.barrier()` here\n" in block
    assert re.search(r"\n\d+ \| .*\n +\| +\^+\n", block)  # a code frame with its marker
    assert re.search(r"\nFound \d+ findings \(.*\) in \d+ files \(\d+ files checked\)\.\n", block)
    assert str(REPO_ROOT) not in block
    assert not re.search(r"/(home|tmp|Users|root|work)/", block)


def test_sample_excerpt_keeps_the_chosen_findings_and_marks_the_others_left_out() -> None:
    blocks = [
        "fixtures/samples/divergent_trainer.py:1:1: RNK102 a\n  |\n1 | x\n  | ^\n  |",
        "fixtures/samples/divergent_trainer.py:2:1: RNK103 b",
        "fixtures/samples/other.py:1:1: RNK301 c",
        "fixtures/samples/trainer_pkg/train.py:3:1: RNK102 d\n    trace",
        "fixtures/samples/z.py:1:1: RNK301 e",
    ]
    run = SampleRun("\n\n".join(blocks) + "\n\n", "Found 5 findings.\n")

    text = excerpt(run)

    assert text == (
        "$ ranklint check fixtures/\n"
        f"{blocks[0]}\n\n{blocks[1]}\n\n...\n\n{blocks[3]}\n\n...\n"
        "Found 5 findings.\n"
    )


def test_sample_excerpt_of_a_run_without_a_chosen_finding_is_an_error() -> None:
    run = SampleRun("fixtures/samples/z.py:1:1: RNK301 e\n\n", "Found 1 finding.\n")

    with pytest.raises(SampleError, match=r"no RNK102 in fixtures/samples/divergent_trainer\.py"):
        excerpt(run)
