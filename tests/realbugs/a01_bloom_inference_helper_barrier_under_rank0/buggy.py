"""Only rank 0 calls a helper chain that ends in dist.barrier(), so rank 0 waits forever.

Report: https://github.com/huggingface/transformers-bloom-inference/pull/40
Class: A rank-divergent collective

Static reach: visible; the barrier sits two calls below write_checkpoints_json(), which
runs under `if rank == 0:` (get_checkpoint_files() -> get_repo_root() -> dist.barrier()).
"""

import json

import torch.distributed as dist

rank = dist.get_rank()


def get_repo_root(name):
    if rank == 0:
        download(name)
    dist.barrier()
    return local_path(name)


def get_checkpoint_files(name):
    return list_files(get_repo_root(name))


def write_checkpoints_json(name):
    with open("checkpoints.json", "w") as f:
        json.dump({"checkpoints": get_checkpoint_files(name)}, f)


repo_root = get_repo_root("bigscience/bloom")
if rank == 0:
    write_checkpoints_json("bigscience/bloom")  # expect: RNK102
dist.barrier()
