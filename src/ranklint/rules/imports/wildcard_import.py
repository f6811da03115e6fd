"""RNK301 wildcard-import."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.names import import_from_module
from ranklint.findings import Severity
from ranklint.rules.base import Rule


class WildcardImport(Rule):
    code = "RNK301"
    name = "wildcard-import"
    severity = Severity.WARNING
    summary = "`from module import *` hides which names a module uses"
    what = """\
Reports every `from module import *`, in any module, `__init__.py` included.
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
None known. Re-exports in a package's `__init__.py` are better written as
explicit imports with an `__all__`.
"""
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
        """,
        """
        from .collectives import *  # expect: RNK301


        def helper():
            return 1
        """,
        """
        try:
            from apex.optimizers import *  # expect: RNK301
        except ImportError:
            pass
        """,
    )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            module = import_from_module(node)
            advice = f"import the names you use explicitly (`from {module} import a, b`)"
            if not module.startswith("."):
                advice += f" or import the module (`import {module}`)"
            self.report(
                node,
                f"`from {module} import *` hides which names this module uses and where "
                f"they come from; {advice}",
            )
