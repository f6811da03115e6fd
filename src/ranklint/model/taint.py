"""The rank-taint of a value: whether, and how, it depends on the calling rank.

See :mod:`ranklint.analysis.walk.rank`, which computes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Taint:
    """How a value depends on the calling rank."""

    rank: bool = False
    # Raw targets of project calls that decide it if they return a rank value.
    via: frozenset[str] = frozenset()
    # Axes the rank value varies along ("*": all); meaningful when rank or via.
    axes: frozenset[str] = frozenset()
    # `rank in ranks`: a subgroup-membership test.
    membership: bool = False
    # Comes from a rank query (`get_rank()`, `os.environ["RANK"]`), not only
    # from a name that looks like a rank (a parameter `rank` may be any rank).
    strong: bool = False
    # This rank's share of a sequence (`files[rank::world]`, a selection by
    # rank, a list filled under a rank test): its length differs per rank, and
    # so does the length of what a project function builds from it.
    share: bool = False
    # Per-rank data (a step's batch, a random draw): each part of it, and what
    # its methods return (`y.unique()`), is per-rank data too.
    data: bool = False
    # Where the rank-dependence comes from, as (kind, how the code reads)
    # pairs: the evidence of a finding (see SOURCE_KINDS). Provenance, not
    # meaning: two taints that differ only in it are equal.
    sources: frozenset[tuple[str, str]] = field(default=frozenset(), compare=False)

    def __or__(self, other: Taint) -> Taint:
        if other is CLEAN:
            return self
        if self is CLEAN:
            return other
        return Taint(
            self.rank or other.rank,
            self.via | other.via,
            self.axes | other.axes,
            self.membership or other.membership,
            self.strong or other.strong,
            self.share or other.share,
            self.data or other.data,
            self.sources | other.sources,
        )

    @property
    def possible(self) -> bool:
        """Rank-dependent now, or if one of the ``via`` calls returns a rank value."""
        return self.rank or bool(self.via)


CLEAN = Taint()

# The kinds of source a rank-dependence has, surest first (see Taint.sources).
RANK_QUERY = "rank-query"  # dist.get_rank(), mesh.get_local_rank(), accelerator.is_main_process
LAUNCHER_VARIABLE = "launcher-variable"  # os.environ["RANK"], LOCAL_RANK
CONFIGURED_NAME = "configured-name"  # a name the project's `rank-names` declares
RANK_NAME = "rank-name"  # a name matched by `rank-names` only: a parameter `rank`
RANDOM_DRAW = "random-draw"  # random.random(), torch.rand() without a generator
PER_RANK_DATA = "per-rank-data"  # a step's batch, what a rank contributes to a gather
FILE_SYSTEM = "file-system"  # a path the function writes on some ranks
SOURCE_KINDS = (
    RANK_QUERY,
    LAUNCHER_VARIABLE,
    CONFIGURED_NAME,
    RANK_NAME,
    RANDOM_DRAW,
    PER_RANK_DATA,
    FILE_SYSTEM,
)


def with_source(taint: Taint, kind: str, text: str) -> Taint:
    """``taint`` that records one more source: ``kind`` read as ``text``."""
    return Taint(
        taint.rank,
        taint.via,
        taint.axes,
        taint.membership,
        taint.strong,
        taint.share,
        taint.data,
        taint.sources | {(kind, text)},
    )


# `via` entries name one element of a call's returned tuple as `target#index`.
_ELEMENT = "#"


def element_target(raw: str) -> tuple[str, int | None]:
    """(call target, element index or ``None``) of a ``via`` entry."""
    # One separator at most (element_of never indexes an element): not mutated.
    target, separator, index = raw.partition(_ELEMENT)  # pragma: no mutate
    return (target, int(index)) if separator else (target, None)


def element_of(taint: Taint, index: int) -> Taint:
    """The part of ``taint`` that element ``index`` of an unpacked call result keeps."""
    via = frozenset(f"{target}{_ELEMENT}{index}" for target in taint.via if _ELEMENT not in target)
    return Taint(via=via, axes=taint.axes) if via else CLEAN
