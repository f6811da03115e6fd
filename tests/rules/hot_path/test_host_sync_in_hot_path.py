"""RNK201's evidence and tiers, Ray drivers, host copies and periodic names (issue 37).

What a sync's value is for (analysis/walk/host_uses.py), why its code is hot
(analysis/project/hot_regions.py ``HotRegion.training`` and ``trains``), and the tier
that gives (rules/hot_path/host_sync_in_hot_path.py).
"""

from __future__ import annotations

import importlib.util
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.analysis.project.hot_regions import trains
from ranklint.analysis.walk.hot_markers import TRAINER_HOOK
from ranklint.findings import Finding
from ranklint.model.events import HotKind, HotReason
from tests.conftest import REPO_ROOT, findings_of

TRAIN_LOOP = """\
import torch


def train(model, loader, optimizer, n, x: torch.Tensor):
    for batch in loader:
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
{body}
"""


def _train(body: str) -> list[Finding]:
    lines = textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8)
    return findings_of(TRAIN_LOOP.format(body=lines), select=("RNK201",))


def _tiers(body: str) -> list[tuple[int, str]]:
    """(line within ``body``, confidence) of each RNK201 finding in a training loop."""
    return [(f.line - 8, f.confidence.value) for f in _train(body)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # Values read to log, keep or return: avoidable, the default tier.
        ("total = loss.item()", [(1, "high")]),
        ("print(f'{loss}')", [(1, "high")]),
        ("history.append(float(loss))", [(1, "high")]),
        ("pbar.set_postfix(loss=loss.item())", [(1, "high")]),
        ("max_reward = x.max().item()", [(1, "high")]),
        ("nan_count = x.isnan().sum().item()", [(1, "high")]),
        # Values that decide control flow or a size: often needed, low.
        ("if loss > 5:\n    pass", [(1, "low")]),
        ("if loss.item() > 5:\n    pass", [(1, "low")]),
        ("if x.all().item():\n    pass", [(1, "low")]),
        ("while x.any().item():\n    pass", [(1, "low")]),
        ("while x.any():\n    pass", [(1, "low")]),
        ("stop = loss.item() > 5", [(1, "low")]),
        ("k = int(x.sum())", [(1, "low")]),
        ("k = int(x.sum().item())", [(1, "low")]),
        ("y = x[: n.item()]", [(1, "low")]),
        ("y = x[n.item()]", [(1, "low")]),
        ("y = x[1 : n.item() + 1]", [(1, "low")]),
        ("for i in range(n.item() + 1):\n    pass", [(1, "low")]),
        ("y = model(x, max_seqlen=x.max().item())", [(1, "low")]),
        ("y = model(x, num_tokens=x.sum().item())", [(1, "low")]),
        ("max_len = x.max().item()", [(1, "low")]),
        ("self.seq_len = x.max().item() + 1", [(1, "low")]),
        ("seq_start = x[0].item()", [(1, "low")]),
        ("keep = x[x > 0]", [(1, "low")]),
        ("idx = torch.nonzero(x)", [(1, "low")]),
        # A keyword that is not a size is a read.
        ("y = log(x, value=x.max().item())", [(1, "high")]),
        # A synchronize is medium: often a timing measurement.
        ("torch.cuda.synchronize()", [(1, "medium")]),
    ],
)
def test_a_sync_in_a_training_loop_is_tiered_by_what_its_value_is_for(
    body: str, expected: list[tuple[int, str]]
) -> None:
    assert _tiers(body) == expected


def test_a_sync_records_its_source_and_reach_as_evidence() -> None:
    (read,) = _train("total = loss.item()")
    (decision,) = _train("if loss > 5:\n    pass")

    assert read.evidence is not None
    assert decision.evidence is not None
    assert read.evidence.source is not None
    assert read.evidence.reach is not None
    assert (read.evidence.source.kind, read.evidence.reach.kind) == (
        "value-read",
        "training-loop",
    )
    assert decision.evidence.source is not None
    assert decision.evidence.source.kind == "host-decision"
    assert "`loss > 5`" in decision.evidence.source.detail


