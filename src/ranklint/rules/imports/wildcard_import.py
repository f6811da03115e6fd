"""RNK301 wildcard-import."""

from __future__ import annotations

import builtins
from collections.abc import Callable

import libcst as cst

from ranklint.analysis.context import FileContext
from ranklint.analysis.names import import_from_module
from ranklint.findings import Applicability, Severity
from ranklint.rules.base import PendingFinding, PendingFix, Rule


class WildcardImport(Rule):
    code = "RNK301"
    name = "wildcard-import"
    severity = Severity.WARNING
    summary = "`from module import *` hides which names a module uses"
    what = """\
Reports `from module import *` where the module's own code reads a name it
does not bind explicitly (a name that may come from the wildcard import). A
module whose code reads only names it imports or defines itself (and builtins)
hides nothing it uses: a package `__init__.py` that republishes its modules'
names (`from .layers import *`, which PEP 8 names as the one defensible use), a
compatibility shim left where a module used to be, a test module that imports
another suite's tests so that pytest collects them, or a script that imports a
package only for the classes it registers.
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
Scopes are not told apart: a name bound anywhere in the module (say, a local
variable of one function) counts as bound everywhere in it, so a read of the
same name elsewhere that really comes from the wildcard is missed; names read
only through `globals()`, `eval` or string annotations are not seen. Vendored
third-party code is reported like the project's own: exclude it
(`extend-exclude`) if the project does not maintain it.
"""
    fix_applicability = Applicability.UNSAFE
    fix_safety = """\
In a module with one wildcard import, no `__all__` of its own and not a
package's `__init__.py`, the names its code reads without binding them can
only come from that import: the fix imports exactly those, sorted (one per
line when they do not fit on one). It is unsafe: a name read only through
`globals()`, `eval` or a string annotation is not seen and is no longer
imported; a name bound in one function and read from the wildcard in another
is missed (scopes are not told apart); and a read name the module does not
define now fails at import (`ImportError`) instead of where it is read. With
several wildcard imports, which module gives which name needs the other
modules, so there is no fix.
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
        """
        # A package `__init__.py` that only republishes its modules' names
        # (colossalai colossalai/legacy/nn/layer/__init__.py).
        \"\"\"Parallel layers.\"\"\"
        from .colossalai_layer import *
        from .parallel_1d import *
        from .utils import get_tensor_parallel_mode

        __all__ = ["get_tensor_parallel_mode"]
        """,
        """
        # Its own code reads only names it imports explicitly
        # (olmo olmo/__init__.py).
        from .config import *
        from .model import *


        def check_install(cuda: bool = False):
            import torch

            return torch.cuda.is_available() if cuda else True
        """,
        """
        # Imports another suite's tests so that pytest collects them; reads
        # none of its names (litgpt tests/ext_thunder/test_thunder_networks.py).
        from litgpt.constants import _THUNDER_AVAILABLE

        if _THUNDER_AVAILABLE:
            from thunder.tests.test_networks import *
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
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        # Computed at the first wildcard import: most modules have none.
        self._names: _Names | None = None

    def _module_names(self) -> _Names:
        if self._names is None:
            self._names = _Names()
            self.ctx.module.visit(self._names)
        return self._names

    def _reexports_only(self) -> bool:
        return not self._module_names().unbound()

    def _fix(self, node: cst.ImportFrom) -> PendingFix | None:
        """Import the names read and bound nowhere, where this wildcard must give them."""
        names = self._module_names()
        if names.stars != 1 or "__all__" in names.bound:
            return None
        if self.ctx.path.replace("\\", "/").rsplit("/", 1)[-1] == "__init__.py":
            return None
        used = sorted(names.unbound())
        listed = ", ".join(used)
        return PendingFix(
            f"Import the names this module reads from it: `{listed}`",
            node,
            _explicit(node, used, self.ctx.module.default_indent),
            Applicability.UNSAFE,
        )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            if self._reexports_only():
                return  # the package republishes the names; its own code uses none
            module = import_from_module(node)
            advice = f"import the names you use explicitly (`from {module} import a, b`)"
            if not module.startswith("."):
                advice += f" or import the module (`import {module}`)"
            self.report(
                node,
                f"`from {module} import *` hides which names this module uses and where "
                f"they come from; {advice}",
                fix=self._fix(node),
            )


# Names every module has without binding them.
_MODULE_NAMES = frozenset(
    {*dir(builtins), "__file__", "__path__", "__spec__", "__loader__", "__builtins__"}
)


# A `from m import a, b` longer than this is written one name per line.
_ONE_LINE = 88


def _explicit(node: cst.ImportFrom, used: list[str], indent: str) -> cst.ImportFrom:
    """``node`` importing ``used`` by name instead of ``*``."""
    aliases = [cst.ImportAlias(cst.Name(name)) for name in used]
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


class _Names(cst.CSTVisitor):
    """Every name a module binds (in any scope) and every other name it mentions;
    how many wildcard imports it has."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.read: set[str] = set()
        self.stars = 0

    def unbound(self) -> set[str]:
        """The names read that nothing in the module binds and that are no builtins."""
        return self.read - self.bound - _MODULE_NAMES

    def visit_Name(self, node: cst.Name) -> None:
        self.read.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # `.attr` is no name of the module
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # `keyword=` is no name of the module
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            target = alias.asname.name if alias.asname is not None else alias.name
            while isinstance(target, cst.Attribute):
                target = target.value
            self._bind(target)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if len(node.relative) == 1 and node.module is not None:
            # `from .linear import *` in a package also binds the submodule `linear`.
            module = node.module
            while isinstance(module, cst.Attribute):
                module = module.value
            self._bind(module)
        if isinstance(node.names, cst.ImportStar):
            self.stars += 1
        else:
            for alias in node.names:
                self._bind(alias.asname.name if alias.asname is not None else alias.name)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bound.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bound.add(node.name.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.bound.add(node.name.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)  # `with ... as x`, `except E as x`

    def visit_Global(self, node: cst.Global) -> None:
        self.bound.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.bound.update(item.name.value for item in node.names)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.bound.add(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.bound.add(node.name.value)

    def _bind(self, target: cst.BaseExpression) -> None:
        """Names a target binds: `x`, `a, *b` (not `obj.x` or `d[k]`, which read)."""
        if isinstance(target, cst.Name):
            self.bound.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            # A starred element's `.value` is its name: `a, *b` binds `b`.
            for element in target.elements:
                self._bind(element.value)
