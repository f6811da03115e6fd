"""RNK112: sums used as means and means scaled twice, by the world size."""

from __future__ import annotations

import pytest

from ranklint.rules.collectives._reductions import NODE_KINDS
from ranklint.rules.collectives.reduction_semantics import ReductionSemantics
from tests.conftest import codes_by_line, findings_of

SELECT = ("RNK112",)
HEADER = "import torch\nimport torch.distributed as dist\nfrom torch.distributed import ReduceOp\n"


def _lines(body: str) -> list[int]:
    return [line for line, _ in codes_by_line(HEADER + body, select=SELECT)]


# -- a per-rank mean all-reduced with SUM ---------------------------------------


@pytest.mark.parametrize("op", ["", ", op=ReduceOp.SUM", ", dist.ReduceOp.SUM"])
def test_mean_summed_and_never_divided_is_reported(op: str) -> None:
    body = (
        f"def end(outputs):\n    acc = outputs.mean()\n    dist.all_reduce(acc{op})\n"
        "    return acc\n"
    )

    assert _lines(body) == [6]


@pytest.mark.parametrize(
    "after",
    [
        "return acc / dist.get_world_size()",
        "return acc.item() / world",
        "acc /= world\n    return acc",
        "acc.div_(world)\n    return acc",
        "return torch.div(acc, world)",
    ],
)
def test_mean_summed_then_divided_is_not_reported(after: str) -> None:
    body = (
        "def end(outputs, world):\n"
        "    acc = outputs.mean()\n"
        "    dist.all_reduce(acc)\n"
        f"    {after}\n"
    )

    assert _lines(body) == []


@pytest.mark.parametrize("op", ["op=ReduceOp.AVG", "op=ReduceOp.MAX"])
def test_mean_reduced_with_another_op_is_not_reported(op: str) -> None:
    body = (
        f"def end(outputs):\n    acc = outputs.mean()\n    dist.all_reduce(acc, {op})\n"
        "    return acc\n"
    )

    assert _lines(body) == []


def test_summed_total_that_is_not_a_mean_is_not_reported() -> None:
    body = (
        "def end(outputs):\n    total = outputs.sum()\n    dist.all_reduce(total)\n"
        "    return total\n"
    )

    assert _lines(body) == []


def test_message_says_the_result_is_world_size_times_the_mean() -> None:
    body = "def end(outputs):\n    acc = outputs.mean()\n    dist.all_reduce(acc)\n    return acc\n"

    [finding] = findings_of(HEADER + body, select=SELECT)

    assert finding.message.startswith(
        "`acc` is a per-rank mean, all-reduced with SUM and never divided"
    )


# -- a helper's sum fed to an average meter -------------------------------------

HELPER = (
    "def reduce_tensor(inp):\n"
    "    reduced = inp.clone()\n"
    "    dist.all_reduce(reduced)\n"
    "    return reduced\n"
)


@pytest.mark.parametrize("meter", ["avg_loss", "self.loss_meter", "ave_loss", "running_mean"])
def test_summed_helper_result_fed_to_an_average_is_reported(meter: str) -> None:
    body = HELPER + (
        f"def log(self, loss):\n    r = reduce_tensor(loss)\n    {meter}.update(r.item())\n"
    )

    assert _lines(body) == [10]


@pytest.mark.parametrize(
    "use",
    [
        "history.update(r.item())",
        "avg_loss.update(r.item() / world)",
        "avg_loss.update(r / world)",
    ],
)
def test_summed_helper_result_divided_or_not_averaged_is_not_reported(use: str) -> None:
    body = HELPER + f"def log(loss, world):\n    r = reduce_tensor(loss)\n    {use}\n"

    assert _lines(body) == []


def test_helper_that_divides_its_sum_is_not_reported() -> None:
    body = (
        "def reduce_tensor(inp):\n"
        "    reduced = inp.clone()\n"
        "    dist.all_reduce(reduced)\n"
        "    reduced /= dist.get_world_size()\n"
        "    return reduced\n"
        "def log(loss, avg_loss):\n"
        "    r = reduce_tensor(loss)\n"
        "    avg_loss.update(r.item())\n"
    )

    assert _lines(body) == []


