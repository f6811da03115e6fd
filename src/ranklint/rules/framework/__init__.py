"""Framework rules (RNK0xx): problems with the file itself."""

from __future__ import annotations

from ranklint.rules.framework.parse_error import ParseError

__all__ = ["ParseError"]
