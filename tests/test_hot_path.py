"""Hot-path analysis (RNK201-RNK203): hot regions, chains across files, tensor-ness, config."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.config import ConfigError, config_from_table
from ranklint.findings import Finding
from tests.conftest import codes_by_line, write

HOT = ("RNK201", "RNK202", "RNK203")


PERIODIC = """
def train(model, loader, optimizer):
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(loss.item())
"""


def test_periodic_sync_is_allowed_by_default() -> None:
    assert codes_by_line(PERIODIC, only=HOT) == []


def test_periodic_sync_is_reported_when_allow_periodic_sync_is_false() -> None:
    config = Config(allow_periodic_sync=False)

    assert codes_by_line(PERIODIC, config=config, only=HOT) == [(7, "RNK201")]


def test_sync_under_a_condition_that_names_logging_or_evaluation_is_periodic() -> None:
    source = """
    def train(model, loader, optimizer, tracker):
        for step, batch in enumerate(loader):
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            if tracker.should_log(step):
                print(loss.item())
            if is_eval_step:
                print(loss.item())
    """

    assert codes_by_line(source, only=HOT) == []


def test_condition_on_log_probabilities_is_not_taken_for_periodic_logging() -> None:
    source = """
    def train(model, loader, optimizer, log_probs):
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            if log_probs is not None:
                print(loss.item())
    """

    assert codes_by_line(source, only=HOT) == [(7, "RNK201")]


def test_per_epoch_code_around_a_step_loop_is_not_hot() -> None:
    source = """
    def train(model, loader, optimizer, epochs):
        for epoch in range(epochs):
            for batch in loader:
                loss = model(batch).mean()
                loss.backward()
                optimizer.step()
                print(loss.item())
            print(f"epoch {epoch} loss {loss.item()}")
    """

    assert codes_by_line(source, only=HOT) == [(7, "RNK201")]


def test_sync_after_the_training_loop_is_not_reported() -> None:
    source = """
    def train(model, loader, optimizer):
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
        print(loss.item())
        return float(loss)
    """

    assert codes_by_line(source, only=HOT) == []


def test_loop_without_step_markers_is_not_hot() -> None:
    source = """
    def collect(values):
        out = []
        for value in values:
            out.append(value.item())
        return out
    """

    assert codes_by_line(source, only=HOT) == []


def test_python_numbers_and_shapes_in_a_step_loop_are_not_reported() -> None:
    source = """
    import torch


    def train(model, loader, optimizer, lr: float):
        for batch in loader:
            logits = model(batch)
            loss = logits.mean()
            loss.backward()
            optimizer.step()
            seen = len(logits) + logits.shape[0] + logits.size(1)
            scaled = float(lr) * 2
            if seen > 10 and logits is not None:
                print(f"seen {seen} lr {scaled}")
            host = torch.tensor([1.5, 2.5])
            value = float(host.sum())
    """

    assert codes_by_line(source, only=HOT) == []


def test_reassigned_python_number_is_no_longer_a_tensor() -> None:
    source = """
    def train(model, loader, optimizer):
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            loss = loss.item()
            print(f"{loss:.3f}")
    """

    assert codes_by_line(source, only=HOT) == [(6, "RNK201")]


def test_step_through_a_helper_makes_the_calling_loop_hot() -> None:
    source = """
    def step(model, batch, optimizer):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        return loss


    def train(model, loader, optimizer):
        for batch in loader:
            loss = step(model, batch, optimizer)
            print(loss.item())
    """

    assert codes_by_line(source, only=HOT) == [(11, "RNK201")]


def test_a_function_with_its_own_step_loop_does_not_make_its_callers_loop_hot() -> None:
    source = """
    def train_epoch(model, loader, optimizer):
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
        return loss


    def main(model, loader, optimizer, epochs):
        for epoch in range(epochs):
            loss = train_epoch(model, loader, optimizer)
            print(f"epoch {epoch} loss {loss.item()}")
    """

    assert codes_by_line(source, only=HOT) == []


def test_hot_functions_config_replaces_the_default_names() -> None:
    source = """
    def my_update(loss):
        return loss.item()


    def train_step(loss):
        return loss.item()
    """

    default = codes_by_line(source, only=HOT)
    custom = codes_by_line(source, config=Config(hot_functions=("my_update",)), only=HOT)
    extended = codes_by_line(source, config=Config(extend_hot_functions=("my_*",)), only=HOT)

    assert default == [(6, "RNK201")]
    assert custom == [(2, "RNK201")]
    assert extended == [(2, "RNK201"), (6, "RNK201")]


def test_forward_of_a_plain_class_is_not_hot() -> None:
    source = """
    class Pipeline:
        def forward(self, x):
            return x.item()


    def forward(x):
        return x.item()
    """

    assert codes_by_line(source, only=HOT) == []


def test_forward_of_a_subclass_of_a_project_module_is_hot() -> None:
    source = """
    import torch


    class Base(torch.nn.Module):
        pass


    class Head(Base):
        def forward(self, x):
            return x.item()
    """

    assert codes_by_line(source, only=HOT) == [(10, "RNK201")]


def test_sync_in_an_exception_handler_is_not_reported() -> None:
    source = """
    def train_step(model, batch):
        try:
            loss = model(batch).mean()
        except RuntimeError:
            print(batch.cpu())
            raise
        return loss
    """

    assert codes_by_line(source, only=HOT) == []


def test_rest_of_loop_after_periodic_continue_is_not_hot() -> None:
    source = """
    def train(model, loader, optimizer):
        for step, batch in enumerate(loader):
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            if step % 50:
                continue
            print(loss.item())
    """

    assert codes_by_line(source, only=HOT) == []


def test_suppression_comment_on_the_sync_line_silences_the_finding() -> None:
    source = """
    def train_step(loss):
        return loss.item()  # noqa: RNK201
    """

    assert codes_by_line(source, only=HOT) == []


def test_chained_copy_is_reported_once() -> None:
    source = """
    def train_step(x):
        return x.detach().cpu().numpy().tolist()
    """

    assert codes_by_line(source, only=HOT) == [(2, "RNK201")]


def test_implicit_device_factory_is_opt_in() -> None:
    source = """
    import torch


    def train_step(batch):
        return batch + torch.zeros(4)
    """

    assert codes_by_line(source, only=HOT) == []
    assert codes_by_line(source, config=Config(extend_select=("RNK203",)), only=HOT) == [
        (5, "RNK203")
    ]


# -- across files --------------------------------------------------------------
METRICS = """
def log_metrics(loss, step):
    print("loss", loss.item())
