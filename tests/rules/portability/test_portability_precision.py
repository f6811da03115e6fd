"""The portability rules RNK501-RNK505 and RNK507 on real-code shapes (issue 16) and on the
edges their mutants found (issue 20)."""

from __future__ import annotations

import pytest

from ranklint import Config, lint_source
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


_POOL_WRAPPER = """
    from concurrent.futures import ProcessPoolExecutor


    def run(fn, items, num_processes=1, *, world_size=1):
        with ProcessPoolExecutor(max_workers={sized}) as pool:
            return list(pool.map(fn, items))


    class Runner:
        def map(self, fn, items, num_processes=1):
            with ProcessPoolExecutor(max_workers=num_processes) as pool:
                return list(pool.map(fn, items))


    def score(fn, items, runner):
        return {call}
    """


@pytest.mark.parametrize(
    ("sized", "call", "lines"),
    [
        # The count sizes a CPU pool inside the wrapper: the host's parallelism.
        ("num_processes", "run(fn, items, num_processes=64)", []),
        ("world_size", "run(fn, items, world_size=64)", []),
        ("num_processes", "runner.map(fn, items, num_processes=64)", []),
        # A wrapper that sizes its pool from another parameter.
        ("4", "run(fn, items, num_processes=64)", [16]),
        ("num_processes", "run(fn, items, world_size=64)", [16]),
        # Another function of that name elsewhere is not this wrapper.
        ("num_processes", "launch(fn, items, num_processes=64)", [16]),
    ],
)
def test_count_passed_to_a_wrapper_that_sizes_a_cpu_pool_is_not_reported(
    sized: str, call: str, lines: list[int]
) -> None:
    source = _POOL_WRAPPER.format(sized=sized, call=call)

    assert [line for line, _ in codes_by_line(source, "pkg/data.py", select=("RNK504",))] == lines


def test_count_passed_to_a_pool_wrapper_defined_below_the_call_is_not_reported() -> None:
    source = (
        "from concurrent.futures import ProcessPoolExecutor\n\n\n"
        "def score(fn, items):\n    return run(fn, items, num_processes=64)\n\n\n"
        "def run(fn, items, num_processes=1):\n"
        "    with ProcessPoolExecutor(max_workers=num_processes) as pool:\n"
        "        return list(pool.map(fn, items))\n"
    )

    assert codes_by_line(source, "pkg/data.py", select=("RNK504",)) == []


def test_count_decided_after_the_walk_is_suppressed_by_a_noqa_on_its_statement() -> None:
    source = (
        "def score(fn, items):\n"
        "    return launch(\n"
        "        fn,\n"
        "        items,\n"
        "        num_processes=64,\n"
        "    )  # noqa: RNK504\n"
    )

    assert codes_by_line(source, "pkg/data.py", select=("RNK504",)) == []


def test_count_after_one_passed_to_a_pool_wrapper_is_still_reported() -> None:
    source = _POOL_WRAPPER.format(
        sized="num_processes",
        call="(run(fn, items, num_processes=64), launch(fn, items, num_processes=64))",
    )

    assert [line for line, _ in codes_by_line(source, "pkg/data.py", select=("RNK504",))] == [16]


# -- RNK505 debug-flag-left-on: anomaly mode without NaN checks ---------------------


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("torch.autograd.set_detect_anomaly(True, check_nan=False)", []),
        ("torch.autograd.set_detect_anomaly(True, False)", []),
        ("torch.autograd.set_detect_anomaly(True, check_nan=True)", [(3, "RNK505")]),
        ("torch.autograd.set_detect_anomaly(True, True)", [(3, "RNK505")]),
        ("torch.autograd.set_detect_anomaly(mode=True, check_nan=flag)", [(3, "RNK505")]),
        ("torch.autograd.detect_anomaly(False)", []),
        ("torch.autograd.detect_anomaly(check_nan=False)", []),
        ("torch.autograd.detect_anomaly(True)", [(3, "RNK505")]),
        ("torch.autograd.detect_anomaly(other=False)", [(3, "RNK505")]),
        ("torch.distributed.set_debug_level(False)", [(3, "RNK505")]),
    ],
)
def test_anomaly_mode_is_reported_unless_its_nan_check_is_off(
    call: str, expected: list[tuple[int, str]]
) -> None:
    source = f"import torch\n\n{call}\n"

    assert codes_by_line(source, "pkg/train.py", select=("RNK505",)) == expected


