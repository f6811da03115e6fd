"""RNK401 blocking-call-in-async."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.names import dotted_name
from ranklint.findings import Severity
from ranklint.rules.base import Rule

_THREAD = "run it in a thread: `await asyncio.to_thread(...)`"

# Qualified name (or prefix ending in ".") -> what to use instead.
_BLOCKING: dict[str, str] = {
    "time.sleep": "`await asyncio.sleep(...)`",
    "open": f"`aiofiles.open(...)`, or {_THREAD}",
    "io.open": f"`aiofiles.open(...)`, or {_THREAD}",
    "requests.": "an async client (`httpx.AsyncClient`, `aiohttp`)",
    "urllib.request.urlopen": "an async client (`httpx.AsyncClient`, `aiohttp`)",
    "subprocess.run": "`await asyncio.create_subprocess_exec(...)`",
    "subprocess.call": "`await asyncio.create_subprocess_exec(...)`",
    "subprocess.check_call": "`await asyncio.create_subprocess_exec(...)`",
    "subprocess.check_output": "`await asyncio.create_subprocess_exec(...)`",
    "os.system": "`await asyncio.create_subprocess_shell(...)`",
    "torch.save": _THREAD,
    "torch.load": _THREAD,
    "json.load": _THREAD,
    "json.dump": _THREAD,
    "pickle.load": _THREAD,
    "pickle.dump": _THREAD,
    "shutil.copy": _THREAD,
    "shutil.copyfile": _THREAD,
    "shutil.copytree": _THREAD,
    "shutil.rmtree": _THREAD,
    "socket.create_connection": "`await asyncio.open_connection(...)`",
    "socket.getaddrinfo": "`await loop.getaddrinfo(...)`",
}

_PATH_METHODS = frozenset({"read_text", "write_text", "read_bytes", "write_bytes"})


class BlockingCallInAsync(Rule):
    code = "RNK401"
    name = "blocking-call-in-async"
    severity = Severity.WARNING
    summary = "A blocking call inside `async def` stalls the event loop"
    what = """\
Reports, inside the body of an `async def` (not in functions or lambdas nested
in it): `time.sleep`, built-in `open()`, `Path.read_text/write_text/
read_bytes/write_bytes`, `requests.*`, `urllib.request.urlopen`,
`subprocess.run/call/check_call/check_output`, `os.system`,
`torch.save/torch.load`, `json.load/dump`, `pickle.load/dump`, `shutil`
copies and `rmtree`, blocking `socket` calls, and the project functions named
in `blocking-functions`. The message names the awaitable alternative.
"""
    why = """\
An asyncio rollout runs every generation request, reward computation and
weight-sync handshake on one thread: a blocking call stops all of them until
it returns. A 200 ms checkpoint read inside a coroutine is 200 ms in which no
rollout makes progress and the trainer waits for episodes; `time.sleep` in a
polling loop serialises what was meant to overlap.
"""
    limits = """\
Only the listed calls and configured functions are known to block; a project
function that blocks through other calls is not followed. Calls passed to
`asyncio.to_thread` or an executor are functions, not calls, and are fine.
"""
    valid = (
        """
        import asyncio

        import torch


        async def save_weights(state, path):
            await asyncio.to_thread(torch.save, state, path)
            await asyncio.sleep(0.1)


        def load_config(path):
            with open(path) as handle:
                return handle.read()
        """,
    )
    invalid = (
        """
        import json
        import time
        from pathlib import Path

        import requests


        async def rollout(client, prompt, out: Path):
            time.sleep(0.5)  # expect: RNK401
            reply = requests.post("http://reward", json=prompt)  # expect: RNK401
            with open(out / "episode.json", "w") as handle:  # expect: RNK401
                json.dump(reply.json(), handle)  # expect: RNK401
            return out.read_text()  # expect: RNK401
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        frame = self.ctx.function
        if frame is None or not isinstance(frame.node, cst.FunctionDef):
            return
        if frame.node.asynchronous is None:
            return
        func = node.func
        names = self.ctx.names
        advice: str | None = None
        # A callee the names resolve is a dotted name: "call" is only a fallback.
        label = dotted_name(func) or "call"  # pragma: no mutate
        if isinstance(func, cst.Name) and func.value == "open" and not names.is_bound("open"):
            advice = _BLOCKING["open"]
        elif isinstance(func, cst.Attribute) and func.attr.value in _PATH_METHODS:
            advice = _THREAD
            label = f".{func.attr.value}"
        else:
            qualified = names.resolve(func)
            if qualified is None and isinstance(func, cst.Name):
                qualified = f"@local:{func.value}"
            if qualified is not None:
                advice = _advice(qualified, self.ctx.settings.blocking_functions)
        if advice is not None:
            self.report(
                node,
                f"`{label}()` blocks inside `async def {frame.node.name.value}`: the event "
                f"loop, and every rollout on it, stops until it returns; use {advice}",
            )


def _advice(qualified: str, configured: frozenset[str]) -> str | None:
    if qualified in _BLOCKING:
        return _BLOCKING[qualified]
    head = qualified.partition(".")[0] + "."
    if head in _BLOCKING and qualified != head[:-1]:
        return _BLOCKING[head]
    local = qualified.removeprefix("@local:")
    if qualified in configured or any(entry.endswith("." + local) for entry in configured):
        return _THREAD
    return None