def test_the_default_run_reports_only_the_high_tier() -> None:
    body = "        total = loss.item()\n        if loss > 5:\n            pass"
    source = TRAIN_LOOP.format(body=body)

    default = lint_source(source, "snippet.py", Config(select=("RNK201",)))

    assert [(f.line, f.confidence.value) for f in default.findings] == [(9, "high")]


def _reach(source: str) -> list[tuple[str | None, str]]:
    return [
        (f.evidence.reach.kind if f.evidence and f.evidence.reach else None, f.confidence.value)
        for f in findings_of(source, select=("RNK201",))
    ]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            """
            def generate(model, ids):
                for _ in range(8):
                    ids = model(ids)
                    print(ids.item())
            """,
            [("inference-loop", "medium")],
        ),
        (
            """
            import torch


            class Head(torch.nn.Module):
                def forward(self, x: torch.Tensor):
                    return x.sum().item()
            """,
            [("module-forward", "medium")],
        ),
        (
            """
            import torch


            def predict_step(model, x: torch.Tensor):
                return x.sum().item()
            """,
            [("inference-function", "medium")],
        ),
        (
            """
            import torch


            def train_step(model, x: torch.Tensor):
                return x.sum().item()
            """,
            [("named-function", "high")],
        ),
        (
            """
            import torch


            @torch.compile
            def step(x: torch.Tensor):
                return x.sum().item()
            """,
            [("compiled-function", "high")],
        ),
        (
            """
            import torch


            def rollout(x: torch.Tensor):  # ranklint: hot
                return x.sum().item()
            """,
            [("marked-function", "high")],
        ),
        (
            """
            import torch


            @torch.compile
            def pick(x: torch.Tensor):
                return x.argmax()


            def generate(ids: torch.Tensor):
                for _ in range(8):
                    ids = pick(ids)
                    print(ids.item())
            """,
            [("inference-loop", "medium")],
        ),
        (
            """
            def train_step(model, batch):
                return model(batch).mean()


            def fit(model, loader):
                for batch in loader:
                    loss = train_step(model, batch)
                    print(loss.item())
            """,
            [("training-loop", "high")],
        ),
        (
            """
            def log(loss):
                print(loss.item())


            def fit(model, loader, optimizer):
                for batch in loader:
                    loss = model(batch)
                    loss.backward()
                    optimizer.step()
                    log(loss)
            """,
            [("training-loop", "high")],
        ),
    ],
    ids=[
        "generation-loop",
        "forward",
        "predict-step",
        "train-step",
        "compiled",
        "marked",
        "loop-calling-a-compiled-function",
        "loop-calling-a-train-step",
        "chain-from-a-training-loop",
    ],
)
def test_the_reach_of_a_sync_says_whether_its_code_trains(
    source: str, expected: list[tuple[str, str]]
) -> None:
    assert _reach(source) == expected


@pytest.mark.parametrize(
    ("reason", "name", "expected"),
    [
        (HotReason(HotKind.NAMED), "train_step", True),
        (HotReason(HotKind.NAMED), "Trainer.training_step", True),
        (HotReason(HotKind.NAMED, TRAINER_HOOK), "MyTrainer.compute_loss", True),
        (HotReason(HotKind.NAMED, TRAINER_HOOK), "MyTrainer.prediction_step", False),
        (HotReason(HotKind.NAMED), "validation_step", False),
        (HotReason(HotKind.NAMED), "Model.eval_step", False),
        (HotReason(HotKind.NAMED), "generate_step", False),
        (HotReason(HotKind.NAMED), "rollout_step", False),
        (HotReason(HotKind.MODULE_FORWARD), "Net.forward", False),
        (HotReason(HotKind.COMPILED, "torch.compile"), "train_step", False),
        (HotReason(HotKind.MARKED), "train_step", False),
    ],
)
def test_only_a_function_named_like_a_training_step_trains(
    reason: HotReason, name: str, expected: bool
) -> None:
    assert trains(reason, name) is expected


