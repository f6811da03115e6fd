"""A lazy property broadcasts on first access; a rank that never touches it hangs the rest.

Report: https://github.com/radiocosmology/draco/pull/384
Class: A rank-divergent collective

Static reach: partly; the broadcast hides in a property behind `if self._local_seed is
None:`, and a rank skips every access only when all its baselines are masked (data).
The original uses an MPI broadcast; re-created with torch.distributed.
"""

import torch
import torch.distributed as dist


class RandomTask:
    def __init__(self):
        self._local_seed = None

    @property
    def local_seed(self):
        if self._local_seed is None:
            seed = torch.randint(0, 2**31, (1,))
            dist.broadcast(seed, src=0)
            self._local_seed = int(seed) + dist.get_rank()
        return self._local_seed

    def process(self, baselines):
        for bl in baselines:
            if bl.fully_masked():
                continue
            self.add_noise(bl, self.local_seed)  # expect: RNK102
