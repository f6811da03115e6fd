"""DeviceMesh facts (RNK507): the dimension names meshes declare, and ``mesh["name"]`` uses."""

from __future__ import annotations

import pytest

from ranklint.findings import Finding
from tests.conftest import findings_of

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
