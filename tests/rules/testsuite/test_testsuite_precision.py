"""RNK601-RNK604 on the shapes seen in real test suites (issue 16): what is and is not reported."""

from __future__ import annotations

from pathlib import Path

from ranklint import Config, lint_paths
from ranklint.config import load_config
from tests.conftest import codes_by_line, write

TEST_PATH = "tests/test_example.py"


def _codes(source: str, code: str, path: str = TEST_PATH) -> list[tuple[int, str]]:
    return codes_by_line(source, path, select=(code,))


# -- policy ----------------------------------------------------------------------------
def test_conventions_601_603_604_are_off_by_default_and_602_stays_on() -> None:
    source = """
    import pytest
    import torch
    from unittest import mock


    @pytest.mark.skip
    def test_all(a, b):
        torch.testing.assert_close(a, b)
        torch.ones(1).cuda()
        mock.patch("torch.distributed.fsdp._runtime_utils._lazy_init")
    """

    found = codes_by_line(source, TEST_PATH)

    assert found == [(6, "RNK602")]


def test_extend_select_turns_an_opt_in_convention_on() -> None:
    source = """
    import torch


    def test_close(a, b):
        torch.testing.assert_close(a, b)
    """

    found = codes_by_line(source, TEST_PATH, Config(extend_select=("RNK601",)))

    assert found == [(5, "RNK601")]


# -- RNK601 ----------------------------------------------------------------------------
def test_compare_with_integer_dtype_or_literals_is_not_reported() -> None:
    source = """
    import torch


    def test_ids(got, batch):
        want = torch.tensor([[0, 0], [1, 2]], dtype=torch.int64)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(got[1], torch.tensor([0, 100]))
        assert torch.allclose(batch.cpu(), torch.ones(5, 1, dtype=torch.long) * 2)
        torch.testing.assert_close(got.long(), batch)
        torch.testing.assert_close(torch.arange(4), got)
    """

    assert _codes(source, "RNK601") == []


def test_compare_of_bool_results_indices_and_lengths_is_not_reported() -> None:
    source = """
    import torch


    def test_masks(a, b, kjt, dedup_kjt, reverse_indices):
        torch.testing.assert_close(a > 0, b > 0)
        torch.testing.assert_close(a.argmax(dim=-1), b)
        torch.testing.assert_close(kjt.lengths(), dedup_kjt.lengths())
        torch.testing.assert_close(dedup_kjt.values()[reverse_indices], kjt.values())
        torch.testing.assert_close(a.shape, b.shape)
    """

    assert _codes(source, "RNK601") == []


def test_name_rebound_from_integer_to_float_tensor_is_reported_at_the_float_use() -> None:
    source = """
    import torch


    def test_search(results):
        want = torch.tensor([0, 1], dtype=torch.int64)
        torch.testing.assert_close(results, want)
        want = torch.tensor([3.5, -12.8])
        torch.testing.assert_close(results, want)
    """

    assert _codes(source, "RNK601") == [(8, "RNK601")]


def test_negated_comparison_is_not_reported() -> None:
    source = """
    import torch


    def test_reset(self, before, after):
        assert not torch.allclose(before, after)
        self.assertFalse(torch.allclose(before, after))
    """

    assert _codes(source, "RNK601") == []


def test_numpy_compare_with_one_integer_side_is_reported() -> None:
    source = """
    import numpy as np


    def test_values(got):
        assert np.allclose(got, np.array([0, 1]))
        assert np.allclose(np.array([0, 1]), np.array([0, 1]))
    """

    assert _codes(source, "RNK601") == [(5, "RNK601")]


def test_assert_close_without_dtype_check_and_one_integer_side_is_reported() -> None:
    source = """
    import torch


    def test_values(got):
        torch.testing.assert_close(got, torch.tensor([0, 1]), check_dtype=False)
    """

    assert _codes(source, "RNK601") == [(5, "RNK601")]


def test_float_compare_of_unknown_tensors_is_still_reported() -> None:
    source = """
    import torch


    def test_values(got, expected):
        torch.testing.assert_close(got, expected)
        assert torch.allclose(got, torch.zeros(4))
    """

    assert _codes(source, "RNK601") == [(5, "RNK601"), (6, "RNK601")]


