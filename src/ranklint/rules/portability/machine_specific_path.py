"""RNK503 machine-specific-path."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.literals import string_value
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding
from ranklint.rules.portability._string_rules import (
    _StringRule,
    command_runs_in_container,
    is_http_call,
    is_url_keyword,
)

logger = logging.getLogger(__name__)

# A shell operator between words: the string is a command line, not a path.
_SHELL_OPERATOR = re.compile(r"\s(?:&&|\|\||\||;|>>?|2>|<)\s|;\s")
# A `str.format` template: `"/root/models/{name}"` is built from pieces.
_TEMPLATE = re.compile(r"\{[A-Za-z_0-9.]*\}")
# `"host_dir:/container_dir[:ro]"`: a container volume spec (Docker, Podman, enroot).
_VOLUME_SPEC = re.compile(r"[^:\s]+:(?P<inside>/[^:\s]*)(?::[A-Za-z,]+)?")
# Keywords and dict keys naming where a volume appears inside a container.
_MOUNT_KEYS = frozenset({"bind", "mount_path", "mountPath", "container_path", "target"})
# Folders whose scripts run while a container image is built or inside it.
_CONTAINER_FOLDERS = frozenset({"docker", "dockerfiles", ".devcontainer"})


@dataclass(frozen=True)
class _Candidate:
    """A string that starts with a machine prefix, decided when the file is walked."""

    node: cst.SimpleString
    value: str
    prefix: str
    where: tuple[cst.CSTNode | None, cst.CSTNode | None]
    name: str | None  # the variable it is assigned to, if any


class MachineSpecificPath(_StringRule):
    code = "RNK503"
    name = "machine-specific-path"
    severity = Severity.WARNING
    default_enabled = False
    summary = "An absolute path under a home directory or mount point is written in code"
    what = """\
Reports string literals that start with one of `machine-path-prefixes`
(default `/home/`, `/Users/`, `/mnt/`, `/data/`, `/scratch/`, `/nfs/`,
`/fsx/`, `/lustre/`, `/gpfs/`, `/root/`, `/workspace/`, `C:\\Users\\`).
Not reported, because they are not paths of this machine:
- docstrings, strings in decorators (URL routes such as
  `@app.put("/data/<id>")`), templates with `<...>` or `{...}`;
- HTTP routes: the first argument of `client.get/post/put/patch/delete/...`
  on HTTP clients and sessions (`requests.*`, `httpx.*`, receivers named
  `client`, `session`, `api`, `http`), and `url=` / `*_url=` values;
- command lines (a string with a shell operator such as `&&`, `|`, `;`);
- anything inside a command or file transfer run in a container or sandbox
  (`sandbox.exec(...)`, `sb.write_file(...)`, `container.exec_run(...)`,
  `sandbox.run(...)`, `subprocess.run(["docker", "exec", ...])`), including
  variables whose value such a call uses (`PATCH = "/workspace/fix.diff"`
  then `sb.write_file(PATCH, ...)`);
- paths under a mount point that the same file maps into a container
  (`volumes=["/host/dir:/data"]` makes `/data/...` a path inside it);
- files in a `docker/` (`dockerfiles/`, `.devcontainer/`) folder, which run
  while an image is built, where paths are the image's.

Off by default (`extend-select = ["RNK503"]`): on the review corpus about half
of its findings are paths that every node of the intended setup has, which the
file alone does not say: a shared file system that a cloud example's job spec
mounts at `/fsx`, the working directory of a project's container image, the
checkpoint an example's companion script wrote. Turn it on to audit a
project's scripts before sharing them.
"""
    why = """\
`/home/alice/ckpt` exists on Alice's workstation; on the cluster the job runs
for an hour and fails at its first checkpoint, or every rank of a 64-node job
writes to a path that only one node mounts. Paths come from configuration,
arguments or the environment.
"""
    limits = """\
