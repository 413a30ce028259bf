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
from ...run.execute import check_memory, materialize, output, view
from ...run.kernel import elementwise
from ...run.out import overlaps
from .dtypes import is_float

if TYPE_CHECKING:
    from .ops import Version

__all__ = ["bitshift", "check_mod", "div", "expand", "fold", "gemm", "mean", "mod", "power", "prelu", "ufunc", "where"]

def ufunc(f: np.ufunc) -> Callable:
    """The kernel of a numpy ufunc, marked as computing it (warnings off: overflow wraps
    around, as in ONNX's runtimes)."""

    def kernel(views: list, out: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            f(*views, out=out)

    kernel.__name__ = f.__name__
    return elementwise(kernel, f)


def div(views, out):
    a, b = views
    with np.errstate(all="ignore"):
        if out.dtype.kind not in "iu":
            np.divide(a, b, out=out)
            return
        # integers truncate toward zero (C): floor, then one up where the signs differ and a remainder is left
        np.floor_divide(a, b, out=out)
        if out.dtype.kind == "i":
            fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
            np.add(out, fix, out=out, casting="unsafe")


def mod(views, out, fmod: int = 0):
    with np.errstate(all="ignore"):
        f: np.ufunc = np.fmod if fmod else np.remainder
        f(*views, out=out)


def power(views, out):
    """``X ** Y`` in the type of X.  Integer X with integer Y is an exact power
    with wraparound (a negative exponent truncates 1 / X**-Y toward zero, 0 for
    X = 0); any float in the pair computes in the wider float, then casts to X's
    type (truncating toward zero for an integer X, as onnxruntime)."""
    x, y = views
    with np.errstate(all="ignore"):
        if out.dtype.kind in "iu" and y.dtype.kind in "iu":
            check_memory(out.shape, np.uint64, what="Pow's uint64 intermediate")
            # |Y| as uint64 and X mod 2**64: the power wraps mod 2**64, exact mod 2**bits once cast back
            exp = (np.abs(y.astype(np.int64, copy=False)) if y.dtype.kind == "i" else y).astype(np.uint64)
            np.copyto(out, np.power(x.astype(np.uint64), exp), casting="unsafe")
            if y.dtype.kind == "i":
                neg = y < 0  # 1/x**n: 1 for x == 1, +-1 for x == -1, else 0
                inv = np.where(x == 1, 1, 0) + np.where(x == -1, np.where(exp % 2 == 1, -1, 1), 0)
                np.copyto(out, inv.astype(out.dtype), where=neg)
            return
        both_float = is_float(x.dtype) and is_float(y.dtype)
        work = np.result_type(x.dtype, y.dtype) if both_float else np.float64
        check_memory(out.shape, work, what=f"Pow's {np.dtype(work).name} intermediate")
        r = np.power(x.astype(work, copy=False), y.astype(work, copy=False))
        np.copyto(out, r, casting="unsafe")


def bitshift(views, out, direction: str):
    with np.errstate(all="ignore"):
        f: np.ufunc = np.left_shift if direction == "LEFT" else np.right_shift
        f(*views, out=out)


def fold(f, views, out):
    np.copyto(out, views[0])
    with np.errstate(all="ignore"):
        for v in views[1:]:
            f(out, v, out=out)


def mean(views, out):
    fold(np.add, views, out)
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


def prelu(views, out):
    x, slope = views
    with np.errstate(all="ignore"):
        np.multiply(x, slope, out=out)
    np.copyto(out, x, where=x > 0)


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
    if scaled_ints:
        check_memory(p.shape, np.float64, what="Gemm's float64 intermediate")
    with np.errstate(all="ignore"):
        np.matmul(a, b, out=out)
        if scaled_ints:
            r = out * alpha
            if c is not None:
                r += view(c, p, 2) * beta
            np.copyto(out, r, casting="unsafe")
            return out
        if alpha != 1:
            np.multiply(out, dtype.type(alpha), out=out)
        if c is not None:
            c = c if beta == 1 else np.multiply(c, dtype.type(beta))
            np.add(out, view(c, p, 2), out=out)
    return out


def check_mod(version: Version, arrays: list, attrs: dict) -> None:
    """Mod before opset 28: fmod=0 is for integers only (floats need fmod=1)."""
    if not attrs["fmod"] and is_float(arrays[0].dtype) and version.since < 28:
        raise InputError(f"onnx Mod-{version.since}: floats need fmod=1 before opset 28 (fmod=0 is for "
                         f"integers); got {arrays[0].dtype} with fmod=0")