def test_debug_switch_under_a_condition_is_not_reported() -> None:
    source = """
    import os

    import torch

    if os.environ.get("DEBUG"):
        torch.autograd.set_detect_anomaly(True)
        os.environ["NCCL_DEBUG"] = "INFO"
    torch.autograd.set_detect_anomaly(True)
    """

    assert codes_by_line(source, "pkg/train.py", select=("RNK505",)) == [(8, "RNK505")]


def test_debug_variable_set_to_a_quiet_value_or_a_variable_is_handled_per_value() -> None:
    source = """
    import os

    os.environ["NCCL_DEBUG"] = "WARN"
    os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
    os.environ["NCCL_DEBUG"] = level
    os.environ.update(NCCL_DEBUG="INFO", OTHER="x")
    """

    assert codes_by_line(source, "pkg/launch.py", select=("RNK505",)) == [
        (4, "RNK505"),
        (5, "RNK505"),
        (6, "RNK505"),
    ]


# -- RNK501 hard-coded-endpoint: strings -----------------------------------------------


def _messages(
    source: str, code: str, path: str = "pkg/net.py", config: Config | None = None
) -> list[tuple[int, str]]:
    """(line, message) of each finding (``code`` alone by default); fails on internal errors."""
    result = lint_source(source, path, config or Config(select=(code,)))
    assert result.errors == []
    return [(f.line, f.message) for f in result.findings]


def _rnk501(source: str, path: str = "pkg/net.py") -> list[tuple[int, str]]:
    return _messages(source, "RNK501", path, Config(select=("RNK501",), test_ignores=()))


@pytest.mark.parametrize(
    ("literal", "host"),
    [
        ('"10.0.0.5"', "10.0.0.5"),
        ('"10.0.0.5:29500"', "10.0.0.5"),
        ('"255.255.255.255"', "255.255.255.255"),
        ('"8.8.8.9"', "8.8.8.9"),
    ],
)
def test_ip_address_in_library_code_is_reported_with_its_host(literal: str, host: str) -> None:
    found = _rnk501(f"ADDR = {literal}\n")

    assert found == [
        (
            1,
            f"the IP address `{host}` is written in code: it ties the job to one machine or "
            "network; take it from the environment or the launch configuration",
        )
    ]


@pytest.mark.parametrize(
    "literal",
    ['"256.1.1.1"', '"127.0.0.2"', '"0.0.0.0"', '"8.8.8.8"', '"1.1.1.1"', 'b"10.0.0.5"'],
)
def test_not_an_address_a_loopback_a_bind_address_or_a_route_probe_is_not_reported(
    literal: str,
) -> None:
    assert _rnk501(f"ADDR = {literal}\n") == []


@pytest.mark.parametrize(
    ("length", "reported"),
    [(60, True), (61, False)],
)
def test_tcp_endpoint_is_read_up_to_sixty_characters(length: int, reported: bool) -> None:
    host = "h" * (length - len("tcp://:29500"))
    endpoint = f"tcp://{host}:29500"

    found = _rnk501(f'URL = "{endpoint}"\n')

    assert len(endpoint) == length
    assert [line for line, _ in found] == ([1] if reported else [])


@pytest.mark.parametrize(
    ("path", "host", "reported"),
    [
        ("pkg/net.py", "localhost", True),
        ("pkg/net.py", "10.1.1.1", True),
        ("tests/test_net.py", "localhost", False),
        ("tests/test_net.py", "10.1.1.1", True),
        ("scripts/launch.py", "127.0.0.1", False),
        ("scripts/launch.py", "10.1.1.1", True),
    ],
)
def test_tcp_loopback_endpoint_is_allowed_only_in_tests_and_scripts(
    path: str, host: str, reported: bool
) -> None:
    found = _rnk501(f'URL = "tcp://{host}:23456"\n', path)

    expected = (
        f"`tcp://{host}:23456` hard-codes the rendezvous endpoint: it works on one machine "
        'only; use `init_method="env://"` with `MASTER_ADDR`/`MASTER_PORT` from the launcher'
    )
    assert found == ([(1, expected)] if reported else [])


@pytest.mark.parametrize(
    ("path", "key", "value", "reported"),
    [
        ("pkg/launch.py", "MASTER_ADDR", '"10.0.0.1"', True),
        ("pkg/launch.py", "MASTER_PORT", "29500", True),
        ("pkg/launch.py", "MASTER_ADDR", "host", False),  # not a literal
        ("pkg/launch.py", "OTHER_ADDR", '"10.0.0.1"', True),  # the string itself
        ("scripts/launch.py", "MASTER_ADDR", '"localhost"', False),
        ("scripts/launch.py", "MASTER_ADDR", '"10.0.0.1"', True),
        ("scripts/launch.py", "MASTER_PORT", '"29500"', False),
    ],
)
def test_endpoint_variable_set_to_a_literal_is_reported_outside_scripts(
    path: str, key: str, value: str, reported: bool
) -> None:
    source = f"import os\n\n\ndef launch(host):\n    os.environ[{key!r}] = {value}\n"

    found = _rnk501(source, path)

    assert [line for line, _ in found] == ([5] if reported else [])