# -- Ray drivers: values the workers sent back are on the host ----------------

RAY_DRIVER = """
import ray
import torch


{decorator}
class Trainer:
    def fit(self, model, loader, optimizer):
        for batch in loader:
            loss = model(batch)
            loss.backward()
            optimizer.step()
            out = self.results
            print(out["x"].mean().item())
            mask = out["m"]
            kept = out["x"][mask.nonzero()]
            on_gpu = torch.zeros(3, device="cuda")
            print(on_gpu.sum().item())
"""


@pytest.mark.parametrize(
    ("decorator", "expected"),
    [
        # A CPU-only actor: only the tensor it made on a device syncs.
        ("@ray.remote(num_cpus=1)", [18]),
        ("@ray.remote(num_cpus=1, num_gpus=0)", [18]),
        ("@ray.remote(num_gpus=0.0)", [18]),
        # A GPU actor, or an actor whose GPUs may come with `.options(...)`.
        ("@ray.remote(num_gpus=1)", [14, 16, 18]),
        ("@ray.remote(num_cpus=1, num_gpus=gpus)", [14, 16, 18]),
        ("@ray.remote", [14, 16, 18]),
        ("", [14, 16, 18]),
    ],
)
def test_a_cpu_only_ray_actor_reads_host_values(decorator: str, expected: list[int]) -> None:
    found = findings_of(RAY_DRIVER.format(decorator=decorator), select=("RNK201",))

    assert [f.line for f in found] == expected


def test_a_class_or_function_that_fetches_results_with_ray_get_is_a_driver() -> None:
    source = """
    import ray
    import torch


    class Driver:
        def fit(self, model, loader, optimizer, workers):
            for batch in loader:
                loss = model(batch)
                loss.backward()
                optimizer.step()
                out = ray.get([w.step.remote(batch) for w in workers])
                print(out[0].mean().item())


    def run(model, loader, optimizer, workers):
        for batch in loader:
            loss = model(batch)
            loss.backward()
            optimizer.step()
            out = ray.get(workers[0].step.remote(batch))
            print(out.mean().item())
            print(loss.item())


    def worker(model, loader, optimizer):
        for batch in loader:
            loss = model(batch)
            loss.backward()
            optimizer.step()
            print(batch.mean().item())
    """

    found = findings_of(source, select=("RNK201",))

    # `loss` is known to be a device tensor (a model's output) even in a driver.
    assert [f.line for f in found] == [23, 31]


def test_ray_get_means_nothing_without_import_ray() -> None:
    source = """
    class ray:
        @staticmethod
        def get(x):
            return x


    def fit(model, loader, optimizer):
        for batch in loader:
            loss = model(batch)
            loss.backward()
            optimizer.step()
            out = ray.get(batch)
            print(out.mean().item())
    """

    assert [f.line for f in findings_of(source, select=("RNK201",))] == [14]


# -- host copies, legacy constructors -----------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("labels = x.detach().cpu()\nrows = [r[r != -100].tolist() for r in labels]", [1]),
        ("labels = x.cpu()\nfor r in labels:\n    r.tolist()", [1]),
        ("rows = {i: r.tolist() for i, r in enumerate(x.cpu())}", [1, 1]),
        ("rows = [r.tolist() for r in torch.arange(4)]", []),
        ("v = torch.Tensor([1.0, 2.0]).to(dtype=torch.int32, device='cpu')", []),
        ("v = torch.LongTensor([1, 2]).tolist()", []),
        ("v = torch.FloatTensor([1.0]).item()", []),
        # A comprehension's target is its own: the name outside keeps its kind.
        ("r = x * 2\nrows = [r.tolist() for r in x.cpu()]\nprint(float(r))", [2, 3]),
    ],
)
def test_rows_of_a_host_copy_and_legacy_constructors_are_on_the_host(
    body: str, expected: list[int]
) -> None:
    assert [line for line, _ in _tiers(body)] == expected


# -- periodic and once-only tests ----------------------------------------------


