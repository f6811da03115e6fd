"""Output formats. Formatters only format: they never analyse."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING
from xml.etree import ElementTree

from ranklint import __version__
from ranklint.findings import Evidence, Finding, Fix, Severity, TraceStep
from ranklint.links import PROJECT_URL, docs_url
from ranklint.places import location, place

if TYPE_CHECKING:
    from ranklint.rules import Rule

FORMATS = ("text", "json", "json-lines", "sarif", "github", "gitlab", "junit")

_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# GitLab Code Quality severities: info, minor, major, critical, blocker.
_GITLAB_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}
_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


# ANSI colours of the text format (--color): the path bold, the code by severity.
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"
_CODE_COLOUR = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.INFO: "\x1b[36m"}


def format_text(findings: Sequence[Finding], *, color: bool = False, evidence: bool = False) -> str:
    """One line per finding, its trace below it; with ``evidence``, its confidence and
    the links of its evidence below that."""
    lines = []
    for f in findings:
        if color:
            code = f"{_CODE_COLOUR[f.severity]}{f.code}{_RESET}"
            path, _, position = location(f.path, f.line, f.col).partition(":")
            lines.append(f"{_BOLD}{path}{_RESET}:{position}: {code} {f.message}")
            lines.extend(
                f"    {_DIM}{location(s.path, s.line, s.col)}:{_RESET} {s.message}" for s in f.trace
            )
        else:
            lines.append(f"{location(f.path, f.line, f.col)}: {f.code} {f.message}")
            lines.extend(f"    {location(s.path, s.line, s.col)}: {s.message}" for s in f.trace)
        if evidence and f.evidence is not None:
            lines.append(f"    confidence: {f.confidence.value}")
            lines.extend(
                f"    {aspect}: {link.kind} ({link.confidence.value}): {link.detail}"
                for aspect, link in f.evidence.links()
            )
    return "".join(line + "\n" for line in lines)


def format_statistics(findings: Sequence[Finding]) -> str:
    counts = Counter((f.code, f.name) for f in findings)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    width = max((len(str(count)) for _, count in rows), default=1)  # pragma: no mutate  (unused)
    return "".join(f"{count:>{width}}  {code}  {name}\n" for (code, name), count in rows)


def _json_finding(f: Finding) -> dict[str, object]:
    where = place(f.path, f.line)
    shift = f.line - where.line  # a notebook's rows count from its cell's first line
    return {
        "code": f.code,
        "name": f.name,
        "message": f.message,
        "severity": f.severity.value,
        "filename": f.path,
        "cell": where.cell,
        "location": {"row": where.line, "column": f.col},
        "end_location": {"row": f.end_line - shift, "column": f.end_col},
        "trace": [_json_step(s) for s in f.trace],
        "fix": _json_fix(f.fix, shift),
        "url": docs_url(f.code),
        "confidence": f.confidence.value,
        "evidence": _json_evidence(f.evidence),
    }


def _json_step(step: TraceStep) -> dict[str, object]:
    where = place(step.path, step.line)
    return {
        "filename": step.path,
        "cell": where.cell,
        "row": where.line,
        "column": step.col,
        "message": step.message,
    }


def _json_evidence(evidence: Evidence | None) -> dict[str, object] | None:
    """Each link present as ``{"kind", "detail", "confidence"}`` under its aspect."""
    if evidence is None:
        return None
    return {
        aspect: {"kind": link.kind, "detail": link.detail, "confidence": link.confidence.value}
        for aspect, link in evidence.links()
    }


def _json_fix(fix: Fix | None, shift: int = 0) -> dict[str, object] | None:
    """A fix as ruff's JSON writes one: 1-based locations, the end exclusive (rows
    less ``shift``: in a notebook, counted from the cell's first line)."""
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [
            {
                "content": edit.content,
                "location": {"row": edit.line - shift, "column": edit.col},
                "end_location": {"row": edit.end_line - shift, "column": edit.end_col},
            }
            for edit in fix.edits
        ],
    }


def format_json(findings: Sequence[Finding]) -> str:
    return json.dumps([_json_finding(f) for f in findings], indent=2) + "\n"


def format_json_lines(findings: Sequence[Finding]) -> str:
    """One JSON object per line, the records of ``--format json``."""
    return "".join(json.dumps(_json_finding(f)) + "\n" for f in findings)


