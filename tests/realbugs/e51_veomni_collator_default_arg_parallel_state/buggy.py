"""A default argument builds a collator that reads the parallel state when the module is imported.

Report: https://github.com/ByteDance-Seed/VeOmni/pull/517
Class: E import-time distributed state

Static reach: visible in this file; `DataCollatorWithPositionIDs()` is a default value,
evaluated when the class body runs at import, and its __post_init__ reads
get_parallel_state(), whose sizes must match the world size. Importing the module before
init_process_group raises "The product of parallel sizes should be equal to the world
size"; otherwise the collator keeps the default single-process state.
"""

from dataclasses import dataclass
from typing import Callable, Optional

from torch.utils.data import IterableDataset

from veomni.distributed.parallel_state import get_parallel_state


@dataclass
class DataCollatorWithPositionIDs:
    mask_boundary_labels: bool = True

    def __post_init__(self):
        self.sp_enabled = get_parallel_state().sp_enabled


class DynamicBatchingSizeDataset(IterableDataset):
    def __init__(
        self,
        dataset: IterableDataset,
        micro_batch_seq_length: int,
        ready_for_micro_batch_threshold: int,
        dynamic_batching_collate_fn: Optional[Callable] = DataCollatorWithPositionIDs(),  # expect: RNK111
        save_by_idx: bool = True,
        get_length_fn: Optional[Callable] = len,
    ):
        self.dataset = dataset
        self.dynamic_batching_collate_fn = dynamic_batching_collate_fn
        self.ready_for_micro_batch_threshold = ready_for_micro_batch_threshold
        self.micro_batch_seq_length = micro_batch_seq_length
        self.save_by_idx = save_by_idx
        self.get_length_fn = get_length_fn
