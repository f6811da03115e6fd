"""The per-file facts of the project phase: a small event tree per function.

Plain picklable data (the cache stores it per file; workers send it back):
for every function and for the module body, the events that matter across
files, in execution order: collectives and group creations, calls of
functions that may be defined in the project, branches (with the rank-taint
of their condition), loops, early exits, step markers and host costs. The
builder is :class:`ranklint.analysis.walk.summary.FactsBuilder`; the project phase
(:mod:`ranklint.analysis.project.facts`) joins the summaries of all files.

Call sites are identified by :class:`Site` (index of the module-level
statement, ordinal of the call within it in walk order) rather than by line
and column: positions cost a code-generation pass, so they are computed only
for the few sites that end up in a finding.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from ranklint.model.kinds import CallKind
from ranklint.model.taint import CLEAN, Taint


class HotKind(enum.Enum):
    """Why a function runs once per step."""

    MARKED = "marked"  # `# ranklint: hot` on its `def` line
    COMPILED = "compiled"  # `@torch.compile`
    MODULE_FORWARD = "module-forward"  # `forward` of an nn.Module
    NAMED = "named"  # its name matches `hot-functions`


@dataclass(frozen=True, slots=True)
class HotReason:
    kind: HotKind
    # COMPILED: the decorator as written (`torch.compile`).
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Site:
    """A place in a file: module-level statement index and an ordinal within it.

    A positive ordinal counts calls in walk order (the n-th call of the
    statement); a negative one counts the other nodes the fact recorders named
    in the statement (:class:`HostCost` candidates, mesh indexing), also in
    walk order.
    """

    top: int
    ordinal: int


# A literal argument or default value: True, False, None; UNKNOWN otherwise.
UNKNOWN = "?"
# A call argument that is a name (`use_zero`, `self.flag`): "@flag:use_zero".
# Also the key under which a test's assumptions hold that flag's truth.
FLAG_PREFIX = "@flag:"
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
    # A rank-invariant `and`/`or` test (`barrier and dist.is_initialized()`):
    # (key, check, negated) of each operand ("" key: not decidable), and
    # whether they are joined by `and`. A literal argument for one operand can
    # decide the whole test.
    parts: tuple[tuple[str, str, bool], ...] = ()
    conjunction: bool = True
    # A rank-dependent `and`/`or` with one rank-dependent operand: that
    # operand's (key, check, negated). Where it is decided, so is the test
    # (the other operands are assumed, see `assumptions`).
    rank_part: tuple[str, str, bool] | None = None
    # The test reads a value this rank received from a root earlier in the
    # function (the buffer of a `broadcast`, `recv` or `scatter`): the sender
    # decides which arm runs, as in a leader/worker loop (`if message == STOP:
    # return`), so what follows cannot be matched up statically.
    received: bool = False
    # A test of the global rank against a number, as (operator, number) (see
    # analysis.walk.membership): decided on each member of a group written out.
    rank_test: tuple[str, int] | None = None


def canonical_holds(check: str, negated: bool, value: Literal) -> bool | None:
    """Whether a canonical test (``check``, ``negated``) holds on the literal ``value``."""
    if value == UNKNOWN:
        return None
    result = value is None if check == "is-none" else bool(value)
    return result != negated


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
    # The global ranks of the group where its creation lists them (see
    # analysis.walk.membership); None otherwise.
    members: frozenset[int] | None = None
    # A reduction's op as a `ReduceOp` member name (`SUM` where the call leaves
    # it out); None where it is not a reduction or the op is not written out.
    reduce_op: str | None = None
    # A call that communicates only under a sharding backend, in a file that
    # configures or tests for one (see catalog.SHARDING_BACKEND_SHOWN).
    backend_shown: bool = False
    # A device mesh's group (`g = mesh.get_group()`): its members are the ranks that
    # shard together, not known here, but never one global rank alone.
    mesh_group: bool = False
    # The parameter of the function the group argument is (`group=group`), where
    # the function never binds it again: each call says which group it is.
    group_param: str | None = None


@dataclass(slots=True)
class CallEvent:
    target: str  # raw target, see targets.call_target
    site: Site
    label: str
    # Arguments passed: (position, keyword, literal value or UNKNOWN); the
    # position counts from the first argument as written.
    args: tuple[tuple[int | None, str | None, Literal], ...] = ()
    # ``*args`` / ``**kwargs`` in the call: any parameter may be passed.
    unpacking: bool = False
    # The call is a statement of its own: its result is thrown away.
    discarded: bool = False
    # Made under a lazy-initialisation test (`if not _groups:`): the groups
    # it creates are created once, by whichever call comes first on each rank.
    lazy: bool = False
    # Arguments whose value may depend on the rank: (position, keyword, source
    # text, taint). A callee that branches on such a parameter (`if go:
    # dist.barrier()`) runs its collectives on some ranks only.
    rank_args: tuple[tuple[int | None, str | None, str, Taint], ...] = ()
    # Arguments that are groups whose make-up the caller shows, as (position,
    # keyword, how it was made: analysis.walk.membership.EVERY_RANK or MESH_GROUP).
    group_args: tuple[tuple[int | None, str | None, str], ...] = ()
    # A forward of a parameter the function never binds again (`model(x)`:
    # ("model", "__call__")): a collective where the caller passed a wrapped
    # model for it (see analysis.walk.wrapped).
    param_call: tuple[str, str] | None = None


@dataclass(slots=True)
class Marker:
    """A call that makes the loop around it a step loop: ``loss.backward()``,
    ``optimizer.step()``, ``zero_grad()``, a model forward.

    See :mod:`ranklint.analysis.walk.hot_markers`.
    """

    label: str
    # A training marker (backward, optimizer step, hot-named call) rather
    # than a model forward: preferred when a message names the loop.
    training: bool = True
    # A hot-named method of another object (`self.critic.train_step(batch)`):
    # the step may run elsewhere, as a Ray driver's worker groups run it.
    dispatch: bool = False


class CostKind(enum.Enum):
    """What a :class:`HostCost` costs each time it runs."""

    COPY = "copy"  # `.item()`, `.cpu()`, `.to("cpu")`: a device-to-host copy
    SYNCHRONIZE = "synchronize"  # `torch.cuda.synchronize()`, `event.synchronize()`
    DATA_DEPENDENT = "data-dependent"  # `nonzero`, boolean-mask indexing: data-sized output
    FORMAT = "format"  # a tensor formatted as text: `print(t)`, f-strings, `%`
    CONVERSION = "conversion"  # `float(t)`, `int(t)`, `bool(t)`
    TRUTH_TEST = "truth-test"  # `if t:`, `assert t`, `not t`, `a and t`
    TENSOR_LOOP = "tensor-loop"  # a Python loop over a tensor's elements
    FACTORY = "factory"  # a tensor factory without `device=` (or float data without `dtype=`)


@dataclass(slots=True)
class HostCost:
    """Code that costs host time or a device sync every time it runs.

    Recorded for every candidate during the walk; the project phase finds the
    ones in hot code (:mod:`ranklint.analysis.project.hot_regions`).
    """

    kind: CostKind
    site: Site
    text: str  # how the code reads, shortened: `loss.item()`
    # FACTORY: what the call lacks, among "device" and "dtype".
    missing: tuple[str, ...] = ()
    # A sync whose value decides host control flow or a size (a truth test,
    # a data-dependent shape, `int(n.item())`, `x[: n.item()]`, `if t.item() > 0:`):
    # often one the program needs (see analysis.walk.host_uses).
    decides: bool = False


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


class ExitKind(enum.Enum):
    """How control leaves the code before its end."""

    RETURN = "return"
    RAISE = "raise"
    EXIT = "exit"  # sys.exit(), os._exit(), ...
    CONTINUE = "continue"
    BREAK = "break"


@dataclass(slots=True)
class Exit:
    kind: ExitKind


@dataclass(slots=True)
class Opaque:
    """Code off the normal path (exception handlers): checked, not sequenced."""

    body: list[Event] = field(default_factory=list)


Event = Collective | CallEvent | Branch | Loop | Exit | Opaque | Marker | HostCost


def conditions(events: Sequence[Event], *, every: bool = False) -> Iterator[Cond]:
    """The conditions of every branch in ``events``, loop bodies and arms included;
    with ``every``, also those of the loops and of the blocks of opaque statements."""
    for event in events:
        if isinstance(event, Branch):
            if event.cond is not None:
                yield event.cond
            for arm in event.arms:
                yield from conditions(arm, every=every)
        elif isinstance(event, Loop):
            if every and event.cond is not None:
                yield event.cond
            yield from conditions(event.body, every=every)
        elif every and isinstance(event, Opaque):
            yield from conditions(event.body, every=every)


def exiting_conditions(events: Sequence[Event]) -> Iterator[str]:
    """The keys of the branches in ``events`` (loop bodies and arms included)
    with an early exit somewhere in an arm, conditional or not: the ranks that
    take that arm may leave, so its test never balances (see ``exit_kind``)."""
    for event in events:
        if isinstance(event, Branch):
            if event.cond is not None and any(exit_kind(arm) for arm in event.arms):
                yield event.cond.key
            for arm in event.arms:
                yield from exiting_conditions(arm)
        elif isinstance(event, Loop):
            yield from exiting_conditions(event.body)


def rank_break(events: Sequence[Event]) -> Cond | None:
    """The condition of a ``break`` only some ranks take, in a loop's ``events``: a
    rank-dependent branch that leaves the loop on one arm and not on the other
    (nested branches included, nested loops not). The loop's trip count then
    depends on the rank as much as that condition does."""
    for event in events:
        if not isinstance(event, Branch):
            continue
        cond = event.cond
        leaves = [
            any(isinstance(e, Exit) and e.kind is ExitKind.BREAK for e in arm) for arm in event.arms
        ]
        if cond is not None and cond.taint.possible and leaves[0] != leaves[1]:
            return cond
        for arm in event.arms:
            found = rank_break(arm)
            if found is not None:
                return found
    return None


# A rank-dependent `raise` is not treated as an exit: the rank fails with an
# error and the launcher tears the job down, there is no silent hang.
FUNCTION_EXITS = frozenset({ExitKind.RETURN, ExitKind.EXIT})


def exit_kind(events: Sequence[Event]) -> ExitKind | None:
    """The kind of an exit anywhere in ``events`` (not inside nested loops for continue/break)."""
    for event in events:
        if isinstance(event, Exit) and event.kind is not ExitKind.RAISE:
            return event.kind
        if isinstance(event, Branch):
            for arm in event.arms:
                kind = exit_kind(arm)
                if kind is not None:
                    return kind
        elif isinstance(event, Loop):
            kind = exit_kind(event.body)
            if kind in FUNCTION_EXITS:
                return kind
    return None


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
    # Taint of each element when every `return` returns a tuple of one length;
    # () once a return of another shape is seen; None before any return.
    elements: tuple[Taint, ...] | None = None
    # Decorator that runs the body on one rank only (``@rank_zero_only``).
    rank_only: str | None = None
    # Each decorator as written (`main_only`, the factory of `@only_on(0)`) and its
    # raw call target, for the project phase to read what it does.
    decorators: tuple[tuple[str, str], ...] = ()
    name: str = ""
    # Why every call of this function is per-step code (hot-functions name,
    # `@torch.compile`, `# ranklint: hot`), or None.
    hot: HotReason | None = None
    # The hot reason holds only if the class is an nn.Module (``forward``).
    hot_if_module: bool = False
    # ``async def``: calling it makes a coroutine that runs only when awaited.
    is_async: bool = False
    # Builds a Lightning `Trainer`/`Fabric` with `devices=1` on one node: the
    # code runs in one process, so no rank test in it can split ranks.
    single_process: bool = False


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
    # Every module this file imports, anywhere in it (`import a.b`: a.b; `from
    # .m import x`: .m and .m.x), as written: relative names keep their dots.
    imports: frozenset[str] = frozenset()
    # Import-time group creations in a file written to be run (the rule judges
    # them in the project phase: reported only if some file imports this one).
    deferred_creations: tuple[tuple[Site, str], ...] = ()
    # Module flags bound once to a literal and never rebound (`DEBUG = False`), with
    # their truth: tests of them go one way in the module's own functions.
    flags: tuple[tuple[str, bool], ...] = ()
    # The file is a test (`test-patterns`): its step loops make nothing hot.
    is_test: bool = False


def context_partner(module: ModuleSummary, function: FunctionSummary) -> FunctionSummary:
    """``__enter__`` and ``__exit__`` of one class as one sequence: waiting on
    entry on some ranks and on exit on the others is one barrier on every rank."""
    if function.class_name is None or function.name not in ("__enter__", "__exit__"):
        return function
    enter = module.functions.get(f"{function.class_name}.__enter__")
    leave = module.functions.get(f"{function.class_name}.__exit__")
    if enter is None or leave is None:
        return function
    entered = list(enter.events)
    if entered and isinstance(entered[-1], Exit):
        entered.pop()  # `return self`: the `with` body, then `__exit__`, follow
    return replace(function, events=[*entered, *leave.events])
