"""DeviceMesh facts, per file: the dimension names meshes declare, and ``mesh["name"]`` uses.

Recorded during the walk into the file's facts (the summary's ``mesh_names``,
``mesh_dynamic`` and ``mesh_uses``); the project phase joins them across files.
"""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.literals import string_value
from ranklint.analysis.names import NameTable, dotted_name
from ranklint.analysis.visitor import NodeVisitor

# `init_device_mesh`: builds a mesh from a shape (and `mesh_dim_names`).
MESH_INITIALIZERS = frozenset(
    {
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.init_device_mesh",
    }
)
# Calls that build a DeviceMesh with `mesh_dim_names`.
MESH_CONSTRUCTORS = frozenset(
    {
        *MESH_INITIALIZERS,
        "torch.distributed.device_mesh.DeviceMesh",
        "torch.distributed.DeviceMesh",
    }
)


def mesh_dim_names(node: cst.Call) -> cst.BaseExpression | None:
    """The ``mesh_dim_names`` argument of a mesh construction, by keyword or position."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "mesh_dim_names":
            return arg.value
    if len(node.args) > 2 and node.args[2].keyword is None:
        return node.args[2].value
    return None


def literal_names(names_node: cst.BaseExpression) -> list[str | None]:
    """The names of a literal tuple or list (None for each non-literal), else ``[None]``."""
    if isinstance(names_node, (cst.Tuple, cst.List)):
        return [string_value(element.value) for element in names_node.elements]
    return [None]


def mesh_declaration(
    node: cst.Call, names: NameTable
) -> tuple[cst.BaseExpression, list[str | None]] | None:
    """(``mesh_dim_names`` argument, its literal names) of a mesh construction, else None."""
    if names.resolve(node.func) not in MESH_CONSTRUCTORS:
        return None
    names_node = mesh_dim_names(node)
    if names_node is None:
        return None
    return names_node, literal_names(names_node)


class MeshRecorder(NodeVisitor):
    """Records the mesh declarations and uses of one file into its facts."""

    where = "analysis mesh"

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.ctx.facts
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "_flatten" and node.args:
            flat = string_value(node.args[0].value)
            if flat is not None:
                facts.mesh_names.add(flat)
            return
        declaration = mesh_declaration(node, self.ctx.names)
        if declaration is None:
            return
        names = declaration[1]
        if None in names:
            facts.mesh_dynamic = True
            return
        facts.mesh_names.update(name for name in names if name is not None)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        receiver = dotted_name(node.value)
        if receiver is None or "mesh" not in receiver.rpartition(".")[2].lower():
            return
        elements = node.slice
        values = []  # pragma: no mutate  (both branches below assign it)
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            index = elements[0].slice.value
            if isinstance(index, cst.Tuple):
                values = [string_value(e.value) for e in index.elements]
            else:
                values = [string_value(index)]
        else:
            values = [
                string_value(e.slice.value) if isinstance(e.slice, cst.Index) else None
                for e in elements
            ]
        ctx = self.ctx
        for value in values:
            if value is None:
                continue
            site = ctx.facts.record_site(node, ctx.place)
            ctx.facts.mesh_uses.append((site, value))
