"""RNK202 python-loop-over-tensor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from ranklint.analysis.project.facts import ProjectFacts
from ranklint.findings import Severity
from ranklint.model.events import CostKind, HostCost
from ranklint.rules.base import ProjectFinding, Rule
from ranklint.rules.hot_path._hot_costs import Description, hot_cost_findings


class PythonLoopOverTensor(Rule):
    project: ClassVar[bool] = True
    code = "RNK202"
    name = "python-loop-over-tensor"
    severity = Severity.WARNING
    default_enabled = False
    summary = "Hot code iterates a tensor element by element in Python"
    what = """\
Reports, in hot code (see RNK201), Python iteration over a tensor: `for x in t`,
comprehensions over a tensor, and `for i in range(len(t))` /
`range(t.shape[0])` / `range(t.size(0))` loops whose body indexes `t[i]`.

Off by default (`extend-select = ["RNK202"]`): on the review corpus's test
half, 3 of 10 findings were real (and minor), 6 were lists or tuples the
analysis took for tensors (a model's output tuple, lists of strings under a
dict key) or code that does not run every step (issue 37). Turn it on to
review a training loop you are tuning.
"""
    why = """\
Each element is a separate tiny tensor: one kernel launch or host round trip per
element, and usually a sync when the element is tested or converted. A loop of
1000 elements per step turns a microsecond of device work into milliseconds of
host overhead; vectorised tensor operations do the same work in one launch.
"""
    limits = """\
Only tensors known as such (see RNK201) are reported; iterating `.tolist()` is
reported by RNK201 as a copy. Loops over a tensor's first dimension that do not
index the tensor by the loop variable are not reported. Not reported either:

- a copy on the host (`for v in x.cpu():`): the copy is RNK201's finding;
- a tensor made on the host whose elements index or slice Python data
  (`[data[i] for i in torch.randint(n, (k,))]`, `data[i : i + block]`): no
  launch or sync per element;
- a model's output read as records (`[r[0] for r in reward_model(x)]`,
  `for out in llm.generate(...): out.text`): the model returned a list;
- a sampling schedule (`for t in time_steps:`, `scheduler.timesteps`,
  `sigmas`): each element runs a whole model step and cannot be vectorised.

Whether a model's output is a tensor or a list is guessed from how the loop
uses its elements.
"""
    valid = (
        """
        def train(model, loader, optimizer):
            for batch in loader:
                loss = model(batch).mean()
                loss.backward()
                optimizer.step()
                for group in optimizer.param_groups:
                    group["lr"] *= 0.99
        """,
        """
        import torch


        def train_step(model, batch: torch.Tensor):
            out = model(batch)
            return out.sum(dim=1)
        """,
        # A host tensor indexing Python data, a model that returns a list, a
        # sampling schedule, a value that is a list here (litgpt
        # extensions/xla/finetune/adapter.py and litgpt/utils.py, colossalai
        # coati/distributed/producer.py, NeMo audio/parts/submodules/diffusion.py).
        """
        import torch


        def train_step(data, reward_model, sampler, state, logits: torch.Tensor):
            ix = torch.randint(len(data), (8,))
            batch = [data[i] for i in ix]
            rewards = torch.tensor([r[0] for r in reward_model(batch)])
            time_steps = torch.linspace(1.0, 0.0, 50, device=state.device)
            for t in time_steps:
                state = sampler(state, t)
            if isinstance(logits, list):
                return [chunk.sum() for chunk in logits]
            return rewards, state
        """,
    )
    invalid = (
        """
        import torch


        def train_step(model, batch: torch.Tensor):
            out = model(batch)
            scores = [s * 2 for s in out]  # expect: RNK202
            for row in out:  # expect: RNK202
                scores.append(row)
            return scores
        """,
        """
        def train(model, loader, optimizer):
            for batch in loader:
                logits = model(batch)
                loss = logits.mean()
                loss.backward()
                optimizer.step()
                for i in range(logits.shape[0]):  # expect: RNK202
                    logits[i] = logits[i] * 2
        """,
    )

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterable[ProjectFinding]:
        return hot_cost_findings(project, frozenset({CostKind.TENSOR_LOOP}), _describe)


def _describe(cost: HostCost) -> Description:
    return (
        f"for ... in {cost.text}",
        f"the loop over `{cost.text}` runs Python code once per tensor element",
        "write it as one tensor operation over the whole tensor (broadcasting, "
        "`torch.where`, `gather`/`scatter`, a reduction)",
    )
