"""Every link a finding carries opens a rule page: a shipped file, or the configured site."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

import pytest

from ranklint import links
from ranklint.links import DOCS_URL_ENV, docs_base_url, docs_url, project_url, rules_dir
from ranklint.rules import all_rules
from tests.conftest import FIXTURES, REPO_ROOT


def file_of(url: str) -> Path:
    """The local file a ``file://`` URL names."""
    parsed = urlparse(url)
    assert parsed.scheme == "file", url
    return Path(url2pathname(unquote(parsed.path)))


@pytest.fixture(autouse=True)
def _no_docs_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DOCS_URL_ENV, raising=False)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_docs_url_without_a_configured_site_is_a_file_holding_the_rules_page(rule) -> None:
    page = file_of(docs_url(rule.code))

    assert page.is_file()
    assert page.read_text(encoding="utf-8").splitlines()[1] == f"# {rule.code} {rule.name}"


def test_rule_pages_of_a_checkout_are_its_docs_folder() -> None:
    assert rules_dir() == REPO_ROOT / "docs" / "rules"
    assert file_of(project_url()) == REPO_ROOT / "docs" / "rules" / "README.md"


def test_rule_pages_shipped_in_the_package_win_over_a_checkouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "ranklint" / "_data" / "docs" / "rules"
    shipped.mkdir(parents=True)
    (shipped / "README.md").write_text("# Rules\n", encoding="utf-8")
    monkeypatch.setattr(links, "PACKAGED_RULES_DIR", shipped)

    assert file_of(docs_url("RNK101")) == shipped / "RNK101.md"


def test_rule_pages_found_nowhere_still_give_a_file_uri_of_the_packaged_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(links, "PACKAGED_RULES_DIR", tmp_path / "packaged")
    monkeypatch.setattr(links, "CHECKOUT_RULES_DIR", tmp_path / "checkout")

    assert docs_url("RNK101") == (tmp_path / "packaged" / "RNK101.md").as_uri()


@pytest.mark.parametrize(
    "configured",
    ["https://docs.example.org/ranklint/rules", "https://docs.example.org/ranklint/rules/"],
)
def test_docs_url_with_a_configured_site_links_under_it(
    configured: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DOCS_URL_ENV, configured)

    assert docs_base_url() == "https://docs.example.org/ranklint/rules"
    assert docs_url("RNK102") == "https://docs.example.org/ranklint/rules/RNK102.md"
    assert project_url() == "https://docs.example.org/ranklint/rules/README.md"


def test_docs_url_with_a_blank_setting_links_to_the_shipped_pages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(DOCS_URL_ENV, "  ")

    assert file_of(docs_url("RNK101")).is_file()


def test_every_url_a_json_finding_prints_opens_its_rules_page(run_cli) -> None:
    run = run_cli("check", "--format", "json", "--confidence", "low", str(FIXTURES))

    findings = json.loads(run.out)
    assert run.code == 1
    assert len({f["code"] for f in findings}) > 3
    for finding in findings:
        page = file_of(finding["url"])
        assert page.is_file(), finding["url"]
        assert page.name == f"{finding['code']}.md"


def test_every_sarif_help_uri_opens_its_rules_page_and_the_tool_uri_the_index(
    run_cli, tmp_path: Path
) -> None:
    (tmp_path / "bad.py").write_text(
        "import torch.distributed as dist\ndist.init_process_group()\n", encoding="utf-8"
    )

    run = run_cli("check", "--format", "sarif", str(tmp_path))

    driver = json.loads(run.out)["runs"][0]["tool"]["driver"]
    assert file_of(driver["informationUri"]).name == "README.md"
    assert file_of(driver["informationUri"]).is_file()
    for rule in driver["rules"]:
        assert file_of(rule["helpUri"]) == rules_dir() / f"{rule['id']}.md"
        assert file_of(rule["helpUri"]).is_file()


def test_no_link_names_the_github_organisation_that_does_not_host_ranklint() -> None:
    shipped = [
        REPO_ROOT / "pyproject.toml",
        REPO_ROOT / "action.yml",
        *(REPO_ROOT / "src" / "ranklint").rglob("*.py"),
    ]

    naming = [path for path in shipped if "github.com/ranklint" in path.read_text("utf-8")]

    assert naming == []
