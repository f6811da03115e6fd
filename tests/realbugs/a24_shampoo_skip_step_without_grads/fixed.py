"""Every rank runs the group step; a rank with no gradients passes empty search directions.

Report: https://github.com/facebookresearch/optimizers/pull/149
Class: A rank-divergent collective
"""

from typing import Any

import torch
import torch.distributed as dist

DISTRIBUTOR = "distributor"
MASKED_BLOCKED_GRADS = "masked_blocked_grads"
STEP = "step"
LR = "lr"


class DDPDistributor:
    def all_gather_into_tensor(self) -> None:
        dist.all_gather_into_tensor(self._global_dist_buffer, self._local_dist_buffer, group=self._dist_group)

    @torch.no_grad()
    def update_params(self, masked_blocked_search_directions: tuple[torch.Tensor, ...]) -> None:
        if masked_blocked_search_directions:
            torch._foreach_copy_(self._local_masked_dist_blocked_buffers, masked_blocked_search_directions)
        self.all_gather_into_tensor()
        if self._global_masked_blocked_params:
            torch._foreach_add_(self._global_masked_blocked_params, self._global_masked_dist_blocked_buffers)


class DistributedShampoo(torch.optim.Optimizer):
    def _instantiate_per_group_step(self, shampoo_pt2_compile_config) -> None:
        self._per_group_step = (
            torch.compile(self._per_group_step_impl)
            if shampoo_pt2_compile_config is not None
            else self._per_group_step_impl
        )

    @torch.no_grad()
    def _compute_search_directions(self, state_lists: dict[str, Any], step: torch.Tensor, lr: torch.Tensor):
        masked_blocked_search_directions = self._precondition_and_graft(state_lists, step)
        torch._foreach_mul_(masked_blocked_search_directions, -lr)
        return masked_blocked_search_directions

    @torch.no_grad()
    def _per_group_step_impl(self, state_lists: dict[str, Any], step: torch.Tensor, lr: torch.Tensor) -> None:
        state_lists[DISTRIBUTOR].update_params(
            masked_blocked_search_directions=self._compute_search_directions(state_lists, step, lr)
            # Only update parameters if there are gradients to use
            if state_lists[MASKED_BLOCKED_GRADS]
            else ()
        )

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for state_lists, group in zip(self._per_group_state_lists, self.param_groups, strict=True):
            # Construct blocked gradient list.
            state_lists[MASKED_BLOCKED_GRADS] = state_lists[DISTRIBUTOR].merge_and_block_gradients()
            DistributedShampoo._mask_state_lists(state_lists=state_lists, group=group)

            step = state_lists[STEP].add_(1)
            lr = torch.tensor(group[LR], dtype=torch.float).to(self._device, non_blocking=True)
            self._per_group_step(state_lists, step, lr)

        return loss
