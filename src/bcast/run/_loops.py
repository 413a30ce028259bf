"""The compiled loops of :mod:`bcast.run._kernels` (imports numba: only that module imports this one).

One loop function per input count (:func:`rows2`, :func:`rows3`), compiled by
numba once per op, dtype and remainder width: the op and the width are literals
(``numba.literally``), so each compiled loop holds that op's code alone (~0.9 s to compile here,
cached on disk).  A loop computes rows of the output: the output, C-contiguous,
is seen as outer axes (``shape``, one or more) times an inner run of ``K``
elements; each input has an element stride per outer axis and one inner stride
(0: one value for the whole run, 1: contiguous, else any).  The inner loops are
written out for the 0/1 strides so that LLVM vectorizes them.

Values are numpy's, bit for bit:

- integers wrap, as numpy's do (add, subtract and multiply at the operands' own width, so
  that they vectorize at it);
- float16 is stored as its bits (uint16: numba has no float16 on the CPU) and
  computed in float32, rounded back once per numpy operation: numpy's own
  float16 loops convert to float32, compute and round back the same way;
- maximum/minimum keep numpy's choices (a NaN in either input wins; of two
  equal values float32/float64 take the second, float16 the first);
- float16 ``pow`` calls C's powf on the float32 values (numba's float32 power), as
  numpy's float16 loop does, with its answer for a signaling NaN; integer ``pow`` is
  ONNX's (squaring, wrapping in the type: numpy's power in uint64 has the same low bits;
  a negative exponent 1 / x**-y truncated; exponents all from 0 to 63 take the product of
  the six squares their bits pick, :func:`_ipow6`, which vectorizes);
- the integer ``div`` of ONNX (a quotient truncated toward zero) divides in
  float32 for 8- and 16-bit integers and in float64 for 32-bit ones, which is
  exact: with ``|a| < 2**p`` (p = 24, 53 the floats' precision) the rounding
  error of ``a / b`` is below ``|a / b| * 2**-p < 1 / |b|``, the least distance
  from a quotient that is not a whole number to the next whole number, so the
  truncation never crosses one.  64-bit integers divide as C does (LLVM's sdiv
  and udiv), the zero divisor and MIN / -1 answered before; int64 inputs all
  within +-2**51 divide in float64 too (:func:`_idiv53`, exact by the same
  argument), which vectorizes.

No streaming (non-temporal) stores: measured against plain stores on this
machine's outputs of 2**22 to 2**26 float32, float16 and int8 elements, a row
computed into an L1 buffer and streamed out cost 1.1-3.5x the plain loop in one
thread (numpy's own same-shape float32 Add of 2**26: 20.3 ms; plain 19.9;
streamed 24.5).
"""

from __future__ import annotations

import contextlib
from typing import Any, cast

import numba
import numpy as np
from llvmlite import binding as _llvm, ir  # type: ignore[import-untyped]  # llvmlite ships no type information
from numba import types
from numba.core.compiler import Compiler
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload

from ._share import _add, arrive, claim, depart, halt, settle, unasked

_compiler_lock: Any  # the lock every numba compile of the process takes (numba.core: not numba's documented API)
try:
    from numba.core.compiler_lock import global_compiler_lock as _compiler_lock
except ImportError:  # pragma: no cover - a numba without it: the option is set and reset unlocked
    _compiler_lock = contextlib.nullcontext()

__all__ = ["HALF", "entry", "halt", "rows2", "rows3", "settle", "unasked", "within"]

_u = np.uint64
#: added to an op's code: its arrays hold float16 bits (uint16)
HALF = 100

# the op codes (bcast.run._kernels._BINARY names the ufuncs' and maps the marked loops to these)
ADD, SUB, MUL, DIV, MAX, MIN, GT, GE, LT, LE, EQ, NE, IDIV, POW, IDIV53, IPOW6 = range(16)
WHERE, SUM, MEAN = 20, 21, 22


# --------------------------------------------------------------------------- LLVM pieces


@intrinsic
def _h2f_ir(typingctx, bits):
    """float16 bits (uint16) -> float32, exactly."""

    def codegen(context, builder, sig, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())

    return types.float32(types.uint16), codegen


@intrinsic
def _f2h_ir(typingctx, value):
    """float32 -> float16 bits (uint16), rounded to nearest even."""

    def codegen(context, builder, sig, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))

    return types.uint16(types.float32), codegen


