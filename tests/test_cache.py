"""The result cache: hits, misses on content and configuration changes, corrupt
entries, concurrent writers, and subset runs that keep the whole project's call graph."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from ranklint import engine as engine_module
from ranklint.cache import (
    _MAGIC,
    CACHE_DIR_ENV,
    CACHE_DIR_NAME,
    Cache,
    config_fingerprint,
    default_cache_dir,
)
from ranklint.engine import linter as linter_module
from ranklint.engine import project_phase as project_phase_module
from ranklint.findings import InternalError
from ranklint.results import FileResult
from tests.conftest import write

RANKS = "import torch.distributed as dist\n\n\ndef is_main():\n    return dist.get_rank() == 0\n"
CKPT = "import torch.distributed as dist\n\n\ndef save_checkpoint(state):\n    dist.barrier()\n"
TRAIN = (
    "from pkg.ranks import is_main\nfrom pkg.ckpt import save_checkpoint\n\n\n"
    "def train(state):\n    if is_main():\n        save_checkpoint(state)\n"
)
BAD = "import torch.distributed as dist\n\ndist.init_process_group('gloo')\n"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts parses in this process (runs use jobs=1, so all work happens here)."""
    seen: list[str] = []
    real = linter_module.parse_source

    def counting(text: str):
        seen.append(text)
        return real(text)

    monkeypatch.setattr(linter_module, "parse_source", counting)
    return seen


def project(root: Path) -> Path:
    write(root / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "ranks.py", RANKS)
    write(root / "pkg" / "ckpt.py", CKPT)
    write(root / "pkg" / "train.py", TRAIN)
    return root


def run(
    root: Path, paths: list[Path] | None = None, **kwargs: object
) -> list[tuple[str, int, str]]:
    config = kwargs.pop("config", None) or Config(root=root)
    result = lint_paths(paths or [root], config, jobs=1, **kwargs)
    assert result.errors == []
    return [(Path(f.path).name, f.line, f.code) for f in result.findings]


def test_second_run_reuses_every_file_and_reports_the_same(
    tmp_path: Path, parses: list[str]
) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"

    first = run(root, cache_dir=cache)
    parsed_cold = len(parses)
    second = run(root, cache_dir=cache)

    assert first == second == [("train.py", 7, "RNK102")]
    # Cold: 4 files, and 2 walked again to place the finding's call chain.
    assert parsed_cold == 6
    assert len(parses) == parsed_cold  # warm: nothing parsed, positions came from the cache


def test_changed_file_is_parsed_again_and_its_findings_updated(
    tmp_path: Path, parses: list[str]
) -> None:
    root = project(tmp_path)
    write(root / "bad.py", "x = 1\n")
    cache = tmp_path / "cache"
    run(root, cache_dir=cache)
    before = len(parses)

    write(root / "bad.py", BAD)
    found = run(root, cache_dir=cache)

    assert len(parses) == before + 1
    assert ("bad.py", 3, "RNK101") in found


def test_configuration_change_misses_the_cache(tmp_path: Path, parses: list[str]) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"
    run(root, cache_dir=cache)
    before = len(parses)

    found = run(root, cache_dir=cache, config=Config(root=root, ignore=("RNK102",)))

    assert found == []
    assert len(parses) == before + 4
    assert config_fingerprint(Config(root=root)) != config_fingerprint(
        Config(root=root, ignore=("RNK102",))
    )


def test_corrupt_or_truncated_entries_are_ignored_and_rebuilt(
    tmp_path: Path, parses: list[str]
) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"
    expected = run(root, cache_dir=cache)
    entries = [p for p in cache.rglob("*") if p.is_file() and p.parent.parent.name[0].isdigit()]
    for index, entry in enumerate(entries):
        entry.write_bytes(b"garbage" if index % 2 else entry.read_bytes()[:20])
    before = len(parses)

    again = run(root, cache_dir=cache)
    after_rebuild = len(parses)
    rebuilt = run(root, cache_dir=cache)

    assert again == rebuilt == expected
    assert after_rebuild > before  # rebuilt once...
    assert len(parses) == after_rebuild  # ...then trusted again


