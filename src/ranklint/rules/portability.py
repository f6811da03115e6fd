"""Portability and configuration rules (RNK5xx): code that only runs on one machine."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import ClassVar

import libcst as cst

from ranklint.analysis.context import FileContext
from ranklint.analysis.names import dotted_name
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule

_IPV4 = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?::\d{1,5})?")
_TCP = re.compile(r"tcp://(?P<host>[^:/\s]+):(?P<port>\d{1,5})/?")
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
_ENDPOINT_VARIABLES = frozenset({"MASTER_ADDR", "MASTER_PORT"})
# Public resolvers used to find the local address of the outbound route.
_ROUTE_PROBES = frozenset({"8.8.8.8", "8.8.4.4", "1.1.1.1", "1.0.0.1"})


_LONGEST_STRING = 400


def string_value(node: cst.BaseExpression) -> str | None:
    """The value of a plain string literal (no f-string, no bytes), else None."""
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower():
        raw = node.value
        if len(raw) > _LONGEST_STRING:
            return None  # no rule looks at long text; evaluating it costs a compile
        if "\\" not in raw:
            # No escapes: the text between the quotes is the value (no compile).
            quote = raw[len(node.prefix) :][:3]
            width = 3 if quote in ('"""', "'''") else 1
            return raw[len(node.prefix) + width : len(raw) - width]
        try:
            value = node.evaluated_value
        except (SyntaxError, ValueError, MemoryError):
            return None
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_value(node.left), string_value(node.right)  # type: ignore[arg-type]
        return None if left is None or right is None else left + right
    return None


def int_value(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return None
    return None


_ENVIRON_WRITERS = frozenset({"setdefault", "putenv", "update"})


def environ_writes(
    node: cst.CSTNode, resolve: Callable[[cst.BaseExpression], str | None]
) -> Iterator[tuple[str, cst.BaseExpression | None, cst.CSTNode]]:
    """(variable, value expression, node to report) for writes to ``os.environ`` in ``node``.

    Handles ``os.environ["X"] = v``, ``os.environ.setdefault("X", v)``,
    ``os.putenv("X", v)`` and ``os.environ.update({"X": v}, X=v)``.
    """
    if isinstance(node, cst.Assign):
        if not any(isinstance(target.target, cst.Subscript) for target in node.targets):
            return
        for target in node.targets:
            subject = target.target
            if (
                isinstance(subject, cst.Subscript)
                and resolve(subject.value) == "os.environ"
                and len(subject.slice) == 1
                and isinstance(subject.slice[0].slice, cst.Index)
            ):
                key = string_value(subject.slice[0].slice.value)
                if key is not None:
                    yield key, node.value, node
        return
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in _ENVIRON_WRITERS
    ):
        return
    name = resolve(node.func)
    if name in ("os.environ.setdefault", "os.putenv") and node.args:
        key = string_value(node.args[0].value)
        if key is not None:
            value = node.args[1].value if len(node.args) > 1 else None
            yield key, value, node
    elif name == "os.environ.update":
        for arg in node.args:
            if arg.keyword is not None:
                yield arg.keyword.value, arg.value, node
            elif isinstance(arg.value, cst.Dict):
                for element in arg.value.elements:
                    if isinstance(element, cst.DictElement):
                        key = string_value(element.key)
                        if key is not None:
                            yield key, element.value, node


class _StringRule(Rule):
    """Skips docstrings and other bare string statements."""

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._skip: set[int] = set()

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString)):
            self._skip.add(id(node.value))

    def skipped(self, node: cst.CSTNode) -> bool:
        return id(node) in self._skip


