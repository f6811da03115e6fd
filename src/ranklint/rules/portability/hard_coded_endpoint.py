"""RNK501 hard-coded-endpoint."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.literals import environ_writes, int_value, string_value
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding
from ranklint.rules.portability._string_rules import _StringRule

logger = logging.getLogger(__name__)

_IPV4 = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?::\d{1,5})?")

_TCP = re.compile(r"tcp://(?P<host>[^:/\s]+):(?P<port>\d{1,5})/?")

_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})

_ENDPOINT_VARIABLES = frozenset({"MASTER_ADDR", "MASTER_PORT"})
# What a launcher sets: a write under a test that it did not (`if "WORLD_SIZE"
# not in os.environ:`) is the fallback of a run nobody launched.
_LAUNCHER_VARIABLES = frozenset({*_ENDPOINT_VARIABLES, "WORLD_SIZE", "RANK", "LOCAL_RANK"})
_LAUNCHER_QUOTED = tuple(f"{q}{key}{q}" for key in sorted(_LAUNCHER_VARIABLES) for q in "\"'")

# Public resolvers used to find the local address of the outbound route.
_ROUTE_PROBES = frozenset({"8.8.8.8", "8.8.4.4", "1.1.1.1", "1.0.0.1"})

_INIT = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.distributed.distributed_c10d.init_process_group",
    }
)


@dataclass
class _Scope:
    """A function (or the module) whose loopback endpoint writes wait for its end."""

    # Loopback address and port writes: (value, message, where).
    local: list[tuple[cst.BaseExpression, str, tuple[cst.CSTNode | None, cst.CSTNode | None]]] = (
        field(default_factory=list)
    )
    ones: set[str] = field(default_factory=set)  # names assigned the literal 1
    single: bool = False  # it starts a one-process group


class HardCodedEndpoint(_StringRule):
    code = "RNK501"
    name = "hard-coded-endpoint"
    severity = Severity.WARNING
    default_enabled = False
    summary = "An IP address, `tcp://` init method or master address/port is written in code"
    what = """\
Reports string literals that are an IPv4 address (with or without a port;
`0.0.0.0` and loopback excepted), `tcp://host:port` strings, and literal
values written to `MASTER_ADDR` / `MASTER_PORT` (`os.environ[...] = ...`,
`putenv`, `update`). Fallbacks are not reported: `setdefault`, and writes
under a test of a variable a launcher sets (`if "MASTER_PORT" not in
os.environ:`, `if "WORLD_SIZE" not in os.environ:`: the values of a run that
no launcher started); nor are public resolvers used to probe the outbound route (`8.8.8.8`,
`1.1.1.1`). As the rendezvous endpoint (`tcp://`,
`MASTER_ADDR`), loopback (`localhost`, `127.0.0.1`) is fine in files
matching `test-patterns` and `script-patterns` and reported elsewhere: a
library that rendezvouses on localhost cannot run on two nodes. A function
that starts a one-process group (`init_process_group(..., world_size=1)`,
`world_size` a name assigned `1` in it, or `WORLD_SIZE` set to 1) may set a loopback `MASTER_ADDR`
and a literal `MASTER_PORT`: no peer ever joins, so there is nothing to
rendezvous with.

Off by default (`extend-select = ["RNK501"]`): on the review corpus's test
half none of its 4 findings was real: two single-node test harnesses that
spawn their ranks on localhost, and an address sent as an HTTP header by a
download script (issue 37). Turn it on to review launch code.
"""
    why = """\
The rendezvous endpoint belongs to the launch, not to the code: a literal
address works on the machine it was written on and hangs at
`init_process_group` everywhere else (a different node, a new allocation, a
second job on the same node fighting over the same port). Launchers
(`torchrun`, SLURM, Kubernetes operators) set `MASTER_ADDR`/`MASTER_PORT`;
code should read them (`init_method="env://"`).
"""
    limits = """\
