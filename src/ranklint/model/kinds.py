"""What a distributed call does to its group, as the catalog and the events name it."""

from __future__ import annotations

import enum


class CallKind(enum.Enum):
    COLLECTIVE = "collective"
    POINT_TO_POINT = "point-to-point"
    GROUP_CREATION = "group-creation"
    # init_process_group: creates the default group, once per process, with
    # the process's own rank as an argument by design.
    INITIALIZATION = "initialization"
    BARRIER = "barrier"

    @property
    def synchronising(self) -> bool:
        """Every member of the group must reach the call (not point-to-point)."""
        return self not in (CallKind.POINT_TO_POINT, CallKind.INITIALIZATION)

    @property
    def creates_groups(self) -> bool:
        return self in (CallKind.GROUP_CREATION, CallKind.INITIALIZATION)
