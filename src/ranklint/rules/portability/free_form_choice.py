"""RNK506 free-form-choice."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.literals import string_value
from ranklint.analysis.walk.names import dotted_name
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule


class FreeFormChoice(Rule):
    code = "RNK506"
    name = "free-form-choice"
    severity = Severity.INFO
    default_enabled = False
    summary = "A finite set of choices is typed as a free-form string"
    what = """\
Reports an argparse option with a string default and no `choices=` whose
value the same file checks against a literal set (`args.mode in ("a", "b")`),
and a dataclass field typed `str` whose value the class checks against a
literal set (`self.mode not in {...}`). Off by default
(`extend-select = ["RNK506"]`): a style rule.
"""
    why = """\
A typo in a launch script (`--sharding ful`) is then a valid string: the job
starts, allocates 512 GPUs and fails (or silently takes a fallback branch)
hours later, where the check runs. `choices=`, `Literal[...]` or an `Enum`
rejects it at parse time, and documents the options in `--help`.
"""
    limits = """\
The option and the check must be in the same file (the class, for dataclass
fields); checks written as chains of `==` are not recognised.
"""
    valid = (
        """
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--sharding", default="full", choices=("full", "hybrid"))
        args = parser.parse_args()
        if args.sharding not in ("full", "hybrid"):
            raise SystemExit(2)
        """,
    )
    invalid = (
        """
        import argparse
        from dataclasses import dataclass

        parser = argparse.ArgumentParser()
        parser.add_argument("--sharding", default="full")  # expect: RNK506
        args = parser.parse_args()
        if args.sharding not in ("full", "hybrid"):
            raise SystemExit(2)


        @dataclass
        class Config:
            precision: str = "bf16"  # expect: RNK506

            def __post_init__(self):
                if self.precision not in {"bf16", "fp32"}:
                    raise ValueError(self.precision)
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._options: dict[str, tuple[cst.CSTNode, tuple[cst.CSTNode | None, ...]]] = {}
        self._checked: set[str] = set()
        # class name -> {field: (node, where)}, fields checked via self.<field>
        self._fields: list[dict[str, tuple[cst.CSTNode, tuple[cst.CSTNode | None, ...]]]] = []
        self._field_checks: list[set[str]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            return
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword}
        if "choices" in keywords or "default" not in keywords:
            return
        if string_value(keywords["default"]) is None:
            return
        dest = string_value(keywords["dest"]) if "dest" in keywords else None
        if dest is None:
            flags = [string_value(arg.value) for arg in node.args if arg.keyword is None]
            longs = [f for f in flags if f and f.startswith("--")]
            names = longs or [f for f in flags if f]
            if not names:
                return
            dest = names[0].lstrip("-").replace("-", "_")
        self._options.setdefault(dest, (node, self.here()))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        dataclass = any(
            (
                dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                or ""
            ).rsplit(".", 1)[-1]
            == "dataclass"
            for d in node.decorators
        )
        self._fields.append({} if dataclass else {"<not a dataclass>": (node, ())})
        self._field_checks.append(set())

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        fields = self._fields.pop()
        checks = self._field_checks.pop()
        if "<not a dataclass>" in fields:
            return
        for name in sorted(checks & fields.keys()):
            target, where = fields[name]
            self.report(target, _choice_message(f"field `{name}`"), where=where)  # type: ignore[arg-type]

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if not self._fields or self.ctx.function is not None:
            return
        if (
            isinstance(node.target, cst.Name)
            and dotted_name(node.annotation.annotation) == "str"
            and node.value is not None
            and string_value(node.value) is not None
        ):
            self._fields[-1].setdefault(node.target.value, (node, self.here()))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        if not isinstance(target.operator, (cst.In, cst.NotIn)):
            return
        choices = target.comparator
        if not isinstance(choices, (cst.Tuple, cst.List, cst.Set)) or not choices.elements:
            return
        if not all(string_value(e.value) is not None for e in choices.elements):
            return
        subject = node.left
        if isinstance(subject, cst.Attribute) and isinstance(subject.value, cst.Name):
            if subject.value.value == "self" and self._field_checks:
                self._field_checks[-1].add(subject.attr.value)
            else:
                self._checked.add(subject.attr.value)

    def leave_Module(self, node: cst.Module) -> None:
        for dest in sorted(self._checked & self._options.keys()):
            call, where = self._options[dest]
            self.report(call, _choice_message(f"option `{dest}`"), where=where)  # type: ignore[arg-type]


def _choice_message(what: str) -> str:
    return (
        f"{what} takes any string but is checked against a fixed set later: a typo passes "
        f"parsing and fails (or picks a fallback) only where it is checked; declare the "
        f"choices (`choices=`, `Literal[...]`, an `Enum`)"
    )