@pytest.mark.parametrize(
    ("test", "reported"),
    [
        # Names of a count or a value are not periodic events.
        ("num_valid > 0", True),
        ("valid", True),
        ("eval_count > 0", True),
        ("self.num_eval_samples", True),
        ("eval_tokens", True),
        ("log_mask", True),
        ("eval_size", True),
        ("eval_loss < best", True),
        # Names of a periodic event.
        ("is_eval_step", False),
        ("self.should_log(step)", False),
        ("do_checkpoint", False),
        ("validation_due", False),
        # The last iteration of a loop.
        ("i == len(loader) - 1", False),
        ("epoch == num_epochs - 1", False),
        ("len(loader) - 1 == i", False),
        ("i == self.max_iters - 1", False),
        ("i == len(loader) - offset", False),
        # Not the last iteration: a bound alone, or a difference of other names.
        ("i == len(loader)", True),
        ("i == world_size - 1", True),
        ("num_steps - 1 == n", False),
        ("x.sum() == num_steps - 1", True),
    ],
)
def test_a_branch_is_periodic_only_when_its_test_names_an_event_or_the_last_step(
    test: str, reported: bool
) -> None:
    found = _tiers(f"if {test}:\n    history.append(loss.item())")

    assert ((2, "high") in found) is reported


# -- Ray driver loops: steps dispatched to worker groups -----------------------

DRIVER_LOOP = """
{imports}


class Pipeline:
    def run(self, batches):
        for batch in batches:
            {step}
            out = self.actor.train_step(batch)
            print(out.loss.item())
"""


@pytest.mark.parametrize(
    ("imports", "step", "expected"),
    [
        # A Ray program whose loop only dispatches steps: a driver.
        ("import ray", "self.critic.train_step(batch)", ("driver-loop", "low")),
        ("from ray.util import queue", "pass", ("driver-loop", "low")),
        # Without Ray the object may train in this process.
        ("import torch", "pass", ("training-loop", "high")),
        # A loop that also trains itself is no driver.
        ("import ray", "batch.loss.backward()", ("training-loop", "high")),
        ("import ray", "self.optimizer.step()", ("training-loop", "high")),
    ],
)
def test_a_ray_loop_that_only_dispatches_its_steps_is_a_low_driver_loop(
    imports: str, step: str, expected: tuple[str, str]
) -> None:
    source = DRIVER_LOOP.format(imports=imports, step=step)

    assert _reach(source) == [expected]


def test_a_function_called_from_a_driver_loop_is_low_too() -> None:
    source = """
    import ray


    def log(out):
        print(out.mean().item())


    def run(workers, batches):
        for batch in batches:
            out = workers.train_step(batch)
            log(out)
    """

    assert _reach(source) == [("driver-loop", "low")]


@pytest.mark.parametrize(
    ("guard", "reported"),
    [
        # `or` fails only where both operands fail: once-only when one does so.
        ("if step != capture_step or state is not None:\n    return", False),
        ("if state is not None or step != capture_step:\n    return", False),
        ("if state is not None or ready:\n    return", True),
        # A step difference below an interval: all but one step in each interval.
        ("if step - self.last_step < interval:\n    return", False),
        ("if step - self.last_step <= interval:\n    return", False),
        ("if step - self.last_step >= interval:\n    pass\nelse:\n    return", False),
        ("if step - self.last_step == interval:\n    return", True),
        ("if self.total - step < interval:\n    return", True),
        ("if step - self.last_step > interval:\n    return", True),
    ],
)
def test_a_helper_whose_guard_returns_on_most_steps_is_not_hot(guard: str, reported: bool) -> None:
    lines = textwrap.indent(guard, "    ")
    source = f"""
import torch


def maybe_log(step, x: torch.Tensor):
{lines}
    print(x.sum().item())


def train(model, loader, optimizer, x: torch.Tensor):
    for step, batch in enumerate(loader):
        loss = model(batch)
        loss.backward()
        optimizer.step()
        maybe_log(step, x)
"""

    assert bool(findings_of(source, select=("RNK201",))) is reported


