"""Views of a container keep its rank-dependence (`metrics.items()` of a dict filled
under a rank test), except a data batch's, whose keys are its schema; methods that
change a container's length under a rank test make it rank-dependent."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import codes_by_line

_LOOP = """
import torch.distributed as dist


def log(t, batch):
    metrics = {{"loss": t}}
{change}
    for name in {loop}:
        dist.all_reduce(t)  # the collective
"""

_RANK_KEYS = '    if dist.get_rank() == 0:\n        metrics["extra"] = t'


def _found(change: str, loop: str) -> list[tuple[int, str]]:
    return codes_by_line(_LOOP.format(change=change, loop=loop), only=("RNK102",))


def _collective_line(change: str) -> int:
    lines = textwrap.dedent(_LOOP.format(change=change, loop="x")).lstrip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if "# the collective" in line)


@pytest.mark.parametrize(
    "loop",
    [
        "metrics",
        "metrics.keys()",
        "metrics.values()",
        "metrics.items()",
        "list(metrics.keys())",
        "metrics.copy()",
        "sorted(metrics.items())",
    ],
)
def test_loop_over_a_view_of_a_dict_with_per_rank_keys_is_reported(loop: str) -> None:
    assert _found(_RANK_KEYS, loop) == [(_collective_line(_RANK_KEYS), "RNK102")]


@pytest.mark.parametrize("loop", ["metrics.keys()", "metrics.items()", "metrics.values()"])
def test_loop_over_a_view_of_a_dict_filled_alike_on_every_rank_is_not_reported(loop: str) -> None:
    assert _found('    metrics["extra"] = t', loop) == []


@pytest.mark.parametrize("loop", ["batch.keys()", "batch.items()", "batch.values()"])
def test_loop_over_a_view_of_a_data_batch_is_not_reported(loop: str) -> None:
    source = """
        import torch.distributed as dist
        import lightning as L


        class Model(L.LightningModule):
            def training_step(self, batch, batch_idx):
                for name in {loop}:
                    dist.all_reduce(batch_idx)
    """
    assert codes_by_line(source.format(loop=loop), only=("RNK102",)) == []


@pytest.mark.parametrize("change", ["metrics.clear()", "metrics.popitem()", 'metrics.pop("loss")'])
def test_dict_shrunk_under_a_rank_test_makes_its_loop_rank_dependent(change: str) -> None:
    guarded = f"    if dist.get_rank() == 0:\n        {change}"
    assert _found(guarded, "metrics") == [(_collective_line(guarded), "RNK102")]


@pytest.mark.parametrize("change", ["names.reverse()", "names.sort()"])
def test_list_reordered_under_a_rank_test_then_sorted_is_not_reported(change: str) -> None:
    source = f"""
        import torch.distributed as dist


        def log(t):
            names = ["loss", "acc"]
            if dist.get_rank() == 0:
                {change}
            for name in sorted(names):
                dist.all_reduce(t)
    """
    assert codes_by_line(source, only=("RNK102",)) == []
