"""Hot regions across the project: which code runs every step.

Hot regions, from every file's summary (see :mod:`ranklint.analysis.walk.hot_markers`):

- the body of a *step loop*: a loop whose body reaches a step marker
  (``loss.backward()``, ``optimizer.step()``, a model forward, a call of a
  hot-named function) outside its nested loops, directly or through a project
  function that performs a step on every call (a marker outside any loop of
  its own). An epoch loop around a step loop is not hot: only the inner loop;
- the whole body of a *hot function* (``hot-functions`` names, ``forward`` of
  an ``nn.Module``, ``@torch.compile``, ``# ranklint: hot``);
- transitively, every project function called from hot code: the finding
  shows the call chain from the hot region.

Not hot: the code of tests (their loops check the code they call), code
before or after a step loop, exception handlers, and periodic arms (``if
step % N == 0:``; also the rest of a block after ``if step % N: continue``)
unless periodic syncs are disallowed.

Every :class:`~ranklint.model.events.HostCost` recorded in hot code becomes
a :class:`HotCost`: the cost, where it is and why that code is hot, at most
once per cost (the first region that reaches it).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ranklint.analysis.project.callgraph import FunctionRef, Hop, ProjectIndex
from ranklint.analysis.walk.axes import identifier_words
from ranklint.analysis.walk.hot_markers import TRAINER_HOOK
from ranklint.model.events import (
    Branch,
    CallEvent,
    Event,
    Exit,
    ExitKind,
    FunctionSummary,
    HostCost,
    HotKind,
    HotReason,
    Loop,
    Marker,
    ModuleSummary,
    Opaque,
    Site,
)
from ranklint.source import file_name

# Chains longer than this are not followed (calls from hot code to hot code).
_MAX_CHAIN = 8
# Base classes whose subclasses' `forward` runs every step.
_MODULE_BASE = re.compile(r"(Module|Model|Layer|Block|Function|Net|Network|Wrapper)$")
# A test class: `TestUpdate`, `Test_update`, not `Tester`.
_TEST_CLASS = re.compile(r"Test([A-Z0-9_]|$)")
# Base classes whose subclasses' step hooks a framework calls every step.
_TRAINER_BASE = re.compile(r"Trainer$")


@dataclass(frozen=True)
class HotRegion:
    """Why code is hot, and the call chain from there into it.

    Either a function hot as a whole (``reason`` set), or the body of a step
    loop of ``function`` (``marker``: the step call the loop reaches).
    """

    function: str  # qualname; `<module>` for module-level code
    reason: HotReason | None = None
    marker: str | None = None
    chain: tuple[Hop, ...] = ()
    # A step loop's marker trains (`backward()`, `optimizer.step()`, a call of
    # a function that does) rather than only running a model forward.
    training: bool = False
    # A step loop of a Ray program that only dispatches its steps to other
    # objects (`self.critic.train_step(batch)`): a driver, whose values are
    # the results workers sent back, on the host.
    driver: bool = False


@dataclass(frozen=True)
class HotCost:
    """A host cost in hot code: the cost, the file it is in, and why it runs every step."""

    cost: HostCost
    path: str
    region: HotRegion


class HotRegions:
    """Finds the host costs that run every step."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.costs: list[HotCost] = []
        self._reported: set[tuple[str, Site]] = set()
        self._hot: set[tuple[str, str]] = set()  # functions hot as a whole
        self._steps: dict[tuple[str, str], tuple[str, bool] | None] = {}
        self._queue: deque[tuple[FunctionRef, HotRegion]] = deque()

    def run(self) -> list[HotCost]:
        roots: list[tuple[FunctionRef, HotReason]] = []
        scans: list[FunctionRef] = []
        for module in self.index.summaries:
            for function in (module.module, *module.functions.values()):
                marked = function.hot is not None and function.hot.kind is HotKind.MARKED
                if _in_a_test(module, function) and not marked:
                    continue  # a test checks the code it runs; `# ranklint: hot` says otherwise
                ref = FunctionRef(module, function)
                reason = self._hot_reason(module, function)
                if reason is not None:
                    roots.append((ref, reason))
                    self._hot.add(ref.key)  # pragma: no mutate  (re-walking a root adds nothing)
                else:
                    scans.append(ref)
        for ref, reason in roots:
            region = HotRegion(ref.function.qualname, reason=reason)
            self._walk(ref, ref.function.events, region)
        for ref in scans:
            self._scan(ref, ref.function.events)
        while self._queue:
            ref, region = self._queue.popleft()
            self._walk(ref, ref.function.events, region)
        return self.costs

    # -- what is hot ---------------------------------------------------------
    def _hot_reason(self, module: ModuleSummary, function: FunctionSummary) -> HotReason | None:
        if function.hot is None:
            return None
        if function.hot_if_module:
            class_qualname = function.qualname.rsplit(".", 1)[0]
            bases = _TRAINER_BASE if function.hot.detail == TRAINER_HOOK else _MODULE_BASE
            if not self._module_like(module, class_qualname, 0, bases):
                return None
        return function.hot

    def _module_like(
        self,
        module: ModuleSummary,
        class_qualname: str,
        depth: int,
        bases: re.Pattern[str] = _MODULE_BASE,
    ) -> bool:
        if depth > 6:
            return False
        known = module.classes.get(
            class_qualname,
            (),  # pragma: no mutate  (every name asked is a key: a method's class, or class_of's)
        )
        for base in known:
            # The patterns match a name's end (`torch.nn.Module`, `transformers.Trainer`).
            if bases.search(base):
                return True
            owner = self.index.class_of(base, module, depth + 1)
            if owner is not None and self._module_like(owner[0], owner[1], depth + 1, bases):
                return True
        return False

    def _step_label(self, ref: FunctionRef) -> tuple[str, bool] | None:
        """How a call of ``ref`` performs a step (a marker outside its loops), and
        whether that step trains; None when it performs none."""
        key = ref.key
        if key in self._steps:
            return self._steps[key]
        self._steps[key] = None  # cycle guard
        reason = self._hot_reason(ref.module, ref.function)
        if reason is not None:
            name = ref.function.name or ref.function.qualname
            found: tuple[str, bool] | None = (f"{name}()", trains(reason, name))
        else:
            found = self._marker(ref, ref.function.events)
            if found is not None and self._epoch(ref, ref.function.events):
                found = None
        self._steps[key] = found
        return found

    def _epoch(self, ref: FunctionRef, events: Sequence[Event]) -> bool:
        """A function whose step markers outside its loops only reset gradients
        (``optimizer.zero_grad()`` before ``for batch in loader:``) while one of
        its loops trains: it runs an epoch per call, not a step."""
        outside: list[Marker] = []
        trains = False
        stack: list[Sequence[Event]] = [events]
        while stack:
            for event in stack.pop():
                if isinstance(event, Marker):
                    outside.append(event)
                elif isinstance(event, Branch):
                    stack.extend(event.arms)
                elif isinstance(event, Loop):
                    trains = trains or self._find_marker(ref, event.body, training=True) is not None
                elif isinstance(event, CallEvent):
                    callee = self.index.resolve(event.target, ref.module, ref.function)
                    if callee is not None and self._step_label(callee) is not None:
                        return False
        return trains and all(marker.label.endswith("zero_grad()") for marker in outside)

    def _marker(self, ref: FunctionRef, events: Sequence[Event]) -> tuple[str, bool] | None:
        """The first training marker ``events`` reach, else the first model forward;
        and whether it trains."""
        found = self._find_marker(ref, events, training=True)
        if found is not None:
            return found, True
        found = self._find_marker(ref, events, training=False)
        return None if found is None else (found, False)

    def _find_marker(
        self, ref: FunctionRef, events: Sequence[Event], *, training: bool, dispatch: bool = True
    ) -> str | None:
        """The first step marker in ``events``, not inside their nested loops
        (without ``dispatch``: not one that dispatches the step to another object)."""
        for event in events:
            if isinstance(event, Marker):
                if (event.training or not training) and (dispatch or not event.dispatch):
                    return event.label
            elif isinstance(event, CallEvent):
                callee = self.index.resolve(event.target, ref.module, ref.function)
                step = None if callee is None else self._step_label(callee)
                if step is not None and (step[1] or not training):
                    return f"{event.label}()"
            elif isinstance(event, Branch):
                for arm in event.arms:
                    found = self._find_marker(ref, arm, training=training, dispatch=dispatch)
                    if found is not None:
                        return found
        return None

    def _dispatches(self, ref: FunctionRef, body: Sequence[Event]) -> bool:
        """A training loop of a Ray program whose every step marker is another
        object's hot-named method: a driver loop."""
        ray = any(name == "ray" or name.startswith("ray.") for name in ref.module.imports)
        return ray and self._find_marker(ref, body, training=True, dispatch=False) is None

    # -- walking hot code ----------------------------------------------------
    def _scan(self, ref: FunctionRef, events: Sequence[Event]) -> None:
        """Find the step loops of a function that is not hot as a whole."""
        for event in events:
            if isinstance(event, Loop):
                # A step loop steps in its own body: an epoch loop whose steps
                # happen in a nested loop is not one (its per-epoch code is cold).
                marker = self._marker(ref, event.body)
                if marker is not None:
                    label, training = marker
                    driver = training and self._dispatches(ref, event.body)
                    region = HotRegion(
                        ref.function.qualname, marker=label, training=training, driver=driver
                    )
                    self._walk(ref, event.body, region)
                else:
                    self._scan(ref, event.body)
            elif isinstance(event, Branch):
                for arm in event.arms:
                    self._scan(ref, arm)
            elif isinstance(event, Opaque):
                self._scan(ref, event.body)

    def _walk(self, ref: FunctionRef, events: Sequence[Event], region: HotRegion) -> None:
        for event in events:
            if isinstance(event, HostCost):
                self._report(ref, event, region)
            elif isinstance(event, CallEvent):
                self._enter(ref, event, region)
            elif isinstance(event, Loop):
                self._walk(ref, event.body, region)
            elif isinstance(event, Branch):
                for index, arm in enumerate(event.arms):
                    if event.periodic != (1 if index == 0 else -1):
                        self._walk(ref, arm, region)
                if event.periodic == -1 and _exits(event.arms[0]):
                    # `if step % N: continue`: the rest runs once every N steps.
                    return
                if event.periodic == 1 and len(event.arms) > 1 and _exits(event.arms[1]):
                    # `if step % N == 0: ... else: return`: so does the rest.
                    return

    def _enter(self, ref: FunctionRef, event: CallEvent, region: HotRegion) -> None:
        if len(region.chain) >= _MAX_CHAIN:
            return
        callee = self.index.resolve(event.target, ref.module, ref.function)
        if callee is None or callee.key in self._hot:
            return
        self._hot.add(callee.key)
        hop = Hop(ref.module.path, event.site, f"{event.label}()")
        self._queue.append((callee, replace(region, chain=(*region.chain, hop))))

    def _report(self, ref: FunctionRef, cost: HostCost, region: HotRegion) -> None:
        path = ref.module.path
        key = (path, cost.site)
        if key in self._reported:
            return
        self._reported.add(key)
        self.costs.append(HotCost(cost, path, region))


