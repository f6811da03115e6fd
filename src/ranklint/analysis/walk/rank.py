"""Rank-taint: which expressions depend on the calling rank, and on which parallel axis.

A value is *rank-dependent* when ranks of one group can see different values: ``dist.get_rank()``,
``os.environ["LOCAL_RANK"]``, ``mesh["tp"].get_local_rank()``, ``accelerator.is_main_process``,
names such as ``rank`` or ``tp_rank``, and anything computed from them (assignments, comparisons,
boolean operators, subscripts, attribute reads). World size, ``is_initialized()`` and config values
are not. Calls to project functions are left open (``via``): the project phase decides whether they
return a rank value (``is_main()`` that returns ``get_rank() == 0``).

Axes: ``tp_rank`` varies along the tensor-parallel axis only; ``rank`` along every axis (``"*"``).
A condition on one axis cannot split a group that lies along another axis: every member of that
group sees the same value.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import libcst as cst

from ranklint.analysis.walk.axes import (
    GLOBAL_AXIS,
    axes_of_expression,
    axes_of_words,
    identifier_words,
    rank_axes,
)
from ranklint.analysis.walk.bodies import ALL_OPEN, Function, FunctionScan, TextGates
from ranklint.analysis.walk.catalog import (
    ARGUMENT_RANK_FUNCTIONS,
    FILE_SYSTEM_QUERIES,
    PASS_THROUGH,
    RANK_FUNCTIONS,
    RANK_TUPLE_FUNCTIONS,
    SAME_VALUE_METHODS,
    TENSOR_OF_VALUE,
    UNSEEDED_RANDOM,
)
from ranklint.analysis.walk.containers import (
    MUTATORS,
    SCHEMA_METHODS,
    literal_items,
    subscript_slot,
    target_taints,
)
from ranklint.analysis.walk.flags import ComplementaryAssignments, RestatedFlags
from ranklint.analysis.walk.guards import first_and_last_stage, same_on_every_rank
from ranklint.analysis.walk.late_state import LateEnv, LateGlobals
from ranklint.analysis.walk.literals import index_value
from ranklint.analysis.walk.names import NamePatterns, NameTable
from ranklint.analysis.walk.sources import (
    FRAMEWORK_RANK_ATTRIBUTES,
    environment_taint,
    source_excerpt,
)
from ranklint.analysis.walk.targets import call_target, is_external
from ranklint.model.taint import (
    CLEAN,
    CONFIGURED_NAME,
    FILE_SYSTEM,
    PER_RANK_DATA,
    RANDOM_DRAW,
    RANK_NAME,
    RANK_QUERY,
    Taint,
    element_of,
    with_source,
)
from ranklint.syntax import awaited, boolean_operands, source_text, target_name

_EVERY_AXIS = frozenset({GLOBAL_AXIS})
_STRONG = Taint(rank=True, axes=_EVERY_AXIS, strong=True)
# A draw from a process-global random state: may differ between ranks.
_RANDOM = Taint(rank=True, axes=_EVERY_AXIS, data=True)
_FILE_SYSTEM = Taint(rank=True, axes=_EVERY_AXIS)
# The batch a Lightning step method is given: this rank's share of the data.
BATCH_DATA = with_source(_RANDOM, PER_RANK_DATA, "the batch a step method is given")
# What this rank contributes to an object gather: its own data.
_GATHERED = with_source(_RANDOM, PER_RANK_DATA, "what this rank contributes to an object gather")


@dataclass(slots=True)
class _Control:
    """Code under a test: the test's taint and what was written there."""

    taint: Taint
    # (environment, name, arm): arm None for an assignment; for a change in
    # place, the arm it happened in (0: the test held, 1: `else`).
    written: list[tuple[dict[str, Taint], str, int | None]] = field(default_factory=list)
    arm: int = 0
    test: cst.BaseExpression | None = None
    # An `if` (not a loop): slot -> (environment, name, value as written) of
    # the names it assigns directly (see flags.ComplementaryAssignments).
    branch: bool = False
    values: dict[tuple[int, str], tuple[dict[str, Taint], str, cst.BaseExpression]] = field(
        default_factory=dict
    )


