"""The kernels rewritten for issue 18 (no temporary of the output's size, one pass where numpy
can) give today's values bit for bit, and the kernels marked with a compiled loop
(:data:`bcast.run.kernel.LOOPS`) compute exactly that loop's semantics.

Today's kernels are kept below, as they were, as the reference.  Integer Div's float route
is checked exhaustively over every int8 and uint8 pair, and on edges and random pairs for 16,
32 and 64 bits (zero divisors and MIN / -1 included)."""

from __future__ import annotations

import numpy as np
import pytest

import bcast.frameworks.ncnn.ops as bn
import bcast.frameworks.onnx.kernels as K
import bcast.frameworks.onnx.ops as bo
import bcast.frameworks.openvino.ops as bov
from bcast.run.kernel import LOOPS, is_elementwise, loop_of

SIGNED = (np.int8, np.int16, np.int32, np.int64)
UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)
FLOATS = (np.float16, np.float32, np.float64)


# --------------------------------------------------------------------------- today's kernels (the reference)

def old_div(a, b, out):
    with np.errstate(all="ignore"):
        if out.dtype.kind not in "iu":
            np.divide(a, b, out=out)
            return
        np.floor_divide(a, b, out=out)
        if out.dtype.kind == "i":
            fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
            np.add(out, fix, out=out, casting="unsafe")


def old_power(x, y, out):
    with np.errstate(all="ignore"):
        if out.dtype.kind in "iu" and y.dtype.kind in "iu":
            exp = (np.abs(y.astype(np.int64, copy=False)) if y.dtype.kind == "i" else y).astype(np.uint64)
            np.copyto(out, np.power(x.astype(np.uint64), exp), casting="unsafe")
            if y.dtype.kind == "i":
                neg = y < 0
                inv = np.where(x == 1, 1, 0) + np.where(x == -1, np.where(exp % 2 == 1, -1, 1), 0)
                np.copyto(out, inv.astype(out.dtype), where=neg)
            return
        both_float = x.dtype.kind == "f" and y.dtype.kind == "f"
        work = np.result_type(x.dtype, y.dtype) if both_float else np.float64
        r = np.power(x.astype(work, copy=False), y.astype(work, copy=False))
        np.copyto(out, r, casting="unsafe")


def old_fold(f, views, out):
    np.copyto(out, views[0])
    with np.errstate(all="ignore"):
        for v in views[1:]:
            f(out, v, out=out)


def old_ov_power(x, y):
    with np.errstate(all="ignore"):
        if x.dtype.kind not in "iu":
            return np.power(x, y)
        t = np.power(x, y, dtype=np.float64)
        out = np.empty(t.shape, x.dtype)
        np.copyto(out, t, casting="unsafe")
        return out


def old_ov_floor_mod(x, y):
    with np.errstate(all="ignore"):
        if x.dtype.kind == "u":
            return np.remainder(x, y)
        t = np.true_divide(x, y, dtype=np.float64)
        np.floor(t, out=t)
        np.multiply(t, y, out=t, dtype=np.float64)
        np.subtract(x, t, out=t, dtype=np.float64)
        out = np.empty(t.shape, x.dtype)
        np.copyto(out, t, casting="unsafe")
        return out


# --------------------------------------------------------------------------- values