def format_gitlab(findings: Sequence[Finding]) -> str:
    """GitLab Code Quality JSON (the ``codequality`` report of a CI job).

    The fingerprint hashes the code, the path and the message, not the line,
    so that an edit above a finding does not make it new; findings with the
    same three are told apart by their order in the file.
    """
    seen: Counter[str] = Counter()
    records = []
    for f in findings:
        key = f"{f.code}\0{f.path}\0{f.message}"
        seen[key] += 1
        digest = hashlib.sha256(f"{key}\0{seen[key]}".encode()).hexdigest()
        records.append(
            {
                "description": f"{f.code} {f.message}",
                "check_name": f.code,
                "fingerprint": digest,
                "severity": _GITLAB_SEVERITY[f.severity],
                "location": {"path": f.path, "lines": {"begin": f.line, "end": f.end_line}},
            }
        )
    return json.dumps(records, indent=2) + "\n"


def format_junit(findings: Sequence[Finding], files_checked: int) -> str:
    """JUnit XML: one test suite per file with findings, one failing test case per finding."""
    root = ElementTree.Element(
        "testsuites", name="ranklint", tests=str(len(findings)), failures=str(len(findings))
    )
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    for path, found in by_path.items():
        suite = ElementTree.SubElement(
            root, "testsuite", name=path, tests=str(len(found)), failures=str(len(found))
        )
        for f in found:
            case = ElementTree.SubElement(
                suite, "testcase", name=f"{f.code} {location(path, f.line, f.col)}", classname=path
            )
            failure = ElementTree.SubElement(case, "failure", message=f.message, type=f.code)
            failure.text = "\n".join(
                [f"{location(path, f.line, f.col)}: {f.code} {f.message}"]
                + [f"    {location(s.path, s.line, s.col)}: {s.message}" for s in f.trace]
            )
    root.set("files", str(files_checked))
    ElementTree.indent(root)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + ElementTree.tostring(root, encoding="unicode")
        + "\n"
    )


def _sarif_location(path: str, line: int, col: int, end_line: int, end_col: int) -> dict:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": path.replace("\\", "/")},
            "region": {
                "startLine": line,
                "startColumn": col,
                "endLine": end_line,
                "endColumn": end_col,
            },
        }
    }


def _sarif_fix(path: str, fix: Fix) -> dict[str, object]:
    """A SARIF ``fix``: one artifact change replacing each edit's region."""
    return {
        "description": {"text": f"{fix.message} ({fix.applicability.value} fix)"},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": path.replace("\\", "/")},
                "replacements": [
                    {
                        "deletedRegion": {
                            "startLine": edit.line,
                            "startColumn": edit.col,
                            "endLine": edit.end_line,
                            "endColumn": edit.end_col,
                        },
                        "insertedContent": {"text": edit.content},
                    }
                    for edit in fix.edits
                ],
            }
        ],
    }


def format_sarif(findings: Sequence[Finding], rules: Sequence[type[Rule]]) -> str:
    index = {rule.code: i for i, rule in enumerate(rules)}
    results = []
    for f in findings:
        result: dict[str, object] = {
            "ruleId": f.code,
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [_sarif_location(f.path, f.line, f.col, f.end_line, f.end_col)],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        if f.trace:
            steps = [
                {
                    "location": {
                        **_sarif_location(s.path, s.line, s.col, s.line, s.col + 1),
                        "message": {"text": s.message},
                    }
                }
                for s in f.trace
            ]
            result["codeFlows"] = [{"threadFlows": [{"locations": steps}]}]
        if f.fix is not None:
            result["fixes"] = [_sarif_fix(f.path, f.fix)]
        properties: dict[str, object] = {"confidence": f.confidence.value}
        where = place(f.path, f.line)
        if where.cell is not None:  # the region counts the lines of the joined code cells
            properties.update(cell=where.cell, cellLine=where.line)
        if f.evidence is not None:
            properties["evidence"] = _json_evidence(f.evidence)
        result["properties"] = properties
        results.append(result)
    driver_rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.what.strip()},
            "helpUri": docs_url(rule.code),
            "help": {"text": rule.why.strip()},
            "defaultConfiguration": {
                "level": _SARIF_LEVEL[rule.severity],
                "enabled": rule.default_enabled,
            },
        }
        for rule in rules
    ]
    log = {
        "$schema": _SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ranklint",
                        "version": __version__,
                        "informationUri": PROJECT_URL,
                        "rules": driver_rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(findings: Sequence[Finding]) -> str:
    lines = []
    for f in findings:
        props = ",".join(
            f"{key}={_escape_property(str(value))}"
            for key, value in (
                ("file", f.path),
                ("line", f.line),
                ("col", f.col),
                ("endLine", f.end_line),
                ("endColumn", f.end_col),
                ("title", f.code),
            )
        )
        lines.append(
            f"::{_GITHUB_LEVEL[f.severity]} {props}::{_escape_data(f'{f.code} {f.message}')}"
        )
    return "".join(line + "\n" for line in lines)