Paths built by joining pieces (`"/mnt" + "/x"`, f-strings, `.format`
templates) are not reported. Whether a call runs in a container is read from
its shape (the method names above, a container tool as the command), so a
path passed to a sandbox object with other method names is still reported,
and the host side of a volume spec (`"/data/raw:/data"`) is reported. A
variable counts as a container path when any use of it in the file is. The
default value of an argument (`add_argument(default="/home/alice/x")`,
`def run(path="/fsx/data")`) is reported: it only works on one machine.
"""
    valid = (
        """
        import os
        from pathlib import Path

        CHECKPOINTS = Path(os.environ.get("CKPT_DIR", "checkpoints"))
        TMP = "/tmp/ranklint"
        """,
        """
        import requests

        # HTTP routes of a web service, not files (the shape issue 16 reports).
        def fetch(client, session, base):
            client.get("/data/items")
            session.post("/home/feed", json={})
            requests.delete("/mnt/volumes/3")
            return requests.get(url="/data/status")
        """,
        """
        # Paths inside a sandbox (slime/examples/coding_agent_rl/swe.py).
        PATCH = "/workspace/__patch__.diff"


        async def apply(sb, diff):
            await sb.write_file(PATCH, diff, user="agent")
            await sb.exec(f"git apply {PATCH}", user="agent")
            await sb.write_file("/workspace/setup/before.sh", "set -e")
            run_local("/workspace/setup.sh && pytest")
        """,
        """
        import subprocess

        # A command run in a container: its paths are the container's.
        subprocess.run(["docker", "exec", "trainer", "ls", "/workspace/ckpt"])
        """,
        """
        # Mounted into the container (nemo/tutorials/llm/llama/slimpajama/data_pipeline.py).
        def pipeline(run, executor_cls):
            executor = executor_cls(volumes=["/path/to/save/data:/data"])
            return run.Partial(extract, data_dir="/data/slimpajama"), executor
        """,
        """
        # A template formatted later (olmo/scripts/olmo2_modal_openai.py).
        MODEL_DIR = "/root/models/{MODEL_NAME}"
        """,
    )
    invalid = (
        """
        from pathlib import Path

        CHECKPOINTS = Path("/home/alice/experiments/ckpt")  # expect: RNK503
        DATA = "/mnt/shared/tokens"  # expect: RNK503
        """,
        """
        import argparse
        import subprocess

        parser = argparse.ArgumentParser()
        parser.add_argument("--index", default="/home/peter/index/e5.index")  # expect: RNK503
        subprocess.run(["python", "/home/alice/train.py"])  # expect: RNK503
        LOCAL = "/data/raw"  # expect: RNK503
        TOKENS = open(LOCAL).read()


        def upload(fs, remote):
            fs.put("/data/local/x", remote)  # expect: RNK503
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._decorators = 0
        # Depth of calls whose whole text runs inside a container or sandbox.
        self._inside = 0
        self._inside_calls: set[int] = set()
        # Argument values that are not paths (HTTP routes, `url=`).
        self._not_paths: set[int] = set()
        # Variables used inside a container call, HTTP route or `url=`.
        self._elsewhere: set[str] = set()
        # Where volumes appear inside containers; the spec strings themselves.
        self._mounts: set[str] = set()
        self._specs: set[int] = set()
        self._assigned: dict[int, str] = {}
        self._candidates: list[_Candidate] = []
        parts = PurePath(ctx.path).parts[:-1]
        self._container_file = any(part.lower() in _CONTAINER_FOLDERS for part in parts)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._decorators += 1

    def leave_Decorator(self, node: cst.Decorator) -> None:
        self._decorators -= 1

    def visit_Call(self, node: cst.Call) -> None:
        resolve = self.ctx.names.resolve
        if command_runs_in_container(node, resolve):
            self._inside += 1
            self._inside_calls.add(id(node))
        if is_http_call(node, resolve):
            positional = [arg for arg in node.args if arg.keyword is None and arg.star == ""]
            routes = 2 if _is_request(node) else 1
            self._not_paths.update(id(arg.value) for arg in positional[:routes])
        for arg in node.args:
            if arg.keyword is None:
                continue
            if is_url_keyword(arg.keyword.value):
                self._not_paths.add(id(arg.value))
            elif arg.keyword.value in _MOUNT_KEYS:
                self._mount(arg.value)

    def leave_Call(self, node: cst.Call) -> None:
        if id(node) in self._inside_calls:
            self._inside -= 1

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if string_value(node.key) in _MOUNT_KEYS:
            self._mount(node.value)

    def _mount(self, value: cst.BaseExpression) -> None:
        inside = string_value(value)
        if inside is not None and inside.startswith("/") and len(inside) > 1:
            self._mounts.add(inside.rstrip("/"))

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self._assigned[id(node.value)] = node.targets[0].target.value

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and isinstance(node.target, cst.Name):
            self._assigned[id(node.value)] = node.target.value

    def visit_Name(self, node: cst.Name) -> None:
        if self._inside or id(node) in self._not_paths:
            self._elsewhere.add(node.value)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.skipped(node) or self._decorators or self._inside or self._container_file:
            return  # `@app.route("/data/<id>")`: a URL route; a container's path
        if id(node) in self._not_paths:
            return
        value = string_value(node)
        if value is None or "\n" in value or len(value) > 300:
            return
        spec = _VOLUME_SPEC.fullmatch(value)
        if spec is not None:
            self._mounts.add(spec.group("inside").rstrip("/") or "/")
            self._specs.add(id(node))
        if "<" in value or _TEMPLATE.search(value) or _SHELL_OPERATOR.search(value):
            return
        for prefix in self.ctx.settings.machine_path_prefixes:
            if value.startswith(prefix) and len(value) > len(prefix):
                name = self._assigned.get(id(node))
                self._candidates.append(_Candidate(node, value, prefix, self.here(), name))
                return

    def leave_Module(self, node: cst.Module) -> None:
        for candidate in self._candidates:
            if candidate.name is not None and candidate.name in self._elsewhere:
                continue  # the variable is a path inside a container, or a route
            if id(candidate.node) not in self._specs and self._under_mount(candidate.value):
                continue
            self.report(
                candidate.node,
                f"`{candidate.prefix}...` is a path on one machine: other nodes and other users "
                f"do not have it; take it from configuration, an argument or the environment",
                where=candidate.where,
            )

    def _under_mount(self, value: str) -> bool:
        return any(value == mount or value.startswith(mount + "/") for mount in self._mounts)


def _is_request(node: cst.Call) -> bool:
    """``client.request("GET", "/route")``: the route is the second argument."""
    return isinstance(node.func, cst.Attribute) and node.func.attr.value == "request"
