"""Hot-path analysis (RNK201-RNK203): hot regions, chains across files, tensor-ness, config."""

from __future__ import annotations

import re
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.config import ConfigError, config_from_table
from ranklint.findings import Finding
from tests.conftest import codes_by_line as _codes_by_line
from tests.conftest import findings_of, write

HOT = ("RNK201", "RNK202", "RNK203")


def _with_rnk201(config: Config) -> Config:
    # Every tier: these tests are about what is hot (the tiers:
    # tests/rules/hot_path/test_host_sync_in_hot_path.py).
    config = replace(config, confidence="low")
    if config.select is not None:
        return config
    return replace(config, extend_select=(*config.extend_select, "RNK201"))


def codes_by_line(
    source: str,
    path: str = "snippet.py",
    config: Config | None = None,
    *,
    select: tuple[str, ...] | None = None,
    only: tuple[str, ...] | None = None,
) -> list[tuple[int, str]]:
    """``tests.conftest.codes_by_line`` with the opt-in RNK201 turned on."""
    base = config if config is not None else Config(select=select)
    return _codes_by_line(source, path, _with_rnk201(base), only=only)


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

    result = lint_paths([package], _with_rnk201(Config()), jobs=1, cache_dir=None)

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

    cold = lint_paths([package], _with_rnk201(Config()), jobs=1, cache_dir=cache)
    warm = lint_paths([package], _with_rnk201(Config()), jobs=1, cache_dir=cache)

    assert _hot(cold.findings) == _hot(warm.findings)
    assert len(_hot(warm.findings)) == 1


def test_subset_run_with_a_warm_cache_still_sees_the_training_loop_that_makes_a_helper_hot(
    tmp_path: Path,
) -> None:
    package = _package(tmp_path)
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\n")
    config = _with_rnk201(Config(root=tmp_path))
    cache = tmp_path / ".cache"
    lint_paths([tmp_path], config, jobs=1, cache_dir=cache)

    result = lint_paths(
        [package / "metrics.py"], config, jobs=1, cache_dir=cache, whole_project=True
    )

    assert [(Path(f.path).name, f.line) for f in _hot(result.findings)] == [("metrics.py", 2)]