class HardCodedEndpoint(_StringRule):
    code = "RNK501"
    name = "hard-coded-endpoint"
    severity = Severity.WARNING
    summary = "An IP address, `tcp://` init method or master address/port is written in code"
    what = """\
Reports string literals that are an IPv4 address (with or without a port;
`0.0.0.0` and loopback excepted), `tcp://host:port` strings, and literal
values written to `MASTER_ADDR` / `MASTER_PORT` (`os.environ[...] = ...`,
`putenv`, `update`). Fallbacks are not reported: `setdefault`, and writes
under a test of the same variable (`if "MASTER_PORT" not in os.environ:`);
nor are public resolvers used to probe the outbound route (`8.8.8.8`,
`1.1.1.1`). As the rendezvous endpoint (`tcp://`,
`MASTER_ADDR`), loopback (`localhost`, `127.0.0.1`) is fine in files
matching `test-patterns` and `script-patterns` and reported elsewhere: a
library that rendezvouses on localhost cannot run on two nodes.
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
comparison).
"""
    valid = (
        """
        import os

        import torch.distributed as dist

        dist.init_process_group("nccl", init_method="env://")
        address = os.environ["MASTER_ADDR"]
        bind = "0.0.0.0"
        os.environ.setdefault("MASTER_PORT", "29500")
        if "MASTER_ADDR" not in os.environ:
            os.environ["MASTER_ADDR"] = "10.0.0.1"
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

    def _loopback_ok(self) -> bool:
        return self.ctx.is_test or self.ctx.is_script

    def _fallback(self, key: str, where: cst.CSTNode) -> bool:
        """``setdefault``, or a write under ``if "MASTER_PORT" not in os.environ:``."""
        if (
            isinstance(where, cst.Call)
            and isinstance(where.func, cst.Attribute)
            and where.func.attr.value == "setdefault"
        ):
            return True
        quoted = (f'"{key}"', f"'{key}'")
        return any(
            any(q in self.ctx.module.code_for_node(c.test) for q in quoted)
            for c in self.ctx.conditions
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        self._environment(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._environment(node)

    def _environment(self, node: cst.CSTNode) -> None:
        for key, value, where in environ_writes(node, self.ctx.names.resolve):
            if key not in _ENDPOINT_VARIABLES or value is None:
                continue
            if self._fallback(key, where):
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
            self.report(
                value,
                f"`{key}` is set to a literal: the job rendezvouses at a fixed "
                f"{'address' if key == 'MASTER_ADDR' else 'port'} that only fits one "
                f"machine or one job; let the launcher set it and read it from the environment",
            )

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


_SECRET_NAME = re.compile(
    r"(?i)(?:^|_)(?:token|api_?key|secret(?:_key)?|password|passwd|access_key|auth)$"
)
_SECRET_KEYWORDS = frozenset(
    {"token", "api_key", "apikey", "password", "secret", "hf_token", "auth_token", "access_token"}
)
_TOKEN_PREFIXES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"hf_[A-Za-z0-9]{30,}"), "a Hugging Face token"),
    (re.compile(r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}"), "an API secret key"),
    (re.compile(r"gh[pousr]_[A-Za-z0-9]{30,}"), "a GitHub token"),
    (re.compile(r"github_pat_[A-Za-z0-9_]{30,}"), "a GitHub token"),
    (re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}"), "a Slack token"),
    (re.compile(r"AKIA[0-9A-Z]{16}"), "an AWS access key"),
    (re.compile(r"glpat-[A-Za-z0-9_\-]{20,}"), "a GitLab token"),
    (re.compile(r"AIza[0-9A-Za-z_\-]{35}"), "a Google API key"),
)
_PLACEHOLDER = re.compile(
    r"(?i)your|xxx|<|\$\{|changeme|dummy|fake|example|placeholder|test|\*\*\*|\.\.\.|none|null"
)


class HardCodedCredential(_StringRule):
    code = "RNK502"
    name = "hard-coded-credential"
    severity = Severity.ERROR
    summary = "A secret (token, API key, password) is written in code"
    what = """\
Reports string literals assigned to names, attributes, keyword arguments or
environment variables that name a secret (`*_TOKEN`, `*_API_KEY`,
`*_SECRET`, `*_PASSWORD`, `WANDB_API_KEY`, `HF_TOKEN`, `token=`,
`api_key=`, ...), and string literals anywhere with a well-known token
prefix (Hugging Face `hf_`, `sk-` API keys, GitHub, Slack, AWS, GitLab,
Google). Values that do not look like secrets are not reported: shorter than
8 characters, placeholders (`"<your-token>"`, `"changeme"`, `"dummy"`),
variable names (`ENV_TOKEN = "GITHUB_TOKEN"`), text with spaces, or letters
only. In test files only the prefixed tokens are reported. The message never
repeats the secret.
"""
    why = """\
A token in code is a token in every clone, fork, wheel, container image and CI
log of the repository, and in its history after it is deleted. Training
infrastructure tokens (Hugging Face write tokens, experiment trackers, cloud
keys) give access to models, data and compute. Read secrets from the
environment or a secret manager at run time.
"""
    limits = """\
Secrets under names that do not say so, and prefixes other than the listed
ones, are not recognised. Short values (under 8 characters) are taken for
placeholders.
"""
    valid = (
        """
        import os

        HF_TOKEN = os.environ.get("HF_TOKEN")
        WANDB_API_KEY = ""
        api_key = "<your-api-key>"
        """,
    )
    invalid = (
        """
        import os

        HF_TOKEN = "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"  # expect: RNK502
        os.environ["WANDB_API_KEY"] = "3f9a1c0d7e6b5a4f3e2d1c0b"  # expect: RNK502


        def login(client):
            client.connect(password="s3cr3t-passw0rd")  # expect: RNK502
        """,
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._named(_last_identifier(target.target), node.value)
        for key, value, _ in environ_writes(node, self.ctx.names.resolve):
            if value is not None:
                self._named(key, value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._named(_last_identifier(node.target), node.value)

    def visit_Call(self, node: cst.Call) -> None:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value.lower() in _SECRET_KEYWORDS:
                self._named(arg.keyword.value, arg.value, keyword=True)
        for key, value, _ in environ_writes(node, self.ctx.names.resolve):
            if value is not None:
                self._named(key, value)

    def _named(self, name: str | None, value: cst.BaseExpression, *, keyword: bool = False) -> None:
        if name is None or self.ctx.is_test:
            return
        if not keyword and not _SECRET_NAME.search(name):
            return
        literal = string_value(value)
        if literal is None or not _looks_secret(literal):
            return
        self._skip.add(id(value))
        self.report(
            value,
            f"`{name}` is given a literal secret: it ships with every copy of this code and "
            f"stays in the history; read it from the environment or a secret store at run time",
        )

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.skipped(node):
            return
        value = string_value(node)
        if value is None or len(value) > 200:
            return
        for pattern, kind in _TOKEN_PREFIXES:
            if pattern.search(value) and not _PLACEHOLDER.search(value):
                self._skip.add(id(node))
                self.report(
                    node,
                    f"this string looks like {kind}: a secret in code ships with every copy "
                    f"and stays in the history; revoke it and read it from the environment",
                )
                return


_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def _looks_secret(value: str) -> bool:
    """Long enough, no placeholder, not a variable name (``"GITHUB_TOKEN"``), no spaces."""
    return (
        len(value) >= 8
        and not _PLACEHOLDER.search(value)
        and not _ENV_NAME.fullmatch(value)
        and not any(character.isspace() for character in value)
        and any(not character.isalpha() for character in value)
    )


def _last_identifier(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


class MachineSpecificPath(_StringRule):
    code = "RNK503"
    name = "machine-specific-path"
    severity = Severity.WARNING
    summary = "An absolute path under a home directory or mount point is written in code"
    what = """\
Reports string literals that start with one of `machine-path-prefixes`
(default `/home/`, `/Users/`, `/mnt/`, `/data/`, `/scratch/`, `/nfs/`,
`/fsx/`, `/lustre/`, `/gpfs/`, `/root/`, `/workspace/`, `C:\\Users\\`).
Docstrings, strings in decorators (URL routes such as
`@app.put("/data/<id>")`) and templates with `<...>` are not reported.
"""
    why = """\
`/home/alice/ckpt` exists on Alice's workstation; on the cluster the job runs
for an hour and fails at its first checkpoint, or every rank of a 64-node job
writes to a path that only one node mounts. Paths come from configuration,
arguments or the environment.
"""
    limits = """\
Paths built by joining pieces (`"/mnt" + "/x"`, f-strings) are not reported.
"""
    valid = (
        """
        import os
        from pathlib import Path

        CHECKPOINTS = Path(os.environ.get("CKPT_DIR", "checkpoints"))
        TMP = "/tmp/ranklint"
        """,
    )
    invalid = (
        """
        from pathlib import Path

        CHECKPOINTS = Path("/home/alice/experiments/ckpt")  # expect: RNK503
        DATA = "/mnt/shared/tokens"  # expect: RNK503
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._decorators = 0

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._decorators += 1

    def leave_Decorator(self, node: cst.Decorator) -> None:
        self._decorators -= 1

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.skipped(node) or self._decorators:
            return  # `@app.route("/data/<id>")`: a URL route, not a file
        value = string_value(node)
        if value is None or "\n" in value or len(value) > 300 or "<" in value:
            return
        for prefix in self.ctx.settings.machine_path_prefixes:
            if value.startswith(prefix) and len(value) > len(prefix):
                self.report(
                    node,
                    f"`{prefix}...` is a path on one machine: other nodes and other users do "
                    f"not have it; take it from configuration, an argument or the environment",
                )
                return


_TOPOLOGY_KEYWORDS = frozenset(
    {"nprocs", "nproc_per_node", "num_gpus", "gpus_per_node", "num_processes", "world_size"}
)
_INIT = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.distributed.distributed_c10d.init_process_group",
    }
)
_MESH = frozenset(
    {
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.init_device_mesh",
    }
)


