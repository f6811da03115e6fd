"""RNK301 and RNK302 on the shapes real projects have: layouts, dependencies, re-exports."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ranklint import Config, lint_paths, lint_source
from tests.conftest import codes_by_line, write

HEAVY = ("RNK302",)
WILDCARD = ("RNK301",)


def lint_project(root: Path, *files: str, cache_dir: Path | None = None) -> list[tuple[str, int]]:
    """(path relative to root, line) of each RNK302 finding in ``files``."""
    config = Config(select=HEAVY, root=root)
    result = lint_paths([root / file for file in files], config, jobs=1, cache_dir=cache_dir)
    assert result.errors == []
    return [(Path(f.path).relative_to(root).as_posix(), f.line) for f in result.findings]


def write_source(path: Path, source: str) -> Path:
    return write(path, textwrap.dedent(source).lstrip("\n"))


# -- RNK302: the project's own packages ----------------------------------------


def test_heavy_import_of_a_top_level_package_of_the_project_is_not_reported(
    tmp_path: Path,
) -> None:
    # gpt-neox: its own package is called `megatron`; train.py and eval_tasks/ import it.
    write(tmp_path / ".git" / "HEAD", "ref: refs/heads/main\n")
    write(tmp_path / "megatron" / "__init__.py", "")
    write(tmp_path / "megatron" / "utils.py", "")
    write_source(tmp_path / "eval_tasks" / "eval_adapter.py", "from megatron.utils import x\n")
    write_source(tmp_path / "train_lib.py", "import megatron\nimport wandb\n")

    found = lint_project(tmp_path, "eval_tasks/eval_adapter.py", "train_lib.py")

    assert found == [("train_lib.py", 2)]


def test_heavy_import_of_the_pyproject_project_name_is_not_reported(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "Flash-Attn"\n')
    write_source(tmp_path / "lib" / "ops.py", "import flash_attn\nimport vllm\n")

    assert lint_project(tmp_path, "lib/ops.py") == [("lib/ops.py", 2)]


def test_heavy_import_of_a_package_under_src_is_not_reported(tmp_path: Path) -> None:
    write(tmp_path / "setup.cfg", "[metadata]\nname = other\n")
    write(tmp_path / "src" / "deepspeed" / "__init__.py", "")
    write_source(tmp_path / "plugins" / "engine.py", "import deepspeed\n")

    assert lint_project(tmp_path, "plugins/engine.py") == []


# -- RNK302: the project's required dependencies ---------------------------------


def test_dependency_in_pyproject_dependencies_is_not_reported_and_an_extra_is(
    tmp_path: Path,
) -> None:
    write_source(
        tmp_path / "pyproject.toml",
        """
        [project]
        name = "trainer"
        dependencies = ["wandb>=0.15", "megatron-core[mlm] ; python_version >= '3.10'"]

        [project.optional-dependencies]
        serve = ["vllm"]
        """,
    )
    write_source(
        tmp_path / "trainer" / "loop.py",
        """
        import wandb
        from megatron.core import parallel_state
        from megatron.energon import Batch
        import vllm
        """,
    )

    found = lint_project(tmp_path, "trainer/loop.py")

    # megatron-core provides `megatron.core`, not `megatron.energon`.
    assert found == [("trainer/loop.py", 3), ("trainer/loop.py", 4)]


def test_dependency_in_setup_py_install_requires_literal_list_is_not_reported(
    tmp_path: Path,
) -> None:
    write_source(
        tmp_path / "setup.py",
        """
        from setuptools import setup

        REQUIRED = ["deepspeed>=0.14", "tensorboardX"]
        setup(name="neox", install_requires=REQUIRED)
        """,
    )
    write_source(
        tmp_path / "neox" / "engine.py",
        "import deepspeed\nimport tensorboardX\nimport apex\n",
    )

    assert lint_project(tmp_path, "neox/engine.py") == [("neox/engine.py", 3)]


def test_dependency_in_a_requirements_file_named_by_setup_py_is_not_reported(
    tmp_path: Path,
) -> None:
    # colossalai: install_requires=fetch_requirements("requirements/requirements.txt").
    write_source(
        tmp_path / "setup.py",
        """
        from setuptools import setup


        def fetch_requirements(path):
            with open(path) as fd:
                return [r.strip() for r in fd.readlines()]


        setup(name="colossal", install_requires=fetch_requirements("requirements/runtime.txt"))
        """,
    )
    write(tmp_path / "requirements" / "runtime.txt", "torch>=2.2\nbitsandbytes>=0.39.0\n")
    write(tmp_path / "requirements" / "requirements-extra.txt", "wandb\n")
    write_source(tmp_path / "colossal" / "galore.py", "import bitsandbytes\nimport wandb\n")

    assert lint_project(tmp_path, "colossal/galore.py") == [("colossal/galore.py", 2)]


def test_dependency_in_requirements_txt_by_url_egg_or_include_is_not_reported(
    tmp_path: Path,
) -> None:
    write(tmp_path / "setup.cfg", "[metadata]\nname = neox\n")
    write_source(
        tmp_path / "requirements" / "requirements.txt",
        """
        # the engine
        git+https://github.com/EleutherAI/DeeperSpeed.git@v1#egg=deepspeed
        -r logging.txt
        """,
    )
    write(tmp_path / "requirements" / "logging.txt", "wandb==0.16  # metrics\n")
    write_source(tmp_path / "neox" / "train.py", "import deepspeed\nimport wandb\nimport vllm\n")

    assert lint_project(tmp_path, "neox/train.py") == [("neox/train.py", 3)]


def test_dependency_in_setup_cfg_install_requires_is_not_reported(tmp_path: Path) -> None:
    write_source(
        tmp_path / "setup.cfg",
        """
        [metadata]
        name = lib

        [options]
        install_requires =
            mlflow-skinny>=2
            neptune-client
        """,
    )
    write_source(tmp_path / "lib" / "track.py", "import mlflow\nimport neptune\nimport comet_ml\n")

    assert lint_project(tmp_path, "lib/track.py") == [("lib/track.py", 3)]


def test_cached_results_follow_an_edit_of_the_required_dependencies(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project / "pyproject.toml", '[project]\nname = "lib"\ndependencies = []\n')
    write_source(project / "lib" / "log.py", "import wandb\n")
    cache = tmp_path / "cache"
    assert lint_project(project, "lib/log.py", cache_dir=cache) == [("lib/log.py", 1)]

    write(project / "pyproject.toml", '[project]\nname = "lib"\ndependencies = ["wandb"]\n')

    assert lint_project(project, "lib/log.py", cache_dir=cache) == []


# -- RNK302: optional-import guards, integrations, modules built on the dependency --


def test_heavy_import_guarded_by_bare_except_or_base_exception_is_not_reported() -> None:
    source = """
    try:
        from apex.contrib.layer_norm.layer_norm import FastLayerNormFN
    except:
        FastLayerNormFN = None
    try:
        import wandb
    except BaseException:
        wandb = None
    try:
        import vllm
    except OSError:
        vllm = None
    """

    assert codes_by_line(source, "pkg/norm.py", select=HEAVY) == [(10, "RNK302")]


def test_heavy_import_in_a_module_named_after_flash_attention_is_not_reported() -> None:
    source = "from flash_attn.flash_attn_interface import flash_attn_varlen_func\n"

    assert codes_by_line(source, "pkg/models/flash_dot_product_attention.py", select=HEAVY) == []
    assert codes_by_line(source, "pkg/models/attention.py", select=HEAVY) == [(1, "RNK302")]


def test_heavy_import_whose_names_run_at_import_time_is_not_reported() -> None:
    # nemo vlm/qwen2vl/model/vision.py: classes built on megatron-core's classes.
    source = """
    import functools

    from megatron.core import parallel_state
    from megatron.core.transformer import MegatronModule
    import transformer_engine as te
    import wandb
    from deepspeed import comm


    class VisionModel(MegatronModule):
        def forward(self, x):
            return parallel_state.get_tensor_model_parallel_rank()


    @te.fp8_autocast
    def run(x):
        return x


    def log(metrics, run=wandb.run):
        return run


    def all_reduce(tensor):
        return comm.all_reduce(tensor)
    """

    # megatron: a class base; transformer_engine: a decorator; wandb: a default value.
    assert codes_by_line(source, "pkg/vision.py", select=HEAVY) == [(7, "RNK302")]


def test_heavy_import_used_only_in_annotations_or_under_type_checking_is_reported() -> None:
    source = """
    from typing import TYPE_CHECKING

    from megatron.core.transformer import TransformerConfig

    if TYPE_CHECKING:
        CONFIG = TransformerConfig()


    class Model:
        config: TransformerConfig

        def build(self, config: TransformerConfig = None) -> TransformerConfig:
            return config
    """

    assert codes_by_line(source, "pkg/model.py", select=HEAVY) == [(3, "RNK302")]


# -- RNK301: modules that read none of the wildcard's names ----------------------


def test_wildcard_in_a_package_init_that_only_republishes_names_is_not_reported() -> None:
    source = '''
    """Layers."""
    import logging

    from .linear import *
    from .norm import *
    from .utils import get_mode

    __all__ = ["get_mode"]
    __all__ += linear.__all__
    logging.getLogger(__name__).debug("loaded %s", __name__)


    def check_install(cuda=False):
        import torch

        with open(__file__) as handle, torch.no_grad():
            names = [line for line in handle]
        try:
            total = sum(len(name) for name in names)
        except ValueError as error:
            raise RuntimeError(str(error)) from error
        return total, get_mode(cuda=cuda).value
    '''

    assert codes_by_line(source, "pkg/layers/__init__.py", select=WILDCARD) == []


def test_wildcard_in_a_package_init_whose_code_reads_an_unbound_name_is_reported() -> None:
    source = """
    from torch.nn.modules.loss import *
    from torch.nn.modules.loss import _Loss


    class ParallelLoss(_Loss):
        def forward(self, x, y):
            return CrossEntropyLoss()(x, y)
    """

    assert codes_by_line(source, "pkg/loss/__init__.py", select=WILDCARD) == [(1, "RNK301")]


def test_wildcard_outside_an_init_reading_none_of_its_names_says_it_imports_nothing() -> None:
    # A test module that imports another suite's tests for pytest to collect,
    # and a script that imports a package for the classes it registers:
    # pyflakes (F403) and ruff report these too.
    source = """
    from litgpt.constants import _THUNDER_AVAILABLE

    if _THUNDER_AVAILABLE:
        from thunder.tests.test_networks import *
    else:
        print("thunder not available")
    """

    for path in ("tests/test_thunder_networks.py", "scripts/run.py"):
        config = Config(select=WILDCARD, confidence="medium")
        findings = lint_source(textwrap.dedent(source), path, config).findings
        assert [(f.code, f.line) for f in findings] == [("RNK301", 5)]
        assert "imports nothing this module uses" in findings[0].message
        assert findings[0].fix is None
        assert findings[0].confidence.value == "medium"
        # The default run shows only wildcards whose names the module reads.
        assert lint_source(textwrap.dedent(source), path, Config(select=WILDCARD)).findings == []


def test_wildcard_in_a_module_whose_code_reads_an_unbound_name_is_reported() -> None:
    source = """
    from hf_olmo import *


    def load(path):
        return OLMoForCausalLM.from_pretrained(path)
    """

    assert codes_by_line(source, "scripts/run.py", select=WILDCARD) == [(1, "RNK301")]


@pytest.mark.parametrize(
    "body",
    [
        "x = 1\nprint(x, end='')",  # `end=` is a keyword, not a read
        "import numpy as np\nnp.zeros(1)",
        "import os.path\nos.sep",
        "from os import path as p\np.join('a')",
        "class C:\n    pass\nC()",
        "def f(a):\n    return a",
        "x: int = 1\nx",
        "counter += 1\ncounter",
        "if (y := 2):\n    y",
        "for i in range(3):\n    i",
        "def f():\n    global g\n    g = 1\n    return g",
        "def outer():\n    v = 1\n    def inner():\n        nonlocal v\n        return v",
        "match point:\n    case [first, *rest]:\n        first, rest\n    case _:\n        pass",
        "a, b = 1, 2\na, b",
        "[c, *d] = [1, 2]\nc, d",
        "with open('f') as handle:\n    handle",
        "[item for item in range(3)]",
    ],
)
def test_wildcard_reads_nothing_when_every_name_read_is_bound_by_the_module(body: str) -> None:
    source = f"from pkg.names import *\npoint = None\n{body}\n"

    in_init = lint_source(source, "pkg/__init__.py", Config(select=WILDCARD, confidence="low"))
    in_module = lint_source(source, "scripts/run.py", Config(select=WILDCARD, confidence="low"))

    assert in_init.errors == in_module.errors == []
    assert [f.code for f in in_init.findings] == []
    assert [f.code for f in in_module.findings] == ["RNK301"]
    assert "imports nothing this module uses" in in_module.findings[0].message


@pytest.mark.parametrize(
    "body",
    [
        "undefined_name",
        "obj.attr = 1",  # an attribute target reads `obj`
        "table[key] = 1\nkey = 0",  # a subscript target reads `table`
        "from os import path\nos.sep",  # `from os import path` does not bind `os`
        "import numpy as np\nnumpy.zeros(1)",
        "from os import path as p\npath.join('a')",
        "print(x)\nx = 1",  # read before the module binds it: the wildcard's
        "def f():\n    global g\n    return g",  # `global` declares, binds nothing
    ],
)
def test_wildcard_is_reported_when_a_name_read_is_bound_only_by_it(body: str) -> None:
    source = f"from pkg.names import *\n{body}\n"

    result = lint_source(source, "scripts/run.py", Config(select=WILDCARD))
    in_init = lint_source(source, "pkg/__init__.py", Config(select=WILDCARD))

    assert [(f.code, f.line) for f in result.findings] == [("RNK301", 1)]
    assert "hides which names this module uses" in result.findings[0].message
    assert [(f.code, f.line) for f in in_init.findings] == [("RNK301", 1)]


def test_relative_wildcard_of_a_submodule_binds_the_package_name_in_an_init() -> None:
    source = "from .layers.linear import *\n__all__ = layers.__all__\n"

    assert codes_by_line(source, "pkg/__init__.py", select=WILDCARD) == []


@pytest.mark.parametrize(
    ("module", "advice"),
    [
        ("pkg.names", "`import pkg.names` for its side effects"),
        ("._factory", "`from . import _factory` for its side effects"),
        ("..a.b", "`from ..a import b` for its side effects"),
        ("..", "import what its importers need by name"),
    ],
)
def test_a_wildcard_reading_nothing_is_a_medium_re_export_whose_advice_is_valid_python(
    module: str, advice: str
) -> None:
    source = f"from {module} import *\n"

    config = Config(select=WILDCARD, confidence="low")
    findings = lint_source(source, "pkg/shim.py", config).findings

    assert len(findings) == 1
    assert findings[0].message.endswith(advice)
    evidence = findings[0].evidence
    assert evidence is not None
    assert evidence.source is not None
    assert (evidence.source.kind, evidence.source.confidence.value) == ("re-export", "medium")


def test_a_wildcard_whose_names_the_module_reads_is_a_high_hidden_use() -> None:
    source = "from torch.distributed import *\n\nrank = get_rank()\n"

    findings = lint_source(source, "pkg/mod.py", Config(select=WILDCARD)).findings

    assert [f.confidence.value for f in findings] == ["high"]
    evidence = findings[0].evidence
    assert evidence is not None
    assert evidence.source is not None
    assert evidence.source.kind == "hidden-use"
