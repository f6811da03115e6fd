"""A differential oracle: generated distributed programs, judged by running them.

    python bench/recall/oracle.py [--count 300] [--seed 1] [--grammar all|v1|v2|v3]
        [--out FILE] [--show-disagreements K] [--program SEED] [--known-limits]

Prints the recall and false alarms per class and per rank source, and the
disagreements per likely reason (:data:`REASONS`, guessed from the features);
``--out`` writes every program (seed, class, features, runs, findings,
verdicts, files) as JSON lines, ``--program SEED`` judges one program again,
``--known-limits`` prints the entries of ``tests/oracle_known_limits.py``.

Each program is generated from a seed (``random.Random(seed)``, reproducible),
run on simulated ranks with the runtime companion (``run_ranks``, threads mode)
and linted; the run is the ground truth, ranklint's findings the prediction.

**Runtime verdict.** Every program runs at world sizes 2 and 3, and one in three
at 4 too. Each rank gets its own copy of the program's modules (``prog.py`` and
its helper module), so module globals are per rank, as in separate processes
(threads mode shares the modules otherwise). A program *diverges* when a run
raises ``DivergenceError``; the lines it names (each member's collective, the
user frames that called it, the collective a rank waits in) are kept, and so
are those of collectives it paired, at an earlier position, with another
rank's issued from other lines (rank 0's guarded barrier met rank 1's final
one; the run names the final barrier left over on rank 0). A ``RankFailure``
or ``RanksTimeout`` is a bug of this generator: recorded apart, never counted.

**Static verdict.** The program's folder is linted once (``lint_paths``, one
process, no cache) with ``--select RNK1 --ignore RNK106,RNK107`` and every
confidence; the tiers are read off each finding's confidence: ``high`` (the
default run) and ``medium`` (``--confidence medium``: high and medium). RNK106
(no reduce op) and RNK107 (a barrier in library code) are left out: they
predict wrong values or races, not divergences, and RNK106 is on every
``dist.all_reduce(t)`` the grammar writes. A divergent program is *caught* in a
tier when one of its findings is on a line the runs kept, or its trace (call
chain) passes through one; the lines of the calls that led to the collective
are among those kept. A divergent program with findings elsewhere only is
*missed* (``elsewhere`` in the table and records: the run names the first
mismatch it meets, ranklint may report another rank's collective). A program
that does not diverge has a *false alarm* when it has any finding of the tier.

**The grammar.** ``prog.py`` imports ``torch`` and ``torch.distributed as dist``
and defines ``def main(rank, world_size):``; it works on ``t = torch.ones(2)``
(and ``out = [torch.zeros(2) for _ in range(world_size)]`` for an all_gather).
The program's class is its control idiom; the other choices are its features
(``source=``, ``pred=``, ``flow=``, ``op=``, ``variant=`` ...). Two families:
the first grammar (``v1``, :data:`CLASSES`, class ``seed % 7``) for program
seeds below ``V2_OFFSET`` in their run's block of a million, the second
(``v2``, :data:`CLASSES_V2`, class ``seed % 6``) from it on, so every v1
program is byte-identical to what it was before v2 existed. ``--grammar v1``
runs the first ``count`` v1 seeds (the runs measured before), ``v2`` the v2
ones, ``all`` (the default) both in turn, 7 of v1 then 6 of v2 (13 classes,
each as often):

- rank source (``source=``): the ``rank`` parameter; ``dist.get_rank()``;
  ``int(os.environ["RANK"])`` (threads mode gives each rank its own ``RANK``);
  a function of the helper module ``helpers_<seed>.py`` returning
  ``dist.get_rank()``; a tuple ``r, w = dist.get_rank(), dist.get_world_size()``;
  the attribute ``self.rank`` of a small class whose method holds the body; a
  module global set in ``main`` through ``global``. Rank variables have names
  outside ``rank-names`` (``r``, ``me``, ``who``): only the ``rank`` parameter,
  the helper named ``get_rank`` and the flag ``is_main`` are names ranklint knows.
- predicate (``pred=``): ``r == 0``, ``r != 0``, ``r > 0``, ``r == world_size - 1``,
  ``r % 2 == 0``, ``r % 2`` (truth), ``r + 1 < 2``, ``r == 0 and world_size > 1``,
  ``r == 1 or r == 2``; uniform ones: ``world_size > 1``, ``>= 2``, ``% 2 == 0``, ``< 2``.
- value flow (``flow=``): inline; a named flag (``is_main = r == 0``); a
  conditional expression (``x = 1 if r == 0 else 0``); a dict
  (``flags = {"main": r == 0}``); a negation.
- classes (``variant=`` names the template; ``intent`` says whether the
  generator meant it to diverge, the run decides):
  ``branch`` a collective under an if/elif/else on one side only (uniform: a
  uniform test, every branch communicating, or rank-dependent local work only);
  ``mismatch`` both sides communicate (different ops, counts or order; uniform:
  the same sequence, or a rank-dependent value through a conditional expression);
  ``early-return`` a ``return`` under a rank test before a collective (uniform:
  after the last one, or under a uniform test); ``loop-trip`` a ``for`` or
  ``while`` whose trip count depends on the rank (uniform: on the world size,
  or a rank-dependent loop without collective); ``loop-exit`` ``break`` or
  ``continue`` under a rank test in a loop with a collective (uniform: a test of
  the loop index only, or after the collective); ``helper`` a function that
  issues the collective (same file or helper module, one or two calls deep, or
  guarded by an argument) called under a rank test (uniform: called by every
  rank); ``sanitised`` a rank-dependent flag made uniform with
  ``dist.broadcast(flag, src=0)`` or ``dist.all_reduce(flag, op=dist.ReduceOp.MAX)``
  before the test (divergent: the raw condition tested, a copy taken before the
  collective, or the flag read before it).
- collectives on the default group: ``dist.all_reduce(t)``,
  ``dist.broadcast(t, src=0)``, ``dist.barrier()``, ``dist.all_gather(out, t)``;
  ``mismatch`` adds ``dist.all_reduce(t, op=dist.ReduceOp.MAX)``.
- optional: a collective every rank issues before (``prefix``) or after
  (``suffix``) the idiom.

The second family (``v2``; same rank sources, predicates and flows):

- ``unknown-group``: a collective on a group the program does not spell as the
  default one (``api=``): DTensor ``d.full_tensor()`` or
  ``d.redistribute(mesh, [Replicate()])`` (``mesh = init_device_mesh("cpu",
  (world_size,))``, ``d = distribute_tensor(..., mesh, placements=[Shard(0)])``;
  both run in threads mode), ``mesh.get_group()``, ``pg =
  dist.new_group(list(range(world_size)))``, ``self.pg`` of a small ``Comm``
  class, a group passed to a helper (``reduce_on(t, pg)``), under a single-rank
  test (``== 0``, last, ``r + 1 < 2``, ``== 0 and ...``; uniform: on every
  rank, a uniform test, ``if r in ranks:`` with ``pg = new_group(ranks)``,
  ``if r in mesh.mesh.tolist():``, or ``new_group([0])`` under ``r == 0``).
- ``dict-order``: one collective per key of ``metrics`` (``for name in
  metrics``, ``.items()``, ``list(metrics.keys())``); keys added under a
  per-rank draw (``random.random() < 0.5``, ``torch.rand(1).item() < 0.5``:
  each rank's RNG is seeded apart) or a rank test, a rank-sized
  comprehension, or the same keys inserted in a rank-dependent order (values
  of different shapes); uniform: constant keys, rank-dependent values only,
  ``sorted(metrics)``, or ``sorted(set().union(*gathered))`` after
  ``dist.all_gather_object(gathered, list(metrics))``.
- ``state-later``: state set under a rank test in one call and tested before a
  collective in a later one (``form=``): ``self.last`` (``if step !=
  self.last``), set in the same or another method, a counter, a dirty flag, a
  module ``global``; the rank comes from the constructor or
  ``dist.get_rank()``; uniform: set on every rank, under a uniform test, or
  the state read for local work only.
- ``membership``: ``g = dist.new_group([a, a + 1])`` (literal, ``range``, a
  ``ranks`` variable; ``a`` in 0-2, world sizes from ``a + 2``; every rank
  calls ``new_group``) and a collective on ``g`` under a test of the global
  rank that splits the members (``r < a + 1``, ``== a``, ``> a``, ``% 2 ==
  0``; divergent) or keeps exactly them (``r in [a, a + 1]``, ``a <= r <= a +
  1``, ``r < 2``, ``r // 2 == a // 2``, ``r in ranks``; uniform). A
  non-member's collective on ``g`` is a no-op, its broadcast raises: the
  tests that reach non-members never broadcast.
- ``decorator``: a decorator defined in ``prog.py`` or the helper module on a
  function that issues the collective; divergent: the wrapper calls it on rank
  0 only (``if dist.get_rank() == 0:`` or ``int(os.environ["RANK"])``, an early
  ``return None``, a factory ``@name(0)``); uniform: it logs (on every rank or
  on rank 0 only), barriers after the call, or tests the world size. Names
  (``rank_zero_only``, ``main_only``, ``wrapped``, ``guarded``) are drawn
  apart from the intent.
- ``local-exit``: a ``return`` or ``continue`` on rank-local state before the
  collective: ``records = [x for x in range(r)]`` (in ``main`` or a helper),
  ``os.path.exists(f"{here}/rank{r}.done")`` (the program's folder holds an
  empty ``rank0.done``: a file of the program, nothing is written at run
  time), ``if DEBUG and <single-rank test>:``, a per-rank draw
  (``torch.rand(1).item() < 0.5``); uniform: records of the world size, the
  exit after the last collective, a path every rank shares (present or not),
  the debug flag off, ``not torch.isfinite(t).all()``.

The third family (``v3``, :data:`CLASSES_V3`, seeds from ``V3_OFFSET`` on; ``all``
adds two after each 7 of v1 and 6 of v2, 15 classes each as often):

- ``wrapped-forward``: ``model``, a DDP model of a ``torch.nn.BatchNorm1d(2)``
  (its forward broadcasts the buffers), built in view or by ``wrap(m,
  world_size)`` of ``prog.py`` (``return DDP(m)``, after an early ``return m``
  or not, ``make=``), run on ``batch = torch.ones(4, 2)`` (``reach=``):
  ``model(batch)``, ``model.forward(batch)``, ``evaluate(model, batch)`` of
  ``prog.py`` or the helper module, or ``validate`` calling ``evaluate``;
  divergent: under a rank test (with local work in an ``else`` or not);
  uniform: on every rank, under a uniform test, the unwrapped module (``model.module``,
  or ``model = model.module if hasattr(model, "module") else model`` in the
  helper) under a rank test, or ``DDP(..., broadcast_buffers=False)`` under a
  rank test.
- ``nested-exit``: a ``return`` (or ``continue``) under a rank test that reaches
  beyond the test's own block, before a collective after that block: under a
  further test in the rank test's arm (``if step >= 1:`` in a ``for step in
  range(3):`` loop), inside a uniform ``if step % 2 == 0:``, a ``with
  torch.no_grad():`` or an inner loop; uniform: the same exit under a uniform
  test, a ``continue`` with the collective after the loop, a ``break`` from an
  inner loop, an arm that issues the collective itself before it returns (in
  a uniform ``if``, no loop), or the exit after the last collective.

Programs are 5-25 non-blank lines (all files together) and always terminate.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ranklint import Config, Finding, lint_paths
from ranklint.findings import Confidence

CLASSES: tuple[str, ...] = (
    "branch",
    "mismatch",
    "early-return",
    "loop-trip",
    "loop-exit",
    "helper",
    "sanitised",
)
# The second family (``--grammar v2``): program seeds from V2_OFFSET on in each run's
# block of a million; ``--grammar all`` (the default) interleaves the families.
CLASSES_V2: tuple[str, ...] = (
    "unknown-group",
    "dict-order",
    "state-later",
    "membership",
    "decorator",
    "local-exit",
)
# The third family (``--grammar v3``): program seeds from V3_OFFSET on.
CLASSES_V3: tuple[str, ...] = ("wrapped-forward", "nested-exit")
ALL_CLASSES: tuple[str, ...] = CLASSES + CLASSES_V2 + CLASSES_V3
GRAMMARS: dict[str, tuple[str, ...]] = {
    "v1": CLASSES,
    "v2": CLASSES_V2,
    "v3": CLASSES_V3,
    "all": ALL_CLASSES,
}
V2_OFFSET = 500_000
V3_OFFSET = 800_000
_FAMILIES: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("v1", CLASSES, 0),
    ("v2", CLASSES_V2, V2_OFFSET),
    ("v3", CLASSES_V3, V3_OFFSET),
)
SOURCES: tuple[str, ...] = ("param", "get_rank", "env", "helper-module", "tuple", "attr", "global")
OPS: tuple[str, ...] = ("all_reduce", "broadcast", "barrier", "all_gather")
_OP_TEXT: dict[str, str] = {
    "all_reduce": "dist.all_reduce(t)",
    "all_reduce_max": "dist.all_reduce(t, op=dist.ReduceOp.MAX)",
    "broadcast": "dist.broadcast(t, src=0)",
    "barrier": "dist.barrier()",
    "all_gather": "dist.all_gather(out, t)",
}
RANK_PREDICATES: dict[str, str] = {
    "eq0": "{r} == 0",
    "ne0": "{r} != 0",
    "gt0": "{r} > 0",
    "last": "{r} == {w} - 1",
    "even": "{r} % 2 == 0",
    "odd-truth": "{r} % 2",
    "plus": "{r} + 1 < 2",
    "and": "{r} == 0 and {w} > 1",
    "or": "{r} == 1 or {r} == 2",
}
UNIFORM_PREDICATES: dict[str, str] = {
    "ws-gt1": "{w} > 1",
    "ws-ge2": "{w} >= 2",
    "ws-even": "{w} % 2 == 0",
    "ws-lt2": "{w} < 2",
}
FLOWS: tuple[str, ...] = ("inline", "named", "ternary", "container", "not")
RANK_TRIPS: dict[str, str] = {
    "plus1": "{r} + 1",
    "mod": "{r} % 2 + 1",
    "ws-minus-r": "{w} - {r}",
    "double": "2 * {r} + 1",
}
UNIFORM_TRIPS: dict[str, str] = {"ws": "{w}", "const": "2", "ws-minus1": "{w} - 1"}
# Names outside the default `rank-names`: the flow, not the name, carries the rank.
_RANK_VARS = ("r", "me", "who")
_FLAG_VARS = ("is_main", "leader", "first")
_RANK_HELPERS = ("get_rank", "whoami", "node_id")
_COLL_HELPERS = ("sync", "finish_step", "share", "exchange")
_LOCAL_WORK = ("t = t * 2", "t = t + 1", 'print("rank", {r})', "total = t.sum()")
MAX_LINES = 25
TIERS: tuple[tuple[str, Confidence], ...] = (
    ("high", Confidence.HIGH),
    ("medium", Confidence.MEDIUM),
)
SELECT: tuple[str, ...] = ("RNK1",)
IGNORE: tuple[str, ...] = ("RNK106", "RNK107")
TIMEOUT_S = 20.0
Site = tuple[str, int]  # (file name in the program's folder, line)


@dataclass(frozen=True)
class Program:
    """One generated program: its files (``prog.py`` holds ``main``) and how it was drawn."""

    seed: int
    cls: str
    intent: str  # "diverge" or "uniform": what the generator aimed at; the run decides
    features: tuple[str, ...]
    files: dict[str, str]
    world_sizes: tuple[int, ...]

    @property
    def size(self) -> int:
        """Non-blank lines of all files together."""
        return sum(1 for text in self.files.values() for line in text.splitlines() if line.strip())

    def source(self) -> str:
        """Every file, each under a ``# file:`` header."""
        return "\n".join(f"# file: {name}\n{text}" for name, text in sorted(self.files.items()))


