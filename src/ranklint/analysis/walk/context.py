"""The traversal context that every rule reads: where in the file we are."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ranklint.analysis.walk.bodies import TextGates
from ranklint.analysis.walk.classify import CallClassifier
from ranklint.analysis.walk.names import NameTable
from ranklint.analysis.walk.rank import RankTaint
from ranklint.analysis.walk.settings import AnalysisSettings
from ranklint.analysis.walk.summary import FactsBuilder
from ranklint.analysis.walk.tensors import TensorTypes


@dataclass(frozen=True)
class Condition:
    """An enclosing ``if``/``while`` test and which arm the code is in."""

    test: cst.BaseExpression
    holds: bool  # True in the body, False in the else/elif arm


@dataclass
class FunctionFrame:
    node: cst.FunctionDef | cst.Lambda
    # Name of the enclosing class when the function is a method.
    class_name: str | None


@dataclass
class FileContext:
    """Shared facts about the current position in the traversal of one file.

    The walker keeps it up to date; rules only read it (the fact recorders of
    ``analysis`` write ``facts``).
    """

    path: str
    module: cst.Module
    # Option values, compiled (`Config.analysis_settings()`).
    settings: AnalysisSettings
    names: NameTable = field(default_factory=NameTable)
    # True while the code being visited runs when the module is imported:
    # module-level statements, class bodies, default values, decorators.
    import_time: bool = True
    # False inside ``if TYPE_CHECKING:``: the code never runs.
    reachable: bool = True
    functions: list[FunctionFrame] = field(default_factory=list)
    classes: list[cst.ClassDef] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)
    loop_depth: int = 0
    # Innermost simple statement line being visited (None in compound headers).
    statement: cst.CSTNode | None = None
    # The module-level statement holding the code being visited.
    top_statement: cst.CSTNode | None = None
    # Its index in the module body, and the number of calls entered in it so far.
    top_index: int = 0
    call_ordinal: int = 0
    # The file matches `test-patterns` / `script-patterns`.
    is_test: bool = False
    is_script: bool = False
    # The file's text (None: unknown, every text-gated scan runs).
    source: str | None = None
    # Rank-taint of expressions at the current point (see analysis.walk.rank).
    rank: RankTaint = field(init=False)
    # Which catalog row each call is (see analysis.walk.classify).
    calls: CallClassifier = field(init=False)
    # The per-function event summaries being built (see analysis.walk.summary).
    facts: FactsBuilder = field(init=False)
    # Which expressions are known to be tensors (see analysis.walk.tensors).
    tensors: TensorTypes = field(init=False)
    # The text names a data-parallel wrapper: its functions may return one
    # (NameTable.note_wrapper_maker); read once, not at every function.
    wraps_models: bool = field(init=False)

    def __post_init__(self) -> None:
        self.rank = RankTaint(
            self.names,
            self.settings.rank_names,
            self.settings.__dict__.get("declared_rank_names"),
            gates=TextGates.of(self.source),
        )
        self.calls = CallClassifier(
            self.names,
            self.settings.extra_collectives.functions,
            self.settings.extra_collectives.methods,
            scan=self.rank.scan,
            source=self.source or "",
            module=self.module,
        )
        self.facts = FactsBuilder(self.module, self.path, self.rank, self.settings, self.calls)
        self.tensors = TensorTypes(self.names)
        self.wraps_models = "DataParallel" in self.calls.source

    @property
    def place(self) -> tuple[int, cst.CSTNode | None, cst.CSTNode | None]:
        """(module-level statement index, statement, module-level statement) being walked."""
        return (self.top_index, self.statement, self.top_statement)

    @property
    def function(self) -> FunctionFrame | None:
        return self.functions[-1] if self.functions else None

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """Qualified name of a name/attribute expression, through imports."""
        return self.names.resolve(node)