# -- a per-rank mean loss multiplied by the world size -----------------------------


@pytest.mark.parametrize(
    "scale",
    [
        "loss = loss * dist.get_world_size()",
        "loss = dist.get_world_size() * loss",
        "loss *= dist.get_world_size()",
        "world = dist.get_world_size()\n    loss = loss * world",
    ],
)
def test_local_mean_loss_times_world_size_is_reported(scale: str) -> None:
    body = (
        f"def step(model, x, y, loss_fn):\n    loss = loss_fn(model(x), y)\n    {scale}\n"
        "    loss.backward()\n"
    )

    assert _lines(body)[-1:] == [6 + scale.count("\n")]


@pytest.mark.parametrize(
    ("setup", "scale"),
    [
        ("loss = out.loss_sum / num_items", "loss * dist.get_world_size()"),
        ("loss = loss_fn(out) / global_tokens * 2", "loss * dist.get_world_size()"),
        ("loss = loss_fn(out)", "loss * 8"),
        ("loss = loss_fn(out)", "loss * world_size"),
        ("scale = loss_fn(out)", "scale * dist.get_world_size()"),
    ],
)
def test_normalised_or_unscaled_loss_is_not_reported(setup: str, scale: str) -> None:
    body = (
        "def step(out, loss_fn, num_items, global_tokens, world_size):\n"
        f"    {setup}\n    return {scale}\n"
    )

    assert _lines(body) == []


@pytest.mark.parametrize(
    "getter",
    [
        "self._get_dp_group_size(include_cp=True)",
        "parallel_state.get_data_parallel_world_size()",
        "get_dp_size()",
        "mpu.get_data_parallel_group_size()",
    ],
)
def test_local_mean_loss_times_a_data_parallel_size_getter_is_reported(getter: str) -> None:
    body = (
        "def step(self, out, labels):\n    loss = self.loss_fn(out, labels)\n"
        f"    (loss * {getter}).backward()\n"
    )

    assert _lines(body) == [6]


@pytest.mark.parametrize(
    "scale",
    [
        "loss * self._get_dp_group_size() / num_label_samples",
        "loss * dist.get_world_size() / global_tokens",
        "loss * get_tensor_model_parallel_size()",
        "loss * self.get_dp_rank()",
    ],
)
def test_loss_times_a_size_divided_by_a_count_or_not_a_dp_size_is_not_reported(
    scale: str,
) -> None:
    body = (
        "def step(self, out, labels, num_label_samples, global_tokens):\n"
        f"    loss = self.loss_fn(out, labels)\n    ({scale}).backward()\n"
    )

    assert _lines(body) == []


def test_data_parallel_size_getter_alone_opens_the_reading_of_the_file() -> None:
    source = (
        "def step(self, out, labels):\n    loss = self.loss_fn(out, labels)\n"
        "    (loss * self._get_dp_group_size()).backward()\n"
    )

    assert codes_by_line(source, select=SELECT) == [(3, "RNK112")]


def test_loss_passed_in_by_the_caller_is_not_judged() -> None:
    body = "def scale(loss):\n    return loss * dist.get_world_size()\n"

    assert _lines(body) == []


def test_sum_with_an_unnormalised_term_times_world_size_is_reported() -> None:
    body = (
        "def compute_loss(outputs, num_items):\n"
        "    ce = outputs.ce_sum / num_items\n"
        "    loss = ce + 0.01 * outputs.aux_loss\n"
        "    return loss * dist.get_world_size()\n"
    )

    assert _lines(body) == [7]


# -- gradients divided by a global count after backward -------------------------

GRAD_STEP = (
    "def train_step(model, batch, loss):\n"
    "    num_tokens = (batch != -100).sum()\n"
    "    dist.all_reduce(num_tokens)\n"
    "    loss.backward()\n"
    "    for p in model.parameters():\n"
    "        {scale}\n"
)