def test_master_port_literal_message_names_the_port_and_the_address_names_the_address() -> None:
    source = (
        "import os\n\n\ndef launch():\n"
        '    os.environ["MASTER_ADDR"] = "10.0.0.1"\n'
        '    os.environ["MASTER_PORT"] = "29500"\n'
        "    init_process_group(world_size=8)\n"
    )

    found = _rnk501(source)

    assert [(line, message.split(" that ")[0]) for line, message in found] == [
        (5, "`MASTER_ADDR` is set to a literal: the job rendezvouses at a fixed address"),
        (6, "`MASTER_PORT` is set to a literal: the job rendezvouses at a fixed port"),
    ]


def test_fallback_endpoint_under_a_missing_variable_test_is_not_reported() -> None:
    source = (
        "import os\n\n\ndef launch():\n"
        '    if "MASTER_ADDR" not in os.environ:\n'
        '        os.environ["MASTER_ADDR"] = "10.0.0.1"\n'
        '    if os.environ.get("OTHER") is None:\n'
        '        os.environ["MASTER_PORT"] = "29500"\n'
        '    os.environ.setdefault("MASTER_PORT", "29501")\n'
    )

    assert [line for line, _ in _rnk501(source)] == [8]


@pytest.mark.parametrize(
    "test",
    [
        '"WORLD_SIZE" not in os.environ',
        "'RANK' not in os.environ",
        '"LOCAL_RANK" not in os.environ',
    ],
)
def test_endpoint_of_a_run_no_launcher_started_is_not_reported(test: str) -> None:
    source = (
        "import os\n\n\ndef launch():\n"
        f"    if {test}:\n"
        '        os.environ["MASTER_ADDR"] = "10.0.0.1"\n'
        '        os.environ["MASTER_PORT"] = "29500"\n'
    )

    assert _rnk501(source) == []


@pytest.mark.parametrize(("size", "reported"), [('"1"', []), ("1", []), ('"8"', [6, 7])])
def test_loopback_endpoint_with_world_size_set_to_one_is_a_one_process_run(
    size: str, reported: list[int]
) -> None:
    source = (
        "import os\n\n\ndef setup():\n"
        f'    os.environ["WORLD_SIZE"] = {size}\n'
        '    os.environ["MASTER_ADDR"] = "localhost"\n'
        '    os.environ["MASTER_PORT"] = "29500"\n'
    )

    assert [line for line, _ in _rnk501(source)] == reported


# -- RNK502 hard-coded-credential --------------------------------------------------------


def _rnk502(source: str) -> list[tuple[int, str]]:
    """Every RNK502 finding, of every tier."""
    return _messages(source, "RNK502", "pkg/hub.py", Config(select=("RNK502",), confidence="low"))


def _rnk502_tiers(source: str) -> list[tuple[str, str]]:
    """(tier, evidence kind) of each RNK502 finding."""
    config = Config(select=("RNK502",), confidence="low")
    result = lint_source(source, "pkg/hub.py", config)
    assert result.errors == []
    found = []
    for finding in result.findings:
        assert finding.evidence is not None
        assert finding.evidence.source is not None
        found.append((finding.confidence.value, finding.evidence.source.kind))
    return found


@pytest.mark.parametrize(
    "statement",
    [
        'api_key = "a1b2c3d4"',
        'api_key: str = "a1b2c3d4"',
        'self.password = "a1b2c3d4"',
        'client(Token="a1b2c3d4")',
        'os.environ["HF_TOKEN"] = "a1b2c3d4"',
        'os.environ.setdefault("HF_TOKEN", "a1b2c3d4")',
    ],
)
def test_literal_secret_given_to_a_secret_name_is_reported_once(statement: str) -> None:
    found = _rnk502(f"import os\n{statement}\n")

    assert [line for line, _ in found] == [2]
    assert found[0][1].endswith(
        "is given a literal secret: it ships with every copy of this code and stays in "
        "the history; read it from the environment or a secret store at run time"
    )


