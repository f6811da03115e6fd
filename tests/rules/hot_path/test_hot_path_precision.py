"""RNK201/RNK202 precision on real code: what runs once, what the host needs, what is on the host.

Each case re-creates a pattern of the review corpus (issue 16) that was
reported and should not be, or a per-step hook that was missed.
"""

from __future__ import annotations

import textwrap

import pytest

from ranklint import Config, lint_source
from tests.conftest import codes_by_line

HOT = ("RNK201", "RNK202")
HEADER = "import torch\nimport torch.distributed as dist\n\n\n"
SIGNATURE = "def train_step(model, x: torch.Tensor, n, tokenizer):\n"
# The line of the first body statement in `step(...)`'s source.
FIRST = HEADER.count("\n") + 2


def step(body: str) -> str:
    """A file whose hot ``train_step`` runs ``body``."""
    lines = textwrap.dedent(body).strip("\n").splitlines()
    return HEADER + SIGNATURE + "".join(f"    {line}\n" for line in lines)


def found(body: str, config: Config | None = None) -> list[tuple[int, str]]:
    """(line in ``body``, code) of each RNK201/RNK202 finding."""
    result = lint_source(step(body), "snippet.py", config or Config(select=HOT, confidence="low"))
    assert result.errors == []
    return [(f.line - FIRST + 1, f.code) for f in result.findings if f.code in HOT]


# -- error paths ----------------------------------------------------------------


def test_a_sync_in_an_assert_message_is_not_reported_but_the_assert_test_is() -> None:
    body = """
    assert x.dim() == 2, f"bad input {x.sum().item()}"
    assert x.isfinite().all(), f"non-finite: {x}"
    """

    assert found(body) == [(2, "RNK201")]


def test_a_sync_in_a_raise_statement_is_not_reported_but_the_test_before_it_is() -> None:
    body = """
    if (x < 0).any():
        raise ValueError(f"negative values: {x} (sum {x.sum().item()})")
    if n:
        raise RuntimeError("bad value %s" % x)
    """

    assert found(body) == [(1, "RNK201")]


def test_a_sync_after_a_raise_statement_is_reported() -> None:
    body = """
    if n:
        raise ValueError(f"bad value {x.item()}")
    print(x.item())
    """

    assert found(body) == [(3, "RNK201")]


# -- once-only code -------------------------------------------------------------


@pytest.mark.parametrize(
    "test",
    [
        "step == 1",
        "self.step - loaded_step == 1",
        "self.global_step == 0",
        "batch_idx == 0",
        "0 == iteration",
        "first_step",
        "self._first",
        "is_first_iter",
        "not self._initialized",
        "not initialized",
        "step == 0 and n",
        "batch_idx == 0 or (batch_idx + 1) % log_every == 0",
        "iteration % 500 == 0 or step == max_steps",
    ],
)
def test_code_under_a_once_only_test_is_not_hot(test: str) -> None:
    body = f"""
    if {test}:
        print(x.item())
    """

    assert found(body) == []


@pytest.mark.parametrize(
    "test",
    [
        "self._initialized",
        "step != 0",
        "not first_step",
    ],
)
def test_the_other_arm_of_a_once_only_test_is_not_hot(test: str) -> None:
    body = f"""
    if {test}:
        y = x * 2
    else:
        print(x.item())
    """

    assert found(body) == []


@pytest.mark.parametrize(
    "test",
    [
        "micro_step == 0",
        "self.micro_step == 0",
        "num_steps == 1",
        "max_iters == 1",
        "is_first",
        "is_first_microbatch",
        "i == 0",
        "step < 10",
        "batch_size == 1",
        "step == 1 or n",
    ],
)
def test_a_test_that_holds_on_many_steps_is_not_once_only(test: str) -> None:
    body = f"""
    if {test}:
        print(x.item())
    """

    assert found(body) == [(2, "RNK201")]


