"""RNK402 coroutine-never-awaited."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ranklint.analysis.project.facts import ProjectFacts
from ranklint.findings import Severity
from ranklint.rules.base import ProjectFinding, Rule


class CoroutineNeverAwaited(Rule):
    code = "RNK402"
    name = "coroutine-never-awaited"
    severity = Severity.ERROR
    project = True
    summary = "A project coroutine function is called and its coroutine thrown away"
    what = """\
Reports a call, as a statement of its own, of an `async def` function or
method defined in the project (in any file of the run): the result, a
coroutine, is discarded instead of awaited, passed to `asyncio.create_task`,
`gather` or similar.
"""
    why = """\
Calling a coroutine function does not run it: the body runs only when the
coroutine is awaited or scheduled. The weight-sync that "was called" never
happened; Python warns "coroutine ... was never awaited" only when the object
is garbage-collected, often far from the cause or not at all in a long-lived
rollout worker, and the trainer silently trains on stale weights.
"""
    limits = """\
Only calls whose target resolves to a project `async def` are checked
(functions through imports, `self.method` through base classes); methods of
objects of unknown class are not. A coroutine stored in a variable and never
awaited is not reported.
"""
    valid = (
        """
        import asyncio


        async def publish_weights(version):
            await asyncio.sleep(0)


        async def step(version):
            await publish_weights(version)
            task = asyncio.create_task(publish_weights(version))
            await task
        """,
    )
    invalid = (
        """
        async def publish_weights(version):
            return version


        class Trainer:
            async def sync(self):
                return 1

            async def step(self, version):
                publish_weights(version)  # expect: RNK402
                self.sync()  # expect: RNK402
        """,
    )

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterable[ProjectFinding]:
        return _discarded(project)


def _discarded(project: ProjectFacts) -> Iterator[ProjectFinding]:
    for call in project.discarded_coroutines:
        message = (
            f"`{call.label}()` calls the coroutine function `{call.callee}` and throws the "
            f"coroutine away: its body never runs; `await` it, or schedule it with "
            f"`asyncio.create_task(...)` (and keep a reference to the task)"
        )
        yield ProjectFinding.at(call.path, call.site, message)
