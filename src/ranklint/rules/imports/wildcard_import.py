"""RNK301 wildcard-import."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.names import import_from_module
from ranklint.analysis.walk.wildcards import WildcardNames, wildcard_names
from ranklint.findings import Applicability, Confidence, Evidence, Link, Severity
from ranklint.rules.base import PendingFinding, PendingFix, Rule
from ranklint.source import file_name
from ranklint.suppressions import NOQA, SPLIT

HIGH, MEDIUM = Confidence.HIGH, Confidence.MEDIUM


class WildcardImport(Rule):
    code = "RNK301"
    name = "wildcard-import"
    severity = Severity.WARNING
    summary = "`from module import *` hides which names a module uses"
    what = """\
Reports `from module import *` outside a package's `__init__.py`, and in an
`__init__.py` where the module's own code reads a name that no scope of it
binds (a name that may come from the wildcard import). A package
`__init__.py` whose code reads only names it imports or defines itself
republishes its modules' names (`from .layers import *`, which PEP 8 names as
the one defensible use) and is not reported. Elsewhere a wildcard whose names
the module never reads is reported too, as pyflakes (F403) and ruff do: it
imports nothing the module uses and still hides what the module offers (a
compatibility shim, a test module importing another suite's tests for pytest,
a script importing a package for what it registers).
"""
    why = """\
A wildcard import makes it impossible to tell, by reading the file, where a
name such as `all_reduce` or `init_process_group` comes from, which module a
patch must target, or which names a refactor of the source module breaks. On a
cluster the failure surfaces late: a name silently rebound by a later wildcard
import calls the wrong collective, or a removed name fails only on the rank
that reaches the code. It also defeats static analysis, ranklint's included:
with two wildcard imports ranklint can no longer resolve bare names.
"""
    limits = """\
Names read only through `globals()`, `eval` or `getattr` on the module are not
seen. Vendored third-party code is reported like the project's own: exclude
it (`extend-exclude`) if the project does not maintain it.
"""
    fix_applicability = frozenset({Applicability.UNSAFE})
    fix_safety = """\
The fix imports, by name and sorted (one per line when they do not fit on
one), the names the module's code reads where no scope of the module binds
them: those can only come from the wildcard. It is offered only where the
rule sees everything the names depend on:

- one wildcard import in the module, no `__all__` of its own, not a package's
  `__init__.py`, and no `# noqa` naming F401, F403 or F405 on the import (a
  re-export shim marked as such: its importers take names from it);
- at least one name read from it (a wildcard whose names are not read may be
  a re-export or an import for side effects: only its author knows);
- no name read from it is bound in another scope of the module (a local
  `import math` in one method beside a module-level `math.pi`), bound at
  module level only under a condition (`if`, `try`, a loop, a function's
  `global`), read only in annotations (the source module may define it only
  under `if TYPE_CHECKING:`), spelled with a leading underscore, or named in a
  string annotation.

It is unsafe: the module's importers lose every other name the wildcard gave
it, a name read only through `globals()` or `eval` is no longer imported, and
a read name the source module does not define now fails at import
(`ImportError`) instead of where it is read.
"""
    fixes = (
        (
            """
            from torch.distributed import *


            def is_leader():
                return get_rank() == 0 and is_initialized()
            """,
            """
            from torch.distributed import get_rank, is_initialized


            def is_leader():
                return get_rank() == 0 and is_initialized()
            """,
        ),
    )
    valid = (
        """
        from torch.distributed import all_reduce, init_process_group
        """,
        """
        import torch.distributed as dist
        from . import utils
        """,
    )
    invalid = (
        """
        from torch.distributed import *  # expect: RNK301


        def is_leader():
            return get_rank() == 0
        """,
        """
        from .collectives import *  # expect: RNK301


        def helper(tensor):
            return all_reduce_mean(tensor)
        """,
        """
        try:
            from apex.optimizers import *  # expect: RNK301
        except ImportError:
            pass


        OPTIMIZER = FusedAdam
        """,
        """
        # A module whose own code reads a name only the wildcard binds.
        from torch.nn.modules.loss import *  # expect: RNK301
        from torch.nn.modules.loss import _Loss


        class ParallelCrossEntropy(_Loss):
            def forward(self, logits, targets):
                return CrossEntropyLoss()(logits, targets)
        """,
        """
        # Imports another suite's tests so that pytest collects them; reads
        # none of its names (litgpt tests/ext_thunder/test_thunder_networks.py).
        from litgpt.constants import _THUNDER_AVAILABLE

        if _THUNDER_AVAILABLE:
            from thunder.tests.test_networks import *  # expect: RNK301(medium)
        """,
        """
        # A compatibility shim: re-exports a private module under its old name.
        import warnings

        from ._factory import *  # expect: RNK301(medium)

        warnings.warn("Importing from timm.models.factory is deprecated", FutureWarning)
        """,
    )
    tiers = """\
