"""Each rank creates only its own odd/even column group, so the group broadcasts hang.

Report: https://github.com/pytorch/pytorch/issues/46181
Class: B partial group creation

Static reach: visible; `col_ranks` depends on `rank % 2`, so the even ranks call
new_group([0, 2]) and the odd ranks call new_group([1, 3]): no rank calls new_group for
the other column, and the group ids no longer match across ranks.
"""

import os
import subprocess

import torch
import torch.distributed as dist


def main():
    os.environ["NCCL_DEBUG"] = "WARN"
    rank = int(os.environ["SLURM_PROCID"])
    world_size = 4
    rank_col = rank % 2
    host_ip = subprocess.getoutput("scontrol show hostname | head -n1")
    port = "29500"
    init_method = "tcp://{}:{}".format(host_ip, port)

    dist.init_process_group("nccl", init_method=init_method, world_size=world_size, rank=rank)
    col_ranks = list(range(rank_col, world_size, 2))
    col_group = dist.new_group(ranks=col_ranks)  # expect: RNK105

    data = torch.rand(4).cuda()
    dist.broadcast(data, src=rank_col, group=col_group, async_op=False)
    print("rank:", rank, "group:", rank_col, data)


if __name__ == "__main__":
    main()
