"""Shared by the RNK5xx string rules: a base class that skips docstrings and bare strings,
and the call shapes whose strings are routes or container paths, not this machine's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.literals import string_value
from ranklint.analysis.walk.names import dotted_name
from ranklint.rules.base import PendingFinding, Rule


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


# HTTP client methods whose first argument is a route or URL, not a file.
_HTTP_METHODS = frozenset(
    {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream"}
)
# HTTP client libraries, by module.
_HTTP_MODULES = ("requests", "httpx", "aiohttp", "urllib3")
# Words in a receiver's last name that mark an HTTP client or session.
_HTTP_RECEIVERS = ("client", "session", "http", "api", "requests")
# Methods that run a command or move a file inside a container or sandbox.
_SANDBOX_METHODS = frozenset(
    {
        "exec",
        "exec_run",
        "exec_command",
        "run_command",
        "execute_command",
        "write_file",
        "read_file",
        "upload_file",
        "download_file",
        "put_archive",
        "get_archive",
    }
)
# Generic verbs that run a command in a container only on a sandbox-like receiver.
_SANDBOX_VERBS = frozenset({"run", "execute", "spawn"})
_SANDBOX_RECEIVERS = ("sandbox", "container", "docker")
# Calls that start a local process; their command decides where it runs.
_PROCESS_STARTERS = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "os.system",
        "os.popen",
        "asyncio.create_subprocess_exec",
        "asyncio.create_subprocess_shell",
    }
)
# Commands that run the rest of the command line inside a container.
_CONTAINER_TOOLS = frozenset(
    {"docker", "podman", "nerdctl", "nvidia-docker", "apptainer", "singularity", "enroot"}
)


def is_url_keyword(keyword: str) -> bool:
    """``url=``, ``base_url=``: the value is a URL or route, not a file."""
    return keyword == "url" or keyword.endswith("_url")


def is_http_call(node: cst.Call, resolve: Callable[[cst.BaseExpression], str | None]) -> bool:
    """``requests.get(...)``, ``client.post(...)``, ``self.session.delete(...)``."""
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _HTTP_METHODS:
        return False
    qualified = resolve(func)
    if qualified is not None and qualified.split(".", 1)[0] in _HTTP_MODULES:
        return True
    receiver = _receiver_name(func.value)
    return receiver is not None and any(word in receiver for word in _HTTP_RECEIVERS)


def command_runs_in_container(
    node: cst.Call, resolve: Callable[[cst.BaseExpression], str | None]
) -> bool:
    """Whether everything the call is given runs inside a container or sandbox.

    ``sb.exec(...)``, ``sandbox.write_file(...)``, ``container.exec_run(...)``,
    ``sandbox.commands.run(...)``, ``subprocess.run(["docker", "exec", ...])``.
    """
    func = node.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method in _SANDBOX_METHODS and resolve(func) is None:
            return True  # a method of an object, not a module function
        if method in _SANDBOX_VERBS:
            receiver = dotted_name(func.value)
            if receiver is not None and any(
                word in receiver.lower() for word in _SANDBOX_RECEIVERS
            ):
                return True
    if resolve(func) not in _PROCESS_STARTERS or not node.args:
        return False
    command = node.args[0].value
    first: str | None
    if isinstance(command, (cst.List, cst.Tuple)):
        first = string_value(command.elements[0].value) if command.elements else None
    else:
        first = string_value(command)
    if first is None or not first.split():
        return False
    return PurePath(first.split()[0]).name in _CONTAINER_TOOLS


def _receiver_name(node: cst.BaseExpression) -> str | None:
    """The last name of a receiver, lower case (``self.client`` -> ``client``)."""
    if isinstance(node, cst.Name):
        return node.value.lower()
    if isinstance(node, cst.Attribute):
        return node.attr.value.lower()
    return None
