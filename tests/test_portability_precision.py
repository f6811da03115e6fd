"""Precision of the portability rules RNK501, RNK503 and RNK504 on real-code shapes (issue 16)."""

from __future__ import annotations

import pytest

from tests.conftest import codes_by_line

# -- RNK503 machine-specific-path ---------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        'def f(client):\n    return client.get("/data/items")\n',
        'def f(self):\n    return self.client.post("/home/feed", json={})\n',
        'def f(session):\n    return session.delete("/mnt/volumes/3")\n',
        'import requests\n\nrequests.put("/data/items/1")\n',
        'import httpx\n\nhttpx.patch("/workspace/x")\n',
        'def f(client):\n    return client.request("GET", "/data/items")\n',
        'def f(fetch):\n    return fetch(url="/data/status")\n',
        'def f(fetch):\n    return fetch(base_url="/home/api")\n',
        'ROUTE = "/data/items"\n\n\ndef f(client):\n    return client.get(ROUTE)\n',
    ],
    ids=[
        "client-get",
        "self-client-post",
        "session-delete",
        "requests-module",
        "httpx-module",
        "request-second-argument",
        "url-keyword",
        "base-url-keyword",
        "route-constant",
    ],
)
def test_http_route_that_looks_like_a_machine_path_is_not_reported(source: str) -> None:
    assert codes_by_line(source, "pkg/app.py", select=("RNK503",)) == []


@pytest.mark.parametrize(
    "source",
    [
        'def f(fs, remote):\n    fs.put("/data/local/x", remote)\n',
        'def f(store):\n    return store.delete("/mnt/cache/x")\n',
        'def f(config):\n    return config.get("dir", "/home/alice/x")\n',
    ],
    ids=["filesystem-put", "filesystem-delete", "default-of-a-lookup"],
)
def test_machine_path_given_to_a_non_http_receiver_is_still_reported(source: str) -> None:
    assert codes_by_line(source, "pkg/app.py", select=("RNK503",)) == [(2, "RNK503")]


@pytest.mark.parametrize(
    "source",
    [
        'async def f(sb, diff):\n    await sb.write_file("/workspace/setup/before.sh", diff)\n',
        'async def f(sb):\n    await sb.exec("/workspace/run.sh", user="agent")\n',
        'def f(container):\n    container.exec_run(["ls", "/workspace/ckpt"])\n',
        'def f(sandbox):\n    sandbox.commands.run("/root/bin/setup")\n',
        'import subprocess\n\nsubprocess.run(["docker", "exec", "box", "ls", "/workspace/x"])\n',
        'import os\n\nos.system("/workspace/run.sh && pytest -q")\n',
        'CMD = "/workspace/run.sh | tee log.txt"\n',
    ],
    ids=[
        "sandbox-write-file",
        "sandbox-exec",
        "container-exec-run",
        "sandbox-run",
        "subprocess-docker",
        "shell-and",
        "shell-pipe",
    ],
)
def test_path_inside_a_container_command_is_not_reported(source: str) -> None:
    assert codes_by_line(source, "pkg/agent.py", select=("RNK503",)) == []


def test_constant_used_by_a_sandbox_call_is_not_reported_but_one_used_locally_is() -> None:
    # Shape of slime/examples/coding_agent_rl/swe.py.
    source = """
        PATCH = "/workspace/__patch__.diff"
        LOCAL = "/workspace/notes.txt"


        async def apply(sb, diff):
            await sb.write_file(PATCH, diff, user="agent")
            await sb.exec(f"git apply {PATCH}", user="agent")
            return open(LOCAL).read()
        """

    assert codes_by_line(source, "pkg/swe.py", select=("RNK503",)) == [(2, "RNK503")]


def test_local_subprocess_path_is_still_reported() -> None:
    source = 'import subprocess\n\nsubprocess.run(["python", "/home/alice/train.py"])\n'

    assert codes_by_line(source, "pkg/run.py", select=("RNK503",)) == [(3, "RNK503")]


def test_path_under_a_container_mount_point_of_the_file_is_not_reported() -> None:
    # Shape of nemo/tutorials/llm/llama/slimpajama/data_pipeline.py.
    source = """
        def pipeline(run, executor_cls):
            executor = executor_cls(volumes=["/path/to/save/data:/data"])
            run.Partial(extract, data_dir="/data/slimpajama")
            return run.Script("concat.sh", args=["/data/slimpajama/train", "1"]), executor
        """

    assert codes_by_line(source, "pkg/pipeline.py", select=("RNK503",)) == []


def test_host_side_of_a_volume_spec_is_still_reported() -> None:
    source = 'VOLUMES = ["/data/raw:/data"]\nOTHER = "/mnt/elsewhere/x"\n'

    assert codes_by_line(source, "pkg/pipeline.py", select=("RNK503",)) == [
        (1, "RNK503"),
        (2, "RNK503"),
    ]


