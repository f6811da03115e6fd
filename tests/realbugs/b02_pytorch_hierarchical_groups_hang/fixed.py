"""Every rank creates both groups in the same order, then picks its own.

Report: https://github.com/pytorch/pytorch/issues/130102
Class: B partial group creation
"""

import os

import torch.distributed as dist

dist.init_process_group(backend="nccl")
rank = int(os.environ["RANK"])

g03 = dist.new_group(ranks=[0, 3])
g12 = dist.new_group(ranks=[1, 2])
grp = g03 if rank in (0, 3) else g12
dist.barrier(group=grp)
