"""Hot code, per file: what makes a loop a step loop, hot functions, periodic guards.

Code is *hot* when it runs once per training or inference step. The walk
records the facts that decide it (the project phase,
:mod:`ranklint.analysis.hot_regions`, joins them across files):

- *markers*: calls that only a step does: ``loss.backward()``,
  ``optimizer.step()`` / ``scheduler.step()``, ``zero_grad()``, a model forward
  (``model(batch)``, ``self.policy(obs)``, ``model.generate(...)``), and calls
  of functions named in ``hot-functions``. A loop whose body reaches a marker,
  directly or through project functions, is a step loop: its body is hot;
- *hot functions*: a name matching ``hot-functions`` (``forward`` only on
  classes that look like ``nn.Module``), ``@torch.compile``, or a
  ``# ranklint: hot`` comment on the ``def`` line;
- *periodic guards*: ``if step % log_every == 0:`` runs once every N steps, a
  deliberate, amortised sync (not hot unless ``allow-periodic-sync = false``).
"""

from __future__ import annotations

import functools
import re

import libcst as cst

from ranklint.analysis.axes import identifier_words
from ranklint.analysis.events import HotKind, HotReason
from ranklint.analysis.names import NamePatterns, NameTable, dotted_name, last_name

# Default `hot-functions`: functions that run once per step or micro-batch.
# `train_one_epoch` is deliberately absent: it runs once per epoch, and the
# step loop inside it is found as a loop.
DEFAULT_HOT_FUNCTIONS: tuple[str, ...] = (
    "train_step",
    "training_step",
    "train_batch",
    "train_on_batch",
    "validation_step",
    "eval_step",
    "test_step",
    "predict_step",
    "generate_step",
    "rollout_step",
    "forward",
)

HOT_COMMENT = re.compile(r"#\s*ranklint:\s*hot\b")
_COMPILE_DECORATORS = frozenset({"torch.compile", "torch._dynamo.optimize"})

# Receivers of `.step()` that make it an optimizer or scheduler step.
_STEPPER_WORDS = frozenset(
    {"optim", "optimizer", "optimizers", "opt", "scheduler", "sched", "lr", "scaler"}
)
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
    return None, False  # pragma: no mutate  (the flag is read only with a reason)


def _has_hot_comment(node: cst.FunctionDef) -> bool:
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        comment = body.header.comment
    else:
        comment = body.trailing_whitespace.comment
    return comment is not None and HOT_COMMENT.search(comment.value) is not None


def marker_label(node: cst.Call, patterns: NamePatterns) -> tuple[str, bool] | None:
    """(how a step-marking call reads, whether it is a training marker) or None.

    Training markers (``loss.backward()``, ``optimizer.step()``, ``zero_grad()``,
    hot-named calls) name a loop better than a model forward does.
    """
    func = node.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        receiver = last_name(func.value)
        if method in ("backward", "zero_grad"):
            return _label(func), True
        if method == "step":
            if receiver is not None and _STEPPER_WORDS & set(identifier_words(receiver)):
                return _label(func), True
            return None
        if method in _FORWARD_METHODS and receiver is not None and _is_model_name(receiver):
            return _label(func), False
        if method != "forward" and patterns.matches(method):
            return _label(func), True
        if _is_model_name(method):
            return _label(func), False
        return None
    if isinstance(func, cst.Name):
        name = func.value
        if name != "forward" and patterns.matches(name):
            return _label(func), True
        if _is_model_name(name):
            return _label(func), False
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


def is_model_call(func: cst.BaseExpression) -> bool:
    """A call that runs a model's forward (its output is a tensor or a model output)."""
    name = last_name(func) if not isinstance(func, cst.Call) else None
    if name is None:
        return False
    if isinstance(func, cst.Attribute) and func.attr.value in _FORWARD_METHODS:
        receiver = last_name(func.value)
        return receiver is not None and _is_model_name(receiver)
    return _is_model_name(name)


def periodic_arm(test: cst.BaseExpression) -> int:
    """Which arm of a branch on ``test`` runs once every N steps.

    1: the code where the test holds (``step % N == 0``, ``(i + 1) % N == 0
    and rank == 0``); -1: the code where it fails (``step % N != 0``, ``step %
    N``); 0: neither.
    """
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    arm = 0
    if _names_a_periodic_event(test):
        arm = 1
    elif isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        # `a and b` holds only where both hold: periodic if either operand is.
        if periodic_arm(test.left) == 1 or periodic_arm(test.right) == 1:
            arm = 1
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if _is_modulo(test.left) or _is_modulo(target.comparator):
            if isinstance(target.operator, cst.Equal):
                arm = 1
            elif isinstance(target.operator, cst.NotEqual):
                arm = -1
    elif _is_modulo(test):
        arm = -1
    return -arm if negated else arm


# Words that name a periodic event in a condition: `if self.should_log(step):`,
# `if is_eval_step:`, `if step == next_checkpoint:`.
_PERIODIC_WORDS = frozenset(
    {
        "log",
        "logging",
        "eval",
        "evaluate",
        "evaluation",
        "valid",
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


# `log_probs`, `log_softmax`: "log" the function, not the logging.
_NOT_PERIODIC_WORDS = frozenset(
    {"prob", "probs", "logprobs", "softmax", "likelihood", "ratio", "det", "sigmoid", "space"}
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
