"""Configuration: loading, validation, selection, per-file ignores."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ranklint import Config, ConfigError, lint_paths, lint_source
from ranklint.cache import config_fingerprint
from ranklint.config import config_from_table, declared_options, load_config
from ranklint.rules import all_rules
from tests.conftest import write

BOTH = "from os import *; sep\nimport torch.distributed as dist\ndist.init_process_group()\n"


def enabled(config: Config) -> list[str]:
    return list(config.enabled_codes())


RNK1_DEFAULT = [
    "RNK101",
    "RNK102",
    "RNK103",
    "RNK104",
    "RNK105",
    "RNK108",
    "RNK112",
    "RNK113",
]
RNK1_ALL = sorted([*RNK1_DEFAULT, "RNK106", "RNK107", "RNK109", "RNK110", "RNK111"])
RNK2_DEFAULT = ["RNK201"]
RNK2_ALL = ["RNK201", "RNK202", "RNK203"]
RNK3_DEFAULT = ["RNK301"]
REST_DEFAULT = ["RNK401", "RNK402", "RNK502", "RNK504", "RNK505", "RNK507", "RNK602"]
REST_ALL = sorted([*REST_DEFAULT, "RNK501", "RNK503", "RNK506", "RNK601", "RNK603", "RNK604"])


def test_default_selection_is_every_default_enabled_rule() -> None:
    assert enabled(Config()) == [
        "RNK001", *RNK1_DEFAULT, *RNK2_DEFAULT, *RNK3_DEFAULT, *REST_DEFAULT
    ]  # fmt: skip


def test_off_by_default_rule_is_enabled_by_its_code_or_all() -> None:
    assert "RNK107" not in enabled(Config())
    assert "RNK107" in enabled(Config(extend_select=("RNK107",)))
    assert "RNK107" in enabled(Config(select=("ALL",)))


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"select": ("RNK1",)}, RNK1_ALL),
        ({"select": ("RNK101", "RNK301")}, ["RNK101", "RNK301"]),
        (
            {"select": ("ALL",), "ignore": ("RNK3",)},
            ["RNK001", "RNK002", *RNK1_ALL, *RNK2_ALL, *REST_ALL],
        ),
        ({"select": ("RNK0",), "extend_select": ("RNK301",)}, ["RNK001", "RNK002", "RNK301"]),
        ({"ignore": ("RNK",)}, []),
        ({"ignore": ("RNK1", "RNK2", "RNK4", "RNK5", "RNK6")}, ["RNK001", *RNK3_DEFAULT]),
    ],
)
def test_selection_with_codes_and_prefixes_enables_matching_rules(
    kwargs: dict[str, tuple[str, ...]], expected: list[str]
) -> None:
    assert enabled(Config(**kwargs)) == expected


def test_command_line_select_overrides_file_ignore() -> None:
    config = Config(ignore=("RNK301",)).with_overrides(select=["RNK301"])

    assert enabled(config) == ["RNK301"]


def test_command_line_ignore_applies_after_file_select() -> None:
    config = Config(select=("RNK1", "RNK3")).with_overrides(ignore=["RNK1"])

    assert enabled(config) == ["RNK301", "RNK302", "RNK303"]


def test_per_file_ignores_disable_codes_for_matching_paths(tmp_path: Path) -> None:
    write(tmp_path / "tests" / "test_x.py", BOTH)
    write(tmp_path / "src" / "x.py", BOTH)
    config = Config(root=tmp_path, per_file_ignores={"tests/**": ("RNK101",)})

    result = lint_paths([tmp_path], config, jobs=1)

    found = sorted((Path(f.path).relative_to(tmp_path).as_posix(), f.code) for f in result.findings)
    assert found == [
        ("src/x.py", "RNK101"),
        ("src/x.py", "RNK301"),
        ("tests/test_x.py", "RNK301"),
    ]


def test_load_config_finds_nearest_pyproject_with_ranklint_table(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nselect = ["RNK3"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "no-ranklint-table"\n')
    (tmp_path / "pkg" / "sub").mkdir()

    config = load_config(cwd=tmp_path / "pkg" / "sub")

    assert config.select == ("RNK3",)
    assert config.root == tmp_path
    assert config.source == tmp_path / "pyproject.toml"


def test_load_config_without_any_file_gives_defaults_rooted_at_cwd(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path)

    assert (config.select, config.source, config.root) == (None, None, tmp_path)


def test_explicit_config_file_outside_pyproject_uses_top_level_table(tmp_path: Path) -> None:
    path = write(tmp_path / "ranklint.toml", 'ignore = ["RNK301"]\n')

    assert load_config(path).ignore == ("RNK301",)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[tool.ranklint]\nselec = ["RNK1"]\n', "unknown key 'selec' (did you mean 'select'?)"),
        ('[tool.ranklint]\nextend_select = ["RNK1"]\n', "did you mean 'extend-select'?"),
        ('[tool.ranklint]\nselect = "RNK1"\n', "select: expected a list of strings, got a string"),
        ("[tool.ranklint]\nignore = [1]\n", "ignore: expected a list of strings"),
        ('[tool.ranklint]\nselect = ["RNK999"]\n', "unknown rule code or prefix 'RNK999'"),
        ('[tool.ranklint]\nselect = ["RNK1O1"]\n', "unknown rule code or prefix 'RNK1O1'"),
        ('[tool.ranklint]\nselect = ["E501"]\n', "unknown rule code or prefix 'E501'"),
        ("[tool.ranklint]\nper-file-ignores = 3\n", "per-file-ignores: expected a table"),
        ('[tool.ranklint.per-file-ignores]\n"t/*" = ["X1"]\n', "unknown rule code"),
        ('[tool.ranklint]\nexclude = ["!"]\n', "exclude: bad pattern '!'"),
        ("[tool.ranklint\nselect = 1\n", "invalid TOML"),
        ('[tool]\nranklint = "x"\n', "[tool.ranklint] must be a table"),
    ],
)
def test_bad_configuration_raises_one_line_error_naming_the_problem(
    tmp_path: Path, toml: str, message: str
) -> None:
    path = write(tmp_path / "pyproject.toml", toml)

    with pytest.raises(ConfigError) as info:
        load_config(path)

    assert message in str(info.value)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_config_file_raises_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


def test_rank_names_and_extra_collectives_load_from_the_table(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        "[tool.ranklint]\n"
        'extend-rank-names = ["leader_*"]\n'
        'extra-collectives = ["proj.comm.sync_all", "Engine.sync"]\n',
    )

    config = load_config(cwd=tmp_path)

    assert config.extend_rank_names == ("leader_*",)
    assert config.extra_collectives == ("proj.comm.sync_all", "Engine.sync")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("rank-names", '["my rank"]', "is not a name or glob pattern"),
        ("extend-rank-names", '"rank"', "expected a list of strings"),
        ("extra-collectives", '["sync_all"]', "is not a dotted name"),
        ("extra-collectives", '["pkg..f"]', "is not a dotted name"),
    ],
)
def test_bad_analysis_keys_are_reported_with_the_key(
    tmp_path: Path, key: str, value: str, message: str
) -> None:
    write(tmp_path / "pyproject.toml", f"[tool.ranklint]\n{key} = {value}\n")

    with pytest.raises(ConfigError, match=message):
        load_config(cwd=tmp_path)


def test_extended_rank_names_make_a_project_predicate_a_rank_condition() -> None:
    source = (
        "import torch.distributed as dist\n\n\n"
        "def f(leader_flag):\n    if leader_flag:\n        dist.barrier()\n"
    )

    plain = lint_source(source, "f.py", Config(select=("RNK102",)))
    extended = lint_source(
        source, "f.py", Config(select=("RNK102",), extend_rank_names=("leader_*",))
    )

    assert plain.findings == []
    assert [f.line for f in extended.findings] == [6]


def test_extra_collectives_make_project_wrappers_count_as_collectives() -> None:
    source = (
        "from proj.comm import sync_all\n\n\n"
        "def f(rank, engine):\n    if rank == 0:\n        sync_all()\n        engine.sync()\n"
    )
    config = Config(
        select=("RNK102",),
        extra_collectives=("proj.comm.sync_all", "Engine.sync"),
        confidence="low",
    )

    result = lint_source(source, "f.py", config)

    assert [f.line for f in result.findings] == [6]
    assert "`sync_all` is reached only when `rank == 0`" in result.findings[0].message


def _changed_value(default: object, example: object) -> object:
    if isinstance(default, bool):
        return not default
    return example


@pytest.mark.parametrize("declared", declared_options(), ids=lambda d: d.key)
def test_changing_any_option_changes_the_cache_fingerprint(declared) -> None:
    base = Config()
    changed = dataclasses.replace(
        base, **{declared.name: _changed_value(declared.default, declared.spec.kind.example)}
    )

    assert config_fingerprint(changed) != config_fingerprint(base)


def test_every_option_reader_names_a_rule_or_an_analysis() -> None:
    codes = {rule.code for rule in all_rules()}
    analyses = {"rank-taint", "hot regions", "call classifier"}

    unknown = [
        (declared.key, reader)
        for declared in declared_options()
        for reader in declared.spec.readers
        if reader not in codes and reader not in analyses
    ]

    assert unknown == []


def test_every_extend_option_extends_a_declared_option() -> None:
    names = {declared.name for declared in declared_options()}

    dangling = [
        declared.key
        for declared in declared_options()
        if declared.spec.extends is not None and declared.spec.extends not in names
    ]

    assert dangling == []


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"selec": ["RNK1"]}, "[tool.ranklint]: unknown key 'selec' (did you mean 'select'?)"),
        (
            {"extend_select": []},
            "[tool.ranklint]: unknown key 'extend_select' (did you mean 'extend-select'?)",
        ),
        ({"zzzz": []}, "[tool.ranklint]: unknown key 'zzzz'"),
        (
            {"select": ["RNK1O1"]},
            "select: unknown rule code or prefix 'RNK1O1' (did you mean 'RNK101'?)",
        ),
        (
            {"select": ["RNK1l1"]},
            "select: unknown rule code or prefix 'RNK1l1' (did you mean 'RNK111'?)",
        ),
        (
            {"select": ["rnk112"]},
            "select: unknown rule code or prefix 'rnk112' (did you mean 'RNK112'?)",
        ),
        ({"ignore": ["XYZ"]}, "ignore: unknown rule code or prefix 'XYZ'"),
        (
            {"select": ["RNK102", "RNK9"]},
            "select: unknown rule code or prefix 'RNK9' (did you mean 'RNK109'?)",
        ),
        ({"select": "RNK1"}, "[tool.ranklint] select: expected a list of strings, got a string"),
        (
            {"select": [1]},
            "[tool.ranklint] select: expected a list of strings, got a list with non-string items",
        ),
        ({"select": {"a": 1}}, "[tool.ranklint] select: expected a list of strings, got a table"),
        ({"select": True}, "[tool.ranklint] select: expected a list of strings, got a boolean"),
        ({"select": 3}, "[tool.ranklint] select: expected a list of strings, got an integer"),
        ({"select": 1.5}, "[tool.ranklint] select: expected a list of strings, got float"),
        (
            {"allow-periodic-sync": "yes"},
            "[tool.ranklint] allow-periodic-sync: expected true or false, got a string",
        ),
        (
            {"per-file-ignores": []},
            "[tool.ranklint] per-file-ignores: expected a table of pattern = [codes], "
            "got a list with non-string items",
        ),
        (
            {"per-file-ignores": {"a/*": "RNK1"}},
            "[tool.ranklint] per-file-ignores['a/*']: expected a list of strings, got a string",
        ),
        (
            {"per-file-ignores": {"a/*": ["RNK9"]}},
            "per-file-ignores['a/*']: unknown rule code or prefix 'RNK9' (did you mean 'RNK109'?)",
        ),
        (
            {"per-file-ignores": {"!": ["RNK1"]}},
            "per-file-ignores: bad pattern '!': Invalid git pattern: '!'",
        ),
        ({"mesh-axes": ["dp-x"]}, "mesh-axes: 'dp-x' is not an identifier"),
        (
            {"blocking-functions": ["fetch"]},
            "blocking-functions: 'fetch' is not a dotted name such as 'pkg.io.fetch_weights'",
        ),
        (
            {"extra-collectives": ["sync"]},
            "extra-collectives: 'sync' is not a dotted name such as "
            "'pkg.comm.all_reduce_mean' or 'Trainer.sync'",
        ),
        (
            {"machine-path-prefixes": ["/"]},
            "machine-path-prefixes: '/' would match every absolute path",
        ),
        (
            {"machine-path-prefixes": ["\\"]},
            "machine-path-prefixes: '\\\\' would match every absolute path",
        ),
        (
            {"machine-path-prefixes": [""]},
            "machine-path-prefixes: '' would match every absolute path",
        ),
        (
            {"rank-names": ["my rank"]},
            "rank-names: 'my rank' is not a name or glob pattern of names "
            "(letters, digits, _, *, ?, [...])",
        ),
    ],
)
def test_bad_table_value_is_reported_in_one_exact_line(table: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ConfigError) as info:
        config_from_table(table, source=None, root=Path("."))

    assert str(info.value) == message


def test_error_names_the_configuration_file_when_there_is_one(tmp_path: Path) -> None:
    source = tmp_path / "pyproject.toml"

    with pytest.raises(ConfigError) as info:
        config_from_table({"mesh-axes": ["a-b"]}, source=source, root=tmp_path)

    assert str(info.value) == f"{source}: mesh-axes: 'a-b' is not an identifier"


def test_bad_command_line_code_is_reported_as_from_the_command_line() -> None:
    with pytest.raises(ConfigError) as info:
        Config().with_overrides(select=["RNK10O"])

    assert str(
        info.value
    ) == "command line: unknown rule code or prefix 'RNK10O' (did you mean 'RNK100'?)" or str(
        info.value
    ).startswith("command line: unknown rule code or prefix 'RNK10O'")


def test_valid_table_values_are_loaded_as_given(tmp_path: Path) -> None:
    config = config_from_table(
        {
            "allow-periodic-sync": False,
            "per-file-ignores": {"tests/*": ["RNK2"]},
            "machine-path-prefixes": ["/opt/data/"],
        },
        source=None,
        root=tmp_path,
    )

    assert config.allow_periodic_sync is False
    assert config.per_file_ignores == {"tests/*": ("RNK2",)}
    assert config.machine_path_prefixes == ("/opt/data/",)
    assert config.root == tmp_path


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", '[tool.ranklint]\nselect = ["RNK301"]\n'),
        ("ranklint.toml", 'select = ["RNK301"]\n'),
        ("other.toml", '[tool.ranklint]\nselect = ["RNK301"]\n'),
    ],
)
def test_explicit_config_file_is_read_from_its_table(tmp_path: Path, name: str, text: str) -> None:
    path = write(tmp_path / "conf" / name, text)

    config = load_config(path)

    assert config.select == ("RNK301",)
    assert config.root == path.absolute().parent
    assert config.source == path


def test_explicit_pyproject_without_a_ranklint_table_gives_defaults(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")

    config = load_config(path)

    assert config.select is None
    assert config.root == tmp_path.absolute()


def test_pyproject_without_tool_table_is_skipped_while_walking_up(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nselect = ["RNK301"]\n')
    inner = tmp_path / "pkg"
    write(inner / "pyproject.toml", "[project]\nname = 'x'\n")

    config = load_config(cwd=inner)

    assert config.select == ("RNK301",)
    assert config.root == tmp_path.absolute()


def test_unreadable_config_file_is_a_config_error(tmp_path: Path) -> None:
    directory = tmp_path / "pyproject.toml"
    directory.mkdir()

    with pytest.raises(ConfigError) as info:
        load_config(directory)

    assert str(info.value).startswith(f"{directory}: cannot read configuration: ")


def test_path_outside_the_root_is_matched_by_its_absolute_path_without_the_leading_slash(
    tmp_path: Path,
) -> None:
    config = Config(root=tmp_path / "project")

    assert config.relative_path(tmp_path / "project" / "a" / "b.py") == "a/b.py"
    assert config.relative_path("/elsewhere/x.py") == "elsewhere/x.py"
    assert config.relative_path("/Xdata/x.py") == "Xdata/x.py"
