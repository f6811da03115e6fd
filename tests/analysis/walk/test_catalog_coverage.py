"""Every implicit-collective row of the catalog has evidence: a run that confirms it, or a citation.

Cheap (no torch): reads ``catalog_citations`` and the confirming test modules'
source. A new row in one of the families (object collectives, DTensor,
checkpointing and wrapped models, framework wrappers, properties) fails here
until it comes with a test in ``test_catalog_confirmed*.py`` or a ``CITED`` entry.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ranklint.analysis.walk.catalog import BY_QUALIFIED_NAME
from tests.analysis.walk.catalog_citations import CITED, CONFIRMED, implicit_rows, row_key
from tests.analysis.walk.collective_probe import CONFIRMATION_MARKS

HERE = Path(__file__).resolve().parent
LINES = re.compile(r"^\d+(-\d+)?(, \d+(-\d+)?)*$")


def _row_keys() -> list[str]:
    return [row_key(spec) for spec in implicit_rows()]


def _tests_of(file: str) -> tuple[set[str], bool]:
    """The test functions a module defines, and whether its pytestmark says distributed."""
    tree = ast.parse((HERE / file).read_text(encoding="utf-8"))
    names = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }
    marked = any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
        and "pytest.mark.distributed" in ast.unparse(node.value)
        for node in tree.body
    )
    return names, marked


def test_every_implicit_collective_row_is_confirmed_by_a_run_or_cited() -> None:
    missing = [key for key in _row_keys() if key not in CONFIRMED and key not in CITED]

    assert missing == [], "add a test to test_catalog_confirmed*.py or a CITED entry"


def test_row_keys_of_the_covered_families_are_unique() -> None:
    keys = _row_keys()

    assert len(keys) == len(set(keys))


def test_confirmations_name_catalog_rows_and_existing_distributed_tests() -> None:
    rows = set(_row_keys())
    stale = [key for key in CONFIRMED if key not in rows]
    broken = []
    for tests in CONFIRMED.values():
        for reference in tests:
            file, _, name = reference.partition("::")
            names, marked = _tests_of(file)
            if name not in names or not marked:
                broken.append(reference)

    assert stale == []
    assert broken == []


def test_citations_marked_in_catalog_are_rows_and_the_others_are_not() -> None:
    rows = set(_row_keys())
    wrong = [
        key
        for key, citation in CITED.items()
        if citation.in_catalog != (key in rows)
        or (not citation.in_catalog and key in BY_QUALIFIED_NAME)
    ]

    assert wrong == []


def test_no_row_is_both_confirmed_and_cited() -> None:
    assert set(CONFIRMED) & set(CITED) == set()


def test_every_citation_names_a_repository_version_path_and_lines() -> None:
    incomplete = [
        (key, source.path)
        for key, citation in CITED.items()
        for source in citation.sources
        if not (source.repo and source.commit and source.path and LINES.match(source.lines))
    ]

    assert incomplete == []
    assert all(citation.sources and citation.why_not_run for citation in CITED.values())


def test_confirmation_marks_leave_the_distributed_mark_to_each_module() -> None:
    """Written out in each module's `pytestmark`, where RNK603 and readers see it."""
    assert all(mark.name != "distributed" for mark in CONFIRMATION_MARKS)