@pytest.mark.parametrize(
    ("test", "reported"),
    [
        ("last_step", False),
        ("is_last_step", False),
        ("self.final_iteration", False),
        ("last_step or step % 250 == 0", False),
        ("is_last", True),
        ("last", True),
        ("is_last_microbatch", True),
        ("last_loss", True),
        # A counter at a loop's bound: the end of the loop.
        ("step >= total_steps", False),
        ("self.iter_count > self.max_iters", False),
        ("total_steps <= step", False),
        ("max_steps < self.global_step", False),
        ("batch_count == num_batches_per_epoch", False),
        ("self.global_step >= self.num_batches", False),
        ("step > max_epochs", False),
        ("step % 10 == 0 or self.iter_count >= self.total_steps", False),
        ("i % 10 == 0 or batch_count == num_batches_per_epoch or step == total_steps - 1", False),
        # Not the end: a bound that is no loop's, a test that holds on most steps,
        # or no counter.
        ("step >= warmup_steps", True),
        ("step >= total_tokens", True),
        ("step >= total", True),
        ("step < total_steps", True),
        ("total_steps >= step", True),
        ("step <= max_steps", True),
        ("loss >= total_steps", True),
        ("step % 10 == 0 or step >= warmup_steps", True),
        # The last batch of an epoch.
        ("last_batch", False),
        ("update_idx % 10 == 0 or last_batch", False),
        ("last_batch_size", True),
        # A check that a value is broken: the arm runs only on a failure.
        ("torch.isnan(loss)", False),
        ("torch.isnan(loss).any()", False),
        ("loss.isnan().any().item()", False),
        ("math.isinf(x)", False),
        ("not math.isfinite(loss)", False),
        ("not torch.isfinite(loss).all()", False),
        ("torch.isnan(loss).any() or torch.isinf(loss).any()", False),
        # ... and not: a check that it is sound, other reads, other calls.
        ("torch.isfinite(loss).all()", True),
        ("torch.isnan(loss).mean()", True),
        ("check(torch.isnan(loss))", True),
        ("isnan", True),
        ("x.a.b.c.any()", True),
    ],
)
def test_a_last_step_flag_holds_on_one_step(test: str, reported: bool) -> None:
    found = _tiers(f"if {test}:\n    history.append(loss.item())")

    assert ((2, "high") in found) is reported


# -- edges of what decides and of Ray drivers (mutant-killing) ------------------


def test_a_shadowed_int_or_range_takes_no_host_size() -> None:
    source = TRAIN_LOOP.replace("import torch\n", "import torch\nfrom mylib import range\n")
    lines = "        for i in range(n.item()):\n            pass"

    (found,) = findings_of(source.format(body=lines), select=("RNK201",))

    assert found.confidence.value == "high"


@pytest.mark.parametrize(("depth", "expected"), [(8, "low"), (9, "high")])
@pytest.mark.parametrize(
    "wrap",
    [
        lambda inner: f"{inner} + 1",
        lambda inner: f"1 + ({inner})",
        lambda inner: f"-({inner})",
    ],
    ids=["left-operand", "right-operand", "unary-minus"],
)
def test_arithmetic_around_a_size_is_followed_eight_operations_deep(
    wrap: Callable[[str], str], depth: int, expected: str
) -> None:
    bound = "n.item()"
    for _ in range(depth):
        bound = wrap(bound)

    assert _tiers(f"for i in range({bound}):\n    pass") == [(1, expected)]
    assert _tiers(f"max_len = {bound}") == [(1, expected)]


def test_a_negated_size_decides_but_a_not_is_a_truth_value() -> None:
    assert _tiers("for i in range(-n.item()):\n    pass") == [(1, "low")]
    assert _tiers("for i in range(not n.item()):\n    pass") == [(1, "high")]


def test_a_ray_actor_decorator_is_found_below_other_decorators() -> None:
    source = RAY_DRIVER.format(decorator="@functools.cache\n@ray.remote(num_cpus=1)")

    source = source.replace("import ray", "import functools\nimport ray")
    found = findings_of(source, select=("RNK201",))

    assert [f.line for f in found] == [20]


