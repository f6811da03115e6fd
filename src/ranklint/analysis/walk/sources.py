"""What a rank source reads like in a finding's evidence (see model.taint's source kinds)."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.axes import GLOBAL_AXIS
from ranklint.analysis.walk.catalog import RANK_ENVIRONMENT
from ranklint.analysis.walk.literals import string_value
from ranklint.model.taint import CLEAN, LAUNCHER_VARIABLE, Taint, with_source
from ranklint.syntax import source_text

# Attributes of the frameworks' own objects that hold the caller's rank (not
# names that merely look like one: `accelerator.is_main_process`).
FRAMEWORK_RANK_ATTRIBUTES = frozenset(
    {
        "is_main_process",
        "is_local_main_process",
        "is_global_zero",
        "is_world_process_zero",
        "is_local_process_zero",
        "process_index",
        "local_process_index",
        "global_rank",
        "local_rank",
    }
)
# Longest code text a source records.
_SOURCE_TEXT = 60


def source_excerpt(node: cst.CSTNode) -> str:
    """How ``node`` reads, shortened for a finding's evidence."""
    text = " ".join(source_text(node).split())
    return text if len(text) <= _SOURCE_TEXT else text[: _SOURCE_TEXT - 3] + "..."


def environment_taint(key: cst.BaseExpression | None, read: cst.BaseExpression) -> Taint:
    """``os.environ[key]`` (or ``.get(key)``) read at ``read``: the rank, along every
    axis, where ``key`` names one of the launcher's rank variables; else clean."""
    if key is not None and string_value(key) in RANK_ENVIRONMENT:
        strong = Taint(rank=True, axes=frozenset({GLOBAL_AXIS}), strong=True)
        return with_source(strong, LAUNCHER_VARIABLE, source_excerpt(read))
    return CLEAN
