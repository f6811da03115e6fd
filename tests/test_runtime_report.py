"""The runtime companion's pure parts: describing, comparing and rendering collectives."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ranklint.runtime import stacks
from ranklint.runtime.report import (
    Collective,
    Divergence,
    DivergenceError,
    RanksTimeout,
    RankView,
    Site,
    compare_position,
    first_divergence,
    render,
)

GROUP = (0, 1)

pytestmark = pytest.mark.timeout(60)


def _c(op: str = "all_reduce", seq: int = 0, **fields: object) -> Collective:
    fields.setdefault("shapes", ((4,),))
    fields.setdefault("dtypes", ("float32",))
    fields.setdefault("site", Site(os.path.abspath("train.py"), 10 + seq, "step"))
    return Collective(op=op, group=GROUP, group_name="0", seq=seq, **fields)  # type: ignore[arg-type]


def test_describe_one_tensor_with_root_and_op_reads_like_a_call() -> None:
    text = _c("broadcast", root=1, reduce_op=None).describe()

    assert text == "broadcast(group=[0, 1], shape=(4,), src=1) at train.py:10 in step()"


def test_describe_several_tensors_dtypes_api_and_destination() -> None:
    collective = _c("gather", shapes=((2, 3), (1,)), root=0, api="gather_object", site=None)

    assert collective.describe(dtypes=True) == (
        "gather(group=[0, 1], shapes=[(2, 3), (1,)], dtype=float32, dst=0) via gather_object()"
    )


def test_differences_lists_every_field_that_disagrees() -> None:
    first = _c("all_reduce", reduce_op="SUM")
    second = _c("broadcast", shapes=((5,),), root=0)

    assert first.differences(second) == ["op", "shape", "root", "reduce op"]
    assert first.differences(_c("all_reduce", reduce_op="SUM", site=None)) == []


def test_compare_position_disagreement_is_reported_before_a_missing_member() -> None:
    at = {0: _c("all_reduce"), 1: _c("broadcast")}

    divergence = compare_position((0, 1, 2), "0", 0, at)

    assert divergence is not None
    assert divergence.reason == "the ranks disagree on the op"


def test_compare_position_missing_members_are_named() -> None:
    divergence = compare_position((0, 1, 2), "0", 3, {0: _c()})

    assert divergence is not None
    assert divergence.reason == "ranks 1, 2 never issued it"
    assert compare_position((0, 1), "0", 0, {0: _c(), 1: _c()}) is None
    assert compare_position((0, 1), "0", 0, {}) is None


def test_first_divergence_picks_the_earliest_and_sees_shorter_logs() -> None:
    views = [
        RankView(0, "finished", (_c(seq=0), _c(seq=1), _c(seq=2))),
        RankView(1, "finished", (_c(seq=0), _c("broadcast", seq=1, root=0))),
    ]

    divergence = first_divergence(views)

    assert divergence is not None
    assert (divergence.position, divergence.reason) == (1, "the ranks disagree on the op and root")


def test_first_divergence_equal_logs_is_none() -> None:
    log = (_c(seq=0), _c(seq=1))

    assert first_divergence([RankView(0, "finished", log), RankView(1, "finished", log)]) is None


def test_render_marks_the_mismatch_elides_early_entries_and_quotes_caller_notes() -> None:
    caller = Site(os.path.abspath("train.py"), 99, "main")
    log0 = (*tuple(_c(seq=n) for n in range(7)), _c(seq=7, callers=(caller,)))
    log1 = tuple(_c(seq=n) for n in range(7))
    views = [RankView(0, "waiting", log0, waiting_in=log0[-1]), RankView(1, "finished", log1)]
    divergence = compare_position(GROUP, "0", 7, {0: log0[-1]})
    assert divergence is not None

    text = render(divergence, views, {(caller.file, 99): "RNK102 x: guarded"})

    assert "ranks diverged at collective #7 on group [0, 1]: rank 1 never issued it" in text
    assert "      ranklint: at train.py:99 in main(): RNK102 x: guarded" in text
    assert "        ... 3 earlier" in text
    assert "    >> #7 all_reduce(group=[0, 1], shape=(4,)) at train.py:17 in step()" in text
    assert "    >> #7 (none) returned from the function (no collective)" in text


def test_divergence_error_annotate_adds_notes_and_keeps_the_divergence() -> None:
    divergence = Divergence(GROUP, "0", 0, "reason", {0: _c()})
    error = DivergenceError(divergence, [RankView(0, "waiting", (_c(),), waiting_in=_c())])

    annotated = error.annotate({(os.path.abspath("train.py"), 10): "RNK102 note"})

    assert annotated.divergence is divergence
    assert "ranklint: RNK102 note" in str(annotated)
    assert "ranklint:" not in str(error)


@pytest.mark.parametrize(
    ("view", "status"),
    [
        (RankView(0, "failed", (), error="ValueError: x"), "raised ValueError: x"),
        (RankView(0, "running", ()), "still running (no collective)"),
        (
            RankView(0, "running", (), stack=(Site("/a.py", 1, "f"), Site("/a.py", 2, "g"))),
            "still running at /a.py:2 in g() (no collective)",
        ),
        (
            RankView(0, "waiting", (), waiting_in=_c(site=None)),
            "waiting in all_reduce(group=[0, 1], shape=(4,))",
        ),
    ],
)
def test_rank_view_status_says_where_the_rank_is(view: RankView, status: str) -> None:
    assert view.status() == status


def test_ranks_timeout_lists_each_rank_and_its_callers() -> None:
    stack = (Site("/a.py", 1, "main"), Site("/a.py", 5, "loop"))

    text = str(RanksTimeout(2.5, [RankView(1, "running", (), stack=stack)]))

    assert text.splitlines() == [
        "the ranks did not finish within 2.5 s; they were abandoned:",
        "  rank 1: still running at /a.py:5 in loop() (no collective)",
        "      /a.py:1 in main()",
    ]


def test_locate_skips_library_frames_and_wrappers_to_find_site_and_api() -> None:
    roots = ("/lib/",)
    frames = [
        ("/lib/c10d.py", 1, "all_reduce"),
        ("/lib/logger.py", 2, "wrapper"),
        ("/lib/tensor.py", 3, "full_tensor"),
        ("/lib/tensor.py", 4, "_private"),
        ("/me/train.py", 41, "step"),
        ("/me/train.py", 50, "main"),
        ("<frozen runpy>", 1, "run"),
    ]

    site, api = stacks.locate(frames, roots)

    assert (site, api) == (Site("/me/train.py", 41, "step"), "full_tensor")
    assert stacks.callers(frames, roots) == (Site("/me/train.py", 50, "main"),)
    assert stacks.user_stack(frames, roots) == (
        Site("/me/train.py", 50, "main"),
        Site("/me/train.py", 41, "step"),
    )
    assert stacks.locate(frames[:4], roots) == (None, None)


def test_linter_never_imports_the_runtime_companion_or_torch() -> None:
    code = (
        "import sys, ranklint, ranklint.api, ranklint.faces.cli;"
        "ranklint.api.lint_source('import torch.distributed as dist\\ndist.barrier()\\n');"
        "print(sorted(m for m in sys.modules if m.startswith(('torch', 'ranklint.runtime'))))"
    )

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert out.stdout.strip() == "[]"