@pytest.mark.parametrize(
    "statement",
    [
        "api_key: str",
        'api_key = "a1b2c3d"',  # shorter than 8
        'api_key = "abcdefghij"',  # letters only: a word
        'api_key = "GITHUB_TOKEN"',  # the name of a variable
        'api_key = "your-key-here"',
        'api_key = "a1b2 c3d4"',
        'model_name = "a1b2c3d4"',
        'client(model="a1b2c3d4")',
        'os.environ["HF_HOME"] = "a1b2c3d4"',
    ],
)
def test_placeholder_word_short_or_non_secret_name_is_not_reported(statement: str) -> None:
    assert _rnk502(f"import os\n{statement}\n") == []


@pytest.mark.parametrize(("length", "reported"), [(200, True), (201, False)])
def test_token_is_looked_for_in_strings_up_to_two_hundred_characters(
    length: int, reported: bool
) -> None:
    token = "hf_" + "A" * 34
    text = token + " " * (length - len(token))

    found = _rnk502(f"NOTE = {text!r}\n")

    assert [line for line, _ in found] == ([1] if reported else [])


def test_token_assigned_to_a_secret_name_is_reported_once_as_a_named_secret() -> None:
    found = _rnk502('HF_TOKEN = "hf_' + "A" * 34 + '"\n')

    assert len(found) == 1
    assert found[0][1].startswith("`HF_TOKEN` is given a literal secret")


# -- RNK504 hard-coded-topology --------------------------------------------------------


def _rnk504(source: str) -> list[tuple[int, str]]:
    found = _messages(source, "RNK504", "pkg/launch.py")
    return [(line, message.split(" writes the job's topology")[0]) for line, message in found]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (
            'dist.init_process_group("nccl", rank=0, world_size=8)',
            ["`rank=0` in `init_process_group`", "`world_size=8` in `init_process_group`"],
        ),
        ('dist.init_process_group("fake", rank=0, world_size=8)', []),
        ('dist.init_process_group("gloo", rank=0, world_size=1)', []),
        (
            'dist.init_process_group("gloo", world_size=2)',
            ["`world_size=2` in `init_process_group`"],
        ),
        (
            'dist.init_process_group("gloo", 2, rank=0, world_size=n)',
            ["`rank=0` in `init_process_group`"],
        ),
        ("launch(nprocs=2)", ["`nprocs=2`"]),
        ("launch(nprocs=1)", []),
        ("launch(rank=3)", []),  # not init_process_group, not a topology keyword
        ("launch(8)", []),
        ("mp.Pool(processes=8, nprocs=8)", []),
        ("ThreadPoolExecutor(num_processes=4)", []),
        ('init_device_mesh("cuda", (2, 4))', ["a literal mesh shape"]),
        ('init_device_mesh("cuda", mesh_shape=[2, 4])', ["a literal mesh shape"]),
        ('init_device_mesh("cuda", (dp, 4))', []),
        ('init_device_mesh("cuda", mesh_dim_names=("dp",))', []),
        ('init_device_mesh("cuda")', []),
        ('os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"', ["`CUDA_VISIBLE_DEVICES`"]),
        ('os.environ["CUDA_VISIBLE_DEVICES"] = 3', ["`CUDA_VISIBLE_DEVICES`"]),
        ('os.environ["CUDA_VISIBLE_DEVICES"] = ""', []),
        ('os.environ["CUDA_VISIBLE_DEVICES"] = "-1"', []),
        ('os.environ["CUDA_VISIBLE_DEVICES"] = devices', []),
        ('os.environ.update(CUDA_VISIBLE_DEVICES="0", OTHER="1")', ["`CUDA_VISIBLE_DEVICES`"]),
    ],
)
def test_topology_literal_is_reported_per_call_shape(call: str, expected: list[str]) -> None:
    source = (
        "import os\nimport multiprocessing as mp\nfrom concurrent.futures import "
        "ThreadPoolExecutor\n\nimport torch.distributed as dist\n"
        "from torch.distributed.device_mesh import init_device_mesh\n\n\n"
        f"def main(n, dp, devices):\n    {call}\n"
    )

    found = _rnk504(source)

    assert found == [(10, text) for text in expected]


# -- RNK503: HTTP routes and container commands (string_rules helpers) --------------


