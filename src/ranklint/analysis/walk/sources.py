"""What a rank source reads like in a finding's evidence (see model.taint's source kinds)."""

from __future__ import annotations

import libcst as cst

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
