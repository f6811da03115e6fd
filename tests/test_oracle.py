"""The differential oracle (bench/recall/oracle.py): its generator, runner and judge.

The seeded slice (``oracle_known_limits.SLICE_COUNT`` programs) is run and
linted once per module (about 10 s) and marked slow. No recall target is
asserted: the slice's disagreements are compared with the checked-in list of
known limits instead.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ranklint.findings import Confidence
from tests import oracle_known_limits as known
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "bench" / "recall"))
import oracle

# -- the generator (no torch, fast) ----------------------------------------------


def _digest(programs: list[oracle.Program]) -> str:
    text = repr([(p.seed, p.cls, p.intent, p.features, p.files, p.world_sizes) for p in programs])
    return hashlib.sha256(text.encode()).hexdigest()


def test_generate_same_seed_twice_gives_the_same_program() -> None:
    first = oracle.generate_many(70, seed=5)
    second = oracle.generate_many(70, seed=5)

    assert first == second
    assert len({_digest([program]) for program in first}) == 70


def test_generate_in_another_process_with_another_hash_seed_gives_the_same_programs() -> None:
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import oracle, hashlib;"
        "ps = oracle.generate_many(70, seed=5);"
        "t = repr([(p.seed, p.cls, p.intent, p.features, p.files, p.world_sizes) for p in ps]);"
        "print(hashlib.sha256(t.encode()).hexdigest())"
    )
    digests = set()
    for hash_seed in ("0", "4242"):
        done = subprocess.run(
            [sys.executable, "-c", script, str(REPO_ROOT / "bench" / "recall")],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            check=True,
        )
        digests.add(done.stdout.strip())

    assert digests == {_digest(oracle.generate_many(70, seed=5))}


def test_generated_programs_compile_define_main_and_stay_short() -> None:
    programs = oracle.generate_many(300, seed=3)

    for program in programs:
        modules = {name for name in program.files if name.endswith(".py")}
        for name in modules:
            compile(program.files[name], name, "exec")
        assert "def main(rank, world_size):" in program.files["prog.py"]
        assert 5 <= program.size <= oracle.MAX_LINES, program.source()
        assert modules <= {"prog.py", f"helpers_{program.seed}.py"}
        # Besides the modules, only the empty marker files of `local-exit`.
        assert all(program.files[name] == "" for name in set(program.files) - modules)
        assert all(name.endswith(".done") for name in set(program.files) - modules)


def test_consecutive_seeds_cover_every_class_evenly_with_both_intents() -> None:
    programs = oracle.generate_many(300, seed=3)

    assert Counter(program.cls for program in programs) == dict.fromkeys(oracle.ALL_CLASSES, 20)
    assert {(p.cls, p.intent) for p in programs} == {
        (cls, intent) for cls in oracle.ALL_CLASSES for intent in ("diverge", "uniform")
    }


def test_grammar_v1_programs_are_those_of_the_first_grammar() -> None:
    # The digest of the first 140 programs of seed 5 before the second family was
    # added: every v1 program stays byte-identical, so figures measured on v1 compare.
    programs = oracle.generate_many(140, seed=5, grammar="v1")

    assert _digest(programs) == ("7258ff46459ab53e1e29eb514653a23deda886ec31e71d20220cd030b68fa742")
    assert {p.cls for p in programs} == set(oracle.CLASSES)


def test_grammar_all_interleaves_the_three_families_seeds_of_the_same_run() -> None:
    every = oracle.program_seeds(150, 5)
    v1 = oracle.program_seeds(70, 5, "v1")
    v2 = oracle.program_seeds(60, 5, "v2")
    v3 = oracle.program_seeds(20, 5, "v3")

    assert sorted(every) == sorted(v1 + v2 + v3)
    assert [oracle.family(seed) for seed in every[:15]] == ["v1"] * 7 + ["v2"] * 6 + ["v3"] * 2
    assert {oracle.generate(seed).cls for seed in v2} == set(oracle.CLASSES_V2)
    assert {oracle.generate(seed).cls for seed in v3} == set(oracle.CLASSES_V3)


def test_grammar_unknown_name_is_refused_with_the_names_it_accepts() -> None:
    with pytest.raises(ValueError, match="v1, v2, v3, all"):
        oracle.program_seeds(10, 5, "v4")


# -- the judge (no run) -------------------------------------------------------------


def _judged(*, diverges: bool, findings: list[oracle.StaticFinding]) -> oracle.Judged:
    program = oracle.generate(7)
    sites = [("prog.py", 9), ("prog.py", 14)] if diverges else []
    runs = [oracle.Run(2, "divergence" if diverges else "ok", "", sites)]
    return oracle.Judged(program, runs, findings)


def _finding(
    line: int, confidence: str = "high", trace: tuple[tuple[str, int], ...] = ()
) -> oracle.StaticFinding:
    return oracle.StaticFinding("RNK102", "prog.py", line, line, confidence, trace, "")


def test_verdict_finding_on_a_named_line_is_caught_in_its_tier_and_below() -> None:
    judged = _judged(diverges=True, findings=[_finding(9, "medium")])

    assert judged.verdict(Confidence.HIGH) == "missed"
    assert judged.verdict(Confidence.MEDIUM) == "caught"


def test_verdict_finding_whose_trace_passes_a_named_line_is_caught() -> None:
    traced = _finding(3, trace=(("helpers_7.py", 2), ("prog.py", 14)))

    assert _judged(diverges=True, findings=[traced]).verdict(Confidence.HIGH) == "caught"


def test_verdict_divergent_program_with_findings_on_other_lines_only_is_elsewhere() -> None:
    judged = _judged(diverges=True, findings=[_finding(11)])

    assert judged.verdict(Confidence.HIGH) == "elsewhere"
    assert judged.disagrees(Confidence.HIGH)


def test_verdict_any_finding_on_a_program_that_never_diverges_is_a_false_alarm() -> None:
    alarmed = _judged(diverges=False, findings=[_finding(11)])
    quiet = _judged(diverges=False, findings=[_finding(11, "medium")])

    assert alarmed.verdict(Confidence.HIGH) == "false-alarm"
    assert quiet.verdict(Confidence.HIGH) == "clean"
    assert quiet.verdict(Confidence.MEDIUM) == "false-alarm"


def test_tiers_read_off_one_lint_equal_separate_lints_at_each_confidence(
    tmp_path: Path,
) -> None:
    from ranklint import Config, lint_paths

    for program in oracle.generate_many(15, seed=2):
        folder = tmp_path / f"p{program.seed}"
        oracle.write(program, folder)
        every = oracle.lint_program(folder)
        for name, tier in oracle.TIERS:
            config = Config(
                select=oracle.SELECT, ignore=oracle.IGNORE, confidence=name, root=folder
            )
            alone = lint_paths([folder], config, jobs=1)
            expected = [(f.code, f.line) for f in alone.findings]
            assert [(f.code, f.line) for f in every if oracle.in_tier(f, tier)] == expected
        assert sorted(p.name for p in folder.iterdir()) == sorted(program.files)


# -- the slice (runs and lints: slow) ----------------------------------------------------


@pytest.fixture(scope="module")
def judged_slice() -> list[oracle.Judged]:
    pytest.importorskip("torch", reason="the oracle's runs need torch")
    programs = oracle.generate_many(known.SLICE_COUNT, known.SLICE_SEED)
    return oracle.judge_many(programs)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_slice_every_class_has_divergent_and_non_divergent_programs(
    judged_slice: list[oracle.Judged],
) -> None:
    assert len(judged_slice) >= 200
    outcomes = {(item.program.cls, item.diverges) for item in judged_slice}

    assert outcomes == {(cls, diverges) for cls in oracle.ALL_CLASSES for diverges in (True, False)}
    divergent = sum(item.diverges for item in judged_slice)
    assert 0.35 <= divergent / len(judged_slice) <= 0.65


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_slice_no_program_raises_or_times_out_on_any_rank(
    judged_slice: list[oracle.Judged],
) -> None:
    bugs = [oracle.describe(item) for item in judged_slice if item.generator_bug]

    assert bugs == []


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_slice_divergent_runs_name_a_line_of_the_program(
    judged_slice: list[oracle.Judged],
) -> None:
    nameless = [item.program.seed for item in judged_slice if item.diverges and not item.sites]

    assert nameless == []


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_slice_disagreements_are_exactly_the_known_limits(
    judged_slice: list[oracle.Judged],
) -> None:
    found = oracle.disagreements(judged_slice)
    listed = {key: (cls, verdict) for key, (cls, verdict, _) in known.KNOWN_LIMITS.items()}
    by_seed = {item.program.seed: item for item in judged_slice}

    new = sorted(set(found) - set(listed))
    gone = sorted(set(listed) - set(found))
    changed = sorted(key for key in set(found) & set(listed) if found[key] != listed[key])
    shown = [oracle.describe(by_seed[seed]) for seed, _ in [*new, *changed][:3]]
    assert (new, gone, changed) == ([], [], []), "\n\n".join(shown)
