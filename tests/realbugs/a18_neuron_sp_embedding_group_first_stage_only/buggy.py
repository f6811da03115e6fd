"""Only the first pipeline stage all-reduces the tied embedding's gradient on the
embedding group, which also holds the last stage: the last stage never joins.

Report: https://github.com/dylanyunlon/Neuron_SP/issues/51
Class: A rank-divergent collective

Static reach: visible; the group's members are written out (`new_group([0, 3])`:
the first and last of four pipeline stages, one rank each) and the test of the
global rank admits rank 0 alone of them.
"""

import torch
import torch.distributed as dist

dist.init_process_group(backend="nccl")
embedding_group = dist.new_group(ranks=[0, 3])
grad = torch.ones(4)

if dist.get_rank() == 0:  # is_pipeline_first_stage()
    dist.all_reduce(grad, group=embedding_group)  # expect: RNK102
dist.barrier()