@pytest.mark.parametrize(
    "scale", ["p.grad.mul_(1.0 / num_tokens)", "p.grad.div_(num_tokens)", "p.grad /= num_tokens"]
)
def test_gradients_over_a_global_count_are_reported(scale: str) -> None:
    assert _lines(GRAD_STEP.format(scale=scale)) == [9]


@pytest.mark.parametrize(
    "scale",
    [
        "p.grad.mul_(dist.get_world_size() / num_tokens)",
        "p.grad.mul_(world_size / num_tokens)",
        "p.grad.mul_(1.0 / local_tokens)",
    ],
)
def test_gradients_with_a_world_factor_or_a_local_count_are_not_reported(scale: str) -> None:
    assert _lines(GRAD_STEP.format(scale=scale)) == []


def test_gradients_reduced_by_hand_may_be_divided_by_the_global_count() -> None:
    body = (
        "def train_step(model, batch, loss):\n"
        "    num_tokens = (batch != -100).sum()\n"
        "    dist.all_reduce(num_tokens)\n"
        "    loss.backward()\n"
        "    for p in model.parameters():\n"
        "        dist.all_reduce(p.grad)\n"
        "        p.grad.div_(num_tokens)\n"
    )

    assert _lines(body) == []


def test_scaling_before_backward_is_not_reported() -> None:
    body = (
        "def train_step(model, batch, loss):\n"
        "    num_tokens = (batch != -100).sum()\n"
        "    dist.all_reduce(num_tokens)\n"
        "    for p in model.parameters():\n"
        "        p.grad.div_(num_tokens)\n"
        "    loss.backward()\n"
    )

    assert _lines(body) == []


# -- dist.all_reduce inside a loss --------------------------------------------------


@pytest.mark.parametrize(
    "value", ["z_a.T @ z_b / n", "torch.matmul(z_a, z_b)", "torch.einsum('ij,ik->jk', z_a, z_b)"]
)
def test_autograd_less_all_reduce_of_a_product_of_inputs_is_reported(value: str) -> None:
    body = (
        "def contrastive_loss(z_a, z_b, n=1):\n"
        f"    c = {value}\n"
        "    dist.all_reduce(c)\n"
        "    return c.sum()\n"
    )

    assert _lines(body) == [6]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("contrastive_loss", "(z_a.T @ z_b).detach()"),
        ("contrastive_loss", "(z_a > 0).sum()"),
        ("contrastive_loss", "weights @ weights"),
        ("similarity", "z_a.T @ z_b"),
    ],
)
def test_all_reduce_of_constants_or_outside_a_loss_is_not_reported(name: str, value: str) -> None:
    body = f"def {name}(z_a, z_b):\n    c = {value}\n    dist.all_reduce(c)\n    return c.sum()\n"

    assert _lines(body) == []


# -- one tensor under two keys of an in-place reduced dict --------------------------

REDUCER = (
    "def reduce_metrics(metrics):\n"
    "    for v in metrics.values():\n"
    "        dist.all_reduce(v)\n"
    "    return metrics\n"
)


def test_aliased_dict_value_is_reported_at_the_second_key() -> None:
    body = REDUCER + "def acc(num, den):\n    return {'a': num, 'b': den, 'c': num}\n"

    [finding] = findings_of(HEADER + body, select=SELECT)

    assert finding.line == 9
    assert finding.message.startswith("`num` is also the value of `'a'` in this dict")


@pytest.mark.parametrize(
    "reducer",
    ["", "def reduce_metrics(metrics):\n    for v in metrics.values():\n        print(v)\n"],
)
def test_aliased_dict_value_without_an_in_place_reducer_is_not_reported(reducer: str) -> None:
    body = reducer + "def acc(num, den):\n    return {'a': num, 'b': den, 'c': num}\n"

    assert _lines(body) == []


def test_cloned_dict_values_are_not_reported() -> None:
    body = REDUCER + "def acc(num, den):\n    return {'a': num, 'b': den, 'c': num.clone()}\n"

    assert _lines(body) == []


# -- read from the one walk -------------------------------------------------------


