"""The compiled loop of :mod:`bcast.run._kernels` (imports numba: only that module imports this one).

For large outputs the loop writes whole 32-byte vectors with non-temporal
(streaming) stores: a plain store first reads the output's cache line from
memory, a streaming one does not, and the op is bound by memory traffic
(measured: (16,256,56,56) + (256,1,1) in two threads, 3.3 ms with plain
stores, 2.2 ms streaming; onnxruntime 3.5 ms).  A fence at the end of each
call makes the streamed data visible before the caller is told it is done.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]  # llvmlite ships no type information
from numba import types
from numba.extending import intrinsic, overload

_u = np.uint64
#: bytes per streamed vector
VECTOR = 32


#: the op codes of :func:`rows`
CODES = {"add": 0, "subtract": 1, "multiply": 2, "divide": 3}


@numba.njit(inline="always")
def _store(op, out, i, x, y):  # pragma: no cover - compiled
    # Each branch stores its own result in out's type: int32 + int32 is an int64 in numba and
    # the store wraps it, as numpy does.  (A function returning the result would unify the
    # branches' types: float64 for ints, through divide.)
    if op == 0:
        out[i] = x + y
    elif op == 1:
        out[i] = x - y
    elif op == 2:
        out[i] = x * y
    else:
        out[i] = x / y


def _operand(context, builder, ty, value, index, vec):
    """A vector of ``vec``: loaded from array ``value`` at ``index``, or a scalar repeated."""
    if isinstance(ty, types.Array):
        data = context.make_array(ty)(context, builder, value).data
        ptr = builder.bitcast(builder.gep(data, [index]), vec.as_pointer())
        return builder.load(ptr, align=ty.dtype.bitwidth // 8)
    one = builder.insert_element(ir.Constant(vec, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
    zeros = ir.Constant(ir.VectorType(ir.IntType(32), vec.count), [0] * vec.count)
    return builder.shuffle_vector(one, ir.Constant(vec, ir.Undefined), zeros)


@intrinsic
def _stream(typingctx, op, out, po, x, xi, y, yi):
    """``out[po:po+n] = x[xi:xi+n] (op) y[yi:yi+n]`` for one vector of n = VECTOR / itemsize
    elements, stored non-temporally at ``po`` (aligned to VECTOR bytes); ``x`` or ``y`` a
    scalar: repeated (its index ignored).  op: 0 add, 1 subtract, 2 multiply, 3 divide."""
    dtype = out.dtype

    def codegen(context, builder, sig, args):
        opv, outv, pov, xv, xiv, yv, yiv = args
        vec = ir.VectorType(context.get_value_type(dtype), VECTOR // (dtype.bitwidth // 8))
        a = _operand(context, builder, sig.args[3], xv, xiv, vec)
        b = _operand(context, builder, sig.args[5], yv, yiv, vec)
        data = context.make_array(sig.args[1])(context, builder, outv).data
        ptr = builder.bitcast(builder.gep(data, [pov]), vec.as_pointer())
        ops: tuple[Any, ...]
        if isinstance(dtype, types.Float):
            ops = (builder.fadd, builder.fsub, builder.fmul, builder.fdiv)
        else:  # integers wrap, as numpy's do; no divide (bcast.run._kernels never asks)
            ops = (builder.add, builder.sub, builder.mul)
        done = builder.append_basic_block("stream.done")
        switch = builder.switch(opv, done)
        for code, f in enumerate(ops):
            block = builder.append_basic_block(f"stream.op{code}")
            switch.add_case(ir.Constant(opv.type, code), block)
            builder.position_at_end(block)
            store = builder.store(f(a, b), ptr, align=VECTOR)
            store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
            builder.branch(done)
        builder.position_at_end(done)
        return context.get_dummy_value()

    return types.void(op, out, po, x, xi, y, yi), codegen


@intrinsic
def _fence(typingctx):
    """Order every store before it (streaming ones included) before any after it."""

    def codegen(context, builder, sig, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


def _at(x, i):  # pragma: no cover - replaced by its overload in compiled code
    """``x[i]`` of an array, ``x`` itself of a scalar."""


@overload(_at, inline="always")
def _at_typed(x, i):
    if isinstance(x, types.Array):
        return lambda x, i: x[i]
    return lambda x, i: x


@numba.njit(inline="always")
def _streamed(op, out, po, n, x, xi, y, yi):  # pragma: no cover - compiled
    """``out[po + k] = x[xi + k] (op) y[yi + k]`` for k < n (a scalar x or y: itself), the aligned
    middle in streamed vectors."""
    size = _u(out.itemsize)
    w = _u(VECTOR) // size
    k = min(n, ((_u(VECTOR) - (_u(out.ctypes.data) + po * size) % _u(VECTOR)) % _u(VECTOR)) // size)
    for h in range(k):
        _store(op, out, po + h, _at(x, xi + h), _at(y, yi + h))
    while k + w <= n:
        _stream(op, out, po + k, x, xi + k, y, yi + k)  # type: ignore[call-arg]  # numba gives typingctx
        k += w
    for t in range(k, n):
        _store(op, out, po + t, _at(x, xi + t), _at(y, yi + t))


# error_model="numpy": x / 0 is inf or nan, as in numpy, not ZeroDivisionError.  Indices are
# unsigned (strides are >= 0): numba then skips its negative-index wraparound and LLVM
# vectorizes the inner loops (each branch has constant inner strides).  ``rows`` calls the
# inlined body once per op with the op a constant: each copy's loops hold one op (measured, rows
# of 56 float32 in one thread: 7.5 ms with the op tested in the loops, 6.7 ms this way).
# Compiled once per dtype, cached on disk.
@numba.njit(nogil=True, boundscheck=False, error_model="numpy", cache=True)
def rows(op, a, b, out, J, K, as0, as1, as2, bs0, bs1, bs2, t0, t1, stream):  # pragma: no cover - compiled
    """Rows ``t0 <= t < t1`` of ``out`` (rows of K elements, J rows per outer step):
    ``out[t*K + k] = a[i*as0 + j*as1 + k*as2] (op) b[i*bs0 + j*bs1 + k*bs2]``, t = i*J + j;
    ``stream``: streaming stores (for outputs far larger than the caches)."""
    nj, nk, r0, r1 = _u(J), _u(K), _u(t0), _u(t1)
    a0, a1, a2, b0, b1, b2 = _u(as0), _u(as1), _u(as2), _u(bs0), _u(bs1), _u(bs2)
    if op == 0:
        _rows(0, a, b, out, nj, nk, a0, a1, a2, b0, b1, b2, r0, r1, stream)
    elif op == 1:
        _rows(1, a, b, out, nj, nk, a0, a1, a2, b0, b1, b2, r0, r1, stream)
    elif op == 2:
        _rows(2, a, b, out, nj, nk, a0, a1, a2, b0, b1, b2, r0, r1, stream)
    else:
        _rows(3, a, b, out, nj, nk, a0, a1, a2, b0, b1, b2, r0, r1, stream)
    if stream:
        _fence()  # type: ignore[call-arg]  # numba gives an @intrinsic its typingctx


@numba.njit(inline="always", error_model="numpy")
def _rows(op, a, b, out, nj, nk, a0, a1, a2, b0, b1, b2, t0, t1, stream):  # pragma: no cover - compiled
    i = t0 // nj
    j = t0 - i * nj
    po = t0 * nk
    for _ in range(t0, t1):
        pa = i * a0 + j * a1
        pb = i * b0 + j * b1
        if stream and a2 == 1 and b2 == 1:
            _streamed(op, out, po, nk, a, pa, b, pb)
        elif stream and a2 == 1 and b2 == 0:
            _streamed(op, out, po, nk, a, pa, b[pb], _u(0))
        elif stream and a2 == 0 and b2 == 1:
            _streamed(op, out, po, nk, a[pa], _u(0), b, pb)
        elif a2 == 1 and b2 == 1:  # plain stores: the loops written out (through _streamed's generic
            for k in range(nk):  # element access LLVM vectorizes short rows 1.5x worse)
                _store(op, out, po + k, a[pa + k], b[pb + k])
        elif a2 == 1 and b2 == 0:
            y = b[pb]
            for k in range(nk):
                _store(op, out, po + k, a[pa + k], y)
        elif a2 == 0 and b2 == 1:
            x = a[pa]
            for k in range(nk):
                _store(op, out, po + k, x, b[pb + k])
        else:
            for k in range(nk):
                _store(op, out, po + k, a[pa + k * a2], b[pb + k * b2])
        po += nk
        j += _u(1)
        if j == nj:
            j = _u(0)
            i += _u(1)
