"""The numpy kernels of OpenVINO's element-wise ops, Select and PRelu, as OpenVINO's reference computes them.

A kernel factory takes (op name, op attributes) and returns the function that
run_plan applies to the stride-0 views: ``f(*views, out=None)``, computing in
the inputs' element type (never promoted), with numpy's floating-point
warnings off (inf and nan are values here, as in OpenVINO).  Kernels marked
``elementwise`` may run in threads on chunks of a large output; Divide, FloorMod
and Mod check the divisor first, so they run in one call.  The op table,
:mod:`bcast.frameworks.openvino.ops`, says which op runs which.

No kernel holds a temporary of the output's size: each writes into ``out``, and
what needs a float64 value or a mask runs block by block
(:mod:`bcast.frameworks._blocks`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ...core.errors import InputError
from ...run import execute
from ...run.kernel import elementwise, std_max, std_min, ufunc_kernel
from .._blocks import block_elements, blocks

__all__ = ["divide", "floor_mod", "maximum", "minimum", "mod", "power", "prelu", "select", "squared_difference",
           "ufunc"]


def _quiet(func: Callable) -> Callable:
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with np.errstate(all="ignore"):
            return func(*args, **kwargs)

    return wrapper


def ufunc(f: np.ufunc) -> Callable:
    """A numpy ufunc as it is: same-type inputs give the same type (or bool).  Marked as that
    ufunc: bcast.run.parallel may run it as a compiled loop, the small-op fast path calls it on
    the arrays as they are."""

    def factory(name, attrs):
        return ufunc_kernel(f)

    return factory


def _buffer(out, views, dtype):
    """Where a multi-step kernel writes: ``out``, unless it is None or overlaps an input
    (then a fresh array, copied into ``out`` at the end by :func:`_deliver`)."""
    if out is not None and not execute.overlaps(out, views):
        return out
    return execute.output(views[0].shape, dtype)


def _deliver(buf, out):
    if out is None or buf is out:
        return buf
    np.copyto(out, buf)
    return out


def _is_int(dtype) -> bool:
    return dtype.kind in "iu"


def _check_divisor(name: str, y) -> None:
    """Integer division by zero is refused (OpenVINO's reference throws, crashes or returns garbage)."""
    if _is_int(y.dtype) and not np.all(y):
        raise InputError(f"openvino {name}: integer division by zero (B has a 0); "
                         "OpenVINO's reference refuses it (\"integer division by zero\") or crashes")


def divide(name, attrs):
    floor = attrs["python_division"]

    @_quiet
    def divide(x, y, out=None):
        if not _is_int(x.dtype):
            return np.true_divide(x, y, out=out)
        _check_divisor(name, y)
        if floor or x.dtype.kind == "u":
            return np.floor_divide(x, y, out=out)
        buf = _buffer(out, (x, y), x.dtype)
        np.fmod(x, y, out=buf)  # x minus its C remainder is a multiple of y: exact
        np.subtract(x, buf, out=buf)
        np.floor_divide(buf, y, out=buf)
        return _deliver(buf, out)

    return divide


def power(name, attrs):
    @_quiet
    def power(x, y, out=None):
        if not _is_int(x.dtype):
            return np.power(x, y, out=out)
        # static_cast<T>(std::pow(x, y)): both promoted to double, the result truncated (numpy casts
        # in its buffers: no float64 array)
        buf = execute.output(x.shape, x.dtype, out)
        np.power(x, y, out=buf, dtype=np.float64, casting="unsafe")
        return buf

    return power


def floor_mod(name, attrs):
    @_quiet
    def floor_mod(x, y, out=None):
        _check_divisor(name, y)
        if x.dtype.kind == "u":
            return np.remainder(x, y, out=out)
        buf = execute.output(x.shape, x.dtype, out)
        t_buf = np.empty(min(buf.size, block_elements(8)), np.float64)
        for at in blocks(buf.shape, 8):  # x - y * floor(x / double(y)), all in double, a block at a time
            xb, yb, ob = x[at], y[at], buf[at]
            t = t_buf[:ob.size].reshape(ob.shape)
            np.true_divide(xb, yb, out=t, dtype=np.float64)
            np.floor(t, out=t)
            np.multiply(t, yb, out=t, dtype=np.float64)
            np.subtract(xb, t, out=t, dtype=np.float64)
            np.copyto(ob, t, casting="unsafe")
        return buf

    return floor_mod


def mod(name, attrs):
    @_quiet
    def mod(x, y, out=None):
        _check_divisor(name, y)
        if _is_int(x.dtype):
            return np.fmod(x, y, out=out)  # C's x % y
        buf = _buffer(out, (x, y), x.dtype)  # x - trunc(x / y) * y, in the element type
        np.true_divide(x, y, out=buf)
        np.trunc(buf, out=buf)
        np.multiply(buf, y, out=buf)
        np.subtract(x, buf, out=buf)
        return _deliver(buf, out)

    return mod


def _pick(std: Callable) -> Callable:
    """Maximum, Minimum: ``std::max`` / ``std::min`` (:func:`bcast.run.kernel.std_max`), block
    by block (its mask holds one block)."""

    def factory(name, attrs):
        def pick(x, y, out=None):
            buf = execute.output(x.shape, x.dtype, out)
            for at in blocks(buf.shape, 1):
                std(x[at], y[at], buf[at])
            return buf

        return elementwise(pick)

    return factory


maximum, minimum = _pick(std_max), _pick(std_min)


def squared_difference(name, attrs):
    @_quiet
    def squared_difference(x, y, out=None):  # (x - y) * (x - y), in the element type
        buf = _buffer(out, (x, y), x.dtype)
        np.subtract(x, y, out=buf)
        np.multiply(buf, buf, out=buf)
        return _deliver(buf, out)

    return elementwise(squared_difference)


def select(name, attrs):
    def select(cond, then, else_, out=None):  # then where cond, else else_: the compiled loop "where"
        buf = _buffer(out, (cond, then, else_), then.dtype)
        np.copyto(buf, else_)
        np.copyto(buf, then, where=cond)
        return _deliver(buf, out)

    return elementwise(select, loop="where")


def prelu(name, attrs):
    @_quiet
    def prelu(x, slope, out=None):  # x < 0 ? x * slope : x, block by block (the mask holds one block)
        buf = _buffer(out, (x, slope), x.dtype)
        for at in blocks(buf.shape, 1):
            xb, ob = x[at], buf[at]
            np.copyto(ob, xb)
            np.multiply(xb, slope[at], out=ob, where=xb < 0)
        return _deliver(buf, out)

    return elementwise(prelu)