"""
TRAIN = """
from pkg.metrics import log_metrics


def train(model, loader, optimizer):
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        log_metrics(loss, step)
"""


def _package(root: Path) -> Path:
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "metrics.py", METRICS)
    write(root / "pkg" / "train.py", TRAIN)
    return root / "pkg"


def _hot(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.code in HOT]


def test_helper_in_another_module_called_from_the_training_loop_is_reported_with_its_chain(
    tmp_path: Path,
) -> None:
    package = _package(tmp_path)

    result = lint_paths([package], Config(), jobs=1, cache_dir=None)

    (finding,) = _hot(result.findings)
    assert Path(finding.path).name == "metrics.py"
    assert finding.line == 2
    assert "log_metrics() -> loss.item() at" in finding.message
    assert "step loop of `train`" in finding.message
    assert [Path(step.path).name for step in finding.trace] == ["train.py", "metrics.py"]
    assert finding.trace[0].line == 9


def test_chain_findings_are_identical_with_a_cold_and_a_warm_cache(tmp_path: Path) -> None:
    package = _package(tmp_path / "src")
    cache = tmp_path / "cache"

    cold = lint_paths([package], Config(), jobs=1, cache_dir=cache)
    warm = lint_paths([package], Config(), jobs=1, cache_dir=cache)

    assert _hot(cold.findings) == _hot(warm.findings)
    assert len(_hot(warm.findings)) == 1


def test_subset_run_still_sees_the_training_loop_that_makes_a_helper_hot(tmp_path: Path) -> None:
    package = _package(tmp_path)
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\n")

    result = lint_paths(
        [package / "metrics.py"],
        Config(root=tmp_path),
        jobs=1,
        cache_dir=None,
        whole_project=True,
    )

    assert [(Path(f.path).name, f.line) for f in _hot(result.findings)] == [("metrics.py", 2)]


# -- configuration -------------------------------------------------------------
@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"hot-functions": "train_step"}, "expected a list of strings"),
        ({"extend-hot-functions": ["bad name"]}, "is not a name or glob pattern"),
        ({"allow-periodic-sync": "yes"}, "expected true or false"),
    ],
)
def test_bad_hot_path_configuration_is_a_clear_error(
    table: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_table(table, source=None, root=Path.cwd())


def test_hot_path_configuration_is_read_from_the_table() -> None:
    config = config_from_table(
        {"extend-hot-functions": ["update_*"], "allow-periodic-sync": False},
        source=None,
        root=Path.cwd(),
    )

    assert config.extend_hot_functions == ("update_*",)
    assert config.allow_periodic_sync is False


# Each way code is hot, and each kind of cost, as the message words it.
_HOT_REGION_CASES = {
    "marked": (
        (
            "def rollout(policy, obs):  # ranklint: hot\n    value = "
            "policy(obs)\n    return value.item()\n"
        ),
        3,
        "RNK201",
        (
            "`value.item()` copies a tensor to the host and waits for "
            "the device to finish all queued work, every step: it is in "
            "`rollout`, which is marked `# ranklint: hot`; keep the "
            "value on the device (accumulate `x.detach()`) and read it "
            "on the host once per log interval (`if step % log_every == "
            "0:`)"
        ),
    ),
    "compiled": (
        (
            "import torch\n\n\n@torch.compile\ndef step(x: torch.Tensor):\n   "
            " torch.cuda.synchronize()\n    return x\n"
        ),
        6,
        "RNK201",
        (
            "`torch.cuda.synchronize()` blocks the host until the device "
            "has finished all queued work, every step: it is in `step`, "
            "which is compiled with `@torch.compile`; synchronize only "
            "where a measurement needs it, once per log interval, or "
            "time with CUDA events"
        ),
    ),
    "forward": (
        (
            "import torch\n\n\nclass Head(torch.nn.Module):\n    def "
            "forward(self, x: torch.Tensor):\n        return x[x > 0]\n"
        ),
        6,
        "RNK201",
        (
            "`x[x > 0]` has an output size that depends on the data: the "
            "host waits for the device to learn it, every step: it is in "
            "`Head.forward`, which is an `nn.Module`'s forward; use "
            "fixed-size operations instead (`torch.where(mask, x, 0)`, "
            "`masked_fill`, multiplying by the mask), or pass the output "
            "size where the API takes one"
        ),
    ),
    "named": (
        (
            "import torch\n\n\ndef train_step(model, batch):\n    loss = "
            "model(batch).mean()\n    return float(loss)\n"
        ),
        6,
        "RNK201",
        (
            "`float(loss)` converts a tensor to a Python number: the "
            "host waits for the device, every step: it is in "
            "`train_step`, which runs once per step (its name matches "
            "`hot-functions`); keep the value on the device (accumulate "
            "`x.detach()`) and read it on the host once per log interval "
            "(`if step % log_every == 0:`)"
        ),
    ),
    "loop": (
        (
            "def train(model, loader, optimizer):\n    for batch in "
            "loader:\n        loss = model(batch).mean()\n        "
            "loss.backward()\n        optimizer.step()\n        "
            "print(loss.item())\n"
        ),
        6,
        "RNK201",
        (
            "`loss.item()` copies a tensor to the host and waits for the "
            "device to finish all queued work, every step: it is in a "
            "step loop of `train` (the loop calls `loss.backward()`); "
            "keep the value on the device (accumulate `x.detach()`) and "
            "read it on the host once per log interval (`if step % "
            "log_every == 0:`)"
        ),
    ),
    "module-loop": (
        (
            "for batch in loader:\n    loss = model(batch).mean()\n    "
            "loss.backward()\n    if loss > 1:\n        pass\n"
        ),
        4,
        "RNK201",
        (
            "the test `loss > 1` reads a tensor's value on the host: the "
            "host waits for the device, every step: it is in a step loop "
            "at module level (the loop calls `loss.backward()`); keep "
            "the decision on the device (`torch.where`, masking) or "
            "check it once per log interval"
        ),
    ),
    "tensor-loop": (
        (
            "import torch\n\n\ndef train_step(model, batch: torch.Tensor):\n "
            "   for row in model(batch):\n        pass\n"
        ),
        5,
        "RNK202",
        (
            "the loop over `model(batch)` runs Python code once per "
            "tensor element, every step: it is in `train_step`, which "
            "runs once per step (its name matches `hot-functions`); "
            "write it as one tensor operation over the whole tensor "
            "(broadcasting, `torch.where`, `gather`/`scatter`, a "
            "reduction)"
        ),
    ),
    "factory": (
        ("import torch\n\n\ndef train_step(model, batch):\n    return torch.tensor([0.5])\n"),
        5,
        "RNK203",
        (
            "`torch.tensor([0.5])` has no `device=`: it is allocated on "
            "the CPU, then copied to the device and float data without "
            "`dtype=`: it is float32 whatever the model uses, every "
            "step: it is in `train_step`, which runs once per step (its "
            "name matches `hot-functions`); pass `device=` (for example "
            "`device=batch.device`) and `dtype=`, or create the tensor "
            "once outside the step"
        ),
    ),
}


@pytest.mark.parametrize("case", sorted(_HOT_REGION_CASES))
def test_each_hot_region_and_cost_kind_is_worded_in_the_message(case: str) -> None:
    source, line, code, message = _HOT_REGION_CASES[case]

    result = lint_source(source, "m.py", Config(select=("RNK2",)))

    assert [(f.line, f.code, f.message) for f in result.findings] == [(line, code, message)]
