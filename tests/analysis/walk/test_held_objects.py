"""Catalogued objects kept in attributes, and torchmetrics metrics.

A torchmetrics metric's ``compute()`` gathers every rank's state (a barrier,
then all_gathers), unless the metric was built with ``sync_on_compute=False``:
on one rank alone it hangs. It is classified where the metric is built in view
(``acc = BinaryAccuracy()``) or kept in an attribute that the module's methods
assign once (``self.fid = FrechetInceptionDistance()`` in ``__init__``), as is
the forward of a DDP model kept so (``self.model = DDP(net)``).
"""

from __future__ import annotations

import textwrap

import pytest

from ranklint import Config, lint_source
from ranklint.analysis.walk.catalog import METRIC_COMPUTE, is_metric_class, lookup
from ranklint.findings import Finding

pytestmark = pytest.mark.timeout(30)

_HEADER = """\
import torch
import torch.distributed as dist
import torchmetrics
from torch.nn.parallel import DistributedDataParallel as DDP
from torchmetrics import MetricCollection
from torchmetrics.classification import BinaryAccuracy
from torchmetrics.image.fid import FrechetInceptionDistance


"""
_HEADER_LINES = _HEADER.count("\n")


def _rnk102(body: str) -> list[Finding]:
    source = _HEADER + textwrap.dedent(body).lstrip("\n")
    result = lint_source(source, "lib/evaluate.py", Config(select=("RNK102",), confidence="low"))
    assert result.errors == []
    return result.findings


def _lines(body: str) -> list[int]:
    """The lines of the RNK102 findings, counted in ``body`` (from 1)."""
    return [finding.line - _HEADER_LINES for finding in _rnk102(body)]


@pytest.mark.parametrize(
    ("qualified", "expected"),
    [
        ("torchmetrics.Accuracy", True),
        ("torchmetrics.MetricCollection", True),
        ("torchmetrics.classification.BinaryAccuracy", True),
        ("torchmetrics.image.fid.FrechetInceptionDistance", True),
        ("torchmetrics.functional.accuracy", False),  # a function
        ("torchmetrics.functional.classification.Helper", False),  # the functional API
        ("torchmetrics.utilities.dim_zero_cat", False),  # not capitalised
        ("torchmetricsx.Accuracy", False),  # another package
        ("project.torchmetrics.Accuracy", False),
        ("Accuracy", False),
    ],
)
def test_metric_classes_are_capitalised_names_of_torchmetrics_outside_its_functional_api(
    qualified: str, expected: bool
) -> None:
    assert is_metric_class(qualified) is expected


def test_compute_of_any_metric_class_is_the_metric_compute_row_and_other_methods_are_none() -> None:
    assert lookup("torchmetrics.classification.BinaryAccuracy.compute") is METRIC_COMPUTE
    assert lookup("torchmetrics.MetricCollection.compute") is METRIC_COMPUTE
    assert lookup("torchmetrics.classification.BinaryAccuracy.update") is None
    assert lookup("torchmetrics.classification.BinaryAccuracy.__call__") is None
    assert lookup("torchmetrics.functional.Thing.compute") is None
    assert lookup("mypkg.Metric.compute") is None


def test_metric_compute_on_rank_zero_alone_is_reported_with_what_it_gathers() -> None:
    findings = _rnk102(
        """
        def evaluate(preds, target):
            acc = BinaryAccuracy()
            acc.update(preds, target)
            if dist.get_rank() == 0:
                print(acc.compute())
        """
    )

    assert [f.line - _HEADER_LINES for f in findings] == [5]
    assert findings[0].message.startswith(
        "`compute` of a torchmetrics metric (it all-gathers every rank's state) is reached "
        "only when `dist.get_rank() == 0`"
    )