class RankTaint:
    """Evaluates the rank-taint of expressions at the current point of the walk.

    Keeps environments of local names (per function, innermost last), of ``self.<attr>`` per
    class (see :mod:`ranklint.analysis.walk.late_state`), and of module-level names, updated
    by the walker as assignments are seen, in source order.
    """

    def __init__(
        self,
        names: NameTable,
        rank_names: NamePatterns,
        declared_rank_names: NamePatterns | None = None,
        *,
        gates: TextGates = ALL_OPEN,
    ) -> None:
        self.names = names
        self.rank_names = rank_names
        # The project's own `rank-names` (not the defaults): a declared rank.
        self.declared_rank_names = declared_rank_names
        self._module_env: dict[str, Taint] = {}
        self._function_envs: list[dict[str, Taint]] = []
        self._class_envs: list[dict[str, Taint]] = []
        # Whether ``self`` in the current function means the innermost class.
        self._method_flags: list[bool] = []
        # `global` / `nonlocal` declarations per function, innermost last.
        self._declared: list[dict[str, str]] = []
        # Code under a test (branch arm, loop body): the test's taint and the
        # (environment, name) pairs assigned there.
        self._controls: list[_Control] = []
        # Each function being walked, and the paths it writes (computed on demand).
        self._functions: list[FunctionScan] = []
        # What the file's text rules out (`gather_object`, `:=`): scans skipped.
        self.gates = gates
        # Flags that restate a rank test, for the module and each function.
        self._flags: list[RestatedFlags] = [RestatedFlags()]
        self._complements: list[ComplementaryAssignments] = [ComplementaryAssignments()]
        self._late_globals = LateGlobals()

    # -- environments ------------------------------------------------------
    def push_function(
        self, *, method: bool, node: Function | None = None, module: cst.Module | None = None
    ) -> None:
        self._functions.append(FunctionScan(node, self.names, self.gates))
        self._function_envs.append({})
        self._flags.append(RestatedFlags())
        self._complements.append(ComplementaryAssignments())
        self._method_flags.append(method)
        self._declared.append({})
        if method and isinstance(self._class_envs[-1], LateEnv):
            self._class_envs[-1].enter_method()  # rank-set state may come from any call
        self._late_globals.enter_function(self._module_env, module, self.taint)  # and globals

    def pop_function(self) -> None:
        self._functions.pop()
        self._function_envs.pop()
        self._flags.pop()
        self._complements.pop()
        self._method_flags.pop()
        self._declared.pop()

    def push_class(self, env: dict[str, Taint] | None = None) -> None:
        self._class_envs.append({} if env is None else env)

    def pop_class(self) -> None:
        self._class_envs.pop()

    def declare(self, names: Iterable[str], *, scope: str) -> None:
        """``global`` / ``nonlocal`` names of the current function (``scope``: which)."""
        if self._declared:
            for name in names:
                self._declared[-1][name] = scope

    def _env_for(self, name: str) -> dict[str, Taint]:
        """The environment an assignment to ``name`` writes."""
        if not self._function_envs:
            return self._module_env
        scope = self._declared[-1].get(name)
        if scope == "global":
            return self._module_env
        if scope == "nonlocal":
            for env in reversed(self._function_envs[:-1]):
                if name in env:
                    return env
        return self._function_envs[-1]

    def begin_control(self, test: cst.BaseExpression, *, branch: bool = False) -> None:
        """Enter code that runs if ``test`` holds (an ``if``: ``branch``) or as it says."""
        self._controls.append(_Control(self.taint(test), test=test, branch=branch))

    def switch_control_arm(self) -> None:
        """The ``else`` of the innermost test begins."""
        self._controls[-1].arm = 1

    @property
    def control_taint(self) -> Taint:
        """The taint of the innermost test entered with :meth:`begin_control`."""
        return self._controls[-1].taint

    def end_control(self) -> None:
        """Leave it: what it assigned depends on the rank if ``test`` does."""
        control = self._controls.pop()
        taint = control.taint
        self._complements[-1].left(len(self._controls))
        if not taint.possible:
            return
        # Assigned alike under this test and, earlier, under its opposite.
        test = control.test
        complete = (
            self._complements[-1].ended_all(control.values, len(self._controls), test)
            if control.branch and control.arm == 0 and test is not None
            else {}
        )
        decided = replace(taint, membership=False, share=False)
        sized = replace(decided, share=True)
        # A container changed in both arms (`params.append(...)` either way)
        # keeps a rank-independent length.
        arms: dict[tuple[int, str], set[int]] = {}
        for env, name, arm in control.written:
            if arm is not None:
                arms.setdefault((id(env), name), set()).add(arm)
        for env, name, arm in control.written:
            if (id(env), name) in complete:
                env[name] = complete[(id(env), name)]
            elif arm is None:
                env[name] = env[name] | decided  # assigned: present (see _record)
            elif len(arms[(id(env), name)]) < 2:
                env[name] = env.get(name, CLEAN) | sized

    def _record(self, env: dict[str, Taint], name: str, value: Taint) -> None:
        env[name] = value
        innermost = self._controls[-1].test if self._controls else None
        self._complements[-1].written((id(env), name), innermost)
        for control in self._controls:
            control.written.append((env, name, None))

    def changed(self, container: cst.BaseExpression) -> None:
        """``container`` (``metrics``, ``self.cache``) was modified in place: under a
        rank-dependent test its contents, so its length, depend on the rank."""
        if not self._controls:
            return
        if isinstance(container, cst.Name):
            name = container.value
            env = self._holder(name)
            if env is None:
                env = self._env_for(name)
        elif (
            isinstance(container, cst.Attribute)
            and isinstance(container.value, cst.Name)
            and container.value.value == "self"
            and self._in_method()
        ):
            name, env = container.attr.value, self._class_envs[-1]
        else:
            return
        for control in self._controls:
            control.written.append((env, name, control.arm))

    def mutated_by(self, call: cst.Call) -> None:
        """``metrics.update(...)``, ``losses.append(...)``: see :meth:`changed`."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in MUTATORS:
            self.changed(func.value)

    def bind(self, target: cst.BaseExpression, value: Taint) -> None:
        """Record the taint of an assignment target (names, tuples, ``self.x``)."""
        if value.rank and value.axes == _EVERY_AXIS:
            # `dp_rank = dist.get_rank() // tp_size`: the name says which axis.
            named = axes_of_words(identifier_words(target_name(target)))
            if named:
                value = replace(value, axes=named)
        if isinstance(target, cst.Name):
            self._record(self._env_for(target.value), target.value, value)
        elif isinstance(target, cst.Subscript):
            self.changed(target.value)
            slot = subscript_slot(target)
            if slot is not None:
                self._record(self._env_for(slot), slot, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                # Unpacking a value gives each name an unknown part of it.
                self.bind(element.value, CLEAN)
        elif (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
            and self._in_method()
        ):
            self._record(self._class_envs[-1], target.attr.value, value)

    def scan(self) -> FunctionScan | None:
        """What the body of the function being walked says (None outside functions)."""
        return self._functions[-1] if self._functions else None

    def _written(self, path: cst.BaseExpression) -> bool:
        """Whether the function being walked writes ``path`` (see analysis.walk.bodies)."""
        scan = self._functions[-1] if self._functions else None
        return scan is not None and " ".join(source_text(path).split()) in scan.written

    def predicate(self, name: str) -> tuple[cst.BaseExpression, bool] | None:
        """(test, negated) when the flag ``name`` restates a rank test (see RestatedFlags)."""
        return self._flags[-1].predicate(name)

    def bind_assignment(
        self, targets: Sequence[cst.BaseExpression], value: cst.BaseExpression
    ) -> None:
        if len(targets) == 1 and isinstance(targets[0], cst.Name):
            name = targets[0].value
            ranked = [(c.test, c.arm) for c in self._controls if c.taint.rank]
            self._flags[-1].assigned(name, value, ranked)
            control = self._controls[-1] if self._controls else None
            if control is not None and control.branch and control.taint.possible:
                env = self._env_for(name)
                control.values[(id(env), name)] = (env, name, value)
        if (
            len(targets) == 1
            and isinstance(targets[0], (cst.Tuple, cst.List))
            and isinstance(value, (cst.Tuple, cst.List))
            and len(targets[0].elements) == len(value.elements)
        ):
            for target, element in zip(targets[0].elements, value.elements, strict=True):
                self.bind(target.value, self.taint(element.value))
            return
        if len(targets) == 1 and isinstance(targets[0], cst.Name) and isinstance(value, cst.Dict):
            for slot, item in literal_items(targets[0], value):
                self._record(self._env_for(slot), slot, self.taint(item))
        taint = self.taint(value)
        for target in targets:
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(
                awaited(value), (cst.Call, cst.Name)
            ):
                self._bind_unpacked(target, awaited(value), taint)
            elif not taint.rank and isinstance(awaited(value), cst.Call):
                # `global_rank = ray.train.get_context().get_world_rank()`: a
                # name that looks like a rank, from a call that cannot tell.
                self.bind(target, taint | self._named(target_name(target)))
            else:
                self.bind(target, taint)

    def _bind_unpacked(
        self, target: cst.Tuple | cst.List, value: cst.Call | cst.Name, taint: Taint
    ) -> None:
        """``rank, world = setup()``: each name gets its element of the result; a project
        call's elements are decided in the project phase (``setup#0``), and a name that looks
        like a rank (``rank, world_size = get_dist_info()``) is one when the callee cannot tell
        otherwise."""
        elements = target.elements
        star = next((i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement)), None)
        known = self._rank_position(value)
        for position, element in enumerate(elements):
            if isinstance(element, cst.StarredElement):
                self.bind(element.value, CLEAN)
                continue
            index = position if star is None or position < star else position - len(elements)
            part = element_of(taint, index)
            if isinstance(value, cst.Name) and taint.data:
                part = taint  # `x, y = batch`: every part of per-rank data is per-rank

            if known is not None and known == index:
                part = with_source(_STRONG, RANK_QUERY, source_excerpt(value))
            elif isinstance(value, cst.Call) and known is None:
                part = part | self._named(target_name(element.value))
            self.bind(element.value, part)

    def _rank_position(self, value: cst.Call | cst.Name) -> int | None:
        """Where a library function's returned tuple holds the rank, if it is one."""
        if isinstance(value, cst.Call):
            qualified = self.names.resolve(value.func)
            if qualified is not None:
                return RANK_TUPLE_FUNCTIONS.get(qualified)
        return None

    def _in_method(self) -> bool:
        return bool(self._method_flags) and self._method_flags[-1] and bool(self._class_envs)

    def _holder(self, name: str) -> dict[str, Taint] | None:
        """The environment that holds ``name`` where it is read, if any holds it."""
        if not (self._declared and self._declared[-1].get(name) == "global"):
            for env in reversed(self._function_envs):
                if name in env:
                    return env
        return self._module_env if name in self._module_env else None

    def _lookup(self, name: str) -> Taint | None:
        env = self._holder(name)
        return None if env is None else env[name]

    # -- evaluation --------------------------------------------------------
    def taint(self, node: cst.BaseExpression, depth: int = 0) -> Taint:
        if depth > 40:
            return CLEAN
        if isinstance(node, cst.Name):
            known = self._lookup(node.value)
            if known is not None:
                return known
            if self._functions and node.value in self._functions[-1].gathered:
                return _GATHERED
            return self._named(node.value)
        if isinstance(node, cst.Attribute):
            base = node.value
            if isinstance(base, cst.Name) and base.value == "self" and self._in_method():
                known = self._class_envs[-1].get(node.attr.value)
                if known is not None:
                    return known
            named = self._named(node.attr.value, node)
            if named.rank:
                return named
            return self.taint(base, depth + 1)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        if isinstance(node, cst.Subscript):
            return self._subscript(node, depth)
        if isinstance(node, cst.Comparison):
            if same_on_every_rank(node) and self.rank_names.matches(target_name(node.left)):
                return CLEAN
            out = self.taint(node.left, depth + 1)
            membership = False
            for target in node.comparisons:
                if isinstance(target.operator, (cst.In, cst.NotIn)) and out.possible:
                    membership = True
                out = out | self.taint(target.comparator, depth + 1)
            if membership:
                out = replace(out, membership=True)
            return out
        if isinstance(node, cst.BooleanOperation):
            if first_and_last_stage(node):
                return CLEAN
            out = CLEAN
            for operand in boolean_operands(node, type(node.operator)):
                out = out | self.taint(operand, depth + 1)
            return out
        if isinstance(node, cst.UnaryOperation):
            return self.taint(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            return self.taint(node.left, depth + 1) | self.taint(node.right, depth + 1)
        if isinstance(node, cst.IfExp):
            return (
                self.taint(node.test, depth + 1)
                | self.taint(node.body, depth + 1)
                | self.taint(node.orelse, depth + 1)
            )
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            out = CLEAN
            for element in node.elements:
                out = out | self.taint(element.value, depth + 1)
            return out
        if isinstance(node, cst.Dict):
            # Its keys: a value is read through its key (see analysis.walk.containers).
            out = CLEAN
            for item in node.elements:
                key = item.key if isinstance(item, cst.DictElement) else item.value
                out = out | self.taint(key, depth + 1)
            return out
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self._comprehension(node, depth)
        if isinstance(node, cst.NamedExpr):
            return self.taint(node.value, depth + 1)
        if isinstance(node, cst.Await):
            return self.taint(node.expression, depth + 1)
        return CLEAN

    def _comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp, depth: int
    ) -> Taint:
        """As many elements as its iterables and filters let through, computed from
        them; its targets take their iterable's taint, as a ``for`` loop's do."""
        elements: list[cst.BaseExpression] = (
            [node.key, node.value] if isinstance(node, cst.DictComp) else [node.elt]
        )
        targets: dict[str, Taint] = {}
        self._function_envs.append(targets)
        try:
            size = CLEAN
            clause: cst.CompFor | None = node.for_in
            while clause is not None:
                iterable = self.taint(clause.iter, depth + 1)
                size = size | iterable
                targets.update(target_taints(clause.target, iterable))
                for condition in clause.ifs:
                    size = size | self.taint(condition.test, depth + 1)
                clause = clause.inner_for_in
            out = size
            for part in elements:
                out = out | self.taint(part, depth + 1)
        finally:
            self._function_envs.pop()
        # A selection by rank (`[f for i, f in enumerate(files) if i % world == rank]`)
        # has a per-rank length.
        return replace(out, share=True) if size.possible else out

    def _named(self, name: str, attribute: cst.Attribute | None = None) -> Taint:
        """A name matched by `rank-names` (a guess), or a framework's rank attribute."""
        if not self.rank_names.matches(name):
            return CLEAN
        taint = Taint(rank=True, axes=rank_axes(name))
        if attribute is not None and name in FRAMEWORK_RANK_ATTRIBUTES:
            return with_source(taint, RANK_QUERY, source_excerpt(attribute))
        declared = self.declared_rank_names
        if declared is not None and declared.matches(name):
            return with_source(taint, CONFIGURED_NAME, name)
        return with_source(taint, RANK_NAME, name)

    def _call(self, node: cst.Call, depth: int) -> Taint:
        func = node.func
        qualified = self.names.resolve(func)
        if qualified is not None:
            if qualified in RANK_FUNCTIONS:
                # `get_rank(dp_group)`: the rank within that group, which
                # varies along the group's axis only.
                group = next(
                    (
                        arg.value
                        for arg in node.args
                        if arg.keyword is None or arg.keyword.value == "group"
                    ),
                    None,
                )
                axes = axes_of_expression(group) if group is not None else frozenset()
                strong = replace(_STRONG, axes=axes) if axes else _STRONG
                return with_source(strong, RANK_QUERY, source_excerpt(node))
            if qualified in ("os.getenv", "os.environ.get"):
                return environment_taint(node.args[0].value if node.args else None, node)
            if qualified in ARGUMENT_RANK_FUNCTIONS or qualified in TENSOR_OF_VALUE:
                return self._arguments(node, depth)
            if qualified in FILE_SYSTEM_QUERIES and node.args and self._written(node.args[0].value):
                return with_source(_FILE_SYSTEM, FILE_SYSTEM, source_excerpt(node))
            if qualified in UNSEEDED_RANDOM and not any(
                arg.keyword is not None and arg.keyword.value == "generator" for arg in node.args
            ):
                return with_source(_RANDOM, RANDOM_DRAW, source_excerpt(node))
        last = (
            func.attr.value
            if isinstance(func, cst.Attribute)
            else (func.value if isinstance(func, cst.Name) else None)
        )
        if last is not None and self.rank_names.matches(last):
            axes = axes_of_words(identifier_words(last))
            if isinstance(func, cst.Attribute):
                axes = axes | axes_of_expression(func.value)
            for arg in node.args:
                # `gpc.get_local_rank(ParallelMode.TENSOR)`: the rank along that axis.
                axes = axes | axes_of_expression(arg.value)
            taint = Taint(rank=True, axes=axes or _EVERY_AXIS, strong=True)
            return with_source(taint, RANK_QUERY, source_excerpt(node))
        if isinstance(func, cst.Name) and func.value in PASS_THROUGH and qualified is None:
            return self._arguments(node, depth)
        target = call_target(func, self.names)
        if target is not None and not is_external(target):
            # What a project function builds from this rank's share has a
            # per-rank length: `make_loader(files[rank::world])`. (A rank
            # passed as a number, `Sampler(rank=rank)`, says nothing of that.)
            called = Taint(via=frozenset({target}))
            passed = self._arguments(node, depth)
            return called | replace(passed, membership=False) if passed.share else called
        if isinstance(func, cst.Attribute) and qualified is None:
            receiver = self.taint(func.value, depth + 1)
            if func.attr.value in SCHEMA_METHODS:
                # A data dict's keys are its schema; a dict filled under a rank test has its own.
                return CLEAN if receiver.data else receiver
            # `y.unique()` of per-rank data (a batch) is per-rank data; `flag.item()` is the flag.
            if receiver.data or func.attr.value in SAME_VALUE_METHODS:
                return receiver
        return CLEAN

    def _arguments(self, node: cst.Call, depth: int) -> Taint:
        out = CLEAN
        for arg in node.args:
            out = out | self.taint(arg.value, depth + 1)
        return out

    def _subscript(self, node: cst.Subscript, depth: int) -> Taint:
        if self._is_environ(node.value) and len(node.slice) == 1:
            element = node.slice[0].slice
            if isinstance(element, cst.Index):
                return environment_taint(element.value, node)
        element_of_call = self._element_of_call(node, depth)
        if element_of_call is not None:
            return element_of_call
        slot = subscript_slot(node)
        kept = self._lookup(slot) if slot is not None else None
        if kept is not None:
            return kept
        out = self.taint(node.value, depth + 1)
        for element in node.slice:
            part = element.slice
            if isinstance(part, cst.Index):
                out = out | self.taint(part.value, depth + 1)
            else:
                # `files[rank::world]`: a rank-dependent share of a sequence.
                for bound in (part.lower, part.upper, part.step):
                    if bound is not None:
                        cut = self.taint(bound, depth + 1)
                        if cut.possible:
                            out = out | replace(cut, share=True)
        return out

    def _element_of_call(self, node: cst.Subscript, depth: int) -> Taint | None:
        """``get_node_setting()[1]``: that element of a call's returned tuple, as
        unpacking it gives; None unless the subscript is a literal index."""
        value = node.value
        if not (isinstance(value, cst.Call) and len(node.slice) == 1):
            return None
        index = index_value(node.slice[0].slice)
        if index is None:
            return None
        known = self._rank_position(value)
        if known is not None and known != index:
            return CLEAN
        if known is not None:
            return with_source(_STRONG, RANK_QUERY, source_excerpt(value))
        whole = self.taint(value, depth + 1)  # only a project call's result is split
        return element_of(whole, index) if whole.via and whole == Taint(via=whole.via) else None

    def _is_environ(self, node: cst.BaseExpression) -> bool:
        return self.names.resolve(node) == "os.environ"
