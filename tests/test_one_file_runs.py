"""Runs over a few files of a project: only those files and what they import are
parsed, and their findings equal a whole run's, except those that need callers."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from ranklint import engine as engine_module
from ranklint.analysis.dependencies import (
    ModuleMap,
    import_closure,
    imported_names,
    module_name,
)
from tests.conftest import FIXTURES, write

Seen = tuple[int, int, str, str]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The first line of every source parsed in this process (runs use jobs=1)."""
    seen: list[str] = []
    real = engine_module.parse_source

    def counting(text: str):  # type: ignore[no-untyped-def]
        seen.append(text.splitlines()[0] if text else "")
        return real(text)

    monkeypatch.setattr(engine_module, "parse_source", counting)
    return seen


def _by_file(root: Path, config: Config) -> dict[str, list[Seen]]:
    found: dict[str, list[Seen]] = {}
    for finding in lint_paths([root], config, jobs=1).findings:
        found.setdefault(finding.path, []).append(
            (finding.line, finding.col, finding.code, finding.message)
        )
    return found


def _one_file(path: str, config: Config) -> list[Seen]:
    result = lint_paths([path], config, jobs=1, whole_project=True)
    assert result.errors == []
    return [(f.line, f.col, f.code, f.message) for f in result.findings]


# -- what the scan reads ------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import a.b as c, d\n", {"a.b", "d"}),
        ("x = 1; import e\n", {"e"}),
        ("def f():\n    import g.h\n", {"g.h"}),
        ("from p.q import (\n    r,\n    s as t,\n)\n", {"p.q", "p.q.r", "p.q.s"}),
        ("from p import r, \\\n    s\n", {"p", "p.r", "p.s"}),
        ("from . import sibling\n", {"pkg.sub", "pkg.sub.sibling"}),
        ("from .mod import f\n", {"pkg.sub.mod", "pkg.sub.mod.f"}),
        ("from ..up import f  # why\n", {"pkg.up", "pkg.up.f"}),
        ("text = 'no imports here'\n", set()),
    ],
)
def test_imported_names_of_each_import_form(source: str, expected: set[str]) -> None:
    assert imported_names(source, "pkg.sub.this", is_package=False) == expected


def test_relative_import_in_a_package_init_counts_from_the_package_itself() -> None:
    assert imported_names("from .core import run\n", "pkg", is_package=True) == {
        "pkg.core",
        "pkg.core.run",
    }


def test_dotted_name_means_the_module_under_a_shorter_or_longer_package_root(
    tmp_path: Path,
) -> None:
    write(tmp_path / "src" / "proj" / "__init__.py", "")
    write(tmp_path / "src" / "proj" / "utils.py", "")
    write(tmp_path / "other" / "utils.py", "")
    write(tmp_path / "other" / "helpers.py", "")
    paths = [str(p) for p in sorted(tmp_path.rglob("*.py"))]
    modules = ModuleMap(paths)

    found = modules.files_for("proj.utils.save")

    assert {Path(p).relative_to(tmp_path).as_posix() for p in found} == {
        "src/proj/__init__.py",
        "src/proj/utils.py",
        "other/utils.py",  # `utils` alone: a module named from a shorter root
    }
    assert module_name(str(tmp_path / "src" / "proj" / "utils.py")) == "proj.utils"


def test_import_closure_follows_imports_transitively_and_nothing_else(tmp_path: Path) -> None:
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "train.py", "from pkg.ckpt import save\n")
    write(tmp_path / "pkg" / "ckpt.py", "from . import io\n")
    write(tmp_path / "pkg" / "io.py", "import os\n")
    write(tmp_path / "pkg" / "unrelated.py", "from pkg.train import main\n")
    project = [str(p) for p in sorted(tmp_path.rglob("*.py"))]
    given = [str(tmp_path / "pkg" / "train.py")]

    closure = import_closure(given, [p for p in project if p not in given])

    assert [Path(p).name for p in closure] == ["__init__.py", "ckpt.py", "io.py"]


# -- what a run parses ---------------------------------------------------------------


