"""Rank 0 alone saves the aggregate MAGIC scores, and the one-shot saver's score writer
issues a dist.barrier() that no other rank enters.

Report: https://github.com/EleutherAI/bergson/pull/424
Class: A rank-divergent collective

Static reach: visible three calls deep; worker() calls save_magic_scores() under
`if global_rank == 0:`, which calls save_sequence_scores(), which constructs
MemmapSequenceScoreWriter, whose __init__ runs dist.barrier() whenever the process group
is initialized.
"""

import json
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist


class MemmapSequenceScoreWriter:
    def __init__(self, path: Path, num_items: int, num_scores: int, *, dtype=torch.float32, overwrite: bool = False):
        self.path = path
        self.path.mkdir(parents=True, exist_ok=True)
        scores_file_path = self.path / "scores.bin"

        rank = dist.get_rank() if dist.is_initialized() else 0
        if rank == 0 and (overwrite or not scores_file_path.exists()):
            self.scores = np.memmap(str(scores_file_path), dtype=np.float32, mode="w+", shape=(num_items, num_scores))
            with (path / "info.json").open("w") as f:
                json.dump({"num_items": num_items, "num_scores": num_scores}, f, indent=2)

        if dist.is_initialized():
            dist.barrier()

        self.scores = np.memmap(str(scores_file_path), dtype=np.float32, mode="r+", shape=(num_items, num_scores))

    def __call__(self, indices: list[int], scores: torch.Tensor):
        self.scores[indices] = scores.cpu().numpy()

    def flush(self):
        self.scores.flush()


def save_sequence_scores(path: Path, scores: np.ndarray, *, dtype=torch.float32) -> None:
    """One-shot equivalent of MemmapSequenceScoreWriter."""
    if scores.ndim == 1:
        scores = scores[:, None]
    num_items, num_scores = scores.shape

    writer = MemmapSequenceScoreWriter(path, num_items, num_scores, dtype=dtype, overwrite=True)
    writer(list(range(num_items)), torch.from_numpy(np.ascontiguousarray(scores)))
    writer.flush()


def save_magic_scores(run_path: str, scores: torch.Tensor) -> str:
    path = Path(run_path) / "scores"
    arr = scores.float().numpy()
    save_sequence_scores(path, arr if arr.ndim > 1 else arr[:, None])
    print(f"Saved attribution scores to {path}")
    return str(path)


def worker(run_cfg, global_rank: int, world_size: int, bwd_state):
    if world_size > 1:
        dist.all_reduce(bwd_state.weight_grads, op=dist.ReduceOp.SUM)

    scores = bwd_state.weight_grads.cpu()

    if global_rank == 0:
        score_path = save_magic_scores(run_cfg.run_path, scores)  # expect: RNK102
        print(f"Scores written to {score_path}")

    # cleanup, as the distributed launcher does after the worker returns
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