def test_reduction_semantics_keeps_every_node_kind_its_reading_needs() -> None:

    assert set(NODE_KINDS) <= set(ReductionSemantics.handlers_on_visit)


def test_reduction_semantics_reads_methods_but_not_functions_nested_in_functions() -> None:
    body = (
        "class Meter:\n"
        "    def end(self, outputs):\n"
        "        acc = outputs.mean()\n"
        "        dist.all_reduce(acc)\n"
        "        return acc\n"
        "def outer():\n"
        "    def inner(outputs):\n"
        "        acc = outputs.mean()\n"
        "        dist.all_reduce(acc)\n"
        "        return acc\n"
        "    return inner\n"
    )

    assert _lines(body) == [7]


def test_finding_decided_after_the_walk_is_suppressed_by_a_noqa_on_its_statement() -> None:
    body = (
        "def end(outputs):\n"
        "    acc = outputs.mean()\n"
        "    handle = wrap(\n"
        "        dist.all_reduce(acc),\n"
        "        1,\n"
        "    )  # noqa: RNK112\n"
        "    return acc, handle\n"
    )

    assert _lines(body) == []


# -- a running total kept in an attribute, SUM-reduced in the method that adds to it ----------


_METRIC = (
    "class Accuracy:\n"
    "    def __init__(self):\n"
    "        self.correct = 0.0\n"
    "        self.total = 0.0\n"
    "\n"
    "    def __call__(self, hits, n, device):\n"
    "        self.correct += hits\n"
    "        self.total += n\n"
)


@pytest.mark.parametrize(
    ("copy", "back"),
    [
        ("torch.tensor(self.correct)", "t.item()"),
        ("torch.tensor(self.correct).to(device)", "t.item()"),
        ("torch.as_tensor(self.correct, device=device)", "float(t)"),
        ("self.correct.clone()", "t"),
        ("self.correct.detach().clone()", "t.cpu()"),
    ],
)
def test_running_total_copied_summed_and_written_back_is_reported(copy: str, back: str) -> None:
    body = (
        _METRIC + f"        t = {copy}\n        dist.all_reduce(t)\n        self.correct = {back}\n"
    )

    assert _lines(body) == [13]


def test_running_total_summed_in_place_is_reported_with_its_name() -> None:
    body = _METRIC + "        dist.all_reduce(self.correct, op=ReduceOp.SUM)\n"

    found = findings_of(HEADER + body, select=SELECT)

    assert [f.line for f in found] == [12]
    assert found[0].message.startswith(
        "`self.correct` is a running total (`+=` in this method) that this all-reduce replaces "
        "by its SUM over ranks"
    )


@pytest.mark.parametrize(
    "tail",
    [
        # This call's part is reduced, then added: the fix.
        "        part = torch.tensor(hits)\n        dist.all_reduce(part)\n"
        "        self.seen = part.item()\n",
        # A copy reduced and returned, the total kept local.
        "        t = torch.tensor(self.correct)\n        dist.all_reduce(t)\n        return t\n",
        # Written back into another attribute.
        "        t = torch.tensor(self.correct)\n        dist.all_reduce(t)\n"
        "        self.global_correct = t.item()\n",
        # Reduced with another op.
        "        dist.all_reduce(self.correct, op=ReduceOp.MAX)\n",
        # An attribute of another object.
        "        dist.all_reduce(other.correct)\n",
        # Written back before the reduction.
        "        t = torch.tensor(self.correct)\n        self.correct = t.item()\n"
        "        dist.all_reduce(t)\n",
    ],
)
def test_running_total_not_replaced_by_its_sum_is_not_reported(tail: str) -> None:
    assert _lines(_METRIC + tail) == []


def test_total_summed_in_a_method_that_does_not_add_to_it_is_not_reported() -> None:
    body = (
        "class Accuracy:\n"
        "    def update(self, hits):\n"
        "        self.correct += hits\n"
        "\n"
        "    def get_metric(self):\n"
        "        t = torch.tensor(self.correct)\n"
        "        dist.all_reduce(t)\n"
        "        self.correct = t.item()\n"
        "        return self.correct\n"
    )

    assert _lines(body) == []
