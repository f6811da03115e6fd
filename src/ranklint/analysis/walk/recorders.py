"""The fact recorders every walk runs, whatever rules are selected."""

from __future__ import annotations

from ranklint.analysis.walk.creations import CreationRecorder
from ranklint.analysis.walk.host_costs import HostCostRecorder
from ranklint.analysis.walk.mesh import MeshRecorder
from ranklint.analysis.walk.visitor import NodeVisitor

# They walk before the rules: a rule may read what they recorded at a node.
FACT_RECORDERS: tuple[type[NodeVisitor], ...] = (HostCostRecorder, MeshRecorder, CreationRecorder)
