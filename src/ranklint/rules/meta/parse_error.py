"""RNK001 parse-error."""

from __future__ import annotations

from ranklint.findings import Severity
from ranklint.rules.base import Rule


class ParseError(Rule):
    """Reported by the engine itself, never by a visitor: it has no visit methods."""

    code = "RNK001"
    name = "parse-error"
    severity = Severity.ERROR
    summary = "The file could not be read, decoded or parsed, so no other rule checked it"
    what = """\
Reports a file that ranklint cannot read (permissions, a dangling symlink),
decode (bytes that are invalid in the declared or default UTF-8 encoding, a bad
`# coding:` cookie) or parse (a syntax error). The message carries the reader's,
decoder's or parser's own message and position.
"""
    why = """\
A file that cannot be parsed is a file whose distributed bugs ranklint cannot
see. Reporting it, instead of skipping it silently, keeps a CI lint step honest:
the run continues with the other files and exits non-zero.
"""
    limits = """\
Suppression comments cannot silence RNK001 (the comments of a file that does
not parse cannot be read reliably); use `ignore` or `per-file-ignores` instead.
"""
    valid = (
        """
        import torch.distributed as dist


        def main() -> None:
            dist.init_process_group("gloo")
        """,
    )
    invalid = (
        """
        def main() -> None:
            dist.init_process_group("gloo"  # expect: RNK001
        """,
        """
        def main():
            print "python 2 syntax"  # expect: RNK001
        """,
    )