def test_cold_subset_run_sees_the_caller_that_makes_a_helper_hot(tmp_path: Path) -> None:
    # The training loop is a caller of the helper: a cold run over the helper
    # finds it by its text (it mentions `log_metrics` and `metrics`).
    package = _package(tmp_path)
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\n")

    result = lint_paths(
        [package / "metrics.py"],
        _with_rnk201(Config(root=tmp_path)),
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

    result = lint_source(source, "m.py", Config(select=("RNK2",), confidence="low"))

    assert [(f.line, f.code, f.message) for f in result.findings] == [(line, code, message)]


# -- step markers ----------------------------------------------------------------
_LOOP_CALLS = re.compile(r"\(the loop calls `(.*?)`\)")


def _loop_marker(body: str) -> str | None:
    """The call a loop's finding names (`the loop calls ...`), None when the loop is not hot.

    ``body`` runs in the loop before a sync (``print(x.item())``) that is reported
    only where the loop is a step loop.
    """
    source = (
        "def train(loader, x, model, optimizer, opt, env, trainer, tokenizer, outputs, loss):\n"
        "    for batch in loader:\n"
        + textwrap.indent(textwrap.dedent(body).strip("\n"), "        ")
        + "\n        print(x.item())\n"
    )
    findings = [f for f in findings_of(source, select=("RNK201",)) if "`x.item()`" in f.message]
    if not findings:
        return None
    (finding,) = findings
    match = _LOOP_CALLS.search(finding.message)
    assert match is not None, finding.message
    return match.group(1)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # Training markers.
        ("loss.backward()", "loss.backward()"),
        ("opt.zero_grad()", "opt.zero_grad()"),
        ("optimizer.step()", "optimizer.step()"),
        ("scaler.step(optimizer)", "scaler.step()"),
        ("trainer.train_step(batch)", "trainer.train_step()"),
        ("train_step(batch)", "train_step()"),
        ('outputs["loss"].backward()', ".backward()"),
        # Model forwards.
        ("model(batch)", "model()"),
        ("self.policy(batch)", "self.policy()"),
        ("model.generate(batch)", "model.generate()"),
        ("model.forward(batch)", "model.forward()"),
        # Not markers: `.step()` of something that is not an optimizer (a scheduler
        # steps once per epoch as often as once per step),
        # methods of a model that are not its forward, `forward` of something not
        # named like a model, classes and functions about models, other calls.
        ("env.step(batch)", None),
        ("self.lr_scheduler.step()", None),
        ("scheduler.step()", None),
        ("model.parameters()", None),
        ("tokenizer.generate(batch)", None),
        ("self.encoder.forward(batch)", None),
        ("forward(batch)", None),
        ("Model(batch)", None),
        ("build_model(batch)", None),
        ("f(batch)", None),
        ("models[0](batch)", None),
    ],
)
def test_a_loop_is_a_step_loop_only_when_it_calls_a_step_marker(
    body: str, expected: str | None
) -> None:
    assert _loop_marker(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("y = model(batch)\noptimizer.step()", "optimizer.step()"),
        ("y = self.policy(batch)\nopt.zero_grad()", "opt.zero_grad()"),
        ("y = model.generate(batch)\nloss.backward()", "loss.backward()"),
        ("y = model(batch)\ntrainer.train_step(y)", "trainer.train_step()"),
        ("y = model(batch)\ntrain_step(y)", "train_step()"),
        ("if batch:\n    y = model(batch)\nloss.backward()", "loss.backward()"),
    ],
)
def test_a_step_loop_is_named_by_its_training_marker_before_an_earlier_forward(
    body: str, expected: str
) -> None:
    assert _loop_marker(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "if batch:\n    optimizer.step()",
        "if batch:\n    pass\nelse:\n    optimizer.step()",
    ],
    ids=["if-arm", "else-arm"],
)
def test_a_step_marker_in_either_arm_of_a_branch_makes_the_loop_a_step_loop(body: str) -> None:
    assert _loop_marker(body) == "optimizer.step()"


# -- periodic code -----------------------------------------------------------------
def _reported_lines_after_the_step(block: str) -> list[int]:
    """Lines (1 = the first line of ``block``) with RNK201 in a step loop ending with ``block``."""
    source = (
        "def train(model, loader, rank, verbose):\n"
        "    for step, batch in enumerate(loader):\n"
        "        loss = model(batch).mean()\n"
        "        loss.backward()\n"
        + textwrap.indent(textwrap.dedent(block).strip("\n"), "        ")
        + "\n"
    )
    return [line - 4 for line, _ in codes_by_line(source, only=("RNK201",))]


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("if step % 10 == 0:\n    print(loss.item())\nelse:\n    print(loss.item())", [4]),
        ("if 0 == step % 10:\n    print(loss.item())\nelse:\n    print(loss.item())", [4]),
        ("if step % 10 != 0:\n    print(loss.item())\nelse:\n    print(loss.item())", [2]),
        ("if step % 10:\n    print(loss.item())\nelse:\n    print(loss.item())", [2]),
        ("if step % 10:\n    pass\nelse:\n    print(loss.item())", []),
        ("if not step % 10 == 0:\n    print(loss.item())\nelse:\n    print(loss.item())", [2]),
        ("if not step % 10:\n    print(loss.item())\nelse:\n    print(loss.item())", [4]),
        ("if not not step % 10 == 0:\n    print(loss.item())\nelse:\n    print(loss.item())", [4]),
        ("if step % 10 == 0 and rank == 0:\n    print(loss.item())", []),
        ("if rank == 0 and step % 10 == 0:\n    print(loss.item())", []),
        ("if verbose and rank == 0:\n    print(loss.item())", [2]),
        ("if step % 10 < 5:\n    print(loss.item())", [2]),
    ],
)
def test_only_the_arm_that_runs_once_every_n_steps_is_exempt_from_hot_findings(
    block: str, expected: list[int]
) -> None:
    assert _reported_lines_after_the_step(block) == expected


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        # The rest runs once every N steps after `if step % N: continue`.
        ("if step % 10:\n    continue\nprint(loss.item())", []),
        # A periodic arm that does not leave the loop: the rest is still hot.
        ("if step % 10:\n    loss.backward()\nprint(loss.item())", [3]),
        # Leaving the loop on a condition that is not periodic: the rest is still hot.
        ("if batch is None:\n    continue\nprint(loss.item())", [3]),
    ],
)
def test_code_after_a_branch_is_exempt_only_when_a_periodic_test_skips_it(
    block: str, expected: list[int]
) -> None:
    assert _reported_lines_after_the_step(block) == expected