def test_once_only_code_is_reported_when_periodic_syncs_are_not_allowed() -> None:
    body = """
    if step == 1:
        print(x.item())
    """

    assert found(body, Config(select=HOT, allow_periodic_sync=False, confidence="low")) == [
        (2, "RNK201")
    ]


# -- values a collective just filled ------------------------------------------


def test_reading_a_max_reduced_or_broadcast_tensor_is_not_reported() -> None:
    body = """
    longest = torch.tensor([x.shape[1]], device=x.device)
    dist.all_reduce(longest, op=dist.ReduceOp.MAX)
    size = int(longest.int().item())
    info = torch.empty(4, device=x.device)
    torch.distributed.broadcast(info, 0, group=n)
    temperature = float(info[0].item())
    greedy = bool(info[1].item())
    flags = torch.zeros(2, device=x.device)
    n.comm.broadcast(flags, src=0)
    copied = flags.cpu()
    """

    assert found(body) == []


def test_after_a_sum_only_a_test_of_the_value_is_a_decision() -> None:
    body = """
    done = (x > 0).any().int()
    dist.all_reduce(done)
    if done.item() > 0:
        pass
    if done:
        pass
    stop = bool(done)
    print(done.item())
    """

    assert found(body) == [(8, "RNK201")]


@pytest.mark.parametrize(
    ("collective", "expected"),
    [
        ("dist.all_reduce(tensor=flag, op=dist.ReduceOp.MAX)", []),
        ("dist.all_reduce(op=dist.ReduceOp.MAX, tensor=flag)", []),
        ("dist.broadcast(tensor=flag, src=0)", []),
        # a sum is not a decision, whatever else the call is given
        ("dist.all_reduce(flag, group=n)", [(3, "RNK201")]),
        ("dist.all_reduce(flag, op=dist.ReduceOp.SUM)", [(3, "RNK201")]),
        # only one rank holds the result, or the tensor is not named
        ("dist.reduce(flag, 0, op=dist.ReduceOp.MAX)", [(3, "RNK201")]),
        ("dist.all_reduce(*[flag], op=dist.ReduceOp.MAX)", [(3, "RNK201")]),
        ("dist.all_reduce(op=dist.ReduceOp.MAX)", [(3, "RNK201")]),
        ("dist.all_reduce(other=flag, op=dist.ReduceOp.MAX)", [(3, "RNK201")]),
    ],
)
def test_a_read_after_a_collective_is_reported_unless_every_rank_got_one_decided_value(
    collective: str, expected: list[tuple[int, str]]
) -> None:
    body = f"""
    flag = (x > 0).any().int()
    {collective}
    print(flag.item())
    """

    assert found(body) == expected


def test_a_shared_tensor_stays_shared_through_a_view_and_not_after_a_new_value() -> None:
    body = """
    t = torch.empty(4, device=x.device)
    dist.broadcast(t, 0)
    t = t.view(torch.float16)
    a = t.cpu()
    t = x.sum()
    b = t.item()
    """

    assert found(body) == [(6, "RNK201")]


def test_a_collective_in_another_function_does_not_share_a_name() -> None:
    source = HEADER + textwrap.dedent(
        """
        def sync(flag):
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)


        def train_step(flag: torch.Tensor):
            sync(flag)
            return flag.item()
        """
    )

    assert codes_by_line(source, select=HOT) == [(12, "RNK201")]


# -- values on the host ---------------------------------------------------------


def test_reading_a_tensor_made_on_the_host_is_not_a_sync() -> None:
    body = """
    votes = torch.tensor([1, 2, 2])
    a = votes.tolist()
    b = torch.mode(torch.tensor(n))[0].item()
    c = torch.as_tensor(n).max().item()
    d = torch.from_numpy(n).sum().item()
    """

    assert found(body) == []


