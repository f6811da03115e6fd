"""Turning a file's bytes into a syntax tree: decoding (PEP 263) and parsing."""

from __future__ import annotations

import ast
import contextlib
import io
import itertools
import re
import sys
import tokenize
import warnings
from collections.abc import Callable, Iterator

import libcst as cst

from ranklint._process import owned
from ranklint.decoding import SourceError as SourceError
from ranklint.decoding import decode_source
from ranklint.notebook import NotebookError, is_notebook, read_notebook


def file_name(path: str) -> str:
    """The last part of ``path`` as the linter was given it, with either separator."""
    return path.replace("\\", "/").rpartition("/")[2]


def python_text(source: str | bytes, path: str) -> str:
    """The Python of ``path``: decoded as the interpreter would, or, for a Jupyter
    notebook, its code cells joined (:mod:`ranklint.notebook`). Raises
    :class:`SourceError` for bytes that are neither."""
    if not isinstance(source, bytes):
        return source
    if is_notebook(path):
        try:
            return read_notebook(source).text
        except NotebookError as error:
            raise SourceError(str(error), 1, 1) from None
    return decode_source(source)


def editable_text(path: str, raw: bytes) -> tuple[str, Callable[[str], bytes]]:
    """The text a fix or ``--add-noqa`` edits in a file's bytes, and how to turn the
    edited text back into the file's bytes: the encoding (and BOM) kept, or, for a
    notebook, its JSON with the edited code cells (:meth:`Notebook.write`). Raises
    ``SyntaxError``, ``UnicodeDecodeError``, ``LookupError`` or ``ValueError``
    (a bad notebook) when the bytes cannot be read."""
    if is_notebook(path):
        notebook = read_notebook(raw)
        return notebook.text, notebook.write
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    return raw.decode(encoding), lambda text: text.encode(encoding)


# CPython's own nesting limits: code past them cannot run, and libcst's parser
# is slow (super-linear) or crashes on such input, so it never gets to see it.
_NESTING_LIMIT_MESSAGES = (
    "too many nested parentheses",
    "too many levels of indentation",
    "too many statically nested blocks",
    "too complex",
)
_LIBCST_POSITION = re.compile(r"^(?:parser|tokenizer) error: (?:error at (\d+):(\d+): )?")


def parse_source(text: str) -> cst.Module:
    """Parse ``text`` with libcst; CPython's own parser checks it only where needed.

    CPython's parser (``ast.parse``, or ``compile`` on Python 3.10) builds a
    tree or a code object that is discarded: nothing is executed. It runs:

    - first, when a cheap scan (:func:`may_pass_nesting_limits`) finds nesting
      or expression chains that may be past CPython's limits: such code cannot
      run, and libcst's parser is slow (super-linear) on it, so it is rejected
      before libcst sees it;
    - after libcst fails, for the message: libcst knows newer grammar than an
      older interpreter (PEP 695, PEP 701), but where both fail, CPython's
      message and exact position are the better ones.

    Raises :class:`SourceError` on failure.
    """
    checked = may_pass_nesting_limits(text)
    cpython_error = _cpython_error(text) if checked else None
    try:
        if owned():
            with _trusted_parse(text):
                return cst.parse_module(text)
        return cst.parse_module(text)
    except (cst.CSTValidationError, cst.ParserSyntaxError) as exc:
        if not checked:
            cpython_error = _cpython_error(text)
        if cpython_error is not None:
            raise _syntax_error(cpython_error) from None
        if isinstance(exc, cst.CSTValidationError):
            # libcst's tokenizer knows newer Unicode than its node validation
            # (found by fuzzing: an identifier made of U+13460).
            raise SourceError(f"syntax error: {exc}", 1, 1) from None
        match = _LIBCST_POSITION.match(exc.message)
        detail = exc.message[match.end() :] if match else exc.message
        if match and match.group(1):
            line, col = int(match.group(1)), int(match.group(2)) + 1
        else:
            line, col = exc.raw_line, exc.raw_column + 1
        raise SourceError(f"syntax error: {detail}", line, col) from None


# libcst validates every node it builds (``CSTNode.__post_init__`` calls
# ``_validate``): a guard for trees built by hand, which its parser's trees pass by
# construction (libcst's own comment there says as much), at about 15% of a parse.
# In ranklint's own processes (nothing else runs there) a parse switches it off
# while it builds the tree, except for names in non-ASCII text: libcst's tokenizer
# knows newer Unicode than the interpreter, and the check of names
# (``str.isidentifier``) is what turns such code into the interpreter's error.
_VALIDATING_POST_INIT = vars(cst.CSTNode).get("__post_init__")


