"""Rank 0's exists() result is broadcast, so every rank takes the same branch; only rank 0 reads the file.

Report: https://github.com/KempnerInstitute/KempnerForge/pull/50
Class: A rank-divergent collective
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

_TRAIN_STATE_FILE = "train_state.pt"


class CheckpointManager:
    def load(self, path: str | None = None, scheduler: Any | None = None, dataloader: Any | None = None):
        ckpt_dir = self._resolve_load_path(path)
        if ckpt_dir is None:
            return 0, 0, {}

        # Load non-distributed state. On NFS/Lustre, independent stat()
        # calls can disagree briefly across ranks; if some ranks enter
        # this branch and others don't, the broadcast_object_list below
        # hangs. Use a rank-0-authoritative existence check broadcast to
        # all ranks so every rank takes the same branch.
        train_state_path = Path(ckpt_dir) / _TRAIN_STATE_FILE
        if dist.is_initialized():
            exists_flag = [train_state_path.exists() if self._rank == 0 else False]
            dist.broadcast_object_list(exists_flag, src=0)
            train_state_exists = bool(exists_flag[0])
        else:
            train_state_exists = train_state_path.exists()

        if train_state_exists:
            train_state = (
                torch.load(train_state_path, map_location="cpu", weights_only=False)
                if self._rank == 0 or not dist.is_initialized()
                else None
            )

            # Broadcast from rank 0 to all ranks
            if dist.is_initialized():
                object_list = [train_state if self._rank == 0 else None]
                dist.broadcast_object_list(object_list, src=0)
                train_state = object_list[0]

            assert train_state is not None, "train_state broadcast failed"
            step, tokens_seen, extra = restore_train_state(train_state, scheduler=scheduler, dataloader=dataloader)
            return step, tokens_seen, extra

        return 0, 0, {}
