"""The numpy kernels of ONNX's ops, as ONNX defines their values.

An element-wise kernel is ``kernel(views, out, **attrs)``: it writes the op's
result, in ONNX's output type, into ``out`` from the inputs' stride-0 views (of
``out``'s shape).  A runner (Gemm's product, Expand's copy) is
``runner(plan, arrays, out, dtype, attrs)`` and replaces the element-wise path.
:func:`check_mod` is a rule ONNX's spec states in prose.  The op table,
:mod:`bcast.frameworks.onnx.ops`, says which op runs which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from collections.abc import Callable

import numpy as np

from ...core.errors import InputError
from ...core.plan import Plan
from ...run.execute import materialize, output, view
from ...run.kernel import elementwise
from ...run.out import overlaps
from .._blocks import MAX_ELEMENTS, block_elements, blocks
from .dtypes import is_float

if TYPE_CHECKING:
    from .ops import Version

__all__ = ["bitshift", "check_mod", "div", "expand", "fold", "gemm", "maximum", "mean", "minimum", "mod", "power",
           "prelu", "sum_", "ufunc", "where"]

def ufunc(f: np.ufunc) -> Callable:
    """The kernel of a numpy ufunc, marked as computing it (warnings off: overflow wraps
    around, as in ONNX's runtimes)."""

    def kernel(views: list, out: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            f(*views, out=out)

    kernel.__name__ = f.__name__
    return elementwise(kernel, f)


#: The float type that holds a signed integer quotient exactly (integer Div): by item size.
_EXACT_QUOTIENT = {1: (np.float32, np.int32), 2: (np.float32, np.int32), 4: (np.float64, np.int64)}


def div(views, out):
    """``A / B``: floats numpy's divide; integers the quotient truncated toward zero (C's, as
    ONNX's Div), 0 for a zero divisor, MIN / -1 wrapping to MIN.

    A signed quotient of 8, 16 (32) bits is computed in float32 (float64), then truncated:
    exact.  Proof: |a| <= 2**31 < 2**53 (2**15 < 2**24), so a and b are exact in the float
    type and a / b rounded is within |a / b| * 2**-53 (2**-24) of the quotient q, which is
    less than 1 / |b|.  When q is an integer the rounding gives it exactly (|q| <= |a| is
    representable); when it is not, q is at least 1 / |b| from every integer, so the rounded
    value lies strictly between the same two integers and truncates as q does.  The one
    quotient that leaves the type, MIN / -1 = 2**(bits-1), goes through a wider integer and
    wraps to MIN as numpy's floor_divide does; a zero divisor (inf or NaN) is set to 0.
    int64 keeps numpy's floor_divide, corrected by one where a remainder is left and the
    signs differ.  Both work block by block (bcast.frameworks._blocks): no temporary of
    the output's size."""
    a, b = views
    with np.errstate(all="ignore"):
        if out.dtype.kind not in "iu":
            np.divide(a, b, out=out)
            return
        if out.dtype.kind == "u" or out.size == 0:  # floor is truncation; floor_divide gives 0 for a zero divisor
            np.floor_divide(a, b, out=out)
            return
        exact = _EXACT_QUOTIENT.get(out.dtype.itemsize)
        if exact is None:
            for at in blocks(out.shape, 8):
                ab, bb, ob = a[at], b[at], out[at]
                np.floor_divide(ab, bb, out=ob)
                fix = (np.remainder(ab, bb) != 0) & ((ab < 0) != (bb < 0))
                np.add(ob, fix, out=ob, casting="unsafe")
            return
        work, wide = exact
        n = min(out.size, block_elements(8))
        q_buf, w_buf = np.empty(n, work), np.empty(n, wide)
        for at in blocks(out.shape, 8):
            ab, bb, ob = a[at], b[at], out[at]
            q, w = q_buf[:ob.size].reshape(ob.shape), w_buf[:ob.size].reshape(ob.shape)
            np.divide(ab, bb, out=q, dtype=work)
            np.trunc(q, out=q)
            if not bb.all():
                q[bb == 0] = 0
            np.copyto(w, q, casting="unsafe")
            np.copyto(ob, w, casting="unsafe")


def mod(views, out, fmod: int = 0):
    with np.errstate(all="ignore"):
        f: np.ufunc = np.fmod if fmod else np.remainder
        f(*views, out=out)


def power(views, out):
    """``X ** Y`` in the type of X.  Integer X with integer Y is an exact power
    with wraparound (a negative exponent truncates 1 / X**-Y toward zero, 0 for
    X = 0); any float in the pair computes in the wider float, then casts to X's
    type (truncating toward zero for an integer X, as onnxruntime).

    Each is one numpy call into ``out``: numpy casts the operands into its buffers
    and the result back (integers: the power of uint64 operands, which wraps mod
    2**64, exact mod 2**bits once cast back; a negative exponent, as uint64 huge,
    is then replaced block by block)."""
    x, y = views
    with np.errstate(all="ignore"):
        if out.dtype.kind in "iu" and y.dtype.kind in "iu":
            np.power(x, y, out=out, dtype=np.uint64, casting="unsafe")
            if y.dtype.kind == "i" and y.size and y.min() < 0:
                for at in blocks(out.shape, 8):
                    xb, yb = x[at], y[at]
                    neg = yb < 0  # 1/x**n: 1 for x == 1, +-1 for x == -1 (by n's parity), else 0
                    if neg.any():
                        inv = np.where(xb == 1, 1, np.where(xb == -1, np.where(yb & 1, -1, 1), 0))
                        np.copyto(out[at], inv, where=neg, casting="unsafe")
            return
        work = np.result_type(x.dtype, y.dtype) if is_float(x.dtype) and is_float(y.dtype) else np.dtype(np.float64)
        if x.dtype == y.dtype == work == out.dtype:
            np.power(x, y, out=out)
        else:
            np.power(x, y, out=out, dtype=work, casting="unsafe")


def bitshift(views, out, direction: str):
    with np.errstate(all="ignore"):
        f: np.ufunc = np.left_shift if direction == "LEFT" else np.right_shift
        f(*views, out=out)


def fold(f, views, out):
    """``f`` folded over the inputs left to right, into ``out``: one call for two inputs."""
    with np.errstate(all="ignore"):
        _fold(f, views, out)


def _fold(f, views, out):
    if len(views) == 1:
        np.copyto(out, views[0])
        return
    f(views[0], views[1], out=out)
    for v in views[2:]:
        f(out, v, out=out)


def sum_(views, out):
    fold(np.add, views, out)


def maximum(views, out):
    fold(np.maximum, views, out)


def minimum(views, out):
    fold(np.minimum, views, out)


def mean(views, out):
    with np.errstate(all="ignore"):
        _fold(np.add, views, out)
        np.divide(out, len(views), out=out)


_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def where(views, out):
    """``out = cond ? x : y``, bit for bit.  numpy's masked copy runs one element at a
    time; on the bits of a numeric type, ``y ^ ((x ^ y) * cond)`` takes three vector
    loops and no temporary (a copy where ``out`` overlaps an input or the type is other)."""
    cond, x, y = views
    u = _UINT_OF_SIZE.get(out.dtype.itemsize) if out.dtype.kind in "biufcmM" else None
    if u is None or x.dtype != out.dtype or y.dtype != out.dtype or overlaps(out, (x, y)):
        np.copyto(out, y)
        np.copyto(out, x, where=cond)
        return
    bits, y = out.view(u), y.view(u)
    np.bitwise_xor(x.view(u), y, out=bits)
    np.multiply(bits, cond, out=bits)
    np.bitwise_xor(bits, y, out=bits)


# marked: what each computes is one of the compiled loops (bcast.run.kernel.LOOPS)
div = elementwise(div, loop="div")
sum_ = elementwise(sum_, loop="sum")
mean = elementwise(mean, loop="mean")
maximum = elementwise(maximum, loop="max")
minimum = elementwise(minimum, loop="min")
where = elementwise(where, loop="where")
power = elementwise(power, loop="pow")


def prelu(views, out):
    """``x > 0 ? x : x * slope``, block by block (the mask holds one block)."""
    x, slope = views
    with np.errstate(all="ignore"):
        if out.size <= MAX_ELEMENTS:  # one block (no generator: small calls are most of them)
            np.multiply(x, slope, out=out)
            np.copyto(out, x, where=x > 0)
            return
        for at in blocks(out.shape, 1):
            xb, ob = x[at], out[at]
            np.multiply(xb, slope[at], out=ob)
            np.copyto(ob, xb, where=xb > 0)


def expand(p: Plan, arrays: list, out, dtype, attrs: dict):
    return materialize(arrays[0], p, 0, out)


def gemm(p: Plan, arrays: list, out, dtype, attrs: dict):
    """``alpha * A' @ B' + beta * C``: the product in the inputs' type (integers
    wrap); for integers with alpha or beta other than 1, computed in float64 and
    truncated back; C is not read when beta is 0 (its shape is still checked)."""
    a, b = arrays[0], arrays[1]
    a = a.T if attrs["transA"] else a
    b = b.T if attrs["transB"] else b
    c = arrays[2] if len(arrays) == 3 and attrs["beta"] != 0 else None
    out = output(p.shape, dtype, out)
    alpha, beta = attrs["alpha"], attrs["beta"]
    scaled_ints = dtype.kind in "iu" and (alpha != 1 or (c is not None and beta != 1))
    cv = view(c, p, 2) if c is not None else None
    with np.errstate(all="ignore"):
        np.matmul(a, b, out=out)
        if scaled_ints:  # in float64, block by block: the float64 values hold one block
            for at in blocks(out.shape, 8):
                r = out[at] * alpha
                if cv is not None:
                    r += cv[at] * beta
                np.copyto(out[at], r, casting="unsafe")
            return out
        if alpha != 1:
            np.multiply(out, dtype.type(alpha), out=out)
        if cv is not None:
            if beta == 1:
                np.add(out, cv, out=out)
            else:
                for at in blocks(out.shape, dtype.itemsize):  # beta * C in the type, then added
                    np.add(out[at], np.multiply(cv[at], dtype.type(beta)), out=out[at])
    return out


def check_mod(version: Version, arrays: list, attrs: dict) -> None:
    """Mod before opset 28: fmod=0 is for integers only (floats need fmod=1)."""
    if not attrs["fmod"] and is_float(arrays[0].dtype) and version.since < 28:
        raise InputError(f"onnx Mod-{version.since}: floats need fmod=1 before opset 28 (fmod=0 is for "
                         f"integers); got {arrays[0].dtype} with fmod=0")