def _no_validation(node: cst.CSTNode) -> None:
    """``CSTNode.__post_init__`` while a trusted parse of ASCII text builds a tree."""


def _names_validated(node: cst.CSTNode) -> None:
    """``CSTNode.__post_init__`` while a trusted parse of other text builds a tree."""
    if type(node) is cst.Name:
        node._validate()


@contextlib.contextmanager
def _trusted_parse(text: str) -> Iterator[None]:
    """Within this block, the nodes libcst builds for ``text`` are checked only as far
    as its parser does not already check them."""
    if _VALIDATING_POST_INIT is None:  # a libcst that validates elsewhere: leave it be
        yield
        return
    skipped = _no_validation if text.isascii() else _names_validated
    cst.CSTNode.__post_init__ = skipped  # type: ignore[method-assign]
    try:
        yield
    finally:
        cst.CSTNode.__post_init__ = _VALIDATING_POST_INIT  # type: ignore[method-assign]


# Signs, cheap to find (``str`` methods and one regex, all in C: a few percent
# of a parse), that code may be past CPython's nesting limits, which stop at
# 200 nested brackets and at about 3,000 levels of any nested expression (a
# chain of `+`, unary minus, attribute reads or calls): brackets nested 100
# deep, a line of over 2,000 characters (a one-line chain that long), or 1,000
# lines broken at an arithmetic or bitwise operator (a chain written over many
# lines; `and`, `or` and comparisons make flat trees in CPython).
_SCAN_DEPTH = 100
_SCAN_LINE = 2000
_SCAN_BREAKS = 1000
_NOT_A_BRACKET = re.compile(r"[^()\[\]{}]+")
_ONE_BRACKET_PAIR = str.maketrans("[]{}", "()()")
_BREAK_AT_OPERATOR = re.compile(r"[-+*/%@&|^]\s*\\?\n|\n\s*[-+/%&|^]")


def may_pass_nesting_limits(text: str) -> bool:
    """``text`` may be nested past CPython's limits (never false when it is).

    Brackets in strings and comments count too: they can only make the answer
    yes, which costs one CPython parse.
    """
    if max(map(len, text.splitlines()), default=0) > _SCAN_LINE:
        return True
    brackets = _NOT_A_BRACKET.sub("", text).translate(_ONE_BRACKET_PAIR)
    for _ in range(_SCAN_DEPTH):
        inner_removed = brackets.replace("()", "")
        if len(inner_removed) == len(brackets):
            break
        brackets = inner_removed
    else:
        return True
    breaks = _BREAK_AT_OPERATOR.finditer(text)
    return sum(1 for _ in itertools.islice(breaks, _SCAN_BREAKS)) == _SCAN_BREAKS


def _cpython_error(text: str) -> SyntaxError | None:
    """CPython's syntax error for ``text``, if any; nesting past its limits raises.

    Code past CPython's nesting limits cannot run: :class:`SourceError`.
    """
    try:
        _cpython_check(text)
    except SyntaxError as exc:
        if any(limit in str(exc.msg) for limit in _NESTING_LIMIT_MESSAGES):
            raise _syntax_error(exc) from None
        return exc
    except (RecursionError, MemoryError):
        raise SourceError(
            "nesting too deep: Python's own parser gives up on this file", 1, 1
        ) from None
    except ValueError as exc:  # NUL bytes, on interpreters that raise ValueError for them
        # 3.11.4 and later raise SyntaxError instead: unreachable (untestable) there.
        raise SourceError(f"cannot parse: {exc}", 1, 1) from None  # pragma: no mutate
    return None


def _cpython_check(text: str) -> None:
    """Raise what CPython's parser raises for ``text``; never runs the code."""
    with warnings.catch_warnings():
        # SyntaxWarnings about the linted code (invalid escapes, ...) are not ours to print.
        warnings.simplefilter("ignore")
        # 3.10's parser has no depth guard (it accepts a 100000-term `+` chain);
        # its compiler has one. The code object is discarded. This branch runs on
        # 3.10 only: its mutants cannot be told apart on a newer interpreter.
        if sys.version_info < (3, 11):  # pragma: no mutate
            compile(text, "<ranklint>", "exec", dont_inherit=True)  # pragma: no mutate
        else:
            ast.parse(text)


def _syntax_error(exc: SyntaxError) -> SourceError:
    return SourceError(f"syntax error: {exc.msg}", exc.lineno or 1, max(exc.offset or 1, 1))