def program_seed(seed: int, index: int) -> int:
    """The seed of the ``index``-th program of a run seeded with ``seed``."""
    return seed * 1_000_000 + index


def family(seed: int) -> str:
    """``v3`` for a program seed from ``V3_OFFSET`` on in its block of a million,
    ``v2`` from ``V2_OFFSET`` on, else ``v1``."""
    offset = seed % 1_000_000
    return "v3" if offset >= V3_OFFSET else "v2" if offset >= V2_OFFSET else "v1"


def generate(seed: int) -> Program:
    """The program of ``seed``: the same seed gives the same program. Its class is
    ``CLASSES[seed % 7]`` (v1) or ``CLASSES_V2[seed % 6]`` (v2, see :func:`family`),
    so consecutive seeds cover every class of their family evenly."""
    rng = random.Random(seed)
    which = family(seed)
    if which == "v3":
        maker: type[_Generator] = _GeneratorV3
        cls = CLASSES_V3[seed % len(CLASSES_V3)]
    elif which == "v2":
        maker, cls = _GeneratorV2, CLASSES_V2[seed % len(CLASSES_V2)]
    else:
        maker, cls = _Generator, CLASSES[seed % len(CLASSES)]
    for _ in range(100):
        program = maker(rng, seed, cls).program()
        if program.size <= MAX_LINES:
            return program
    raise AssertionError(f"no program of at most {MAX_LINES} lines for seed {seed}")


def program_seeds(count: int, seed: int, grammar: str = "all") -> list[int]:
    """The program seeds of a run: ``v1`` the first ``count`` of the block (the
    programs of the first grammar, unchanged), ``v2`` those from ``V2_OFFSET`` on,
    ``v3`` those from ``V3_OFFSET`` on, ``all`` the three in turn, 7 of v1, 6 of v2
    then 2 of v3, so every class comes as often."""
    families = {name: offset for name, _, offset in _FAMILIES}
    if grammar in families:
        return [program_seed(seed, families[grammar] + index) for index in range(count)]
    if grammar != "all":
        raise ValueError(f"grammar must be one of {', '.join(GRAMMARS)}, got {grammar!r}")
    seeds = []
    for index in range(count):
        block, position = divmod(index, len(ALL_CLASSES))
        for _, classes, offset in _FAMILIES:
            if position < len(classes):
                seeds.append(program_seed(seed, offset + block * len(classes) + position))
                break
            position -= len(classes)
    return seeds


def generate_many(count: int, seed: int, grammar: str = "all") -> list[Program]:
    return [generate(program_seed) for program_seed in program_seeds(count, seed, grammar)]


# -- the generator -------------------------------------------------------------


