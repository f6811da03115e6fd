"""The one place that touches torch's private distributed APIs.

The runtime companion depends on four things torch does not promise to keep:

- the threaded world of ``torch.testing._internal.distributed.multi_threaded_pg``
  (its thread-local ``_world`` and the data-moving collective classes);
- ``torch._C._distributed_c10d._set_thread_isolation_mode``, which makes
  functional collectives resolve groups per thread;
- the Flight Recorder dump (``torch._C._distributed_c10d._dump_fr_trace``) and
  the layout of its entries;
- ``distributed_c10d``'s world (its registered group names) and default store.

:func:`threads_api` and :func:`read_flight_recorder` check them and fail with
:class:`TorchAdapterError`, naming what moved, so that a torch release that
changes them fails loudly (``tests/runtime/test_adapter.py``) instead of hanging.
"""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ranklint.runtime.flight_recorder import DumpError, RecordedOp, recorded_ops

logger = logging.getLogger(__name__)

#: The collective classes of the threaded world that move the data.
_OP_CLASSES = (
    "AllReduce",
    "AllGather",
    "Broadcast",
    "Scatter",
    "Gather",
    "ReduceScatter",
    "AllToAll",
    "AllToAllBase",
)


class TorchAdapterError(RuntimeError):
    """A private torch API the runtime companion needs is missing or changed."""


def _torch_version() -> str:
    try:
        import torch
    except ImportError:
        return "not installed"
    return str(torch.__version__)


def _missing(what: str) -> TorchAdapterError:
    return TorchAdapterError(
        f"ranklint.runtime needs {what}, which torch {_torch_version()} does not provide; "
        "the companion is tested with torch 2.13 (pip install 'ranklint[runtime]'). "
        "mode='gloo' needs none of the threaded world's internals."
    )


def import_torch() -> tuple[ModuleType, ModuleType]:
    """``torch`` and ``torch.distributed``, or a clear error when they are absent."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError as error:
        raise TorchAdapterError(
            "ranklint.runtime needs torch: pip install 'ranklint[runtime]'"
        ) from error
    if not dist.is_available():
        raise TorchAdapterError(f"torch {torch.__version__} was built without torch.distributed")
    return torch, dist


@dataclass(frozen=True)
class ThreadsApi:
    """The threaded world's pieces, checked."""

    module: ModuleType
    ops: dict[str, type]
    ret_work: Any
    set_isolation: Any

    def install(self) -> Any:
        """Give every thread its own ``distributed_c10d._world``."""
        return self.module._install_threaded_pg()

    def group_name(self, group: Any) -> str:
        """The name this thread's world registered ``group`` under."""
        import torch.distributed.distributed_c10d as c10d

        return str(c10d._world.pg_names[group])

    def uninstall(self) -> None:
        """Put the process-wide world back."""
        self.module._uninstall_threaded_pg()


def threads_api() -> ThreadsApi:
    """The threaded world's private API, or :class:`TorchAdapterError` naming what moved."""
    import_torch()
    try:
        from torch.testing._internal.distributed import multi_threaded_pg as module
    except Exception as error:  # the module may also fail on import, not only be absent
        raise _missing("torch.testing._internal.distributed.multi_threaded_pg") from error
    for name in (*_OP_CLASSES, "ret_work", "_install_threaded_pg", "_uninstall_threaded_pg"):
        if not hasattr(module, name):
            raise _missing(f"multi_threaded_pg.{name}")
    import torch

    set_isolation = getattr(torch._C._distributed_c10d, "_set_thread_isolation_mode", None)
    if set_isolation is None:
        raise _missing("torch._C._distributed_c10d._set_thread_isolation_mode")
    return ThreadsApi(
        module=module,
        ops={name: getattr(module, name) for name in _OP_CLASSES},
        ret_work=module.ret_work,
        set_isolation=set_isolation,
    )


def threads_available() -> bool:
    """Whether the threaded world can be used (else run_ranks falls back to gloo)."""
    try:
        threads_api()
    except TorchAdapterError as error:
        logger.debug("threads mode unavailable: %s", error)
        return False
    return True


def default_store(dist: ModuleType) -> Any:
    """The default group's store (to meet outside any collective)."""
    return dist.distributed_c10d._get_default_store()


