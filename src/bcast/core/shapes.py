"""Shapes: parsing the command-line syntax and normalizing what Python callers pass.

A shape is a ``tuple`` of dims (see :mod:`bcast.core.dims`), in numpy order.

The text syntax (DESIGN.md), the same in every command::

    2,3,4     [2,3,4]    (2,3,4)    2x3x4     spaces are allowed
    5         5,         [5]        a rank-1 shape
    []        ()         scalar     rank 0
    N,3,?     [1,?,3..5] 2x3xN      symbols, unknown (?) and intervals (lo..hi, lo..)

A dim is an integer, a symbol (a name: ``N``, ``batch``, ``max_len``), ``?`` or an
interval (:mod:`bcast.core.dims`).  In a bare shape (no comma, no bracket) an ``x`` or ``X``
separates dims only right after a number, a ``?`` or an interval; every other ``x``
belongs to a name, and a name runs to the end of the text.  So ``2x3x4``, ``?x3`` and
``2x3xN`` are shapes of rank 3, 2 and 3, while ``max_len`` and ``Nx3`` are one symbol
each (write ``N,3``).  ``-1`` is refused: write ``?`` for an unknown dim.

Anything else is an :class:`~bcast.core.errors.InputError` with a one-line message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import cast

from ._format import brief, format_shape
from .dims import MAX_RANK, Dim, Interval, Sym, as_dim, parse_dim
from .errors import InputError

__all__ = ["Shape", "StaticShape", "parse_shape", "as_shape", "format_shape", "static", "SHAPE_SYNTAX"]

Shape = tuple[Dim, ...]  # of dims (:mod:`bcast.core.dims`), in numpy order
StaticShape = tuple[int, ...]  # a shape of ints only: an array's


def static(shape: Shape) -> StaticShape:
    """``shape`` as the executor reads it: a plan of arrays' shapes holds only ints.  This narrows the
    type for a type checker and checks nothing at run time (the executor's plans come from arrays)."""
    return cast(StaticShape, shape)

SHAPE_SYNTAX = "write a shape as 2,3,4 or [2,3,4] or 2x3x4 (a dim: 3, N, ?, 2..4 or 2..), and [] or scalar for rank 0"


def parse_shape(text: str, *, minus_one: bool = False) -> Shape:
    """Parse one shape written in the command-line syntax; ``minus_one``: a ``-1`` dim is kept as -1 (the
    sizes of torch's and Paddle's ``expand``, where -1 keeps the tensor's dim), not refused.

    >>> parse_shape("2,3,4"), parse_shape("[2, 3]"), parse_shape("2x3x4"), parse_shape("[]")
    ((2, 3, 4), (2, 3), (2, 3, 4), ())
    >>> parse_shape("[1,?,3..5]"), parse_shape("N,3")
    ((1, Interval(0, None), Interval(3, 5)), (Sym('N'), 3))
    >>> parse_shape("2,-1")
    Traceback (most recent call last):
    ...
    bcast.core.errors.InputError: invalid shape '2,-1': dim 1: dim -1 is negative (write ? for an unknown dim)
    >>> parse_shape("2,-1", minus_one=True)
    (2, -1)
    """
    if not isinstance(text, str):
        raise InputError(f"invalid shape {brief(text)}: expected a string; {SHAPE_SYNTAX}")
    raw = text
    body = text.strip()
    bracketed = False
    if body and (body[0] in "[(" or body[-1] in "])"):
        if (body[0], body[-1]) not in {("[", "]"), ("(", ")")}:
            raise InputError(f"invalid shape {brief(raw)}: unbalanced brackets; {SHAPE_SYNTAX}")
        body, bracketed = body[1:-1].strip(), True
    if body == "":
        if bracketed:
            return ()
        raise InputError(f"invalid shape {brief(raw)}: empty; {SHAPE_SYNTAX}")
    if body.lower() == "scalar" and not bracketed:
        return ()
    has_comma = "," in body
    parts = body.split(",") if has_comma or bracketed else _x_parts(body)
    if has_comma and len(parts) > 1 and parts[-1].strip() == "":
        parts = parts[:-1]  # "5," is the rank-1 tuple (5,)
    if len(parts) > MAX_RANK:
        raise InputError(f"invalid shape {brief(raw)}: rank {len(parts)} is more than {MAX_RANK}")
    dims: list[Dim] = []
    for i, part in enumerate(parts):
        tok = part.strip()
        if not tok:
            raise InputError(f"invalid shape {brief(raw)}: dim {i} is empty; {SHAPE_SYNTAX}")
        if tok == "...":
            raise InputError(f"invalid shape {brief(raw)}: a dynamic rank (...) is not supported; give every dim")
        if minus_one and tok == "-1":
            dims.append(-1)
            continue
        try:
            dims.append(parse_dim(tok))
        except InputError as e:
            raise InputError(f"invalid shape {brief(raw)}: dim {i}: {e}") from None
    return tuple(dims)


#: A dim that an ``x`` may follow in the ``2x3`` form: a number, ``?`` or an interval, then the ``x``.
_X_DIM = re.compile(r"\s*([0-9]+(?:\.\.[0-9]*)?|\?)\s*[xX]")


def _x_parts(body: str) -> list:
    """The dims of a bare shape: an ``x`` after a number, ``?`` or interval separates, any other
    ``x`` is part of a name (which runs to the end).

    >>> _x_parts("2x3x4"), _x_parts("max_len"), _x_parts("2xmax_len"), _x_parts("Nx3"), _x_parts("2..4x?x5")
    (['2', '3', '4'], ['max_len'], ['2', 'max_len'], ['Nx3'], ['2..4', '?', '5'])
    """
    parts, pos = [], 0
    while m := _X_DIM.match(body, pos):
        parts.append(m.group(1))
        pos = m.end()
    parts.append(body[pos:])
    return parts


def as_shape(value: object, *, what: str = "shape") -> Shape:
    """Normalize what a Python caller passes as a shape.

    Accepts a tuple or list of dims -- integers (numpy integers too), the
    :class:`~bcast.core.dims.Sym` and :class:`~bcast.core.dims.Interval` objects, or their
    text (``"N"``, ``"?"``, ``"2..4"``) -- a bare dim (rank 1, as numpy does), or
    a string in the command-line syntax.

    >>> as_shape(["N", 3, "?"]), as_shape(Sym("N"))
    ((Sym('N'), 3, Interval(0, None)), (Sym('N'),))
    """
    if type(value) is tuple and all(type(d) is int and 0 <= d <= 0x7FFFFFFFFFFFFFFF for d in value):
        if len(value) > MAX_RANK:
            raise InputError(f"invalid {what} {format_shape(value)}: rank {len(value)} is more than {MAX_RANK}")
        return value
    if isinstance(value, str):
        return parse_shape(value)
    if isinstance(value, (bool, float)):
        raise InputError(f"invalid {what} {brief(value)}: expected a sequence of dims")
    if isinstance(value, (int, Sym, Interval)) or hasattr(value, "__index__") and not hasattr(value, "__len__"):
        return (as_dim(value, where=f"invalid {what} {brief(value)}: "),)
    if isinstance(value, dict) or not isinstance(value, Iterable) or isinstance(value, (bytes, bytearray)):
        raise InputError(f"invalid {what} {brief(value)}: expected a sequence of dims")
    try:
        items = list(value)
    except Exception:  # an iterable that fails while iterating
        raise InputError(f"invalid {what} {brief(value)}: expected a sequence of dims") from None
    if len(items) > MAX_RANK:
        raise InputError(f"invalid {what}: rank {len(items)} is more than {MAX_RANK}")
    return tuple(as_dim(d, where=f"invalid {what} {_show(items)}: axis {i}: ") for i, d in enumerate(items))


def _show(items: list) -> str:
    return brief(tuple(items), 80)
