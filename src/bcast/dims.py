"""Dims and the few comparisons every rule is written in.

A dim is, for now, a static ``int >= 0`` (a plain Python ``int``: cheap, hashable,
what every caller already has).  Symbols (``N``), unknown (``?``) and intervals
(``1..10``) will be further kinds of dim.  So that they slot in without
rewriting the rules, **rules never compare dims with bare ``==``**: they ask
the questions below, which are exactly the questions a broadcasting rule
asks.  Each question has one answer for static dims; for a symbolic dim the
same function will decide (or record a constraint) in one place.

- :func:`is_one` -- is this dim 1 (can it stretch)?
- :func:`same` -- are these two dims equal?
- :func:`merge` -- numpy's two-way merge: the output dim, or ``None``.
- :func:`fits_into` -- one-way: may ``d`` stretch into ``target``?
"""

from __future__ import annotations

from operator import index
from typing import Union

from ._format import brief
from .errors import InputError

__all__ = ["Dim", "MAX_RANK", "MAX_DIM", "as_dim", "is_one", "same", "merge", "fits_into"]

#: The type of one dim.  Only ``int`` today; symbolic kinds join the union later.
Dim = Union[int]

#: Largest rank bcast accepts (numpy's NPY_MAXDIMS; no framework goes further).
MAX_RANK = 64

#: Largest dim bcast accepts: every framework stores dims as int64.
MAX_DIM = 2**63 - 1


def as_dim(value: object, *, where: str = "") -> Dim:
    """Check and normalize one dim: an integer in ``[0, 2**63-1]``.

    ``bool`` and floats are refused (``True`` is not a dim, nor is ``2.0``);
    numpy integers are accepted.
    """
    if type(value) is int:
        dim = value
    else:
        if isinstance(value, bool) or isinstance(value, float):
            raise InputError(f"{where}dim {brief(value)} is not an integer")
        try:
            dim = index(value)  # numpy integers and other int-likes
        except Exception:  # no __index__, or one that refuses
            raise InputError(
                f"{where}dim {brief(value)} is not an integer (symbolic, unknown and interval "
                "dims are not supported yet)"
            ) from None
    if dim < 0:
        raise InputError(f"{where}dim {dim} is negative")
    if dim > MAX_DIM:
        raise InputError(f"{where}dim {dim} does not fit in int64")
    return dim


def is_one(d: Dim) -> bool:
    """True when ``d`` is 1, so that it may stretch to any size (0 included)."""
    return d == 1


def same(a: Dim, b: Dim) -> bool:
    """True when the two dims are equal."""
    return a == b


def merge(a: Dim, b: Dim) -> Dim | None:
    """numpy's rule for one aligned pair: equal, or one of them 1; else ``None``.

    0 is an ordinary size: 0 with 1 gives 0, 0 with 5 does not broadcast.
    """
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    return None


def fits_into(d: Dim, target: Dim) -> bool:
    """One-way rule: ``d`` equals ``target`` or is 1 (stretches into it)."""
    return d == target or d == 1
