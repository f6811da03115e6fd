"""RNK507 mesh-dims-mismatch."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import ClassVar

import libcst as cst

from ranklint.analysis.project.facts import ProjectFacts
from ranklint.analysis.walk.literals import int_value
from ranklint.analysis.walk.mesh import MESH_INITIALIZERS, mesh_declaration
from ranklint.findings import Severity
from ranklint.rules.base import ProjectFinding, Rule

logger = logging.getLogger(__name__)


class MeshDimsMismatch(Rule):
    code = "RNK507"
    name = "mesh-dims-mismatch"
    severity = Severity.ERROR
    project: ClassVar[bool] = True
    summary = "DeviceMesh shapes, dimension names and their uses disagree"
    # Its project-phase findings need every file of the project: a face that sees
    # one file of a larger project at a time (flake8) drops them, since a
    # dimension this file does not declare may be declared in another.
    whole_project = True
    what = """\
Reports `init_device_mesh(..., mesh_shape, mesh_dim_names=...)` with literal
shape and names of different lengths, and `mesh["name"]` (on receivers whose
last name contains `mesh`) with a name that no code of the run declares. A
name is declared by any mesh construction in any file (`init_device_mesh`,
`DeviceMesh(...)`, `DeviceMesh.from_group`, a helper called with
`mesh_dim_names=...`), by `mesh._unflatten(dim, sizes, names)`, and by
`mesh["dp", "cp"]._flatten("dp_cp")` or `_flatten(mesh_dim_name="dp_cp")`;
the names in `mesh-axes` (and `extend-mesh-axes`) count as declared too, for
meshes built outside the project. Names are never judged against a fixed list
of axes: a project's own axes (`edp`, `efsdp`, `infer_pp`) are as good as any.
When some mesh of the run is built from names computed at run time, the
declared set is unknown and the undeclared-name check is off; it is also off
when no code of the run declares a mesh.
"""
    why = """\
A shape/name mismatch raises only when the job starts on the cluster; a
dimension no mesh declares (`mesh["dp_shrd"]`) raises a `KeyError` deep inside
model construction, after minutes of start-up on every rank.
"""
    limits = """\
Only literal shapes and names are compared; meshes built from computed names,
and indexing of meshes stored under names without `mesh`, are not checked.
The shape/name mismatch needs one call and is reported in every run. The
undeclared-name check joins the declarations of every file of the project: a
run that does not see all of them (the flake8 face, one file at a time; a
cold run over part of a project, such as `ranklint check .` in a sub-folder
of a larger repository, that did not reach its other files) does not judge
names, and says so with `--verbose`. A run with `--no-project-index` judges
names against the files it was given.
"""
    valid = (
        """
        from torch.distributed.device_mesh import init_device_mesh


        def build_mesh(world_size):
            mesh = init_device_mesh("cuda", (world_size // 4, 4), mesh_dim_names=("dp", "tp"))
            return mesh["tp"], mesh["dp"].get_group()
        """,
        """
        from torch.distributed.device_mesh import init_device_mesh


        # Dimensions a helper declares with `_flatten` and `_unflatten`
        # (the shapes of torchtitan-style parallel-dims helpers).
        def build_mesh(world_size, ep):
            mesh = init_device_mesh("cuda", (world_size,), mesh_dim_names=("world",))
            mesh = mesh._unflatten(0, (world_size // ep, ep), ("edp", "efsdp"))
            mesh["edp", "efsdp"]._flatten(mesh_dim_name="dp_all")
            return mesh["edp"], mesh["efsdp"], mesh["dp_all"]
        """,
    )
    invalid = (
        """
        from torch.distributed.device_mesh import init_device_mesh


        def build_mesh():
            mesh = init_device_mesh("cuda", (2, 4), ("dp", "tp", "pp"))  # expect: RNK507
            return mesh["tq"]  # expect: RNK507
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        declaration = mesh_declaration(node, self.ctx.names)
        if declaration is None:
            return
        names_node, names = declaration
        if None in names or not isinstance(names_node, (cst.Tuple, cst.List)):
            return
        if self.ctx.names.resolve(node.func) not in MESH_INITIALIZERS:
            return  # `DeviceMesh(device_type, mesh)`: the second argument is not a shape
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword}
        shape_node = keywords.get("mesh_shape")
        if shape_node is None and len(node.args) > 1 and node.args[1].keyword is None:
            shape_node = node.args[1].value
        if not isinstance(shape_node, (cst.Tuple, cst.List)):
            return
        dimensions = shape_node.elements
        if all(int_value(e.value) is not None for e in dimensions) and len(dimensions) != len(
            names
        ):
            self.report(
                node,
                f"the mesh shape has {len(dimensions)} dimensions but `mesh_dim_names` "
                f"names {len(names)}: the mesh fails to build when the job starts; give one "
                f"name per dimension",
            )

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterator[ProjectFinding]:
        """``mesh["name"]`` where no mesh construction of the project declares ``name``."""
        mesh = project.mesh
        if mesh.dynamic or not mesh.constructed:
            return  # names computed at run time, or meshes come from elsewhere
        declared = mesh.declared | project.settings.mesh_axes
        known = ", ".join(f'"{name}"' for name in sorted(declared))
        for use in mesh.uses:
            if use.name in declared:
                continue
            message = (
                f'mesh dimension "{use.name}" is not declared by any mesh this project builds '
                f"({known}): indexing raises at run time; check the spelling or add the "
                f"dimension to `mesh_dim_names`"
            )
            yield ProjectFinding.at(use.path, use.site, message)
