"""RNK505 debug-flag-left-on."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.literals import environ_writes, string_value
from ranklint.analysis.walk.names import dotted_name
from ranklint.findings import Severity
from ranklint.rules.base import Rule

_DEBUG_VARIABLES = frozenset(
    {
        "TORCH_DISTRIBUTED_DEBUG",
        "NCCL_DEBUG",
        "NCCL_DEBUG_SUBSYS",
        "TORCH_CPP_LOG_LEVEL",
        "TORCH_SHOW_CPP_STACKTRACES",
        "CUDA_LAUNCH_BLOCKING",
        "TORCH_NCCL_TRACE_BUFFER_SIZE",
    }
)

_QUIET = frozenset({"OFF", "WARN", "WARNING", "ERROR", "0", "", "FALSE"})


class DebugFlagLeftOn(Rule):
    code = "RNK505"
    name = "debug-flag-left-on"
    severity = Severity.WARNING
    summary = "A distributed or CUDA debugging switch is turned on in code"
    what = """\
Reports, outside files matching `test-patterns`: writes to
`TORCH_DISTRIBUTED_DEBUG`, `NCCL_DEBUG`, `NCCL_DEBUG_SUBSYS`,
`TORCH_CPP_LOG_LEVEL`, `TORCH_SHOW_CPP_STACKTRACES`, `CUDA_LAUNCH_BLOCKING`,
`TORCH_NCCL_TRACE_BUFFER_SIZE` in `os.environ` (unless the literal value turns
them off: `OFF`, `WARN`, `0`, ...), `torch.autograd.set_detect_anomaly(True)`,
`torch.autograd.detect_anomaly()` and `torch.distributed.set_debug_level(...)`,
when they are turned on unconditionally: under an `if` (a `--debug` flag, a
config switch) they are deliberate, and so is anomaly mode with
`check_nan=False` (stack traces only).
"""
    why = """\
These switches are for targeted debugging: `TORCH_DISTRIBUTED_DEBUG=DETAIL`
wraps every collective in a consistency check (an extra collective each),
`NCCL_DEBUG=INFO` floods the logs of every rank, `CUDA_LAUNCH_BLOCKING=1`
makes every kernel launch synchronous, anomaly detection records a traceback
per autograd op. Left on, they cost throughput on every job that imports the
module. Set them for one run from the shell instead.
"""
    limits = """\
Values computed at run time are reported (`os.environ["NCCL_DEBUG"] = level`).
"""
    valid = (
        """
        import os

        import torch

        os.environ["NCCL_DEBUG"] = "WARN"
        torch.autograd.set_detect_anomaly(False)
        level = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF")
        """,
    )
    invalid = (
        """
        import os

        import torch
        import torch.distributed as dist

        os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"  # expect: RNK505
        os.environ.setdefault("CUDA_LAUNCH_BLOCKING", "1")  # expect: RNK505
        torch.autograd.set_detect_anomaly(True)  # expect: RNK505
        dist.set_debug_level(dist.DebugLevel.DETAIL)  # expect: RNK505
        """,
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        self._environment(node)

    def _switched(self) -> bool:
        """Under an `if`: a switch (a flag, a config) turns it on, deliberately."""
        return self.ctx.is_test or bool(self.ctx.conditions)

    def visit_Call(self, node: cst.Call) -> None:
        if self._switched():
            return
        self._environment(node)
        name = self.ctx.names.resolve(node.func)
        if name in _ANOMALY_MODES and _check_nan_off(node, _ANOMALY_MODES[name]):
            return  # anomaly mode for stack traces only, not NaN checks
        if name == "torch.autograd.set_detect_anomaly":
            if node.args and dotted_name(node.args[0].value) == "False":
                return
            self._report(node, "anomaly detection (`set_detect_anomaly`)")
        elif name in _ANOMALY_MODES:  # the `detect_anomaly` context managers
            self._report(node, "anomaly detection (`detect_anomaly`)")
        elif name in (
            "torch.distributed.set_debug_level",
            "torch.distributed.distributed_c10d.set_debug_level",
        ):
            self._report(node, "the distributed debug level (`set_debug_level`)")

    def _environment(self, node: cst.CSTNode) -> None:
        if self._switched():
            return
        for key, value, where in environ_writes(node, self.ctx.names.resolve):
            if key not in _DEBUG_VARIABLES:
                continue
            literal = string_value(value) if value is not None else None
            if literal is not None and literal.strip().upper() in _QUIET:
                continue
            self._report(where, f"`{key}`")

    def _report(self, node: cst.CSTNode, what: str) -> None:
        self.report(
            node,
            f"{what} is turned on in code: a debugging switch that slows every job importing "
            f"this module; remove it and set it for one run from the shell",
        )


# Anomaly-mode switches and the position of their `check_nan` argument.
_ANOMALY_MODES = {
    "torch.autograd.set_detect_anomaly": 1,
    "torch.autograd.detect_anomaly": 0,
    "torch.autograd.anomaly_mode.detect_anomaly": 0,
}


def _check_nan_off(call: cst.Call, position: int) -> bool:
    """``check_nan=False``, by keyword or at its position: stack traces only."""
    for index, arg in enumerate(call.args):
        named = arg.keyword is not None and arg.keyword.value == "check_nan"
        if named or (arg.keyword is None and index == position):
            return dotted_name(arg.value) == "False"
    return False