def test_cache_directory_is_marked_and_git_ignored(tmp_path: Path) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"

    run(root, cache_dir=cache)

    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (
        (cache / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )


def test_unwritable_cache_location_does_not_fail_the_run(tmp_path: Path) -> None:
    root = project(tmp_path)
    blocker = write(tmp_path / "not-a-dir", "a file where the cache directory should be\n")

    assert run(root, cache_dir=blocker / "cache") == [("train.py", 7, "RNK102")]


def test_entries_written_concurrently_by_threads_stay_readable(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    root = project(tmp_path)
    path = str(root / "pkg" / "ckpt.py")
    data = (root / "pkg" / "ckpt.py").read_bytes()
    result = engine_module.Linter(Config(root=root)).lint_source(data, path)
    cache = Cache.for_config(Config(root=root), tmp_path / "cache")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: cache.put(path, data, result), range(64)))

    again = cache.get(path, data)
    assert again is not None
    summary = again.module_summary()
    assert summary is not None
    assert set(summary.functions) == {"save_checkpoint"}
    assert not [p for p in (tmp_path / "cache").rglob(".tmp-*")]


def test_concurrent_cli_runs_sharing_a_cache_agree(tmp_path: Path) -> None:
    root = project(tmp_path)
    for index in range(12):
        write(root / "pkg" / f"extra{index}.py", BAD)
    command = [sys.executable, "-m", "ranklint", "check", "--format", "json", "pkg"]
    env = {**os.environ, "RANKLINT_CACHE_DIR": str(tmp_path / "shared")}

    runs = [
        subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [process.communicate(timeout=120)[0] for process in runs]
    warm = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=120)

    assert all(process.returncode == 1 for process in runs)
    assert outputs[0] == outputs[1] == outputs[2] == warm.stdout
    assert len(json.loads(warm.stdout)) == 13


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_subset_run_reports_the_same_cross_file_finding_as_a_full_run(
    tmp_path: Path, warm: bool
) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"
    if warm:
        run(root, cache_dir=cache, whole_project=True)

    subset = run(root, [root / "pkg" / "train.py"], cache_dir=cache, whole_project=True)
    other_file = run(root, [root / "pkg" / "ckpt.py"], cache_dir=cache, whole_project=True)
    only_given = run(
        root, [root / "pkg" / "ckpt.py"], cache_dir=cache, whole_project=True, only_given_files=True
    )
    isolated = run(root, [root / "pkg" / "train.py"], cache_dir=cache)

    assert subset == [("train.py", 7, "RNK102")]
    # The helper's own run shows the finding its barrier causes at the caller.
    assert other_file == [("train.py", 7, "RNK102")]
    assert only_given == []  # findings located in the given files only
    assert isolated == []  # without the project index the chain is not seen


def test_cli_caches_in_the_project_root_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV)
    root = project(tmp_path)
    command = [sys.executable, "-m", "ranklint", "check"]

    plain = subprocess.run([*command, "--no-cache", "pkg"], cwd=root, capture_output=True)
    assert plain.returncode == 1
    assert not (root / CACHE_DIR_NAME).exists()

    cached = subprocess.run([*command, "pkg/train.py"], cwd=root, capture_output=True, text=True)
    assert cached.returncode == 1
    assert "pkg/train.py:7:9: RNK102" in cached.stdout
    assert (root / CACHE_DIR_NAME / ".gitignore").is_file()


def test_cache_location_comes_from_the_environment_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    assert default_cache_dir(tmp_path) == tmp_path / CACHE_DIR_NAME

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "elsewhere"))
    assert default_cache_dir(tmp_path) == tmp_path / "elsewhere"


