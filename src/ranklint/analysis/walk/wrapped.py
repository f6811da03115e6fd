"""Models wrapped for data parallelism, followed where the walk sees them flow.

The forward of a model that DDP wraps broadcasts its buffers, and that of one
FSDP wraps all-gathers its parameters (see the catalog): run on some ranks only,
it hangs. The walk knows a name holds such a model where it sees it built
(``model = DDP(net)``, :meth:`~ranklint.analysis.walk.names.NameTable.instance_of`).
This module adds three ways the model reaches the code that runs its forward:

- **A parameter annotated with the wrapper's class**: ``model:
  DistributedDataParallel`` (see ``NameTable.bind_parameter``).
- **The result of a function of the same module that returns one it builds**:
  ``def ddp_wrap(m): ... return DDP(m, ...)``, then ``model = ddp_wrap(model)``.
  Only a module-level function defined above the call: the walk reads in source
  order (see ``NameTable.note_wrapper_maker``).
- **A helper's parameter that a call passes such a model.** The call records the
  argument as :data:`WRAPPED_PREFIX` and the class (:func:`wrapped_argument`, in
  ``CallEvent.args``). A forward of the parameter in the helper (``model(x)``,
  ``model.forward(x)``, ``model.generate(...)``), where the helper never binds the
  name again (``model = model.module`` unwraps it), records which parameter it
  calls (:func:`forwarded_parameter`, ``CallEvent.param_call``). The project phase
  reads it as the wrapper's collective where a call passed the model
  (:func:`ranklint.analysis.project.sequences.wrapped_forward`), through any
  number of helpers that pass the parameter on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from ranklint.analysis.walk.catalog import lookup
from ranklint.analysis.walk.classify import CallClassifier
from ranklint.analysis.walk.definitions import flattened
from ranklint.model.kinds import CallKind
from ranklint.syntax import suite_statements

# An argument that is a model whose forward is a collective: this, then its class.
WRAPPED_PREFIX = "@wrapped:"
# Methods of a model that run its forward (besides calling it).
_FORWARDS = frozenset({"forward", "generate"})


def returned_values(function: cst.FunctionDef) -> Iterator[cst.BaseExpression]:
    """The values ``function`` returns (both arms of a conditional expression);
    nested functions' returns left out."""
    for statement in flattened(suite_statements(function.body)):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Return) and small.value is not None:
                value = small.value
                if isinstance(value, cst.IfExp):
                    yield from (value.body, value.orelse)
                else:
                    yield value


def forwarded_parameter(
    func: cst.BaseExpression, kept: Callable[[str], bool]
) -> tuple[str, str] | None:
    """(parameter, method) where a call of ``func`` runs the forward of a parameter
    that the function never binds again (``kept``): ``model(x)`` is (model,
    __call__), ``model.generate(...)`` (model, generate); None otherwise."""
    if isinstance(func, cst.Name):
        name, method = func.value, "__call__"
    elif (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.attr.value in _FORWARDS
    ):
        name, method = func.value.value, func.attr.value
    else:
        return None
    return (name, method) if kept(name) else None


def wrapped_argument(node: cst.BaseExpression, calls: CallClassifier) -> str | None:
    """:data:`WRAPPED_PREFIX` and the class, where ``node`` names a model whose
    forward is a collective as the code ``calls`` classifies configures it."""
    if isinstance(node, cst.Name):
        built = calls.names.instance_of(node.value)
    else:
        built = calls.held_class(node)  # `evaluate(self.model, x)`
    # (A shortcut: no catalog row is named "None.__call__"; not mutated.)
    spec = None if built is None else lookup(f"{built}.__call__")  # pragma: no mutate
    if spec is None or spec.kind is not CallKind.COLLECTIVE:
        return None
    if not calls.configured(spec):
        return None  # `accelerator.prepare(model)` where the file configures no FSDP
    return WRAPPED_PREFIX + built
