"""Each rank stats train_state.pt on its own; on NFS/Lustre the answers can differ, and only some ranks enter the broadcast.

Report: https://github.com/KempnerInstitute/KempnerForge/pull/50
Class: A rank-divergent collective

Static reach: partly; the broadcast_object_list() sits under
`if train_state_path.exists():`, a per-rank filesystem check (stat results can disagree
briefly across ranks on a distributed filesystem), so ranks that see no file skip the
broadcast that the others wait in.
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

        # Load non-distributed state
        train_state_path = Path(ckpt_dir) / _TRAIN_STATE_FILE
        if train_state_path.exists():
            train_state = torch.load(train_state_path, map_location="cpu", weights_only=False)

            # Broadcast from rank 0 to all ranks
            if dist.is_initialized():
                object_list = [train_state if self._rank == 0 else None]
                dist.broadcast_object_list(object_list, src=0)  # expect: RNK102
                train_state = object_list[0]

            assert train_state is not None, "train_state broadcast failed"
            step, tokens_seen, extra = restore_train_state(train_state, scheduler=scheduler, dataloader=dataloader)
            return step, tokens_seen, extra

        return 0, 0, {}