def test_rest_of_a_hot_function_after_a_periodic_return_is_not_hot() -> None:
    source = """
    def train_step(step, loss):
        if step % 10:
            return loss
        print(loss.item())
        return loss
    """

    assert codes_by_line(source, only=HOT) == []


@pytest.mark.parametrize(("arguments", "periodic"), [(62, True), (63, False)])
def test_a_periodic_name_is_looked_for_among_the_first_64_names_of_a_condition(
    arguments: int, periodic: bool
) -> None:
    # `should_log(a0, ..., aN-1)`: the call, its N arguments, then the callee's name.
    call = "should_log(" + ", ".join(f"a{i}" for i in range(arguments)) + ")"

    reported = _reported_lines_after_the_step(f"if {call}:\n    print(loss.item())")

    assert reported == ([] if periodic else [2])


# -- hot regions -------------------------------------------------------------------
def test_forward_of_a_module_class_nested_in_another_class_is_hot() -> None:
    source = """
    import torch


    class Outer:
        class Head(torch.nn.Module):
            def forward(self, x):
                return x.item()
    """

    assert codes_by_line(source, only=HOT) == [(7, "RNK201")]


def test_forward_of_a_subclass_of_a_plain_project_class_is_not_hot() -> None:
    source = """
    class Base:
        pass


    class Head(Base):
        def forward(self, x):
            return x.item()
    """

    assert codes_by_line(source, only=HOT) == []


def _module_subclass_chain(levels: int) -> str:
    """``Head``, ``levels`` classes of plain names between it and ``torch.nn.Module``."""
    parts = ["import torch\n\n\nclass Level0(torch.nn.Module):\n    pass\n"]
    parts += [f"\n\nclass Level{i}(Level{i - 1}):\n    pass\n" for i in range(1, levels)]
    parts.append(
        f"\n\nclass Head(Level{levels - 1}):\n    def forward(self, x):\n        return x.item()\n"
    )
    return "".join(parts)


@pytest.mark.parametrize(("levels", "hot"), [(1, True), (6, True), (7, False)])
def test_forward_is_hot_when_nn_module_is_at_most_six_project_classes_up(
    levels: int, hot: bool
) -> None:
    source = _module_subclass_chain(levels)
    head_return = source.count("\n")

    assert codes_by_line(source, only=HOT) == ([(head_return, "RNK201")] if hot else [])


def test_loop_calling_an_nn_module_forward_is_a_step_loop() -> None:
    source = """
    import torch


    class Net(torch.nn.Module):
        def forward(self, x):
            return x * 2

        def predict_all(self, xs, y):
            for x in xs:
                self.forward(x)
                print(y.item())
    """

    (finding,) = findings_of(source, select=HOT)

    assert (finding.line, finding.code) == (12, "RNK201")
    assert "it is in a step loop of `Net.predict_all` (the loop calls `forward()`)" in (
        finding.message
    )


