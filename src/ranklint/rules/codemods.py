"""Small libcst transformations that rules' fixes are built from.

Each returns a changed copy of a node; what it does not touch (comments,
line breaks, the spacing of other arguments) stays as it was.
"""

from __future__ import annotations

import libcst as cst

_NO_SPACE = cst.SimpleWhitespace("")
_SPACE = cst.SimpleWhitespace(" ")


def keyword_argument(keyword: str, value: cst.BaseExpression) -> cst.Arg:
    """``keyword=value``, spaced as PEP 8 spaces keyword arguments."""
    return cst.Arg(
        value=value,
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE),
    )


def with_argument(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """``call`` with ``arg`` added after its last argument.

    A trailing comma stays trailing (after the new argument), and in a call
    laid out one argument per line the new one gets a line of its own.
    """
    args = list(call.args)
    if not args:
        return call.with_changes(args=[arg])
    last = args[-1]
    if isinstance(last.comma, cst.Comma):
        # The separator the call already uses between arguments (or after its
        # opening parenthesis, for one argument per line).
        if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
            between = args[-2].comma
        elif isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
            between = cst.Comma(whitespace_after=call.whitespace_before_args)
        else:
            between = cst.Comma(whitespace_after=_SPACE)
        trailing: cst.Comma | cst.MaybeSentinel = last.comma
    else:
        between = cst.Comma(whitespace_after=_SPACE)
        trailing = cst.MaybeSentinel.DEFAULT
    args[-1] = last.with_changes(comma=between, whitespace_after_arg=_NO_SPACE)
    args.append(arg.with_changes(comma=trailing, whitespace_after_arg=last.whitespace_after_arg))
    return call.with_changes(args=args)


def as_keyword(call: cst.Call, arg: cst.Arg, keyword: str) -> cst.Call | None:
    """``call`` with its argument ``arg`` passed as ``keyword=``: renamed if it is a
    keyword argument, turned into one if it is the last positional argument;
    ``None`` when it cannot be (a positional argument followed by others)."""
    args = list(call.args)
    index = next((i for i, candidate in enumerate(args) if candidate is arg), None)
    if index is None or arg.star:
        return None
    if arg.keyword is not None:
        args[index] = arg.with_changes(keyword=cst.Name(keyword))
        return call.with_changes(args=args)
    if any(later.keyword is None for later in args[index + 1 :]):
        return None
    args[index] = arg.with_changes(
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE),
    )
    return call.with_changes(args=args)


def argument_holding(call: cst.Call, value: cst.BaseExpression) -> cst.Arg | None:
    """The argument of ``call`` whose value is ``value`` (the node itself)."""
    return next((arg for arg in call.args if arg.value is value), None)
