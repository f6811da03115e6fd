"""Hot code, per file: what makes a loop a step loop, hot functions, periodic guards.

Code is *hot* when it runs once per training or inference step. The walk
records the facts that decide it (the project phase,
:mod:`ranklint.analysis.project.hot_regions`, joins them across files):

- *markers*: calls that only a step does: ``loss.backward()``,
  ``optimizer.step()`` (not ``scheduler.step()``), ``zero_grad()``, a model forward
  (``model(batch)``, ``self.policy(obs)``, ``model.generate(...)``), and calls
  of functions named in ``hot-functions``. A loop whose body reaches a marker,
  directly or through project functions, is a step loop: its body is hot;
- *hot functions*: a name matching ``hot-functions`` (``forward`` only on
  classes that look like ``nn.Module``), ``@torch.compile``, or a
  ``# ranklint: hot`` comment on the ``def`` line;
- *periodic guards*: ``if step % log_every == 0:`` runs once every N steps, a
  deliberate, amortised sync (not hot unless ``allow-periodic-sync = false``);
  so do *once-only guards*, whose code runs on one step of a run or epoch:
  ``if step == 1:``, ``if self.step - loaded_step == 1:``, ``if batch_idx ==
  0:`` (a step counter compared for equality), the last iteration (``if i ==
  len(loader) - 1:``), first-step flags (``if first_step:``, ``if
  self._first:``) and ``if not self._initialized:``; and a test that names a
  periodic event (``if self.should_log(step):``, ``if is_eval_step:``) unless
  the name counts or measures something (``num_eval``, ``eval_loss``).
"""

from __future__ import annotations

import functools
import re

import libcst as cst

from ranklint.analysis.walk.axes import identifier_words
from ranklint.analysis.walk.names import NamePatterns, NameTable, dotted_name, last_name
from ranklint.model.events import HotKind, HotReason

HOT_COMMENT = re.compile(r"#\s*ranklint:\s*hot\b")
# Methods a framework's loop calls once per step on a subclass of its `Trainer`
# (Hugging Face `Trainer.compute_loss` / `prediction_step`): hot where the class
# derives from a `...Trainer` (see hot_regions); `training_step` is a default name.
TRAINER_HOOKS = frozenset({"compute_loss", "prediction_step"})
TRAINER_HOOK = "trainer-hook"
# Helpers of a module's forward (`_forward`, `forward_step`, `attn_forward`): hot
# where the class looks like an `nn.Module`, as `forward` is.
_FORWARD_HELPER = re.compile(r"^(_*forward_\w+|\w*_forward)$")
FORWARD_HELPER = "forward-helper"
_COMPILE_DECORATORS = frozenset({"torch.compile", "torch._dynamo.optimize"})

# Receivers of `.step()` that make it an optimizer step (a gradient scaler's
# `scaler.step(optimizer)` is one). Not a scheduler's: `scheduler.step()` runs
# once per epoch as often as once per step, and a per-step one sits beside an
# optimizer step anyway; an epoch loop that calls it is no step loop.
_STEPPER_WORDS = frozenset({"optim", "optimizer", "optimizers", "opt", "scaler"})
# Last word of a callee that names a model: `model(x)`, `self.policy(obs)`.
_MODEL_WORDS = frozenset({"model", "net", "network", "policy", "actor", "critic"})
# Words that make a callee a function about models rather than a model.
_NOT_A_FORWARD = frozenset(
    {
        "build",
        "load",
        "get",
        "create",
        "make",
        "save",
        "init",
        "setup",
        "wrap",
        "prepare",
        "export",
        "compile",
        "print",
        "log",
        "copy",
        "update",
        "sync",
        "to",
        "from",
        "set",
        "register",
        "freeze",
        "unfreeze",
        "summary",
        "run",
        "call",
        "eval",
        "evaluate",
        "train",
        "test",
        "check",
        "compute",
        "apply",
        "execute",
        "invoke",
        "fit",
        "predict",
        "validate",
        "verify",
        "measure",
        "profile",
        "benchmark",
        "trace",
        "script",
        "quantize",
        "convert",
        "optimize",
        "fuse",
        "dump",
        "move",
        "transfer",
        "shard",
        "parallelize",
        "clone",
        "reset",
        "patch",
        "unwrap",
        "wrapped",
        "is",
        "has",
        "num",
    }
)
_FORWARD_METHODS = frozenset({"forward", "generate"})


