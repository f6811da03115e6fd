"""Every rank creates every node's SyncBatchNorm group, then keeps the one for its own node.

Report: https://github.com/mosaicml/composer/pull/1391
Class: B partial group creation
"""

import torch
import torch.distributed as torch_dist

from composer.utils import dist


def deeplabv3(num_classes: int, backbone_arch: str = "resnet101", sync_bn: bool = True):
    world_size = dist.get_world_size()
    model = build_segmentation_model(num_classes, backbone_arch, sync_bn and world_size > 1)

    if sync_bn and world_size > 1:
        local_world_size = dist.get_local_world_size()

        # List of ranks for each node, assumes that each node has the same number of ranks
        num_nodes = world_size // local_world_size
        process_group = None
        if num_nodes > 1:
            ranks_per_node = [
                list(range(node * local_world_size, (node + 1) * local_world_size)) for node in range(num_nodes)
            ]
            process_groups = [torch_dist.new_group(ranks) for ranks in ranks_per_node]
            process_group = process_groups[dist.get_node_rank()]

        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=process_group)

    return model