def known_groups(dist: ModuleType) -> dict[str, tuple[int, ...]]:
    """The name and global ranks of every group this process's world registered."""
    groups: dict[str, tuple[int, ...]] = {}
    for group, name in list(dist.distributed_c10d._world.pg_names.items()):
        try:
            groups[str(name)] = tuple(dist.get_process_group_ranks(group))
        except Exception:  # a group torch keeps for itself
            logger.debug("no ranks for group %s", name, exc_info=True)
    return groups


def dump_flight_recorder() -> bytes:
    """This process's Flight Recorder buffer, pickled as torch writes it."""
    import torch

    dump = getattr(torch._C._distributed_c10d, "_dump_fr_trace", None)
    if dump is None:
        raise _missing("torch._C._distributed_c10d._dump_fr_trace (Flight Recorder)")
    return bytes(dump())


def warm_stack_symbolizer() -> None:
    """Set up the symboliser that turns captured stacks into (file, line, name).

    A process's first Flight Recorder dump with an entry spends about 1 s on it;
    a forked child inherits it from its parent once the parent has used it.
    Capturing and symbolising one stack is enough: no process group, no entry."""
    from torch._C import _profiler

    gather = getattr(_profiler, "gather_traceback", None)
    symbolize = getattr(_profiler, "symbolize_tracebacks", None)
    if gather is None or symbolize is None:
        raise _missing("torch._C._profiler.gather_traceback / symbolize_tracebacks")
    symbolize([gather(True, True, False)])  # python, script, no C++ frames


def read_flight_recorder(data: bytes) -> list[RecordedOp]:
    """The collectives of a Flight Recorder dump, in the order they were issued."""
    try:
        dump = pickle.loads(data)
        entries = dump["entries"]
    except Exception as error:
        raise _missing("a Flight Recorder dump with 'entries'") from error
    try:
        return recorded_ops(entries)
    except DumpError as error:
        raise _missing(str(error)) from error


#: ProcessGroup methods whose options carry what Flight Recorder leaves out.
_ANNOTATED = (
    "allreduce",
    "allreduce_coalesced",
    "broadcast",
    "reduce",
    "scatter",
    "gather",
    "reduce_scatter",
    "reduce_scatter_single",
)


@dataclass(frozen=True)
class Annotation:
    """What a gloo rank's Python-issued collective had besides Flight Recorder's record.

    ``method`` is the ProcessGroup method (or ``new_group``), ``root`` the
    group-local root, ``reduce_op`` the reduction's name, ``ranks`` the new
    group's members; ``time_ns`` orders it against Flight Recorder's entries.
    """

    method: str
    group_name: str
    time_ns: int
    root: int | None = None
    reduce_op: str | None = None
    ranks: tuple[int, ...] | None = None
    frames: tuple[tuple[str, int, str], ...] = ()


def record_annotations(sink: list[Annotation], frames: Any) -> None:
    """Wrap this process's ProcessGroup methods and ``new_group`` to append to ``sink``.

    For forked gloo ranks only: the wrappers stay until the process ends.
    ``frames(frame)`` turns a live frame into the (file, line, function) list.
    """
    import sys
    import time

    import torch
    import torch.distributed.distributed_c10d as c10d

    group_class = torch._C._distributed_c10d.ProcessGroup
    for method in _ANNOTATED:
        original = getattr(group_class, method, None)
        if original is None:
            raise _missing(f"ProcessGroup.{method}")
        setattr(group_class, method, _annotating(method, original, sink))
    create = getattr(c10d, "_new_group_with_tag", None)
    if create is None:
        raise _missing("distributed_c10d._new_group_with_tag")

    def new_group(ranks: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("use_local_synchronization", False):
            members = tuple(sorted(ranks)) if ranks else tuple(range(c10d.get_world_size()))
            sink.append(
                Annotation(
                    "new_group",
                    str(c10d._get_default_group().group_name),
                    time.time_ns(),
                    ranks=members,
                    frames=tuple(frames(sys._getframe(1))),
                )
            )
        return create(ranks, *args, **kwargs)

    c10d._new_group_with_tag = new_group


def _annotating(method: str, original: Any, sink: list[Annotation]) -> Any:
    import time

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        opts = next(
            (a for a in reversed(args) if hasattr(a, "reduceOp") or hasattr(a, "rootRank")), None
        )
        root = getattr(opts, "rootRank", None)
        op = getattr(opts, "reduceOp", None)
        name = str(getattr(op, "op", op)).rpartition(".")[2] if op is not None else None
        root_rank = int(root) if root is not None else None
        sink.append(Annotation(method, str(self.group_name), time.time_ns(), root_rank, name))
        return original(self, *args, **kwargs)

    return wrapper