# Words of a hot function's name that say it evaluates or generates rather
# than trains (`validation_step`, `predict_step`, `generate_step`).
_INFERENCE_WORDS = frozenset(
    {"validation", "valid", "val", "eval", "evaluate", "evaluation", "test", "predict"}
    | {"prediction", "generate", "generation", "rollout", "inference", "infer"}
)


def trains(reason: HotReason, name: str) -> bool:
    """Whether a function hot for ``reason`` trains: one named like a training step
    (``train_step``, ``compute_loss``), not one of evaluation or generation
    (``predict_step``), a module's forward, or a compiled or marked function (hot,
    but not evidence that a loop calling it trains)."""
    if reason.kind is not HotKind.NAMED:
        return False
    words = {word.lower() for word in identifier_words(name.rpartition(".")[2])}
    return not words & _INFERENCE_WORDS


def _in_a_test(module: ModuleSummary, function: FunctionSummary) -> bool:
    """Code of a test: a file that matches `test-patterns` or is named ``test.py``,
    a ``test_*`` function or a method of a ``Test*`` class."""
    name = file_name(module.path)
    outer = function.qualname.partition(".")[0]
    return (
        module.is_test
        or name in ("test.py", "tests.py")
        or outer.startswith("test_")
        or _TEST_CLASS.match(outer) is not None
    )


def _exits(events: Sequence[Event]) -> bool:
    return any(
        isinstance(event, Exit) and event.kind in (ExitKind.CONTINUE, ExitKind.RETURN)
        for event in events
    )
