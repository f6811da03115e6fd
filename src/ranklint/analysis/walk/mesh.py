"""DeviceMesh facts, per file: the dimension names meshes declare, and ``mesh["name"]`` uses.

Recorded during the walk into the file's facts (the summary's ``mesh_names``,
``mesh_dynamic`` and ``mesh_uses``); the project phase joins them across files.

A name is declared by any call that passes ``mesh_dim_names`` (``init_device_mesh``,
``DeviceMesh(...)``, ``DeviceMesh.from_group``, a project helper that forwards
it), by ``mesh._unflatten(dim, sizes, names)`` and by ``mesh[...]._flatten("name")``
(or ``mesh_dim_name="name"``). Names computed at run time make the set unknown.
"""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.literals import string_value
from ranklint.analysis.walk.names import NameTable, dotted_name
from ranklint.analysis.walk.visitor import NodeVisitor

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
        "torch.distributed.device_mesh.DeviceMesh.from_group",
        "torch.distributed.DeviceMesh.from_group",
    }
)


def mesh_dim_names(node: cst.Call, positional: bool = True) -> cst.BaseExpression | None:
    """The ``mesh_dim_names`` argument of a mesh construction, by keyword or (for
    ``init_device_mesh``, ``positional``) as the third positional argument."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "mesh_dim_names":
            return arg.value
    if positional and len(node.args) > 2 and node.args[2].keyword is None:
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
    qualified = names.resolve(node.func)
    if qualified not in MESH_CONSTRUCTORS:
        return None
    # `DeviceMesh(...)` and `DeviceMesh.from_group(...)` take the names by keyword only.
    names_node = mesh_dim_names(node, positional=qualified in MESH_INITIALIZERS)
    if names_node is None:
        return None
    return names_node, literal_names(names_node)


def _argument(node: cst.Call, keyword: str, position: int) -> cst.BaseExpression | None:
    """The argument given by ``keyword``, or at ``position`` (0-based) when positional."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
    return positional[position].value if len(positional) > position else None


def declared_names(
    node: cst.Call, names: NameTable
) -> tuple[cst.BaseExpression, list[str | None]] | None:
    """(names argument, its literal names) of any call that declares mesh dimensions.

    Mesh constructions (by keyword or position), ``_unflatten(dim, sizes, names)``,
    ``_flatten("name")`` and any call that passes ``mesh_dim_names=``; else None.
    """
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "_flatten":
        flat = _argument(node, "mesh_dim_name", 0)
        return None if flat is None else (flat, [string_value(flat)])
    if isinstance(func, cst.Attribute) and func.attr.value == "_unflatten":
        unflat = _argument(node, "mesh_dim_names", 2)
        return None if unflat is None else (unflat, literal_names(unflat))
    declaration = mesh_declaration(node, names)
    if declaration is not None:
        return declaration
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "mesh_dim_names":
            return arg.value, literal_names(arg.value)  # a helper forwarding the names
    return None


class MeshRecorder(NodeVisitor):
    """Records the mesh declarations and uses of one file into its facts."""

    where = "analysis mesh"

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.ctx.facts
        declaration = declared_names(node, self.ctx.names)
        if declaration is None:
            return
        names = declaration[1]
        if isinstance(declaration[0], cst.Name) and declaration[0].value == "None":
            return  # `mesh_dim_names=None`: an unnamed mesh
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