# -- RNK602 ----------------------------------------------------------------------------
def test_skip_with_the_reason_only_in_a_comment_is_still_reported() -> None:
    source = """
    import pytest


    @pytest.mark.skip  # TODO: set up auth on CI
    def test_remote():
        pass
    """

    assert _codes(source, "RNK602") == [(4, "RNK602")]


def test_skip_given_its_reason_by_position_or_keyword_is_not_reported() -> None:
    source = """
    import pytest


    @pytest.mark.skip("needs 8 GPUs")
    def test_a():
        pass


    @pytest.mark.skip(reason="needs NCCL")
    def test_b():
        pass


    @pytest.mark.skipif(True, reason="flaky on CPU")
    def test_c():
        pass


    @pytest.mark.skip(strict=True)
    def test_d():
        pass


    @pytest.mark.skipif(True, "no reason keyword")
    def test_e():
        pass
    """

    assert _codes(source, "RNK602") == [(19, "RNK602"), (24, "RNK602")]


# -- RNK603 ----------------------------------------------------------------------------
def test_runif_style_decorators_and_gpu_arguments_mark_a_test() -> None:
    source = """
    import pytest
    import torch

    from tests.helpers import RunIf, _RunIf, run_on_environment_flag


    @RunIf(min_cuda_gpus=1)
    def test_a():
        torch.ones(1).cuda()


    @_RunIf(thunder=True, min_cuda_gpus=2)
    def test_b():
        torch.ones(1).cuda()


    @pytest.mark.run_only_on("GPU")
    def test_c():
        torch.ones(1).cuda()


    @run_on_environment_flag(name="FX_PROFILER")
    def test_d():
        torch.ones(1).cuda()
    """

    assert _codes(source, "RNK603") == []


def test_parametrize_case_with_marks_covers_the_test_and_one_without_does_not() -> None:
    source = """
    import pytest
    import torch

    from tests.helpers import RunIf


    @pytest.mark.parametrize("device", [pytest.param("cuda", marks=[RunIf(min_cuda_gpus=1)])])
    def test_marked(device):
        torch.ones(1).to("cuda")


    @pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.slow)])
    def test_unmarked(device):
        torch.ones(1).to("cuda")
    """

    assert _codes(source, "RNK603") == [(13, "RNK603")]


def test_cuda_device_in_a_decorator_is_not_a_use_by_the_test() -> None:
    source = """
    import pytest
    import torch


    @pytest.mark.parametrize("device", [torch.device("cpu"), torch.device("cuda")])
    def test_cpu_only(device):
        pass
    """

    assert _codes(source, "RNK603") == []


def test_torch_device_descriptor_alone_is_not_reported_but_moving_to_it_is() -> None:
    source = """
    import torch

    from pkg import Strategy


    def test_descriptor():
        Strategy(device=torch.device("cuda", 1))
        assert torch.device("cuda:0").type == "cuda"


    def test_moves():
        torch.ones(1).to(torch.device("cuda"))
    """

    assert _codes(source, "RNK603") == [(11, "RNK603")]


def test_class_whose_setup_skips_marks_its_tests() -> None:
    source = """
    import unittest

    import torch


    class TestStash(unittest.TestCase):
        def setUp(self):
            if not torch.cuda.is_available():
                self.skipTest("CUDA not available")

        def test_round_trip(self):
            torch.cuda.synchronize()


    class TestOther(unittest.TestCase):
        def setUp(self):
            self.x = 1

        def test_sync(self):
            torch.cuda.synchronize()
    """

    assert _codes(source, "RNK603") == [(19, "RNK603")]


def test_class_level_pytestmark_marks_its_tests() -> None:
    source = """
    import pytest
    import torch


    class TestGpu:
        pytestmark = [pytest.mark.gpu]

        def test_sync(self):
            torch.cuda.synchronize()
    """

    assert _codes(source, "RNK603") == []


def test_module_pytestmark_list_marks_the_file() -> None:
    source = """
    import pytest
    import torch

    pytestmark = [pytest.mark.slow, pytest.mark.multigpu]


    def test_sync():
        torch.cuda.synchronize()
    """

    assert _codes(source, "RNK603") == []


