"""Per-file facts for the project phase: a small event tree per function.

While the walker traverses a file, :class:`FactsBuilder` records, for every
function (and for the module body), the events that matter for collective
consistency, in execution order: collectives and group creations, calls to
functions that may be defined in the project, branches (with the rank-taint of
their condition), loops, early exits. Everything else is dropped. The result,
:class:`ModuleSummary`, is plain picklable data: the project phase
(:mod:`ranklint.analysis.project`) joins the summaries of all files into a
call graph without re-reading any file, and a later cache can store it per
file content hash.

Call sites are identified by :class:`Site` (index of the module-level
statement, ordinal of the call within it in walk order) rather than by line
and column: positions cost a code-generation pass, so they are computed only
for the few sites that end up in a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from ranklint.analysis.catalog import CallKind, CallSpec, ParamRef, lookup, lookup_method
from ranklint.analysis.hot import hot_reason, marker_label, periodic_arm
from ranklint.analysis.names import dotted_name, last_name
from ranklint.analysis.rank import (
    CLEAN,
    RankTaint,
    Taint,
    axes_of_expression,
    boolean_operands,
    call_target,
    is_external,
)

if TYPE_CHECKING:
    from ranklint.analysis.settings import AnalysisSettings


@dataclass(frozen=True, slots=True)
class Site:
    """A place in a file: module-level statement index and an ordinal within it.

    A positive ordinal counts calls in walk order (the n-th call of the
    statement); a negative one counts hot-path candidates (:class:`HotUse`) that
    the enabled rules recorded in the statement, also in walk order.
    """

    top: int
    ordinal: int


# A literal argument or default value: True, False, None; UNKNOWN otherwise.
UNKNOWN = "?"
Literal = bool | None | str


@dataclass(frozen=True, slots=True)
class Cond:
    """The condition of a branch or loop, as far as rank dependence goes.

    ``key``/``check``/``negated`` are a canonical form of the test: the test
    holds when ``check`` of ``key`` differs from ``negated``. ``rank == 0``,
    ``rank != 0`` and ``rank > 0`` share the key ``rank==0``; ``not flag`` and
    ``flag`` share ``flag``; ``group is None`` has key ``group``, check
    ``is-none``. Branches on one key take the same arm on a given rank, and a
    parameter key can be decided by a literal argument at a call site.
    """

    text: str
    taint: Taint
    key: str
    check: str = "truthy"  # or "is-none"
    negated: bool = False
    # Rank-invariant parts of an `and` (or `or`) test: ranks can only diverge
    # where they hold (fail), so both arms are compared assuming so:
    # (key, truth of the canonical predicate).
    assumptions: tuple[tuple[str, bool], ...] = ()

    def holds(self, value: Literal) -> bool | None:
        """Whether the test holds when ``key`` is the literal ``value``."""
        if value == UNKNOWN:
            return None
        result = value is None if self.check == "is-none" else bool(value)
        return result != self.negated


@dataclass(slots=True)
class Collective:
    spec: str  # catalog name
    op: str  # short name: all_reduce, barrier, ...
    kind: CallKind
    # Source text of the group argument; None for the default group.
    group: str | None
    # Axes of the group: frozenset() for the default (world) group, None when
    # an explicit group's axis is unknown.
    group_axes: frozenset[str] | None
    site: Site
    label: str  # how the call reads in the source: dist.all_reduce
    # Group creation under `if self.x is None:`: lazy, once per object. Whoever
    # calls first creates it; a caller under a rank condition may not be first.
    lazy: bool = False


@dataclass(slots=True)
class CallEvent:
    target: str  # raw target, see rank.call_target
    site: Site
    label: str
    # Arguments passed: (position, keyword, literal value or UNKNOWN); the
    # position counts from the first argument as written.
    args: tuple[tuple[int | None, str | None, Literal], ...] = ()
    # ``*args`` / ``**kwargs`` in the call: any parameter may be passed.
    unpacking: bool = False
    # The call is a statement of its own: its result is thrown away.
    discarded: bool = False


@dataclass(slots=True)
class Marker:
    """A call that makes the loop around it a step loop: ``loss.backward()``,
    ``optimizer.step()``, ``zero_grad()``, a model forward (see :mod:`ranklint.analysis.hot`)."""

    label: str
    # A training marker (backward, optimizer step, hot-named call) rather
    # than a model forward: preferred when a message names the loop.
    training: bool = True


@dataclass(slots=True)
class HotUse:
    """Code that costs something every time it runs: a finding when it runs every step.

    Recorded by the RNK2xx rules during the walk; the project phase decides
    which ones are in hot code and words the finding as
    ``{text} {where}; {advice}``.
    """

    code: str
    site: Site
    label: str  # how it reads: `loss.item()`
    text: str
    advice: str


@dataclass(slots=True)
class Branch:
    cond: Cond | None
    arms: tuple[list[Event], list[Event]] = field(default_factory=lambda: ([], []))
    # 1: the first arm runs once every N steps (`if step % N == 0:`); -1: the
    # second arm does (`if step % N:`); 0: neither. Set only when periodic code
    # is allowed to sync (`allow-periodic-sync`).
    periodic: int = 0


@dataclass(slots=True)
class Loop:
    cond: Cond | None  # set when the trip count may depend on the rank
    body: list[Event] = field(default_factory=list)


@dataclass(slots=True)
class Exit:
    kind: str  # return, raise, exit, continue, break


@dataclass(slots=True)
class Opaque:
    """Code off the normal path (exception handlers): checked, not sequenced."""

    body: list[Event] = field(default_factory=list)


Event = Collective | CallEvent | Branch | Loop | Exit | Opaque | Marker | HotUse


@dataclass(slots=True)
class FunctionSummary:
    qualname: str  # Class.method, outer.inner, <module>
    class_name: str | None
    params: tuple[str, ...]  # positional parameters, in order
    keyword_only: tuple[str, ...] = ()
    # Literal default values (True, False, None) by parameter name.
    defaults: dict[str, Literal] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    returns: Taint = CLEAN
    # Decorator that runs the body on one rank only (``@rank_zero_only``).
    rank_only: str | None = None
    name: str = ""
    # Why every call of this function is per-step code (hot-functions name,
    # `@torch.compile`, `# ranklint: hot`), or None.
    hot: str | None = None
    # The hot reason holds only if the class is an nn.Module (``forward``).
    hot_if_module: bool = False
    # ``async def``: calling it makes a coroutine that runs only when awaited.
    is_async: bool = False


@dataclass(slots=True)
class ModuleSummary:
    path: str
    functions: dict[str, FunctionSummary]
    module: FunctionSummary
    # class name -> raw targets of its bases
    classes: dict[str, tuple[str, ...]]
    # module-level names bound by imports -> qualified name (re-exports)
    exports: dict[str, str]
    # DeviceMesh dimension names this file declares, and `mesh["name"]` uses;
    # whether some mesh here is built from names computed at run time.
    mesh_names: frozenset[str] = frozenset()
    mesh_uses: tuple[tuple[Site, str], ...] = ()
    mesh_dynamic: bool = False


_RANK_ONLY_DECORATORS = frozenset(
    {
        "rank_zero_only",
        "rank0_only",
        "rank_0_only",
        "on_rank_zero",
        "on_rank0",
        "main_process_only",
        "on_main_process",
        "on_local_main_process",
        "master_only",
        "zero_rank_only",
    }
)
_TRANSPARENT_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "abstractmethod", "override", "final", "wraps"}
)
# Deepest nesting of branches kept as such in a summary (see begin_branch).
_MAX_NESTING = 48
_EXIT_CALLS = frozenset({"sys.exit", "os._exit", "@local:exit", "@local:quit"})
_STATE_DICT_METHODS = frozenset({"state_dict", "optim_state_dict", "load_state_dict"})


@dataclass
class _Frame:
    summary: FunctionSummary
    # Stack of event lists being filled (innermost last).
    blocks: list[list[Event]]
    discard: bool = False
    # A rank-dependent branch with an early exit was seen.
    rank_exit: bool = False


@dataclass
class _BranchState:
    node: cst.BaseExpression
    branch: Branch | None  # None: nested too deep, its events stay in the outer block
    frame_blocks: int  # depth of the block stack when the branch began
    negate: bool = False


class FactsBuilder:
    """Builds a :class:`ModuleSummary` during the walk; called by the walker."""

    def __init__(
        self,
        module: cst.Module,
        path: str,
        rank: RankTaint,
        settings: AnalysisSettings,
    ) -> None:
        self.module = module
        self.path = path
        self.rank = rank
        self.settings = settings
        self.extra = settings.extra
        self.extra_methods = settings.extra_methods
        self.functions: dict[str, FunctionSummary] = {}
        self.classes: dict[str, tuple[str, ...]] = {}
        top = FunctionSummary("<module>", None, ())
        self._frames: list[_Frame] = [_Frame(top, [top.events])]
        self._names: list[str] = []  # qualname parts of enclosing defs/classes
        self._class_names: list[str | None] = []
        self._branches: list[_BranchState] = []
        self.state_dict_contexts = 0
        # id(call node) -> classification; the nodes live as long as the walk.
        self._classified: dict[int, tuple[CallSpec | None, str | None]] = {}
        # The call that is the whole expression statement being walked, if any.
        self.statement_call: cst.Call | None = None
        # Hot-path candidates: site -> (node, statement, top-level statement),
        # for placing the ones that become findings (see Site).
        self.hot_nodes: dict[Site, tuple[cst.CSTNode, cst.CSTNode | None, cst.CSTNode | None]] = {}
        self._hot_top = -1
        self._hot_count = 0
        self.mesh_names: set[str] = set()
        self.mesh_uses: list[tuple[Site, str]] = []
        self.mesh_dynamic = False

    # -- structure ---------------------------------------------------------
    def enter_function(self, node: cst.FunctionDef | cst.Lambda, class_name: str | None) -> None:
        self.rank.push_function(method=class_name is not None)
        if isinstance(node, cst.Lambda):
            dummy = FunctionSummary("<lambda>", None, ())
            self._frames.append(_Frame(dummy, [dummy.events], discard=True))
            return
        qualname = ".".join((*self._names, node.name.value))
        params = tuple(p.name.value for p in (*node.params.posonly_params, *node.params.params))
        keyword_only = tuple(p.name.value for p in node.params.kwonly_params)
        summary = FunctionSummary(qualname, class_name, params, keyword_only, name=node.name.value)
        # A decorator may turn it into something else (`@auto_await`, `@sync`):
        # only plain and method-kind decorators keep a coroutine function.
        summary.is_async = node.asynchronous is not None and all(
            (dotted_name(_decorator_callee(d.decorator)) or "").rsplit(".", 1)[-1]
            in _TRANSPARENT_DECORATORS
            for d in node.decorators
        )
        for param in (
            *node.params.posonly_params,
            *node.params.params,
            *node.params.kwonly_params,
        ):
            if param.default is not None:
                value = _literal(param.default)
                if value != UNKNOWN:
                    summary.defaults[param.name.value] = value
        for decorator in node.decorators:
            name = dotted_name(_decorator_callee(decorator.decorator))
            if name is not None and name.rsplit(".", 1)[-1] in _RANK_ONLY_DECORATORS:
                summary.rank_only = "@" + name
        summary.hot, summary.hot_if_module = hot_reason(
            node, class_name, self.settings.hot_functions, self.rank.names
        )
        self.functions.setdefault(qualname, summary)
        self._frames.append(_Frame(summary, [summary.events]))
        self._names.append(node.name.value)

    def leave_function(self, node: cst.FunctionDef | cst.Lambda) -> None:
        self.rank.pop_function()
        self._frames.pop()
        if isinstance(node, cst.FunctionDef):
            self._names.pop()

    def enter_class(self, node: cst.ClassDef) -> None:
        qualname = ".".join((*self._names, node.name.value))
        bases = []
        for arg in node.bases:
            target = call_target(arg.value, self.rank.names)
            if target is not None:
                bases.append(target)
        self.classes[qualname] = tuple(bases)
        self._names.append(node.name.value)
        self.rank.push_class()

    def leave_class(self) -> None:
        self._names.pop()
        self.rank.pop_class()

    # -- events ------------------------------------------------------------
    @property
    def _block(self) -> list[Event]:
        return self._frames[-1].blocks[-1]

    def call(self, node: cst.Call, site: Site) -> None:
        """Record a call after its arguments were walked (evaluation order)."""
        spec, target = self.classify(node)
        if spec is not None:
            if not spec.kind.synchronising:
                return
            collective = self._collective(node, spec, site)
            if spec.kind is CallKind.GROUP_CREATION and any(
                _is_lazy_test(state.node) for state in self._branches
            ):
                collective.lazy = True
            self._block.append(collective)
            if spec.kind is CallKind.COLLECTIVE and spec.qualified_names and node.args:
                # After a broadcast / all_reduce / all_gather the first argument
                # holds the same value on every member.
                self.rank.bind(node.args[0].value, CLEAN)
            return
        marker = marker_label(node, self.settings.hot_functions)
        if marker is not None:
            self._block.append(Marker(*marker))
        if target is None:
            return
        if target in _EXIT_CALLS:
            self._block.append(Exit("exit"))
            return
        if is_external(target):
            return
        func = node.func
        label = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func) or "?"
        self._block.append(
            CallEvent(
                target,
                site,
                label,
                _call_args(node),
                any(a.star for a in node.args),
                discarded=node is self.statement_call,
            )
        )

    def classify(self, node: cst.Call) -> tuple[CallSpec | None, str | None]:
        """(catalog row, raw target) of a call; computed once per call node."""
        key = id(node)
        found = self._classified.get(key)
        if found is None:
            found = self._classified[key] = self._classify(node)
        return found

    def _classify(self, node: cst.Call) -> tuple[CallSpec | None, str | None]:
        func = node.func
        names = self.rank.names
        qualified = names.resolve(func)
        if qualified is not None:
            spec = lookup(qualified) or self.extra.get(qualified)
            if spec is not None:
                return spec, qualified
        target = call_target(func, names)
        if isinstance(func, cst.Attribute) and (qualified is None or spec is None):
            method = func.attr.value
            receiver = last_name(func.value)
            if self.state_dict_contexts and method in _STATE_DICT_METHODS and qualified is None:
                return _FSDP_STATE_DICT, target
            if target is None or not target.startswith("@self:"):
                spec = lookup_method(method, receiver) or self.extra_methods.get(method)
                if spec is not None and qualified is None:
                    return spec, target
            elif method in self.extra_methods:
                return self.extra_methods[method], target
        if target is not None and target.startswith("@local:"):
            spec = self.extra.get(target[len("@local:") :])
            if spec is not None:
                return spec, target
        return None, target

    def _collective(self, node: cst.Call, spec: CallSpec, site: Site) -> Collective:
        group_text: str | None = None
        group_axes: frozenset[str] | None = frozenset()
        label = dotted_name(node.func) or spec.short
        if spec.kind is CallKind.GROUP_CREATION:
            # Creation runs over the default group; its arguments tell groups apart.
            arguments = ", ".join(self.module.code_for_node(arg).strip() for arg in node.args)
            return Collective(spec.name, spec.short, spec.kind, arguments, frozenset(), site, label)
        if spec.implicit_group:
            return Collective(spec.name, spec.short, spec.kind, None, None, site, label)
        argument = find_argument(node, spec.group)
        if argument is not None and not _is_none(argument):
            group_text = self.module.code_for_node(argument)
            axes = axes_of_expression(argument)
            world = group_text.endswith("WORLD") or group_text.endswith("world_group")
            group_axes = frozenset() if world else (axes if axes else None)
            if world:
                group_text = None
        return Collective(spec.name, spec.short, spec.kind, group_text, group_axes, site, label)

    def exit(self, kind: str) -> None:
        self._block.append(Exit(kind))

    def hot_use(
        self,
        code: str,
        node: cst.CSTNode,
        label: str,
        text: str,
        advice: str,
        where: tuple[int, cst.CSTNode | None, cst.CSTNode | None],
    ) -> None:
        """Record a hot-path candidate at ``node``; ``where``: (top index, statement, top)."""
        site = self.record_site(node, where)
        self._block.append(HotUse(code, site, label, text, advice))

    def record_site(
        self, node: cst.CSTNode, where: tuple[int, cst.CSTNode | None, cst.CSTNode | None]
    ) -> Site:
        """A site (negative ordinal, see :class:`Site`) naming ``node`` for the project phase."""
        top, statement, top_statement = where
        if top != self._hot_top:
            self._hot_top, self._hot_count = top, 0
        self._hot_count += 1
        site = Site(top, -self._hot_count)
        self.hot_nodes[site] = (node, statement, top_statement)
        return site

    def returned(self, value: cst.BaseExpression | None) -> None:
        frame = self._frames[-1]
        if value is not None and not frame.discard:
            frame.summary.returns = frame.summary.returns | self.rank.taint(value)
        frame.blocks[-1].append(Exit("return"))

    # -- branches and loops ----------------------------------------------
    def begin_branch(self, test: cst.BaseExpression, *, negate: bool = False) -> None:
        """A two-armed branch on ``test``; ``negate``: the first arm runs when it is false.

        Beyond ``_MAX_NESTING`` levels (500 ``elif``s, chained conditional
        expressions) branches are not nested further: their events join the
        enclosing block. This bounds the depth of every later recursion over
        the events (the project phase, pickling to and from workers).
        """
        frame = self._frames[-1]
        if len(frame.blocks) > _MAX_NESTING:
            self._branches.append(_BranchState(test, None, len(frame.blocks), negate))
            return
        branch = Branch(None)
        self._branches.append(_BranchState(test, branch, len(frame.blocks), negate))
        frame.blocks.append(branch.arms[1] if negate else branch.arms[0])

    def switch_arm(self) -> None:
        state = self._branches[-1]
        if state.branch is None:
            return
        blocks = self._frames[-1].blocks
        blocks.pop()
        blocks.append(state.branch.arms[0] if state.negate else state.branch.arms[1])

    def end_branch(self) -> None:
        state = self._branches.pop()
        branch = state.branch
        if branch is None:
            return
        frame = self._frames[-1]
        frame.blocks.pop()
        if branch.arms[0] or branch.arms[1]:
            branch.cond = self._cond(state.node)
            if self.settings.allow_periodic_sync:
                # arms[0] always holds the code that runs when the test holds.
                branch.periodic = periodic_arm(state.node)
            frame.blocks[-1].append(branch)
            if (
                branch.cond is not None
                and branch.cond.taint.possible
                and any(isinstance(e, Exit) for arm in branch.arms for e in arm)
            ):
                frame.rank_exit = True

    @property
    def rank_exit_seen(self) -> bool:
        """A rank-dependent early exit happened earlier in the current function."""
        return self._frames[-1].rank_exit

    def begin_loop(self) -> Loop:
        loop = Loop(None)
        self._frames[-1].blocks.append(loop.body)
        return loop

    def end_loop(self, loop: Loop, rank_expression: cst.BaseExpression | None) -> None:
        frame = self._frames[-1]
        frame.blocks.pop()
        if loop.body:
            if rank_expression is not None:
                cond = self._cond(rank_expression)
                loop.cond = cond if cond is not None and cond.taint.possible else None
            frame.blocks[-1].append(loop)

    def begin_opaque(self) -> Opaque:
        opaque = Opaque()
        self._frames[-1].blocks.append(opaque.body)
        return opaque

    def end_opaque(self, opaque: Opaque) -> None:
        frame = self._frames[-1]
        frame.blocks.pop()
        if opaque.body:
            frame.blocks[-1].append(opaque)

    def _cond(self, test: cst.BaseExpression) -> Cond | None:
        taint = self.rank.taint(test)
        if not taint.possible and not _is_plain_test(test):
            return None  # nothing to decide or match: skip the code generation
        key, check, negated, subject = self._canonical(test)
        summary = self._frames[-1].summary
        on_param = isinstance(subject, cst.Name) and (
            subject.value in summary.params or subject.value in summary.keyword_only
        )
        if not taint.possible and not on_param:
            if subject is None or dotted_name(subject) is None:
                return None
            # A plain flag: kept so that `elif flag:` can be matched with the
            # assumptions of a rank condition (`not flag and is_main()`).
            return Cond(key, CLEAN, key, check, negated)
        text = " ".join(self.module.code_for_node(test).split())
        if len(text) > 60:
            text = text[:57] + "..."
        assumptions: list[tuple[str, bool]] = []
        if taint.possible and isinstance(test, cst.BooleanOperation):
            conjunction = isinstance(test.operator, cst.And)
            for operand in boolean_operands(test, type(test.operator)):
                if self.rank.taint(operand).possible:
                    continue
                part_key, _, part_negated, _ = self._canonical(operand)
                # `and`: the operand holds; `or`: it fails.
                assumptions.append((part_key, part_negated != conjunction))
        return Cond(text, taint, key, check, negated, tuple(assumptions))

    def _canonical(
        self, test: cst.BaseExpression
    ) -> tuple[str, str, bool, cst.BaseExpression | None]:
        """(key, check, negated, subject) of a test; see :class:`Cond`."""
        negated = False
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            negated, test = not negated, test.expression
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            operator, right = target.operator, target.comparator
            left_text = " ".join(self.module.code_for_node(test.left).split())
            if (
                isinstance(right, cst.Name)
                and right.value == "None"
                and isinstance(operator, (cst.Is, cst.IsNot))
            ):
                return (
                    left_text,
                    "is-none",
                    negated != isinstance(operator, cst.IsNot),
                    test.left,
                )
            if isinstance(right, cst.Integer):
                value = right.value
                # Ranks are >= 0: `> 0` and `>= 1` are `!= 0`.
                if value == "0" and isinstance(
                    operator, (cst.Equal, cst.NotEqual, cst.GreaterThan)
                ):
                    flip = not isinstance(operator, cst.Equal)
                    return f"{left_text}==0", "truthy", negated != flip, None
                if value == "1" and isinstance(operator, cst.GreaterThanEqual):
                    return f"{left_text}==0", "truthy", not negated, None
        dotted = dotted_name(test)
        if dotted is not None:
            return dotted, "truthy", negated, test
        text = " ".join(self.module.code_for_node(test).split())
        return text, "truthy", negated, test

    # -- result ------------------------------------------------------------
    def summary(self, exports: dict[str, str]) -> ModuleSummary:
        return ModuleSummary(
            path=self.path,
            functions=self.functions,
            module=self._frames[0].summary,
            classes=self.classes,
            exports=exports,
            mesh_names=frozenset(self.mesh_names),
            mesh_uses=tuple(self.mesh_uses),
            mesh_dynamic=self.mesh_dynamic,
        )


_FSDP_STATE_DICT = CallSpec(
    "FullyShardedDataParallel.state_dict", CallKind.COLLECTIVE, methods=("state_dict",)
)


def find_argument(node: cst.Call, param: ParamRef | None) -> cst.BaseExpression | None:
    """The expression passed for ``param`` (by keyword or position), or ``None``."""
    if param is None:
        return None
    position = 0
    for arg in node.args:
        if arg.keyword is not None:
            if arg.keyword.value == param.keyword:
                return arg.value
            continue
        if arg.star:
            return None  # unpacked: cannot tell which parameter gets what
        if param.position is not None and position == param.position:
            return arg.value
        position += 1
    return None


def has_unpacking(node: cst.Call) -> bool:
    """``*args`` or ``**kwargs`` in the call: any parameter may be passed."""
    return any(arg.star for arg in node.args)


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _decorator_callee(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.func if isinstance(node, cst.Call) else node


def _is_plain_test(test: cst.BaseExpression) -> bool:
    """``flag``, ``not self.flag``, ``x is None``: tests that are matched by key."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if isinstance(test, cst.Comparison):
        if not (
            len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        ):
            return False
        test = test.left
    return isinstance(test, (cst.Name, cst.Attribute))


def _is_lazy_test(test: cst.BaseExpression) -> bool:
    """``self.x is None`` (possibly in an ``and``): a lazily initialised attribute."""
    if isinstance(test, cst.BooleanOperation):
        return _is_lazy_test(test.left) or _is_lazy_test(test.right)
    return (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
        and (dotted_name(test.left) or "").startswith("self.")
    )


def _literal(node: cst.BaseExpression) -> Literal:
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return UNKNOWN


def _call_args(node: cst.Call) -> tuple[tuple[int | None, str | None, Literal], ...]:
    found: list[tuple[int | None, str | None, Literal]] = []
    position = 0
    for arg in node.args:
        if arg.star:
            continue
        if arg.keyword is not None:
            found.append((None, arg.keyword.value, _literal(arg.value)))
            continue
        found.append((position, None, _literal(arg.value)))
        position += 1
    return tuple(found)