def test_format_template_path_is_not_reported() -> None:
    # Shape of olmo/scripts/olmo2_modal_openai.py.
    source = 'MODEL_DIR = "/root/models/{MODEL_NAME}"\n'

    assert codes_by_line(source, "pkg/serve.py", select=("RNK503",)) == []


def test_file_in_a_docker_folder_is_not_reported_and_elsewhere_it_is() -> None:
    # Shape of slime/docker/patch/gb10/patch_sgl_kernel.py.
    source = 'TARGET = "/root/src/sglang/CMakeLists.txt"\n'

    assert codes_by_line(source, "docker/patch/patch_kernel.py", select=("RNK503",)) == []
    assert codes_by_line(source, "tools/patch_kernel.py", select=("RNK503",)) == [(1, "RNK503")]


def test_argument_default_that_is_a_home_path_is_still_reported() -> None:
    # Shape of slime/examples/search-r1/local_dense_retriever/retrieval_server.py.
    source = """
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--index", default="/home/peter/index/e5.index")
        """

    assert codes_by_line(source, "pkg/server.py", select=("RNK503",)) == [(4, "RNK503")]


# -- RNK501 hard-coded-endpoint ------------------------------------------------------

_ONE_PROCESS = """
    import os

    import torch


    def convert(checkpoint_dir):
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "12355"
        {size}
        torch.distributed.init_process_group(backend="gloo", rank=0, world_size={world})
    """


@pytest.mark.parametrize(
    ("size", "world"), [("world_size = 1", "world_size"), ("pass", "1")], ids=["name", "literal"]
)
def test_loopback_endpoint_of_a_one_process_group_is_not_reported(size: str, world: str) -> None:
    # Shape of nemo/nemo/collections/llm/gpt/model/ssm.py.
    source = _ONE_PROCESS.format(size=size, world=world)

    assert codes_by_line(source, "pkg/convert.py", select=("RNK501",)) == []


def test_loopback_endpoint_of_a_multi_process_group_is_still_reported() -> None:
    source = _ONE_PROCESS.format(size="world_size = 8", world="world_size")

    assert codes_by_line(source, "pkg/convert.py", select=("RNK501",)) == [
        (7, "RNK501"),
        (8, "RNK501"),
    ]


def test_remote_address_next_to_a_one_process_group_is_still_reported() -> None:
    source = _ONE_PROCESS.format(size="pass", world="1").replace('"localhost"', '"10.0.3.17"')

    assert codes_by_line(source, "pkg/convert.py", select=("RNK501",)) == [(7, "RNK501")]


def test_one_process_group_in_another_function_does_not_excuse_a_loopback_endpoint() -> None:
    source = """
        import os

        import torch


        def setup():
            os.environ["MASTER_ADDR"] = "localhost"


        def convert():
            torch.distributed.init_process_group(backend="gloo", rank=0, world_size=1)
        """

    assert codes_by_line(source, "pkg/convert.py", select=("RNK501",)) == [(7, "RNK501")]


# -- RNK504 hard-coded-topology ------------------------------------------------------


@pytest.mark.parametrize("value", ['""', '"-1"'])
def test_cuda_visible_devices_that_hides_every_gpu_is_not_reported(value: str) -> None:
    source = f'import os\n\n\ndef child():\n    os.environ["CUDA_VISIBLE_DEVICES"] = {value}\n'

    assert codes_by_line(source, "pkg/worker.py", select=("RNK504",)) == []


def test_cuda_visible_devices_that_picks_gpus_is_still_reported() -> None:
    source = 'import os\n\n\ndef child():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n'

    assert codes_by_line(source, "pkg/worker.py", select=("RNK504",)) == [(5, "RNK504")]


@pytest.mark.parametrize(
    "call",
    [
        "multiprocessing.Pool(8)",
        "multiprocessing.Pool(processes=8)",
        "ProcessPoolExecutor(max_workers=4)",
        "ProcessPoolExecutor(num_processes=4)",
        "WorkerPool(num_processes=8)",
        "DataLoader(dataset, num_workers=8, world_size=2)",
    ],
)
def test_size_of_a_cpu_pool_is_not_reported(call: str) -> None:
    source = (
        "import multiprocessing\n"
        "from concurrent.futures import ProcessPoolExecutor\n\n\n"
        f"def run(dataset, WorkerPool, DataLoader):\n    return {call}\n"
    )

    assert codes_by_line(source, "pkg/data.py", select=("RNK504",)) == []


def test_process_count_of_a_launcher_is_still_reported() -> None:
    source = (
        "import torch.multiprocessing as mp\n\n\n"
        "def main(worker):\n    mp.spawn(worker, nprocs=8)\n"
    )

    assert codes_by_line(source, "pkg/launch.py", select=("RNK504",)) == [(5, "RNK504")]