def hot_reason(
    node: cst.FunctionDef,
    class_name: str | None,
    patterns: NamePatterns,
    names: NameTable,
) -> tuple[HotReason | None, bool]:
    """(why every call of ``node`` is per-step code, whether that needs an nn.Module class)."""
    if _has_hot_comment(node):
        return HotReason(HotKind.MARKED), False
    for decorator in node.decorators:
        callee = decorator.decorator
        if isinstance(callee, cst.Call):
            callee = callee.func
        qualified = names.resolve(callee) or dotted_name(callee)
        if qualified in _COMPILE_DECORATORS:
            return HotReason(HotKind.COMPILED, dotted_name(callee) or ""), False
    name = node.name.value
    if patterns.matches(name):
        if name == "forward":
            if class_name is None:
                return None, False  # pragma: no mutate  (the flag is read only with a reason)
            return HotReason(HotKind.MODULE_FORWARD), True
        return HotReason(HotKind.NAMED), False
    if class_name is not None:
        if name in TRAINER_HOOKS:
            return HotReason(HotKind.NAMED, TRAINER_HOOK), True
        if _FORWARD_HELPER.match(name):
            return HotReason(HotKind.MODULE_FORWARD, FORWARD_HELPER), True
    return None, False  # pragma: no mutate  (the flag is read only with a reason)


def _has_hot_comment(node: cst.FunctionDef) -> bool:
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        comment = body.header.comment
    else:
        comment = body.trailing_whitespace.comment
    return comment is not None and HOT_COMMENT.search(comment.value) is not None


def marker_label(node: cst.Call, patterns: NamePatterns) -> tuple[str, bool, bool] | None:
    """(how a step-marking call reads, whether it is a training marker, whether it
    dispatches the step to another object) or None.

    Training markers (``loss.backward()``, ``optimizer.step()``, ``zero_grad()``,
    hot-named calls) name a loop better than a model forward does. A hot-named
    method of another object (``self.critic.train_step(batch)``) dispatches.
    """
    func = node.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        receiver = last_name(func.value)
        if method in ("backward", "zero_grad"):
            return _label(func), True, False
        if method == "step":
            if receiver is not None and _STEPPER_WORDS & set(identifier_words(receiver)):
                return _label(func), True, False
            return None
        if method in _FORWARD_METHODS and receiver is not None and _is_model_name(receiver):
            return _label(func), False, False
        if method != "forward" and patterns.matches(method):
            return _label(func), True, True
        if _is_model_name(method):
            return _label(func), False, False
        return None
    if isinstance(func, cst.Name):
        name = func.value
        if name != "forward" and patterns.matches(name):
            return _label(func), True, False
        if _is_model_name(name):
            return _label(func), False, False
    return None


def _label(func: cst.BaseExpression) -> str:
    dotted = dotted_name(func)
    if dotted is None and isinstance(func, cst.Attribute):
        dotted = "." + func.attr.value
    return f"{dotted or '...'}()"


def _is_model_name(name: str) -> bool:
    """``model``, ``ddp_model``, ``policy_net``; not ``Model`` (a class) or ``build_model``."""
    if not name or name[0].isupper():
        return False
    words = identifier_words(name)
    return bool(words) and words[-1] in _MODEL_WORDS and not _NOT_A_FORWARD & set(words)