@pytest.mark.parametrize(
    ("statement", "reported"),
    [
        ('requests.get("/data/items")', False),
        ('requests.api.get("/data/items")', False),
        ('httpx.post("/home/users")', False),
        ('print("/data/items")', True),
        ('subprocess.run(["docker", "exec", "box", "ls", "/data/x"])', False),
        ('subprocess.run("docker exec box cat /data/x", shell=True)', False),
        ('subprocess.run("/usr/bin/podman exec box cat /data/x", shell=True)', False),
        ('subprocess.run(["ls", "/data/x"])', True),
        ('subprocess.run("/data/x/run.sh")', True),
        ('subprocess.run("   ", cwd="/data/x")', True),
        ('subprocess.run([], cwd="/data/x")', True),
        ('subprocess.run(args, cwd="/data/x")', True),
        ('subprocess.run(cwd="/data/x")', True),
        ('runner.exec("cat /data/x")', False),
        ('os.exec("/data/x")', True),
    ],
)
def test_machine_path_in_http_route_or_container_command_is_not_reported(
    statement: str, reported: bool
) -> None:
    source = f"import os\nimport subprocess\n\nimport httpx\nimport requests\n\n{statement}\n"

    found = _messages(source, "RNK503", "pkg/run.py")

    assert [line for line, _ in found] == ([7] if reported else [])


def test_docstring_path_is_not_reported() -> None:
    source = '"""Reads /data/items."""\n\n\ndef f():\n    """Writes /home/out."""\n'

    assert _messages(source, "RNK503", "pkg/run.py") == []


# -- RNK507 mesh-dims-mismatch: shape against names ------------------------------------


@pytest.mark.parametrize(
    ("call", "dimensions"),
    [
        ('init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp",))', 2),
        ('init_device_mesh("cuda", mesh_shape=(2, 4), mesh_dim_names=("dp",))', 2),
        ('init_device_mesh("cuda", mesh_dim_names=("dp",), mesh_shape=[2, 4, 1])', 3),
        ('init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))', None),
        ('init_device_mesh("cuda", (2, n), mesh_dim_names=("dp",))', None),
        ('init_device_mesh("cuda", shape, mesh_dim_names=("dp",))', None),
        ('init_device_mesh("cuda", mesh_dim_names=("dp",))', None),
        ('init_device_mesh(device_type="cuda", mesh_dim_names=("dp",))', None),
        ('init_device_mesh("cuda", (2, 4), mesh_dim_names=names)', None),
        ('init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", name))', None),
        ('DeviceMesh("cuda", [[0, 1], [2, 3]], mesh_dim_names=("dp",))', None),
    ],
)
def test_mesh_shape_and_names_of_different_lengths_are_reported(
    call: str, dimensions: int | None
) -> None:
    source = (
        "from torch.distributed.device_mesh import DeviceMesh, init_device_mesh\n\n\n"
        f"def build(n, shape, names, name):\n    return {call}\n"
    )

    found = _messages(source, "RNK507", "pkg/mesh.py")

    expected = f"the mesh shape has {dimensions} dimensions but `mesh_dim_names` names 1"
    assert [(line, message.split(":")[0]) for line, message in found] == (
        [] if dimensions is None else [(5, expected)]
    )


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        # A token's prefix makes it a secret wherever it stands: the default run.
        ('HF_TOKEN = "hf_' + "a1" * 17 + '"', [("high", "token-prefix")]),
        ('value = "hf_' + "a1" * 17 + '"', [("high", "token-prefix")]),
        # A secret's name alone: medium.
        ('api_key = "a1b2c3d4e5"', [("medium", "secret-name")]),
        ('os.environ["WANDB_API_KEY"] = "3f9a1c0d7e6b5a4f"', [("medium", "secret-name")]),
        # Vocabulary tokens, modes and made-up values are no secrets at all.
        ('DEFAULT_PADDING_TOKEN = "@@PADDING@@"', []),
        ('EOS_TOKEN = "<|endoftext|>"', []),
        ('PAD_TOKEN = "[PAD]-[PAD]"', []),
        ('QUANT_PER_TOKEN = "int8_asym_per_token"', []),
        ('HF_TOKEN = "super-secret-token"', []),
        ('db_password = "my-password-1"', []),
    ],
)
def test_a_credential_is_high_by_its_prefix_medium_by_its_name_and_absent_by_its_shape(
    statement: str, expected: list[tuple[str, str]]
) -> None:
    assert _rnk502_tiers(f"import os\n{statement}\n") == expected


@pytest.mark.parametrize(
    "value",
    ["s3cr3t-pa55w0rd", "a1b2c3d4", "Ab12-cd34-ef56", "xK9_2mQ"],
)
def test_a_value_with_digits_or_mixed_characters_under_a_secret_name_is_still_reported(
    value: str,
) -> None:
    found = _rnk502_tiers(f'password = "{value}"\n')

    assert found == ([("medium", "secret-name")] if len(value) >= 8 else [])