IPv6 addresses other than loopback are not recognised. A string that is
exactly an address is reported wherever it appears (a default value, a
comparison). A one-process group is recognised only in the function that
writes the variables; a fixed port of such a group can still clash with a
second run on the same node.
"""
    valid = (
        """
        import os

        import torch.distributed as dist


        def main():
            dist.init_process_group("nccl", init_method="env://")
            address = os.environ["MASTER_ADDR"]
            bind = "0.0.0.0"
            os.environ.setdefault("MASTER_PORT", "29500")
            if "MASTER_ADDR" not in os.environ:
                os.environ["MASTER_ADDR"] = "10.0.0.1"
        """,
        """
        import os


        # Started without a launcher: run as one process.
        def single_process_fallback():
            if "WORLD_SIZE" not in os.environ:
                os.environ["WORLD_SIZE"] = "1"
                os.environ["RANK"] = "0"
                os.environ["MASTER_ADDR"] = "localhost"
                os.environ["MASTER_PORT"] = "29500"
        """,
        """
        import os

        import torch


        # A one-process group to read a checkpoint (nemo/nemo/collections/llm/gpt/model/ssm.py).
        def dist_ckpt_handler(checkpoint_dir):
            os.environ["MASTER_ADDR"] = "localhost"
            os.environ["MASTER_PORT"] = "12355"
            world_size = 1
            torch.distributed.init_process_group(backend="gloo", rank=0, world_size=world_size)
        """,
    )
    invalid = (
        """
        import os

        import torch.distributed as dist


        def setup(rank, world):
            os.environ["MASTER_ADDR"] = "10.0.3.17"  # expect: RNK501
            os.environ["MASTER_PORT"] = "29500"  # expect: RNK501
            dist.init_process_group(
                "nccl",
                init_method="tcp://192.168.1.4:23456",  # expect: RNK501
                rank=rank,
                world_size=world,
            )
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._scopes: list[_Scope] = [_Scope()]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(_Scope())

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._flush(self._scopes.pop())

    def leave_Module(self, node: cst.Module) -> None:
        self._flush(self._scopes.pop())

    def _flush(self, scope: _Scope) -> None:
        if scope.single:
            return  # a one-process group: nobody else rendezvouses there
        for value, message, where in scope.local:
            self.report(value, message, where=where)

    def _loopback_ok(self) -> bool:
        return self.ctx.is_test or self.ctx.is_script

    def _fallback(self, where: cst.CSTNode) -> bool:
        """``setdefault``, or a write under a test of a launcher variable
        (``if "MASTER_PORT" not in os.environ:``, ``if "WORLD_SIZE" not in
        os.environ:``): the values of a run that no launcher started."""
        if (
            isinstance(where, cst.Call)
            and isinstance(where.func, cst.Attribute)
            and where.func.attr.value == "setdefault"
        ):
            return True
        return any(
            any(q in self.ctx.module.code_for_node(c.test) for q in _LAUNCHER_QUOTED)
            for c in self.ctx.conditions
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        if int_value(node.value) == 1:
            self._scopes[-1].ones.update(
                t.target.value for t in node.targets if isinstance(t.target, cst.Name)
            )
        self._environment(node)

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.names.resolve(node.func) in _INIT:
            scope = self._scopes[-1]
            for arg in node.args:
                if arg.keyword is None or arg.keyword.value != "world_size":
                    continue
                value = arg.value
                if int_value(value) == 1 or (
                    isinstance(value, cst.Name) and value.value in scope.ones
                ):
                    scope.single = True
        self._environment(node)

    def _environment(self, node: cst.CSTNode) -> None:
        for key, value, where in environ_writes(node, self.ctx.names.resolve):
            if key == "WORLD_SIZE" and value is not None and _is_one(value):
                self._scopes[-1].single = True  # a one-process run: no peer rendezvouses
            if key not in _ENDPOINT_VARIABLES or value is None:
                continue
            if self._fallback(where):
                self._skip.add(id(value))
                continue
            literal = string_value(value)
            if literal is None and int_value(value) is None:
                continue
            self._skip.add(id(value))
            if key == "MASTER_ADDR" and literal in _LOOPBACK_HOSTS and self._loopback_ok():
                continue
            if key == "MASTER_PORT" and self._loopback_ok():
                continue
            message = (
                f"`{key}` is set to a literal: the job rendezvouses at a fixed "
                f"{'address' if key == 'MASTER_ADDR' else 'port'} that only fits one "
                f"machine or one job; let the launcher set it and read it from the environment"
            )
            if key == "MASTER_PORT" or literal in _LOOPBACK_HOSTS:
                # Decided at the end of the function: fine for a one-process group.
                self._scopes[-1].local.append((value, message, self.here()))
                continue
            self.report(value, message)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.skipped(node):
            return
        value = string_value(node)
        if value is None or len(value) > 60:
            return
        match = _TCP.fullmatch(value)
        if match is not None:
            host = match.group("host")
            if host in _LOOPBACK_HOSTS and self._loopback_ok():
                return
            self.report(
                node,
                f"`{value}` hard-codes the rendezvous endpoint: it works on one machine only; "
                f'use `init_method="env://"` with `MASTER_ADDR`/`MASTER_PORT` from the launcher',
            )
            return
        match = _IPV4.fullmatch(value)
        if match is None or not all(int(part) <= 255 for part in match.groups()):
            return
        host = value.split(":", 1)[0]
        # Loopback counts where it is the rendezvous endpoint (above), not as a
        # bare constant (a list of local hosts, a bind address).
        if host == "0.0.0.0" or host.startswith("127.") or host in _ROUTE_PROBES:
            return
        self.report(
            node,
            f"the IP address `{host}` is written in code: it ties the job to one machine or "
            f"network; take it from the environment or the launch configuration",
        )


def _is_one(value: cst.BaseExpression) -> bool:
    """``1`` or ``"1"``."""
    return int_value(value) == 1 or string_value(value) == "1"