def _package(root: Path) -> Path:
    write(root / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(root / "pkg" / "__init__.py", "# init\n")
    write(root / "pkg" / "ranks.py", "# ranks\nimport torch.distributed as dist\n\n\n"
          "def is_main():\n    return dist.get_rank() == 0\n")  # fmt: skip
    write(root / "pkg" / "ckpt.py", "# ckpt\nimport torch.distributed as dist\n\n\n"
          "def save(state):\n    dist.barrier()\n")  # fmt: skip
    write(root / "pkg" / "train.py", "# train\nfrom pkg.ranks import is_main\n"
          "from pkg.ckpt import save\n\n\ndef train(state):\n    if is_main():\n"
          "        save(state)\n")  # fmt: skip
    for index in range(5):
        write(root / "pkg" / f"other{index}.py", f"# other{index}\nx = {index}\n")
    return root


def test_cold_run_over_one_file_parses_only_it_and_what_it_imports(
    tmp_path: Path, parses: list[str]
) -> None:
    root = _package(tmp_path)

    found = _one_file(str(root / "pkg" / "train.py"), Config(root=root))

    assert [(line, code) for line, _, code, _ in found] == [(8, "RNK102")]
    # The per-file walks, then the walks that place the chain's call sites.
    assert sorted(set(parses)) == ["# ckpt", "# init", "# ranks", "# train"]


def test_run_over_one_file_takes_the_other_files_from_a_warm_cache(
    tmp_path: Path, parses: list[str]
) -> None:
    root = _package(tmp_path)
    config = Config(root=root)
    cache = tmp_path / "cache"
    lint_paths([root], config, jobs=1, cache_dir=cache)
    write(root / "pkg" / "train.py", (root / "pkg" / "train.py").read_text() + "# edited\n")
    parses.clear()

    result = lint_paths(
        [root / "pkg" / "train.py"], config, jobs=1, cache_dir=cache, whole_project=True
    )

    assert [(f.line, f.code) for f in result.findings] == [(8, "RNK102")]
    assert parses == ["# train", "# train"]  # its walk, then placing its call site


# -- the same findings as a whole run --------------------------------------------------


def _reached_from_a_caller(found: Seen) -> bool:
    # A helper is hot because a step loop in another file calls it: a caller.
    return found[2].startswith("RNK2") and "it is reached from a step loop" in found[3]


@pytest.mark.parametrize("select", [None, ("ALL",)], ids=["default", "all"])
def test_one_file_run_of_each_fixture_reports_what_a_whole_run_reports_there(
    tmp_path: Path, select: tuple[str, ...] | None
) -> None:
    root = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, root)
    write(root / "pyproject.toml", "[project]\nname = 'fixtures'\n")
    config = Config(root=root, select=select)
    whole = _by_file(root, config)

    for path in sorted(root.rglob("*.py")):
        alone = _one_file(str(path), config)
        expected = whole.get(str(path), [])
        missing = [found for found in expected if found not in alone]

        assert [found for found in alone if found not in expected] == [], path
        assert [found for found in missing if not _reached_from_a_caller(found)] == [], path


def _generated_project(root: Path, seed: int) -> None:
    """Modules in layers: each imports some of the layers below (absolutely or
    relatively), calls their helpers under rank tests or not, and some helpers
    issue collectives; names repeat across packages to exercise the matching."""
    rng = random.Random(seed)
    write(root / "pyproject.toml", "[project]\nname = 'gen'\n")
    modules: list[tuple[str, str, list[str]]] = []  # (package, module, functions)
    for layer in range(4):
        for index in range(3):
            package = rng.choice(["core", "train", "util"])
            name = f"m{layer}{index}"
            lines = ["import torch.distributed as dist"]
            calls: list[str] = []
            for other_package, other, functions in rng.sample(modules, min(len(modules), 2)):
                function = rng.choice(functions)
                form = rng.random()
                if other_package == package and form < 0.4:
                    lines.append(f"from .{other} import {function}")
                    calls.append(f"{function}()")
                elif form < 0.7:
                    lines.append(f"from pkg.{other_package} import {other}")
                    calls.append(f"{other}.{function}()")
                else:
                    lines.append(f"import pkg.{other_package}.{other} as {other}")
                    calls.append(f"{other}.{function}()")
            functions = []
            for number in range(2):
                function = f"f{layer}{index}{number}"
                functions.append(function)
                body = [rng.choice(["dist.barrier()", "pass", "dist.all_reduce(x)"])]
                for call in calls:
                    if rng.random() < 0.5:
                        body += ["if dist.get_rank() == 0:", f"    {call}"]
                    else:
                        body.append(call)
                lines += ["", "", f"def {function}(x=None):", *(f"    {b}" for b in body)]
            write(root / "pkg" / package / f"{name}.py", "\n".join(lines) + "\n")
            modules.append((package, name, functions))
    for package in ("", "core", "train", "util"):
        write(root / "pkg" / package / "__init__.py", "")


@pytest.mark.parametrize("seed", range(4))
def test_one_file_run_of_each_generated_module_reports_what_a_whole_run_reports_there(
    tmp_path: Path, seed: int
) -> None:
    _generated_project(tmp_path, seed)
    config = Config(root=tmp_path)
    whole = _by_file(tmp_path, config)

    for path in sorted(tmp_path.rglob("*.py")):
        assert _one_file(str(path), config) == whole.get(str(path), []), path
    assert any("RNK102" in code for found in whole.values() for _, _, code, _ in found)
