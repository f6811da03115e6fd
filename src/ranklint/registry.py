"""The rule codes known to this ranklint: what configuration is validated against.

A leaf module: :mod:`ranklint.config` checks selected codes and prefixes
against it without importing any rule (or libcst), so that a run served from
the cache never loads them. The table itself, :mod:`ranklint.codes`, is
generated from the rules' metadata by ``python -m ranklint.docs docs/``, and
``tests/test_docs.py`` checks that it is current.
"""

from __future__ import annotations

from dataclasses import dataclass

from ranklint.codes import CODES


@dataclass(frozen=True)
class RegisteredCode:
    code: str
    name: str
    default_enabled: bool


_CODES = {code: RegisteredCode(code, name, default) for code, name, default in CODES}


def registered_codes() -> list[RegisteredCode]:
    """Every registered code, sorted."""
    return [_CODES[code] for code in sorted(_CODES)]
