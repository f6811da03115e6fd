"""The rule codes known to this ranklint: what configuration is validated against.

A leaf module: rules register their code here when their module is imported
(:mod:`ranklint.rules.base`), and :mod:`ranklint.config` checks selected codes
and prefixes against it without importing any rule. Importing the ``ranklint``
package imports every rule, so the registry is complete before any
configuration is built.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RegisteredCode:
    code: str
    name: str
    default_enabled: bool


_CODES: dict[str, RegisteredCode] = {}


def register_code(code: str, name: str, *, default_enabled: bool) -> None:
    # Runs while rule modules are imported, before a mutant can be active.
    _CODES[code] = RegisteredCode(code, name, default_enabled)  # pragma: no mutate


def registered_codes() -> list[RegisteredCode]:
    """Every registered code, sorted."""
    return [_CODES[code] for code in sorted(_CODES)]
