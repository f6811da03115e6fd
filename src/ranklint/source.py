"""Reading and decoding source files (PEP 263: BOM and coding cookie)."""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass


@dataclass(frozen=True)
class DecodeError(Exception):
    """The bytes of a file could not be turned into text."""

    message: str
    line: int
    col: int


def decode_source(data: bytes) -> str:
    """Decode ``data`` the way the Python interpreter would.

    Honours a UTF-8 BOM and a ``# -*- coding: ... -*-`` cookie on the first two
    lines; the default is UTF-8. Raises :class:`DecodeError` with a 1-based
    position when the cookie is bad or the bytes are not valid in the encoding.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise DecodeError(f"invalid source encoding declaration: {exc}", 1, 1) from None
    try:
        text = codecs.decode(data, encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        col = exc.start - line_start + 1
        bad = data[exc.start : exc.start + 1]
        raise DecodeError(
            f"cannot decode byte {bad!r} as {exc.encoding}: {exc.reason}",
            line,
            col,
        ) from None
    # "utf-8-sig" strips the BOM; other codecs leave a decoded BOM in place.
    return text.removeprefix("\ufeff")