def is_model_name(name: str, also: tuple[str, ...] = ()) -> bool:
    """Whether ``name`` names a model (see ``_is_model_name``), or ends in a word of ``also``."""
    words = identifier_words(name)
    return _is_model_name(name) or bool(words and words[-1] in also)


def is_model_call(func: cst.BaseExpression) -> bool:
    """A call that runs a model's forward (its output is a tensor or a model output)."""
    name = last_name(func) if not isinstance(func, cst.Call) else None
    if name is None:
        return False
    if isinstance(func, cst.Attribute) and func.attr.value in _FORWARD_METHODS:
        receiver = last_name(func.value)
        return receiver is not None and _is_model_name(receiver)
    return _is_model_name(name)


def periodic_arm(test: cst.BaseExpression, depth: int = 0) -> int:
    """Which arm of a branch on ``test`` runs once every N steps, or once only.

    1: the code where the test holds (``step % N == 0``, ``(i + 1) % N == 0
    and rank == 0``, ``step == 1``, ``first_step``, ``batch_idx == 0 or (batch_idx
    + 1) % N == 0``); -1: the code where it fails (``step % N != 0``, ``step %
    N``, ``self._initialized``); 0: neither.
    """
    if depth > 16:
        return 0
    negated = False  # pragma: no mutate (`None` reads as `False`)
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    arm = 0
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        # Before the names: `step - last < log_interval` names an interval but
        # holds on all steps but one in each.
        arm = _throttle(test.left, test.comparisons[0])
    if arm:
        pass
    elif failure := _checks_for_failure(test):
        # `if torch.isnan(loss).any():`, `if not math.isfinite(loss):`: a failure.
        arm = failure
    elif _names_a_periodic_event(test):
        arm = 1
    elif isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        # `a and b` holds only where both hold: periodic if either operand is.
        if periodic_arm(test.left, depth + 1) == 1 or periodic_arm(test.right, depth + 1) == 1:
            arm = 1
    elif isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        # `a or b` holds where either holds: periodic if both operands are. It
        # fails only where both fail: if one fails on all but a few steps
        # (`step != capture_step or done`), so does the whole test.
        left, right = periodic_arm(test.left, depth + 1), periodic_arm(test.right, depth + 1)
        if left == 1 and right == 1:
            arm = 1
        elif -1 in (left, right):
            arm = -1
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if _is_modulo(test.left) or _is_modulo(target.comparator):
            if isinstance(target.operator, cst.Equal):
                arm = 1
            elif isinstance(target.operator, cst.NotEqual):
                arm = -1
        else:
            arm = _once_only_comparison(test.left, target)
    elif _is_modulo(test):
        arm = -1
    else:
        arm = _once_only_flag(test)
    return -arm if negated else arm


# Words of a step counter: `step`, `global_step`, `self.iteration`, `batch_idx`.
_COUNTER_WORDS = frozenset({"step", "steps", "iter", "iters", "iteration", "iterations"})
_BATCH_INDEX_WORDS = frozenset({"idx", "id", "index", "nb", "i", "no", "count"})
# Words of a count or a bound, not a counter (`num_steps`, `max_iters`), or of
# a counter that restarts every step (`micro_step` under gradient accumulation).
_NOT_A_COUNTER = frozenset(
    {
        "num",
        "n",
        "max",
        "min",
        "total",
        "size",
        "sizes",
        "per",
        "len",
        "length",
        "limit",
        "warmup",
        "last",
        "final",
        "end",
        "micro",
        "microstep",
        "microbatch",
        "accum",
        "accumulation",
        "accumulate",
        "grad",
        "gradient",
        "inner",
        "sub",
        "chunk",
        "layer",
        "stage",
        "gas",
        "fn",
        "func",
        "function",
    }
)
# A flag that holds on the first step only (`first_step`, `self._first`).
_FIRST_FLAG_WORDS = frozenset(
    {"first", "is", "step", "iter", "iteration", "call", "time", "run", "pass", "forward"}
)
# What a last-step flag counts (`last_step`, `last_batch`).
_LAST_FLAG_COUNTERS = _COUNTER_WORDS | {"batch"}
# A flag that holds from the second step on (`self._initialized`).
_DONE_FLAG_WORDS = frozenset({"initialized", "initialised", "inited", "warmed"})
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _words(name: str) -> set[str]:
    return {word.lower() for part in identifier_words(name) for word in _CAMEL.findall(part)}


