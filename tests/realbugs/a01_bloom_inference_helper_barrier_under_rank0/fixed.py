"""Every rank calls the barrier-holding helper; rank 0 only writes the JSON from a list.

Report: https://github.com/huggingface/transformers-bloom-inference/pull/40
Class: A rank-divergent collective
"""

import json

import torch.distributed as dist

rank = dist.get_rank()


def get_repo_root(name):
    if rank == 0:
        download(name)
    dist.barrier()
    return local_path(name)


def write_checkpoints_json(files):
    with open("checkpoints.json", "w") as f:
        json.dump({"checkpoints": files}, f)


repo_root = get_repo_root("bigscience/bloom")
files = list_files(repo_root)
if rank == 0:
    write_checkpoints_json(files)
dist.barrier()
