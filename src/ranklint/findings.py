"""What a rule reports: :class:`Finding` and its parts."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    """How bad a finding is. The string values are public (json, sarif)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, order=True)
class TraceStep:
    """One location in a finding's trace, e.g. a call on the way to a collective."""

    path: str
    line: int
    col: int
    message: str


class Applicability(str, enum.Enum):
    """Whether a fix keeps behaviour (``safe``) or may change it (``unsafe``:
    applied only with ``--unsafe-fixes``). The string values are public (json)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Edit:
    """Replace the text from (``line``, ``col``) up to (``end_line``, ``end_col``)
    with ``content``. 1-based; columns count characters; the end is exclusive
    (an insertion starts and ends at the same place)."""

    line: int
    col: int
    end_line: int
    end_col: int
    content: str


@dataclass(frozen=True)
class Fix:
    """How to fix one finding: its edits (in order, never overlapping), applied together."""

    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


class Confidence(str, enum.Enum):
    """How sure a finding is, from the weakest link of its evidence. The
    string values are public (json, sarif, the ``confidence`` option)."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        """0 for high, 1 for medium, 2 for low: a lower rank is surer."""
        return _CONFIDENCE_ORDER.index(self)

    def admits(self, other: Confidence) -> bool:
        """A run at this confidence reports findings of ``other`` confidence."""
        return other.rank <= self.rank


_CONFIDENCE_ORDER = (Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW)


@dataclass(frozen=True, order=True)
class Link:
    """One link of a finding's argument: its kind (a short public word such as
    ``rank-query``), what the code shows (``dist.get_rank() == 0``), and how
    much confidence that link alone carries."""

    kind: str
    detail: str
    confidence: Confidence


# The links of a collective finding's argument, in the order they are shown.
EVIDENCE_ASPECTS = ("source", "guard", "group", "reach", "context")


@dataclass(frozen=True)
class Evidence:
    """Why a finding believes what it claims, link by link (see docs/usage.md).

    ``source``: where the rank-dependence comes from; ``guard``: how the code
    uses it to split the ranks; ``group``: the group the collective runs on and
    what is known of its members; ``reach``: how the collective is reached;
    ``context``: where the code runs. A link that does not apply is None.
    """

    source: Link | None = None
    guard: Link | None = None
    group: Link | None = None
    reach: Link | None = None
    context: Link | None = None

    def links(self) -> list[tuple[str, Link]]:
        """(aspect, link) of each link present, in :data:`EVIDENCE_ASPECTS` order."""
        present = ((aspect, getattr(self, aspect)) for aspect in EVIDENCE_ASPECTS)
        return [(aspect, link) for aspect, link in present if link is not None]

    @property
    def confidence(self) -> Confidence:
        """The confidence of the weakest link (high when there is none)."""
        ranks = [link.confidence.rank for _, link in self.links()]
        return _CONFIDENCE_ORDER[max(ranks, default=0)]


@dataclass(frozen=True)
class Finding:
    """One problem in one file. Lines and columns are 1-based; ``end_col`` is exclusive."""

    code: str
    name: str
    severity: Severity
    message: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    trace: tuple[TraceStep, ...] = field(default=())
    fix: Fix | None = None
    # Why it believes what it claims (collective findings); None: the finding
    # is certain of what it reports (a wildcard import is one).
    evidence: Evidence | None = None

    @property
    def confidence(self) -> Confidence:
        """The confidence tier: its evidence's weakest link, high without evidence."""
        return self.evidence.confidence if self.evidence is not None else Confidence.HIGH

    def fixable(self, *, unsafe: bool) -> bool:
        """It has a fix that a run applies (an unsafe one only with ``unsafe``)."""
        fix = self.fix
        return fix is not None and (unsafe or fix.applicability is Applicability.SAFE)

    def sort_key(self) -> tuple[str, int, int, str, str]:
        """Deterministic output order: path, line, column, code (then message)."""
        return (self.path, self.line, self.col, self.code, self.message)


@dataclass(frozen=True)
class InternalError:
    """A crash inside ranklint (a rule or the engine) on one file; never a user's fault."""

    path: str
    where: str
    message: str
    # The traceback, shown with --verbose.
    details: str = ""

    def describe(self) -> str:
        return f"internal error in {self.where} while checking {self.path}: {self.message}"
