"""Runs over a few files of a project: only those files and the files their calls
lead into are parsed, and their findings equal a whole run's, except those that
need callers."""

from __future__ import annotations

import logging
import random
import shutil
from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from ranklint import engine as engine_module
from ranklint.analysis.project.dependencies import ModuleMap, module_name
from ranklint.engine import linter as linter_module
from tests.conftest import FIXTURES, write

Seen = tuple[int, int, str, str]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The first line of every source parsed in this process (runs use jobs=1)."""
    seen: list[str] = []
    real = linter_module.parse_source

    def counting(text: str):  # type: ignore[no-untyped-def]
        seen.append(text.splitlines()[0] if text else "")
        return real(text)

    monkeypatch.setattr(linter_module, "parse_source", counting)
    return seen


def _by_file(root: Path, config: Config) -> dict[str, list[Seen]]:
    found: dict[str, list[Seen]] = {}
    for finding in lint_paths([root], config, jobs=1).findings:
        found.setdefault(finding.path, []).append(
            (finding.line, finding.col, finding.code, finding.message)
        )
    return found


def _one_file(path: str, config: Config) -> list[Seen]:
    # Findings located in the file (those elsewhere reached through it: test_through_given_files).
    result = lint_paths([path], config, jobs=1, whole_project=True, only_given_files=True)
    assert result.errors == []
    return [(f.line, f.col, f.code, f.message) for f in result.findings]


# -- which files a dotted name may mean ------------------------------------------


def _modules(root: Path, *files: str) -> ModuleMap:
    for file in files:
        write(root / file, "")
    return ModuleMap([str(p) for p in sorted(root.rglob("*.py"))])


def _relative(root: Path, found: set[str]) -> set[str]:
    return {Path(p).relative_to(root).as_posix() for p in found}


def test_call_target_leads_into_its_longest_prefix_short_of_the_called_name(
    tmp_path: Path,
) -> None:
    # `pkg.utils` called as a function lives in `pkg/__init__.py`, even if a
    # module `pkg/utils.py` exists (the call graph never takes the whole name).
    modules = _modules(tmp_path, "pkg/__init__.py", "pkg/utils.py")

    assert _relative(tmp_path, modules.files_for("pkg.utils", whole=False)) == {"pkg/__init__.py"}
    assert _relative(tmp_path, modules.files_for("pkg.utils")) == {"pkg/utils.py"}


def test_dotted_name_leads_into_its_longest_prefix_that_names_a_module(tmp_path: Path) -> None:
    modules = _modules(tmp_path, "pkg/__init__.py", "pkg/utils.py", "pkg/sub/__init__.py")

    assert _relative(tmp_path, modules.files_for("pkg.utils.save")) == {"pkg/utils.py"}
    assert _relative(tmp_path, modules.files_for("pkg.sub.run")) == {"pkg/sub/__init__.py"}
    assert _relative(tmp_path, modules.files_for("pkg.missing.run")) == {"pkg/__init__.py"}
    assert modules.files_for("numpy.mean") == set()


def test_dotted_name_also_leads_into_modules_named_from_another_package_root(
    tmp_path: Path,
) -> None:
    modules = _modules(tmp_path, "src/proj/__init__.py", "src/proj/utils.py", "other/helpers.py")

    # `other/helpers.py` is the module `helpers`; `tools.helpers` may mean it.
    assert _relative(tmp_path, modules.files_for("tools.helpers.f")) == {"other/helpers.py"}
    assert _relative(tmp_path, modules.files_for("proj.utils.save")) == {"src/proj/utils.py"}
    assert module_name(str(tmp_path / "src" / "proj" / "utils.py")) == "proj.utils"


def test_ambiguous_match_counts_every_candidate_and_the_shorter_prefixes(tmp_path: Path) -> None:
    # Two modules named `utils` under other roots: the call graph matches
    # neither and goes on to `a`, so all of them count.
    modules = _modules(tmp_path, "x/utils.py", "y/utils.py", "a/__init__.py")

    assert _relative(tmp_path, modules.files_for("a.utils.f")) == {
        "x/utils.py",
        "y/utils.py",
        "a/__init__.py",
    }


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


def test_cold_run_over_one_file_parses_only_it_and_what_its_calls_lead_into(
    tmp_path: Path, parses: list[str]
) -> None:
    root = _package(tmp_path)

    found = _one_file(str(root / "pkg" / "train.py"), Config(root=root))

    assert [(line, code) for line, _, code, _ in found] == [(8, "RNK102")]
    # The per-file walks, then the walks that place the chain's call sites.
    assert sorted(set(parses)) == ["# ckpt", "# ranks", "# train"]


@pytest.mark.parametrize("uncalled_change", [False, True], ids=["alone", "with-uncalled-change"])
def test_run_over_one_changed_file_parses_only_it_and_takes_the_rest_from_a_warm_cache(
    tmp_path: Path, parses: list[str], uncalled_change: bool
) -> None:
    root = _package(tmp_path)
    config = Config(root=root)
    cache = tmp_path / "cache"
    lint_paths([root], config, jobs=1, cache_dir=cache)
    write(root / "pkg" / "train.py", (root / "pkg" / "train.py").read_text() + "# edited\n")
    if uncalled_change:  # a file train.py never calls changed too: it stays unparsed
        write(root / "pkg" / "other3.py", "# other3, edited\nx = 33\n")
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


def test_cold_run_follows_calls_through_a_package_that_re_exports_a_helper(
    tmp_path: Path, parses: list[str]
) -> None:
    root = _package(tmp_path)
    write(root / "pkg" / "api.py", "# api\nfrom pkg.ckpt import save\n")
    write(root / "pkg" / "train.py", "# train\nfrom pkg.ranks import is_main\n"
          "from pkg import api\n\n\ndef train(state):\n    if is_main():\n"
          "        api.save(state)\n")  # fmt: skip

    found = _one_file(str(root / "pkg" / "train.py"), Config(root=root))

    assert [(line, code) for line, _, code, _ in found] == [(8, "RNK102")]
    assert sorted(set(parses)) == ["# api", "# ckpt", "# ranks", "# train"]


def test_cold_run_does_not_parse_what_the_given_file_imports_but_never_calls(
    tmp_path: Path, parses: list[str]
) -> None:
    root = _package(tmp_path)
    write(root / "pkg" / "train.py", "# train\nfrom pkg import other0, other1\n"
          "import pkg.other2\n\n\ndef train():\n    return 1\n")  # fmt: skip

    _one_file(str(root / "pkg" / "train.py"), Config(root=root))

    assert parses == ["# train"]


@pytest.mark.parametrize(("base", "expected"), [("nn.Module", [(8, "RNK201")]), ("object", [])])
def test_cold_run_reads_the_base_class_in_another_file_that_makes_forward_hot(
    tmp_path: Path, parses: list[str], base: str, expected: list[tuple[int, str]]
) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "base.py", f"# base\nfrom torch import nn\n\n\nclass Base({base}):\n"
          "    pass\n")  # fmt: skip
    write(tmp_path / "pkg" / "model.py", "# model\nimport torch\nfrom pkg.base import Base\n\n\n"
          "class Model(Base):\n    def forward(self, x):\n        if x.sum().item() > 0:\n"
          "            return x\n        return -x\n")  # fmt: skip
    # A forward's sync that decides a branch is low: the program may need it.
    config = Config(root=tmp_path, select=("RNK201",), confidence="low")

    found = _one_file(str(tmp_path / "pkg" / "model.py"), config)

    assert [(line, code) for line, _, code, _ in found] == expected
    assert sorted(set(parses)) == ["# base", "# model"]


def test_exact_module_match_stops_the_lookup_before_shorter_prefixes(tmp_path: Path) -> None:
    # `proj.utils` names `src/proj/utils.py` exactly; `other/utils.py` (module
    # `utils`) may mean it too; `proj` itself is not looked at.
    modules = _modules(tmp_path, "src/proj/__init__.py", "src/proj/utils.py", "other/utils.py")

    assert _relative(tmp_path, modules.files_for("proj.utils.save")) == {
        "src/proj/utils.py",
        "other/utils.py",
    }


def test_only_match_under_another_root_stops_the_lookup(tmp_path: Path) -> None:
    # `pkg.helpers` may only mean `lib/pkg/helpers.py`, named `lib.pkg.helpers`
    # from its longer root; `pkg/__init__.py` (module `pkg`) is not looked at.
    modules = _modules(
        tmp_path, "lib/__init__.py", "lib/pkg/__init__.py", "lib/pkg/helpers.py", "pkg/__init__.py"
    )

    assert _relative(tmp_path, modules.files_for("pkg.helpers.f")) == {"lib/pkg/helpers.py"}


def test_cold_run_loads_the_package_that_defines_a_called_name_and_not_the_module_named_alike(
    tmp_path: Path, parses: list[str]
) -> None:
    root = _package(tmp_path)
    write(root / "pkg" / "__init__.py", "# init\n\n\ndef helper():\n    pass\n")
    write(root / "pkg" / "helper.py", "# helper module\n")
    write(root / "pkg" / "train.py", "# train\nimport pkg\n\n\ndef train():\n    pkg.helper()\n")

    _one_file(str(root / "pkg" / "train.py"), Config(root=root))

    assert sorted(set(parses)) == ["# init", "# train"]


def _cycle(root: Path) -> None:
    """`pkg.a.ping()` and `pkg.b.pong()` call each other."""
    write(root / "pkg" / "a.py", "# a\nfrom pkg import b\n\n\ndef ping():\n    b.pong()\n")
    write(root / "pkg" / "b.py", "# b\nfrom pkg import a\n\n\ndef pong():\n    a.ping()\n")


def test_cold_run_follows_calls_through_a_cycle_and_past_it(
    tmp_path: Path, parses: list[str]
) -> None:
    root = _package(tmp_path)
    _cycle(root)
    write(root / "pkg" / "train.py", "# train\nfrom pkg import a\nfrom pkg.ckpt import save\n\n\n"
          "def train(state):\n    a.ping()\n    a.ping()\n    save(state)\n")  # fmt: skip

    _one_file(str(root / "pkg" / "train.py"), Config(root=root))

    assert sorted(set(parses)) == ["# a", "# b", "# ckpt", "# train"]


def test_cold_run_reads_a_base_class_imported_relatively(tmp_path: Path, parses: list[str]) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "base.py", "# base\nfrom torch import nn\n\n\nclass Base(nn.Module):\n"
          "    pass\n")  # fmt: skip
    write(tmp_path / "pkg" / "model.py", "# model\nfrom .base import Base\n\n\n"
          "class Model(Base):\n    def forward(self, x):\n        return x.item()\n")  # fmt: skip

    config = Config(root=tmp_path, select=("RNK201",), confidence="medium")
    found = _one_file(str(tmp_path / "pkg" / "model.py"), config)

    assert [(line, code) for line, _, code, _ in found] == [(7, "RNK201")]
    assert sorted(set(parses)) == ["# base", "# model"]


def test_cold_run_goes_on_with_the_other_functions_after_meeting_a_cycle(
    tmp_path: Path, parses: list[str]
) -> None:
    # `second` reaches the cycle a <-> b first; `first` still leads, through c,
    # into d, whose barrier makes the call under the rank test a finding.
    root = _package(tmp_path)
    _cycle(root)
    write(root / "pkg" / "c.py", "# c\nfrom pkg import d\n\n\ndef deep():\n    d.deeper()\n")
    write(root / "pkg" / "d.py", "# d\nimport torch.distributed as dist\n\n\n"
          "def deeper():\n    dist.barrier()\n")  # fmt: skip
    write(root / "pkg" / "train.py", "# train\nfrom pkg import a, b, c\n"
          "from pkg.ranks import is_main\n\n\ndef first():\n    if is_main():\n"
          "        c.deep()\n\n\ndef second():\n    a.ping()\n    b.pong()\n")  # fmt: skip

    found = _one_file(str(root / "pkg" / "train.py"), Config(root=root))

    assert [(line, code) for line, _, code, _ in found] == [(8, "RNK102")]
    assert sorted(set(parses)) == ["# a", "# b", "# c", "# d", "# ranks", "# train"]


# -- checks that need every file, and the cache ----------------------------------------

_MESH = (
    "# mesh\nfrom torch.distributed.device_mesh import init_device_mesh\n\n\n"
    "def build(world_size):\n"
    '    return init_device_mesh("cuda", (world_size // 2, 2), mesh_dim_names=("dp", "tp"))\n'
)
_USES = (
    "# uses\nfrom torch.distributed.device_mesh import init_device_mesh\n\n\n"
    "def groups(mesh):\n"
    '    local = init_device_mesh("cuda", (2,), mesh_dim_names=("dp",))\n'
    '    return mesh["tp"], mesh["dp_shrd"], local\n'
)


def _mesh_project(root: Path) -> Config:
    write(root / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "mesh.py", _MESH)
    write(root / "pkg" / "uses.py", _USES)
    return Config(root=root, select=("RNK507",))


def test_whole_run_reports_a_mesh_dimension_no_file_declares(tmp_path: Path) -> None:
    config = _mesh_project(tmp_path)

    found = _by_file(tmp_path, config)

    assert [(line, code) for line, _, code, _ in found[str(tmp_path / "pkg" / "uses.py")]] == [
        (7, "RNK507")
    ]


def test_one_file_run_without_every_file_reports_nothing_for_mesh_dimensions(
    tmp_path: Path,
) -> None:
    # mesh.py is not called from uses.py, so the run does not see it: "tp"
    # would look undeclared; so "dp_shrd" is not judged either.
    config = _mesh_project(tmp_path)

    assert _one_file(str(tmp_path / "pkg" / "uses.py"), config) == []


def test_one_file_run_with_every_file_known_reports_mesh_dimensions_like_a_whole_run(
    tmp_path: Path,
) -> None:
    config = _mesh_project(tmp_path)
    cache = tmp_path / ".cache"
    lint_paths([tmp_path], config, jobs=1, cache_dir=cache)

    result = lint_paths(
        [tmp_path / "pkg" / "uses.py"], config, jobs=1, cache_dir=cache, whole_project=True
    )

    assert [(f.line, f.code, f.col) for f in result.findings] == [(7, "RNK507", 24)]  # dp_shrd


def test_files_a_cold_one_file_run_parsed_are_cached_for_the_next_run(
    tmp_path: Path, parses: list[str]
) -> None:
    root = _package(tmp_path)
    config = Config(root=root)
    cache = tmp_path / ".cache"
    given = [root / "pkg" / "train.py"]
    first = lint_paths(given, config, jobs=1, cache_dir=cache, whole_project=True)
    parses.clear()

    again = lint_paths(given, config, jobs=1, cache_dir=cache, whole_project=True)

    assert [(f.line, f.code) for f in again.findings] == [(8, "RNK102")]
    assert again.findings == first.findings
    assert parses == []


def test_warm_run_of_unchanged_files_runs_neither_the_engine_nor_the_project_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _mesh_project(tmp_path)
    cache = tmp_path / ".cache"
    cold = lint_paths([tmp_path], config, jobs=1, cache_dir=cache)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a warm run reached the engine")

    monkeypatch.setattr(engine_module, "lint_files", refuse)
    monkeypatch.setattr(engine_module.Linter, "project_phase", refuse)
    warm = lint_paths([tmp_path], config, jobs=1, cache_dir=cache)

    assert warm.findings == cold.findings
    assert [(Path(f.path).name, f.line) for f in warm.findings] == [("uses.py", 7)]


def test_one_file_run_whose_calls_reach_every_file_reports_mesh_dimensions(
    tmp_path: Path,
) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(tmp_path / "mesh.py", _MESH)
    write(tmp_path / "uses.py", _USES.replace("# uses\n", "# uses\nimport mesh\n")
          + "\n\ndef main():\n    groups(mesh.build(8))\n")  # fmt: skip

    found = _one_file(str(tmp_path / "uses.py"), Config(root=tmp_path, select=("RNK507",)))

    assert [(line, code) for line, _, code, _ in found] == [(8, "RNK507")]


def test_one_file_run_without_every_file_still_reports_a_mismatch_within_one_call(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The shape/name mismatch needs one call only: it is reported in every run,
    # while the undeclared-name check, which needs every file, says why it is silent.
    config = _mesh_project(tmp_path)
    write(
        tmp_path / "pkg" / "uses.py",
        _USES.replace('(2,), mesh_dim_names=("dp",)', '(2, 4), mesh_dim_names=("dp",)'),
    )

    with caplog.at_level(logging.INFO, logger="ranklint.engine"):
        found = _one_file(str(tmp_path / "pkg" / "uses.py"), config)

    assert [(line, code) for line, _, code, _ in found] == [(6, "RNK507")]
    assert "RNK507: not judged across files" in caplog.text


def test_check_of_a_sub_folder_of_a_larger_repository_reports_a_mismatch_within_one_call(
    tmp_path: Path, run_cli, caplog: pytest.LogCaptureFixture
) -> None:
    write(tmp_path / ".git" / "HEAD", "ref: refs/heads/main\n")
    write(tmp_path / "other" / "mesh.py", _MESH)
    write(
        tmp_path / "sub" / "mesh_setup.py",
        "from torch.distributed.device_mesh import init_device_mesh\n\n\n"
        'def build():\n    return init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp",))\n',
    )

    with caplog.at_level(logging.INFO, logger="ranklint.engine"):
        run = run_cli("check", ".", "--no-cache", "--verbose", cwd=tmp_path / "sub")

    assert run.out.startswith("mesh_setup.py:5:12: RNK507 the mesh shape has 2 dimensions")
    assert "RNK507: not judged across files" in caplog.text