class HardCodedTopology(Rule):
    code = "RNK504"
    name = "hard-coded-topology"
    severity = Severity.WARNING
    summary = "The job's size or layout is written in code"
    what = """\
Reports, in library code (not in files matching `test-patterns` or
`script-patterns`): literal `rank`/`world_size` arguments to
`init_process_group` (except on the `"fake"` backend, which simulates a
job, and for a one-process group, `world_size=1`); literal process or GPU
counts of 2 or more (`nprocs=`, `nproc_per_node=`, `num_gpus=`, `gpus_per_node=`, `num_processes=`,
`world_size=` keywords); `CUDA_VISIBLE_DEVICES` set to a literal in code
(a value computed from the scheduler's assignment is fine); literal mesh
shapes in `init_device_mesh`.
"""
    why = """\
The same code runs on 8 GPUs today and 512 next week: a literal world size or
mesh shape makes the job wait forever for ranks that will never come, or
ignore half the GPUs; `CUDA_VISIBLE_DEVICES` set in code fights with the
scheduler's own assignment. The launcher knows the topology; the code reads it
(`dist.get_world_size()`, `WORLD_SIZE`, a config).
"""
    limits = """\
Topology written in a config dict or read from a constant defined elsewhere is
not reported.
"""
    valid = (
        """
        import os

        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh

        dist.init_process_group("nccl")
        world = dist.get_world_size()
        mesh = init_device_mesh("cuda", (world // 2, 2), mesh_dim_names=("dp", "tp"))
        """,
    )
    invalid = (
        """
        import os

        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh

        os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"  # expect: RNK504
        dist.init_process_group("nccl", rank=0, world_size=8)  # expect: RNK504, RNK504
        mesh = init_device_mesh("cuda", (4, 2), mesh_dim_names=("dp", "tp"))  # expect: RNK504
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._active = not (ctx.is_test or ctx.is_script)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._visible_devices(node)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._active:
            return
        self._visible_devices(node)
        name = self.ctx.names.resolve(node.func)
        for arg in node.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            value = int_value(arg.value)
            if value is None or keyword is None:
                continue
            if name in _INIT and keyword in ("rank", "world_size"):
                if node.args and string_value(node.args[0].value) == "fake":
                    continue  # a simulated job on the fake backend: the literal is the point
                if _single_process(node):
                    continue  # a one-process group (tools, controllers): no topology
                self._report(arg.value, f"`{keyword}={value}` in `init_process_group`")
            elif keyword in _TOPOLOGY_KEYWORDS and value >= 2:
                self._report(arg.value, f"`{keyword}={value}`")
        if name in _MESH and len(node.args) > 1:
            shape = node.args[1]
            positional = shape.keyword is None or shape.keyword.value == "mesh_shape"
            if (
                positional
                and isinstance(shape.value, (cst.Tuple, cst.List))
                and all(int_value(e.value) is not None for e in shape.value.elements)
            ):
                self._report(shape.value, "a literal mesh shape")

    def _visible_devices(self, node: cst.CSTNode) -> None:
        if not self._active:
            return
        for key, value, _ in environ_writes(node, self.ctx.names.resolve):
            literal = value is not None and (
                string_value(value) is not None or int_value(value) is not None
            )
            if key == "CUDA_VISIBLE_DEVICES" and literal:
                self._report(value, "`CUDA_VISIBLE_DEVICES`")

    def _report(self, node: cst.CSTNode, what: str) -> None:
        self.report(
            node,
            f"{what} writes the job's topology into the code: on any other allocation ranks "
            f"wait for peers that never come or GPUs go unused; read it from the launcher "
            f"(`dist.get_world_size()`, `WORLD_SIZE`) or the configuration",
        )


def _single_process(node: cst.Call) -> bool:
    """``init_process_group(..., world_size=1)``: a group of one process."""
    return any(
        arg.keyword is not None and arg.keyword.value == "world_size" and int_value(arg.value) == 1
        for arg in node.args
    )


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
        if any(
            arg.keyword is not None
            and arg.keyword.value == "check_nan"
            and dotted_name(arg.value) == "False"
            for arg in node.args
        ):
            return  # anomaly mode for stack traces only, not NaN checks
        if name == "torch.autograd.set_detect_anomaly":
            if node.args and dotted_name(node.args[0].value) == "False":
                return
            self._report(node, "anomaly detection (`set_detect_anomaly`)")
        elif name in (
            "torch.autograd.detect_anomaly",
            "torch.autograd.anomaly_mode.detect_anomaly",
        ):
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


class FreeFormChoice(Rule):
    code = "RNK506"
    name = "free-form-choice"
    severity = Severity.INFO
    default_enabled = False
    summary = "A finite set of choices is typed as a free-form string"
    what = """\
Reports an argparse option with a string default and no `choices=` whose
value the same file checks against a literal set (`args.mode in ("a", "b")`),
and a dataclass field typed `str` whose value the class checks against a
literal set (`self.mode not in {...}`). Off by default
(`extend-select = ["RNK506"]`): a style rule.
"""
    why = """\
A typo in a launch script (`--sharding ful`) is then a valid string: the job
starts, allocates 512 GPUs and fails (or silently takes a fallback branch)
hours later, where the check runs. `choices=`, `Literal[...]` or an `Enum`
rejects it at parse time, and documents the options in `--help`.
"""
    limits = """\
The option and the check must be in the same file (the class, for dataclass
fields); checks written as chains of `==` are not recognised.
"""
    valid = (
        """
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--sharding", default="full", choices=("full", "hybrid"))
        args = parser.parse_args()
        if args.sharding not in ("full", "hybrid"):
            raise SystemExit(2)
        """,
    )
    invalid = (
        """
        import argparse
        from dataclasses import dataclass

        parser = argparse.ArgumentParser()
        parser.add_argument("--sharding", default="full")  # expect: RNK506
        args = parser.parse_args()
        if args.sharding not in ("full", "hybrid"):
            raise SystemExit(2)


        @dataclass
        class Config:
            precision: str = "bf16"  # expect: RNK506

            def __post_init__(self):
                if self.precision not in {"bf16", "fp32"}:
                    raise ValueError(self.precision)
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._options: dict[str, tuple[cst.CSTNode, tuple[cst.CSTNode | None, ...]]] = {}
        self._checked: set[str] = set()
        # class name -> {field: (node, where)}, fields checked via self.<field>
        self._fields: list[dict[str, tuple[cst.CSTNode, tuple[cst.CSTNode | None, ...]]]] = []
        self._field_checks: list[set[str]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            return
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword}
        if "choices" in keywords or "default" not in keywords:
            return
        if string_value(keywords["default"]) is None:
            return
        dest = string_value(keywords["dest"]) if "dest" in keywords else None
        if dest is None:
            flags = [string_value(arg.value) for arg in node.args if arg.keyword is None]
            longs = [f for f in flags if f and f.startswith("--")]
            names = longs or [f for f in flags if f]
            if not names:
                return
            dest = names[0].lstrip("-").replace("-", "_")
        self._options.setdefault(dest, (node, self.here()))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        dataclass = any(
            (
                dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                or ""
            ).rsplit(".", 1)[-1]
            == "dataclass"
            for d in node.decorators
        )
        self._fields.append({} if dataclass else {"<not a dataclass>": (node, ())})
        self._field_checks.append(set())

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        fields = self._fields.pop()
        checks = self._field_checks.pop()
        if "<not a dataclass>" in fields:
            return
        for name in sorted(checks & fields.keys()):
            target, where = fields[name]
            self.report(target, _choice_message(f"field `{name}`"), where=where)  # type: ignore[arg-type]

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if not self._fields or self.ctx.function is not None:
            return
        if (
            isinstance(node.target, cst.Name)
            and dotted_name(node.annotation.annotation) == "str"
            and node.value is not None
            and string_value(node.value) is not None
        ):
            self._fields[-1].setdefault(node.target.value, (node, self.here()))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        if not isinstance(target.operator, (cst.In, cst.NotIn)):
            return
        choices = target.comparator
        if not isinstance(choices, (cst.Tuple, cst.List, cst.Set)) or not choices.elements:
            return
        if not all(string_value(e.value) is not None for e in choices.elements):
            return
        subject = node.left
        if isinstance(subject, cst.Attribute) and isinstance(subject.value, cst.Name):
            if subject.value.value == "self" and self._field_checks:
                self._field_checks[-1].add(subject.attr.value)
            else:
                self._checked.add(subject.attr.value)

    def leave_Module(self, node: cst.Module) -> None:
        for dest in sorted(self._checked & self._options.keys()):
            call, where = self._options[dest]
            self.report(call, _choice_message(f"option `{dest}`"), where=where)  # type: ignore[arg-type]


def _near_miss(name: str, axes: frozenset[str]) -> str | None:
    """The axis ``name`` is one edit from (two for names of 6+ characters), if any."""
    limit = 2 if len(name) >= 6 else 1
    best: tuple[int, str] | None = None
    for axis in sorted(axes):
        if axis == name or abs(len(axis) - len(name)) > limit:
            continue
        distance = _edit_distance(name, axis, limit)
        if distance <= limit and (best is None or distance < best[0]):
            best = (distance, axis)
    return best[1] if best is not None else None


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of two short strings, capped at ``limit + 1``."""
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _choice_message(what: str) -> str:
    return (
        f"{what} takes any string but is checked against a fixed set later: a typo passes "
        f"parsing and fails (or picks a fallback) only where it is checked; declare the "
        f"choices (`choices=`, `Literal[...]`, an `Enum`)"
    )


_MESH_CONSTRUCTORS = frozenset(
    {
        *_MESH,
        "torch.distributed.device_mesh.DeviceMesh",
        "torch.distributed.DeviceMesh",
    }
)


class MeshDimsMismatch(Rule):
    code = "RNK507"
    name = "mesh-dims-mismatch"
    severity = Severity.ERROR
    project: ClassVar[bool] = True
    summary = "DeviceMesh shapes, dimension names and their uses disagree"
    what = """\
Reports `init_device_mesh(..., mesh_shape, mesh_dim_names=...)` with literal
shape and names of different lengths; dimension names outside the declared
parallelism axes (`mesh-axes`, default `dp_replicate`, `dp_shard`, `dp`, `cp`,
`tp`, `pp`, `ep`, `etp`, `sp` and combinations such as `dp_shard_cp`;
`extend-mesh-axes` adds) that are one edit (two, for names of six or more
characters) from an axis: misspellings (`dp_shrd`, `tpp`); a deliberate
project-specific axis (`infer_pp`) is not reported; and `mesh["name"]` (on
names that contain `mesh`)
with a name that no mesh construction in the project declares and that is not
in `mesh-axes`, in any file of the run (names flattened with
`_flatten("name")` count as declared; when some mesh of the run is built from
names computed at run time, the declared set is unknown and this check is off).
"""
    why = """\
A shape/name mismatch raises only when the job starts on the cluster; a
misspelt dimension (`mesh["dp_shrd"]`) raises a `KeyError` deep inside model
construction, after minutes of start-up on every rank. Names outside the
project's axes usually mean a typo or a second naming convention creeping in.
"""
    limits = """\
Only literal shapes and names are compared; meshes built from computed names,
and indexing of meshes stored under names without `mesh`, are not checked.
Undeclared-name checks need a mesh construction somewhere in the run.
"""
    valid = (
        """
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))
        tp_mesh = mesh["tp"]
        dp_group = mesh["dp"].get_group()
        """,
    )
    invalid = (
        """
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp", "pp"))  # expect: RNK507
        other = init_device_mesh("cuda", (8,), mesh_dim_names=("dp_shrd",))  # expect: RNK507
        rollout = init_device_mesh("cuda", (8,), mesh_dim_names=("infer_pp",))
        tp_mesh = mesh["tq"]  # expect: RNK507
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = self.ctx.names.resolve(node.func)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "_flatten" and node.args:
            flat = string_value(node.args[0].value)
            if flat is not None:
                self.ctx.facts.mesh_names.add(flat)
            return
        if name not in _MESH_CONSTRUCTORS:
            return
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword}
        names_node = keywords.get("mesh_dim_names")
        if names_node is None and len(node.args) > 2 and node.args[2].keyword is None:
            names_node = node.args[2].value
        if names_node is None:
            return
        names = (
            [string_value(element.value) for element in names_node.elements]
            if isinstance(names_node, (cst.Tuple, cst.List))
            else [None]
        )
        if None in names:
            self.ctx.facts.mesh_dynamic = True
            return
        for element, value in zip(names_node.elements, names, strict=True):
            if value is None:
                continue
            self.ctx.facts.mesh_names.add(value)
            axes = self.ctx.settings.mesh_axes
            near = _near_miss(value, axes)
            if value not in axes and near is not None:
                self.report(
                    element.value,
                    f'mesh dimension "{value}" looks like a misspelling of the axis "{near}" '
                    f'(`mesh-axes`): code that asks for "{near}" will not find it; fix the '
                    f"name, or add it to `extend-mesh-axes` if it is meant",
                )
        shape_node = keywords.get("mesh_shape")
        if shape_node is None and len(node.args) > 1 and node.args[1].keyword is None:
            shape_node = node.args[1].value
        if not isinstance(shape_node, (cst.Tuple, cst.List)):
            return
        dimensions = shape_node.elements
        if all(int_value(e.value) is not None for e in dimensions) and len(dimensions) != len(
            names
        ):
            self.report(
                node,
                f"the mesh shape has {len(dimensions)} dimensions but `mesh_dim_names` "
                f"names {len(names)}: the mesh fails to build when the job starts; give one "
                f"name per dimension",
            )

    def visit_Subscript(self, node: cst.Subscript) -> None:
        receiver = dotted_name(node.value)
        if receiver is None or "mesh" not in receiver.rsplit(".", 1)[-1].lower():
            return
        elements = node.slice
        values = []
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            index = elements[0].slice.value
            if isinstance(index, cst.Tuple):
                values = [string_value(e.value) for e in index.elements]
            else:
                values = [string_value(index)]
        else:
            values = [
                string_value(e.slice.value) if isinstance(e.slice, cst.Index) else None
                for e in elements
            ]
        ctx = self.ctx
        for value in values:
            if value is None:
                continue
            site = ctx.facts.record_site(node, (ctx.top_index, ctx.statement, ctx.top_statement))
            ctx.facts.mesh_uses.append((site, value))
