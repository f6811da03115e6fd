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
