"""Per-rank max/min response lengths are gathered and averaged over DP ranks.

Report: https://github.com/radixark/miles/pull/1968
Class: F reduction semantics

Static reach: partly; log_multi_turn_data() stores each rank's `.max()` and `.min()`
under `*_max` / `*_min` keys and hands the dict to gather_log_data(), which gathers the
dicts and reduces every scalar as `sum(values) / dp_size` on the source rank. The
averaged maximum under-reports the global maximum (and the minimum over-reports). Seeing
it needs the key names to be tied to the reduction one call down.
"""

import logging
from argparse import Namespace

import numpy as np
import torch

from miles.utils.ft_utils.process_group_utils import MultiPGUtil
from miles.utils.metric_utils import compute_rollout_step
from miles.utils.tracking_utils import tracking
from miles.utils.types import RolloutBatch

from .parallel import get_parallel_state

logger = logging.getLogger(__name__)


def reduce_gathered_log_dict(gathered: list[dict], dp_size: int) -> dict[str, float]:
    """Per-key reduction: ``(sum, count)`` tuples as ``Σsum / Σcount``, scalars as mean."""
    reduced: dict[str, float] = {}
    for key in gathered[0]:
        values = [d[key] for d in gathered]
        first = values[0]
        if isinstance(first, tuple) and len(first) == 2:
            total_sum = sum(v[0] for v in values)
            total_count = sum(v[1] for v in values)
            reduced[key] = total_sum / total_count if total_count else 0.0
        else:
            reduced[key] = sum(values) / dp_size
    return reduced


def gather_log_data(metric_name: str, args: Namespace, rollout_id: int, log_dict: dict):
    parallel_state = get_parallel_state()
    pg = parallel_state.effective_dp_cp
    gathered_log_dict = MultiPGUtil.gather_object(
        obj=log_dict,
        groups_inner_to_outer=pg.gloo_groups_inner_to_outer,
    )
    if pg.rank == 0:
        reduced = reduce_gathered_log_dict(gathered_log_dict, pg.size)
        reduced_log_dict = {f"{metric_name}/{key}": value for key, value in reduced.items()}
        reduced_log_dict["rollout/step"] = compute_rollout_step(args, rollout_id)
        tracking.log(args, reduced_log_dict, step_key="rollout/step")
        return reduced_log_dict
    return None


def log_multi_turn_data(rollout_id: int, args: Namespace, rollout_data: RolloutBatch) -> None:
    parallel_state = get_parallel_state()
    if parallel_state.tp.rank == 0 and parallel_state.is_pp_last_stage:
        log_dict = {}
        for key, val in rollout_data.items():
            if key == "loss_masks" and val:
                device = val[0].device
                raw_response_lengths = torch.tensor([v.shape[0] for v in val], dtype=torch.float32, device=device)
                log_dict["raw_response_length/response_length_mean"] = raw_response_lengths.mean().item()
                log_dict["raw_response_length/response_length_max"] = raw_response_lengths.max().item()
                log_dict["raw_response_length/response_length_min"] = raw_response_lengths.min().item()
            if key == "round_number":
                round_number_array = np.array(val)
                log_dict["multi_turn_metric/round_number_mean"] = np.mean(round_number_array)
                log_dict["multi_turn_metric/round_number_max"] = np.max(round_number_array)
                log_dict["multi_turn_metric/round_number_min"] = np.min(round_number_array)
        gather_log_data("multi_turn", args, rollout_id, log_dict)  # expect: RNK112