def test_reading_a_copy_is_not_a_second_sync() -> None:
    body = """
    scores = x.cpu()
    best = scores[0].item()
    rows = x.detach().cpu().numpy()
    cast = x[0].data.cpu().to(torch.float).numpy()
    back = x.cpu().cuda().item()
    """

    assert found(body) == [
        (1, "RNK201"),
        (3, "RNK201"),
        (4, "RNK201"),
        (5, "RNK201"),
        (5, "RNK201"),
    ]


def test_an_attribute_copied_to_the_host_in_the_function_is_on_the_host() -> None:
    body = """
    self.steps = self.steps.cpu()
    seen = self.steps.item()
    self.steps = x.sum()
    again = self.steps.item()
    """

    assert found(body) == [(1, "RNK201"), (4, "RNK201")]


# -- not a read of a value ------------------------------------------------------


@pytest.mark.parametrize(
    "statement",
    [
        "x[x < 0] = 0",
        "x[x > 5] = 0.0",
        "x[(x > 5) & (x < 9)] = -1",
        'x[x > 5] = -float("inf")',
        "x[x > 5] = n",
        "x[x > 5, :] = self.pad_id",
        "x[x > 5] = False",
    ],
)
def test_a_mask_assignment_of_a_scalar_is_a_masked_fill(statement: str) -> None:
    assert found(statement) == []


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("x[x > 5] = x[x < 0]", [(1, "RNK201"), (1, "RNK201")]),
        ("x[x > 5] = x * 2", [(1, "RNK201")]),
        ("x[x > 5] += 1", [(1, "RNK201")]),
        ("y = x[x > 5]", [(1, "RNK201")]),
    ],
)
def test_a_mask_assignment_of_a_tensor_or_a_mask_read_is_still_reported(
    statement: str, expected: list[tuple[int, str]]
) -> None:
    assert found(statement) == expected


@pytest.mark.parametrize(
    "statement",
    [
        "parts = x.split(n.tolist())",
        "parts = torch.split(x, n.sum(0).tolist(), dim=0)",
        "parts = x.split_with_sizes(n.tolist())",
        "out = dist.all_to_all_single(x, x, output_split_sizes=n.tolist())",
        "text = tokenizer.decode(x[0].tolist())",
        "texts = tokenizer.batch_decode(x.argmax(-1).cpu())",
        "text = self.tokenizer.ids_to_text(x.tolist())",
    ],
)
def test_host_values_passed_straight_to_an_api_that_needs_them_are_not_reported(
    statement: str,
) -> None:
    assert found(statement) == []


def test_host_values_computed_before_the_call_are_still_reported() -> None:
    body = """
    sizes = n.tolist()
    parts = x.split(sizes)
    """

    assert found(body) == [(1, "RNK201")]


def test_a_non_blocking_copy_does_not_wait() -> None:
    body = """
    a = x.to("cpu", non_blocking=True)
    b = x.to("cpu", non_blocking=False)
    """

    assert found(body) == [(2, "RNK201")]


@pytest.mark.parametrize(
    "statement",
    [
        'model = model.to("cpu")',
        "self.policy_net.cpu()",
        "model.model[0].module.to('cpu')",
        "self.encoder.cpu()",
    ],
)
def test_moving_a_model_is_not_a_read(statement: str) -> None:
    assert found(statement) == []


# -- what a name holds along the way --------------------------------------------


def test_a_name_tested_to_be_a_list_is_not_a_tensor_in_that_branch() -> None:
    body = """
    if isinstance(x, (list, tuple)):
        print(x[0])
        return [float(c) for c in x]
    print(x[0])
    """

    assert found(body) == [(4, "RNK201")]


def test_a_branch_that_returns_does_not_change_what_follows() -> None:
    body = """
    if n:
        x = torch.zeros(3)
        return x.tolist()
    print(x)
    for row in x:
        pass
    """

    # `x.tolist()` reads the host tensor the branch made; after it, `x` is the parameter.
    assert found(body) == [(4, "RNK201"), (5, "RNK202")]