def _is_step_counter(node: cst.BaseExpression) -> bool:
    """``step``, ``self.global_step``, ``batch_idx``, ``self.step - loaded_step``."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return _is_step_counter(node.left)
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return False
    name = last_name(node)
    words = _words(name) if name else set()
    if words & _NOT_A_COUNTER:
        return False
    return bool(words & _COUNTER_WORDS) or ("batch" in words and bool(words & _BATCH_INDEX_WORDS))


# Words of a loop's bound: `i == len(loader) - 1`, `epoch == num_epochs - 1`.
_BOUND_WORDS = frozenset({"num", "last", "final", "total", "max"})
# What a bound counts, besides steps: `num_batches`, `max_epochs`.
_UNIT_WORDS = frozenset({"batch", "batches", "epoch", "epochs"})


def _is_last_of_loop(node: cst.BaseExpression) -> bool:
    """``len(loader) - 1``, ``num_epochs - 1``: the last iteration's index."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract)):
        return False
    node = node.left
    if isinstance(node, cst.Call):
        return isinstance(node.func, cst.Name) and node.func.value == "len"
    name = last_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    return name is not None and bool(_words(name) & _BOUND_WORDS)


def _is_bound(node: cst.BaseExpression) -> bool:
    """``total_steps``, ``self.max_iters``, ``num_batches_per_epoch``: a loop's bound."""
    name = last_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    words = _words(name) if name else set()
    return bool(words & _BOUND_WORDS) and bool(words & (_COUNTER_WORDS | _UNIT_WORDS))


def _once_only_comparison(left: cst.BaseExpression, target: cst.ComparisonTarget) -> int:
    """``step == 1``, ``i == len(loader) - 1`` or ``step >= total_steps`` holds on one
    step (1); ``step != 0`` on all but one (-1)."""
    right = target.comparator
    operator = target.operator
    if (
        isinstance(operator, (cst.GreaterThanEqual, cst.GreaterThan))
        and _is_step_counter(left)
        and _is_bound(right)
    ) or (
        isinstance(operator, (cst.LessThanEqual, cst.LessThan))
        and _is_bound(left)
        and _is_step_counter(right)
    ):
        return 1  # the end of the loop: it stops there, or runs on once more
    if not (
        _is_step_counter(left)
        or _is_step_counter(right)
        or (isinstance(left, cst.Name) and _is_last_of_loop(right))
        or (isinstance(right, cst.Name) and _is_last_of_loop(left))
    ):
        return 0
    if isinstance(target.operator, cst.Equal):
        return 1
    if isinstance(target.operator, cst.NotEqual):
        return -1
    return 0


def _throttle(left: cst.BaseExpression, target: cst.ComparisonTarget) -> int:
    """``step - last_step >= interval`` holds once every interval steps (1); ``<`` on
    all the others (-1)."""
    if not (
        isinstance(left, cst.BinaryOperation)
        and isinstance(left.operator, cst.Subtract)
        and _is_step_counter(left.left)
    ):
        return 0
    if isinstance(target.operator, (cst.GreaterThanEqual, cst.GreaterThan)):
        return 1
    if isinstance(target.operator, (cst.LessThan, cst.LessThanEqual)):
        return -1
    return 0