@pytest.mark.parametrize(("filler", "driver"), [(10, True), (1500, True), (4000, False)])
def test_a_ray_get_is_looked_for_within_a_budget_of_nodes(filler: int, driver: bool) -> None:
    # The scan walks from the end of the body: a `ray.get` on its first line is
    # reached last, and not at all past the budget.
    padding = "".join(f"        y{i} = {i}\n" for i in range(filler))
    source = (
        "import ray\n\n\nclass Driver:\n    def fit(self, model, loader, optimizer):\n"
        "        ref = ray.get(self.ref)\n"
        f"{padding}"
        "        for batch in loader:\n            loss = model(batch)\n"
        "            loss.backward()\n            optimizer.step()\n"
        "            print(self.results.mean().item())\n"
    )

    found = findings_of(source, select=("RNK201",))

    assert (found == []) is driver


# -- the GPU check of issue 37 (bench/recall/gpu_sync_check.py), its CPU half ----------


def _gpu_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gpu_sync_check", REPO_ROOT / "bench" / "recall" / "gpu_sync_check.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gpu_check_program_is_reported_on_exactly_its_sync_lines(tmp_path: Path) -> None:
    check = _gpu_check()
    path = tmp_path / "loop.py"
    path.write_text(check.PROGRAM, encoding="utf-8")
    expected = check.expected_lines(check.PROGRAM)

    reported = check.reported_lines(path)

    assert sorted(reported) == sorted(line for line, syncs in expected.items() if syncs)
    assert len(expected) == 10


def test_the_gpu_check_flags_each_line_where_ranklint_the_gpu_or_the_mark_disagree() -> None:
    rows = _gpu_check().compare({1: True, 2: False, 3: True, 4: False}, {1, 4}, {1, 3})

    assert [row.startswith("!") for row in rows] == [False, False, True, True]


def test_the_gpu_check_without_a_cuda_device_runs_nothing_and_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the check would run")

    assert _gpu_check().main() == 2
    assert "needs a CUDA device" in capsys.readouterr().err


# -- tests: their loops check code, they do not train ----------------------------

HELPER = """\
def sgd_update(param, lr):
    param.data -= lr * param.grad
    print(param.grad.norm().item())
"""
CALLER = """\
from helper import sgd_update


{loop}
"""
LOOP = """\
def {name}(model, loader, lr):
    for batch in loader:
        model(batch).mean().backward()
        sgd_update(model.weight, lr)
"""


def _method_of(cls: str) -> str:
    return f"class {cls}:\n" + textwrap.indent(LOOP.format(name="run"), "    ")


@pytest.mark.parametrize(
    ("path", "loop", "reported"),
    [
        ("train.py", LOOP.format(name="run"), True),
        ("test_train.py", LOOP.format(name="run"), False),
        ("tests/artifacts/save.py", LOOP.format(name="run"), False),
        ("bottleneck/test.py", LOOP.format(name="run"), False),
        ("check.py", LOOP.format(name="test_update"), False),
        ("tests.py", LOOP.format(name="run"), False),
        ("check.py", _method_of("Test"), False),
        ("check.py", _method_of("Test_update"), False),
        ("check.py", _method_of("TestUpdate"), False),
        # Only a test's name marks it: `testing` and `Tester` do not.
        ("check.py", LOOP.format(name="testing_run"), True),
        ("check.py", _method_of("Tester"), True),
        ("testing.py", LOOP.format(name="run"), True),
    ],
)
def test_a_step_loop_in_a_test_makes_the_code_it_calls_not_hot(
    tmp_path: Path, path: str, loop: str, reported: bool
) -> None:
    (tmp_path / "helper.py").write_text(HELPER)
    caller = tmp_path / path
    caller.parent.mkdir(parents=True, exist_ok=True)
    caller.write_text(CALLER.format(loop=loop))
    config = Config(select=("RNK201",), confidence="low", test_patterns=("test_*.py", "tests/"))

    result = lint_paths([str(tmp_path)], config, jobs=1)

    assert result.errors == []
    lines = [(Path(f.path).name, f.line) for f in result.findings]
    assert lines == ([("helper.py", 3)] if reported else [])


