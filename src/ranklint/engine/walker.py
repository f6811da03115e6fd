"""The one traversal of a file: keeps the shared context and dispatches to visitors.

This walks libcst's tree directly over the nodes' fields instead of using
``Module.visit``: libcst's visitor rebuilds every node it passes (a large part
of its cost) and visits children in field order, not evaluation order. Here,
binding constructs (assignments, ``def``, ``for``, comprehensions, imports) are
walked in the order Python evaluates them, so the name table sees a binding
exactly when it takes effect. Whitespace and comment nodes are never entered.
Visitors (the fact recorders of ``analysis``, then the rules) see every other
node, except the parts of binding syntax that are not expressions
(``ImportAlias``, ``Parameters``/``Param``, ``CompIf`` wrappers): a visitor
reads those from their parent (``Import``, ``FunctionDef``, ...).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Iterable

import libcst as cst

from ranklint.analysis.walk.catalog import PROPERTY_COLLECTIVES
from ranklint.analysis.walk.classify import is_state_dict_context
from ranklint.analysis.walk.context import Condition, FileContext, FunctionFrame
from ranklint.analysis.walk.guards import guard_kind
from ranklint.analysis.walk.names import ScopeKind
from ranklint.analysis.walk.visitor import NodeVisitor
from ranklint.analysis.walk.wrapped import returned_values
from ranklint.findings import InternalError
from ranklint.model.events import ExitKind, Site
from ranklint.syntax import NODE, SEQUENCE, child_fields, value_kind

logger = logging.getLogger(__name__)

# (the visitor's key in failed_rules, how errors name it, the bound handler)
Handler = tuple[str, str, Callable[[cst.CSTNode], object]]


class Walker:
    """Walks one module once, calling every visitor's handlers on the way."""

    def __init__(self, ctx: FileContext, visitors: Iterable[NodeVisitor]) -> None:
        self.ctx = ctx
        self.errors: list[InternalError] = []
        # Visitors that raised (rule codes for rules): skipped for the rest of the file.
        self.failed_rules: set[str] = set()
        self._visit: dict[type[cst.CSTNode], list[Handler]] = {}
        self._leave: dict[type[cst.CSTNode], list[Handler]] = {}
        for visitor in visitors:
            where = getattr(visitor, "where", type(visitor).__name__)
            key = getattr(visitor, "code", where)
            for node_type, method in visitor.handlers_on_visit.items():
                handler = (key, where, getattr(visitor, method))
                self._visit.setdefault(node_type, []).append(handler)
            for node_type, method in visitor.handlers_on_leave.items():
                handler = (key, where, getattr(visitor, method))
                self._leave.setdefault(node_type, []).append(handler)
        self._special: dict[type[cst.CSTNode], Callable[[cst.CSTNode], None]] = {
            cst.Module: self._module,
            cst.SimpleStatementLine: self._simple_statement_line,
            cst.FunctionDef: self._function_def,
            cst.Lambda: self._lambda,
            cst.ClassDef: self._class_def,
            cst.If: self._if,
            cst.For: self._for,
            cst.While: self._while,
            cst.Assign: self._assign,
            cst.AnnAssign: self._ann_assign,
            cst.AugAssign: self._aug_assign,
            cst.NamedExpr: self._named_expr,
            cst.Import: self._import,
            cst.ImportFrom: self._import,
            cst.With: self._with,
            cst.ExceptHandler: self._except_handler,
            cst.ExceptStarHandler: self._except_handler,
            cst.Del: self._del,
            cst.Global: self._global,
            cst.Nonlocal: self._global,
            cst.ListComp: self._comprehension,
            cst.SetComp: self._comprehension,
            cst.GeneratorExp: self._comprehension,
            cst.DictComp: self._comprehension,
            cst.Call: self._call,
            cst.Attribute: self._attribute,
            cst.IfExp: self._if_exp,
            cst.BooleanOperation: self._boolean_operation,
            cst.Try: self._try,
            cst.TryStar: self._try,
            cst.Return: self._return,
            cst.Raise: self._raise,
            cst.Continue: self._continue,
            cst.Break: self._break,
            cst.Expr: self._expression_statement,
        }

    # -- core --------------------------------------------------------------
    def walk(self, node: cst.CSTNode) -> None:
        cls = type(node)
        if cls is cst.Call:
            # Numbered before any handler runs: (top_index, call_ordinal) names
            # the call for the project phase (analysis.walk.summary.Site).
            self.ctx.call_ordinal += 1
        handlers = self._visit.get(cls)
        if handlers:
            self._dispatch(handlers, node)
        special = self._special.get(cls)
        if special is not None:
            special(node)
        else:
            self._walk_children(node)
        handlers = self._leave.get(cls)
        if handlers:
            self._dispatch(handlers, node)

    def _walk_children(self, node: cst.CSTNode) -> None:
        for name in child_fields(type(node)):
            value = getattr(node, name)
            kind = value_kind(type(value))
            if kind is NODE:
                self.walk(value)
            elif kind is SEQUENCE:
                for item in value:
                    if value_kind(type(item)) is NODE:
                        self.walk(item)

    def _walk_all(self, nodes: Iterable[cst.CSTNode | None]) -> None:
        for node in nodes:
            if node is not None:
                self.walk(node)

    def _dispatch(self, handlers: list[Handler], node: cst.CSTNode) -> None:
        for key, where, method in handlers:
            if key in self.failed_rules:
                continue
            try:
                method(node)
            except Exception as exc:  # a visitor bug must not lose the others' findings
                self.failed_rules.add(key)
                self.errors.append(
                    InternalError(
                        path=self.ctx.path,
                        where=where,
                        message=f"{type(exc).__name__}: {exc}",
                        details=traceback.format_exc(),
                    )
                )
                logger.debug("%s failed on %s", where, self.ctx.path, exc_info=True)

    # -- statements --------------------------------------------------------
    def _module(self, node: cst.Module) -> None:
        for index, statement in enumerate(node.body):
            self.ctx.top_statement = statement
            self.ctx.top_index = index
            self.ctx.call_ordinal = 0
            self.walk(statement)
        self.ctx.top_statement = None

    def _simple_statement_line(self, node: cst.SimpleStatementLine) -> None:
        outer = self.ctx.statement
        self.ctx.statement = node
        self._walk_all(node.body)
        self.ctx.statement = outer

    def _function_def(self, node: cst.FunctionDef) -> None:
        # Decorators, defaults and annotations are evaluated where the def is.
        self._walk_all(node.decorators)
        self._walk_param_headers(node.params, annotations=True)
        if node.returns is not None:
            self.walk(node.returns.annotation)
        self.ctx.names.bind_other(node.name.value)
        self.ctx.tensors.define_function(node)
        self._enter_function(node, node.params, node.body)

    def _lambda(self, node: cst.Lambda) -> None:
        self._walk_param_headers(node.params, annotations=False)
        self._enter_function(node, node.params, node.body)

    def _walk_param_headers(self, params: cst.Parameters, *, annotations: bool) -> None:
        for param in _all_params(params):
            if annotations and param.annotation is not None:
                self.walk(param.annotation.annotation)
            if param.default is not None:
                self.walk(param.default)

    def _enter_function(
        self,
        node: cst.FunctionDef | cst.Lambda,
        params: cst.Parameters,
        body: cst.CSTNode,
    ) -> None:
        ctx = self.ctx
        class_name = (
            ctx.classes[-1].name.value
            if ctx.classes and ctx.names.current_kind is ScopeKind.CLASS
            else None
        )
        saved = (ctx.import_time, ctx.conditions, ctx.loop_depth, ctx.statement)
        ctx.import_time, ctx.conditions, ctx.loop_depth = False, [], 0
        ctx.functions.append(FunctionFrame(node, class_name))
        ctx.names.push(ScopeKind.FUNCTION)
        ctx.facts.enter_function(node, class_name)
        ctx.tensors.push()
        for param in _all_params(params):
            ctx.names.bind_parameter(param)
        if (
            isinstance(node, cst.FunctionDef)
            and len(ctx.functions) == 1
            and class_name is None
            and ctx.wraps_models
        ):
            # `def ddp_wrap(m): return DDP(m)`: what its calls return is a DDP model.
            ctx.names.note_wrapper_maker(node.name.value, returned_values(node))
        ctx.tensors.bind_params(params)
        self.walk(body)
        ctx.tensors.pop()
        ctx.facts.leave_function(node)
        ctx.names.pop()
        ctx.functions.pop()
        ctx.import_time, ctx.conditions, ctx.loop_depth, ctx.statement = saved

    def _class_def(self, node: cst.ClassDef) -> None:
        ctx = self.ctx
        self._walk_all(node.decorators)
        self._walk_all((*node.bases, *node.keywords))
        ctx.classes.append(node)
        ctx.facts.enter_class(node)
        ctx.names.push(ScopeKind.CLASS)
        ctx.tensors.push()
        self.walk(node.body)
        ctx.tensors.pop()
        ctx.names.pop()
        ctx.facts.leave_class()
        ctx.classes.pop()
        ctx.names.bind_other(node.name.value)

    def _if(self, node: cst.If) -> None:
        ctx = self.ctx
        self.walk(node.test)
        kind = guard_kind(node.test)
        saved = (ctx.import_time, ctx.reachable)
        if kind in ("main", "type-checking"):
            ctx.import_time = False
        if kind == "type-checking":
            ctx.reachable = False
        ctx.conditions.append(Condition(node.test, holds=True))
        ctx.rank.begin_control(node.test, branch=True)
        ctx.facts.begin_branch(node.test, taint=ctx.rank.control_taint)
        self.walk(node.body)
        ctx.conditions.pop()
        ctx.import_time, ctx.reachable = saved
        if node.orelse is not None:
            if kind == "not-main":
                ctx.import_time = False
            ctx.conditions.append(Condition(node.test, holds=False))
            ctx.facts.switch_arm()
            ctx.rank.switch_control_arm()
            self.walk(node.orelse)
            ctx.conditions.pop()
            ctx.import_time = saved[0]
        ctx.rank.end_control()
        ctx.facts.end_branch()

    def _for(self, node: cst.For) -> None:
        ctx = self.ctx
        self.walk(node.iter)
        ctx.names.bind_target(node.target, None)
        ctx.rank.bind(node.target, ctx.rank.taint(node.iter))
        ctx.tensors.bind_loop_target(node.target, node.iter)
        self.walk(node.target)
        ctx.loop_depth += 1
        loop = ctx.facts.begin_loop()
        ctx.rank.begin_control(node.iter)
        self.walk(node.body)
        ctx.rank.end_control()
        ctx.facts.end_loop(loop, node.iter)
        ctx.loop_depth -= 1
        if node.orelse is not None:
            self.walk(node.orelse)

    def _while(self, node: cst.While) -> None:
        ctx = self.ctx
        # The test runs before every iteration: its events belong to the loop.
        loop = ctx.facts.begin_loop()
        self.walk(node.test)
        ctx.conditions.append(Condition(node.test, holds=True))
        ctx.loop_depth += 1
        ctx.rank.begin_control(node.test)
        self.walk(node.body)
        ctx.rank.end_control()
        ctx.facts.end_loop(loop, node.test)
        ctx.loop_depth -= 1
        ctx.conditions.pop()
        if node.orelse is not None:
            self.walk(node.orelse)

    def _assign(self, node: cst.Assign) -> None:
        self.walk(node.value)
        self.ctx.rank.bind_assignment([t.target for t in node.targets], node.value)
        self.ctx.tensors.bind_assignment([t.target for t in node.targets], node.value)
        for target in node.targets:
            self.walk(target.target)
            self.ctx.names.bind_target(target.target, node.value)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        self.walk(node.annotation.annotation)
        if node.value is not None:
            self.walk(node.value)
        self.walk(node.target)
        self.ctx.tensors.bind_annotated(node.target, node.annotation.annotation, node.value)
        if node.value is not None:
            self.ctx.rank.bind_assignment([node.target], node.value)
            self.ctx.names.bind_target(node.target, node.value)

    def _aug_assign(self, node: cst.AugAssign) -> None:
        rank = self.ctx.rank
        self.walk(node.value)
        self.walk(node.target)
        rank.bind(node.target, rank.taint(node.target) | rank.taint(node.value))
        self.ctx.tensors.bind_augmented(node.target, node.value)
        self.ctx.names.bind_target(node.target, None)

    def _named_expr(self, node: cst.NamedExpr) -> None:
        self.walk(node.value)
        self.ctx.rank.bind_assignment([node.target], node.value)
        self.ctx.tensors.bind_assignment([node.target], node.value)
        self.ctx.names.bind_target(node.target, node.value)

    def _import(self, node: cst.Import | cst.ImportFrom) -> None:
        # Alias names are not loads: nothing below an import is walked.
        self.ctx.names.bind_import_statement(node)
        self.ctx.facts.record_import(node)

    def _global(self, node: cst.Global | cst.Nonlocal) -> None:
        # Names only: nothing below is a load.
        scope = "global" if isinstance(node, cst.Global) else "nonlocal"
        self.ctx.rank.declare((item.name.value for item in node.names), scope=scope)

    def _with(self, node: cst.With) -> None:
        calls = self.ctx.calls
        state_dict = 0
        for item in node.items:
            self.walk(item.item)
            if is_state_dict_context(item.item):
                state_dict += 1
            if item.asname is not None:
                self.walk(item.asname.name)
                self.ctx.names.bind_target(item.asname.name, None)
        calls.state_dict_contexts += state_dict
        self.walk(node.body)
        calls.state_dict_contexts -= state_dict

    def _call(self, node: cst.Call) -> None:
        site = Site(self.ctx.top_index, self.ctx.call_ordinal)
        self._walk_children(node)
        self.ctx.rank.mutated_by(node)
        self.ctx.facts.call(node, site)

    def _attribute(self, node: cst.Attribute) -> None:
        self._walk_children(node)
        if node.attr.value in PROPERTY_COLLECTIVES:
            self.ctx.facts.property_read(node, self.ctx.place)

    def _if_exp(self, node: cst.IfExp) -> None:
        facts = self.ctx.facts
        self.walk(node.test)
        facts.begin_branch(node.test)
        self.walk(node.body)
        facts.switch_arm()
        self.walk(node.orelse)
        facts.end_branch()

    def _boolean_operation(self, node: cst.BooleanOperation) -> None:
        # `a and b and c` is left-nested: ((a and b) and c). The chain is walked
        # as one unit, iteratively: the first operand always runs, the others
        # only where the operands before them are true (`or`: false). One
        # branch on the whole prefix keeps long chains linear.
        facts = self.ctx.facts
        operator = type(node.operator)
        chain: list[cst.BooleanOperation] = []
        current: cst.BaseExpression = node
        while isinstance(current, cst.BooleanOperation) and isinstance(current.operator, operator):
            chain.append(current)
            current = current.left
        # `chain` runs from the outermost node inward; the handlers of the inner
        # chain nodes run as if they had been walked one by one.
        for inner in chain[1:]:
            handlers = self._visit.get(cst.BooleanOperation)
            if handlers:
                self._dispatch(handlers, inner)
        self.walk(current)
        facts.begin_branch(node.left, negate=operator is cst.Or)
        for inner in reversed(chain):
            self.walk(inner.right)
            if inner is not node:
                handlers = self._leave.get(cst.BooleanOperation)
                if handlers:
                    self._dispatch(handlers, inner)
        facts.end_branch()

    def _try(self, node: cst.Try | cst.TryStar) -> None:
        facts = self.ctx.facts
        self.walk(node.body)
        for handler in node.handlers:
            opaque = facts.begin_opaque()
            self.walk(handler)
            facts.end_opaque(opaque)
        if node.orelse is not None:
            self.walk(node.orelse)
        if node.finalbody is not None:
            self.walk(node.finalbody)

    def _return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.walk(node.value)
        self.ctx.facts.returned(node.value)

    def _expression_statement(self, node: cst.Expr) -> None:
        facts = self.ctx.facts
        outer = facts.statement_call
        facts.statement_call = node.value if isinstance(node.value, cst.Call) else None
        self.walk(node.value)
        facts.statement_call = outer

    def _raise(self, node: cst.Raise) -> None:
        self._walk_children(node)
        self.ctx.facts.exit(ExitKind.RAISE)

    def _continue(self, node: cst.Continue) -> None:
        self.ctx.facts.exit(ExitKind.CONTINUE)

    def _break(self, node: cst.Break) -> None:
        self.ctx.facts.exit(ExitKind.BREAK)

    def _except_handler(self, node: cst.ExceptHandler | cst.ExceptStarHandler) -> None:
        if node.type is not None:
            self.walk(node.type)
        if node.name is not None:
            self.ctx.names.bind_target(node.name.name, None)
        self.walk(node.body)

    def _del(self, node: cst.Del) -> None:
        self.walk(node.target)
        self.ctx.names.bind_target(node.target, None)

    def _comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp
    ) -> None:
        names = self.ctx.names
        # The outermost iterable is evaluated in the enclosing scope.
        self.walk(node.for_in.iter)
        names.push(ScopeKind.COMPREHENSION)
        # Its targets are its own: the enclosing kinds come back after it.
        kinds = self.ctx.tensors.snapshot()
        self._comp_for(node.for_in, outermost=True)
        if isinstance(node, cst.DictComp):
            self.walk(node.key)
            self.walk(node.value)
        else:
            self.walk(node.elt)
        self.ctx.tensors.restore(kinds)
        names.pop()

    def _comp_for(self, node: cst.CompFor, *, outermost: bool) -> None:
        handlers = self._visit.get(cst.CompFor)
        if handlers:
            self._dispatch(handlers, node)
        if not outermost:
            self.walk(node.iter)
        self.ctx.names.bind_target(node.target, None)
        self.ctx.tensors.bind_comprehension_target(node.target, node.iter)
        self.walk(node.target)
        for condition in node.ifs:
            self.walk(condition.test)
        if node.inner_for_in is not None:
            self._comp_for(node.inner_for_in, outermost=False)
        handlers = self._leave.get(cst.CompFor)
        if handlers:
            self._dispatch(handlers, node)


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            found.append(extra)
    return found