@pytest.mark.parametrize(
    "built",
    [
        "torchmetrics.Accuracy(task='binary')",
        "MetricCollection({'acc': BinaryAccuracy()})",
        "FrechetInceptionDistance(feature=64)",
    ],
)
def test_compute_of_each_kind_of_metric_under_a_rank_test_is_reported(built: str) -> None:
    lines = _lines(
        f"""
        def evaluate(preds, target):
            metric = {built}
            metric.update(preds, target)
            if dist.get_rank() == 0:
                return metric.compute()
        """
    )

    assert lines == [5]


@pytest.mark.parametrize(
    ("built", "why"),
    [
        ("BinaryAccuracy(sync_on_compute=False)", "compute() stays local"),
        ("BinaryAccuracy(process_group=pg)", "a group whose members are unknown"),
    ],
)
def test_metric_compute_under_a_rank_test_is_not_reported_when_built_to_stay_local_or_on_a_group(
    built: str, why: str
) -> None:
    lines = _lines(
        f"""
        def evaluate(preds, target, pg):
            acc = {built}
            acc.update(preds, target)
            if dist.get_rank() == 0:
                print(acc.compute())
        """
    )

    assert lines == [], why


def test_metric_update_and_forward_under_a_rank_test_and_compute_on_every_rank_are_local() -> None:
    lines = _lines(
        """
        def evaluate(preds, target):
            acc = BinaryAccuracy()
            if dist.get_rank() == 0:
                acc.update(preds, target)
                acc(preds, target)
            value = acc.compute()
            if dist.get_rank() == 0:
                print(value)
        """
    )

    assert lines == []


def test_metric_kept_in_an_attribute_is_followed_into_the_methods_that_compute_it() -> None:
    lines = _lines(
        """
        class Module:
            def __init__(self):
                self.fid = FrechetInceptionDistance(feature=64)

            def on_validation_end(self):
                if dist.get_rank() == 0:
                    print(self.fid.compute())
        """
    )

    assert lines == [7]


def test_attribute_assigned_twice_is_not_followed() -> None:
    lines = _lines(
        """
        class Module:
            def __init__(self):
                self.fid = FrechetInceptionDistance(feature=64)

            def reset(self):
                self.fid = object()

            def on_validation_end(self):
                if dist.get_rank() == 0:
                    print(self.fid.compute())
        """
    )

    assert lines == []


def test_ddp_model_kept_in_an_attribute_has_a_collective_forward_unless_buffers_stay_local() -> (
    None
):
    lines = _lines(
        """
        class Trainer:
            def __init__(self, net, other):
                self.model = DDP(net)
                self.quiet = DDP(other, broadcast_buffers=False)

            def evaluate(self, batch):
                if dist.get_rank() == 0:
                    self.quiet(batch)
                    return self.model(batch)
        """
    )

    assert lines == [9]


def test_attribute_of_a_project_class_is_left_to_the_call_graph() -> None:
    lines = _lines(
        """
        class Helper:
            def compute(self):
                return 1


        class Module:
            def __init__(self):
                self.helper = Helper()

            def end(self):
                if dist.get_rank() == 0:
                    return self.helper.compute()
        """
    )

    assert lines == []


def test_ddp_model_kept_in_an_attribute_is_followed_into_the_helper_it_is_passed_to() -> None:
    lines = _lines(
        """
        def evaluate(model, batch):
            return model(batch).sum()


        class Trainer:
            def __init__(self, net):
                self.model = DDP(net)

            def finish(self, batch):
                if dist.get_rank() == 0:
                    print(evaluate(self.model, batch))
                if dist.get_rank() == 0:
                    print(evaluate(self.model.module, batch))
        """
    )

    assert lines == [11]


def test_method_of_a_held_object_without_a_row_of_its_class_falls_back_to_the_method_name() -> None:
    lines = _lines(
        """
        from accelerate import Accelerator


        class Trainer:
            def __init__(self):
                self.accelerator = Accelerator()

            def log(self, t):
                if dist.get_rank() == 0:
                    return self.accelerator.gather(t)
        """
    )

    # `accelerate.Accelerator.gather` is no row; the method row `gather` on an
    # `accelerator` receiver is.
    assert lines == [10]
