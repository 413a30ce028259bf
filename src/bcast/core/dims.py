"""Dims and the few comparisons every rule is written in.

A dim is one of:

- a static ``int >= 0`` (a plain Python ``int``: cheap, hashable, what every
  caller already has);
- a :class:`Sym`, a named size that is fixed but not known (ONNX's
  ``dim_param``, e.g. ``N``): two dims with the same name are equal;
- an :class:`Interval` ``lo..hi`` (OpenVINO; ``lo..`` has no upper bound): a
  size known only to lie in the range.  ``?``, a size not known at all, is the
  interval ``0..`` (:data:`UNKNOWN`), exactly as OpenVINO's dynamic dim.

All are immutable and hashable, and ``str(dim)`` is the text the parser reads
back: ``3``, ``N``, ``?``, ``2..4``, ``2..``.

So that rules stay the same for every kind, **rules never compare dims with
bare ``==``**: they ask the questions below, which are exactly the questions a
broadcasting rule asks.  The questions are three-valued (after JAX's
``definitely_equal``): :func:`is_one` and :func:`same` answer *definitely*;
what only *might* hold becomes a :class:`Constraint` on the plan
(:func:`broadcast_constraint`, :func:`fit_constraint`, :func:`equal_constraint`).

- :func:`is_one` -- is this dim definitely 1 (can it stretch)?
- :func:`same` -- are these two dims definitely equal?
- :func:`merge` -- numpy's two-way merge: the output dim, or ``None``.
- :func:`fits_into` -- one-way: ``d`` stretched into ``target``: the output dim, or ``None``.
- :func:`meet` -- two dims that must be equal: the output dim, or ``None``.

For symbols and unknown dims the results are those of ONNX shape inference
(``multidirectionalBroadcastShapeInference``); for intervals, those of
OpenVINO's ``Dimension::broadcast_merge``.  They agree where both apply:

>>> N, M = Sym("N"), Sym("M")
>>> [str(merge(a, b)) for a, b in [(N, 1), (N, 5), (N, N), (N, M), (UNKNOWN, 3), (UNKNOWN, 1), (0, N)]]
['N', '5', 'N', '?', '3', '?', '0']
>>> [str(merge(Interval(1, 10), 5)), str(merge(Interval(2, 4), Interval(3, 8))), merge(Interval(2, 4), Interval(5, 8))]
['5', '3..4', None]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from operator import index
from typing import SupportsIndex, cast
from collections.abc import Mapping

from ._format import brief
from .errors import InputError
from .validate import INT64_MAX, MAX_RANK

__all__ = [
    "Dim", "Sym", "Interval", "UNKNOWN", "Constraint", "MAX_RANK", "MAX_DIM", "as_dim", "parse_dim",
    "is_static", "is_one", "maybe_one", "maybe", "same", "merge", "fits_into", "meet",
    "equals", "broadcast_constraint", "fit_constraint", "equal_constraint", "value_constraint", "to_json", "json_shape",
]

#: Largest dim bcast accepts: every framework stores dims as int64 (:data:`bcast.core.validate.INT64_MAX`).
MAX_DIM = INT64_MAX

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RANGE = re.compile(r"([0-9]+)\.\.([0-9]*)\Z")
_DIGITS = len(str(MAX_DIM))  # a run of more digits than this (leading zeros aside) cannot fit in int64


@dataclass(frozen=True, slots=True)
class Sym:
    """A symbolic dim: a size fixed for the model but not known (ONNX ``dim_param``).

    >>> Sym("batch"), str(Sym("batch"))
    (Sym('batch'), 'batch')
    """

    name: str

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise InputError(f"symbol {brief(self.name)} is not a name (a letter or _, then letters, digits, _)")

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Sym({self.name!r})"


@dataclass(frozen=True, slots=True)
class Interval:
    """A dim known to lie in ``lo..hi`` (``hi=None``: no upper bound), as OpenVINO's.

    An interval always holds more than one size (``3..3`` is the int ``3``:
    use :func:`parse_dim`); ``Interval(0, None)`` is :data:`UNKNOWN`, ``?``.

    >>> str(Interval(2, 4)), str(Interval(2, None)), str(Interval(0, None))
    ('2..4', '2..', '?')
    """

    lo: int
    hi: int | None = None

    def __post_init__(self):
        ok = type(self.lo) is int and 0 <= self.lo <= MAX_DIM
        ok = ok and (self.hi is None or type(self.hi) is int and self.lo < self.hi <= MAX_DIM)
        if not ok:
            raise InputError(
                f"interval {brief(self.lo)}..{brief(self.hi)} is not a range lo..hi with 0 <= lo < hi <= 2**63-1"
            )

    def __str__(self) -> str:
        if self.hi is None:
            return "?" if self.lo == 0 else f"{self.lo}.."
        return f"{self.lo}..{self.hi}"

    def __repr__(self) -> str:
        return f"Interval({self.lo}, {self.hi})"


#: ``?``: a dim nothing is known about (OpenVINO's dynamic dim, ONNX's dim with neither value nor param).
UNKNOWN = Interval(0, None)

#: The type of one dim.
Dim = int | Sym | Interval


def parse_dim(text: str) -> Dim:
    """One dim written as text: ``3``, ``N``, ``?``, ``2..4``, ``2..``.

    >>> [parse_dim(t) for t in ("3", "N", "?", "2..4", "2..", "3..3")]
    [3, Sym('N'), Interval(0, None), Interval(2, 4), Interval(2, None), 3]
    >>> parse_dim("-1")
    Traceback (most recent call last):
    ...
    bcast.core.errors.InputError: dim -1 is negative (write ? for an unknown dim)
    """
    tok = text.strip()
    if tok.isdigit() and tok.isascii():
        return as_dim(_int(tok))
    if tok == "?":
        return UNKNOWN
    if _NAME.match(tok):
        return Sym(tok)
    m = _RANGE.match(tok)
    if m:
        lo, hi = _int(m.group(1)), (_int(m.group(2)) if m.group(2) else None)
        if hi is not None and hi < lo:
            raise InputError(f"dim {brief(tok)}: the interval is empty ({lo} > {hi})")
        if hi == lo:
            return as_dim(lo)
        return Interval(cast(int, as_dim(lo)), None if hi is None else cast(int, as_dim(hi)))
    if tok.startswith("-") and tok[1:].isdigit():
        raise InputError(f"dim {_cut(tok)} is negative" + (" (write ? for an unknown dim)" if tok == "-1" else ""))
    raise InputError(f"dim {brief(tok)} is not a dim: write 3, N (a symbol), ? (unknown) or 2..4 (an interval)")


def _int(digits: str) -> int:
    """An ASCII run of digits as an int; a run too long for int64 is refused before it is
    converted (Python refuses more than 4300 digits, and a long run costs quadratic time).

    >>> _int("007")
    7
    >>> _int("1" * 5000)
    Traceback (most recent call last):
    ...
    bcast.core.errors.InputError: dim 11111111111111111111... (5000 digits) does not fit in int64
    """
    if len(digits.lstrip("0")) > _DIGITS:
        raise InputError(f"dim {_cut(digits)} does not fit in int64")
    return int(digits)


def _cut(digits: str) -> str:
    """A long run of digits (a sign first, maybe) as its first 20 and how many, for a message."""
    return digits if len(digits) <= 24 else f"{digits[:20]}... ({len(digits.lstrip('-'))} digits)"


def as_dim(value: object, *, where: str = "") -> Dim:
    """Check and normalize one dim: an integer in ``[0, 2**63-1]``, a :class:`Sym`,
    an :class:`Interval`, or their text (:func:`parse_dim`).

    ``bool`` and floats are refused (``True`` is not a dim, nor is ``2.0``);
    numpy integers are accepted.
    """
    if type(value) is int:
        dim = value
    elif isinstance(value, (Sym, Interval)):
        return value
    elif isinstance(value, str):
        try:
            return parse_dim(value)
        except InputError as e:
            raise InputError(f"{where}{e}") from None
    else:
        if isinstance(value, bool) or isinstance(value, float):
            raise InputError(f"{where}dim {brief(value)} is not an integer")
        try:
            dim = index(cast(SupportsIndex, value))  # numpy integers and other int-likes; else it raises
        except Exception:  # no __index__, or one that refuses
            raise InputError(
                f"{where}dim {brief(value)} is not a dim (an integer, a symbol such as 'N', '?' or an "
                "interval such as '2..4')"
            ) from None
    if dim < 0:
        unknown = " (write '?' for an unknown dim)" if dim == -1 else ""
        raise InputError(f"{where}dim {brief(dim)} is negative{unknown}")
    if dim > MAX_DIM:
        raise InputError(f"{where}dim {brief(dim)} does not fit in int64")
    return dim


def to_json(d: Dim):
    """A dim in JSON: an int stays an int; any other dim is its text (``"N"``, ``"?"``, ``"2..4"``)."""
    return d if type(d) is int else str(d)


def json_shape(shape) -> list:
    """A shape in JSON: ``[2, "N", "?", "2..4"]``."""
    return [to_json(d) for d in shape]


# -- ranges: what every kind of dim may be --------------------------------------


def _bounds(d: Dim) -> tuple:
    """``(lo, hi)`` of the sizes ``d`` may be; ``hi`` is None when unbounded."""
    if type(d) is int:
        return d, d
    if isinstance(d, Interval):
        return d.lo, d.hi
    return 0, None


def _from_bounds(lo: int, hi):
    return lo if lo == hi else Interval(lo, hi)


def maybe(d: Dim, size: int) -> bool:
    """True when ``d`` may be ``size``."""
    lo, hi = _bounds(d)
    return lo <= size and (hi is None or size <= hi)


def maybe_one(d: Dim) -> bool:
    """True when ``d`` may be 1 (so that it may stretch)."""
    return maybe(d, 1)


def _overlap(a: Dim, b: Dim) -> tuple | None:
    (alo, ahi), (blo, bhi) = _bounds(a), _bounds(b)
    lo = max(alo, blo)
    hi = ahi if bhi is None else bhi if ahi is None else min(ahi, bhi)
    return None if hi is not None and hi < lo else (lo, hi)


# -- the questions rules ask ---------------------------------------------------


def is_static(d: Dim) -> bool:
    """True for a static (int) dim."""
    return type(d) is int


def is_one(d: Dim) -> bool:
    """True when ``d`` is definitely 1, so that it may stretch to any size (0 included)."""
    return d == 1


def same(a: Dim, b: Dim) -> bool:
    """True when the two dims are definitely equal: equal ints, or the same symbol."""
    return a == b and not isinstance(a, Interval)


def merge(a: Dim, b: Dim) -> Dim | None:
    """numpy's rule for one aligned pair: equal, or one of them 1; else ``None``.

    0 is an ordinary size: 0 with 1 gives 0, 0 with 5 does not broadcast.  For
    dims that are not both static, OpenVINO's ``broadcast_merge``: if both may be
    1, the hull of the two ranges; if only one may be 1, the other; else the two
    must be equal (the intersection).  A symbol is the range ``0..`` with a name,
    which gives ONNX's answers (N with 5 is 5, N with M is ?).
    """
    if b == 1 or same(a, b):
        return a
    if a == 1:
        return b
    if type(a) is int and type(b) is int:
        return None
    a1, b1 = maybe_one(a), maybe_one(b)
    if a1 and b1:
        (alo, ahi), (blo, bhi) = _bounds(a), _bounds(b)
        return _from_bounds(min(alo, blo), None if ahi is None or bhi is None else max(ahi, bhi))
    if a1:
        return b
    if b1:
        return a
    return meet(a, b)


def meet(a: Dim, b: Dim) -> Dim | None:
    """Two dims that must be equal: their common range (a symbol keeps its name
    when it says no less), or ``None`` when they cannot be equal.

    >>> meet(Sym("N"), 5), meet(Interval(2, 4), Interval(3, 8)), meet(2, 3)
    (5, Interval(3, 4), None)
    """
    if same(a, b):
        return a
    both = _overlap(a, b)
    if both is None:
        return None
    for d in sorted((a, b), key=lambda d: not isinstance(d, Sym)):
        if _bounds(d) == both:
            return d
    return _from_bounds(*both)


def fits_into(d: Dim, target: Dim) -> Dim | None:
    """One-way rule: ``d`` equals ``target`` or is 1 (stretches into it).

    Returns the output dim (``target``, narrowed to ``d`` when ``d`` cannot be
    1 and so must equal it), or ``None`` when ``d`` cannot fit.
    """
    if d == 1 or same(d, target):
        return target
    if type(d) is int and type(target) is int:
        return None
    if maybe_one(d):
        return target
    return meet(d, target)


# -- constraints -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Constraint:
    """What a broadcast needs of the sizes the shapes leave open: any one of
    ``alternatives`` holds.

    Each alternative is ``(left, op, right)`` with ``op`` ``"=="`` or ``"!="``;
    a side is an int or a name: a symbol's (``N``), or ``A[1]`` for an
    anonymous dim (``?`` or an interval: axis 1 of input A).

    >>> str(Constraint((("N", "==", 5), ("N", "==", 1))))
    'N ∈ {1, 5}'
    >>> c = Constraint((("N", "==", "M"), ("N", "==", 1), ("M", "==", 1)))
    >>> str(c), c.holds({"N": 3, "M": 1}), c.holds({"N": 3, "M": 4})
    ('N == M or N == 1 or M == 1', True, False)
    """

    alternatives: tuple

    def __str__(self) -> str:
        alts = self.alternatives
        if len(alts) == 2 and alts[0][0] == alts[1][0] and alts[1][1:] == ("==", 1) and alts[0][1] == "==":
            if type(alts[0][2]) is int:
                return f"{alts[0][0]} ∈ {{1, {alts[0][2]}}}"
        return " or ".join(_side_first(*alt) for alt in alts)

    def holds(self, values: Mapping[str, int]) -> bool:
        """Whether the constraint holds when each name has the size ``values[name]``."""

        def value(side):
            return side if type(side) is int else values[side]

        return any((value(left) == value(right)) == (op == "==") for left, op, right in self.alternatives)


def _side_first(left, op, right) -> str:
    """``N == 5`` rather than ``5 == N``: a name reads first."""
    if type(left) is int and type(right) is not int:
        left, right = right, left
    return f"{left} {op} {right}"


def _term(label: str, d: Dim):
    """How a dim is named in a constraint: its value, its symbol, or its place."""
    return d if type(d) is int else d.name if isinstance(d, Sym) else label


def _alternatives(x, dx, y, dy, *, y_stretches: bool) -> tuple | None:
    """The feasible alternatives of ``x == y or x == 1 [or y == 1]``: ``()`` when
    one is certain, ``None`` when none is possible."""
    if dx == 1 or same(dx, dy) or y_stretches and dy == 1:
        return ()
    alts = []
    if _overlap(dx, dy) is not None:
        alts.append((x, "==", y))
    if maybe_one(dx):
        alts.append((x, "==", 1))
    if y_stretches and maybe_one(dy) and type(dy) is not int:
        alts.append((y, "==", 1))
    return tuple(alts) or None


def _constraint(alts):
    if alts is None:
        return None
    return (Constraint(alts),) if alts else ()


def broadcast_constraint(x: tuple, y: tuple):
    """What numpy broadcasting needs of two aligned dims, each given as
    ``(label, dim)``: ``()`` when nothing, ``None`` when they cannot broadcast,
    else a 1-tuple of :class:`Constraint`.

    >>> [str(c) for c in broadcast_constraint(("A[0]", Sym("N")), ("B[0]", 5))]
    ['N ∈ {1, 5}']
    >>> [str(c) for c in broadcast_constraint(("A[0]", Sym("N")), ("B[0]", Sym("M")))]
    ['N == M or N == 1 or M == 1']
    """
    (lx, dx), (ly, dy) = x, y
    if type(dx) is int and type(dy) is not int:
        (lx, dx), (ly, dy) = y, x  # the non-static side reads first: N ∈ {1, 5}
    return _constraint(_alternatives(_term(lx, dx), dx, _term(ly, dy), dy, y_stretches=True))


def fit_constraint(d: tuple, target: tuple):
    """What one-way broadcasting needs: ``d == target or d == 1`` (see
    :func:`broadcast_constraint` for the arguments and the result)."""
    (ld, dd), (lt, dt) = d, target
    return _constraint(_alternatives(_term(ld, dd), dd, _term(lt, dt), dt, y_stretches=False))


def value_constraint(x: tuple, op: str, value: int):
    """What a rule needs of one dim ``(label, dim)`` alone: ``dim == value`` or
    ``dim != value`` (see :func:`broadcast_constraint` for the result).

    >>> [str(c) for c in value_constraint(("B[1]", UNKNOWN), "==", 1)], value_constraint(("B[1]", 3), "==", 1)
    (['B[1] == 1'], None)
    """
    label, d = x
    can, must = maybe(d, value), d == value
    certain, possible = (must, can) if op == "==" else (not can, not must)
    if certain:
        return ()
    return (Constraint(((_term(label, d), op, value),)),) if possible else None


def equals(a: Dim, b: Dim) -> bool | None:
    """Three-valued equality: True when definitely equal, False when they cannot
    be, None when it depends on sizes the shapes leave open."""
    if same(a, b):
        return True
    return False if _overlap(a, b) is None else None


def equal_constraint(x: tuple, y: tuple):
    """What a rule that does not broadcast needs: ``x == y``."""
    (lx, dx), (ly, dy) = x, y
    if same(dx, dy):
        return ()
    if meet(dx, dy) is None:
        return None
    if type(dx) is int:
        (lx, dx), (ly, dy) = y, x
    return (Constraint(((_term(lx, dx), "==", _term(ly, dy)),)),)
