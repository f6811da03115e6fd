"""RNK203 implicit-device-or-dtype."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from ranklint.analysis.project.facts import ProjectFacts
from ranklint.findings import Severity
from ranklint.model.events import CostKind, HostCost
from ranklint.rules.base import ProjectFinding, Rule
from ranklint.rules.hot_path._hot_costs import Description, hot_cost_findings

_PROBLEMS = {
    "device": "no `device=`: it is allocated on the CPU, then copied to the device",
    "dtype": "float data without `dtype=`: it is float32 whatever the model uses",
}


class ImplicitDeviceOrDtype(Rule):
    project: ClassVar[bool] = True
    code = "RNK203"
    name = "implicit-device-or-dtype"
    severity = Severity.INFO
    default_enabled = False
    summary = "A tensor factory in hot code has no explicit device (or float dtype)"
    what = """\
Reports, in hot code (see RNK201), `torch.zeros/ones/empty/full/rand/randn/
randint/arange/linspace/tensor/as_tensor` calls without `device=`, and
`torch.tensor`/`torch.as_tensor` of float literals without `dtype=`. The
`*_like` factories take the device of their argument and are not reported.
Off by default (`extend-select = ["RNK203"]`): many such tensors are small or
meant for the CPU.
"""
    why = """\
Without `device=`, the tensor is allocated on the CPU and copied to the
accelerator when it meets a device tensor: a host allocation and a transfer
every step, and with pinned memory absent, a synchronous one. Float data
without `dtype=` becomes float32 whatever precision the model computes in, and
costs a cast in every mixed-precision step.
"""
    limits = """\
A factory whose result stays on the CPU on purpose (indices for a CPU sampler)
is reported too: that is why the rule is off by default. `torch.set_default_device`
is not taken into account.
"""
    valid = (
        """
        import torch


        def train_step(model, batch):
            mask = torch.ones(batch.shape, device=batch.device)
            scale = torch.tensor([0.5, 2.0], device=batch.device, dtype=batch.dtype)
            return model(batch * mask) * scale.sum()
        """,
    )
    invalid = (
        """
        import torch


        def train_step(model, batch):
            mask = torch.ones(batch.shape)  # expect: RNK203
            scale = torch.tensor([0.5, 2.0], device=batch.device)  # expect: RNK203
            return model(batch * mask) * scale.sum()
        """,
    )

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterable[ProjectFinding]:
        return hot_cost_findings(project, frozenset({CostKind.FACTORY}), _describe)


def _describe(cost: HostCost) -> Description:
    problems = " and ".join(_PROBLEMS[missing] for missing in cost.missing)
    return (
        cost.text,
        f"`{cost.text}` has {problems}",
        "pass `device=` (for example `device=batch.device`) and `dtype=`, or create "
        "the tensor once outside the step",
    )