def _edges(dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "f":
        info = np.finfo(dt)
        return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, info.max, -info.max, info.tiny, info.smallest_subnormal,
                         np.inf, -np.inf, np.nan, 7.0, -7.0, 1e-3], dt)
    info = np.iinfo(dt)
    vals = {0, 1, 2, 3, 7, info.max, info.max - 1, info.max // 2}
    if dt.kind == "i":
        vals |= {-1, -2, -3, -7, info.min, info.min + 1, info.min // 2}
    return np.array(sorted(vals), dt)


def _pairs(dtype, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge values, then ``n`` random pairs (small and full-range divisors)."""
    e = _edges(dtype)
    a, b = (x.ravel() for x in np.meshgrid(e, e))
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    ra = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    rb = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    rb[: n // 2] = rng.integers(max(info.min, -300), 300, n // 2).astype(dtype)
    return np.concatenate([a, ra]), np.concatenate([b, rb])


def _same(x, y) -> bool:
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_integer_div_every_8_bit_pair(dtype):
    v = np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1).astype(dtype)
    a, b = (x.ravel() for x in np.meshgrid(v, v))
    want = np.empty_like(a)
    old_div(a, b, want)
    assert _same(bo.run("Div", a, b), want)
    got = np.empty_like(a)
    K.div([a, b], got)
    assert _same(got, want)


@pytest.mark.parametrize("dtype", SIGNED[1:] + UNSIGNED[1:])
def test_integer_div_edges_and_random(dtype):
    a, b = _pairs(dtype, 1 << 18, seed=np.dtype(dtype).itemsize)
    want = np.empty_like(a)
    old_div(a, b, want)
    assert _same(bo.run("Div", a, b), want)
    a2, b2 = a[: a.size // 2 * 2].reshape(-1, 2), b[:2]  # a stride-0 divisor, in blocks
    assert _same(bo.run("Div", a2, b2), _old(old_div, a2, b2))


def _old(kernel, *arrays):
    views = np.broadcast_arrays(*arrays)
    out = np.empty(views[0].shape, arrays[0].dtype)
    kernel(*views, out)
    return out


def test_div_floats_and_broadcast_views():
    for dt in FLOATS:
        e = _edges(dt)
        a, b = e[:, None], e[None, :]
        assert _same(bo.run("Div", a, b), _old(old_div, a, b))


_POW_PAIRS = [(x, y) for x in (np.int32, np.int64) for y in SIGNED + UNSIGNED + FLOATS] + \
    [(x, y) for x in FLOATS for y in FLOATS + (np.int8, np.int32, np.int64, np.uint64)]


@pytest.mark.parametrize("x, y", _POW_PAIRS, ids=lambda d: np.dtype(d).name)
def test_pow_is_todays(x, y):
    ex, ey = _edges(x), _edges(y)
    if np.dtype(y).kind in "iu":
        ey = np.concatenate([ey, np.arange(-5, 40).astype(y)])
    a, b = ex[:, None], ey[None, :]
    got = bo.run("Pow", a, b)
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), x)
    old_power(*np.broadcast_arrays(a, b), out)
    assert _same(got, out)


@pytest.mark.parametrize("op, f", [("Sum", np.add), ("Max", np.maximum), ("Min", np.minimum), ("Mean", None)])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_variadic_is_todays(op, f, n):
    dts = FLOATS + ((np.int8, np.int32, np.uint8, np.int64) if op in ("Max", "Min") else ())
    for dt in dts:
        e = _edges(dt)
        arrays = [np.roll(e, k)[:, None] if k % 2 == 0 else np.roll(e, k)[None, :] for k in range(n)]
        views = np.broadcast_arrays(*arrays)
        want = np.empty(views[0].shape, dt)
        old_fold(f or np.add, views, want)
        if f is None:
            np.divide(want, n, out=want)
        assert _same(bo.run(op, *arrays), want), (op, dt, n)


def test_prelu_and_gemm_are_todays():
    for dt in (np.float16, np.float32, np.int32, np.int64):
        e = _edges(dt)
        x, slope = np.broadcast_to(e[:, None], (e.size, e.size)).copy(), np.roll(e, 3)
        want = np.empty(np.broadcast_shapes(x.shape, slope.shape), dt)
        with np.errstate(all="ignore"):
            np.multiply(x, slope, out=want)
            np.copyto(want, np.broadcast_to(x, want.shape), where=np.broadcast_to(x, want.shape) > 0)
        assert _same(bo.run("PRelu", x, slope), want)
    rng = np.random.default_rng(5)
    a, b, c = (rng.integers(-1000, 1000, s).astype(np.int64) for s in ((70, 9), (9, 300), (300,)))
    want = np.empty((70, 300), np.int64)
    np.copyto(want, (a @ b) * 2.5 + np.broadcast_to(c, want.shape) * -1.5, casting="unsafe")
    assert _same(bo.run("Gemm", a, b, c, alpha=2.5, beta=-1.5), want)
    af, bf, cf = (x.astype(np.float32) for x in (a, b, c))
    wantf = (af @ bf) * np.float32(2.5) + cf * np.float32(-1.5)
    assert _same(bo.run("Gemm", af, bf, cf, alpha=2.5, beta=-1.5), wantf)


@pytest.mark.parametrize("dtype", (np.int8, np.int16, np.int32, np.int64, np.uint8) + FLOATS)
def test_openvino_kernels_are_todays(dtype):
    e = _edges(dtype)
    a, b = e[:, None], e[None, :]
    nonzero = b[b != 0][None, :]
    assert _same(bov.run("Power", a, b), old_ov_power(*np.broadcast_arrays(a, b)))
    assert _same(bov.run("FloorMod", a, nonzero), old_ov_floor_mod(*np.broadcast_arrays(a, nonzero)))
    if np.dtype(dtype).kind in "iu":
        want = np.empty(np.broadcast_shapes(a.shape, nonzero.shape), dtype)
        old_div(*np.broadcast_arrays(a, nonzero), want)  # C's truncation, as python_division=False
        assert _same(bov.run("Divide", a, nonzero, python_division=False), want)
    x, y = np.broadcast_arrays(a, b)
    assert _same(bov.run("Maximum", a, b), np.where(x < y, y, x))
    assert _same(bov.run("Minimum", a, b), np.where(y < x, y, x))
    if np.dtype(dtype).kind == "f":
        with np.errstate(all="ignore"):
            want = np.where(x < 0, x * y, x)
        assert _same(bov.run("PRelu", x.copy(), b[0]), want)


def test_ncnn_blocked_kernels_match_one_block():
    # blocks are slices of the views: the same values as the functor on the whole arrays
    rng = np.random.default_rng(3)
    a = rng.standard_normal((300, 700)).astype(np.float32) * 10
    b = rng.standard_normal((300, 1)).astype(np.float32) * 3
    for name in ("MAX", "MIN", "LOGADDEXP", "REMAINDER", "RREMAINDER"):
        o = bn.op(name)
        want = np.empty(a.shape, np.float32)
        kernel = {"MAX": bn._max, "MIN": bn._min, "LOGADDEXP": bn._logaddexp}.get(name, bn._remainder)
        x, y = (np.broadcast_to(b, a.shape), a) if o.swap else (a, np.broadcast_to(b, a.shape))
        with np.errstate(all="ignore"):
            kernel(x, y, want)
        assert _same(bn.run(name, a, b), want), name


# --------------------------------------------------------------------------- the loop marks


def _loop_where(cond, x, y):
    return np.where(cond, x, y)


def _loop_fold(f):
    def run(*xs):
        acc = np.array(xs[0], copy=True)
        for x in xs[1:]:
            acc = f(acc, x)
        return acc
    return run


def _loop_mean(*xs):
    s = _loop_fold(np.add)(*xs)
    return np.divide(s, s.dtype.type(len(xs)))


def _loop_div(a, b):
    """Python's integers: the quotient truncated toward zero, 0 for a zero divisor, wrapped."""
    if a.dtype.kind == "f":
        return np.divide(a, b)
    bits = a.dtype.itemsize * 8
    out = []
    for p, q in zip(a.tolist(), b.tolist()):
        r = 0 if q == 0 else abs(p) // abs(q) * (1 if (p < 0) == (q < 0) else -1)
        if a.dtype.kind == "i":
            r = (r + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
        out.append(r)
    return np.array(out, a.dtype)


def _loop_pow(a, b):
    """Floats: numpy's power.  Integers, in Python's: a**b wrapped to the type for b >= 0; for b < 0,
    1 / a**-b truncated toward zero (1 for a == 1, +-1 for a == -1 by b's parity, else 0)."""
    if a.dtype.kind == "f":
        return np.power(a, b)
    bits = a.dtype.itemsize * 8
    out = []
    for p, q in zip(a.tolist(), b.tolist()):
        if q >= 0:
            r = pow(p, q, 1 << bits)
        else:
            r = 1 if p == 1 else (-1 if q % 2 else 1) if p == -1 else 0
        if a.dtype.kind == "i":
            r = (r + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
        else:
            r %= 1 << bits
        out.append(r)
    return np.array(out, a.dtype)


LOOP_SEMANTICS = {"where": _loop_where, "sum": _loop_fold(np.add), "mean": _loop_mean,
                  "max": _loop_fold(np.maximum), "min": _loop_fold(np.minimum), "div": _loop_div,
                  "pow": _loop_pow}

#: (table, op, kernel) of every kernel marked with a compiled loop, and the loop
MARKED = {
    ("onnx", "Where"): "where", ("onnx", "Sum"): "sum", ("onnx", "Mean"): "mean", ("onnx", "Max"): "max",
    ("onnx", "Min"): "min", ("onnx", "Div"): "div", ("onnx", "Pow"): "pow", ("openvino", "Select"): "where",
}


def _kernels():
    for name, o in bo.OPS.items():
        if o.kernel is not None:
            yield ("onnx", name), o.kernel, lambda k: (lambda *xs: _call_onnx(k, xs))
    for name, o in bov.OPS.items():
        if o.kernel is not None:
            attrs = dict(o.attrs)
            yield ("openvino", name), o.kernel(name, attrs), lambda k: (lambda *xs: k(*np.broadcast_arrays(*xs)))
    for o in bn.OPS:
        yield ("ncnn", o.name), o.kernel, None


def _call_onnx(kernel, xs):
    views = np.broadcast_arrays(*xs)
    out = np.empty(views[0].shape, views[-1].dtype)
    kernel(list(views), out)
    return out


def test_the_marks_are_these():
    marks = {key: loop_of(k) for key, k, _ in _kernels() if loop_of(k) is not None}
    assert marks == MARKED
    assert set(MARKED.values()) == set(LOOPS)
    for key, k, _ in _kernels():
        if key in MARKED:
            assert is_elementwise(k)


def _edge_inputs(loop, dtype):
    e = _edges(dtype)
    if loop == "where":
        cond = np.array([True, False] * len(e))[: len(e)]
        return [(cond, e, np.roll(e, 1)), (~cond, np.roll(e, 2), e)]
    if loop in ("div", "pow"):
        a, b = (x.ravel() for x in np.meshgrid(e, e))
        return [(a, b)]
    return [(e,), (e, np.roll(e, 1)), (e, np.roll(e, 1), np.roll(e, 5))]


_LOOP_DTYPES = {"where": FLOATS + SIGNED + UNSIGNED, "sum": FLOATS, "mean": FLOATS,
                "max": FLOATS + SIGNED + UNSIGNED[:1], "min": FLOATS + SIGNED + UNSIGNED[:1],
                "div": FLOATS + SIGNED + UNSIGNED, "pow": FLOATS + (np.int32, np.int64)}


@pytest.mark.parametrize("key", sorted(MARKED), ids="-".join)
def test_a_marked_kernel_computes_its_loop_bit_for_bit(key):
    loop = MARKED[key]
    kernel, call = next((k, c) for kk, k, c in _kernels() if kk == key)
    run = call(kernel)
    for dt in _LOOP_DTYPES[loop]:
        for inputs in _edge_inputs(loop, dt):
            with np.errstate(all="ignore"):
                want = LOOP_SEMANTICS[loop](*inputs)
            got = run(*inputs)
            assert _same(got, want), (key, np.dtype(dt).name, len(inputs), got, want)


def test_negative_zero_and_nan_in_the_marked_folds():
    z, nz, nan = np.float32(0.0), np.float32(-0.0), np.float32(np.nan)
    assert np.signbit(bo.run("Sum", np.array([nz], np.float32), np.array([nz], np.float32)))[0]
    assert not np.signbit(bo.run("Sum", np.array([nz], np.float32), np.array([z], np.float32)))[0]
    assert np.isnan(bo.run("Max", np.array([1.0], np.float32), np.array([nan]), np.array([2.0], np.float32)))[0]
    assert np.isnan(bo.run("Min", np.array([nan]), np.array([1.0], np.float32)))[0]
    i8 = np.array([-128], np.int8)
    assert bo.run("Div", i8, np.array([-1], np.int8))[0] == -128
    assert bo.run("Div", i8, np.array([0], np.int8))[0] == 0
    for dt in SIGNED:
        lo = np.array([np.iinfo(dt).min, 7, -7, 0], dt)
        assert bo.run("Div", lo, np.array([-1, 0, 2, 0], dt)).tolist() == [np.iinfo(dt).min, 0, -3, 0]


def test_every_loop_has_a_marked_kernel_and_the_unmarked_differ():
    # OpenVINO's Maximum/Minimum are C++'s std::max/min: a NaN in y is dropped, numpy's maximum keeps it
    x, y = np.array([1.0, np.nan], np.float32), np.array([np.nan, 1.0], np.float32)
    assert not _same(bov.run("Maximum", x, y), np.maximum(x, y))
    # OpenVINO's integer Divide floors by default (python_division) and refuses a zero divisor
    assert bov.run("Divide", np.array([-7], np.int32), np.array([2], np.int32))[0] == -4
    assert set(LOOPS) == set(MARKED.values())


def test_kernels_over_many_blocks_are_todays():
    # outputs of several blocks (bcast.frameworks._blocks): the same values as one pass
    rng = np.random.default_rng(11)
    x = rng.integers(-3, 4, (300, 1)).astype(np.int32)
    y = rng.integers(-6, 40, (1, 700)).astype(np.int64)
    want = np.empty((300, 700), np.int32)
    old_power(*np.broadcast_arrays(x, y), want)
    assert _same(bo.run("Pow", x, y), want)
    xf = rng.standard_normal((300, 700)).astype(np.float32)
    slope = rng.standard_normal(700).astype(np.float32)
    assert _same(bo.run("PRelu", xf, slope), np.where(xf > 0, xf, xf * slope))
    a = rng.integers(-10**6, 10**6, (300, 700)).astype(np.int32)
    b = rng.integers(1, 1000, (300, 1)).astype(np.int32) * rng.choice([-1, 1], (300, 1)).astype(np.int32)
    assert _same(bov.run("FloorMod", a, b), old_ov_floor_mod(*np.broadcast_arrays(a, b)))
    c = rng.integers(-50, 50, (300, 700)).astype(np.int64)
    assert _same(bo.run("Gemm", c[:, :9], c[:9, :], c, alpha=0.5, beta=3.0),
                 ((c[:, :9] @ c[:9, :]) * 0.5 + c * 3.0).astype(np.int64))