def test_loop_calling_a_function_marked_hot_is_a_step_loop() -> None:
    source = """
    def update(batch):  # ranklint: hot
        return batch


    def main(loader, x):
        for batch in loader:
            update(batch)
            print(x.item())
    """

    (finding,) = findings_of(source, select=HOT)

    assert finding.line == 9
    assert "it is in a step loop of `main` (the loop calls `update()`)" in finding.message


def test_loop_calling_a_recursive_helper_without_markers_is_not_hot() -> None:
    source = """
    def walk(node):
        return walk(node.child)


    def main(nodes, x):
        for node in nodes:
            walk(node)
            print(x.item())
    """

    assert codes_by_line(source, only=HOT) == []


def test_every_loop_calling_a_stepping_helper_is_a_step_loop() -> None:
    source = """
    def step(model, batch, optimizer):
        model(batch).mean().backward()
        optimizer.step()


    def train(model, loader, optimizer, x):
        for batch in loader:
            step(model, batch, optimizer)
            print(x.item())


    def finetune(model, loader, optimizer, x):
        for batch in loader:
            step(model, batch, optimizer)
            print(x.item())
    """

    assert codes_by_line(source, only=HOT) == [(9, "RNK201"), (15, "RNK201")]


def test_only_the_loop_calling_the_helper_that_steps_is_a_step_loop() -> None:
    source = """
    def step(model, batch, optimizer):
        model(batch).mean().backward()


    def describe(batch):
        return str(batch)


    def train(model, loader, optimizer, x):
        for batch in loader:
            describe(batch)
            print(x.item())
        for batch in loader:
            step(model, batch, optimizer)
            print(x.item())
    """

    assert codes_by_line(source, only=HOT) == [(15, "RNK201")]


@pytest.mark.parametrize(
    ("source", "line"),
    [
        (
            """
            def train(model, loader, resume):
                if resume:
                    for batch in loader:
                        loss = model(batch).mean()
                        print(loss.item())
            """,
            5,
        ),
        (
            """
            def train(model, loader):
                try:
                    pass
                except RuntimeError:
                    for batch in loader:
                        loss = model(batch).mean()
                        print(loss.item())
            """,
            7,
        ),
    ],
    ids=["in-a-branch", "in-an-exception-handler"],
)
def test_step_loop_nested_in_a_branch_or_handler_is_found(source: str, line: int) -> None:
    assert codes_by_line(source, only=HOT) == [(line, "RNK201")]


def test_step_loop_of_a_helper_called_from_hot_code_is_reported_once() -> None:
    source = """
    def train_step(model, loader):
        return inner(model, loader)


    def inner(model, loader):
        for batch in loader:
            loss = model(batch).mean()
            print(loss.item())
    """

    (finding,) = findings_of(source, select=HOT)

    assert finding.line == 9
    assert "it is in a step loop of `inner` (the loop calls `model()`)" in finding.message


def _helper_chain(helpers: int) -> str:
    """A step loop calling ``helper1``, which calls ``helper2``, ... each with a sync."""
    parts = ["def train(model, loader, x):\n    for batch in loader:\n        model(batch)\n"]
    parts.append("        helper1(x)\n")
    for i in range(1, helpers + 1):
        call = f"    helper{i + 1}(x)\n" if i < helpers else ""
        parts.append(f"\n\ndef helper{i}(x):\n    print(x.item())\n{call}")
    return "".join(parts)


def test_calls_from_hot_code_are_followed_eight_calls_deep_and_no_further() -> None:
    source = _helper_chain(10)
    # A bound of the analysis (`_MAX_CHAIN`), not yet in RNK201's known limits.
    # helperN's sync is on line 5N + 3.
    expected = [(5 * n + 3, "RNK201") for n in range(1, 9)]

    assert codes_by_line(source, only=HOT) == expected


