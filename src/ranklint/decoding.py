"""Source bytes decoded as the interpreter would, without libcst.

Kept apart from :mod:`ranklint.source` so that reporting from the cache (code
frames, the summary) decodes files without importing the parser.
"""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceError(Exception):
    """The bytes of a file could not be turned into a syntax tree (reported as RNK001)."""

    message: str
    line: int
    col: int


def decode_source(data: bytes) -> str:
    """Decode ``data`` the way the Python interpreter would.

    Honours a UTF-8 BOM and a ``# -*- coding: ... -*-`` cookie on the first two
    lines; the default is UTF-8. Raises :class:`SourceError` with a 1-based
    position when the cookie is bad or the bytes are not valid in the encoding.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        # detect_encoding also refuses first lines that are not valid UTF-8;
        # then the bad byte, with its position, is the better message.
        _decode(data, "utf-8")
        raise SourceError(f"invalid source encoding declaration: {exc}", 1, 1) from None
    # "utf-8-sig" strips the BOM; other codecs leave a decoded BOM in place.
    return _decode(data, encoding).removeprefix("\ufeff")


def _decode(data: bytes, encoding: str) -> str:
    try:
        return codecs.decode(data, encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        bad = data[exc.start : exc.start + 1]
        raise SourceError(
            f"cannot decode byte {bad!r} as {exc.encoding}: {exc.reason}",
            line,
            exc.start - line_start + 1,
        ) from None
