"""RNK3xx-RNK6xx beyond their examples: file kinds, project-wide checks, configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.config import ConfigError, config_from_table
from tests.conftest import codes_by_line, write

TEST_CODE = """
import torch


def test_close(a, b):
    torch.testing.assert_close(a, b)
"""


def test_test_rules_apply_to_test_files_only() -> None:
    select = ("RNK601",)

    assert codes_by_line(TEST_CODE, "tests/test_model.py", select=select) == [(5, "RNK601")]
    assert codes_by_line(TEST_CODE, "src/pkg/model_test.py", select=select) == [(5, "RNK601")]
    assert codes_by_line(TEST_CODE, "src/pkg/model.py", select=select) == []


def test_test_patterns_config_decides_what_is_a_test_file() -> None:
    config = Config(test_patterns=("checks/",), select=("RNK601",))

    assert codes_by_line(TEST_CODE, "checks/model.py", config) == [(5, "RNK601")]
    assert codes_by_line(TEST_CODE, "tests/test_model.py", config) == []


def test_heavy_import_is_fine_in_scripts_tests_and_the_package_itself() -> None:
    source = "import deepspeed\n"
    config = Config(select=("RNK302",))

    assert codes_by_line(source, "src/trainer/engine.py", config) == [(1, "RNK302")]
    assert codes_by_line(source, "scripts/launch.py", config) == []
    assert codes_by_line(source, "tests/test_engine.py", config) == []
    assert codes_by_line(source, "deepspeed/runtime/engine.py", config) == []


def test_extend_heavy_modules_adds_to_the_defaults() -> None:
    source = "import wandb\nimport lightning\n"
    config = Config(extend_heavy_modules=("lightning",), select=("RNK302",))

    assert codes_by_line(source, "pkg/log.py", config) == [(1, "RNK302"), (2, "RNK302")]


def test_loopback_endpoint_is_fine_in_tests_and_reported_in_library_code() -> None:
    source = """
    import os

    os.environ["MASTER_ADDR"] = "localhost"
    """

    assert codes_by_line(source, "tests/test_launch.py", select=("RNK501",)) == []
    assert codes_by_line(source, "pkg/launch.py", select=("RNK501",)) == [(3, "RNK501")]


def test_credential_message_never_contains_the_secret() -> None:
    secret = "hf_" + "Q" * 34
    result = lint_source(f'TOKEN = "{secret}"\n', "pkg/hub.py", Config())

    assert [f.code for f in result.findings] == ["RNK502"]
    assert secret not in result.findings[0].message


def test_debug_flags_are_fine_in_tests() -> None:
    source = 'import os\nos.environ["NCCL_DEBUG"] = "INFO"\n'

    assert codes_by_line(source, "tests/test_nccl.py") == []
    assert codes_by_line(source, "pkg/setup.py") == [(2, "RNK505")]


def test_unmarked_distributed_test_is_fine_with_a_module_pytestmark_or_a_skip_in_the_body() -> None:
    marked = """
    import pytest
    import torch

    pytestmark = pytest.mark.distributed


    def test_cuda():
        torch.ones(1).cuda()
    """
    skipping = """
    import pytest
    import torch


    def test_cuda():
        if not torch.cuda.is_available():
            pytest.skip("needs a GPU")
        torch.ones(1).cuda()
    """

    select = ("RNK603",)

    assert codes_by_line(marked, "tests/test_gpu.py", select=select) == []
    assert codes_by_line(skipping, "tests/test_gpu.py", select=select) == []


# -- project-wide ------------------------------------------------------------------
def test_coroutine_defined_in_another_module_called_without_await_is_reported(
    tmp_path: Path,
) -> None:
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "sync.py", "async def publish(version):\n    return version\n")
    write(
        tmp_path / "pkg" / "loop.py",
        """
        import asyncio

        from pkg.sync import publish


        async def step(version):
            publish(version)
            await publish(version)
            asyncio.create_task(publish(version))
        """,
    )

    result = lint_paths([tmp_path / "pkg"], Config(), jobs=1)

    assert [(Path(f.path).name, f.line, f.code) for f in result.findings] == [
        ("loop.py", 7, "RNK402")
    ]


def test_mesh_dimension_declared_in_another_module_is_known(tmp_path: Path) -> None:
    write(tmp_path / "pkg" / "__init__.py", "")
    write(
        tmp_path / "pkg" / "mesh.py",
        """
        from torch.distributed.device_mesh import init_device_mesh


        def build(world):
            return init_device_mesh("cuda", (world // 2, 2), mesh_dim_names=("dp", "tp"))
        """,
    )
    write(
        tmp_path / "pkg" / "model.py",
        """
        def shard(device_mesh):
            tp = device_mesh["tp"]
            dp = device_mesh["dq"]
            return tp, dp
        """,
    )

    result = lint_paths([tmp_path / "pkg"], Config(), jobs=1)

    assert [(Path(f.path).name, f.line, f.code) for f in result.findings] == [
        ("model.py", 3, "RNK507")
    ]


def test_mesh_indexing_is_not_judged_when_the_run_builds_no_mesh() -> None:
    source = 'def shard(mesh):\n    return mesh["anything"]\n'

    assert codes_by_line(source, "pkg/model.py") == []


_MESH_IMPORT = "from torch.distributed.device_mesh import init_device_mesh\n\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # Declared by construction, by `_flatten`, in a tuple index, or never.
        (
            'mesh = init_device_mesh("cuda", (2, 2), mesh_dim_names=("dp", "tp"))\n'
            'x = mesh["tp"]\ny = mesh["qq"]\n',
            [(3, "RNK507")],
        ),
        (
            'mesh = init_device_mesh("cuda", (2, 2), mesh_dim_names=("zz_a", "zz_b"))\n'
            'mesh["zz_a", "zz_b"]._flatten("zz_ab")\nx = mesh["zz_ab"]\n',
            [],
        ),
        (
            'mesh = init_device_mesh("cuda", (2, 2), mesh_dim_names=("zz_a", "zz_b"))\n'
            'x = mesh["zz_a", "zz_c"]\n',
            [(2, "RNK507")],
        ),
        (
            'mesh = init_device_mesh("cuda", (2, 2), mesh_dim_names=("zz_a", "zz_b"))\n'
            'x = device_mesh[name]\ny = other["zz_c"]\n',
            [],
        ),
    ],
    ids=["undeclared", "flattened", "tuple-index", "not-literal-or-not-a-mesh"],
)
def test_mesh_dimension_uses_are_judged_against_every_declaration(
    body: str, expected: list[tuple[int, str]]
) -> None:
    # `expected` lines count from the first line of `body`.
    assert codes_by_line(_MESH_IMPORT + body, "pkg/model.py", select=("RNK507",)) == [
        (line + 2, code) for line, code in expected
    ]


def test_mesh_built_from_computed_names_turns_the_undeclared_check_off() -> None:
    source = (
        _MESH_IMPORT + "names = tuple(n for n in config.axes)\n"
        'mesh = init_device_mesh("cuda", (2, 2), mesh_dim_names=names)\n'
        'other = init_device_mesh("cuda", (4,), mesh_dim_names=("zz_a",))\n'
        'x = mesh["zz_anything"]\n'
    )

    assert codes_by_line(source, "pkg/model.py", select=("RNK507",)) == []


# -- configuration -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"heavy-modules": ["not a module"]}, "is not an identifier"),
        ({"mesh-axes": "dp"}, "expected a list of strings"),
        ({"blocking-functions": ["fetch"]}, "is not a dotted name"),
        ({"machine-path-prefixes": ["/"]}, "would match every absolute path"),
        ({"test-patterns": [1]}, "expected a list of strings"),
        ({"distributed-markers": ["gpu-8"]}, "is not an identifier"),
    ],
)
def test_bad_engineering_rule_configuration_is_a_clear_error(
    table: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_table(table, source=None, root=Path.cwd())


def test_blocking_functions_config_reports_project_functions_in_async_code() -> None:
    source = """
    from pkg.io import fetch_weights


    async def refresh():
        return fetch_weights()
    """
    config = Config(blocking_functions=("pkg.io.fetch_weights",))

    assert codes_by_line(source, "pkg/rollout.py") == []
    assert codes_by_line(source, "pkg/rollout.py", config) == [(5, "RNK401")]


def test_url_routes_that_look_like_mount_points_are_not_machine_paths() -> None:
    source = """
    @app.put("/data/<shard_id>")
    def put_shard(shard_id):
        return "/data/<shard_id>"
    """

    assert codes_by_line(source, "pkg/server.py") == []
