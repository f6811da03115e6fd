"""Both stages that hold the tied embedding all-reduce its gradient.

Report: https://github.com/dylanyunlon/Neuron_SP/issues/51
Class: A rank-divergent collective
"""

import torch
import torch.distributed as dist

dist.init_process_group(backend="nccl")
embedding_group = dist.new_group(ranks=[0, 3])
grad = torch.ones(4)

if dist.get_rank() in (0, 3):  # the first and the last stage
    dist.all_reduce(grad, group=embedding_group)
dist.barrier()
