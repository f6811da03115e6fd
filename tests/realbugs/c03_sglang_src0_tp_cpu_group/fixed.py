"""The broadcast uses the TP group's first global rank as its source.

Report: https://github.com/sgl-project/sglang/pull/12762
Class: C group-local or invalid root
"""

import torch.distributed as dist


class Scheduler:
    def _process_and_broadcast_mm_inputs(self, image_inputs):
        group_world_size = dist.get_world_size(self.cpu_group)
        if group_world_size > 1:
            obj_list = [image_inputs]
            dist.broadcast_object_list(obj_list, src=self.tp_group.first_rank, group=self.cpu_group)
            image_inputs = obj_list[0]
        return image_inputs
