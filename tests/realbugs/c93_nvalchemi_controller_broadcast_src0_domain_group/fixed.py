"""The root is the global rank of the domain group's first member, `dist.get_global_rank(group, 0)`.

Report: https://github.com/NVIDIA/nvalchemi-toolkit/pull/155
Class: C group-local or invalid root
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist

from nvalchemi.distributed.strategy import ParallelizationStrategy

if TYPE_CHECKING:
    from nvalchemi.data.batch import Batch
    from nvalchemi.dynamics.base import BaseDynamics


class DynamicsDistributionCoordinator:
    def __init__(self, dynamics: BaseDynamics, strategy: ParallelizationStrategy) -> None:
        self._dyn = dynamics
        self._strategy = strategy
        self._kind: str | None = getattr(dynamics, "__dd_thermo_kind__", None)
        self._patches: list[tuple[Any, str, Any]] = []
        self._dof_done = False

    @property
    def active(self) -> bool:
        """True only when this is a global-thermo ensemble *and* a real
        multi-rank decomposition is in effect."""
        return self._kind is not None and dist.is_initialized() and dist.get_world_size() > 1

    # ------------------------------------------------------------------
    # Controller / cell lockstep (anti-drift, after each step)
    # ------------------------------------------------------------------

    def broadcast_state(self, batch: Batch) -> None:
        """Broadcast the replicated controller state (the integrator's
        declared ``__dd_replicated__``) from group-local rank 0 so floating-point
        divergence cannot accumulate over a long run.
        """
        if not self.active:
            return
        group = self._strategy.process_group
        src = dist.get_global_rank(group, 0) if group is not None else 0
        state = getattr(self._dyn, "_state", None)
        fields = getattr(self._dyn, "__dd_replicated__", ())
        for name in fields:
            t = getattr(state, name, None)
            if isinstance(t, torch.Tensor):
                dist.broadcast(t, src=src, group=group)
