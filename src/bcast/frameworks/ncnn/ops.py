"""ncnn's BinaryOp on numpy arrays: op types 0-18, ncnn's broadcasting, float32.

``run(op_type, a, b)`` computes what one ncnn ``BinaryOp`` layer computes:
the inputs are aligned by the ``ncnn`` rule (:mod:`bcast.rules.ncnn`: a
lower-rank blob lands on the *leading* axes, a 1-D blob on the first axis it
matches, with ncnn's tie rule), viewed at the output shape with stride 0 (never
copied), then the op runs element-wise.  Pairs ncnn cannot do -- where the
wheel returns 0 and an output of garbage -- are refused with the rule's
:class:`~bcast.BroadcastError`.

:data:`OPS` is the one table of op types, numbered as ncnn numbers them
(src/layer/binaryop.h).  Each kernel is ncnn's reference functor
(src/layer/binaryop.cpp) evaluated in IEEE float32: ``DIV`` is ``x / y``,
``MAX`` is ``std::max(x, y)`` (so ``MAX(x, NaN)`` is ``x``), ``POW`` is
``powf``, ``REMAINDER`` is C's ``remainderf`` (round-to-nearest: ``5 rem 3``
is ``-1``, not Python's ``2``), ``FLOOR_DIVIDE`` is ``floorf(x / y)``,
``LOGADDEXP`` is ``max + log1pf(expf(min - max))``.  The R-ops swap their
operands: ``RSUB`` is ``b - a``.

On finite inputs the PyPI wheel (x86, built with ``-ffast-math``) agrees
bit for bit, or within :attr:`Op.ulps` for the ops its vector bodies
approximate, except where those vector bodies leave the functor (deviation
``ncnn-fast-math``): a zero divisor gives NaN (not +-inf), POW of a base <= 0
gives garbage, ATAN2(-0, x<0) gives +pi, FMOD / REMAINDER / FLOOR_DIVIDE are
off by one divisor (by 1) when x/y is within a few ulps of an integer (a tie,
for REMAINDER), and MIN's scalar path returns its second operand on -0/+0 and
NaN.  Non-finite inputs fare likewise.  bcast computes the functor, which is
what the wheel's other path computes.

Arrays are numpy arrays in numpy order, as ``ncnn.Mat(ndarray)`` reads them:
a (c, h, w) array is the blob [w, h, c].  ``ncnn_order=True`` does not reorder
the arrays; it makes errors name shapes and axes as ncnn does ([w,h,d,c]).

>>> import numpy as np
>>> a = np.arange(6, dtype=np.float32).reshape(3, 2)
>>> run("ADD", a, np.array([100, 200, 300], np.float32))  # B on A's first axis
array([[100., 101.],
       [202., 203.],
       [304., 305.]], dtype=float32)
>>> run(17, np.float32([5, -5]), np.float32([3, 3]))  # REMAINDER
array([-1.,  1.], dtype=float32)
>>> run("RSUB", a[:1], with_scalar=True, scalar=10)
array([[10.,  9.]], dtype=float32)
>>> run("ADD", np.ones((2, 3, 4), np.float32), np.ones((3, 4), np.float32))  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
bcast.core.errors.BroadcastError: ncnn: cannot broadcast A (2,3,4) with B (3,4): ... garbage of shape (3,4,4)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, cast
from collections.abc import Callable, Collection, Container, Sequence

import numpy as np

from ...core._format import brief, format_shape
from ...core.errors import InputError
from ...core.plan import Plan
from ...rules import infer
from .op_types import FROM_ONNX, OP_TYPES
from ...run import _fast
from ...run.execute import MemoryBudgetError, run_plan
from ...run.kernel import elementwise, natural_ufunc, std_max, std_min, ufunc_kernel
from .._blocks import blocks
from .._op import Op as _Op

__all__ = ["FROM_ONNX", "OPS", "Op", "op", "ops", "plan", "run"]

#: ncnn blobs have rank 1 to 4: [w], [w,h], [w,h,c], [w,h,d,c].
MAX_RANK = 4


# --------------------------------------------------------------------------- the kernels
# Each is ncnn's functor f(x, y) of src/layer/binaryop.cpp, in IEEE float32:
# kernel(x, y, out=out) writes f(x, y) into out (all three of the output's shape).


def _floor_divide(x, y, out):  # floorf(x / y)
    np.divide(x, y, out=out)
    np.floor(out, out=out)


def _remainder(x, y, out):
    """C's remainderf: x - n*y with n = x/y rounded to nearest, ties to even; exact.

    fmod(x, 2|y|) is exact and keeps n's parity; one correction brings it into
    [-|y|/2, |y|/2].  float64 holds every step exactly."""
    x64 = x.astype(np.float64)
    y64 = np.abs(y.astype(np.float64))
    r = np.fmod(x64, 2 * y64)
    size, sign = np.abs(r), np.sign(r)
    r -= sign * np.where(size >= 1.5 * y64, 2 * y64, np.where(size > 0.5 * y64, y64, 0.0))
    out[...] = np.copysign(r, np.where(r == 0, x64, r))  # a zero result has x's sign


def _max(x, y, out):
    std_max(x, y, out)


def _min(x, y, out):
    std_min(x, y, out)


def _logaddexp(x, y, out):  # max + log1pf(expf(min - max)), float32 throughout
    hi, lo = std_max(x, y), std_min(x, y)
    out[...] = hi + np.log1p(np.exp(lo - hi))


def _blocked(kernel: Callable, itemsize: int) -> Callable:
    """``kernel`` run block by block on slices of the views (:mod:`bcast.frameworks._blocks`, its
    temporaries of ``itemsize`` bytes an element), so none grows with the output."""

    def run_blocks(x, y, out):
        for at in blocks(out.shape, itemsize):
            kernel(x[at], y[at], out[at])

    run_blocks.__name__ = kernel.__name__
    return run_blocks


@dataclass(frozen=True)
class Op(_Op):
    """One BinaryOp op type: its ``name`` (and the checks of a call: :class:`bcast.frameworks._op.Op`)
    and ncnn's number of it, ``code``.

    ``kernel(x, y, out=out)`` computes ncnn's functor for the op (before any
    swap); ``swap`` is set for the R-ops, which apply it to ``(b, a)``.

    ``ulps`` is how far, in float32 units in the last place, the x86 wheel's
    result may be from the functor's on finite inputs (0: bit-exact), counted
    at the magnitude of the result, or with ``ulps_at="operands"`` at the
    largest of |a|, |b| and |result| (LOGADDEXP's ``max + log1p(...)`` cancels
    near 0, in the functor and in the wheel alike).  For POW and RPOW it holds
    for |exponent * ln(base)| <= 4: the wheel's ``pow_ps`` is
    ``exp(y * log(x))``, whose error grows by about one ulp per unit of it.
    """

    code: int
    kernel: Callable
    swap: bool = False
    ulps: int = 0
    ulps_at: str = "result"

    framework = "ncnn BinaryOp"

    def input_names(self, n: int) -> tuple[str, ...]:
        return ("A", "B")[:n]

    def arity_message(self, inputs: Sequence, allowed: Container[int]) -> str:
        if len(inputs) > 1:
            return f"{self.where}: with_scalar=True takes one input; B is the scalar= value, got B {brief(inputs[1])}"
        return f"{self.where}: two inputs needed (or with_scalar=True and scalar=); got A only"

    def dtype_message(self, named: Sequence, name: str, tv: str, dtype: Any, allowed: Collection[str],
                      context: Any) -> str:
        return (f"{self.where}: input {name} must be float32 (ncnn computes in fp32); got {dtype}: "
                "convert it with .astype(np.float32)")

    def __call__(self, a, b, out):
        x, y = (b, a) if self.swap else (a, b)
        return self.kernel(x, y, out=out)


# float32 in, float32 out: marked as their ufunc, the small-op fast path calls it as it is
_ADD, _SUB, _MUL, _DIV = ufunc_kernel(np.add), ufunc_kernel(np.subtract), ufunc_kernel(np.multiply), \
    ufunc_kernel(np.divide)
_POW, _ATAN2, _FMOD = ufunc_kernel(np.power), ufunc_kernel(np.arctan2), ufunc_kernel(np.fmod)
# (a mask of bools; five float32 temporaries; nine float64 ones, in two threads: blocks of 2^12 elements)
_MAX, _MIN, _LOGADDEXP = _blocked(_max, 1), _blocked(_min, 1), _blocked(_logaddexp, 8)
_FLOOR_DIVIDE, _REMAINDER = _floor_divide, _blocked(_remainder, 32)

# The wheel's vector bodies: DIV by a reciprocal estimate and one Newton step
# (measured up to 3 ulp), pow_ps/atan2_ps/logaddexp_ps approximations.
#: Every op type, at its ncnn number.  The only place that knows op names.
OPS = (
    Op("ADD", 0, _ADD),
    Op("SUB", 1, _SUB),
    Op("MUL", 2, _MUL),
    Op("DIV", 3, _DIV, ulps=4),
    Op("MAX", 4, _MAX),
    Op("MIN", 5, _MIN),
    Op("POW", 6, _POW, ulps=8),
    Op("RSUB", 7, _SUB, swap=True),
    Op("RDIV", 8, _DIV, swap=True, ulps=4),
    Op("RPOW", 9, _POW, swap=True, ulps=8),
    Op("ATAN2", 10, _ATAN2, ulps=6),
    Op("RATAN2", 11, _ATAN2, swap=True, ulps=6),
    Op("FMOD", 12, _FMOD),
    Op("RFMOD", 13, _FMOD, swap=True),
    Op("LOGADDEXP", 14, _LOGADDEXP, ulps=6, ulps_at="operands"),
    Op("FLOOR_DIVIDE", 15, _FLOOR_DIVIDE),
    Op("RFLOOR_DIVIDE", 16, _FLOOR_DIVIDE, swap=True),
    Op("REMAINDER", 17, _REMAINDER),
    Op("RREMAINDER", 18, _REMAINDER, swap=True),
)
_BY_NAME = {o.name: o for o in OPS}

assert tuple(_BY_NAME) == OP_TYPES, "OPS are the op types of .op_types, at their numbers"
assert [o.code for o in OPS] == list(range(len(OPS))), "OPS must be listed at their ncnn numbers"
assert len(_BY_NAME) == len(OPS), "op names must be unique"


def ops() -> tuple:
    """The op type names, at their ncnn numbers.

    >>> ops()[:4], ops()[17]
    (('ADD', 'SUB', 'MUL', 'DIV'), 'REMAINDER')
    """
    return tuple(o.name for o in OPS)


def op(op_type) -> Op:
    """The :class:`Op` for an op type: ncnn's number (0-18) or its name (any case).

    >>> op(8).name, op("rdiv").code
    ('RDIV', 8)
    """
    if isinstance(op_type, str):
        found = _BY_NAME.get(op_type.strip().upper())
        if found is not None:
            return found
    elif isinstance(op_type, numbers.Integral) and not isinstance(op_type, bool) and 0 <= int(op_type) < len(OPS):
        return OPS[int(op_type)]
    raise InputError(
        f"ncnn BinaryOp: op_type must be 0-{len(OPS) - 1} or a name ({', '.join(ops())}); got {brief(op_type)}"
    )


# --------------------------------------------------------------------------- checking and running


_FLOAT32 = {"T": ("float32",)}


def _check_blob(o: Op, name: str, x) -> None:
    where = f"ncnn BinaryOp {o.name}: input {name}"
    if not isinstance(x, np.ndarray):
        raise InputError(f"{where} must be a numpy float32 array (an ncnn blob); got {type(x).__name__} {brief(x)}")
    o.check_dtypes([(name, "T", x.dtype)], _FLOAT32, type_name=str)  # str: a big-endian float32 is not one
    if not 1 <= x.ndim <= MAX_RANK:
        hint = "; a scalar B is the with_scalar=True form" if x.ndim == 0 else ""
        raise InputError(
            f"{where} must have rank 1 to {MAX_RANK} (an ncnn blob: [w], [w,h], [w,h,c], [w,h,d,c]); "
            f"got shape {format_shape(x.shape)}{hint}"
        )


def _check_scalar(o: Op, scalar) -> np.float32:
    """The scalar as ncnn reads param 2 (strtof): rounded to float32, +-inf past its range."""
    if isinstance(scalar, bool) or not isinstance(scalar, numbers.Real):
        raise InputError(f"ncnn BinaryOp {o.name}: scalar must be a real number (param 2=b); got {brief(scalar)}")
    try:
        value = float(scalar)
    except OverflowError:  # an int past float64's range
        value = math.inf if cast(Any, scalar) > 0 else -math.inf  # numbers.Real's stubs do not order it with 0
    with np.errstate(over="ignore"):
        return np.float32(value)


def _check_flag(o: Op, name: str, value) -> bool:
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral) and value in (0, 1)):
        return bool(value)
    raise InputError(f"ncnn BinaryOp {o.name}: {name} must be True or False; got {brief(value)}")


def plan(op_type, a_shape, b_shape=(), *, ncnn_order: bool = False) -> Plan:
    """The Plan of one BinaryOp on blobs of these numpy-order shapes (``b_shape=()``:
    the with_scalar form).  ``ncnn_order`` only changes how errors write shapes.

    >>> plan("ADD", (4, 3, 2), (4, 3)).aligned_shape(1)
    (4, 3, 1)
    """
    op(op_type)  # checked here too: a plan is for a known op
    shapes = (tuple(a_shape), tuple(b_shape))
    if ncnn_order:
        shapes = (shapes[0][::-1], shapes[1][::-1])
    return infer(*shapes, rule="ncnn", ncnn_order=bool(ncnn_order))


def run(op_type, a, b=None, ncnn_order: bool = False, with_scalar: bool = False, scalar=0.0, out=None):
    """Compute ncnn's BinaryOp ``op_type`` on float32 arrays, broadcast as ncnn does.

    Parameters
    ----------
    op_type : int or str
        ncnn's op type, 0-18, or its name (:func:`ops`): ``ADD``, ``SUB``,
        ``MUL``, ``DIV``, ``MAX``, ``MIN``, ``POW``, ``RSUB``, ``RDIV``,
        ``RPOW``, ``ATAN2``, ``RATAN2``, ``FMOD``, ``RFMOD``, ``LOGADDEXP``,
        ``FLOOR_DIVIDE``, ``RFLOOR_DIVIDE``, ``REMAINDER``, ``RREMAINDER``.
    a, b : numpy.ndarray
        float32 arrays of rank 1 to 4 in numpy order (``ncnn.Mat(a)`` is the
        blob).  ``b`` is omitted in the with_scalar form.
    ncnn_order : bool
        Errors write shapes in ncnn's [w,h,d,c] order and name axes w/h/d/c.
        The arrays themselves are always in numpy order.
    with_scalar : bool
        ncnn's one-input form (param ``1=1``): ``op(a, scalar)`` element-wise.
    scalar : float
        The B value of the with_scalar form (param ``2``), rounded to float32.
    out : numpy.ndarray, optional
        A writable float32 array of the output shape to write into.

    Returns
    -------
    numpy.ndarray
        float32, of the output shape (``out`` when given).

    Raises
    ------
    BroadcastError
        The pair is not one ncnn's broadcasting rules define (ncnn would
        silently return garbage), or a blob has a 0-size dim (ncnn crashes).
    InputError
        Unknown op type; an input that is not a float32 array of rank 1-4;
        ``b`` missing, or given with ``with_scalar``; a bad ``out``.
    MemoryBudgetError
        The output would exceed the memory budget; nothing was allocated.

    Examples
    --------
    >>> import numpy as np
    >>> run("SUB", np.float32([[1, 2], [3, 4]]), np.float32([10, 20]))  # the tie: B on axis 0
    array([[ -9.,  -8.],
           [-17., -16.]], dtype=float32)
    """
    if with_scalar is False and ncnn_order is False and type(a) is np.ndarray and type(b) is np.ndarray:
        try:  # prepared calls: a dict lookup
            fast = _FAST_GET((op_type, a.dtype, a.shape, b.dtype, b.shape))
        except TypeError:  # an unhashable op type: the full path says what is wrong
            fast = _fast.MISS
        if fast is None:
            fast = _fast_build(op_type, a, b)
        if type(fast) is tuple:  # (ufunc, runner): numpy broadcasts as ncnn does, small
            if out is None:  # the ufunc as it is, warnings off
                return fast[0](a, b)
            fast = fast[1]
        if fast is not _fast.MISS:
            return fast((a, b), out)
    o = op(op_type)
    with_scalar, ncnn_order = _check_flag(o, "with_scalar", with_scalar), _check_flag(o, "ncnn_order", ncnn_order)
    _check_blob(o, "A", a)
    o.check_arity([a] if b is None else [a, b], (1,) if with_scalar else (2,))
    if with_scalar:
        arrays = [a, np.asarray(_check_scalar(o, scalar))]
    else:
        _check_blob(o, "B", b)
        arrays = [a, b]
    p = plan(o.code, a.shape, arrays[1].shape, ncnn_order=ncnn_order)
    try:
        return run_plan(p, _writer(o), arrays, out=out, dtype=np.float32)
    except MemoryBudgetError:
        raise
    except InputError as e:  # a bad out=
        raise InputError(f"ncnn BinaryOp {o.name}: {e}") from None


_FAST = _fast.cache()  # (op type, dtype, shape, dtype, shape) -> (ufunc, runner), a runner, or MISS (full path)
_FAST_GET = _FAST.get


def _fast_build(op_type, a, b):
    """The runner of a two-blob call (remembered), or MISS (remembered too; the full path then
    runs, and raises what is wrong): with the ufunc itself when the call is small and numpy
    broadcasts the arrays as ncnn does, else :func:`bcast.run._fast.runner`, or run_plan without
    the checks where numpy cannot express ncnn's alignment of a small call."""
    try:
        o = op(op_type)
        _check_blob(o, "A", a)
        _check_blob(o, "B", b)
        prepared = _fast.prepared(plan(o.code, a.shape, b.shape))
    except (InputError, ValueError):  # BroadcastError is a ValueError
        prepared = None
    runner: Any = _fast.MISS
    if prepared is not None:
        ufunc, p, writer = natural_ufunc(o.kernel), prepared.plan, _writer(o)
        if prepared.small and prepared.reshapes is None:
            runner = lambda inputs, out: run_plan(p, writer, list(inputs), out=out, dtype=np.float32)  # noqa: E731
        else:
            runner = _fast.runner(prepared, lambda views, out: _fast.quiet(o, *views, out), np.float32, ufunc,
                                  ufunc is not None, swapped=o.swap, func=writer, dtypes=(a.dtype, b.dtype))
        runner = _named(o, runner)
        if prepared.small and prepared.native and ufunc is not None and not o.swap:
            runner = (_fast.quieted(ufunc), runner)  # float32 in, float32 out: run() calls it on the arrays
    _FAST.put((op_type, a.dtype, a.shape, b.dtype, b.shape), runner)
    return runner


def _named(o: Op, runner: Callable) -> Callable:
    """``runner`` whose refusals (a bad out=) name the op, as the full path's do."""

    def run(inputs, out):
        try:
            return runner(inputs, out)
        except MemoryBudgetError:
            raise
        except InputError as e:
            raise InputError(f"ncnn BinaryOp {o.name}: {e}") from None

    return run


def _writer(o: Op) -> Callable:
    """The callable run_plan applies to the views: allocates the output unless given one."""

    def write(x, y, out=None):
        if out is None:
            out = np.empty(np.broadcast_shapes(x.shape, y.shape), np.float32)
        with np.errstate(all="ignore"):  # inf, NaN: ncnn's values, no warnings
            o(x, y, out)
        return out

    write.__name__ = f"ncnn {o.name}"
    ufunc = natural_ufunc(o.kernel)  # bcast.run.parallel may run it as a compiled loop
    return elementwise(write, ufunc, swapped=o.swap)
