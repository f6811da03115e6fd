"""A Lightning step method's `batch` is this rank's data: what is built from it differs per rank."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import codes_by_line

SELECT = ("RNK102",)


def _lines(source: str) -> list[int]:
    return [line for line, _ in codes_by_line(textwrap.dedent(source).lstrip(), select=SELECT)]


def test_synced_log_dict_keyed_by_the_labels_of_the_batch_is_reported() -> None:
    # https://github.com/Lightning-AI/pytorch-lightning/issues/19106
    source = """
        import pytorch_lightning as pl


        class Model(pl.LightningModule):
            def validation_step(self, batch, batch_idx):
                x, y = batch
                metrics = {}
                for cls in y.unique().tolist():
                    metrics[f"loss_{cls}"] = self.loss(x, y)
                self.log_dict(metrics, sync_dist=True)
    """

    assert _lines(source) == [10]


def test_synced_log_dict_keyed_by_a_config_value_is_not_reported() -> None:
    source = """
        import pytorch_lightning as pl


        class Model(pl.LightningModule):
            def validation_step(self, batch, batch_idx):
                x, y = batch
                metrics = {}
                for cls in range(self.num_classes):
                    metrics[f"loss_{cls}"] = self.loss(x, y) * (y == cls).any()
                self.log_dict(metrics, sync_dist=True)
    """

    assert _lines(source) == []


@pytest.mark.parametrize("method", ["training_step", "test_step", "predict_step"])
def test_synced_log_under_a_test_of_the_batch_is_reported_in_every_step_method(
    method: str,
) -> None:
    source = f"""
        class Model(LightningModule):
            def {method}(self, batch, batch_idx):
                if batch["mask"].any():
                    self.log("masked", 1.0, sync_dist=True)
    """

    assert _lines(source) == [4]


@pytest.mark.parametrize(
    ("header", "test"),
    [
        ("def validation_step(self, batch, batch_idx):", "batch_idx == 0"),
        ("def on_validation_end(self, batch):", "batch"),
        ("def helper(self, batch):", "batch"),
    ],
)
def test_batch_index_and_other_methods_batch_are_not_per_rank_data(header: str, test: str) -> None:
    source = f"""
        class Model(LightningModule):
            {header}
                if {test}:
                    self.log("first", 1.0, sync_dist=True)
    """

    assert _lines(source) == []


def test_keys_of_a_dict_batch_are_its_schema_not_per_rank_data() -> None:
    source = """
        class Model(LightningModule):
            def validation_step(self, batch, batch_idx):
                for name, part in batch.items():
                    if part is None:
                        continue
                    self.log(name, 1.0, sync_dist=True)
    """

    assert _lines(source) == []


def test_module_level_function_with_a_batch_parameter_is_not_a_step_method() -> None:
    source = """
        import torch.distributed as dist


        def training_step(batch):
            if batch.sum() > 0:
                dist.barrier()
    """

    assert _lines(source) == []


def test_a_synced_log_under_a_name_built_from_the_batch_is_one_all_reduce_not_a_loop() -> None:
    # `log` reduces one value whatever its name; only `log_dict` reduces per key.
    source = """
        class Model(LightningModule):
            def validation_step(self, batch, batch_idx):
                x, y = batch
                metrics = {f"loss_{cls}": 1.0 for cls in y.unique().tolist()}
                self.log(metrics, 1.0, sync_dist=True)
                self.log_dict(metrics, sync_dist=True)
    """

    assert _lines(source) == [6]
