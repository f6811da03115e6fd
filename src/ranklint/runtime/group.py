"""``RecordingGroup``: the process group of threads mode.

Every collective of a rank reaches one of its methods (the ``torch.distributed``
calls, functional collectives, DTensor and FSDP2). Each method describes the
collective (op, members, shapes, dtypes, root, reduce op, the user's line and
the torch API called), hands it to the :class:`~ranklint.runtime.threads.World`
to meet the other members, and lets the threaded world's data-moving classes
do the work once all have arrived.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

import ranklint.runtime._torch as _torch
import ranklint.runtime.stacks as stacks
from ranklint.runtime.report import Collective

logger = logging.getLogger(__name__)


def _reduce_name(opts: Any) -> str:
    """``SUM``, ``AVG``, ...: the name of the options' reduction."""
    return str(opts.reduceOp.op.name)


def _dtype(tensor: Any) -> str:
    """``float32``, ``int64``, ...: the dtype without torch's prefix."""
    return str(tensor.dtype).removeprefix("torch.")


def _tensors(value: Any) -> list[Any]:
    """The tensors in a (nested) list, in order."""
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return [value] if hasattr(value, "shape") else []


def make_group_class(world: Any, api: _torch.ThreadsApi, dist: Any, torch: Any) -> type:
    """Our ProcessGroup subclass, bound to ``world``."""
    ops = api.ops

    class RecordingGroup(dist.ProcessGroup):  # type: ignore[misc,name-defined]
        """A threaded process group that records, compares and moves the data."""

        def __init__(self, rank: int, members: tuple[int, ...], global_rank: int) -> None:
            super().__init__(rank, len(members))
            self._group_rank = rank
            self._members = members
            self._global_rank = global_rank

        def size(self) -> int:
            return len(self._members)

        @property
        def group_name(self) -> str:
            return api.group_name(self)

        @property
        def pg_name(self) -> str:
            return api.group_name(self)

        def getBackendName(self) -> str:
            return "ranklint-threads"

        def __repr__(self) -> str:
            return f"RecordingGroup(ranks={list(self._members)}, rank={self._group_rank})"

        def _record(
            self,
            op: str,
            inputs: Any,
            data: Any,
            work: Any,
            *,
            root: int | None = None,
            reduce_op: str | None = None,
            extra: tuple[tuple[str, str], ...] = (),
        ) -> Any:
            frames = stacks.frames_of(sys._getframe(1))
            site, api_name = stacks.locate(frames, world.roots)
            name = str(self.group_name)
            tensors = _tensors(inputs)
            collective = Collective(
                op=op,
                group=self._members,
                group_name=name,
                seq=world.next_seq(self._global_rank, name),
                shapes=tuple(tuple(t.shape) for t in tensors),
                dtypes=tuple(_dtype(t) for t in tensors),
                root=None if root is None else self._members[root],
                reduce_op=reduce_op,
                api=api_name,
                site=site,
                extra=extra,
                callers=stacks.callers(frames, world.roots),
            )
            world.collective(
                self._global_rank, collective, data, None if work is None else work.work
            )
            return api.ret_work(data)

        # Group creation is a collective of the default group.
        def new_group(
            self,
            ranks: Sequence[int],
            timeout: Any = None,
            pg_options: Any = None,
            group_name: str | None = None,
            group_desc: str | None = None,
        ) -> Any:
            members = tuple(int(r) for r in ranks)
            if group_name is None or str(group_name).isdigit():
                # Every rank of the world calls new_group (not use_local_synchronization).
                extra = (("ranks", str(list(members))),)
                self._record("new_group", [], None, None, extra=extra)
            if self._global_rank not in members:
                return None
            return RecordingGroup(members.index(self._global_rank), members, self._global_rank)

        def allreduce(self, tensor_list: Any, opts: Any = None) -> Any:
            reduce = ops["AllReduce"](opts.reduceOp)
            name = _reduce_name(opts)
            return self._record("all_reduce", tensor_list, tensor_list, reduce, reduce_op=name)

        def allreduce_coalesced(self, tensor_list: Any, opts: Any = None) -> Any:
            reduce = ops["AllReduce"](opts.reduceOp)
            name = _reduce_name(opts)
            return self._record(
                "all_reduce_coalesced", tensor_list, tensor_list, reduce, reduce_op=name
            )

        def barrier(self, opts: Any = None) -> Any:
            return self._record("barrier", [], None, None)

        def allgather(self, output_tensors: Any, input_tensor: Any, opts: Any = None) -> Any:
            data = (output_tensors, input_tensor)
            return self._record("all_gather", input_tensor, data, ops["AllGather"]())

        def all_gather_single(self, output_tensor: Any, input_tensor: Any, opts: Any = None) -> Any:
            chunks = list(torch.chunk(output_tensor, self.size()))
            data = ([chunks], [input_tensor])
            return self._record("all_gather_single", [input_tensor], data, ops["AllGather"]())

        def all_gather_single_coalesced(
            self, output_tensors: Any, input_tensors: Any, opts: Any = None
        ) -> Any:
            result = None
            for output, tensor in zip(output_tensors, input_tensors, strict=True):
                result = self.all_gather_single(output, tensor, opts)
            return result

        def broadcast(self, tensor_list: Any, opts: Any = None) -> Any:
            root = int(opts.rootRank)
            work = ops["Broadcast"](root)
            return self._record("broadcast", tensor_list, tensor_list, work, root=root)

        def scatter(self, output_tensors: Any, input_tensors: Any, opts: Any = None) -> Any:
            root = int(opts.rootRank)
            data = (output_tensors, input_tensors)
            return self._record("scatter", output_tensors, data, ops["Scatter"](root), root=root)

        def gather(self, output_tensors: Any, input_tensors: Any, opts: Any = None) -> Any:
            root = int(opts.rootRank)
            data = (output_tensors, input_tensors)
            return self._record("gather", input_tensors, data, ops["Gather"](root), root=root)

        def reduce(self, tensor_list: Any, opts: Any = None) -> Any:
            root = int(opts.rootRank)
            name = _reduce_name(opts)
            work = _Reduce(ops["AllReduce"](opts.reduceOp), root, torch)
            return self._record("reduce", tensor_list, tensor_list, work, root=root, reduce_op=name)

        def reduce_scatter(self, output_tensor: Any, scatter_list: Any, opts: Any = None) -> Any:
            name = _reduce_name(opts)
            data = (output_tensor, scatter_list)
            work = ops["ReduceScatter"](opts.reduceOp)
            return self._record("reduce_scatter", output_tensor, data, work, reduce_op=name)

        def reduce_scatter_single(
            self, output_tensor: Any, input_tensor: Any, opts: Any = None
        ) -> Any:
            name = _reduce_name(opts)
            chunks = list(torch.chunk(input_tensor, self.size()))
            data = ([output_tensor], [chunks])
            work = ops["ReduceScatter"](opts.reduceOp)
            return self._record("reduce_scatter_single", [input_tensor], data, work, reduce_op=name)

        def reduce_scatter_single_coalesced(
            self, output_tensors: Any, input_tensors: Any, opts: Any = None
        ) -> Any:
            result = None
            for output, tensor in zip(output_tensors, input_tensors, strict=True):
                result = self.reduce_scatter_single(output, tensor, opts)
            return result

        def alltoall(
            self, output_tensor_list: Any, input_tensor_list: Any, opts: Any = None
        ) -> Any:
            data = (output_tensor_list, input_tensor_list)
            return self._record("all_to_all", input_tensor_list, data, ops["AllToAll"]())

        def all_to_all_single(
            self,
            output_buffer: Any,
            input_buffer: Any,
            output_split_sizes: Any,
            input_split_sizes: Any,
            opts: Any = None,
        ) -> Any:
            data = (output_buffer, input_buffer, output_split_sizes, input_split_sizes)
            work = ops["AllToAllBase"]()
            return self._record("all_to_all_single", [input_buffer], data, work)

        def send(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError(
                "point-to-point send/recv are not simulated in threads mode; use mode='gloo'"
            )

        recv = send
        recv_anysource = send

    return RecordingGroup


class _Reduce:
    """``reduce``: the reduction lands on the root only; the others keep their input."""

    def __init__(self, reduce: Any, root: int, torch: Any) -> None:
        self.reduce = reduce
        self.root = root
        self.torch = torch

    def work(self, data: list[Any]) -> None:
        with self.torch.no_grad():
            keep = [[t.clone() for t in tensors] for tensors in data]
            self.reduce.work(data)
            for rank, tensors in enumerate(data):
                if rank != self.root:
                    for tensor, kept in zip(tensors, keep[rank], strict=True):
                        tensor.copy_(kept)
