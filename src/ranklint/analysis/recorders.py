"""The fact recorders every walk runs, whatever rules are selected."""

from __future__ import annotations

from ranklint.analysis.creations import CreationRecorder
from ranklint.analysis.host_costs import HostCostRecorder
from ranklint.analysis.mesh import MeshRecorder
from ranklint.analysis.visitor import NodeVisitor

# They walk before the rules: a rule may read what they recorded at a node.
FACT_RECORDERS: tuple[type[NodeVisitor], ...] = (HostCostRecorder, MeshRecorder, CreationRecorder)
