"""Every rank creates both column groups in the same order and keeps its own.

Report: https://github.com/pytorch/pytorch/issues/46181
Class: B partial group creation
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
    col_groups = [dist.new_group(ranks=list(range(col, world_size, 2))) for col in range(2)]
    col_group = col_groups[rank_col]

    data = torch.rand(4).cuda()
    dist.broadcast(data, src=rank_col, group=col_group, async_op=False)
    print("rank:", rank, "group:", rank_col, data)


if __name__ == "__main__":
    main()