class _Writer:
    """Lines of a function body with indentation."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    @contextlib.contextmanager
    def block(self, header: str) -> Iterator[None]:
        self.line(header)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1


class _Generator:
    def __init__(self, rng: random.Random, seed: int, cls: str) -> None:
        self.rng = rng
        self.seed = seed
        self.cls = cls
        self.helper_module = f"helpers_{seed}"
        self.features: list[str] = []
        self.body = _Writer()
        self.ops_used: set[str] = set()
        self.imports_os = False
        self.module_defs: list[list[str]] = []  # top-level blocks of prog.py
        self.helper_defs: list[list[str]] = []  # blocks of the helper module
        self.helper_imports: list[str] = []  # names prog.py imports from it
        self.helper_needs_torch = False
        self.setup: list[str] = []  # the rank source's lines at the top of the body
        self.r = "rank"
        self.w = "world_size"
        self.host = "main"  # or "method": the body is Ctx.run
        self.global_name: str | None = None
        # Used by the second family (CLASSES_V2) only; empty, they leave v1 programs as they were.
        self.std_imports: list[str] = []  # "import random", before torch
        self.torch_imports: list[str] = []  # "from torch.distributed... import ...", after
        self.init_lines: list[str] = []  # more lines of Ctx.__init__
        self.extra_files: dict[str, str] = {}  # files besides the modules (markers)
        self.sizes: tuple[int, ...] | None = None  # world sizes the class needs
        self.helper_std_imports: list[str] = []  # "import functools", atop the helper module

    # -- drawing ---------------------------------------------------------------
    def pick(self, name: str, options: Sequence[str]) -> str:
        value = self.rng.choice(list(options))
        self.features.append(f"{name}={value}")
        return value

    def program(self) -> Program:
        diverge = self.rng.random() < 0.5
        self.rank_source()
        self.op = self.pick("op", OPS)
        if self.rng.random() < 0.3:
            self.features.append("prefix")
            self.collective("all_reduce")
        getattr(self, "class_" + self.cls.replace("-", "_"))(diverge)
        if self.rng.random() < 0.25:
            self.features.append("suffix")
            self.collective("barrier")
        sizes = (2, 3, 4) if self.rng.random() < 1 / 3 else (2, 3)
        files = {"prog.py": self.prog_file()}
        if self.helper_defs:
            files[self.helper_module + ".py"] = self.helper_file()
        return Program(
            seed=self.seed,
            cls=self.cls,
            intent="diverge" if diverge else "uniform",
            features=tuple(self.features),
            files=files,
            world_sizes=sizes,
        )

    def rank_source(self) -> None:
        kind = self.pick("source", SOURCES)
        var = self.rng.choice(_RANK_VARS)
        if kind == "param":
            return
        if kind == "get_rank":
            self.setup.append(f"{var} = dist.get_rank()")
        elif kind == "env":
            self.imports_os = True
            self.setup.append(f'{var} = int(os.environ["RANK"])')
        elif kind == "helper-module":
            name = self.pick("source-name", _RANK_HELPERS)
            self.helper_defs.append([f"def {name}():", "    return dist.get_rank()"])
            self.helper_imports.append(name)
            self.setup.append(f"{var} = {name}()")
        elif kind == "tuple":
            self.setup.append(f"{var}, w = dist.get_rank(), dist.get_world_size()")
            self.w = "w"
        elif kind == "attr":
            self.host = "method"
            var, self.w = "self.rank", "self.world_size"
        else:  # global
            self.global_name = "_ME"
            self.setup += ["global _ME", "_ME = dist.get_rank()"]
            var = "_ME"
        self.r = var

    # -- pieces ------------------------------------------------------------------
    def collective(self, op: str) -> None:
        self.ops_used.add(op)
        self.body.line(_OP_TEXT[op])

    def other_op(self) -> str:
        return self.rng.choice([op for op in (*OPS, "all_reduce_max") if op != self.op])

    def local(self) -> None:
        self.body.line(self.rng.choice(_LOCAL_WORK).format(r=self.r))

    def predicate(
        self,
        *,
        uniform: bool,
        names: Sequence[str] | None = None,
        r: str | None = None,
        w: str | None = None,
    ) -> str:
        """A rank (or, ``uniform``, world-size) predicate of ``names`` (every one by
        default) on ``r`` and ``w`` (the rank source's by default)."""
        table = UNIFORM_PREDICATES if uniform else RANK_PREDICATES
        name = self.pick("pred", sorted(table) if names is None else sorted(names))
        return table[name].format(r=self.r if r is None else r, w=self.w if w is None else w)

    def condition(
        self,
        *,
        uniform: bool = False,
        names: Sequence[str] | None = None,
        flows: Sequence[str] = FLOWS,
    ) -> str:
        """A test of the rank (or, ``uniform``, of the world size) through a value flow;
        writes the flow's assignments and returns the expression to test."""
        pred = self.predicate(uniform=uniform, names=names)
        flow = self.pick("flow", flows)
        if flow == "named":
            name = self.rng.choice(_FLAG_VARS)
            self.body.line(f"{name} = {pred}")
            return name
        if flow == "ternary":
            self.body.line(f"x = 1 if {pred} else 0")
            return self.rng.choice(("x", "x == 1", "x > 0"))
        if flow == "container":
            self.body.line(f'flags = {{"main": {pred}}}')
            return 'flags["main"]'
        if flow == "not":
            return f"not ({pred})"
        return pred

    def trip_count(self, *, uniform: bool) -> str:
        table = UNIFORM_TRIPS if uniform else RANK_TRIPS
        name = self.pick("trip", sorted(table))
        expr = table[name].format(r=self.r, w=self.w)
        flow = self.pick("flow", ("inline", "named", "ternary"))
        if flow == "named":
            self.body.line(f"n = {expr}")
            return "n"
        if flow == "ternary":
            pred = self.predicate(uniform=uniform)
            self.body.line(f"n = 2 if {pred} else 1")
            return "n"
        return expr

    # -- classes -----------------------------------------------------------------
    def class_branch(self, diverge: bool) -> None:
        body = self.body
        if diverge:
            variant = self.pick("variant", ("if", "if-else-local", "elif", "else-only"))
            if variant == "elif":
                with body.block(f"if {self.r} == 0:"):
                    self.collective(self.op)
                with body.block(f"elif {self.r} == 1:"):
                    self.collective(self.op)
                with body.block("else:"):
                    self.local()
                return
            with body.block(f"if {self.condition()}:"):
                if variant == "else-only":
                    self.local()
                else:
                    self.collective(self.op)
            if variant == "if":
                return
            with body.block("else:"):
                if variant == "else-only":
                    self.collective(self.op)
                else:
                    self.local()
            return
        variant = self.pick("variant", ("uniform-test", "local-only", "every-branch", "if-else"))
        if variant == "uniform-test":
            with body.block(f"if {self.condition(uniform=True)}:"):
                self.collective(self.op)
        elif variant == "local-only":
            with body.block(f"if {self.condition()}:"):
                self.local()
            self.collective(self.op)
        elif variant == "every-branch":
            for header in (f"if {self.r} == 0:", f"elif {self.r} == 1:", "else:"):
                with body.block(header):
                    self.collective(self.op)
        else:
            with body.block(f"if {self.condition()}:"):
                self.local()
                self.collective(self.op)
            with body.block("else:"):
                self.collective(self.op)

    def class_mismatch(self, diverge: bool) -> None:
        body = self.body
        other = self.other_op()
        if diverge:
            variant = self.pick("variant", ("op", "count", "order"))
            if variant != "count":
                self.features.append(f"other={other}")
            with body.block(f"if {self.condition()}:"):
                if variant == "op":
                    self.collective(self.op)
                elif variant == "count":
                    self.collective(self.op)
                    self.collective(self.op)
                else:
                    self.collective(self.op)
                    self.collective(other)
            with body.block("else:"):
                if variant == "op":
                    self.collective(other)
                elif variant == "count":
                    self.collective(self.op)
                else:
                    self.collective(other)
                    self.collective(self.op)
            return
        variant = self.pick("variant", ("same", "value", "same-order"))
        if variant == "same-order":
            self.features.append(f"other={other}")
        if variant == "value":
            pred = self.predicate(uniform=False)
            body.line(f"scale = 2.0 if {pred} else 1.0")
            body.line("t = t * scale")
            self.collective(self.op)
            return
        with body.block(f"if {self.condition()}:"):
            self.local()
            self.collective(self.op)
            if variant == "same-order":
                self.collective(other)
        with body.block("else:"):
            self.collective(self.op)
            if variant == "same-order":
                self.collective(other)

    def class_early_return(self, diverge: bool) -> None:
        body = self.body
        if diverge:
            variant = self.pick("variant", ("before", "between", "with-value"))
            if variant == "between":
                self.collective(self.op)
            with body.block(f"if {self.condition()}:"):
                body.line("return t.tolist()" if variant == "with-value" else "return")
            self.collective(self.other_op() if variant == "between" else self.op)
            return
        variant = self.pick("variant", ("after-last", "uniform-test"))
        if variant == "after-last":
            self.collective(self.op)
            with body.block(f"if {self.condition()}:"):
                body.line("return")
            self.local()
        else:
            with body.block(f"if {self.condition(uniform=True)}:"):
                body.line("return")
            self.collective(self.op)

    def class_loop_trip(self, diverge: bool) -> None:
        body = self.body
        if diverge:
            variant = self.pick("variant", ("for", "while"))
            trips = self.trip_count(uniform=False)
        else:
            variant = self.pick("variant", ("for", "while", "rank-loop-local"))
            trips = self.trip_count(uniform=variant != "rank-loop-local")
        if variant == "while":
            body.line("i = 0")
            with body.block(f"while i < {trips}:"):
                self.collective(self.op)
                body.line("i += 1")
            return
        with body.block(f"for _ in range({trips}):"):
            if variant == "rank-loop-local":
                body.line("t = t + 1")
            else:
                self.collective(self.op)
        if variant == "rank-loop-local":
            self.collective(self.op)

    def class_loop_exit(self, diverge: bool) -> None:
        body = self.body
        if diverge:
            variant = self.pick("variant", ("break", "continue", "while-break"))
            cond = self.condition()
        else:
            variant = self.pick("variant", ("break-index", "continue-after", "while-uniform"))
            cond = self.condition() if variant == "continue-after" else ""
        if variant in ("while-break", "while-uniform"):
            body.line("i = 0")
            with body.block("while True:"):
                self.collective(self.op)
                body.line("i += 1")
                stop = f"{cond} or i >= 2" if variant == "while-break" else f"i >= {self.w}"
                with body.block(f"if {stop}:"):
                    body.line("break")
            return
        with body.block("for i in range(3):"):
            if variant == "break":
                with body.block(f"if {cond} and i == 1:"):
                    body.line("break")
            elif variant == "continue":
                with body.block(f"if {cond} and i == 0:"):
                    body.line("continue")
            elif variant == "break-index":
                with body.block("if i == 2:"):
                    body.line("break")
            self.collective(self.op)
            if variant == "continue-after":
                with body.block(f"if {cond}:"):
                    body.line("continue")
                body.line("t = t + 1")

    def class_helper(self, diverge: bool) -> None:
        body = self.body
        where = self.pick("where", ("same-file", "module"))
        name = self.rng.choice(_COLL_HELPERS)
        if diverge:
            variant = self.pick("variant", ("guarded-call", "deep", "by-argument"))
        else:
            variant = self.pick(
                "variant", ("unguarded", "uniform-test", "every-branch", "by-uniform-argument")
            )
        by_argument = variant.startswith("by-")
        self.define_helper(name, where, deep=variant == "deep", by_argument=by_argument)
        if by_argument:
            cond = self.condition(uniform=variant == "by-uniform-argument")
            body.line(f"{name}(t, {cond})")
        elif variant == "unguarded":
            with body.block(f"if {self.condition()}:"):
                self.local()
            body.line(f"{name}(t)")
        elif variant == "uniform-test":
            with body.block(f"if {self.condition(uniform=True)}:"):
                body.line(f"{name}(t)")
        else:
            with body.block(f"if {self.condition()}:"):
                body.line(f"{name}(t)")
            if variant == "every-branch":
                with body.block("else:"):
                    body.line(f"{name}(t)")

    def define_helper(self, name: str, where: str, *, deep: bool, by_argument: bool) -> None:
        """``def name(t)``, issuing ``self.op`` (through ``_inner`` when ``deep``;
        only when its second argument is true when ``by_argument``)."""
        lines: list[str] = []
        if self.op == "all_gather":
            self.helper_needs_torch = True
            issue = [
                "out = [torch.zeros(2) for _ in range(dist.get_world_size())]",
                "dist.all_gather(out, t)",
            ]
        else:
            issue = [_OP_TEXT[self.op]]
        if deep:
            self.features.append("depth=2")
            lines += ["def _inner(t):", *(f"    {line}" for line in issue)]
            issue = ["_inner(t)"]
        if by_argument:
            lines += [f"def {name}(t, go):", "    if go:", *(f"        {line}" for line in issue)]
        else:
            lines += [f"def {name}(t):", *(f"    {line}" for line in issue)]
        if where == "module":
            self.helper_defs.append(lines)
            self.helper_imports.append(name)
        else:
            self.module_defs.append(lines)

    def class_sanitised(self, diverge: bool) -> None:
        body = self.body
        cond = self.condition()
        body.line(f"flag = torch.tensor(float({cond}))")
        sync = self.pick("sanitiser", ("broadcast", "all_reduce-max"))
        variant = self.pick(
            "variant",
            ("raw-condition", "copy-before", "read-before")
            if diverge
            else ("flag-item", "flag-compare", "bool-after"),
        )
        if variant == "copy-before":
            body.line("kept = flag.clone()")
        elif variant == "read-before":
            body.line("go = flag.item() > 0")
        if sync == "broadcast":
            body.line("dist.broadcast(flag, src=0)")
        else:
            body.line("dist.all_reduce(flag, op=dist.ReduceOp.MAX)")
        if variant == "bool-after":
            body.line("go = bool(flag.item())")
        test = {
            "raw-condition": cond,
            "copy-before": "kept.item()",
            "read-before": "go",
            "flag-item": "flag.item()",
            "flag-compare": "flag.item() > 0",
            "bool-after": "go",
        }[variant]
        with body.block(f"if {test}:"):
            self.collective(self.op)

    # -- assembling ----------------------------------------------------------------
    def function_body(self) -> list[str]:
        lines = [*self.setup, "t = torch.ones(2)"]
        if "all_gather" in self.ops_used:
            lines.append(f"out = [torch.zeros(2) for _ in range({self.w})]")
        return lines + self.body.lines

    def prog_file(self) -> str:
        head = ["import os"] if self.imports_os else []
        head += [*self.std_imports, "import torch", "import torch.distributed as dist"]
        head += self.torch_imports
        if self.helper_imports:
            head.append(f"from {self.helper_module} import {', '.join(self.helper_imports)}")
        blocks = [head]
        if self.global_name is not None:
            blocks.append([f"{self.global_name} = -1"])
        blocks += self.module_defs
        if self.host == "method":
            setup = ["self.rank = dist.get_rank()", "self.world_size = world_size"]
            setup += self.init_lines
            blocks.append(
                [
                    "class Ctx:",
                    "    def __init__(self, world_size):",
                    *(f"        {line}" for line in setup),
                    "    def run(self):",
                    *(f"        {line}" for line in self.function_body()),
                ]
            )
            main = ["    Ctx(world_size).run()"]
        else:
            main = [f"    {line}" for line in self.function_body()]
        blocks.append(["def main(rank, world_size):", *main])
        return "\n\n".join("\n".join(block) for block in blocks) + "\n"

    def helper_file(self) -> str:
        head = list(self.helper_std_imports)
        head += ["import torch"] if self.helper_needs_torch else []
        head.append("import torch.distributed as dist")
        return "\n\n".join("\n".join(block) for block in [head, *self.helper_defs]) + "\n"


# -- the second family (CLASSES_V2) ----------------------------------------------


def _op_call(op: str, *, tensor: str = "t", group: str | None = None, src: str = "0") -> str:
    """``op`` on ``tensor`` (on ``group`` when given; ``src`` a global rank of it)."""
    on = f", group={group}" if group else ""
    if op == "all_reduce":
        return f"dist.all_reduce({tensor}{on})"
    if op == "broadcast":
        return f"dist.broadcast({tensor}, src={src}{on})"
    if op == "barrier":
        return f"dist.barrier(group={group})" if group else "dist.barrier()"
    return f"dist.all_gather(out, {tensor}{on})"


_GROUP_OPS = ("all_reduce", "broadcast", "barrier")  # no `out` list needed
_DECORATORS = ("rank_zero_only", "main_only", "wrapped", "guarded")
_DECORATED = ("save", "log_metrics", "checkpoint")


class _GeneratorV2(_Generator):
    """The classes of CLASSES_V2; same rank sources, flows and assembly as v1."""

    last_exit = False  # the idiom's exit must stay after the last collective: no suffix

    def program(self) -> Program:
        diverge = self.rng.random() < 0.5
        self.rank_source()
        if self.rng.random() < 0.3:
            self.features.append("prefix")
            self.collective("all_reduce")
        getattr(self, "class_" + self.cls.replace("-", "_"))(diverge)
        if self.rng.random() < 0.25 and not self.last_exit:
            self.features.append("suffix")
            self.collective("barrier")
        sizes = (2, 3, 4) if self.rng.random() < 1 / 3 else (2, 3)
        files = {"prog.py": self.prog_file()}
        if self.helper_defs:
            files[self.helper_module + ".py"] = self.helper_file()
        files.update(self.extra_files)
        return Program(
            seed=self.seed,
            cls=self.cls,
            intent="diverge" if diverge else "uniform",
            features=tuple(self.features),
            files=files,
            world_sizes=self.sizes or sizes,
        )

    def use(self, op: str) -> str:
        """Pick ``op`` as the program's; an all_gather needs ``out``."""
        self.op = op
        if op == "all_gather":
            self.ops_used.add("all_gather")
        return op

    def import_dtensor(self, *names: str) -> None:
        self.torch_imports.append("from torch.distributed.device_mesh import init_device_mesh")
        if names:
            self.torch_imports.append(f"from torch.distributed.tensor import {', '.join(names)}")

    # -- unknown-group -------------------------------------------------------------
    def class_unknown_group(self, diverge: bool) -> None:
        body, w = self.body, self.w
        api = self.pick(
            "api",
            ("full_tensor", "redistribute", "mesh-group", "new-group", "stored-group", "group-arg"),
        )
        if diverge:
            variant = self.pick("variant", ("if", "if-else-local"))
        else:
            options = ["every-rank", "uniform-test"]
            if api in ("new-group", "group-arg"):
                options += ["member-guard", "one-member"]
            if api in ("full_tensor", "redistribute", "mesh-group"):
                options.append("mesh-member-guard")
            variant = self.pick("variant", options)
        grouped = api in ("stored-group", "group-arg") or variant in ("member-guard", "one-member")
        if api not in ("full_tensor", "redistribute"):
            op = self.use(self.pick("op", _GROUP_OPS if grouped else OPS))
        if api in ("full_tensor", "redistribute"):
            self.import_dtensor(
                "Shard", "distribute_tensor", *(("Replicate",) if api == "redistribute" else ())
            )
            body.line(f'mesh = init_device_mesh("cpu", ({w},))')
            body.line(f"d = distribute_tensor(torch.ones(2 * {w}), mesh, placements=[Shard(0)])")
            call = (
                "full = d.full_tensor()"
                if api == "full_tensor"
                else "full = d.redistribute(mesh, [Replicate()]).to_local()"
            )
        elif api == "mesh-group":
            self.import_dtensor()
            body.line(f'mesh = init_device_mesh("cpu", ({w},))')
            body.line("g = mesh.get_group()")
            call = _op_call(op, group="g")
        elif api == "stored-group":
            self.module_defs.append(
                [
                    "class Comm:",
                    "    def __init__(self, world_size):",
                    "        self.pg = dist.new_group(list(range(world_size)))",
                    "    def sync(self, t):",
                    f"        {_op_call(op, group='self.pg')}",
                ]
            )
            body.line(f"comm = Comm({w})")
            call = "comm.sync(t)"
        else:
            if variant == "member-guard":
                body.line(f"ranks = list(range(0, {w}, 2))")
                body.line("pg = dist.new_group(ranks)")
            elif variant == "one-member":
                body.line("pg = dist.new_group([0])")
            else:
                body.line(f"pg = dist.new_group(list(range({w})))")
            if api == "group-arg":
                where = self.pick("where", ("same-file", "module"))
                lines = ["def reduce_on(t, group=None):", f"    {_op_call(op, group='group')}"]
                if where == "module":
                    self.helper_defs.append(lines)
                    self.helper_imports.append("reduce_on")
                else:
                    self.module_defs.append(lines)
                call = "reduce_on(t, pg)"
            else:
                call = _op_call(op, group="pg")
        if diverge:
            single = ("eq0", "last", "plus", "and")
            with body.block(f"if {self.condition(names=single, flows=FLOWS[:4])}:"):
                body.line(call)
            if variant == "if-else-local":
                with body.block("else:"):
                    self.local()
            return
        if variant == "every-rank":
            body.line(call)
            return
        test = {
            "uniform-test": lambda: self.condition(uniform=True),
            "member-guard": lambda: f"{self.r} in ranks",
            "one-member": lambda: f"{self.r} == 0",
            "mesh-member-guard": lambda: f"{self.r} in mesh.mesh.tolist()",
        }[variant]()
        with body.block(f"if {test}:"):
            body.line(call)

    # -- dict-order ------------------------------------------------------------------
    def draw_test(self, kinds: Sequence[str]) -> str:
        """A per-rank random draw (or a rank test) to add a key under."""
        kind = self.pick("draw", kinds)
        if kind == "random":
            self.std_imports.append("import random")
            return "random.random() < 0.5"
        if kind == "torch":
            return "torch.rand(1).item() < 0.5"
        return self.condition()

    def class_dict_order(self, diverge: bool) -> None:
        body = self.body
        if diverge:
            variant = self.pick("variant", ("random-key", "rank-key", "records", "order"))
        else:
            variant = self.pick(
                "variant", ("const-keys", "rank-values", "sorted-union", "sorted-order")
            )
        ordered = variant in ("order", "sorted-order")
        op = self.use(self.pick("op", ("all_reduce", "broadcast") if ordered else OPS))
        if variant == "random-key":
            body.line('metrics = {"loss": t}')
            with body.block(f"if {self.draw_test(('random', 'torch'))}:"):
                body.line('metrics["acc"] = t * 2')
        elif variant == "rank-key":
            body.line('metrics = {"loss": t}')
            with body.block(f"if {self.condition()}:"):
                body.line('metrics["extra"] = t + 1')
        elif variant == "records":
            trips = self.trip_count(uniform=False)
            body.line(f'metrics = {{f"m{{i}}": t * i for i in range({trips})}}')
        elif ordered:
            body.line('names = ["loss", "acc"]')
            with body.block(f"if {self.condition()}:"):
                body.line("names.reverse()")
            body.line("metrics = {}")
            with body.block("for name in names:"):
                body.line("metrics[name] = torch.ones(len(name))")
        elif variant == "const-keys":
            body.line('metrics = {"loss": t, "acc": t * 2}')
        elif variant == "rank-values":
            body.line(f'metrics = {{"loss": t, "acc": t * {self.r}}}')
        else:  # sorted-union
            body.line('metrics = {"loss": t}')
            with body.block(f"if {self.draw_test(('random', 'torch', 'rank'))}:"):
                body.line('metrics["acc"] = t * 2')
            body.line(f"gathered = [None] * {self.w}")
            body.line("dist.all_gather_object(gathered, list(metrics))")
            with body.block("for name in sorted(set().union(*gathered)):"):
                body.line(_op_call(op, tensor="metrics.get(name, torch.zeros(2))"))
            return
        if variant == "sorted-order":
            loop = "for name in sorted(metrics):"
            value = "metrics[name]"
        else:
            kind = self.pick("loop", ("keys", "items", "list"))
            loop = {
                "keys": "for name in metrics:",
                "items": "for name, value in metrics.items():",
                "list": "for name in list(metrics.keys()):",
            }[kind]
            value = "value" if kind == "items" else "metrics[name]"
        with body.block(loop):
            body.line(_op_call(op, tensor=value))

    # -- state-later -----------------------------------------------------------------
    def class_state_later(self, diverge: bool) -> None:
        body = self.body
        form = self.pick("form", ("last-pushed", "set-elsewhere", "counter", "flag", "global"))
        rank_in = "query" if form == "global" else self.pick("rank-in", ("ctor", "query"))
        if diverge:
            variant = "rank-guard"
        else:
            variant = self.pick("variant", ("every-rank", "uniform-guard", "local-read"))
        op = _op_call(self.use(self.pick("op", _GROUP_OPS)))
        me = "self.me" if rank_in == "ctor" else "dist.get_rank()"
        if variant == "uniform-guard":
            guard = self.predicate(uniform=True, r=me, w="dist.get_world_size()")
        elif variant != "every-rank":
            guard = self.predicate(uniform=False, r=me, w="dist.get_world_size()")

        def guarded(lines: list[str], indent: str) -> list[str]:
            if variant == "every-rank":
                return [indent + line for line in lines]
            return [f"{indent}if {guard}:", *(f"{indent}    {line}" for line in lines)]

        def reading(test: str, indent: str, then: Sequence[str] = ()) -> list[str]:
            if variant == "local-read":
                return [f"{indent}if {test}:", f"{indent}    t = t * 2", indent + op, *then]
            return [f"{indent}if {test}:", f"{indent}    {op}", *(f"    {x}" for x in then)]

        if form == "global":
            self.module_defs.append(["_LAST = -1"])
            self.module_defs.append(
                [
                    "def push(step, t):",
                    "    global _LAST",
                    *reading("step != _LAST", "    "),
                    *guarded(["_LAST = step"], "    "),
                ]
            )
            steps = self.pick("steps", ("(0, 0, 1)", "[1, 1]"))
            with body.block(f"for step in {steps}:"):
                body.line("push(step, t)")
            return
        init = {
            "last-pushed": "self.last = -1",
            "set-elsewhere": "self.last = -1",
            "counter": "self.count = 0",
            "flag": "self.dirty = False",
        }[form]
        ctor = ["class Tracker:"]
        if rank_in == "ctor":
            ctor += ["    def __init__(self, me):", "        self.me = me"]
        else:
            ctor += ["    def __init__(self):"]
        ctor.append(f"        {init}")
        made = f"Tracker({self.r})" if rank_in == "ctor" else "Tracker()"
        if form == "last-pushed":
            methods = [
                "    def push(self, step, t):",
                *reading("step != self.last", "        "),
                *guarded(["self.last = step"], "        "),
            ]
            body.line(f"tr = {made}")
            steps = self.pick("steps", ("(0, 0, 1)", "[1, 1]"))
            with body.block(f"for step in {steps}:"):
                body.line("tr.push(step, t)")
        elif form == "set-elsewhere":
            methods = [
                "    def mark(self, step):",
                *guarded(["self.last = step"], "        "),
                "    def push(self, step, t):",
                *reading("step != self.last", "        "),
            ]
            body.line(f"tr = {made}")
            body.line("tr.mark(0)")
            body.line("tr.push(0, t)")
        elif form == "counter":
            methods = [
                "    def step(self, t):",
                *reading("self.count > 0", "        "),
                *guarded(["self.count += 1"], "        "),
            ]
            body.line(f"tr = {made}")
            with body.block("for _ in range(2):"):
                body.line("tr.step(t)")
        else:  # flag
            methods = [
                "    def update(self):",
                *guarded(["self.dirty = True"], "        "),
                "    def flush(self, t):",
                *reading("self.dirty", "        ", then=["        self.dirty = False"]),
            ]
            body.line(f"tr = {made}")
            body.line("tr.update()")
            body.line("tr.flush(t)")
        self.module_defs.append([*ctor, *methods])

    # -- membership ------------------------------------------------------------------
    def class_membership(self, diverge: bool) -> None:
        body, r = self.body, self.r
        lo = int(self.pick("first-member", ("0", "0", "1", "2")))
        self.sizes = {1: (3, 4), 2: (4,)}.get(lo)
        spelling = self.pick("members", ("literal", "range", "variable"))
        if spelling == "variable":
            body.line(f"ranks = [{lo}, {lo + 1}]")
        members = {
            "literal": f"[{lo}, {lo + 1}]",
            "range": f"list(range({lo}, {lo + 2}))",
            "variable": "ranks",
        }[spelling]
        body.line(f"g = dist.new_group({members})")
        if diverge:
            guards = {
                "lt-second": f"{r} < {lo + 1}",
                "eq-first": f"{r} == {lo}",
                "eq-second": f"{r} == {lo + 1}",
                "gt-first": f"{r} > {lo}",
                "even": f"{r} % 2 == 0",
            }
        else:
            guards = {"in-list": f"{r} in [{lo}, {lo + 1}]", "between": f"{lo} <= {r} <= {lo + 1}"}
            if lo == 0:
                guards["lt-end"] = f"{r} < 2"
            if lo % 2 == 0:
                guards["pair"] = f"{r} // 2 == {lo // 2}"
            if spelling == "variable":
                guards["in-ranks"] = f"{r} in ranks"
        guard = self.pick("guard", sorted(guards))
        pred = guards[guard]
        # A non-member's broadcast raises (its `src` is not in the group): not for them.
        reaches_others = guard in ("gt-first", "even") or (guard == "lt-second" and lo > 0)
        ops = [op for op in OPS if op != "broadcast" or not reaches_others]
        op = self.use(self.pick("op", ops))
        if op == "all_gather":
            self.ops_used.discard("all_gather")
            body.line("out = [torch.zeros(2) for _ in range(2)]")
        flow = self.pick("flow", ("inline", "named", "ternary"))
        if flow == "named":
            name = self.rng.choice(_FLAG_VARS)
            body.line(f"{name} = {pred}")
            pred = name
        elif flow == "ternary":
            body.line(f"x = 1 if {pred} else 0")
            pred = "x == 1"
        with body.block(f"if {pred}:"):
            body.line(_op_call(op, group="g", src=str(lo)))

    # -- decorator -------------------------------------------------------------------
    def class_decorator(self, diverge: bool) -> None:
        where = self.pick("where", ("same-file", "module"))
        name = self.rng.choice(_DECORATORS)
        fn = self.rng.choice(_DECORATED)
        if diverge:
            variant = self.pick("variant", ("guard-call", "guard-return", "factory"))
        else:
            variant = self.pick("variant", ("log", "rank-log", "sync-after", "uniform-guard"))
        wraps = variant != "factory" and self.pick("wraps", ("yes", "no")) == "yes"
        guard_source = self.pick("guard-source", ("get_rank", "env"))
        me = 'int(os.environ["RANK"])' if guard_source == "env" else "dist.get_rank()"
        op = _op_call(self.use(self.pick("op", _GROUP_OPS)))
        call = "return fn(*args, **kwargs)"
        inner = {
            "guard-call": [f"if {me} == 0:", f"    {call}", "return None"],
            "guard-return": [f"if {me} != 0:", "    return None", call],
            "factory": [f"if {me} == which:", f"    {call}"],
            "log": ['print("calling", fn.__name__)', call],
            "rank-log": [f"if {me} == 0:", '    print("calling", fn.__name__)', call],
            "sync-after": ["out = fn(*args, **kwargs)", "dist.barrier()", "return out"],
            "uniform-guard": ["if dist.get_world_size() > 1:", f"    {call}", "return None"],
        }[variant]
        uses_os = any("os.environ" in line for line in inner)
        if variant == "factory":
            deco = [
                f"def {name}(which):",
                "    def deco(fn):",
                "        def wrapper(*args, **kwargs):",
                *(f"            {line}" for line in inner),
                "        return wrapper",
                "    return deco",
            ]
            applied = f"@{name}(0)"
        else:
            deco = [f"def {name}(fn):"]
            if wraps:
                deco.append("    @functools.wraps(fn)")
            deco += [
                "    def wrapper(*args, **kwargs):",
                *(f"        {line}" for line in inner),
                "    return wrapper",
            ]
            applied = f"@{name}"
        if where == "module":
            self.helper_defs.append(deco)
            self.helper_imports.append(name)
            if wraps:
                self.helper_std_imports.append("import functools")
            if uses_os:
                self.helper_std_imports.insert(0, "import os")
        else:
            self.module_defs.append(deco)
            if wraps:
                self.std_imports.append("import functools")
            if uses_os:
                self.imports_os = True
        self.module_defs.append([applied, f"def {fn}(t):", f"    {op}"])
        self.body.line(f"{fn}(t)")

    # -- local-exit ------------------------------------------------------------------
    def class_local_exit(self, diverge: bool) -> None:
        body = self.body
        if diverge:
            variant = self.pick(
                "variant", ("records", "records-continue", "path", "debug", "sanity")
            )
        else:
            variant = self.pick(
                "variant",
                ("records-uniform", "records-after", "path-uniform", "debug-off", "sanity-uniform"),
            )
        op = _op_call(self.use(self.pick("op", ("barrier", "barrier", "all_reduce", "broadcast"))))
        if variant.startswith("records"):
            bound = self.w if variant == "records-uniform" else self.r
            body.line(f"records = [x for x in range({bound})]")
            empty = self.pick("empty-test", ("not", "len"))
            test = "not records" if empty == "not" else "len(records) == 0"
            if variant == "records-continue":
                with body.block("for i in range(2):"):
                    with body.block("if len(records) <= i:"):
                        body.line("continue")
                    body.line(op)
                return
            if variant == "records-after":
                self.last_exit = True
                body.line(op)
                with body.block(f"if {test}:"):
                    body.line("return")
                self.local()
                return
            if self.pick("in-helper", ("no", "yes")) == "yes":
                self.module_defs.append(
                    ["def flush(records, t):", f"    if {test}:", "        return", f"    {op}"]
                )
                body.line("flush(records, t)")
                return
            with body.block(f"if {test}:"):
                body.line("return")
            body.line(op)
            return
        if variant.startswith("path"):
            self.imports_os = True
            body.line("here = os.path.dirname(__file__)")
            if variant == "path":
                path = f'f"{{here}}/rank{{{self.r}}}.done"'
                self.extra_files["rank0.done"] = ""
            else:
                path = 'f"{here}/ready.done"'
                if self.pick("marker", ("absent", "present")) == "present":
                    self.extra_files["ready.done"] = ""
            with body.block(f"if os.path.exists({path}):"):
                body.line("return")
            body.line(op)
            return
        if variant.startswith("debug"):
            source = self.pick("debug-from", ("constant", "env"))
            on = variant == "debug"
            if source == "constant":
                self.module_defs.append([f"DEBUG = {on}"])
                flag = "DEBUG"
            else:
                self.imports_os = True
                default = "1" if on else "0"
                body.line(f'debug = os.environ.get("ORACLE_DEBUG", "{default}") == "1"')
                flag = "debug"
            single = self.predicate(uniform=False, names=("eq0", "last", "plus"))
            with body.block(f"if {flag} and {single}:"):
                body.line("return")
            body.line(op)
            return
        if variant == "sanity":
            body.line("x = torch.rand(1).item()")
            with body.block("if x < 0.5:"):
                body.line('print("skipping a bad batch")')
                body.line("return")
        else:
            with body.block("if not torch.isfinite(t).all():"):
                body.line("return")
        body.line(op)


# -- the third family (CLASSES_V3) -------------------------------------------------


class _GeneratorV3(_GeneratorV2):
    """The classes of CLASSES_V3; same rank sources, flows and assembly as v2."""

    def class_wrapped_forward(self, diverge: bool) -> None:
        """A DDP model (with a BatchNorm: its forward broadcasts the buffers) whose
        forward runs under a rank test, directly or through helpers."""
        body = self.body
        self.torch_imports.append("from torch.nn.parallel import DistributedDataParallel as DDP")
        make = self.pick("make", ("in-view", "maker", "maker-guarded"))
        if diverge:
            variant = self.pick("variant", ("if", "if-else-local"))
        else:
            variant = self.pick(
                "variant", ("every-rank", "uniform-test", "unwrapped", "no-buffer-broadcast")
            )
        keywords = ", broadcast_buffers=False" if variant == "no-buffer-broadcast" else ""
        if make == "in-view":
            body.line(f"model = DDP(torch.nn.BatchNorm1d(2){keywords})")
        else:
            lines = ["def wrap(m, world_size):"]
            if make == "maker-guarded":
                lines += ["    if world_size < 1:", "        return m"]
            self.module_defs.append([*lines, f"    return DDP(m{keywords})"])
            body.line(f"model = wrap(torch.nn.BatchNorm1d(2), {self.w})")
        body.line("batch = torch.ones(4, 2)")
        reach = self.pick("reach", ("direct", "forward", "helper", "helper-2", "helper-module"))
        helper = ["def evaluate(model, batch):"]
        if variant == "unwrapped" and reach != "direct":
            helper.append('    model = model.module if hasattr(model, "module") else model')
        helper.append("    return model(batch).sum()")
        if reach == "helper-module":
            self.helper_defs.append(helper)
            self.helper_imports.append("evaluate")
        elif reach.startswith("helper"):
            self.module_defs.append(helper)
            if reach == "helper-2":
                self.module_defs.append(
                    ["def validate(model, batch):", "    return evaluate(model, batch)"]
                )
        if reach == "direct":
            model = "model.module" if variant == "unwrapped" else "model"
            call = f"{model}(batch)"
        elif reach == "forward":
            call = f"{'model.module' if variant == 'unwrapped' else 'model'}.forward(batch)"
        else:
            call = f"{'validate' if reach == 'helper-2' else 'evaluate'}(model, batch)"
        if variant == "every-rank":
            body.line(call)
            return
        test = self.condition(uniform=variant == "uniform-test")
        with body.block(f"if {test}:"):
            body.line(call)
        if variant == "if-else-local":
            with body.block("else:"):
                self.local()

    def class_nested_exit(self, diverge: bool) -> None:
        """An exit under a rank test that reaches beyond the test's own block: under
        a further test in the rank test's arm, or in a uniform `if`, a `with` or an
        inner loop, before a collective after that block."""
        body = self.body
        if diverge:
            variant = self.pick(
                "variant", ("nested-test", "in-uniform-if", "in-with", "inner-loop", "continue")
            )
        else:
            variant = self.pick(
                "variant",
                ("uniform-test", "continue-after-loop", "arm-issues", "after-last", "break-inner"),
            )
        op = _op_call(self.use(self.pick("op", ("barrier", "barrier", "all_reduce", "broadcast"))))
        test = self.condition(uniform=variant == "uniform-test")
        if variant == "in-with":
            with body.block("with torch.no_grad():"), body.block(f"if {test}:"):
                body.line("return")
            body.line(op)
            return
        if variant == "arm-issues":
            with body.block(f"if {self.w} > 0:"), body.block(f"if {test}:"):
                body.line(op)
                body.line("return")
            body.line(op)
            return
        if variant == "after-last":
            body.line(op)
        if variant in ("inner-loop", "break-inner"):
            exit_line = "return" if variant == "inner-loop" else "break"
            with body.block("for epoch in range(2):"):
                with body.block("for i in range(2):"), body.block(f"if {test}:"):
                    body.line(exit_line)
                body.line(op)
            return
        exit_line = "continue" if variant in ("continue", "continue-after-loop") else "return"
        with body.block("for step in range(3):"):
            if variant in ("nested-test", "uniform-test"):
                with body.block(f"if {test}:"):
                    self.local()
                    with body.block("if step >= 1:"):
                        body.line(exit_line)
            else:
                with body.block("if step % 2 == 0:"), body.block(f"if {test}:"):
                    body.line(exit_line)
            if variant not in ("after-last", "continue-after-loop"):
                body.line(op)
            else:
                self.local()
        if variant == "continue-after-loop":
            body.line(op)


# -- running -------------------------------------------------------------------


@dataclass
class Run:
    """One run of a program at one world size."""

    world_size: int
    outcome: str  # "ok", "divergence", "failure" (RankFailure) or "timeout" (RanksTimeout)
    message: str = ""
    # (file name in the program's folder, line) of each line the divergence names.
    sites: list[Site] = field(default_factory=list)
    # ... and of the collectives paired, before it, with other ranks' from other lines.
    paired: list[Site] = field(default_factory=list)


def write(program: Program, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in program.files.items():
        (folder / name).write_text(text, encoding="utf-8")


def _load(program: Program, folder: Path, tag: str) -> ModuleType:
    """A fresh copy of ``prog.py`` (and of its helper module) under a unique name."""
    helper = f"helpers_{program.seed}"
    spec = importlib.util.spec_from_file_location(
        f"_oracle_prog_{program.seed}_{tag}", folder / "prog.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(folder))
    sys.modules.pop(helper, None)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(helper, None)
        sys.dont_write_bytecode = saved
    return module


def run_program(program: Program, folder: Path) -> list[Run]:
    """Run ``program`` (written in ``folder``) at each of its world sizes, each rank
    with its own copy of the modules."""
    from ranklint.runtime import DivergenceError, RankFailure, RanksTimeout, run_ranks

    runs = []
    for world_size in program.world_sizes:
        modules = [_load(program, folder, f"{world_size}_{rank}") for rank in range(world_size)]

        def entry(rank: int, world_size: int, modules: list[ModuleType] = modules) -> Any:
            return modules[rank].main(rank, world_size)

        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                # torch 2.13 deprecates DDP's `broadcast_buffers` (wrapped-forward uses it).
                warnings.simplefilter("ignore", FutureWarning)
                run_ranks(entry, world_size, mode="threads", timeout=TIMEOUT_S, explain=False)
        except DivergenceError as error:
            sites, paired = _divergence_sites(error, folder)
            message = _shorten(str(error), folder)
            runs.append(Run(world_size, "divergence", message, sites, paired))
        except RankFailure as error:
            runs.append(Run(world_size, "failure", _shorten(str(error), folder)))
        except RanksTimeout as error:
            runs.append(Run(world_size, "timeout", _shorten(str(error), folder)))
        else:
            runs.append(Run(world_size, "ok"))
    return runs


def _divergence_sites(error: Any, folder: Path) -> tuple[list[Site], list[Site]]:
    """The lines of ``folder``'s files that ``error`` names (each member's collective at
    the divergence and its callers, the collective each rank waits in), and those of
    the collectives paired at an earlier position of the group with one another
    rank issued from other lines (an extra barrier on rank 0 that met rank 1's
    next barrier: the run names the one after, left over on rank 0)."""
    divergence = error.divergence
    named = [*divergence.at.values()]
    named += [view.waiting_in for view in error.views if view.waiting_in is not None]
    paired = []
    logs = [view.on_group(divergence.group_name) for view in error.views]
    for position in range(divergence.position):
        met = [log[position] for log in logs if len(log) > position]
        if len({_stack(collective) for collective in met}) > 1:
            paired += met
    return _in_folder(named, folder), _in_folder(paired, folder)


def _stack(collective: Any) -> tuple[tuple[str, int], ...]:
    return tuple((site.file, site.line) for site in (collective.site, *collective.callers) if site)


def _in_folder(collectives: Iterable[Any], folder: Path) -> list[Site]:
    here = os.path.realpath(folder)
    sites: set[Site] = set()
    for collective in collectives:
        for file, line in _stack(collective):
            if os.path.dirname(os.path.realpath(file)) == here:
                sites.add((os.path.basename(file), line))
    return sorted(sites)


def _shorten(text: str, folder: Path) -> str:
    for spelled in {str(folder), os.path.realpath(folder), os.path.relpath(folder)}:
        text = text.replace(spelled + os.sep, "")
    return text


# -- linting -------------------------------------------------------------------


@dataclass(frozen=True)
class StaticFinding:
    code: str
    file: str
    line: int
    end_line: int
    confidence: str
    trace: tuple[tuple[str, int], ...]
    message: str

    def on(self, sites: Iterable[tuple[str, int]]) -> bool:
        """The finding, or a step of its trace, is on one of ``sites``."""
        wanted = set(sites)
        own = {(self.file, line) for line in range(self.line, self.end_line + 1)}
        return bool(own & wanted) or any(step in wanted for step in self.trace)


def lint_program(
    folder: Path, *, select: Sequence[str] = SELECT, ignore: Sequence[str] = IGNORE
) -> list[StaticFinding]:
    """The findings of ``select`` less ``ignore`` in ``folder``, of every confidence
    (no cache: nothing is written)."""
    config = Config(select=tuple(select), ignore=tuple(ignore), confidence="low", root=folder)
    result = lint_paths([folder], config, jobs=1)
    if result.errors:
        raise RuntimeError(f"ranklint failed on {folder}: {result.errors}")
    return [_static(finding, folder) for finding in result.findings]


def _static(finding: Finding, folder: Path) -> StaticFinding:
    def name(path: str) -> str:
        here = os.path.realpath(folder)
        real = os.path.realpath(path)
        return os.path.basename(real) if os.path.dirname(real) == here else real

    return StaticFinding(
        code=finding.code,
        file=name(finding.path),
        line=finding.line,
        end_line=finding.end_line,
        confidence=finding.confidence.value,
        trace=tuple((name(step.path), step.line) for step in finding.trace),
        message=finding.message,
    )


def in_tier(finding: StaticFinding, tier: Confidence) -> bool:
    return tier.admits(Confidence(finding.confidence))


# -- judging -------------------------------------------------------------------


@dataclass
class Judged:
    """A program, what its runs did and what ranklint said."""

    program: Program
    runs: list[Run]
    findings: list[StaticFinding]

    @property
    def generator_bug(self) -> bool:
        return any(run.outcome in ("failure", "timeout") for run in self.runs)

    @property
    def diverges(self) -> bool:
        return any(run.outcome == "divergence" for run in self.runs)

    @property
    def sites(self) -> list[Site]:
        """The lines the runs named, and the lines of collectives they paired wrongly."""
        return sorted({site for run in self.runs for site in (*run.sites, *run.paired)})

    def verdict(self, tier: Confidence) -> str:
        """``caught``, ``missed`` or ``elsewhere`` (findings, none on a named line) for
        a divergent program; ``clean`` or ``false-alarm`` for another one."""
        found = [finding for finding in self.findings if in_tier(finding, tier)]
        if not self.diverges:
            return "false-alarm" if found else "clean"
        if any(finding.on(self.sites) for finding in found):
            return "caught"
        return "elsewhere" if found else "missed"

    def disagrees(self, tier: Confidence) -> bool:
        return self.verdict(tier) not in ("caught", "clean")

    def record(self) -> dict[str, Any]:
        program = self.program
        return {
            "seed": program.seed,
            "class": program.cls,
            "intent": program.intent,
            "features": list(program.features),
            "world_sizes": list(program.world_sizes),
            "diverges": self.diverges,
            "generator_bug": self.generator_bug,
            "runs": [dataclasses.asdict(run) for run in self.runs],
            "sites": [list(site) for site in self.sites],
            "findings": [dataclasses.asdict(finding) for finding in self.findings],
            "verdicts": {name: self.verdict(tier) for name, tier in TIERS},
            "lines": program.size,
            "files": program.files,
        }


def judge(program: Program, base: Path) -> Judged:
    """Write, run and lint ``program`` in a folder under ``base`` (removed after)."""
    folder = base / f"p{program.seed}"
    write(program, folder)
    try:
        runs = run_program(program, folder)
        findings = lint_program(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return Judged(program, runs, findings)


def judge_many(
    programs: Sequence[Program], progress: Callable[[int], None] | None = None
) -> list[Judged]:
    with tempfile.TemporaryDirectory(prefix="ranklint-oracle-") as base:
        judged = []
        for index, program in enumerate(programs):
            judged.append(judge(program, Path(base)))
            if progress is not None:
                progress(index + 1)
        return judged


def disagreements(judged: Iterable[Judged]) -> dict[tuple[int, str], tuple[str, str]]:
    """(seed, tier) -> (class, verdict) of every disagreement, generator bugs left out."""
    return {
        (item.program.seed, name): (item.program.cls, item.verdict(tier))
        for item in judged
        if not item.generator_bug
        for name, tier in TIERS
        if item.disagrees(tier)
    }


# -- reporting -----------------------------------------------------------------


def table(judged: Sequence[Judged], key: Callable[[Judged], Iterable[str]], title: str) -> str:
    """The Markdown table of recall and false alarms per group (``key`` gives each
    program's groups) and tier. ``elsewhere``: divergent programs not caught whose
    findings are on other lines than the run named."""
    groups: dict[str, list[Judged]] = {}
    for item in judged:
        if not item.generator_bug:
            for group in key(item):
                groups.setdefault(group, []).append(item)
    header = [title, "divergent"]
    for name, _ in TIERS:
        header += [f"caught {name}", f"recall {name}", f"elsewhere {name}"]
    header.append("non-divergent")
    header += [f"false alarms {name}" for name, _ in TIERS]
    rows = [header, ["---"] + ["---:"] * (len(header) - 1)]
    counted = [item for item in judged if not item.generator_bug]
    for group, items in [*sorted(groups.items()), ("**all**", counted)]:
        divergent = [item for item in items if item.diverges]
        uniform = [item for item in items if not item.diverges]
        row = [group, str(len(divergent))]
        for _, tier in TIERS:
            verdicts = [item.verdict(tier) for item in divergent]
            caught = verdicts.count("caught")
            recall = f"{caught / len(divergent):.0%}" if divergent else "-"
            row += [str(caught), recall, str(verdicts.count("elsewhere"))]
        row.append(str(len(uniform)))
        row += [
            str(sum(item.verdict(tier) == "false-alarm" for item in uniform)) for _, tier in TIERS
        ]
        rows.append(row)
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


# Why ranklint disagrees with a run, guessed from the program's features (read the
# program to confirm): the key of each entry of tests/oracle_known_limits.py.
REASONS: dict[str, str] = {
    "name-only-source": "the rank is the `rank` parameter, known by its name only: medium",
    "dict-flow": 'the rank test is read back from a dict (`flags["main"]`)',
    "argument-flow": "the rank test reaches the collective as a helper's argument",
    "tensor-flag": (
        "the branch tests a copy or a read of a tensor flag taken before the collective "
        "that makes it uniform"
    ),
    "while-break": "a `break` under a rank test ends a `while True:` loop with a collective",
    "reduce-op": "both sides issue the same op with different reduce ops",
    "first-mismatch": (
        "the run stops at the first mismatch it meets; ranklint reports another rank's "
        "collective of the same divergence"
    ),
    "false-alarm": "a finding on a program that never diverges",
    # The second family (CLASSES_V2): the class's idiom is the likely reason.
    "unknown-group": (
        "a collective on a group ranklint does not resolve (DTensor `full_tensor`/"
        "`redistribute`, a mesh's group, `new_group` kept in a variable, an attribute or "
        "an argument) under a single-rank test"
    ),
    "per-rank-keys": (
        "a loop over a dict whose keys, or their order, depend on per-rank data "
        "(a random draw, the rank, a rank-sized comprehension)"
    ),
    "state-across-calls": (
        "state set under a rank test in one call (an attribute, a counter, a module "
        "global) and tested before a collective in a later call"
    ),
    "explicit-members": (
        "a rank test against the explicit members of `new_group([a, b])`: one that splits "
        "them is not reported, one that keeps exactly them together may be"
    ),
    "rank-decorator": "a decorator of the program that calls the function on one rank only",
    "decorator-name": (
        "a decorator named like a rank-zero guard (`rank_zero_only`) that calls the "
        "function on every rank"
    ),
    "rank-local-exit": (
        "a `return` or `continue` on rank-local state (a rank-sized record list, a file "
        "per rank, a random draw, a debug flag and the rank)"
    ),
    "draw-source": (
        "the test is of a per-rank random draw (`random.random()`, `torch.rand`): medium"
    ),
    "dead-debug-flag": (
        "a rank test behind a debug flag read from the environment, off in the run "
        '(`debug = os.environ.get("ORACLE_DEBUG", "0") == "1"`)'
    ),
    "unexplained": "no known reason: read the program",
}


_CLASS_REASONS: dict[str, str] = {
    "unknown-group": "unknown-group",
    "dict-order": "per-rank-keys",
    "state-later": "state-across-calls",
    "membership": "explicit-members",
    "decorator": "rank-decorator",
    "local-exit": "rank-local-exit",
}


def likely_reason(item: Judged, tier: Confidence) -> str:
    """The key in :data:`REASONS` of why ``item`` disagrees in ``tier`` (a guess)."""
    verdict = item.verdict(tier)
    features = set(item.program.features)
    cls = item.program.cls
    if verdict == "false-alarm":
        if cls == "decorator":
            return "decorator-name"
        if cls == "local-exit" and "variant=debug-off" in features:
            return "dead-debug-flag"
        if cls == "membership":
            return "explicit-members"
        return "false-alarm"
    if verdict == "elsewhere":
        return "first-mismatch"
    caught_below = item.verdict(Confidence.MEDIUM) == "caught"
    drawn = {"variant=sanity", "variant=random-key"} & features
    if tier is Confidence.HIGH and caught_below and drawn:
        return "draw-source"
    if tier is Confidence.HIGH and "source=param" in features and caught_below:
        return "name-only-source"
    if cls in _CLASS_REASONS:
        return _CLASS_REASONS[cls]
    if {"variant=op", "op=all_reduce", "other=all_reduce_max"} <= features:
        return "reduce-op"
    # The structural reasons first: a dict read back would still leave them.
    rules = (
        ("variant=copy-before", "tensor-flag"),
        ("variant=read-before", "tensor-flag"),
        ("variant=by-argument", "argument-flow"),
        ("variant=while-break", "while-break"),
        ("flow=container", "dict-flow"),
    )
    for feature, reason in rules:
        if feature in features:
            return reason
    return "unexplained"


def known_limits(judged: Iterable[Judged]) -> str:
    """The entries of tests/oracle_known_limits.py for ``judged``'s disagreements."""
    lines = []
    for item in judged:
        for name, tier in TIERS:
            if not item.generator_bug and item.disagrees(tier):
                entry = (item.program.cls, item.verdict(tier), likely_reason(item, tier))
                lines.append(f"    ({item.program.seed}, {name!r}): {entry!r},")
    return "\n".join(lines)


def describe(item: Judged) -> str:
    """A disagreeing program for a reader: source, the runs, the findings, the verdicts."""
    program = item.program
    verdicts = ", ".join(
        f"{name}: {item.verdict(tier)}"
        + (f" ({likely_reason(item, tier)})" if item.disagrees(tier) else "")
        for name, tier in TIERS
    )
    lines = [
        f"### seed {program.seed}: {program.cls} ({verdicts})",
        f"features: {' '.join(program.features)}; intent: {program.intent}",
        "```python",
        program.source().rstrip(),
        "```",
    ]
    for run in item.runs:
        if run.outcome == "divergence":
            first = run.message.splitlines()[0]
            named = ", ".join(f"{name}:{line}" for name, line in run.sites)
            paired = ", ".join(f"{name}:{line}" for name, line in run.paired)
            also = f"; paired before it: {paired}" if paired else ""
            lines.append(f"- runtime, world size {run.world_size}: {first} (lines {named}{also})")
        else:
            lines.append(f"- runtime, world size {run.world_size}: {run.outcome}")
    if not item.findings:
        lines.append("- ranklint: no RNK1 finding at any confidence")
    for finding in item.findings:
        trace = " -> ".join(f"{name}:{line}" for name, line in finding.trace)
        lines.append(
            f"- ranklint: {finding.file}:{finding.line} {finding.code} ({finding.confidence})"
            f" {finding.message}" + (f" [trace {trace}]" if trace else "")
        )
    return "\n".join(lines)


def _by_class(item: Judged) -> list[str]:
    return [item.program.cls]


def _by_source(item: Judged) -> list[str]:
    return [f for f in item.program.features if f.startswith("source=")]


def reasons_table(judged: Sequence[Judged]) -> str:
    """The Markdown table of disagreements per likely reason and tier."""
    counts: dict[str, dict[str, int]] = {}
    for item in judged:
        for name, tier in TIERS:
            if not item.generator_bug and item.disagrees(tier):
                row = counts.setdefault(likely_reason(item, tier), {})
                row[name] = row.get(name, 0) + 1
    rows = [["likely reason", *(name for name, _ in TIERS)], ["---"] + ["---:"] * len(TIERS)]
    for reason, row in sorted(counts.items()):
        rows.append([f"{reason}: {REASONS[reason]}", *(str(row.get(n, 0)) for n, _ in TIERS)])
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300, help="programs to generate")
    parser.add_argument("--seed", type=int, default=1, help="seed of the run")
    parser.add_argument(
        "--grammar",
        choices=sorted(GRAMMARS),
        default="all",
        help="v1: the first seven classes (programs as before); v2: the second family; all: both",
    )
    parser.add_argument("--out", type=Path, help="write every program as JSON lines here")
    parser.add_argument(
        "--show-disagreements", type=int, default=0, metavar="K", help="print the K smallest"
    )
    parser.add_argument(
        "--program", type=int, metavar="SEED", help="judge and show the program of SEED only"
    )
    parser.add_argument(
        "--known-limits",
        action="store_true",
        help="print the disagreements as entries of tests/oracle_known_limits.py",
    )
    args = parser.parse_args(argv)
    if args.program is not None:
        print(describe(judge_many([generate(args.program)])[0]))
        return 0
    started = time.perf_counter()
    judged = judge_many(generate_many(args.count, args.seed, args.grammar))
    elapsed = time.perf_counter() - started
    if args.known_limits:
        print(known_limits(judged))
        return 0
    print(f"## Differential oracle: {args.count} programs, seed {args.seed}, {args.grammar}\n")
    print(table(judged, _by_class, "class") + "\n")
    print(table(judged, _by_source, "rank source") + "\n")
    print(reasons_table(judged) + "\n")
    bugs = [item for item in judged if item.generator_bug]
    print(f"generator bugs (RankFailure / RanksTimeout, not counted): {len(bugs)}")
    print(f"wall time: {elapsed:.1f} s")
    for item in bugs:
        print("\n" + describe(item))
    if args.out is not None:
        with args.out.open("w", encoding="utf-8") as handle:
            for item in judged:
                handle.write(json.dumps(item.record()) + "\n")
    if args.show_disagreements:
        disagreeing = [
            item
            for item in judged
            if not item.generator_bug and any(item.disagrees(tier) for _, tier in TIERS)
        ]
        disagreeing.sort(key=lambda item: (item.program.size, item.program.seed))
        shown = min(args.show_disagreements, len(disagreeing))
        print(f"\n## The {shown} smallest of {len(disagreeing)} disagreeing programs")
        for item in disagreeing[:shown]:
            print("\n" + describe(item))
    return 0


if __name__ == "__main__":
    sys.exit(main())
