"""The TP group broadcasts from global rank 0, which is not in the TP group of later PP stages.

Report: https://github.com/sgl-project/sglang/pull/12762
Class: C group-local or invalid root

Static reach: partly; `src=0` with `group=self.cpu_group` is visible, but that the TP
group of pipeline stage > 0 lacks global rank 0 is a runtime layout fact.
"""

import torch.distributed as dist


class Scheduler:
    def _process_and_broadcast_mm_inputs(self, image_inputs):
        group_world_size = dist.get_world_size(self.cpu_group)
        if group_world_size > 1:
            obj_list = [image_inputs]
            dist.broadcast_object_list(obj_list, src=0, group=self.cpu_group)  # expect: RNK110
            image_inputs = obj_list[0]
        return image_inputs
