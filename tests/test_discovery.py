"""File discovery: walking, excludes, explicit paths, odd file system entries."""

from __future__ import annotations

from pathlib import Path

from ranklint import Config
from ranklint.discovery import discover
from tests.conftest import write


def rel(paths: list[str], root: Path) -> list[str]:
    return [Path(p).relative_to(root).as_posix() for p in paths]


def make_tree(root: Path) -> None:
    for name in [
        "pkg/a.py",
        "pkg/b.pyi",
        "pkg/notes.txt",
        "pkg/generated/gen.py",
        ".venv/lib/site.py",
        "build/lib/x.py",
        ".git/hooks/h.py",
        "node_modules/m.py",
        "scripts/run.py",
    ]:
        write(root / name, "x = 1\n")


def test_directory_walk_finds_python_files_and_skips_default_excludes(tmp_path: Path) -> None:
    make_tree(tmp_path)

    found = discover([str(tmp_path)], Config(root=tmp_path))

    assert rel(found.files, tmp_path) == [
        "pkg/a.py",
        "pkg/b.pyi",
        "pkg/generated/gen.py",
        "scripts/run.py",
    ]


def test_extend_exclude_adds_gitignore_patterns(tmp_path: Path) -> None:
    make_tree(tmp_path)
    config = Config(root=tmp_path, extend_exclude=("generated/", "scripts/*.py"))

    found = discover([str(tmp_path)], config)

    assert rel(found.files, tmp_path) == ["pkg/a.py", "pkg/b.pyi"]


def test_exclude_replaces_the_defaults(tmp_path: Path) -> None:
    make_tree(tmp_path)

    found = discover([str(tmp_path)], Config(root=tmp_path, exclude=("pkg",)))

    assert "build/lib/x.py" in rel(found.files, tmp_path)
    assert not any(p.startswith("pkg/") for p in rel(found.files, tmp_path))


def test_explicit_file_is_checked_even_when_excluded(tmp_path: Path) -> None:
    path = write(tmp_path / "build" / "x.py", "x = 1\n")
    config = Config(root=tmp_path)

    assert discover([str(path)], config).files == [str(path)]
    assert discover([str(path)], config, force_exclude=True).files == []


def test_explicit_excluded_directory_is_walked_unless_force_exclude(tmp_path: Path) -> None:
    make_tree(tmp_path)
    config = Config(root=tmp_path, extend_exclude=("pkg",))

    walked = discover([str(tmp_path / "pkg")], config)
    forced = discover([str(tmp_path / "pkg")], config, force_exclude=True)

    assert rel(walked.files, tmp_path) == ["pkg/a.py", "pkg/b.pyi", "pkg/generated/gen.py"]
    assert forced.files == []


def test_missing_path_is_reported_and_others_are_still_found(tmp_path: Path) -> None:
    write(tmp_path / "a.py", "x = 1\n")

    found = discover([str(tmp_path / "nope.py"), str(tmp_path / "a.py")], Config(root=tmp_path))

    assert found.missing == [str(tmp_path / "nope.py")]
    assert rel(found.files, tmp_path) == ["a.py"]


def test_directory_named_like_a_python_file_is_walked_not_read(tmp_path: Path) -> None:
    write(tmp_path / "x.py" / "inner.py", "x = 1\n")

    found = discover([str(tmp_path)], Config(root=tmp_path))

    assert rel(found.files, tmp_path) == ["x.py/inner.py"]


def test_symlink_loop_is_not_followed(tmp_path: Path) -> None:
    write(tmp_path / "pkg" / "a.py", "x = 1\n")
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg", target_is_directory=True)

    found = discover([str(tmp_path)], Config(root=tmp_path))

    assert rel(found.files, tmp_path) == ["pkg/a.py"]


def test_same_file_named_twice_is_checked_once(tmp_path: Path) -> None:
    path = write(tmp_path / "a.py", "x = 1\n")

    found = discover([str(path), str(tmp_path), str(path)], Config(root=tmp_path))

    assert found.files == [str(path)]


def test_directory_only_pattern_excludes_a_directory_but_not_a_file_of_that_name(
    tmp_path: Path,
) -> None:
    write(tmp_path / "gen" / "a.py", "x = 1\n")
    write(tmp_path / "gen.py" / "inside.py", "x = 1\n")  # a directory named like a file
    write(tmp_path / "b.py", "x = 1\n")
    write(tmp_path / "c.py", "x = 1\n")
    config = Config(root=tmp_path, extend_exclude=("gen/", "c.py/"))

    found = discover([str(tmp_path)], config)

    assert rel(found.files, tmp_path) == ["b.py", "c.py", "gen.py/inside.py"]


def test_forced_exclusion_of_a_named_directory_uses_directory_patterns_and_goes_on(
    tmp_path: Path,
) -> None:
    write(tmp_path / "gen" / "a.py", "x = 1\n")
    write(tmp_path / "src" / "b.py", "x = 1\n")
    config = Config(root=tmp_path, extend_exclude=("gen/",))

    found = discover([str(tmp_path / "gen"), str(tmp_path / "src")], config, force_exclude=True)

    assert rel(found.files, tmp_path) == ["src/b.py"]


def test_named_excluded_directory_still_applies_the_other_patterns_inside(tmp_path: Path) -> None:
    write(tmp_path / "build" / "a.py", "x = 1\n")
    write(tmp_path / "build" / "x_pb2.py", "x = 1\n")
    config = Config(root=tmp_path, extend_exclude=("*_pb2.py",))

    found = discover([str(tmp_path / "build")], config)

    assert rel(found.files, tmp_path) == ["build/a.py"]


def test_symlinked_directory_inside_the_tree_is_not_followed(tmp_path: Path) -> None:
    write(tmp_path / "tree" / "a.py", "x = 1\n")
    write(tmp_path / "tree" / "z" / "b.py", "x = 1\n")
    (tmp_path / "tree" / "loop").symlink_to(tmp_path / "tree", target_is_directory=True)
    (tmp_path / "tree" / "other").symlink_to(tmp_path / "outside", target_is_directory=True)
    write(tmp_path / "outside" / "o.py", "x = 1\n")

    found = discover([str(tmp_path / "tree")], Config(root=tmp_path))

    assert rel(found.files, tmp_path) == ["tree/a.py", "tree/z/b.py"]


def test_python_files_after_other_files_in_a_directory_are_all_found(tmp_path: Path) -> None:
    for name in ("a.txt", "b.py", "c.md", "d.pyi"):
        write(tmp_path / "pkg" / name, "x = 1\n")

    found = discover([str(tmp_path / "pkg")], Config(root=tmp_path))

    assert rel(found.files, tmp_path) == ["pkg/b.py", "pkg/d.pyi"]


def test_named_directory_excluded_by_a_directory_pattern_is_walked_in_full(tmp_path: Path) -> None:
    write(tmp_path / "gen" / "a.py", "x = 1\n")
    config = Config(root=tmp_path, extend_exclude=("gen/",))

    found = discover([str(tmp_path / "gen")], config)

    assert rel(found.files, tmp_path) == ["gen/a.py"]