# -- a value assigned, then tested by one of the next statements ------------------


@pytest.mark.parametrize(
    ("body", "tier"),
    [
        # The stop check of many training scripts: the host needs the value.
        ("loss_value = loss.item()\nif not math.isfinite(loss_value):\n    raise", "low"),
        ("n = x.sum().item()\nwhile n > 0:\n    n -= 1", "low"),
        ("n = x.sum().item()\nassert n >= 0", "low"),
        ("n = x.sum().item() + 1\nif n > 0:\n    pass", "low"),
        ("n = x.sum().item()\n" + "a = 1\n" * 7 + "if n > 0:\n    pass", "low"),
        # Tested too far away, not tested, or only an attribute of that name.
        ("n = x.sum().item()\n" + "a = 1\n" * 8 + "if n > 0:\n    pass", "high"),
        ("n = x.sum().item()\nhistory.append(n)", "high"),
        ("n = x.sum().item()\nif self.n > 0:\n    pass", "high"),
        ("n = x.sum().item()\nif m > 0:\n    pass", "high"),
        ("n, m = x.sum().item(), 1\nif n > 0:\n    pass", "high"),
        ("n = m = x.sum().item()\nif n > 0:\n    pass", "high"),
        ("n: float = x.sum().item()\nif n > 0:\n    pass", "high"),
        ("n = x.sum().item(); m = 1\nif n > 0:\n    pass", "high"),
    ],
)
def test_a_value_tested_by_one_of_the_next_eight_statements_decides(body: str, tier: str) -> None:
    assert _tiers(body) == [(1, tier)]


@pytest.mark.parametrize(
    ("body", "reported"),
    [
        # Moving a module is no read of a value.
        ("vae.to('cpu')", False),
        ("self.unet.cpu()", False),
        ("transformer.to('cpu')", False),
        ("text_encoder.to('cpu')", False),
        ("self.discriminator.to('cpu')", False),
        ("lm_head.cpu()", False),
        # A tensor is.
        ("embeddings.to('cpu')", True),
        ("latents.cpu()", True),
    ],
)
def test_moving_a_module_named_for_its_kind_is_no_sync(body: str, reported: bool) -> None:
    assert bool(_tiers(body)) is reported


EPOCH = """\
def run_epoch(model, loader, optimizer, meter):
{before}
    for batch in loader:
        loss = model(batch)
{inside}
{after}
    return meter.avg.item()


def main(model, loader, optimizer, meter, epochs):
    for epoch in range(epochs):
        run_epoch(model, loader, optimizer, meter)
"""


@pytest.mark.parametrize(
    ("before", "inside", "after", "reported"),
    [
        # Gradients reset before a training loop: an epoch per call.
        ("optimizer.zero_grad()", "loss.backward()", "", False),
        ("if meter:\n        optimizer.zero_grad()", "loss.backward()", "", False),
        # A step per call: the optimizer steps outside the loop (accumulation),
        # or the loop only runs the model, or a step function is called outside.
        ("optimizer.zero_grad()", "loss.backward()", "optimizer.step()", True),
        ("optimizer.zero_grad()", "pass", "", True),
        ("optimizer.zero_grad()", "loss.backward()", "train_step(model)", True),
        ("loss = model(loader)", "loss.backward()", "", True),
    ],
)
def test_a_function_that_resets_gradients_before_its_training_loop_runs_an_epoch(
    before: str, inside: str, after: str, reported: bool
) -> None:
    helper = "def train_step(model):\n    model.weight.grad.backward()\n\n\n"
    source = helper + EPOCH.format(
        before=textwrap.indent(before, "    "),
        inside=textwrap.indent(inside, "        "),
        after=textwrap.indent(after, "    "),
    )

    found = [f.line for f in findings_of(source, select=("RNK201",))]

    assert (source.splitlines().index("    return meter.avg.item()") + 1 in found) is reported
