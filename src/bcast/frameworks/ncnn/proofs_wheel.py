"""Where the ncnn wheel does not compute ncnn's functors: deviation ``ncnn-fast-math``.

bcast computes ncnn's reference functors (src/layer/binaryop.cpp) in IEEE
float32.  The x86-64 PyPI wheel (ncnn 1.0.20261020), built with -ffast-math,
departs from them in its vector bodies (MIN: in its one-element path) on a few
inputs.  :func:`wheel_departs` lists those inputs exactly and
:func:`departure_documented` says whether a departure is of the recorded kind;
tests/frameworks/test_ncnn_run.py's differential skips nothing else, and
bcast.frameworks.ncnn.proofs.ncnn_fast_math_departs_from_the_functors proves the
record.  Plain numpy: the wheel is not imported here.

>>> import numpy as np
>>> wheel_departs("DIV", np.float32([1, 1]), np.float32([0, 2])).tolist()
[True, False]
>>> same_bits(np.float32([0.0]), np.float32([-0.0]))
False
"""

from __future__ import annotations

import numpy as np

from .ops import op

__all__ = ["wheel_departs", "departure_documented", "same_bits", "same_bits_mask"]


def _base(name: str) -> str:
    """The functor an op computes: RDIV's is DIV's, on swapped operands."""
    o = op(name)
    return o.name.removeprefix("R") if o.swap else o.name


def _num_den(name: str, x, y):
    """The functor's (first, second) operands: the R-ops swap a and b."""
    return (y, x) if op(name).swap else (x, y)


def wheel_departs(name: str, x, y) -> np.ndarray:
    """Where the x86 wheel's vector bodies do not compute ncnn's functor, on
    operands ``x``, ``y`` (at the output shape; ``y`` may be the scalar):

    - DIV, FLOOR_DIVIDE (and R-): a zero divisor gives NaN, not +-inf;
    - POW (and R-): a base <= 0 (-0 and +0 included) gives garbage (2.4e38),
      not powf's value;
    - ATAN2 (and R-): atan2(-0, x) for x < 0 or x = -0 gives +pi, not -pi;
    - MIN, in the scalar tails: MIN(-0, +0) gives +0 (std::min gives its first
      operand), and MIN(x, NaN) gives NaN, not x;
    - FMOD, FLOOR_DIVIDE, REMAINDER (and R-) work from a rounded quotient: when
      x/y is within a few ulps of an integer (REMAINDER: or of a half-integer)
      the result is off by one divisor (by 1 for FLOOR_DIVIDE), and a zero
      result is +0 where fmodf/remainderf give -0.
    """
    n, d = (np.asarray(v, np.float64) for v in _num_den(name, x, y))
    base = _base(name)
    if base in ("DIV", "FLOOR_DIVIDE") and np.any(d == 0):
        zero = d == 0
    else:
        zero = np.zeros(np.broadcast(n, d).shape, bool)
    if base == "POW":
        return n <= 0
    if base == "ATAN2":
        return (n == 0) & np.signbit(n) & np.signbit(d)
    if base == "MIN":
        return ((n == 0) & (d == 0) & (np.signbit(n) != np.signbit(d))) | np.isnan(d)
    if base in ("FMOD", "FLOOR_DIVIDE", "REMAINDER"):
        with np.errstate(all="ignore"):
            q = n / d
            step = 0.5 if base == "REMAINDER" else 1.0
            near = np.abs(q / step - np.round(q / step)) <= 16 * 2.0**-24 * np.maximum(np.abs(q / step), 1)
        return zero | (near & np.isfinite(q))
    return zero


def departure_documented(name: str, ours, wheel, x, y) -> np.ndarray:
    """At the departures: whether the wheel's value is of the recorded kind
    (FLOOR_DIVIDE off by 1 or NaN for a zero divisor; FMOD and REMAINDER off by
    one or two divisors or equal; the other ops anything: NaN, garbage, the
    other pi, the other zero)."""
    base = _base(name)
    n, d = _num_den(name, x, y)
    same = (wheel == ours) | (np.isnan(wheel) & np.isnan(ours))
    with np.errstate(invalid="ignore"):
        off = np.abs(wheel.astype(np.float64) - ours)
    if base == "FLOOR_DIVIDE":
        return same | (off == 1) | ((d == 0) & np.isnan(wheel))
    if base in ("FMOD", "REMAINDER"):
        return same | np.isclose(off, np.abs(d), rtol=1e-5) | np.isclose(off, 2 * np.abs(d), rtol=1e-5)
    return np.ones(ours.shape, bool)


def same_bits_mask(x, y) -> np.ndarray:
    """Where two float32 arrays of one shape have equal bits (-0 and +0 differ); any NaN equals any NaN."""
    x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
    return (x.view(np.int32) == y.view(np.int32)) | (np.isnan(x) & np.isnan(y))


def same_bits(x, y) -> bool:
    """Equal shapes and equal float32 bits everywhere (see :func:`same_bits_mask`)."""
    return np.shape(x) == np.shape(y) and bool(same_bits_mask(x, y).all())
