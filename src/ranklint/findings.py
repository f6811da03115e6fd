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