Each finding records what the wildcard gives the module (**source**):

- `hidden-use` (high): the module's own code reads a name that only the
  wildcard binds; a reader cannot tell where it comes from.
- `re-export` (medium): the module reads none of its names. The wildcard
  republishes another module's names (a compatibility shim, `hubconf.py`, a
  test module importing another suite's tests for pytest) or is imported
  for its side effects. It still hides what the module offers, but that is
  often the author's intent, so the default run does not show it; `--confidence
  medium` does.
"""

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        # Computed at the first wildcard import: most modules have none.
        self._names: WildcardNames | None = None

    def _module_names(self) -> WildcardNames:
        if self._names is None:
            self._names = wildcard_names(self.ctx.module)
        return self._names

    def _is_package_init(self) -> bool:
        return file_name(self.ctx.path) == "__init__.py"

    def _fix(self, node: cst.ImportFrom) -> PendingFix | None:
        """Import the names read and bound nowhere, where this wildcard must give them."""
        names = self._module_names()
        if names.stars != 1 or names.has_all or not names.read or names.unclear:
            return None
        if self._is_package_init() or _marked_as_reexport(self.ctx.statement):
            return None
        used = sorted(names.read)
        listed = ", ".join(used)
        return PendingFix(
            f"Import the names this module reads from it: `{listed}`",
            node,
            _explicit(node, used, self.ctx.module.default_indent),
            Applicability.UNSAFE,
        )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not isinstance(node.names, cst.ImportStar):
            return
        reads = bool(self._module_names().read)
        if not reads and self._is_package_init():
            return  # the package republishes the names; its own code uses none
        module = import_from_module(node)
        if reads:
            advice = f"import the names you use explicitly (`from {module} import a, b`)"
            if not module.startswith("."):
                advice += f" or import the module (`import {module}`)"
            message = (
                f"`from {module} import *` hides which names this module uses and where "
                f"they come from; {advice}"
            )
            source = Link("hidden-use", "the module reads names only the wildcard binds", HIGH)
        else:
            itself = _module_import(module)
            side_effects = f", or `{itself}` for its side effects" if itself else ""
            message = (
                f"`from {module} import *` imports nothing this module uses, and hides which "
                f"names it offers to others; import what its importers need by name"
                f"{side_effects}"
            )
            source = Link("re-export", "the module reads none of its names", MEDIUM)
        self.report(node, message, fix=self._fix(node), evidence=Evidence(source=source))


def _module_import(module: str) -> str | None:
    """How to import ``module`` itself (``import a.b``, ``from . import m``, ``from ..a
    import b``); None for a package named only by dots (``..``)."""
    if not module.startswith("."):
        return f"import {module}"
    package, _, name = module.rpartition(".")
    if not name:
        return None
    return f"from {package or '.'} import {name}"


def _marked_as_reexport(statement: cst.CSTNode | None) -> bool:
    """The import's line silences pyflakes' unused or wildcard import warnings."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    comment = statement.trailing_whitespace.comment
    if comment is None:
        return False
    match = NOQA.search(comment.value)
    codes = match.group("codes") if match is not None else None
    return codes is not None and any(
        code.upper() in _REEXPORT_CODES for code in SPLIT.split(codes.strip())
    )


# pyflakes' codes for an unused import, a wildcard import, and a name that may come from one.
_REEXPORT_CODES = frozenset({"F401", "F403", "F405"})


# A `from m import a, b` longer than this is written one name per line.
_ONE_LINE = 88


def _explicit(node: cst.ImportFrom, used: list[str], indent: str) -> cst.ImportFrom:
    """``node`` importing ``used`` by name instead of ``*``."""
    aliases = [cst.ImportAlias(cst.Name(name)) for name in used]
    if not node.whitespace_after_import.value:
        node = node.with_changes(whitespace_after_import=cst.SimpleWhitespace(" "))  # `import*`
    one_line = node.with_changes(
        names=[
            alias.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for alias in aliases[:-1]
        ]
        + aliases[-1:]
    )
    if len(cst.Module([]).code_for_node(one_line)) <= _ONE_LINE:
        return one_line

    def line_break(last_line: str) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(indent=True, last_line=cst.SimpleWhitespace(last_line))

    return node.with_changes(
        names=[
            alias.with_changes(
                comma=cst.Comma(whitespace_after=line_break(indent if i < len(used) - 1 else ""))
            )
            for i, alias in enumerate(aliases)
        ],
        lpar=cst.LeftParen(whitespace_after=line_break(indent)),
        rpar=cst.RightParen(),
    )
