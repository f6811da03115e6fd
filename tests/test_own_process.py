"""What ranklint does only in a process of its own (issue 17): a parse skips
libcst's node validation (the same trees, the same errors, and the validation
back for everything else), and the garbage collector waits while a file is
linted, then collects what the file left."""

from __future__ import annotations

import gc

import libcst as cst
import pytest

from ranklint import Config, _process, lint_source
from ranklint import source as source_module
from ranklint.faces.cli import main
from ranklint.source import SourceError, parse_source
from tests.conftest import FIXTURES

NEWER_UNICODE_NAME = "\U00013460"  # libcst's tokenizer takes it; this Python may not


@pytest.fixture
def owned_process():
    with _process.own_process():
        yield


def count_validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The node types whose ``_validate`` runs from now on."""
    seen: list[str] = []
    original = cst.CSTNode._validate

    def counting(node: cst.CSTNode) -> None:
        seen.append(type(node).__name__)
        original(node)

    monkeypatch.setattr(cst.CSTNode, "_validate", counting)
    monkeypatch.setattr(cst.Name, "_validate", counting)
    return seen


def test_process_is_not_ranklints_own_unless_claimed() -> None:
    assert _process.owned() is False


def test_own_process_block_claims_the_process_and_gives_it_back_after_an_error() -> None:
    seen: list[bool] = []

    def claimed_then_failing() -> None:
        with _process.own_process():
            seen.append(_process.owned())
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        claimed_then_failing()

    assert seen == [True]
    assert _process.owned() is False


def test_own_process_blocks_nest_and_restore_the_outer_state() -> None:
    with _process.own_process():
        with _process.own_process(owned=False):
            assert _process.owned() is False
        assert _process.owned() is True
    assert _process.owned() is False


def test_claimed_worker_process_stays_ranklints_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_process, "_owned", False)

    _process.claim_process()

    assert _process.owned() is True


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.py")), ids=lambda p: p.name)
def test_trusted_parse_builds_the_same_tree_as_a_validating_parse(path, owned_process) -> None:
    text = path.read_text(encoding="utf-8")

    trusted = parse_source(text)

    reference = cst.parse_module(text)
    assert trusted.deep_equals(reference)
    assert trusted.code == text


def test_trusted_parse_of_ascii_text_validates_no_node(
    monkeypatch: pytest.MonkeyPatch, owned_process
) -> None:
    seen = count_validations(monkeypatch)

    parse_source("import torch.distributed as dist\nx = dist.get_rank() + 1\n")

    assert seen == []


def test_parse_outside_ranklints_process_validates_every_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = count_validations(monkeypatch)

    parse_source("x = 1\n")

    assert "Name" in seen
    assert "Module" in seen


def test_trusted_parse_of_non_ascii_text_validates_only_its_names(
    monkeypatch: pytest.MonkeyPatch, owned_process
) -> None:
    seen = count_validations(monkeypatch)

    parse_source("größe = 'π'\n")

    assert seen == ["Name"]


def test_trusted_parse_gives_back_validation_for_nodes_built_afterwards(owned_process) -> None:
    parse_source("x = 1\n")

    with pytest.raises(cst.CSTValidationError):
        cst.Name("not an identifier")


def test_trusted_parse_gives_back_validation_after_a_syntax_error(owned_process) -> None:
    with pytest.raises(SourceError):
        parse_source("def f(:\n")

    assert cst.CSTNode.__post_init__ is source_module._VALIDATING_POST_INIT
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")


def test_trusted_parse_of_a_name_only_newer_unicode_allows_is_the_same_error(
    owned_process,
) -> None:
    result = lint_source(NEWER_UNICODE_NAME + "\n", "unicode.py")

    expected = [] if NEWER_UNICODE_NAME.isidentifier() else ["RNK001"]  # per this Python
    assert result.errors == []
    assert [f.code for f in result.findings] == expected


def test_libcst_that_validates_elsewhere_is_left_alone(
    monkeypatch: pytest.MonkeyPatch, owned_process
) -> None:
    monkeypatch.setattr(source_module, "_VALIDATING_POST_INIT", None)
    before = vars(cst.CSTNode)["__post_init__"]

    module = parse_source("x = 1\n")

    assert vars(cst.CSTNode)["__post_init__"] is before
    assert module.code == "x = 1\n"


def test_cli_check_parses_as_ranklints_own_process_and_gives_the_process_back(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "train.py").write_text("x = 1\n", encoding="utf-8")
    owned_while_parsing: list[bool] = []
    original = source_module.parse_source

    def recording(text: str) -> cst.Module:
        owned_while_parsing.append(_process.owned())
        return original(text)

    monkeypatch.setattr(source_module, "parse_source", recording)
    monkeypatch.setattr("ranklint.engine.linter.parse_source", recording)

    code = main(["check", "--no-cache", "-j", "1", str(tmp_path / "train.py")])

    assert code == 0, capsys.readouterr()
    assert owned_while_parsing == [True]
    assert _process.owned() is False


def record_collections(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The generations collected explicitly from now on."""
    collected: list[int] = []
    real = gc.collect

    def recording(generation: int = 2) -> int:
        collected.append(generation)
        return real(generation)

    monkeypatch.setattr(gc, "collect", recording)
    return collected


def test_collector_waits_during_a_file_and_collects_young_generations_after(
    monkeypatch: pytest.MonkeyPatch, owned_process
) -> None:
    collected = record_collections(monkeypatch)

    with _process.collector_paused():
        enabled_inside = gc.isenabled()

    assert enabled_inside is False
    assert gc.isenabled() is True
    assert collected == [1]


def test_collector_comes_back_after_a_file_that_failed(
    monkeypatch: pytest.MonkeyPatch, owned_process
) -> None:
    collected = record_collections(monkeypatch)

    def failing() -> None:
        with _process.collector_paused():
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        failing()

    assert gc.isenabled() is True
    assert collected == [1]


def test_collector_is_left_alone_outside_ranklints_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    collected = record_collections(monkeypatch)

    with _process.collector_paused():
        enabled_inside = gc.isenabled()

    assert enabled_inside is True
    assert collected == []


def test_collector_switched_off_by_the_user_stays_off(
    monkeypatch: pytest.MonkeyPatch, owned_process
) -> None:
    collected = record_collections(monkeypatch)
    gc.disable()
    try:
        with _process.collector_paused():
            pass
        enabled_after = gc.isenabled()
    finally:
        gc.enable()

    assert enabled_after is False
    assert collected == []


def test_cycles_a_linted_file_leaves_are_freed_after_the_file(
    monkeypatch: pytest.MonkeyPatch, owned_process
) -> None:
    import weakref

    from ranklint.engine import Linter

    class Cycle:
        pass

    left: list[weakref.ref[Cycle]] = []
    linter = Linter(Config())
    real = linter._lint_source

    def leaving_a_cycle(source, path):
        cycle = Cycle()
        cycle.self = cycle  # type: ignore[attr-defined]
        left.append(weakref.ref(cycle))
        return real(source, path)

    monkeypatch.setattr(linter, "_lint_source", leaving_a_cycle)

    result = linter.lint_source("import torch.distributed as dist\n", "train.py")

    assert result.errors == []
    assert left[0]() is None  # freed by the collection after the file