def _once_only_flag(test: cst.BaseExpression) -> int:
    """``first_step`` / ``last_step`` hold on one step (1); ``self._initialized``
    after the first (-1)."""
    if isinstance(test, cst.Comparison) or not isinstance(test, (cst.Name, cst.Attribute)):
        return 0
    words = _words(last_name(test) or "")
    # `is_first` alone may name a pipeline stage (`is_first = is_first_stage()`).
    if "first" in words and words <= _FIRST_FLAG_WORDS and words != {"is", "first"}:
        return 1
    # `last_step`, `is_final_iteration`, `last_batch`; not `is_last` (a stage),
    # `last` alone or `is_last_microbatch`.
    for edge in ("last", "final"):
        if (
            edge in words
            and words <= _FIRST_FLAG_WORDS | {edge, "batch"}
            and words & _LAST_FLAG_COUNTERS
        ):
            return 1
    if words & _DONE_FLAG_WORDS and not words & {"not", "un"}:
        return -1
    return 0


# Checks that hold when a value is broken (1) or sound (-1).
_FAILURE_CHECKS = {"isnan": 1, "isinf": 1, "isneginf": 1, "isposinf": 1, "isfinite": -1}
# Reductions and reads of such a check's result: `torch.isnan(x).any().item()`.
_CHECK_READS = frozenset({"any", "all", "item", "sum"})


def _checks_for_failure(test: cst.BaseExpression) -> int:
    """``torch.isnan(loss)``, ``math.isinf(x)``, ``x.isnan().any()`` hold when a value is
    broken (1); ``torch.isfinite(loss).all()`` when it is sound (-1); else 0."""
    node = test
    for _ in range(4):
        if not isinstance(node, cst.Call):
            return 0
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else last_name(func)
        if name in _FAILURE_CHECKS:
            return _FAILURE_CHECKS[name]
        if name not in _CHECK_READS or not isinstance(func, cst.Attribute):
            return 0
        node = func.value
    return 0


# Words that name a periodic event in a condition: `if self.should_log(step):`,
# `if is_eval_step:`, `if step == next_checkpoint:`.
_PERIODIC_WORDS = frozenset(
    {
        "log",
        "logging",
        "eval",
        "evaluate",
        "evaluation",
        "validate",
        "validation",
        "save",
        "checkpoint",
        "ckpt",
        "report",
        "interval",
        "every",
        "print",
        "profile",
        "profiling",
    }
)


# `log_probs`, `log_softmax`: "log" the function, not the logging. `num_eval`,
# `eval_count`, `eval_loss`: a count or a value, which may be set on every step.
_NOT_PERIODIC_WORDS = frozenset(
    {"prob", "probs", "logprobs", "softmax", "likelihood", "ratio", "det", "sigmoid", "space"}
    | {"num", "n", "count", "counts", "total", "sum", "mean", "len", "loss", "losses"}
    | {"tokens", "token", "mask", "masks", "samples", "size"}
)


def _names_a_periodic_event(test: cst.BaseExpression) -> bool:
    """A condition whose names say it holds once in a while (logging, eval, saving)."""
    stack: list[cst.BaseExpression] = [test]
    seen = 0
    while stack and seen < 64:
        node = stack.pop()
        seen += 1
        if isinstance(node, cst.Name):
            if _periodic_name(node.value):
                return True
        elif isinstance(node, cst.Attribute):
            stack.append(node.attr)
            stack.append(node.value)
        elif isinstance(node, cst.Call):
            stack.append(node.func)
            stack.extend(arg.value for arg in node.args)
        elif isinstance(node, cst.UnaryOperation):
            stack.append(node.expression)
        elif isinstance(node, cst.BooleanOperation):
            stack.extend((node.left, node.right))
        elif isinstance(node, cst.Comparison):
            stack.append(node.left)
            stack.extend(target.comparator for target in node.comparisons)
    return False


@functools.lru_cache(maxsize=4096)
def _periodic_name(name: str) -> bool:
    words = {word.lower() for word in identifier_words(name)}
    return bool(words & _PERIODIC_WORDS) and not words & _NOT_PERIODIC_WORDS


def _is_modulo(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo)