def test_entry_holding_another_files_result_under_this_key_is_not_trusted(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache", "fp")
    data = b"x = 1\n"
    cache.put("a.py", data, FileResult("a.py"))
    key = cache.key("b.py", data)
    entry = cache.directory / key[:2] / key[2:]
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_bytes(_MAGIC + pickle.dumps((key, (FileResult("a.py"), None))))

    assert cache.get("a.py", data) == FileResult("a.py")
    assert cache.get("b.py", data) is None


def test_result_with_internal_errors_is_not_cached(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache", "fp")
    failed = FileResult("a.py", errors=[InternalError("a.py", "engine", "boom", "")])

    cache.put("a.py", b"x = 1\n", failed)

    assert cache.get("a.py", b"x = 1\n") is None


def test_cache_in_a_folder_whose_parents_do_not_exist_yet_stores_entries(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "deep" / "er" / "cache", "fp")

    cache.put("a.py", b"x = 1\n", FileResult("a.py"))

    assert cache.get("a.py", b"x = 1\n") == FileResult("a.py")
    assert (tmp_path / "deep" / "er" / "cache" / "CACHEDIR.TAG").is_file()


def test_file_name_that_is_not_valid_utf8_has_a_cache_key(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache", "fp")
    name = "b\udcff.py"  # an undecodable byte in a POSIX file name

    cache.put(name, b"x = 1\n", FileResult(name))

    assert cache.get(name, b"x = 1\n") == FileResult(name)
    assert cache.key(name, b"x = 1\n") != cache.key("b.py", b"x = 1\n")


# -- the project phase's own entry -------------------------------------------------


@pytest.fixture
def project_phases(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts call graphs built in this process (one per project phase that runs)."""
    built: list[int] = []
    real = project_phase_module.ProjectFacts

    def counting(summaries, settings):  # type: ignore[no-untyped-def]
        built.append(len(summaries))
        return real(summaries, settings)

    monkeypatch.setattr(project_phase_module, "ProjectFacts", counting)
    return built


def test_warm_run_of_unchanged_files_takes_the_cross_file_findings_from_the_cache(
    tmp_path: Path, project_phases: list[int]
) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"

    cold = run(root, cache_dir=cache)
    warm = run(root, cache_dir=cache)

    assert cold == warm == [("train.py", 7, "RNK102")]
    assert project_phases == [4]  # the cold run's only


def test_warm_run_of_unchanged_files_unpacks_no_summary(tmp_path: Path) -> None:
    root = project(tmp_path)
    config = Config(root=root)
    cache = Cache.for_config(config, tmp_path / "cache")
    files = [
        str(root / "pkg" / name) for name in ("__init__.py", "ranks.py", "ckpt.py", "train.py")
    ]
    engine_module.Linter(config).project_phase(
        engine_module.lint_files(files, config, jobs=1, cache=cache), cache=cache
    )

    warm = engine_module.lint_files(files, config, jobs=1, cache=cache)
    engine_module.Linter(config).project_phase(warm, cache=cache)

    assert [(f.line, f.code) for f in warm[3].findings] == [(7, "RNK102")]
    assert [result.summary for result in warm] == [None] * 4
    assert all(result.packed_summary is not None for result in warm)


def test_changed_helper_without_findings_updates_the_cross_file_finding_of_its_caller(
    tmp_path: Path, project_phases: list[int]
) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"
    before = run(root, cache_dir=cache)

    write(root / "pkg" / "ckpt.py", CKPT.replace("dist.barrier()", "pass"))
    after = run(root, cache_dir=cache)
    write(root / "pkg" / "ckpt.py", CKPT)
    restored = run(root, cache_dir=cache)

    assert before == restored == [("train.py", 7, "RNK102")]
    assert after == []
    assert len(project_phases) == 2  # cold, then the changed helper; restored: a hit


def test_run_over_other_files_does_not_reuse_the_project_entry(
    tmp_path: Path, project_phases: list[int]
) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"
    run(root, cache_dir=cache)
    given = [root / "pkg" / "train.py", root / "pkg" / "ckpt.py"]

    subset = run(root, given, cache_dir=cache)

    assert len(project_phases) == 2
    assert subset == run(root, given)


def test_corrupt_project_entry_is_ignored_and_rebuilt(
    tmp_path: Path, project_phases: list[int]
) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"
    expected = run(root, cache_dir=cache)
    (entry,) = (p for p in cache.rglob("*") if p.parent.name == "project")
    entry.write_bytes(_MAGIC + pickle.dumps(("another key", {})))

    again = run(root, cache_dir=cache)
    trusted = run(root, cache_dir=cache)

    assert again == trusted == expected
    assert len(project_phases) == 2  # rebuilt once, then trusted again


def test_project_key_needs_every_result_to_have_come_through_the_cache(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache", "fp")
    data = b"x = 1\n"
    stored = FileResult("a.py")
    cache.put("a.py", data, stored)
    hit = cache.get("a.py", data)
    assert hit is not None

    assert cache.project_key([stored, hit]) == cache.project_key([hit, hit])
    assert cache.project_key([hit]) != cache.project_key([hit, hit])
    assert cache.project_key([hit, FileResult("b.py")]) is None


def test_summary_read_back_from_the_cache_equals_the_one_stored(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = str(root / "pkg" / "ckpt.py")
    data = (root / "pkg" / "ckpt.py").read_bytes()
    fresh = engine_module.Linter(Config(root=root)).lint_source(data, path)
    cache = Cache.for_config(Config(root=root), tmp_path / "cache")
    cache.put(path, data, fresh)

    hit = cache.get(path, data)

    assert hit is not None
    assert hit.summary is None
    assert hit.module_summary() == fresh.summary
    assert hit == fresh


def test_a_cache_hit_stored_again_keeps_its_summary_packed_and_equal(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = str(root / "pkg" / "ckpt.py")
    data = (root / "pkg" / "ckpt.py").read_bytes()
    fresh = engine_module.Linter(Config(root=root)).lint_source(data, path)
    cache = Cache.for_config(Config(root=root), tmp_path / "cache")
    cache.put(path, data, fresh)
    hit = cache.get(path, data)
    assert hit is not None

    cache.put(path, data, hit)  # as the project phase does after placing call sites

    again = cache.get(path, data)
    assert (hit.summary, hit.packed_summary is not None) == (None, True)
    assert again is not None
    assert again.module_summary() == fresh.summary


_LOADED = """
import sys
from ranklint.faces.cli import main
code = main(sys.argv[1:])
heavy = ("libcst", "ranklint.engine", "ranklint.rules")
loaded = sorted(name for name in heavy if name in sys.modules)
sys.stderr.write(f"loaded: {','.join(loaded)}\\n")
raise SystemExit(code)
"""


def _check_reporting_loads(root: Path, cache: Path, *args: str) -> tuple[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, "check", "--cache-dir", str(cache), *args, "."],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    loaded = [line for line in done.stderr.splitlines() if line.startswith("loaded:")]
    return done.stdout, loaded[0]


@pytest.mark.parametrize("output", ["text", "json", "sarif"])
def test_warm_run_of_unchanged_files_loads_neither_libcst_nor_the_rules(
    tmp_path: Path, output: str
) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"
    cold_out, cold_loaded = _check_reporting_loads(root, cache, "--format", output)

    warm_out, warm_loaded = _check_reporting_loads(root, cache, "--format", output)

    assert warm_out == cold_out
    assert "RNK102" in warm_out
    assert cold_loaded == "loaded: libcst,ranklint.engine,ranklint.rules"
    # SARIF describes each rule: the rules (which import libcst), not the engine.
    expected = "loaded: libcst,ranklint.rules" if output == "sarif" else "loaded: "
    assert warm_loaded == expected


def test_warm_run_with_one_changed_file_loads_the_engine_and_reports_the_change(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    cache = tmp_path / "cache"
    _check_reporting_loads(root, cache)

    write(root / "pkg" / "bad.py", BAD)
    out, loaded = _check_reporting_loads(root, cache)

    assert loaded == "loaded: libcst,ranklint.engine,ranklint.rules"
    assert "bad.py:3:1: RNK101" in out
    assert "train.py:7:" in out
