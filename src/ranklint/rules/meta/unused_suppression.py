"""RNK002 unused-suppression."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ranklint.findings import Applicability, Edit, Finding, Fix, Severity
from ranklint.positions import NEWLINE
from ranklint.rules.base import Rule, registered_rules
from ranklint.suppressions import IGNORE, NOQA, SPLIT, Suppressions

UNUSED_SUPPRESSION = "RNK002"
_COMMENT = re.compile(r"#\s*(?:noqa|ranklint:\s*ignore)", re.IGNORECASE)


class UnusedSuppression(Rule):
    """Reported by the engine after a file's walk, from the suppressions nothing used."""

    code = UNUSED_SUPPRESSION
    name = "unused-suppression"
    severity = Severity.WARNING
    default_enabled = False
    summary = "A `# noqa: RNK...` or `# ranklint: ignore[...]` code that suppresses nothing"
    what = """\
Reports a code in a line's `# noqa: ...` or `# ranklint: ignore[...]` comment
when no finding of that code was suppressed by it: the bug was fixed, the
statement moved, or the code was never right. Only codes that were checked
for the file in this run are judged: a code that is not selected (or is
turned off by `per-file-ignores`), a code of another tool in a shared
`# noqa: E501, RNK301`, and a bare `# noqa` are left alone. A prefix
(`# noqa: RNK1`, which suppresses every RNK1xx code, as under flake8) is
judged when every rule code it covers was checked, and is unused when it
suppressed no finding of any of them.

Codes of rules decided (wholly or partly) in the project phase, across files
(RNK102's call chains, the hot-path rules, RNK105, RNK108, RNK110 and others)
are judged when the run saw the whole project: `ranklint check` over a
project (the default, with its project index), or `lint_source` of one file
that is its own project. A suppression such as `save()  # noqa: RNK102` that
hides a call chain into another file counts as used.
"""
    why = """\
A stale suppression is a hidden hole: when the line changes and a real
divergence appears on it (a collective moved under a rank test), the old
comment silences it and the hang reaches the cluster. Removing suppressions
that no longer serve keeps every remaining one a decision someone made.
"""
    limits = """\
Suppressions of project-phase codes are not judged where the run cannot see
the whole project: with `--no-project-index`, under flake8 (one file at a
time), when a cold run over some files of a project did not reach all of its
other files, and for standard input. Opt-in while its precision on the review
corpus is not measured.
"""
    fix_applicability = frozenset({Applicability.SAFE})
    fix_safety = """\
The fix removes the stale codes from the comment, and the whole
`# noqa: ...` or `# ranklint: ignore[...]` when no code is left (with the
explanation that follows it in the same comment). Other codes and other
comments on the line stay. It is safe: it changes no code, and a finding the
comment was meant to hide would have been reported without it.
"""
    fixes = (
        (
            """
            import torch.distributed as dist  # noqa: RNK301
            from torch.distributed import *  # noqa: E501, RNK301, RNK103

            LEADER = get_rank() == 0
            """,
            """
            import torch.distributed as dist
            from torch.distributed import *  # noqa: E501, RNK301

            LEADER = get_rank() == 0
            """,
        ),
    )
    # The examples suppress RNK301 and RNK103, which must be selected for RNK002 to judge them.
    example_select = ("RNK301", "RNK103")
    valid = (
        """
        from torch.distributed import *  # noqa: RNK301 (audited: only get_rank is used)


        def is_leader():
            return get_rank() == 0
        """,
    )
    invalid = (
        """
        import torch.distributed as dist  # noqa: RNK301  # expect: RNK002
        """,
    )


def unused_suppressions(
    rule: type[Rule],
    path: str,
    text: str,
    suppressions: Suppressions,
    used: set[tuple[int, str]],
    checked: Iterable[str],
    *,
    also_checked: Iterable[str] = (),
) -> list[tuple[str, Finding]]:
    """One finding per suppressed code of ``checked`` that suppressed nothing on its
    line, with that code.

    A prefix (``# noqa: RNK1``) is judged when every rule code it covers is among
    ``checked`` and ``also_checked`` (codes judged by another call) and one is
    among ``checked``: a prefix spanning per-file and project-phase codes waits
    for the project phase."""
    judged = set(checked)
    known = judged | set(also_checked)
    codes_of = {rule.code for rule in registered_rules()}

    def is_judged(entry: str) -> bool:
        covered = {code for code in codes_of if code.startswith(entry)}
        return bool(covered & judged) and covered <= known

    # Lines as the tokenizer counts them (not str.splitlines, which also breaks
    # at form feeds and other separators inside a line).
    lines = NEWLINE.split(text)
    found = []
    for line, codes in sorted(suppressions.by_line.items()):
        if codes is None or line > len(lines):
            continue
        stale = sorted(code for code in codes if is_judged(code) and (line, code) not in used)
        if not stale:
            continue
        physical = lines[line - 1]
        match = _COMMENT.search(physical)
        col = match.start() + 1 if match else 1
        fix = _removal(physical, line, set(stale))
        for code in stale:
            message = (
                f"`{code}` is suppressed here but nothing on this line reports it; remove it "
                "from the comment (a stale suppression would hide the next real finding here)"
            )
            found.append(
                (
                    code,
                    Finding(
                        rule.code,
                        rule.name,
                        rule.severity,
                        message,
                        path,
                        line,
                        col,
                        line,
                        len(physical) + 1,
                        fix=fix,
                    ),
                )
            )
    return found


def _removal(physical: str, line: int, stale: set[str]) -> Fix | None:
    """The fix that takes the ``stale`` codes out of the suppression comment of ``physical``
    (line ``line``): the codes alone, or the whole suppression when none is left."""
    for pattern in (NOQA, IGNORE):
        # The last one: comments end lines, and a string earlier on it may look alike.
        matches = [m for m in pattern.finditer(physical) if m.group("codes")]
        for match in reversed(matches):
            codes = [code for code in SPLIT.split(match.group("codes").strip()) if code]
            kept = [code for code in codes if code.upper() not in stale]
            if len(kept) == len(codes):
                continue
            if kept:
                start, end, content = match.start("codes"), match.end("codes"), ", ".join(kept)
            else:
                start, end, content = *_whole(physical, match), ""
            removed = ", ".join(sorted(stale))
            return Fix(
                Applicability.SAFE,
                f"Remove the unused suppression of {removed}",
                (Edit(line, start + 1, line, end + 1, content),),
            )
    return None


def _whole(physical: str, match: re.Match[str]) -> tuple[int, int]:
    """The span to delete for the suppression ``match``: with the text after it up to
    the next comment (its explanation), and the spaces before it at the line's end."""
    rest = physical[match.end() :]
    following = rest.find("#")
    if following >= 0:
        return match.start(), match.end() + following
    start = len(physical[: match.start()].rstrip())
    return start, len(physical)
