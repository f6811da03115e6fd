"""DeviceMesh facts (RNK507): the dimension names meshes declare, and ``mesh["name"]`` uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from ranklint.findings import Finding
from tests.conftest import findings_of, write

_IMPORT = "from torch.distributed.device_mesh import init_device_mesh\n\n"
# Declared names far from every default `mesh-axes` name (no misspelling findings).
_MESH = 'mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("inner", "outer"))\n'


def _undeclared(name: str) -> str:
    return (
        f'mesh dimension "{name}" is not declared by any mesh this project builds ('
        '"cp", "ddp", "dp", "dp_cp", "dp_replicate", "dp_shard", "dp_shard_cp", "ep", '
        '"ep_tp", "etp", "fsdp", "hsdp", "inner", "outer", "pp", "replicate", "shard", "sp", '
        '"tp"): '
        "indexing raises at run time; check the spelling or add the dimension to "
        "`mesh_dim_names`"
    )


def _rnk507(body: str) -> list[Finding]:
    return findings_of(_IMPORT + body, select=("RNK507",))


@pytest.mark.parametrize(
    ("use", "undeclared"),
    [
        ('mesh["inner"]', []),
        ('mesh["nope"]', ["nope"]),
        ('self.mesh["nope"]', ["nope"]),
        ('mesh["inner", "nope"]', ["nope"]),
        ('mesh[("nope", "outer")]', ["nope"]),
        ('mesh[("nope", "zilch")]', ["nope", "zilch"]),
        ('mesh[index, "nope"]', ["nope"]),
        ('mesh["nope", index, "zilch"]', ["nope", "zilch"]),
        # Not a mesh dimension: a slice, or a receiver whose last name is not a mesh.
        ("mesh[1:]", []),
        ('mesh["nope":]', []),
        ('config.mesh.sizes["nope"]', []),
        ('mesh_config.sizes["nope"]', []),
    ],
)
def test_each_undeclared_dimension_a_mesh_index_names_is_reported(
    use: str, undeclared: list[str]
) -> None:
    findings = _rnk507(_MESH + f"x = {use}\n")

    assert [(f.line, f.message) for f in findings] == [(4, _undeclared(n)) for n in undeclared]


@pytest.mark.parametrize(
    "construction",
    [
        'init_device_mesh("cuda", (2, 4), ("inner", "outer"))',
        'init_device_mesh("cuda", (2, 4), mesh_dim_names=("inner", "outer"))',
        'init_device_mesh("cuda", mesh_shape=(2, 4), mesh_dim_names=("inner", "outer"))',
    ],
    ids=["positional", "keyword", "all-keywords"],
)
def test_mesh_dim_names_are_declared_by_keyword_or_third_positional_argument(
    construction: str,
) -> None:
    findings = _rnk507(f'mesh = {construction}\nx = mesh["outer"]\ny = mesh["nope"]\n')

    assert [(f.line, f.message) for f in findings] == [(5, _undeclared("nope"))]


def test_shape_and_positional_names_of_different_lengths_are_reported() -> None:
    findings = _rnk507('mesh = init_device_mesh("cuda", (2, 4), ("inner", "outer", "extra"))\n')

    assert [(f.line, f.col, f.message) for f in findings] == [
        (
            3,
            8,
            "the mesh shape has 2 dimensions but `mesh_dim_names` names 3: the mesh fails "
            "to build when the job starts; give one name per dimension",
        )
    ]


def test_a_third_argument_given_by_keyword_is_not_taken_for_the_names() -> None:
    findings = _rnk507(
        _MESH + 'other = init_device_mesh("cuda", (8,), backend_override=backends)\n'
        'x = mesh["nope"]\n'
    )

    assert [(f.line, f.message) for f in findings] == [(5, _undeclared("nope"))]


@pytest.mark.parametrize(
    "declaration",
    [
        'mesh = mesh._unflatten(0, (2, 4), ("edp", "efsdp"))',
        'mesh = mesh._unflatten("inner", (2, 4), mesh_dim_names=("edp", "efsdp"))',
        'mesh["inner", "outer"]._flatten("edp")\nmesh["inner", "outer"]._flatten("efsdp")',
        'mesh["inner", "outer"]._flatten(mesh_dim_name="edp")\n'
        'mesh["inner"]._flatten(mesh_dim_name="efsdp")',
        'other = DeviceMesh("cuda", [[0, 1], [2, 3]], mesh_dim_names=("edp", "efsdp"))',
        'other = build_mesh(world, mesh_dim_names=("edp", "efsdp"))',
    ],
    ids=["unflatten", "unflatten-keyword", "flatten", "flatten-keyword", "device-mesh", "helper"],
)
def test_dimensions_declared_by_unflatten_flatten_device_mesh_or_a_helper_are_not_reported(
    declaration: str,
) -> None:
    source = (
        "from torch.distributed.device_mesh import DeviceMesh\n"
        + _MESH
        + declaration
        + '\nx = mesh["edp"]\ny = mesh["efsdp"]\n'
    )

    assert _rnk507(source) == []


def test_helper_given_computed_dimension_names_turns_the_undeclared_check_off() -> None:
    helper = "other = build_mesh(world, mesh_dim_names=names)\n"

    findings = _rnk507(_MESH + helper + "x = mesh['nope']\n")

    assert findings == []


@pytest.mark.parametrize(
    ("shape", "names"),
    [("(8,)", '("dp_shrd",)'), ("(2, 4)", '("edp", "efsdp")'), ("(2, 4)", '("tpp", "infer_pp")')],
)
def test_declared_dimension_names_are_never_judged_against_a_fixed_list_of_axes(
    shape: str, names: str
) -> None:
    findings = _rnk507(f'mesh = init_device_mesh("cuda", {shape}, mesh_dim_names={names})\n')

    assert findings == []


def test_device_mesh_from_a_rank_list_is_not_taken_for_a_shape_mismatch() -> None:
    source = (
        "from torch.distributed.device_mesh import DeviceMesh\n\n"
        'mesh = DeviceMesh("cuda", [0, 1, 2, 3], mesh_dim_names=("dp",))\n'
    )

    assert _rnk507(source) == []


def test_dimension_unflattened_in_a_helper_module_is_known_to_every_module(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "pkg" / "parallel_dims.py",
        """
        from torch.distributed.device_mesh import init_device_mesh


        def build(world, ep):
            mesh = init_device_mesh("cuda", (world,), mesh_dim_names=("world",))
            return mesh._unflatten(0, (world // ep, ep), ("edp", "efsdp"))
        """,
    )
    write(
        tmp_path / "pkg" / "moe.py",
        """
        def shard(mesh):
            return mesh["edp"], mesh["efsdp"], mesh["nope"]
        """,
    )

    result = lint_paths([tmp_path / "pkg"], Config(select=("RNK507",)), jobs=1)

    assert result.errors == []
    assert [(Path(f.path).name, f.line, f.code) for f in result.findings] == [
        ("moe.py", 2, "RNK507")
    ]
    assert '"nope"' in result.findings[0].message