# numba calls an intrinsic with its typing context first: to mypy, ours are functions of their values
_h2f: Any = _h2f_ir
_f2h: Any = _f2h_ir


def _wrapping(name: str):
    """An integer op of LLVM on the operands' own width: it wraps as numpy's does, and vectorizes
    at that width (numba's own integer arithmetic is 64-bit: 8x fewer int8 lanes per vector)."""

    @intrinsic
    def op(typingctx, a, b):
        if not (isinstance(a, types.Integer) and a == b):
            return None

        def codegen(context, builder, sig, args):
            return getattr(builder, name)(*args)

        return a(a, b), codegen

    return op


_iadd, _isub, _imul = _wrapping("add"), _wrapping("sub"), _wrapping("mul")
# C's integer division (truncated toward zero); the caller never divides by 0, nor MIN by -1
_sdiv, _udiv = _wrapping("sdiv"), _wrapping("udiv")
_iand, _ishr = _wrapping("and_"), _wrapping("lshr")  # (numba's own widen 32-bit operands to 64)


@intrinsic
def _one_ir(typingctx, a):
    """1 in the integer type of ``a`` (numba would type a literal 1 as int64)."""
    if not isinstance(a, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return ir.Constant(args[0].type, 1)

    return a(a), codegen


_one: Any = _one_ir

#: 1.5 * 2**52 and its bits: an int64 of +-2**51 added to the bits is a float64 of [2**52, 2**53) whose mantissa
#: holds the integer plus 2**51 (the float64 less 1.5 * 2**52 is the integer); a whole float64 of +-2**51 plus
#: 1.5 * 2**52 likewise has the integer in its bits.  Two adds and a bitcast, so the conversions vectorize
#: with AVX2 too (x86 converts int64 to and from float64 in a vector only from AVX-512DQ).
_MAGIC = 1.5 * 2.0**52
_MAGIC_BITS = int(np.float64(_MAGIC).view(np.int64))  # 0x4338000000000000


@intrinsic
def _i2d_ir(typingctx, x):
    """An int64 within +-2**51 -> float64, exactly (any other: garbage)."""
    if x != types.int64:
        return None

    def codegen(context, builder, sig, args):
        bits = builder.add(args[0], ir.Constant(ir.IntType(64), _MAGIC_BITS))
        return builder.fsub(builder.bitcast(bits, ir.DoubleType()), ir.Constant(ir.DoubleType(), _MAGIC))

    return types.float64(types.int64), codegen


@intrinsic
def _d2i_ir(typingctx, v):
    """A float64 within +-2**51 -> int64, truncated toward zero (LLVM's trunc, then the bits of the whole
    number plus 1.5 * 2**52)."""
    if v != types.float64:
        return None

    def codegen(context, builder, sig, args):
        trunc = builder.module.declare_intrinsic("llvm.trunc", [ir.DoubleType()])
        whole = builder.fadd(builder.call(trunc, [args[0]]), ir.Constant(ir.DoubleType(), _MAGIC))
        return builder.sub(builder.bitcast(whole, ir.IntType(64)), ir.Constant(ir.IntType(64), _MAGIC_BITS))

    return types.int64(types.float64), codegen


_i2d: Any = _i2d_ir
_d2i: Any = _d2i_ir


# --------------------------------------------------------------------------- the ops


def _literal(code) -> int:
    if not isinstance(code, types.IntegerLiteral):
        raise TypingError("the op code must be a literal")
    return code.literal_value


def _op(code, *values):  # pragma: no cover - replaced by its overload in compiled code
    """The value to store for op ``code`` on the loaded elements ``values``."""


def _half_ops(op):  # noqa: C901 - one branch per op, read as a table
    """The op on float16 bits (uint16), computed in float32 as numpy's float16 loops do."""
    if op == ADD:
        return lambda code, a, b: _f2h(_h2f(a) + _h2f(b))
    if op == SUB:
        return lambda code, a, b: _f2h(_h2f(a) - _h2f(b))
    if op == MUL:
        return lambda code, a, b: _f2h(_h2f(a) * _h2f(b))
    if op in (DIV, IDIV):
        return lambda code, a, b: _f2h(_h2f(a) / _h2f(b))
    if op == MAX:  # numpy's float16 maximum: (a >= b or isnan(a)) ? a : b
        return lambda code, a, b: _pick((_h2f(a) >= _h2f(b)) | np.isnan(_h2f(a)), a, b)
    if op == MIN:
        return lambda code, a, b: _pick((_h2f(a) <= _h2f(b)) | np.isnan(_h2f(a)), a, b)
    if op == MEAN:
        return lambda code, a, b: _f2h(_h2f(_f2h(_h2f(a) + _h2f(b))) / np.float32(2))
    if op == POW:
        return lambda code, a, b: _half_pow(a, b)
    return _compare(op, _h2f)


@numba.njit(inline="always")
def _signaling(bits):  # pragma: no cover - compiled
    """Whether float16 ``bits`` are a signaling NaN (exponent all ones, quiet bit clear, payload not 0)."""
    return (bits & 0x7E00) == 0x7C00 and (bits & 0x3FF) != 0


@numba.njit(inline="always")
def _half_pow(a, b):  # pragma: no cover - compiled
    """numpy's float16 power: C's powf in float32, rounded once.  numpy hands powf a signaling NaN as
    it is, where ``_h2f`` quiets it; C's powf gives 1 for pow(1, y) and pow(x, 0) but returns
    ``x + y`` (a NaN) where that NaN is signaling: so here too."""
    x, y = _h2f(a), _h2f(b)
    r = np.float32(x ** y)
    if (_signaling(b) and x == np.float32(1)) or (_signaling(a) and y == np.float32(0)):
        r = x + y
    return _f2h(r)


@numba.njit
def _pick(take_a, a, b):  # pragma: no cover - compiled
    """``a`` where ``take_a``, else ``b`` (a select: no branch in the vectorized loop)."""
    if take_a:
        return a
    return b


def _ident(x):  # pragma: no cover - inlined
    return x


_ident_jit = numba.njit(_ident)


def _compare(op, load):
    if op == GT:
        return lambda code, a, b: load(a) > load(b)
    if op == GE:
        return lambda code, a, b: load(a) >= load(b)
    if op == LT:
        return lambda code, a, b: load(a) < load(b)
    if op == LE:
        return lambda code, a, b: load(a) <= load(b)
    if op == EQ:
        return lambda code, a, b: load(a) == load(b)
    if op == NE:
        return lambda code, a, b: load(a) != load(b)
    raise TypingError(f"no compiled op {op}")


def _plain_ops(op, a):  # noqa: C901 - one branch per op, read as a table
    """The op on float32/float64, integers and bool, as numpy's loops compute it."""
    floating = isinstance(a, types.Float)
    if op in (ADD, SUB, MUL) and isinstance(a, types.Integer):
        return (lambda code, a, b: _iadd(a, b), lambda code, a, b: _isub(a, b),
                lambda code, a, b: _imul(a, b))[op]
    if op == ADD:
        return lambda code, a, b: a + b
    if op == SUB:
        return lambda code, a, b: a - b
    if op == MUL:
        return lambda code, a, b: a * b
    if op == DIV or (op == IDIV and floating):
        return lambda code, a, b: a / b
    if op == IDIV:
        return _idiv(a)
    if op == IDIV53:
        return _idiv53(a)
    if op == IPOW6:
        if not isinstance(a, types.Integer):
            raise TypingError("the 6-bit power is for integers")
        return lambda code, a, b: _ipow6(a, b)
    if op == MAX:
        if floating:  # numpy's: (a > b or isnan(a)) ? a : b -- of two equal values the second
            return lambda code, a, b: _pick((a > b) | np.isnan(a), a, b)
        return lambda code, a, b: _pick(a > b, a, b)
    if op == MIN:
        if floating:
            return lambda code, a, b: _pick((a < b) | np.isnan(a), a, b)
        return lambda code, a, b: _pick(a < b, a, b)
    if op == MEAN:
        return _mean2(a)
    if op == POW:
        if not isinstance(a, types.Integer):
            raise TypingError("a compiled power is for float16 and integers")
        if a in types.signed_domain:
            return lambda code, a, b: _ipow_signed(a, b)
        return lambda code, a, b: _ipow_unsigned(a, b)
    return _compare(op, _ident_jit)


@numba.njit(inline="always")
def _ipow_unsigned(a, b):  # pragma: no cover - compiled
    """``a ** b`` wrapping in the type (the low bits of numpy's power in uint64), by squaring."""
    r, base, e, zero = _one(a), a, b, _isub(b, b)
    while e != zero:
        if _iand(e, _one(e)) != zero:
            r = _imul(r, base)
        base = _imul(base, base)
        e = _ishr(e, _one(e))
    return r


@numba.njit(inline="always")
def _ipow_signed(a, b):  # pragma: no cover - compiled
    """ONNX's integer Pow: as :func:`_ipow_unsigned` for ``b >= 0``; for ``b < 0``, 1 / a**-b truncated
    toward zero: 1 for a == 1, +-1 for a == -1 (by b's parity), else 0 (0 for a == 0 too)."""
    zero, one = _isub(a, a), _one(a)
    if b >= _isub(b, b):
        return _ipow_unsigned(a, b)
    if a == one:
        return one
    if a == _isub(zero, one):
        return _isub(zero, one) if _iand(b, _one(b)) != _isub(b, b) else one
    return zero


@numba.njit(inline="always")
def _ipow6(a, b):  # pragma: no cover - compiled
    """``a ** b`` for ``0 <= b < 64`` (the caller checks), as :func:`_ipow_unsigned` computes it: the product
    of the squares a, a**2, a**4 ... a**32 that b's bits pick, wrapping in the type.  Multiplication modulo
    2**n commutes, so the bits are those of the squaring loop; with no loop per element, it vectorizes."""
    one, zero, bit = _one(a), _isub(b, b), _one(b)
    r = _pick(_iand(b, bit) != zero, a, one)
    for _ in range(5):  # a**2, a**4, ... a**32, each taken where its bit of b is set (unrolled: 5 steps)
        a = _imul(a, a)
        b = _ishr(b, bit)
        r = _imul(r, _pick(_iand(b, bit) != zero, a, one))
    return r


def _mean2(a):
    if a == types.float32:
        return lambda code, a, b: (a + b) / np.float32(2)
    if isinstance(a, types.Float):
        return lambda code, a, b: (a + b) / 2.0
    raise TypingError("Mean is for floats")


def _idiv(a):
    """ONNX's integer Div: truncated toward zero; 0 for a zero divisor (numpy's floor_divide's
    value); MIN / -1 wraps to MIN."""
    if a.bitwidth <= 16:
        def small(code, a, b):  # a float32 -> int32 conversion truncates, and vectorizes 1.7x faster than to int64
            q = np.int32(np.float32(a) / np.float32(b if b != 0 else 1))
            return q if b != 0 else np.int32(0)
        return small
    if a.bitwidth == 32:  # float64 -> int64 by _d2i: numba's conversion vectorizes on x86 only from AVX-512DQ
        def middle(code, a, b):
            q = _d2i(np.float64(a) / np.float64(b if b != 0 else 1))  # (truncated)
            return q if b != 0 else np.int64(0)
        return middle
    if a.signed:  # LLVM's sdiv is C's division; its two undefined cases are answered by hand
        def wide(code, a, b):
            safe = b != 0 and b != -1
            q = _sdiv(a, b if safe else _one(b))
            if safe:
                return q
            return _isub(a - a, a) if b == -1 else a - a  # -MIN wraps to MIN; a zero divisor gives 0
        return wide

    def unsigned(code, a, b):
        q = _udiv(a, b if b != 0 else _one(b))
        return q if b != 0 else a - a
    return unsigned


def _idiv53(a):
    """ONNX's int64 Div where every dividend and divisor is within +-2**51 (the caller checks): the quotient
    in float64, truncated.  Exact, by the argument of the 32-bit division above: the operands convert
    exactly, and with ``|a| < 2**53`` the rounding error of ``a / b`` is below ``1 / |b|``, the least distance
    from a quotient that is not a whole number to the next whole number.  (The one-step correction this
    loop took before, on +-2**53, is not needed: at 2**53 itself the argument fails, within 2**51 it holds.)
    Vectorizes, where LLVM's sdiv does not: the conversions to and from float64 are :func:`_i2d` and
    :func:`_d2i` (two adds and a bitcast), not numba's, which x86 vectorizes only from AVX-512DQ.  Measured on
    an AMD EPYC with AVX2 alone, 2**18 elements, one thread, into ``out=``: 0.68-1.18 ms with numba's
    conversions and the correction, 0.33-0.52 with these and the correction, 0.20-0.29 with neither
    (OpenVINO at two threads 0.19-0.28)."""
    if not (a.signed and a.bitwidth == 64):
        raise TypingError("the 51-bit division is for int64")

    def near(code, a, b):
        q = _d2i(_i2d(a) / _i2d(b if b != 0 else _one(b)))  # (truncated)
        return q if b != 0 else a - a
    return near


@overload(_op)
def _op_typed(code, a, b):
    c = _literal(code)
    return _half_ops(c - HALF) if c >= HALF else _plain_ops(c, a)


def _op3(code, a, b, c):  # pragma: no cover - replaced by its overload in compiled code
    """The value to store for op ``code`` of three inputs."""


@overload(_op3)
def _op3_typed(code, a, b, c):
    k = _literal(code)
    half, op = k >= HALF, k % HALF
    if op == WHERE:
        return lambda code, a, b, c: _pick(a, b, c)
    if op in (MAX, MIN):
        inner = op + HALF if half else op
        return lambda code, a, b, c: _op(inner, _op(inner, a, b), c)
    if op in (SUM, MEAN) and half:
        if op == SUM:
            return lambda code, a, b, c: _f2h(_h2f(_f2h(_h2f(a) + _h2f(b))) + _h2f(c))
        return lambda code, a, b, c: _f2h(_h2f(_f2h(_h2f(_f2h(_h2f(a) + _h2f(b))) + _h2f(c))) / np.float32(3))
    if op == SUM:
        return lambda code, a, b, c: (a + b) + c
    if op == MEAN and b == types.float32:
        return lambda code, a, b, c: ((a + b) + c) / np.float32(3)
    if op == MEAN and isinstance(b, types.Float):
        return lambda code, a, b, c: ((a + b) + c) / 3.0
    raise TypingError(f"no compiled op {k} of three inputs")


# --------------------------------------------------------------------------- the inner runs


@numba.njit(inline="always")
def _run2(code, dst, d, n, x, px, xi, y, py, yi):  # pragma: no cover - compiled
    """``dst[d + e] = op(x[px + e*xi], y[py + e*yi])`` for e < n.  An operand of stride 0 is
    read in the loop, not hoisted into a variable before it: numba's inlining then gives each
    branch's variables one type, and LLVM vectorizes (measured, rows of 16 float32 with one
    hoisted operand in each of two branches: 20x slower)."""
    if xi == 1 and yi == 1:
        for e in range(n):
            dst[d + e] = _op(code, x[px + e], y[py + e])
    elif xi == 1 and yi == 0:
        for e in range(n):
            dst[d + e] = _op(code, x[px + e], y[py])
    elif xi == 0 and yi == 1:
        for e in range(n):
            dst[d + e] = _op(code, x[px], y[py + e])
    else:
        for e in range(n):
            dst[d + e] = _op(code, x[px + e * xi], y[py + e * yi])


@numba.njit(inline="always")
def _run3(code, dst, d, n, x, px, xi, y, py, yi, z, pz, zi):  # pragma: no cover - compiled
    """``dst[d + e] = op(x[px + e*xi], y[py + e*yi], z[pz + e*zi])`` for e < n (as :func:`_run2`)."""
    if xi == 1 and yi == 1 and zi == 1:
        for e in range(n):
            dst[d + e] = _op3(code, x[px + e], y[py + e], z[pz + e])
    elif xi == 1 and yi == 1 and zi == 0:
        for e in range(n):
            dst[d + e] = _op3(code, x[px + e], y[py + e], z[pz])
    elif xi == 1 and yi == 0 and zi == 1:
        for e in range(n):
            dst[d + e] = _op3(code, x[px + e], y[py], z[pz + e])
    elif xi == 1 and yi == 0 and zi == 0:
        for e in range(n):
            dst[d + e] = _op3(code, x[px + e], y[py], z[pz])
    elif xi == 0 and yi == 1 and zi == 1:
        for e in range(n):
            dst[d + e] = _op3(code, x[px], y[py + e], z[pz + e])
    elif xi == 0 and yi == 1 and zi == 0:
        for e in range(n):
            dst[d + e] = _op3(code, x[px], y[py + e], z[pz])
    elif xi == 0 and yi == 0 and zi == 1:
        for e in range(n):
            dst[d + e] = _op3(code, x[px], y[py], z[pz + e])
    else:
        for e in range(n):
            dst[d + e] = _op3(code, x[px + e * xi], y[py + e * yi], z[pz + e * zi])


@numba.njit(inline="always")
def _index(t0, shape):  # pragma: no cover - compiled
    """The outer index of row ``t0`` (over the outer ``shape``), as an array the loop counts up."""
    idx = np.empty(shape.size, np.uint64)
    rest = t0
    for a in range(shape.size - 1, -1, -1):
        idx[a] = rest % shape[a]
        rest //= shape[a]
    return idx


@numba.njit(inline="always")
def _offset(idx, strides):  # pragma: no cover - compiled
    """The offset of the outer index ``idx`` in an array of ``strides``."""
    p = _u(0)
    for a in range(idx.size):
        p += idx[a] * strides[a]
    return p


@numba.njit(inline="always")
def _next_run(idx, shape):  # pragma: no cover - compiled
    """``idx`` (the start of a run of rows along the last outer axis) moved to the next run: the last
    axis wraps to 0, the axes before it count up."""
    last = shape.size - 1
    idx[last] = _u(0)
    for a in range(last - 1, -1, -1):
        idx[a] += _u(1)
        if idx[a] < shape[a]:
            return
        idx[a] = _u(0)


# --------------------------------------------------------------------------- the loops
#
# Indices are unsigned (strides are >= 0): numba then skips its negative-index wraparound and
# LLVM vectorizes the inner loops.  error_model="numpy": x / 0 is inf or nan, as in numpy.
# The op code is a literal: each op is compiled on its own, with only its own code.


class _NoAlias(Compiler):
    """numba's pipeline with its ``noalias`` flag (the one its parfors set where no argument aliases
    another): each pointer argument of the loop -- the arrays' data among them -- is marked noalias, so
    LLVM checks no overlap of ``out`` with an input before each vectorized run (without it: a check of
    every input against ``out`` per row).  True of every call: ``out`` shares no memory with an input
    (:func:`bcast.run._kernels.try_run` and :meth:`~bcast.run._kernels.Loop.run`'s callers check
    ``out=``; a fresh output is memory no live array holds), the inputs are only read (two inputs may be
    one array: reads of one place through two pointers break no noalias promise), and the stride arrays
    are the caller's own.  Measured, one thread, 2**18 output elements, rows of 32 (microseconds, before /
    after): int8 Max of three (16,1,32,1)(16,1,32)(16,1,32) 27.5 / 22.6, (16,16,32,32)(16,1,1,32)(16,1,1,32)
    22.1 / 18.6; int8 Where 24.0 / 21.8; float16 Mean of three 42.1 / 40.9; rows of 4096 and same-shape
    unchanged."""

    def define_pipelines(self):
        self.state.flags.noalias = True
        return super().define_pipelines()


@numba.njit(nogil=True, boundscheck=False, error_model="numpy", cache=True, pipeline_class=_NoAlias)
def rows2(code, lanes, out, K, shape, x, xs, xi, y, ys, yi, t0, t1, plan, bell):  # pragma: no cover - compiled
    """Rows of ``out`` (rows of K elements over the outer ``shape``, one axis at least): ``out[t*K + e] =
    op(x[px(t) + e*xi], y[py(t) + e*yi])``, ``px(t)`` the offset of row ``t`` by ``xs`` (one stride per
    outer axis).

    ``plan`` empty: rows ``t0 <= t < t1``, in this thread.  Else a thread of a shared call: ``t1`` 1, its
    lead, which has asked for ``t0`` parts (returns the tasks still running when it stopped watching);
    ``t1`` 0, a part (returns 0 after lingering).

    The rows along the last outer axis run in a loop of their own, its strides in registers: the outer
    index (an array, which the stores to ``out`` might alias for all LLVM knows) is counted up once per run
    of them, not once per row (measured, rows of 32 uint8: ~40% of the time was that count).  The op's
    loop (``_run2``, inlined) is called from one place: each place is compiled on its own (with two, a loop
    took 1.75 s to compile against 0.87 s)."""
    numba.literally(code)
    numba.literally(lanes)
    nk, ni, nj = _u(K), _u(xi), _u(yi)
    shared, n = arrive(plan, bell, t0, t1)
    r0, r1 = _u(t0), _u(t1)
    last = shape.size - 1
    nl, xl, yl = shape[last], xs[last], ys[last]
    while True:
        if shared:
            more, r0, r1 = claim(plan, n)
            if not more:
                break
        idx = _index(r0, shape)
        px, py = _offset(idx, xs), _offset(idx, ys)
        po = r0 * nk
        t = r0
        while t < r1:
            m = min(nl - idx[last], r1 - t)  # the rest of this run along the last axis
            for _ in range(m):
                _run2(code, out, po, nk, x, px, ni, y, py, nj)
                po += nk
                px += xl
                py += yl
            t += m
            if t >= r1:
                break
            _next_run(idx, shape)  # (once per run of rows: the offsets are worked out again)
            px, py = _offset(idx, xs), _offset(idx, ys)
        if not shared:
            return _u(0)
        _add(plan, _u(1), _u(1))
    return depart(plan, bell, n, t1)


@numba.njit(nogil=True, boundscheck=False, error_model="numpy", cache=True, pipeline_class=_NoAlias)
def rows3(code, lanes, out, K, shape, x, xs, xi, y, ys, yi, z, zs, zi, t0, t1, plan, bell):  # pragma: no cover
    """:func:`rows2` for ops of three inputs."""
    numba.literally(code)
    numba.literally(lanes)
    nk, ni, nj, nz = _u(K), _u(xi), _u(yi), _u(zi)
    shared, n = arrive(plan, bell, t0, t1)
    r0, r1 = _u(t0), _u(t1)
    last = shape.size - 1
    nl, xl, yl, zl = shape[last], xs[last], ys[last], zs[last]
    while True:
        if shared:
            more, r0, r1 = claim(plan, n)
            if not more:
                break
        idx = _index(r0, shape)
        px, py, pz = _offset(idx, xs), _offset(idx, ys), _offset(idx, zs)
        po = r0 * nk
        t = r0
        while t < r1:
            m = min(nl - idx[last], r1 - t)
            for _ in range(m):
                _run3(code, out, po, nk, x, px, ni, y, py, nj, z, pz, nz)
                po += nk
                px += xl
                py += yl
                pz += zl
            t += m
            if t >= r1:
                break
            _next_run(idx, shape)
            px, py, pz = _offset(idx, xs), _offset(idx, ys), _offset(idx, zs)
        if not shared:
            return _u(0)
        _add(plan, _u(1), _u(1))
    return depart(plan, bell, n, t1)


@contextlib.contextmanager
def _short_row_epilogues(vf: int):
    """LLVM's epilogue width set to ``vf`` (:func:`bcast.run._kernels.lanes` says which) for the compiles
    in this block, and set back to LLVM's default after: an LLVM option is the process's, so it is held under
    numba's compiler lock, which any numba compile in the process takes (another library's loops keep
    LLVM's choice)."""
    with _compiler_lock:
        _llvm.set_option("", f"-epilogue-vectorization-force-VF={vf}")
        try:
            yield
        finally:
            _llvm.set_option("", "-epilogue-vectorization-force-VF=1")  # 1: LLVM's default, not forced


@numba.njit(nogil=True, boundscheck=False, cache=True)
def _within(x, limit):  # pragma: no cover - compiled
    lo, hi = limit, -limit
    for i in range(x.size):
        lo = min(lo, x[i])
        hi = max(hi, x[i])
    return lo >= -limit and hi <= limit


def within() -> Any:
    """Whether every element of a 1-D C-contiguous int64 array is within +-``limit`` (int64): ``f(x,
    limit)``, one pass (the check of ONNX's int64 Div in float64, :func:`_idiv53`; numpy's ``min`` and
    ``max`` take two), compiled, or loaded from numba's cache, by this call, as an entry point that takes a
    read-only array or a writable one (one data model).  Measured, 2**22 elements (32 MiB) an input: 0.7 ms
    a pass; numpy's check of two inputs 3.9 ms of an int64 Div's 6.0."""
    x = np.zeros(1, np.int64)
    x.flags.writeable = False
    _within(x, np.int64(1))
    return cast(Any, _within.overloads[(numba.typeof(x), types.int64)]).entry_point


def entry(nin: int, code: int, lanes: int, *args):
    """The compiled loop of ``nin`` inputs for op ``code`` on arguments of the types of ``args``, its
    remainder (LLVM's epilogue) vectorized at ``lanes`` lanes (a literal too: each width its own compile),
    compiled, or loaded from numba's disk cache, by this call on them (give it an empty range), as its
    entry point: a call that skips numba's type dispatch (which, for a literal op code, would type the call
    again each time: milliseconds).  Its caller passes arguments of exactly these types (numba does not
    check them there)."""
    fn = rows2 if nin == 2 else rows3
    with _short_row_epilogues(lanes):
        fn(code, lanes, *args)
    signature = (types.literal(code), types.literal(lanes), *(numba.typeof(a) for a in args))
    return cast(Any, fn.overloads[signature]).entry_point