# -- RNK202 ------------------------------------------------------------------


@pytest.mark.parametrize(
    "loop",
    [
        "for i in torch.randint(10, (4,)):\n    pass",
        "v = [n[i] for i in torch.arange(4)]",
        "for r in x.cpu():\n    pass",
        "for out in self.llm.generate(x):\n    print(out.outputs[0].text)",
        "v = [o[0] for o in self.reward_model(x)]",
        "for i in range(len(model(x))):\n    v = model(x)[i]",
        "for t in time_steps:\n    pass",
        "for t in self.scheduler.timesteps:\n    pass",
        "for s in sigmas[1:]:\n    pass",
    ],
)
def test_loops_over_host_tensors_model_outputs_and_schedules_are_not_reported(loop: str) -> None:
    body = """
    time_steps = torch.linspace(1.0, 0.0, 10, device=x.device)
    sigmas = x.flip(0)
    """

    assert found(body + loop) == []


@pytest.mark.parametrize(
    "loop",
    [
        "for row in model(x)[0]:\n    pass",
        "for row in model(x).sigmoid():\n    pass",
        "for row in model(x):\n    v = row.max()",
        "out = model(x)\nfor i in range(out.shape[0]):\n    v = out[i]",
    ],
)
def test_loops_over_a_tensor_from_a_model_output_are_reported(loop: str) -> None:
    assert [code for _, code in found(loop)] == ["RNK202"]


# -- per-step hooks (recall) ----------------------------------------------------


TRAINER = """
import torch
from transformers import Trainer


class MyTrainer(Trainer):
    def compute_loss(self, model, inputs):
        loss = model(**inputs).loss
        print(loss.item())
        return loss

    def prediction_step(self, model, inputs):
        return model(**inputs).logits.cpu()


class Evaluator:
    def compute_loss(self, model, inputs):
        return model(**inputs).loss.item()
"""


def test_step_hooks_of_a_trainer_subclass_are_hot() -> None:
    result = lint_source(TRAINER.lstrip("\n"), "t.py", Config(select=HOT, confidence="low"))

    assert [(f.line, f.code) for f in result.findings] == [(8, "RNK201"), (12, "RNK201")]
    assert "is a step hook of a `Trainer` subclass" in result.findings[0].message


INDIRECT_HOOKS = """
import torch
from torch import nn
from transformers import Trainer


class Base(Trainer):
    pass


class MyTrainer(Base):
    def compute_loss(self, model, inputs):
        return model(**inputs).loss.item()


class Layer(nn.Module):
    pass


class Helper(Layer):
    def compute_loss(self, model, inputs):
        return model(**inputs).loss.item()
"""


def test_a_step_hook_is_hot_in_a_trainer_subclass_of_a_subclass_and_not_in_a_module() -> None:
    result = lint_source(INDIRECT_HOOKS.lstrip("\n"), "t.py", Config(select=HOT, confidence="low"))

    assert [(f.line, f.code) for f in result.findings] == [(12, "RNK201")]


FORWARD_HELPERS = """
import torch
from torch import nn


class Block(nn.Module):
    def _forward(self, x: torch.Tensor):
        return x.item()

    def forward_step(self, x: torch.Tensor):
        return x.tolist()

    def attn_forward(self, x: torch.Tensor):
        return x.cpu()


class Runner:
    def forward_step(self, x: torch.Tensor):
        return x.item()
"""


def test_forward_helpers_of_a_module_are_hot() -> None:
    result = lint_source(FORWARD_HELPERS.lstrip("\n"), "b.py", Config(select=HOT, confidence="low"))

    assert [(f.line, f.code) for f in result.findings] == [
        (7, "RNK201"),
        (10, "RNK201"),
        (13, "RNK201"),
    ]
    assert "is a forward helper of an `nn.Module`" in result.findings[0].message
