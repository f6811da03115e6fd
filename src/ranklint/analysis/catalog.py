"""The catalog of distributed calls, as data.

Each :class:`CallSpec` names a distributed API by every qualified name it is
reachable under (re-exports included), its kind, and where its root, reduce op
and group parameters sit. Rules look calls up here instead of writing ``if``
chains; later analyses add rows, not code.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class CallKind(enum.Enum):
    COLLECTIVE = "collective"
    POINT_TO_POINT = "point-to-point"
    GROUP_CREATION = "group-creation"
    BARRIER = "barrier"


@dataclass(frozen=True)
class ParamRef:
    """A parameter by keyword, and by position when it may be passed positionally."""

    keyword: str
    position: int | None = None


@dataclass(frozen=True)
class CallSpec:
    name: str
    kind: CallKind
    qualified_names: tuple[str, ...]
    root: ParamRef | None = None
    op: ParamRef | None = None
    group: ParamRef | None = None


def _torch_dist(*names: str) -> tuple[str, ...]:
    """``torch.distributed.X`` and its home ``torch.distributed.distributed_c10d.X``."""
    out: list[str] = []
    for name in names:
        out += [f"torch.distributed.{name}", f"torch.distributed.distributed_c10d.{name}"]
    return tuple(out)


_MESH = "torch.distributed.device_mesh"

CATALOG: tuple[CallSpec, ...] = (
    CallSpec(
        "init_process_group",
        CallKind.GROUP_CREATION,
        _torch_dist("init_process_group"),
    ),
    CallSpec("new_group", CallKind.GROUP_CREATION, _torch_dist("new_group")),
    CallSpec("new_subgroups", CallKind.GROUP_CREATION, _torch_dist("new_subgroups")),
    CallSpec(
        "new_subgroups_by_enumeration",
        CallKind.GROUP_CREATION,
        _torch_dist("new_subgroups_by_enumeration"),
    ),
    CallSpec(
        "init_device_mesh",
        CallKind.GROUP_CREATION,
        (f"{_MESH}.init_device_mesh", "torch.distributed.init_device_mesh"),
    ),
    CallSpec(
        "DeviceMesh",
        CallKind.GROUP_CREATION,
        (f"{_MESH}.DeviceMesh", "torch.distributed.DeviceMesh"),
    ),
    CallSpec(
        "DeviceMesh.from_group",
        CallKind.GROUP_CREATION,
        (f"{_MESH}.DeviceMesh.from_group", "torch.distributed.DeviceMesh.from_group"),
    ),
    CallSpec(
        "deepspeed.init_distributed",
        CallKind.GROUP_CREATION,
        ("deepspeed.init_distributed", "deepspeed.comm.init_distributed"),
    ),
)


def _index(specs: Iterable[CallSpec]) -> dict[str, CallSpec]:
    index: dict[str, CallSpec] = {}
    for spec in specs:
        for qualified in spec.qualified_names:
            if qualified in index:
                raise ValueError(f"catalog lists {qualified!r} twice")
            index[qualified] = spec
    return index


BY_QUALIFIED_NAME: dict[str, CallSpec] = _index(CATALOG)


def lookup(qualified_name: str | None) -> CallSpec | None:
    """The catalog row for a resolved call target, or ``None``."""
    if qualified_name is None:
        return None
    return BY_QUALIFIED_NAME.get(qualified_name)
