"""The facts builder: records a file's :mod:`~ranklint.model.events` during the walk.

While the walker traverses a file, :class:`FactsBuilder` records, for every function (and
for the module body), the events that matter across files, in execution order: collectives
and group creations, calls to functions that may be defined in the project (with their
rank-dependent arguments), branches (with the rank-taint of their condition), loops, early
exits, step markers and host costs. Everything else is dropped. The result,
:class:`~ranklint.model.events.ModuleSummary`, is the same whatever rules are selected.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import libcst as cst

from ranklint.analysis.walk import decorators
from ranklint.analysis.walk.arguments import (
    call_args,
    find_argument,
    group_arguments,
    is_none,
    literal,
    rank_arguments,
    received_buffer,
    reduce_op_name,
)
from ranklint.analysis.walk.axes import axes_of_expression
from ranklint.analysis.walk.canonical import Canonical, canonical_test
from ranklint.analysis.walk.catalog import BACKEND_OPS, FSDP_MODULE, CallSpec, shows_backend
from ranklint.analysis.walk.classify import CallClassifier
from ranklint.analysis.walk.framework import (
    collective_property,
    sharded_in_place,
    single_process_launch,
    synced_log,
)
from ranklint.analysis.walk.guards import is_keyed_test, is_lazy_test
from ranklint.analysis.walk.hot_markers import hot_reason, marker_label, periodic_arm
from ranklint.analysis.walk.late_state import late_attributes
from ranklint.analysis.walk.membership import GroupTable, group_made, rank_test
from ranklint.analysis.walk.names import dotted_name, imported_modules, last_name
from ranklint.analysis.walk.rank import BATCH_DATA, RankTaint
from ranklint.analysis.walk.targets import call_target, is_external
from ranklint.analysis.walk.wrapped import forwarded_parameter, wrapped_argument
from ranklint.model.events import (
    FLAG_PREFIX,
    UNKNOWN,
    Branch,
    CallEvent,
    Collective,
    Cond,
    CostKind,
    Event,
    Exit,
    ExitKind,
    FunctionSummary,
    HostCost,
    Loop,
    Marker,
    ModuleSummary,
    Opaque,
    Site,
    rank_break,
)
from ranklint.model.kinds import CallKind
from ranklint.model.taint import CLEAN, Taint
from ranklint.syntax import boolean_operands, iter_nodes

if TYPE_CHECKING:
    from ranklint.analysis.walk.settings import AnalysisSettings

# A recorded node's place: (top statement index, innermost simple statement, top statement).
Where = tuple[int, cst.CSTNode | None, cst.CSTNode | None]
# A recorded node with the statements that hold it (for positions and suppressions).
PlacedNode = tuple[cst.CSTNode, cst.CSTNode | None, cst.CSTNode | None]


# Lightning's step methods, whose `batch` is this rank's share of the data.
_STEP_METHODS = frozenset({"training_step", "validation_step", "test_step", "predict_step"})
# Deepest nesting of branches kept as such in a summary (see begin_branch).
_MAX_NESTING = 48
_EXIT_CALLS = frozenset({"sys.exit", "os._exit", "@local:exit", "@local:quit"})


@dataclass
class _Frame:
    summary: FunctionSummary
    # Stack of event lists being filled (innermost last).
    blocks: list[list[Event]]
    discard: bool = False
    # A rank-dependent branch with an early exit was seen.
    rank_exit: bool = False
    # Names of buffers a rooted collective filled from another rank (see Cond.received).
    received: set[str] = field(default_factory=set)


@dataclass
class _BranchState:
    node: cst.BaseExpression
    branch: Branch | None  # None: nested too deep, its events stay in the outer block
    frame_blocks: int  # depth of the block stack when the branch began
    negate: bool = False
    # The test's taint where it is evaluated (before the arms assign anything).
    taint: Taint | None = None


class FactsBuilder:
    """Builds a :class:`ModuleSummary` during the walk; called by the walker."""

    def __init__(
        self,
        module: cst.Module,
        path: str,
        rank: RankTaint,
        settings: AnalysisSettings,
        calls: CallClassifier,
    ) -> None:
        self.module = module
        self.path = path
        self.rank = rank
        self.settings = settings
        self.calls = calls
        self.functions: dict[str, FunctionSummary] = {}
        self.classes: dict[str, tuple[str, ...]] = {}
        top = FunctionSummary("<module>", None, ())
        self._frames: list[_Frame] = [_Frame(top, [top.events])]
        self._names: list[str] = []  # qualname parts of enclosing defs/classes
        self._branches: list[_BranchState] = []
        # The call that is the whole expression statement being walked, if any.
        self.statement_call: cst.Call | None = None
        # Nodes named by negative-ordinal sites (host costs, mesh indexing), for
        # placing the ones that become findings (see Site).
        self.recorded: dict[Site, PlacedNode] = {}
        self._recorded_top = -1
        self._recorded_count = 0
        self._groups = GroupTable(module, calls.names, calls.source)
        self.mesh_names: set[str] = set()
        self.mesh_uses: list[tuple[Site, str]] = []
        self.mesh_dynamic = False
        self.imports: set[str] = set()
        self.deferred_creations: list[tuple[Site, str]] = []
        # A file that never says `global ` sets no module global in a function.
        self._sets_globals = "global " in calls.source

    # -- structure ---------------------------------------------------------
    def enter_function(self, node: cst.FunctionDef | cst.Lambda, class_name: str | None) -> None:
        module = self.module if self._sets_globals else None
        self.rank.push_function(method=class_name is not None, node=node, module=module)
        if isinstance(node, cst.Lambda):
            dummy = FunctionSummary("<lambda>", None, ())
            self._frames.append(_Frame(dummy, [dummy.events], discard=True))
            return
        qualname = ".".join((*self._names, node.name.value))
        params = tuple(p.name.value for p in (*node.params.posonly_params, *node.params.params))
        keyword_only = tuple(p.name.value for p in node.params.kwonly_params)
        summary = FunctionSummary(qualname, class_name, params, keyword_only, name=node.name.value)
        if class_name is not None and node.name.value in _STEP_METHODS and "batch" in params:
            # Each rank's loader yields its own batch: what is built from its
            # contents (`y.unique()`) differs per rank.
            self.rank.bind(cst.Name("batch"), BATCH_DATA)
        summary.is_async = node.asynchronous is not None and decorators.keeps_coroutine(node)
        for param in (
            *node.params.posonly_params,
            *node.params.params,
            *node.params.kwonly_params,
        ):
            if param.default is not None:
                value = literal(param.default)
                if value != UNKNOWN:
                    summary.defaults[param.name.value] = value
        summary.rank_only = decorators.rank_only_decorator(node)
        summary.decorators = decorators.decorator_targets(node, self.rank.names)
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
        self.rank.push_class(late_attributes(node, self.rank.taint))

    def leave_class(self) -> None:
        self._names.pop()
        self.rank.pop_class()

    # -- events ------------------------------------------------------------
    @property
    def _block(self) -> list[Event]:
        return self._frames[-1].blocks[-1]

    def call(self, node: cst.Call, site: Site) -> None:
        """Record a call after its arguments were walked (evaluation order)."""
        spec, target = self.calls.classify(node)
        names = self.rank.names
        if last_name(node.func) == "fully_shard" and (model := sharded_in_place(node, names)):
            names.mark_instance(model, FSDP_MODULE)
        if single_process_launch(node, self.rank.names):
            self._frames[-1].summary.single_process = True
        if spec is None and self._synced_log(node, site):
            return
        if spec is not None:
            if not spec.kind.synchronising:
                return
            collective = self._collective(node, spec, site)
            if spec.kind is CallKind.GROUP_CREATION and any(
                is_lazy_test(state.node) for state in self._branches
            ):
                collective.lazy = True
            self._block.append(collective)
            if spec.kind is CallKind.COLLECTIVE and spec.qualified_names and node.args:
                # After a broadcast / all_reduce / all_gather the first argument
                # holds the same value on every member.
                self.rank.bind(node.args[0].value, CLEAN)
                self._frames[-1].received |= received_buffer(spec.short, node)
            return
        if (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _SHARING_NAMES
            and node.args
        ):
            # A project's own wrapper (`composer.utils.dist.broadcast_object_list`):
            # whatever it is, its first argument ends up the same on every rank.
            self.rank.bind(node.args[0].value, CLEAN)
            self._frames[-1].received |= received_buffer(node.func.attr.value, node)
        marker = marker_label(node, self.settings.hot_functions)
        if marker is not None:
            self._block.append(Marker(*marker))
        forward = (
            None
            if (scan := self.rank.scan()) is None
            else forwarded_parameter(node.func, scan.kept_parameter)
        )
        if target is None and forward is not None:
            target = "@local:" + ".".join(forward)  # `model.generate(...)` of a parameter
        if target is None:
            return
        if target in _EXIT_CALLS:
            self._block.append(Exit(ExitKind.EXIT))
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
                call_args(node, lambda arg: wrapped_argument(arg, self.calls)),
                any(a.star for a in node.args),
                discarded=node is self.statement_call,
                lazy=any(is_lazy_test(state.node) for state in self._branches),
                rank_args=rank_arguments(node, self.rank.taint),
                group_args=group_arguments(node, self._groups.maker(scan)),
                param_call=forward,
            )
        )

    def _synced_log(self, node: cst.Call, site: Site) -> bool:
        """Record Lightning's ``self.log(..., sync_dist=True)`` (see ``framework.synced_log``)."""
        found = synced_log(node)
        if found is None:
            return False
        name, label = f"LightningModule.{found.method}", dotted_name(node.func) or found.method
        event = Collective(name, found.method, CallKind.COLLECTIVE, None, frozenset(), site, label)
        loop = self.begin_loop() if found.keys is not None else None  # once per key
        self._block.append(event)
        if loop is not None:
            self.end_loop(loop, found.keys)
        return True

    def property_read(self, node: cst.Attribute, where: Where) -> None:
        """Record reading a framework property that is a collective (``trainer.log_dir``)."""
        spec = collective_property(node, self._frames[-1].summary.name or "")
        if spec is not None:
            # Run by the trainer's strategy over the whole job: the default group.
            site, label = self.record_site(node, where), dotted_name(node) or spec.short
            self._block.append(
                Collective(spec.name, spec.short, spec.kind, None, frozenset(), site, label)
            )

    def _collective(self, node: cst.Call, spec: CallSpec, site: Site) -> Collective:
        group_text: str | None = None
        group_axes: frozenset[str] | None = frozenset()
        label = dotted_name(node.func) or spec.short
        if spec.kind is CallKind.GROUP_CREATION:
            # Creation runs over the default group; its arguments tell groups apart.
            arguments = ", ".join(
                self.module.code_for_node(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip()
                for arg in node.args
            )
            return Collective(spec.name, spec.short, spec.kind, arguments, frozenset(), site, label)
        if spec.implicit_group:
            return Collective(spec.name, spec.short, spec.kind, None, None, site, label)
        argument = find_argument(node, spec.group)
        if argument is not None and not is_none(argument):
            group_text = self.module.code_for_node(argument)
            axes = axes_of_expression(argument)
            world = group_text.endswith("WORLD") or group_text.endswith("world_group")
            group_axes = frozenset() if world else (axes if axes else None)
            if world:
                group_text = None
        scan = self.rank.scan()
        group_axes, mesh_group, group_param = group_made(argument, group_axes, scan, self._groups)
        members = None  # a file that never names new_group has no such groups
        if "new_group" in self.calls.source:
            members = self._groups.members(argument, None if scan is None else scan.groups)
        event = Collective(spec.name, spec.short, spec.kind, group_text, group_axes, site, label)
        event.reduce_op = reduce_op_name(node, spec)
        event.mesh_group, event.group_param = mesh_group, group_param
        event.backend_shown = spec.short in BACKEND_OPS and shows_backend(self.calls.source)
        return replace(event, members=members) if members else event

    def exit(self, kind: ExitKind) -> None:
        self._block.append(Exit(kind))

    def host_cost(
        self,
        kind: CostKind,
        node: cst.CSTNode,
        text: str,
        where: Where,
        missing: tuple[str, ...] = (),
        decides: bool = False,
    ) -> None:
        """Record a host-cost candidate at ``node`` (see :class:`HostCost`)."""
        site = self.record_site(node, where)
        self._block.append(HostCost(kind, site, text, missing, decides))

    def record_site(self, node: cst.CSTNode, where: Where) -> Site:
        """A site (negative ordinal, see :class:`Site`) naming ``node`` for the project phase."""
        top, statement, top_statement = where
        if top != self._recorded_top:
            self._recorded_top, self._recorded_count = top, 0
        self._recorded_count += 1
        site = Site(top, -self._recorded_count)
        self.recorded[site] = (node, statement, top_statement)
        return site

    def returned(self, value: cst.BaseExpression | None) -> None:
        frame = self._frames[-1]
        if value is not None and not frame.discard:
            summary = frame.summary
            summary.returns = summary.returns | self.rank.taint(value)
            summary.elements = _merge_elements(summary.elements, self._elements(value))
        frame.blocks[-1].append(Exit(ExitKind.RETURN))

    def _elements(self, value: cst.BaseExpression) -> tuple[Taint, ...]:
        """Taint of each element of a returned tuple; () for other values."""
        if isinstance(value, (cst.Tuple, cst.List)) and not any(
            isinstance(element, cst.StarredElement) for element in value.elements
        ):
            return tuple(self.rank.taint(element.value) for element in value.elements)
        return ()

    # -- branches and loops ----------------------------------------------
    def begin_branch(
        self, test: cst.BaseExpression, *, negate: bool = False, taint: Taint | None = None
    ) -> None:
        """A two-armed branch on ``test``; ``negate``: the first arm runs when it is false.

        ``taint``: the test's taint, when known before the arms are walked (the
        arms may assign names the test reads: `if self.seed is None: self.seed
        = rank`); otherwise it is evaluated when the branch ends.

        Beyond ``_MAX_NESTING`` levels (500 ``elif``s, chained conditional
        expressions) branches are not nested further: their events join the
        enclosing block. This bounds the depth of every later recursion over
        the events (the project phase, pickling to and from workers).
        """
        frame = self._frames[-1]
        if len(frame.blocks) > _MAX_NESTING:
            self._branches.append(_BranchState(test, None, len(frame.blocks), negate, taint))
            return
        branch = Branch(None)
        self._branches.append(_BranchState(test, branch, len(frame.blocks), negate, taint))
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
            branch.cond = self._cond(state.node, state.taint)
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
            loop.cond = loop.cond or rank_break(loop.body)  # `if rank == 0: break`
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

    def _cond(self, test: cst.BaseExpression, taint: Taint | None = None) -> Cond | None:
        if taint is None:
            taint = self.rank.taint(test)
        cond = self._test_cond(test, taint)
        if taint.possible or not self._reads_received(test):
            return cond
        if cond is None:
            key = " ".join(self.module.code_for_node(test).split())
            return Cond(key, CLEAN, key, received=True)
        return replace(cond, received=True)

    def _reads_received(self, test: cst.BaseExpression) -> bool:
        """Whether ``test`` reads a buffer received from another rank (see Cond.received)."""
        received = self._frames[-1].received
        if not received:
            return False
        return any(
            dotted_name(node) in received
            for node in iter_nodes(test)
            if isinstance(node, (cst.Name, cst.Attribute))
        )

    def _test_cond(self, test: cst.BaseExpression, taint: Taint) -> Cond | None:
        if not taint.possible and isinstance(test, cst.BooleanOperation):
            return self._compound_flag(test)
        if not taint.possible and not is_keyed_test(test):
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
        rank_parts: list[tuple[str, str, bool]] = []
        conjunction = True
        if taint.possible and isinstance(test, cst.BooleanOperation):
            conjunction = isinstance(test.operator, cst.And)
            operands = boolean_operands(test, type(test.operator))
            taints = [self.rank.taint(operand) for operand in operands]
            # Where some operand surely depends on the rank, operands that only
            # might (through a project call that may return a rank) are
            # treated as flags: `pp_is_last or reshard_model`.
            surely = any(t.rank for t in taints)
            for operand, part in zip(operands, taints, strict=True):
                if part.rank or (part.possible and not surely):
                    rank_parts.append(self._canonical(operand)[:3])
                    continue
                part_key, check, part_negated, subject = self._canonical(operand)
                # `and`: the operand holds; `or`: it fails.
                assumptions.append((part_key, part_negated != conjunction))
                if check == "truthy" and subject is not None and dotted_name(subject):
                    # The flag's own truth, for calls that pass it on (`f(x, flag)`).
                    assumptions.append((FLAG_PREFIX + part_key, part_negated != conjunction))
        rank_part = rank_parts[0] if len(rank_parts) == 1 else None
        return Cond(
            text,
            taint,
            key,
            check,
            negated,
            tuple(assumptions),
            conjunction=conjunction,
            rank_part=rank_part,
            rank_test=rank_test(test, self.rank) if taint.possible else None,
        )

    def _compound_flag(self, test: cst.BooleanOperation) -> Cond | None:
        """``barrier and dist.is_initialized()``: decidable where a parameter operand is."""
        summary = self._frames[-1].summary
        parts: list[tuple[str, str, bool]] = []
        decidable = False
        for operand in boolean_operands(test, type(test.operator)):
            if not is_keyed_test(operand):
                parts.append(("", "truthy", False))
                continue
            key, check, negated, subject = self._canonical(operand)
            parts.append((key, check, negated))
            decidable = decidable or (
                isinstance(subject, cst.Name)
                and (subject.value in summary.params or subject.value in summary.keyword_only)
            )
        if not decidable:
            return None
        key = " ".join(self.module.code_for_node(test).split())
        conjunction = isinstance(test.operator, cst.And)
        return Cond(key, CLEAN, key, parts=tuple(parts), conjunction=conjunction)

    def _canonical(self, test: cst.BaseExpression) -> Canonical:
        return canonical_test(self.module, self.rank, test)

    def summary(self, exports: dict[str, str], *, is_test: bool = False) -> ModuleSummary:
        return ModuleSummary(
            path=self.path,
            is_test=is_test,
            functions=self.functions,
            module=self._frames[0].summary,
            classes=self.classes,
            exports=exports,
            mesh_names=frozenset(self.mesh_names),
            mesh_uses=tuple(self.mesh_uses),
            mesh_dynamic=self.mesh_dynamic,
            imports=frozenset(self.imports),
            deferred_creations=tuple(self.deferred_creations),
        )

    def record_import(self, node: cst.Import | cst.ImportFrom) -> None:
        """Note the modules an import statement names (see ModuleSummary.imports)."""
        self.imports.update(imported_modules(node))

    def defer_creation(self, site: Site, label: str) -> None:
        """An import-time group creation in a script, judged in the project phase."""
        self.deferred_creations.append((site, label))


# Names of collectives that leave their first argument equal on every rank.
_SHARING_NAMES = frozenset(
    {"broadcast", "broadcast_object_list", "all_reduce", "all_gather", "all_gather_object"}
)


def _merge_elements(known: tuple[Taint, ...] | None, new: tuple[Taint, ...]) -> tuple[Taint, ...]:
    """The element taints of all returns so far: () when their shapes differ."""
    if known is None:
        return new
    if len(known) != len(new):
        return ()
    return tuple(a | b for a, b in zip(known, new, strict=True))