@pytest.mark.parametrize(
    ("source", "line", "decorator"),
    [
        (
            'import torch\n\n\n@torch.compile(mode="max-autotune")\n'
            "def step(x):\n    return x.item()\n",
            6,
            "torch.compile",
        ),
        (
            "from torch import compile\n\n\n@compile\ndef step(x):\n    return x.item()\n",
            6,
            "compile",
        ),
        (
            'import torch._dynamo\n\n\n@torch._dynamo.optimize("inductor")\n'
            "def step(x):\n    return x.item()\n",
            6,
            "torch._dynamo.optimize",
        ),
        # Not resolved in the file: recognised by how it is written.
        ("@torch.compile\ndef step(x):\n    return x.item()\n", 3, "torch.compile"),
    ],
    ids=["called", "imported-name", "dynamo", "unresolved"],
)
def test_compiled_function_is_hot_however_the_decorator_is_written(
    source: str, line: int, decorator: str
) -> None:
    (finding,) = findings_of(source, select=HOT)

    assert finding.line == line
    assert f"it is in `step`, which is compiled with `@{decorator}`;" in finding.message


def test_one_line_function_marked_hot_is_hot() -> None:
    source = "def fwd(x): return x.item()  # ranklint: hot\n"

    (finding,) = findings_of(source, select=HOT)

    assert finding.line == 1
    assert "it is in `fwd`, which is marked `# ranklint: hot`;" in finding.message


def test_function_named_forward_nested_in_a_module_method_is_not_hot() -> None:
    source = """
    import torch


    class Head(torch.nn.Module):
        def build(self):
            def forward(x):
                return x.item()

            return forward
    """

    assert codes_by_line(source, only=HOT) == []


@pytest.mark.parametrize(
    ("call", "tensor"),
    [
        ("model(batch)", True),
        ("self.model(batch)", True),
        ("model.generate(batch)", True),
        ("tokenizer.generate(batch)", False),
        ("model.parameters()", False),
        ("build_model(batch)", False),
        ("models[0](batch)", False),
    ],
)
def test_a_call_returns_a_tensor_when_it_runs_a_model(call: str, tensor: bool) -> None:
    source = f"""
    def train_step(model, tokenizer, models, batch):
        out = {call}
        return float(out)
    """

    assert codes_by_line(source, only=HOT) == ([(3, "RNK201")] if tensor else [])


@pytest.mark.parametrize(
    "block",
    [
        "if log_timer.ready():\n    print(loss.item())",
        "if next_checkpoint == step:\n    print(loss.item())",
    ],
    ids=["attribute-owner", "comparison-left"],
)
def test_a_periodic_name_anywhere_in_the_condition_makes_it_periodic(block: str) -> None:
    source = (
        "def train(model, loader, log_timer, next_checkpoint):\n"
        "    for step, batch in enumerate(loader):\n"
        "        loss = model(batch).mean()\n"
        "        loss.backward()\n" + textwrap.indent(block, "        ") + "\n"
    )

    assert codes_by_line(source, only=HOT) == []


def _reexported_module_base(root: Path, hops: int) -> Path:
    """``Head(Base)`` in ``pkg/head.py``, ``Base(torch.nn.Module)`` re-exported ``hops`` times."""
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "m0.py", "import torch\n\n\nclass Base(torch.nn.Module):\n    pass\n")
    for i in range(1, hops + 1):
        write(root / "pkg" / f"m{i}.py", f"from pkg.m{i - 1} import Base\n")
    write(
        root / "pkg" / "head.py",
        f"from pkg.m{hops} import Base\n\n\n"
        "class Head(Base):\n    def forward(self, x):\n        return x.item()\n",
    )
    return root / "pkg"


@pytest.mark.parametrize(("hops", "hot"), [(1, True), (5, True), (6, False)])
def test_forward_is_hot_when_its_module_base_is_re_exported_at_most_five_times(
    tmp_path: Path, hops: int, hot: bool
) -> None:
    package = _reexported_module_base(tmp_path, hops)

    result = lint_paths([package], _with_rnk201(Config()), jobs=1, cache_dir=None)

    assert result.errors == []
    found = [(Path(f.path).name, f.line) for f in _hot(result.findings)]
    assert found == ([("head.py", 6)] if hot else [])
