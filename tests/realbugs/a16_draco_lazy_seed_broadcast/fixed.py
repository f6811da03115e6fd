"""The seed is broadcast in __init__, which every rank runs; the property only reads it.

Report: https://github.com/radiocosmology/draco/pull/384
Class: A rank-divergent collective
"""

import torch
import torch.distributed as dist


class RandomTask:
    def __init__(self):
        seed = torch.randint(0, 2**31, (1,))
        dist.broadcast(seed, src=0)
        self._local_seed = int(seed) + dist.get_rank()

    @property
    def local_seed(self):
        return self._local_seed

    def process(self, baselines):
        for bl in baselines:
            if bl.fully_masked():
                continue
            self.add_noise(bl, self.local_seed)
