"""MNN's BinaryOp and Select on numpy arrays: numpy broadcasting up to rank 9, float32 and int32.

Broadcasting is one rule, ``numpy`` (:mod:`bcast.rules.numpy`), as MNN's shape computer states it:
``source/shape/ShapeBinaryOp.cpp`` (BinaryOp) and ``source/shape/ShapeSelect.cpp`` (Select) both call
``SizeComputer::computeBroadCastDims`` (``source/shape/SizeComputer.cpp``), which right-aligns the
inputs on the one of highest rank and, per axis, keeps equal dims, takes the other where one is 1,
and refuses anything else (``Broad cast error, dim1 = .., dim2 = ..``; before MNN 1.2 the same check
printed "Don't support broadcast for binaryOp", alibaba/MNN#802).  A tensor holds at most
``MNN_MAX_TENSOR_DIM`` = 9 dims (``source/core/TensorUtils.hpp``): the rule's ``max_rank``.  The CPU
kernels (``source/backend/cpu/CPUBinary.cpp``) only ever see equal sizes or a one-element input: the
geometry pass (``source/geometry/GeometryBinary.cpp``) materialises a broadcast input first.

The two inputs of a BinaryOp must have one type code (the shape computer refuses float with int);
the comparisons give int32 (``outputBool``), the other ops the inputs' type.  :data:`OPS` is the op
table, at MNN's ``BinaryOpOperation`` numbers (``schema/default/TensorflowOp.fbs``); each kernel is
MNN's functor (``source/backend/cpu/BinaryUtils.hpp``): ``REALDIV`` of int32 truncates (C's ``/``),
``FLOORDIV`` is ``floor(double(x) / y)``, ``FLOORMOD`` is ``x - floor(x / y) * y`` (for int32 ``x / y``
truncates first: the remainder with x's sign), ``MOD`` is
``fmodf`` for float32 and, for int32, a remainder with the divisor's sign (onnxruntime's Mod).

>>> import numpy as np
>>> run("ADD", np.ones((2, 3), np.float32), np.float32([10, 20, 30]))
array([[11., 21., 31.],
       [11., 21., 31.]], dtype=float32)
>>> run("LESS", np.float32([1, 5]), np.float32([[3], [0]]))
array([[1, 0],
       [0, 0]], dtype=int32)
>>> plan("ADD", (2, 3), (4,))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: numpy: cannot broadcast A (2,3) with B (4,): axis -1 ...
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core._format import brief
from ...core.errors import InputError
from ...core.plan import Plan
from ...rules import infer
from ...run.execute import MemoryBudgetError, run_plan
from .._op import Op as _Op

__all__ = ["MAX_RANK", "OPS", "Op", "op", "ops", "plan", "run"]

#: MNN_MAX_TENSOR_DIM (source/core/TensorUtils.hpp): the most dims a tensor holds.
MAX_RANK = 9


# --------------------------------------------------------------------------- the kernels
# kernel(x, y, out): MNN's functor of source/backend/cpu/BinaryUtils.hpp, in the inputs' type; out has
# the output's shape and dtype.


def _ufunc(f: np.ufunc) -> Callable:
    def kernel(x, y, out):
        f(x, y, out=out, casting="unsafe")

    kernel.__name__ = f.__name__
    return kernel


def _realdiv(x, y, out):  # x / y: C's truncating division for int32
    if x.dtype.kind == "i":
        q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
        out[...] = np.where((x < 0) != (y < 0), -q, q)
    else:
        np.divide(x, y, out=out)


def _floordiv(x, y, out):  # floor(static_cast<double>(x) / y)
    out[...] = np.floor(x.astype(np.float64) / y.astype(np.float64))


def _floormod(x, y, out):  # x - floor(x / y) * y, in the inputs' type
    if x.dtype.kind == "i":  # int / int truncates (C), floor keeps it: the remainder with x's sign
        np.fmod(x, y, out=out)
    else:
        out[...] = x - np.floor(x / y) * y


def _mod(x, y, out):  # fmodf for float32; for int32 the remainder with the divisor's sign
    if x.dtype.kind == "i":
        np.mod(x, y, out=out)
    else:
        np.fmod(x, y, out=out)


def _squared_difference(x, y, out):  # (x - y) * (x - y)
    np.subtract(x, y, out=out)
    np.multiply(out, out, out=out)


def _select(c, x, y, out):  # cond != 0 takes x
    np.copyto(out, np.where(c != 0, x, y))


@dataclass(frozen=True)
class Op(_Op):
    """One MNN op: its ``name`` (``BinaryOpOperation``'s spelling, or ``SELECT``), MNN's number of
    it (``code``; -1 for Select, an op type of its own), its functor ``kernel(*views, out)`` and
    whether it gives int32 (``boolean``: the comparisons' ``outputBool``).  ``ulps``: how far, in
    float32 units in the last place, the x86 wheel's float32 result may be from the functor's
    (measured: POW 1, ATAN2 2; 0 is bit-exact).  ``float_only``: MNN has no int32 kernel of it."""

    code: int
    kernel: Callable
    boolean: bool = False
    nary: int = 2
    ulps: int = 0
    float_only: bool = False

    framework = "mnn"

    def input_names(self, n: int) -> tuple[str, ...]:
        return (("cond", "x", "y") if self.nary == 3 else ("A", "B"))[:n]

    def dtype_message(self, named: Sequence, name: str, tv: str, dtype: Any, allowed: Collection[str],
                      context: Any) -> str:
        return (f"{self.where}: input {name} must be float32 or int32 (MNN's CPU kernels compute in 32 bits); "
                f"got {dtype}")

    def dtypes_differ_message(self, first: str, first_dtype: Any, name: str, dtype: Any, tv: str,
                              context: Any) -> str:
        return (f"{self.where}: inputs {first} and {name} must have the same type (MNN's shape computer refuses "
                f"two type codes); got {first_dtype} and {dtype}")


#: Every op, at MNN's BinaryOpOperation number (schema/default/TensorflowOp.fbs), then Select.
OPS = (
    Op("ADD", 0, _ufunc(np.add)),
    Op("SUB", 1, _ufunc(np.subtract)),
    Op("MUL", 2, _ufunc(np.multiply)),
    Op("POW", 6, _ufunc(np.power), ulps=2),
    Op("REALDIV", 7, _realdiv),
    Op("MINIMUM", 8, _ufunc(np.minimum)),
    Op("MAXIMUM", 9, _ufunc(np.maximum)),
    Op("GREATER", 10, _ufunc(np.greater), boolean=True),
    Op("GREATER_EQUAL", 11, _ufunc(np.greater_equal), boolean=True),
    Op("LESS", 12, _ufunc(np.less), boolean=True),
    Op("FLOORDIV", 13, _floordiv),
    Op("SquaredDifference", 14, _squared_difference),
    Op("EQUAL", 15, _ufunc(np.equal), boolean=True),
    Op("LESS_EQUAL", 16, _ufunc(np.less_equal), boolean=True),
    Op("FLOORMOD", 17, _floormod),
    Op("MOD", 19, _mod),
    Op("ATAN2", 20, _ufunc(np.arctan2), ulps=4, float_only=True),
    Op("NOTEQUAL", 22, _ufunc(np.not_equal), boolean=True),
    Op("SELECT", -1, _select, nary=3),
)
_BY_NAME = {o.name.upper(): o for o in OPS}
assert len(_BY_NAME) == len(OPS), "op names must be unique"


def ops() -> tuple[str, ...]:
    """The op names, BinaryOp's in MNN's order, then SELECT.

    >>> ops()[:4], ops()[-1]
    (('ADD', 'SUB', 'MUL', 'POW'), 'SELECT')
    """
    return tuple(o.name for o in OPS)


def op(name: Any) -> Op:
    """The :class:`Op` of a name (any case) or of MNN's BinaryOpOperation number.

    >>> op("realdiv").code, op(14).name
    (7, 'SquaredDifference')
    """
    if isinstance(name, str):
        found = _BY_NAME.get(name.strip().upper())
        if found is not None:
            return found
    elif isinstance(name, numbers.Integral) and not isinstance(name, bool):
        for o in OPS:
            if o.code == int(name) and o.code >= 0:
                return o
    raise InputError(f"mnn: unknown op {brief(name)}; the ops are {', '.join(ops())} "
                     "(or a BinaryOpOperation number)")


def plan(op_name: Any, *shapes: Any) -> Plan:
    """The Plan of ``op_name`` on inputs of ``shapes``: numpy broadcasting, rank at most 9.

    >>> plan("ADD", (8, 1, 6, 1), (7, 1, 5)).shape
    (8, 7, 6, 5)
    >>> plan("SELECT", (2, 1), (3,), ()).shape
    (2, 3)
    """
    o = op(op_name)
    o.check_arity(shapes, (o.nary,))
    return infer(*shapes, rule="numpy", max_rank=MAX_RANK)


_TYPES = {"T": ("float32", "int32")}
_COND = {"C": ("float32", "int32", "bool")}


def run(op_name: Any, *arrays: Any, out=None):
    """Compute MNN's op on numpy arrays as MNN's CPU backend does: broadcast by :func:`plan`, then
    MNN's functor in the inputs' type (int32 for the comparisons).

    Parameters
    ----------
    op_name : str or int
        One of :func:`ops` (any case), or a BinaryOpOperation number.
    *arrays : numpy.ndarray (or numpy scalars: rank 0)
        ``A, B`` (one dtype: float32 or int32); for SELECT ``cond, x, y`` (cond float32, int32 or bool:
        nonzero takes x).
    out : numpy.ndarray, optional
        Where to write the result: the output's shape and dtype.

    Raises
    ------
    BroadcastError
        The shapes do not broadcast (MNN's shape computer refuses them), or an input has rank above 9.
    InputError
        An unknown op, a wrong number of inputs, a dtype MNN does not compute, integer division by zero.
    """
    o = op(op_name)
    o.check_arity(arrays, (o.nary,))
    arrays = tuple(np.asarray(x) if isinstance(x, np.generic) else x for x in arrays)  # a numpy scalar: rank 0
    for i, x in enumerate(arrays):
        if not isinstance(x, np.ndarray):
            raise InputError(f"{o.where}: input {o.input_names(o.nary)[i]} must be a numpy array; "
                             f"got {type(x).__name__} {brief(x)}")
    names = o.input_names(o.nary)
    values = list(zip(names, arrays))
    if o.nary == 3:
        o.check_dtypes([(names[0], "C", arrays[0].dtype)], _COND, type_name=str)
        values = values[1:]
    typed = o.check_dtypes([(n, "T", x.dtype) for n, x in values], _TYPES, type_name=str)
    dtype = np.dtype(np.int32) if o.boolean else typed["T"][1]
    if o.float_only and typed["T"][1] != np.float32:
        raise InputError(f"{o.where}: MNN computes it on float32 only (its CPU backend has no int32 kernel: "
                         f"\"Don't support binary - int compute\"); got {typed['T'][1]}")
    if o.name in ("REALDIV", "FLOORDIV", "FLOORMOD", "MOD") and dtype.kind == "i" and not np.all(arrays[1]):
        raise InputError(f"{o.where}: integer division by zero (B has a 0); MNN's int32 kernel crashes on it")
    p = plan(o.name, *(x.shape for x in arrays))

    def write(*views, out=None):
        if out is None:
            out = np.empty(p.shape, dtype)
        with np.errstate(all="ignore"):  # inf, NaN: MNN's values, no warnings
            o.kernel(*views, out)
        return out

    write.__name__ = f"mnn {o.name}"
    try:
        return run_plan(p, write, list(arrays), out=out, dtype=dtype)
    except MemoryBudgetError:
        raise
    except InputError as e:  # a bad out=
        raise InputError(f"{o.where}: {e}") from None
