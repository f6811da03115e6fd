"""Each node's ranks create only their own node's SyncBatchNorm group, so new_group() differs per rank.

Report: https://github.com/mosaicml/composer/pull/1391
Class: B partial group creation

Static reach: visible; `sync_ranks` is computed from `dist.get_node_rank()`, so ranks on
different nodes pass different lists to new_group() and no rank creates the other nodes'
groups (the "cleaner" commit in the PR, reverted after it failed with an NCCL error).
"""

import torch
import torch.distributed as torch_dist

from composer.utils import dist


def deeplabv3(num_classes: int, backbone_arch: str = "resnet101", sync_bn: bool = True):
    world_size = dist.get_world_size()
    model = build_segmentation_model(num_classes, backbone_arch, sync_bn and world_size > 1)

    if sync_bn and world_size > 1:
        local_world_size = dist.get_local_world_size()

        # Check for multinode, then only sync BatchNorm within each node node. Assumes same local world size across nodes
        process_group = None
        if world_size > local_world_size:
            node_rank = dist.get_node_rank()
            sync_ranks = list(range(node_rank * local_world_size, (node_rank + 1) * local_world_size))
            process_group = torch_dist.new_group(sync_ranks)  # expect: RNK105

        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=process_group)

    return model