def test_helper_of_the_file_that_skips_counts_as_a_skip() -> None:
    source = """
    import pytest
    import torch


    def _needs_cuda():
        if not torch.cuda.is_available():
            pytest.skip("CUDA is required")


    def _setup():
        pass


    def test_kernel():
        _needs_cuda()
        torch.cuda.set_device(0)


    def test_other():
        _setup()
        torch.cuda.set_device(0)
    """

    assert _codes(source, "RNK603") == [(19, "RNK603")]


def test_single_gloo_rank_is_not_reported_and_two_in_one_process_are() -> None:
    source = """
    import torch.distributed as dist


    def test_one_rank():
        backend = "gloo"
        dist.init_process_group(backend=backend)


    def test_fake():
        dist.init_process_group("fake", rank=0, world_size=8)


    def test_two_ranks(tmp_path):
        dist.init_process_group("gloo", f"file://{tmp_path}/s", rank=0, world_size=2)
    """

    assert _codes(source, "RNK603") == [(13, "RNK603")]


def test_spawned_worker_of_the_file_on_the_cpu_is_not_reported_but_one_on_nccl_is() -> None:
    source = """
    import torch.distributed as dist
    import torch.multiprocessing as mp


    def _cpu_worker(rank, world_size):
        dist.init_process_group("gloo", rank=rank, world_size=world_size)


    def _gpu_worker(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)


    def test_cpu():
        mp.spawn(_cpu_worker, args=(4,), nprocs=4)


    def test_gpu():
        mp.spawn(_gpu_worker, args=(4,), nprocs=4)
    """

    assert _codes(source, "RNK603") == [(17, "RNK603")]


def test_file_under_a_folder_named_after_a_marker_is_a_marked_suite() -> None:
    source = """
    import torch


    def test_sync():
        torch.cuda.synchronize()
    """

    assert _codes(source, "RNK603", "tests/gpu/test_kernels.py") == []
    assert _codes(source, "RNK603", "tests/unit/test_kernels.py") == [(4, "RNK603")]


def test_per_file_ignores_exempt_a_suite_that_a_conftest_skips(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        """
        [tool.ranklint]
        extend-select = ["RNK603"]

        [tool.ranklint.per-file-ignores]
        "tests/multinode/**" = ["RNK603"]
        """,
    )
    write(
        tmp_path / "tests/multinode/conftest.py",
        """
        import pytest
        import torch

        if not torch.cuda.is_available():
            pytest.skip("GPU runners only", allow_module_level=True)
        """,
    )
    test = write(
        tmp_path / "tests/multinode/test_sync.py",
        """
        import torch


        def test_sync():
            torch.cuda.synchronize()
        """,
    )
    config = load_config(tmp_path / "pyproject.toml")

    result = lint_paths([test], config)

    assert [f.code for f in result.findings] == []


# -- RNK604 ----------------------------------------------------------------------------
def test_stubs_of_public_entry_points_are_not_reported() -> None:
    source = """
    from unittest import mock

    import torch
    from torch.distributed.device_mesh import DeviceMesh


    def test_orchestration(monkeypatch):
        mock.patch("torch.distributed.fsdp.FullyShardedDataParallel", new=mock.MagicMock)
        mock.patch("torch.distributed.fsdp.fully_shard")
        mock.patch("torch.distributed.device_mesh.init_device_mesh")
        mock.patch("torch.nn.parallel.DistributedDataParallel")
        mock.patch.object(DeviceMesh, "get_group")
        monkeypatch.setattr(torch.distributed.fsdp.FullyShardedDataParallel, "apply", None)
        monkeypatch.setattr(torch.distributed.fsdp.FullyShardedDataParallel, "__init__", None)
        mock.patch("torch.distributed._composable.fsdp.fully_shard")
    """

    assert _codes(source, "RNK604") == []


def test_patches_of_private_internals_are_reported() -> None:
    source = """
    from unittest import mock

    from torch.distributed.tensor import DTensor


    def test_internals(monkeypatch):
        mock.patch("torch.distributed.fsdp._fully_shard._fsdp_param_group.FSDPParamGroup.unshard")
        mock.patch.object(DTensor, "_op_dispatcher")
        monkeypatch.setattr("torch.distributed.distributed_c10d._get_default_group", None)
        mock.patch("torch.distributed._tensor._dispatch.OpDispatcher.dispatch")
    """

    assert _codes(source, "RNK604") == [
        (7, "RNK604"),
        (8, "RNK604"),
        (9, "RNK604"),
        (10, "RNK604"),
    ]
