"""The runtime companion's pure parts: describing, comparing and rendering collectives."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

import pytest

from ranklint.runtime import stacks
from ranklint.runtime.report import (
    Collective,
    Divergence,
    DivergenceError,
    RankFailure,
    RanksTimeout,
    RankView,
    Site,
    compare_position,
    first_divergence,
    first_site_difference,
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
        "      called from /a.py:1 in main()",
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


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"group": (0, 2)}, "group"),
        ({"dtypes": ("int64",)}, "dtype"),
        ({"extra": (("ranks", "[0]"),)}, "arguments"),
    ],
)
def test_differences_names_each_field_alone(change: dict, field: str) -> None:
    other = Collective(**{**_c().__dict__, **change})

    assert _c().differences(other) == [field]


def test_describe_reduce_names_its_root_dst_and_joins_dtypes() -> None:
    collective = _c("reduce", dtypes=("float32", "int64"), root=1, reduce_op="MAX", site=None)

    assert collective.describe(dtypes=True) == (
        "reduce(group=[0, 1], shape=(4,), dtype=float32,int64, dst=1, op=MAX)"
    )


def test_status_of_a_running_rank_with_a_stale_collective_is_running() -> None:
    view = RankView(0, "running", (), waiting_in=_c(), stack=())

    assert view.status() == "still running (no collective)"


def test_status_of_a_ready_rank_says_another_rank_holds_the_turn() -> None:
    status = RankView(0, "ready", ()).status()

    assert status == "ready to run, but another rank never gave up its turn (threads mode)"


def test_status_of_a_running_rank_names_its_innermost_frame() -> None:
    stack = (Site("/a.py", 1, "main"), Site("/a.py", 2, "train"), Site("/a.py", 3, "step"))

    assert RankView(0, "running", (), stack=stack).status() == (
        "still running at /a.py:3 in step() (no collective)"
    )


def test_rank_failure_keeps_rank_error_and_trimmed_traceback() -> None:
    error = ValueError("bad batch")

    failure = RankFailure(3, error, "Traceback ...\n  line 9\n\n")

    assert (failure.rank, failure.error, failure.traceback_text) == (
        3,
        error,
        "Traceback ...\n  line 9\n\n",
    )
    assert str(failure) == "rank 3 raised ValueError: bad batch\nTraceback ...\n  line 9"


def test_ranks_timeout_shows_every_outer_frame_outermost_last() -> None:
    stack = (Site("/a.py", 1, "main"), Site("/a.py", 2, "train"), Site("/a.py", 3, "step"))

    lines = str(RanksTimeout(1, [RankView(0, "running", (), stack=stack)])).splitlines()

    assert lines[2:] == [
        "      called from /a.py:2 in train()",
        "      called from /a.py:1 in main()",
    ]


def test_render_full_text_of_a_three_rank_divergence() -> None:
    here = os.path.abspath("train.py")
    caller = Site(here, 80, "main")
    log0 = (
        *tuple(_c(seq=n) for n in range(6)),
        _c("all_reduce", seq=6, dtypes=("int64",), reduce_op="SUM", callers=(caller,)),
    )
    log1 = (*tuple(_c(seq=n) for n in range(6)), _c("all_reduce", seq=6, reduce_op="SUM"))
    views = [
        RankView(0, "waiting", log0, waiting_in=log0[-1]),
        RankView(1, "waiting", log1, waiting_in=log1[-1]),
    ]
    divergence = compare_position((0, 1, 2), "0", 6, {0: log0[-1], 1: log1[-1]})
    assert divergence is not None

    text = render(divergence, views, {(here, 80): "RNK102 guarded"})

    assert text.splitlines() == [
        "ranks diverged at collective #6 on group [0, 1, 2]: the ranks disagree on the dtype",
        "  rank 0: all_reduce(group=[0, 1], shape=(4,), dtype=int64, op=SUM)"
        " at train.py:16 in step()",
        "      called from train.py:80 in main()",
        "      ranklint: at train.py:80 in main(): RNK102 guarded",
        "  rank 1: all_reduce(group=[0, 1], shape=(4,), dtype=float32, op=SUM)"
        " at train.py:16 in step()",
        "  rank 2: (no record)",
        "sequences on group [0, 1, 2] up to the mismatch (>> marks it):",
        "  rank 0:",
        "        ... 2 earlier",
        "       #2 all_reduce(group=[0, 1], shape=(4,), dtype=float32) at train.py:12 in step()",
        "       #3 all_reduce(group=[0, 1], shape=(4,), dtype=float32) at train.py:13 in step()",
        "       #4 all_reduce(group=[0, 1], shape=(4,), dtype=float32) at train.py:14 in step()",
        "       #5 all_reduce(group=[0, 1], shape=(4,), dtype=float32) at train.py:15 in step()",
        "    >> #6 all_reduce(group=[0, 1], shape=(4,), dtype=int64, op=SUM)"
        " at train.py:16 in step()",
        "  rank 1:",
        "        ... 2 earlier",
        "       #2 all_reduce(group=[0, 1], shape=(4,), dtype=float32) at train.py:12 in step()",
        "       #3 all_reduce(group=[0, 1], shape=(4,), dtype=float32) at train.py:13 in step()",
        "       #4 all_reduce(group=[0, 1], shape=(4,), dtype=float32) at train.py:14 in step()",
        "       #5 all_reduce(group=[0, 1], shape=(4,), dtype=float32) at train.py:15 in step()",
        "    >> #6 all_reduce(group=[0, 1], shape=(4,), dtype=float32, op=SUM)"
        " at train.py:16 in step()",
        "  rank 2:",
        "    >> #6 (none)",
    ]


def test_render_member_with_a_view_but_no_collective_counts_what_it_issued() -> None:
    views = [RankView(0, "finished", (_c(seq=0),)), RankView(1, "waiting", (_c(seq=0), _c(seq=1)))]
    divergence = compare_position(GROUP, "0", 1, {1: views[1].log[1]})
    assert divergence is not None

    lines = render(divergence, views).splitlines()

    assert lines[1] == (
        "  rank 0: no collective #1 on this group (issued 1); "
        "returned from the function (no collective)"
    )
    assert lines[5] == "       #0 all_reduce(group=[0, 1], shape=(4,)) at train.py:10 in step()"


def test_note_without_a_site_looks_at_the_callers() -> None:
    here = os.path.abspath("train.py")
    collective = _c(site=None, callers=(Site(here, 5, "main"),))
    divergence = Divergence(GROUP, "0", 0, "reason", {0: collective})

    text = render(divergence, [RankView(0, "waiting", (collective,))], {(here, 5): "RNK102 x"})

    assert "      ranklint: at train.py:5 in main(): RNK102 x" in text


def test_compare_position_keeps_every_field_of_the_divergence() -> None:
    at = {0: _c(), 1: _c(shapes=((2,),))}

    assert compare_position(GROUP, "g", 4, at) == Divergence(
        GROUP, "g", 4, "the ranks disagree on the shape", at
    )
    assert compare_position(GROUP, "g", 4, {0: at[0]}) == Divergence(
        GROUP, "g", 4, "rank 1 never issued it", {0: at[0]}
    )


def test_first_divergence_shorter_log_ends_early_and_missing_view_is_empty() -> None:
    views = [RankView(0, "finished", (_c(seq=0), _c(seq=1))), RankView(1, "finished", (_c(seq=0),))]

    divergence = first_divergence(views)
    lone = first_divergence([RankView(0, "finished", (_c(seq=0),))])

    assert divergence is not None
    assert (divergence.group_name, divergence.position) == ("0", 1)
    assert divergence.reason == "rank 1 never issued it"
    assert lone is not None
    assert lone.reason == "rank 1 never issued it"


def test_first_divergence_of_two_groups_is_the_one_issued_first() -> None:
    def on(name: str, seq: int, op: str = "all_reduce") -> Collective:
        return Collective(op=op, group=GROUP, group_name=name, seq=seq)

    log0 = (on("a", 0), on("a", 1), on("b", 0, "barrier"), on("a", 2, "broadcast"))
    log1 = (on("a", 0), on("a", 1), on("b", 0), on("a", 2))
    views = [RankView(0, "finished", log0), RankView(1, "finished", log1)]

    divergence = first_divergence(views)

    assert divergence is not None
    assert (divergence.group_name, divergence.position) == ("b", 0)


def test_library_roots_hold_the_module_folders_and_the_standard_library() -> None:
    import sysconfig

    roots = stacks.library_roots("/opt/torch/__init__.py", "/opt/pkg/sub/mod.py")

    expected = {"/opt/torch/", "/opt/pkg/sub/"}
    expected |= {os.path.abspath(sysconfig.get_paths()[key]) + os.sep for key in ("stdlib",)}
    assert set(roots) >= expected
    assert list(roots) == sorted(roots)
    assert stacks.is_library(os.__file__, roots)


def test_frames_of_walks_from_this_frame_outwards() -> None:
    frame = sys._getframe()

    frames = stacks.frames_of(frame)

    assert (frames[0][0], frames[0][2]) == (
        __file__,
        "test_frames_of_walks_from_this_frame_outwards",
    )
    assert len(frames) > 2
    assert stacks.frames_of(None) == []


def test_locate_without_a_public_library_frame_has_no_api_and_callers_honour_the_limit() -> None:
    frames = [("/lib/x.py", 1, "_inner"), *[(f"/me/{n}.py", n, f"f{n}") for n in range(5)]]

    site, api = stacks.locate(frames, ("/lib/",))

    assert site == Site("/me/0.py", 0, "f0")
    assert api is None
    assert stacks.callers(frames, ("/lib/",), limit=2) == (
        Site("/me/1.py", 1, "f1"),
        Site("/me/2.py", 2, "f2"),
    )


def test_callers_default_to_eight_frames() -> None:
    frames = [(f"/me/{n}.py", n, f"f{n}") for n in range(12)]

    assert [site.line for site in stacks.callers(frames, ())] == list(range(1, 9))


def test_render_stops_each_sequence_at_the_mismatch() -> None:
    log0 = (_c(seq=0), _c("broadcast", seq=1, root=0), _c(seq=2))
    log1 = (_c(seq=0), _c(seq=1), _c(seq=2))
    views = [RankView(0, "finished", log0), RankView(1, "finished", log1)]
    divergence = first_divergence(views)
    assert divergence is not None

    text = render(divergence, views)

    assert "#2" not in text
    assert text.count(">> #1") == 2


def _chain(*lines: int) -> tuple[Site, ...]:
    return tuple(Site(os.path.abspath("train.py"), line, f"f{line}") for line in lines)


def test_render_member_chain_shows_four_callers_innermost_first_and_counts_the_rest() -> None:
    collective = _c(callers=_chain(20, 30, 40, 50, 60, 70))
    divergence = compare_position(GROUP, "0", 0, {0: collective})
    assert divergence is not None

    lines = render(divergence, [RankView(0, "waiting", (collective,))]).splitlines()

    assert lines[1:7] == [
        "  rank 0: all_reduce(group=[0, 1], shape=(4,)) at train.py:10 in step()",
        "      called from train.py:20 in f20()",
        "      called from train.py:30 in f30()",
        "      called from train.py:40 in f40()",
        "      called from train.py:50 in f50()",
        "      ... 2 more",
    ]


def test_render_member_without_callers_has_no_chain_and_a_waiting_member_shows_its_own() -> None:
    elsewhere = Collective("barrier", GROUP, "other", 0, site=_chain(5)[0], callers=_chain(9))
    views = [RankView(0, "waiting", (_c(),)), RankView(1, "waiting", (elsewhere,), elsewhere)]
    divergence = compare_position(GROUP, "0", 0, {0: views[0].log[0]})
    assert divergence is not None

    lines = render(divergence, views).splitlines()

    assert lines[1] == "  rank 0: all_reduce(group=[0, 1], shape=(4,)) at train.py:10 in step()"
    assert lines[2].startswith("  rank 1: no collective #0 on this group (issued 0); waiting in")
    assert lines[3] == "      called from train.py:9 in f9()"
    assert lines[4].startswith("sequences on group")


def _logs(*chains: tuple[tuple[int, ...], ...]) -> dict[int, list[Collective]]:
    """Rank -> its log, one collective per chain (the site's line, then its callers')."""
    return {
        rank: [_c(seq=n, site=_chain(c[0])[0], callers=_chain(*c[1:])) for n, c in enumerate(cs)]
        for rank, cs in enumerate(chains)
    }


def test_first_site_difference_is_the_earliest_position_whose_sites_differ() -> None:
    logs = _logs(((1,), (2,), (3,), (4,)), ((1,), (3,), (4,), (5,)))

    assert first_site_difference(logs, 3) == 1
    assert first_site_difference(logs, 1) is None


def test_first_site_difference_counts_a_difference_only_in_the_callers() -> None:
    logs = _logs(((7, 20), (7, 21)), ((7, 20), (7, 22)))

    assert first_site_difference(logs, 2) == 1


def test_first_site_difference_same_sites_or_unknown_sites_are_none() -> None:
    same = _logs(((1, 2), (3,)), ((1, 2), (3,)))
    unknown = {0: [_c(site=None)], 1: [_c()]}

    assert first_site_difference(same, 2) is None
    assert first_site_difference(unknown, 1) is None
    assert first_site_difference({0: [], 1: [_c()]}, 1) is None


def test_first_divergence_records_where_the_call_sites_first_differ() -> None:
    logs = _logs(((1,), (2,), (3,)), ((1,), (3,), (3,)))
    log1 = (*logs[1][:2], _c("broadcast", seq=2, root=0, site=_chain(3)[0]))
    views = [RankView(0, "finished", tuple(logs[0])), RankView(1, "finished", log1)]

    divergence = first_divergence(views)

    assert divergence is not None
    assert (divergence.position, divergence.first_site_difference) == (2, 1)


def test_render_names_where_the_call_sites_first_differ_with_the_differing_caller() -> None:
    logs = _logs(((7, 20), (7, 21), (8,)), ((7, 20), (7, 22), (9,)))
    views = [RankView(rank, "waiting", tuple(log)) for rank, log in logs.items()]
    at = {0: logs[0][2], 1: replace(logs[1][2], op="broadcast", root=0)}
    divergence = replace(compare_position(GROUP, "0", 2, at), first_site_difference=1)

    lines = render(divergence, views).splitlines()

    assert lines[3] == (
        "the call sites first differ at collective #1: rank 0 at train.py:21, rank 1 at "
        "train.py:22 (the ranks may have been out of step from there)"
    )
    assert lines[4].startswith("sequences on group")


def test_render_groups_ranks_that_share_a_call_site() -> None:
    logs = _logs(((1,), (2,)), ((5,), (3,)), ((1,), (2,)))
    views = [RankView(rank, "waiting", tuple(log)) for rank, log in logs.items()]
    divergence = Divergence((0, 1, 2), "0", 1, "reason", {0: logs[0][1]}, first_site_difference=0)

    text = render(divergence, views)

    assert "differ at collective #0: ranks 0, 2 at train.py:1, rank 1 at train.py:5 (" in text


def test_status_of_a_pending_rank_says_the_run_stopped_before_its_turn() -> None:
    status = RankView(2, "pending", ()).status()

    assert status == (
        "had not reached this point when the run stopped (threads mode runs one rank at a "
        "time, and stopped at the first difference)"
    )


def test_render_a_site_difference_that_the_logs_do_not_show_adds_no_line() -> None:
    logs = _logs(((1,), (2,)), ((1,), (2,)))
    views = [RankView(rank, "waiting", tuple(log)) for rank, log in logs.items()]
    same = Divergence(GROUP, "0", 1, "reason", {0: logs[0][1]}, first_site_difference=0)
    beyond = replace(same, first_site_difference=5)

    assert "call sites first differ" not in render(same, views)
    assert "call sites first differ" not in render(beyond, views)
