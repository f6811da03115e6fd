"""RNK507 mesh-dims-mismatch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import libcst as cst

from ranklint.analysis.literals import int_value
from ranklint.analysis.mesh import mesh_declaration
from ranklint.analysis.project import ProjectFacts
from ranklint.findings import Severity
from ranklint.rules.base import ProjectFinding, Rule


def _near_miss(name: str, axes: frozenset[str]) -> str | None:
    """The axis ``name`` is one edit from (two for names of 6+ characters), if any."""
    limit = 2 if len(name) >= 6 else 1
    best: tuple[int, str] | None = None
    for axis in sorted(axes):
        if axis == name or abs(len(axis) - len(name)) > limit:
            continue
        distance = _edit_distance(name, axis, limit)
        if distance <= limit and (best is None or distance < best[0]):
            best = (distance, axis)
    return best[1] if best is not None else None


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of two short strings, capped at ``limit + 1``."""
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


class MeshDimsMismatch(Rule):
    code = "RNK507"
    name = "mesh-dims-mismatch"
    severity = Severity.ERROR
    project: ClassVar[bool] = True
    summary = "DeviceMesh shapes, dimension names and their uses disagree"
    what = """\
Reports `init_device_mesh(..., mesh_shape, mesh_dim_names=...)` with literal
shape and names of different lengths; dimension names outside the declared
parallelism axes (`mesh-axes`, default `dp_replicate`, `dp_shard`, `dp`, `cp`,
`tp`, `pp`, `ep`, `etp`, `sp` and combinations such as `dp_shard_cp`;
`extend-mesh-axes` adds) that are one edit (two, for names of six or more
characters) from an axis: misspellings (`dp_shrd`, `tpp`); a deliberate
project-specific axis (`infer_pp`) is not reported; and `mesh["name"]` (on
names that contain `mesh`)
with a name that no mesh construction in the project declares and that is not
in `mesh-axes`, in any file of the run (names flattened with
`_flatten("name")` count as declared; when some mesh of the run is built from
names computed at run time, the declared set is unknown and this check is off).
"""
    why = """\
A shape/name mismatch raises only when the job starts on the cluster; a
misspelt dimension (`mesh["dp_shrd"]`) raises a `KeyError` deep inside model
construction, after minutes of start-up on every rank. Names outside the
project's axes usually mean a typo or a second naming convention creeping in.
"""
    limits = """\
Only literal shapes and names are compared; meshes built from computed names,
and indexing of meshes stored under names without `mesh`, are not checked.
Undeclared-name checks need a mesh construction somewhere in the run.
"""
    valid = (
        """
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))
        tp_mesh = mesh["tp"]
        dp_group = mesh["dp"].get_group()
        """,
    )
    invalid = (
        """
        from torch.distributed.device_mesh import init_device_mesh

        mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp", "pp"))  # expect: RNK507
        other = init_device_mesh("cuda", (8,), mesh_dim_names=("dp_shrd",))  # expect: RNK507
        rollout = init_device_mesh("cuda", (8,), mesh_dim_names=("infer_pp",))
        tp_mesh = mesh["tq"]  # expect: RNK507
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        declaration = mesh_declaration(node, self.ctx.names)
        if declaration is None:
            return
        names_node, names = declaration
        if None in names:
            return
        axes = self.ctx.settings.mesh_axes
        for element, value in zip(names_node.elements, names, strict=True):  # type: ignore[attr-defined]
            near = _near_miss(value, axes)
            if value not in axes and near is not None:
                self.report(
                    element.value,
                    f'mesh dimension "{value}" looks like a misspelling of the axis "{near}" '
                    f'(`mesh-axes`): code that asks for "{near}" will not find it; fix the '
                    f"name, or add it to `extend-mesh-axes` if it is meant",
                )
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
            yield ProjectFinding.at(use.path, use.site, f'mesh["{use.name}"]', message)
