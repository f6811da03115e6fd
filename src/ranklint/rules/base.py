"""The rule framework: a rule is one small class with its metadata and examples.

A rule subclasses :class:`Rule`, sets its metadata class attributes, and
decides its findings in one or both of two hooks:

- per file: ``visit_<Node>`` / ``leave_<Node>`` methods named after libcst node
  classes. The engine calls them during its single traversal of each file; the
  rule reads the shared :class:`~ranklint.analysis.walk.context.FileContext` and
  calls :meth:`Rule.report`;
- per project: :meth:`Rule.check_project`, a class method that reads the
  joined facts of every file (:class:`~ranklint.analysis.project.facts.ProjectFacts`:
  call graph, collective divergences, hot costs, mesh declarations, discarded
  coroutines) and yields :class:`ProjectFinding` objects naming call sites.

Rules read facts and never write them; they never parse, read files or print.

Subclasses register themselves; ``valid`` and ``invalid`` examples are run by
the test suite and rendered into the generated docs. In ``invalid`` examples,
``# expect: RNK101`` marks each line where a finding is expected.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from ranklint.analysis.project.callgraph import Hop
from ranklint.analysis.project.facts import ProjectFacts
from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.visitor import NodeVisitor
from ranklint.findings import Applicability, Evidence, Severity
from ranklint.model.events import Site

_CODE_PREFIX = "RNK"
_REGISTRY: dict[str, type[Rule]] = {}


@dataclass(frozen=True)
class PendingFix:
    """A fix before positions are known: replace ``old`` (a node of the walked
    module) with ``new`` (usually ``old.with_changes(...)``, so that the
    formatting and comments inside it are kept). The engine turns it into the
    smallest text edit, and drops it if ``old`` cannot be found in the text."""

    message: str
    old: cst.CSTNode
    new: cst.CSTNode
    applicability: Applicability = Applicability.SAFE


@dataclass(frozen=True)
class PendingFinding:
    """A finding before positions are known: the engine resolves them only when needed."""

    rule: type[Rule]
    node: cst.CSTNode
    message: str
    # The innermost simple statement holding ``node``; a suppression comment
    # on its first or last line applies to the finding.
    statement: cst.CSTNode | None
    # The module-level statement holding ``node``: positions are computed per such statement.
    top_statement: cst.CSTNode | None
    fix: PendingFix | None = None
    evidence: Evidence | None = None


@dataclass(frozen=True)
class ProjectFinding:
    """A finding of the project phase, before positions are known.

    ``site`` is the call site it is reported at, in ``path``; ``chain`` the call
    chain shown with it (``{chain}`` in the message is replaced by the located
    chain); ``anchor`` the hop the finding is placed at: the first call of the
    chain (a call that reaches a collective) or the last (a sync reached from
    hot code).
    """

    path: str
    site: Site
    message: str
    chain: tuple[Hop, ...]
    anchor: int = 0
    # Why it believes what it claims (see Finding.evidence).
    evidence: Evidence | None = None

    @classmethod
    def at(cls, path: str, site: Site, message: str) -> ProjectFinding:
        """A finding at one call site, with no chain beyond it (so no trace, and no label)."""
        return cls(path, site, message, (Hop(path, site, ""),))  # pragma: no mutate


class Rule(NodeVisitor):
    """Base class of all rules. See the module docstring."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    default_enabled: ClassVar[bool] = True
    # Path the examples are linted under (test rules apply to test files only).
    example_path: ClassVar[str] = "example.py"
    # Codes selected with this rule's when its examples run (RNK002 judges another code).
    example_select: ClassVar[tuple[str, ...]] = ()
    # Decided (wholly or partly) in the project phase, by :meth:`check_project`.
    project: ClassVar[bool] = False
    # Its project-phase findings need every file of the project: where only
    # part of it is seen (the flake8 face), they are dropped, not guessed.
    whole_project: ClassVar[bool] = False
    summary: ClassVar[str]
    # Documentation sections (Markdown). The Example / Use instead sections of
    # the docs are the first invalid / valid example.
    what: ClassVar[str]
    why: ClassVar[str]
    limits: ClassVar[str]
    valid: ClassVar[Sequence[str]]
    invalid: ClassVar[Sequence[str]]
    # How to prove or clear a finding with the runtime companion (Markdown with
    # one runnable ``python`` block; tests/runtime/test_rule_docs.py runs it).
    runtime_check: ClassVar[str] = ""
    # Its fixes: which kinds it offers (safe, unsafe or both; empty: none), and
    # (Markdown) what each changes and why it keeps behaviour, or why it may not.
    # A rule with a fix has ``fixes``: (before, after) examples, checked by the
    # test suite (tests/rules/test_rule_fixes.py) and shown in the docs.
    fix_applicability: ClassVar[frozenset[Applicability]] = frozenset()
    fix_safety: ClassVar[str] = ""
    # (Markdown) Which evidence its findings record and which evidence gives
    # which confidence tier (docs/usage.md, "Evidence and confidence"); empty:
    # every finding is certain of what it reports (high).
    tiers: ClassVar[str] = ""
    fixes: ClassVar[Sequence[tuple[str, str]]] = ()

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx)
        self._sink = sink

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterable[ProjectFinding]:
        """The findings that need every file's facts (rules with ``project = True``)."""
        return ()

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        where: tuple[cst.CSTNode | None, cst.CSTNode | None] | None = None,
        fix: PendingFix | None = None,
        evidence: Evidence | None = None,
    ) -> None:
        """Report ``message`` at ``node`` (the code prefix is added by formatters).

        ``where``: (statement, module-level statement) holding ``node`` when it
        is reported after the walk has left it (from ``leave_Module``); by
        default the ones being walked now. ``fix``: how to fix it, if known.
        ``evidence``: why the finding believes what it claims (collective rules).
        """
        ctx = self.ctx
        statement, top = where if where is not None else (ctx.statement, ctx.top_statement)
        # `top` only picks the cheaper way to the same positions (no test can tell).
        self._sink(
            PendingFinding(
                type(self),
                node,
                message,
                statement,
                top,  # pragma: no mutate
                fix,
                evidence,
            )
        )

    def here(self) -> tuple[cst.CSTNode | None, cst.CSTNode | None]:
        """The (statement, module-level statement) being walked, for a later :meth:`report`."""
        return (self.ctx.statement, self.ctx.top_statement)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:
            _register(cls)
            cls.where = f"rule {cls.code} ({cls.name})"

    @classmethod
    def examples(cls) -> tuple[list[str], list[str]]:
        """The valid and invalid examples, dedented."""
        return (
            [_clean(example) for example in cls.valid],
            [_clean(example) for example in cls.invalid],
        )

    @classmethod
    def fix_examples(cls) -> list[tuple[str, str]]:
        """The (before, after) examples of the rule's fix, dedented."""
        return [(_clean(before), _clean(after)) for before, after in cls.fixes]


def _clean(example: str) -> str:
    # Dedented, an example's first line has no indentation left to strip.
    return textwrap.dedent(example).lstrip("\n")  # pragma: no mutate


_REQUIRED = ("name", "severity", "summary", "what", "why", "limits", "valid", "invalid")


def _register(cls: type[Rule]) -> None:
    code = cls.code
    if not (code.startswith(_CODE_PREFIX) and len(code) == 6 and code[3:].isdigit()):
        raise TypeError(f"{cls.__name__}: rule code {code!r} is not of the form RNK123")
    missing = [attr for attr in _REQUIRED if not hasattr(cls, attr)]
    if missing:
        raise TypeError(f"{cls.__name__} ({code}) lacks metadata: {', '.join(missing)}")
    for other in _REGISTRY.values():
        if other.code == code or other.name == cls.name:
            raise TypeError(
                f"{cls.__name__} ({code}, {cls.name}) clashes with "
                f"{other.__name__} ({other.code}, {other.name})"
            )
    _REGISTRY[code] = cls


def registered_rules() -> list[type[Rule]]:
    """Every registered rule, sorted by code."""
    return [_REGISTRY[code] for code in sorted(_REGISTRY)]
