"""The dataset takes its rank from the initialized Trainer (trainer.global_rank).

Report: https://github.com/talmolab/sleap-nn/pull/184
Class: E import-time distributed state
"""


class CachedDataset:
    def __init__(self, labels, cache_dir, rank):
        self.rank = rank
        if self.rank == 0:
            build_npz_cache(labels, cache_dir)
        self.cache_dir = cache_dir


def make_dataset(trainer, labels, cache_dir):
    return CachedDataset(labels, cache_dir, rank=trainer.global_rank)
