"""Output formats, byte for byte: what CI systems, editors and scripts parse."""

from __future__ import annotations

import json

from ranklint import __version__
from ranklint.faces.formatters import (
    format_github,
    format_json,
    format_sarif,
    format_statistics,
    format_text,
)
from ranklint.findings import Finding, Severity, TraceStep
from ranklint.links import PROJECT_URL, docs_url
from ranklint.rules import all_rules


def finding(
    code: str = "RNK102",
    name: str = "divergent-collective",
    *,
    severity: Severity = Severity.ERROR,
    message: str = "`barrier` is reached only when `rank == 0`",
    path: str = "pkg/train.py",
    line: int = 7,
    col: int = 9,
    end_line: int = 7,
    end_col: int = 23,
    trace: tuple[TraceStep, ...] = (),
) -> Finding:
    return Finding(code, name, severity, message, path, line, col, end_line, end_col, trace)


STEP = TraceStep("pkg/utils.py", 41, 5, "save_ckpt() -> dist.barrier()")


def test_text_format_is_one_line_per_finding_and_one_indented_line_per_trace_step() -> None:
    text = format_text([finding(trace=(STEP,)), finding(code="RNK201", line=9)])

    assert text == (
        "pkg/train.py:7:9: RNK102 `barrier` is reached only when `rank == 0`\n"
        "    pkg/utils.py:41:5: save_ckpt() -> dist.barrier()\n"
        "pkg/train.py:9:9: RNK201 `barrier` is reached only when `rank == 0`\n"
    )


def test_text_format_of_no_findings_is_empty() -> None:
    assert format_text([]) == ""


def test_statistics_orders_by_count_then_code_and_aligns_the_counts() -> None:
    findings = [finding("RNK301", "c")] * 3 + [finding("RNK201", "b")] * 12
    findings += [finding("RNK101", "a")] * 3

    text = format_statistics(findings)

    assert text == "12  RNK201  b\n 3  RNK101  a\n 3  RNK301  c\n"


def test_statistics_of_no_findings_is_empty() -> None:
    assert format_statistics([]) == ""


def test_json_format_is_an_indented_list_with_every_documented_field() -> None:
    one = finding(trace=(STEP,))

    text = format_json([one])

    assert text.endswith("]\n")
    assert text.startswith('[\n  {\n    "code": "RNK102",\n')
    assert json.loads(text) == [
        {
            "code": "RNK102",
            "name": "divergent-collective",
            "message": "`barrier` is reached only when `rank == 0`",
            "severity": "error",
            "filename": "pkg/train.py",
            "cell": None,
            "location": {"row": 7, "column": 9},
            "end_location": {"row": 7, "column": 23},
            "trace": [
                {
                    "filename": "pkg/utils.py",
                    "cell": None,
                    "row": 41,
                    "column": 5,
                    "message": "save_ckpt() -> dist.barrier()",
                }
            ],
            "fix": None,
            "url": docs_url("RNK102"),
            "confidence": "high",
            "evidence": None,
        }
    ]


def test_sarif_format_has_the_tool_the_rules_and_each_result_with_its_region() -> None:
    rules = all_rules()
    codes = [rule.code for rule in rules]
    plain = finding(severity=Severity.WARNING, path="pkg\\train.py")
    traced = finding(severity=Severity.INFO, trace=(STEP,))

    text = format_sarif([plain, traced], rules)

    assert text.startswith('{\n  "$schema": ')
    assert text.endswith("}\n")
    log = json.loads(text)
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"], driver["informationUri"]) == (
        "ranklint",
        __version__,
        PROJECT_URL,
    )
    assert [rule["id"] for rule in driver["rules"]] == codes
    described = driver["rules"][codes.index("RNK102")]
    rule = rules[codes.index("RNK102")]
    assert described == {
        "id": "RNK102",
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.what.strip()},
        "helpUri": docs_url("RNK102"),
        "help": {"text": rule.why.strip()},
        "defaultConfiguration": {"level": "error", "enabled": rule.default_enabled},
    }
    first, second = run["results"]
    assert first == {
        "ruleId": "RNK102",
        "level": "warning",
        "message": {"text": "`barrier` is reached only when `rank == 0`"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": "pkg/train.py"},  # forward slashes
                    "region": {"startLine": 7, "startColumn": 9, "endLine": 7, "endColumn": 23},
                }
            }
        ],
        "ruleIndex": codes.index("RNK102"),
        "properties": {"confidence": "high"},
    }
    assert second["level"] == "note"
    assert second["codeFlows"] == [
        {
            "threadFlows": [
                {
                    "locations": [
                        {
                            "location": {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "pkg/utils.py"},
                                    "region": {
                                        "startLine": 41,
                                        "startColumn": 5,
                                        "endLine": 41,
                                        "endColumn": 6,
                                    },
                                },
                                "message": {"text": "save_ckpt() -> dist.barrier()"},
                            }
                        }
                    ]
                }
            ]
        }
    ]


def test_sarif_result_of_a_code_outside_the_listed_rules_has_no_rule_index() -> None:
    rules = [rule for rule in all_rules() if rule.code != "RNK102"]

    (result,) = json.loads(format_sarif([finding()], rules))["runs"][0]["results"]

    assert "ruleIndex" not in result
    assert "codeFlows" not in result


def test_github_format_is_one_workflow_command_per_finding_by_severity() -> None:
    findings = [
        finding(severity=Severity.ERROR),
        finding(severity=Severity.WARNING, line=8),
        finding(severity=Severity.INFO, line=9),
    ]

    lines = format_github(findings).splitlines()

    assert lines == [
        "::error file=pkg/train.py,line=7,col=9,endLine=7,endColumn=23,title=RNK102"
        "::RNK102 `barrier` is reached only when `rank == 0`",
        "::warning file=pkg/train.py,line=8,col=9,endLine=7,endColumn=23,title=RNK102"
        "::RNK102 `barrier` is reached only when `rank == 0`",
        "::notice file=pkg/train.py,line=9,col=9,endLine=7,endColumn=23,title=RNK102"
        "::RNK102 `barrier` is reached only when `rank == 0`",
    ]


def test_github_format_escapes_what_workflow_commands_reserve() -> None:
    odd = finding(path="a:b,c%d.py", message="100% of\r\nranks: 0, 1")

    text = format_github([odd])

    assert text == (
        "::error file=a%3Ab%2Cc%25d.py,line=7,col=9,endLine=7,endColumn=23,title=RNK102"
        "::RNK102 100%25 of%0D%0Aranks: 0, 1\n"
    )
