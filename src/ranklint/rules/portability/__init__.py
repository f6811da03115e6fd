"""Portability and configuration rules (RNK5xx): code that only runs on one machine."""

from __future__ import annotations

from ranklint.rules.portability.debug_flag_left_on import DebugFlagLeftOn
from ranklint.rules.portability.free_form_choice import FreeFormChoice
from ranklint.rules.portability.hard_coded_credential import HardCodedCredential
from ranklint.rules.portability.hard_coded_endpoint import HardCodedEndpoint
from ranklint.rules.portability.hard_coded_topology import HardCodedTopology
from ranklint.rules.portability.machine_specific_path import MachineSpecificPath
from ranklint.rules.portability.mesh_dims_mismatch import MeshDimsMismatch

__all__ = [
    "DebugFlagLeftOn",
    "FreeFormChoice",
    "HardCodedCredential",
    "HardCodedEndpoint",
    "HardCodedTopology",
    "MachineSpecificPath",
    "MeshDimsMismatch",
]
