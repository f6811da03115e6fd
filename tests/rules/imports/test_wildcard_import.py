"""RNK301 wildcard-import: which files count as a package's `__init__.py` for its
fix, how the fix lays out the names, and the exact messages of its finding and fix."""

from __future__ import annotations

import pytest

from ranklint.findings import Applicability
from tests.fix_cases import rule_findings, rule_fixed

WILDCARD = "from helpers import *\n\n\ndef leader():\n    return get_rank() == is_initialized()\n"


@pytest.mark.parametrize(
    ("path", "offered"),
    [
        pytest.param("src/pkg/__init__.py", False, id="package-init-two-folders-down"),
        pytest.param("src\\pkg\\__init__.py", False, id="package-init-windows-separators"),
        pytest.param("src/pkg/__init__helpers.py", True, id="module-named-like-init"),
    ],
)
def test_wildcard_fix_is_offered_only_outside_a_package_init(path: str, offered: bool) -> None:
    (finding,) = rule_findings("RNK301", WILDCARD, path)

    assert (finding.fix is not None) is offered


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        pytest.param(
            "from helpers import *",
            "`from helpers import *` hides which names this module uses and where they come "
            "from; import the names you use explicitly (`from helpers import a, b`) or import "
            "the module (`import helpers`)",
            id="absolute-module-also-suggests-importing-it",
        ),
        pytest.param(
            "from .helpers import *",
            "`from .helpers import *` hides which names this module uses and where they come "
            "from; import the names you use explicitly (`from .helpers import a, b`)",
            id="relative-module-suggests-names-only",
        ),
    ],
)
def test_wildcard_message_suggests_importing_the_module_only_when_it_is_absolute(
    statement: str, message: str
) -> None:
    source = f"{statement}\n\n\ndef leader():\n    return get_rank() == is_initialized()\n"

    (finding,) = rule_findings("RNK301", source)

    assert finding.message == message


def test_wildcard_fix_message_lists_the_names_read_sorted() -> None:
    (finding,) = rule_findings("RNK301", WILDCARD)

    assert finding.fix is not None
    assert finding.fix.message == (
        "Import the names this module reads from it: `get_rank, is_initialized`"
    )
    assert finding.fix.applicability is Applicability.UNSAFE


def test_wildcard_fix_leaves_out_a_name_bound_by_a_starred_target() -> None:
    source = "from helpers import *\n\nfirst, *rest = items()\nprint(first, rest)\n"

    fixed = rule_fixed("RNK301", source)

    assert fixed == source.replace("import *", "import items")


_NAMES = [f"name_{i}" for i in range(8)]  # `from helpers import name_0, ..., name_7` is 82 long


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        pytest.param(
            "zzzz",
            "from helpers import " + ", ".join([*_NAMES, "zzzz"]) + "\n",
            id="88-characters-stay-on-one-line",
        ),
        pytest.param(
            "zzzzz",
            "from helpers import (\n" + "".join(f"    {n},\n" for n in [*_NAMES, "zzzzz"]) + ")\n",
            id="89-characters-go-one-name-per-line",
        ),
    ],
)
def test_wildcard_fix_keeps_an_import_of_up_to_88_characters_on_one_line(
    last: str, expected: str
) -> None:
    reads = "".join(f"{name}()\n" for name in [*_NAMES, last])
    source = "from helpers import *\n\n" + reads

    fixed = rule_fixed("RNK301", source)

    assert fixed == expected + "\n" + reads
