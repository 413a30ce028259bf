"""The compiled loops (bcast.run._kernels, numba) give numpy's bits, or are not used.

Every case calls the loop directly (asserting that it ran) and compares the
output's bytes with numpy's ufunc under ``errstate(all="ignore")``: every
compiled ufunc, on dtypes chosen so that each op meets float16, a float, a
narrow and a wide integer (every dtype meets several ops), every layout the
loop has a branch for, NaN payloads, infinities, -0.0, subnormals and
overflow, one and two threads.  One freedom is allowed, and only there: where
both operands are NaN the result is a NaN with the payload of either (IEEE 754
leaves it open; x86 takes the first operand's, and both LLVM and the C
compiler that built numpy may swap the operands of a commutative op).  One and
two threads give the same bytes exactly.  Then the loops of the marked
kernels (where, sum, mean, max, min, div) against the kernels themselves, the
entry points, the background compile, and that numpy's warnings and errors are
kept where the loop would lose them.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import bcast
import bcast.frameworks.onnx.ops
from bcast.run import _kernels, parallel

pytest.importorskip("numba")

RNG = np.random.default_rng(7)

# each op on float16, a float, a narrow and a wide integer (and bool for the comparisons);
# each dtype meets several ops
OPS = {
    np.add: ["float16", "float32", "int8", "uint64"],
    np.subtract: ["float16", "float64", "uint8", "int64"],
    np.multiply: ["float16", "float32", "int16", "int32"],
    np.divide: ["float16", "float32", "float64"],
    np.maximum: ["float16", "float32", "float64", "int8", "uint32"],
    np.minimum: ["float16", "float32", "float64", "uint8", "int64"],
    np.greater: ["float16", "float64", "int8", "bool"],
    np.greater_equal: ["float16", "float32", "uint16"],
    np.less: ["float16", "float32", "int32"],
    np.less_equal: ["float16", "float64", "uint8"],
    np.equal: ["float16", "float32", "int64", "bool"],
    np.not_equal: ["float16", "float64", "uint8", "bool"],
    np.power: ["float16"],  # (numpy's float32/64 power is its own SIMD loop: no compiled one)
}
CASES = [(op, dt) for op, dts in OPS.items() for dt in dts]

# (A's shape, B's shape), numpy broadcasting: one per branch of the loop, and their mixes
LAYOUTS = [
    ((6, 7, 9), (6, 7, 9)),  # both contiguous
    ((6, 7, 9), (7, 1)),  # B: one value per row
    ((6, 7, 9), (9,)),  # B: one row for all
    ((7, 1), (6, 7, 9)),  # A: one value per row
    ((6, 7, 9), (6, 1, 9)),  # B: a row per outer step
    ((6, 7, 9), ()),  # B: a scalar
    ((5, 1, 4), (3, 1)),  # both stretched: an outer product
    ((2, 3, 4, 5), (3, 1, 1)),  # four axes that collapse to three
    ((2, 1, 4, 1), (3, 1, 5)),  # four axes that do not collapse: both stretched twice
    ((3, 67), (3, 67)),  # rows that start at every alignment: a head, vectors, a tail
    ((5, 61), (61,)),
    ((71, 3), (71, 1)),  # rows shorter than a vector
    ((1, 1), (1,)),  # one element
]

SPECIAL = {  # quiet NaNs with payloads and signs, a signalling NaN's bits, infinities, zeros, extremes, subnormals
    np.dtype(np.float16): np.array([0x7E01, 0xFE35, 0x7D00, 0x7C00, 0xFC00, 0x8000, 0x0001, 0x7BFF, 0x0000, 0x03FF],
                                   np.uint16),
    np.dtype(np.float32): np.array([0x7FC00001, 0xFFC12345, 0x7FA00000, 0x7F800000, 0xFF800000, 0x80000000,
                                    0x00000001, 0x7F7FFFFF, 0, 0x007FFFFF], np.uint32),
    np.dtype(np.float64): np.array([0x7FF8000000000001, 0xFFF8000000ABCDEF, 0x7FF4000000000000,
                                    0x7FF0000000000000, 0xFFF0000000000000, 0x8000000000000000, 1,
                                    0x7FEFFFFFFFFFFFFF, 0, 0x000FFFFFFFFFFFFF], np.uint64),
}


@pytest.fixture(autouse=True)
def compiled_here(monkeypatch):
    """Loops compile in the calling thread (a loop asked for is ready) and run at every size, in
    several threads where asked."""
    monkeypatch.setattr(_kernels, "BACKGROUND", False)
    for name in ("BROADCAST_MIN", "CONTIGUOUS_MIN", "ONE_BYTE_MIN", "PASSES_MIN", "THREADS_BYTES"):
        monkeypatch.setattr(_kernels, name, 0)


def values(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)  # whole range: sums and products overflow and wrap
        return RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    scale = 1e2 if dtype == np.float16 else 1e3
    x = (RNG.standard_normal(shape) * scale).astype(dtype)
    flat = x.reshape(-1)
    picks = flat[:: max(1, flat.size // 5)]
    special = SPECIAL[dtype].view(dtype)
    flat[:: max(1, flat.size // 5)] = special[RNG.integers(0, len(special), size=len(picks))]
    if flat.size > 2:
        flat[1] = flat[2]  # equal values (of either sign for zeros): which one maximum/minimum keep
    return x


def assert_same(got, expected, *inputs):
    """Same bytes, except a NaN for a NaN where two NaNs meet: two inputs or more are NaN, or one is and
    others are infinities of both signs (a sum of three makes a second NaN of inf - inf; which NaN the
    hardware keeps depends on the operands' order, which LLVM may swap in a commutative op)."""
    floats = [x for x in inputs if x.dtype.kind == "f"]
    nans = sum(np.broadcast_to(np.isnan(x), expected.shape).astype(int) for x in floats) if floats else 0
    pos = sum(np.broadcast_to(np.isposinf(x), expected.shape).astype(int) for x in floats) if floats else 0
    neg = sum(np.broadcast_to(np.isneginf(x), expected.shape).astype(int) for x in floats) if floats else 0
    meet = (nans >= 2) | ((nans >= 1) & (pos >= 1) & (neg >= 1))
    both = np.asarray(meet) if expected.dtype.kind == "f" else np.zeros((), bool)
    same = got.view(f"u{got.itemsize}") == expected.view(f"u{got.itemsize}")
    bad = ~(same | both)
    assert not bad.any(), (np.flatnonzero(bad)[:5], got[bad][:5], expected[bad][:5])
    assert np.all(np.isnan(got[np.broadcast_to(both, got.shape)]))


def loop(func, views, out, n=1):
    shape = out.shape
    done = _kernels.try_run(func, [np.broadcast_to(v, shape) for v in views], out, n)
    assert done is out, "the compiled loop did not run"
    return out


@pytest.mark.parametrize("op, dtype", CASES, ids=[f"{op.__name__}-{dt}" for op, dt in CASES])
def test_same_bits_as_numpy(op, dtype):
    for sa, sb in LAYOUTS:
        a, b = values(sa, dtype), values(sb, dtype)
        with np.errstate(all="ignore"):
            expected = op(a, b)
            one = loop(op, [a, b], np.empty(expected.shape, expected.dtype), 1)
            assert_same(one, expected, a, b)
            shifted = np.empty(expected.size + 1, expected.dtype)[1:].reshape(expected.shape)  # off a vector boundary
            two = loop(op, [a, b], shifted, 2)
            assert two.tobytes() == one.tobytes()


def test_every_float16_pair_of_some_values():
    """float16: every pair of 300 values (the specials among them) through every op, in one loop each."""
    bits = np.concatenate([SPECIAL[np.dtype(np.float16)], RNG.integers(0, 1 << 16, 290, dtype=np.uint16)])
    a = bits.view(np.float16)[:, None]
    b = bits.view(np.float16)[None, :]
    with np.errstate(all="ignore"):
        for op in OPS:
            expected = op(a, b)
            got = loop(op, [a, b], np.empty(expected.shape, expected.dtype))
            assert_same(got, expected, a, b)


MARKED = {  # the ONNX kernels marked with a loop, and the dtypes it is checked on
    "Where": ["float16", "float32", "int8", "bool", "uint64"],
    "Sum": ["float16", "float32", "float64"],
    "Mean": ["float16", "float32", "float64"],
    "Max": ["float16", "float32", "int8", "uint16", "int64"],
    "Min": ["float16", "float64", "uint8", "int32"],
    "Div": ["float16", "float32", "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64"],
    "Pow": ["float16", "int32", "int64"],  # (ONNX's Pow takes int32 and int64 bases)
}


@pytest.mark.parametrize("op, dtype", [(op, dt) for op, dts in MARKED.items() for dt in dts])
@pytest.mark.parametrize("n", [2, 3])
def test_marked_kernels_same_bits(op, dtype, n):
    kernel = bcast.frameworks.onnx.ops._get(op).kernel
    if op in ("Where", "Div", "Pow") and n != (3 if op == "Where" else 2):
        pytest.skip("a fixed number of inputs")
    for shapes in [((6, 7, 9), (7, 1), (6, 7, 9)), ((6, 7, 9), (6, 7, 9), (9,)), ((5, 1, 4), (3, 1), ()),
                   ((3, 67), (3, 67), (3, 67)), ((71, 3), (71, 1), (3,))]:
        xs = [values(s, dtype) for s in shapes[:n]]
        if op == "Where":
            xs[0] = values(shapes[0], bool)
        if op == "Div" and np.dtype(dtype).kind in "iu":
            xs[1].reshape(-1)[::7] = 0  # zero divisors
            if np.dtype(dtype).kind == "i":
                xs[0].reshape(-1)[::5] = np.iinfo(dtype).min
                xs[1].reshape(-1)[::3] = -1  # MIN / -1
        shape = np.broadcast_shapes(*(x.shape for x in xs))
        views = [np.broadcast_to(x, shape) for x in xs]
        expected = np.empty(shape, dtype)
        kernel(views, expected)
        got = loop(kernel, views, np.empty(shape, dtype), 2)
        assert_same(got, expected, *views[1 if op == "Where" else 0:])


def test_layout():
    assert _kernels.layout([(-1,), (1,)], (4,)) is None  # a negative stride
    # four axes that do not merge: (2,3,4,5) + (3,1,5): outer axes (2,3,4), inner 5
    assert _kernels.layout([(60, 20, 5, 1), (0, 5, 0, 1)], (2, 3, 4, 5)) == \
        ((2, 3, 4), 5, [((60, 20, 5), 1), ((0, 5, 0), 1)])
    assert _kernels.layout([(), ()], ()) == ((), 1, [((), 0), ((), 0)])


def test_falls_back():
    a = np.ones((4, 5), np.float32)
    out = np.empty((4, 5), np.float32)
    views = [a[::-1], np.broadcast_to(np.float32(1), (4, 5))]
    with np.errstate(all="ignore"):
        assert _kernels.try_run(np.add, views, out, 1) is None  # a negative stride: numpy's turn
        assert _kernels.try_run(np.add, [a, a.astype(np.float64)], out, 1) is None  # mixed
        assert _kernels.try_run(np.power, [a, a], out, 1) is None  # not compiled
        assert _kernels.try_run(np.add, [a, a], np.empty((5, 4), np.float32).T, 1) is None
        assert _kernels.try_run(np.add, [a, a], a, 1) is None  # out= is an input
    i = np.ones((4, 5), np.int32)
    assert _kernels.try_run(np.divide, [i, i], np.empty((4, 5), np.int32), 1) is None
    assert _kernels.try_run(np.add, [i > 0, i > 0], np.empty((4, 5), bool), 1) is None  # bool arithmetic
    assert _kernels.prepare(np.add, (np.dtype(object),) * 2, ((4, 5),) * 2, (4, 5), np.dtype(object)) is None


def test_numpy_warnings_kept():
    """numpy warns (or raises) on float overflow: with warnings on, the loop is not used."""
    a = np.full((4, 5), 3e38, np.float32)
    out = np.empty_like(a)
    assert _kernels.try_run(np.add, [a, a], out, 1) is None  # errstate "warn"
    with np.errstate(over="raise"):
        assert _kernels.try_run(np.add, [a, a], out, 1) is None
        loop = _kernels.prepare(np.add, (a.dtype, a.dtype), (a.shape, a.shape), a.shape, a.dtype)
        assert loop is not None and not loop.run([a, a], out, 1)
    h = np.full((4, 5), 300, np.float16)  # float16 power overflows: numpy warns
    assert _kernels.try_run(np.power, [h, h], np.empty_like(h), 1) is None
    with np.errstate(all="ignore"):
        assert _kernels.try_run(np.power, [h, h], np.empty_like(h), 1) is not None
    i = np.full((4, 5), 2**31 - 1, np.int32)  # integer overflow: numpy neither warns nor raises
    assert _kernels.try_run(np.add, [i, i], np.empty_like(i), 1) is not None


def test_prepared_loop():
    a, b = values((6, 7, 9), np.float16), values((7, 1), np.float16)
    loop = _kernels.prepare(np.multiply, (a.dtype, b.dtype), (a.shape, (1, 7, 1)), a.shape, a.dtype)
    out = np.empty(a.shape, np.float16)
    with np.errstate(all="ignore"):
        assert loop.run([a, b], out, 2)
        assert_same(out, np.multiply(a, b), a, b)


def test_background_compile(monkeypatch):
    """The first call of a loop not yet compiled says no at once (numpy's turn); once compiled, it runs."""
    monkeypatch.setattr(_kernels, "BACKGROUND", True)
    monkeypatch.setattr(_kernels, "_compiled", {})
    monkeypatch.setattr(_kernels, "_requested", set())
    a = values((64, 32), np.uint16)
    loop = _kernels.prepare(np.subtract, (a.dtype, a.dtype), (a.shape, (1, 32)), a.shape, a.dtype)
    out = np.empty_like(a)
    assert not loop.run([a, a[0]], out, 1)  # requested: being compiled (or loaded from numba's cache)
    assert _kernels.wait(timeout=600)
    assert loop.run([a, a[0]], out, 1)
    np.testing.assert_array_equal(out, a - a[0])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_forked_child_compiles_nothing_its_parent_was_compiling(monkeypatch):
    monkeypatch.setattr(_kernels, "_requested", {("pending",)})
    monkeypatch.setattr(_kernels, "_worker", object())  # as if a compile were under way at the fork
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os._exit(0 if _kernels._kernel is False else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.fixture
def large(monkeypatch):
    """Every output of 8 elements or more counts as large; counts the compiled loop's runs."""
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 8)
    monkeypatch.setattr(bcast.run._fast, "SMALL_ELEMENTS", 0)
    bcast.run.clear_caches()
    runs = []
    real = _kernels.Loop.run

    def spy(self, *args):
        done = real(self, *args)
        runs.append(done)
        return done

    monkeypatch.setattr(_kernels.Loop, "run", spy)
    previous = parallel.set_threads(2)
    yield runs
    parallel.set_threads(previous)
    bcast.run.clear_caches()


def test_turned_off(monkeypatch, large):
    monkeypatch.setattr(_kernels, "_kernel", False)  # as BCAST_KERNELS=0 or no numba leaves it
    a, b = values((4, 6, 10), np.float64), values((10,), np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = bcast.frameworks.onnx.ops.run("Mul", a, b)
    assert large == []
    with np.errstate(all="ignore"):
        assert got.tobytes() == np.multiply(a, b).tobytes()



def _near_pairs():
    """int64 dividends and divisors within +-2**51 (the float64 loop's range, ``_kernels._NEAR``): the edges,
    every sign, and quotients a few units off a whole number (where a float64 quotient that rounded across a whole
    number would truncate one off)."""
    n = _kernels._NEAR
    edges = np.array([0, 1, -1, 2, -2, 3, -3, 7, n, -n, n - 1, -n + 1, n // 3, 1 << 26, (1 << 26) + 1,
                      -(10**15), 10**15 + 7], np.int64)
    a, b = (x.ravel() for x in np.meshgrid(edges, edges))
    q = RNG.integers(-(1 << 26), 1 << 26, 4096)
    d = RNG.integers(1, 1 << 26, 4096) * RNG.choice([-1, 1], 4096)
    near = np.clip(q * d + RNG.integers(-2, 3, 4096), -n, n)
    wide = RNG.integers(-n, n, 4096, endpoint=True)
    return np.concatenate([a, near, wide]), np.concatenate([b, d, RNG.integers(-n, n, 4096, endpoint=True)])


@pytest.mark.parametrize("edge", [None, 1 << 51, -(1 << 51), (1 << 51) + 1, -(1 << 51) - 1, 1 << 53,
                                  np.iinfo(np.int64).min])
def test_int64_div_within_2_to_51_divides_in_float64(monkeypatch, edge):
    """ONNX's int64 Div takes the float64 loop where every input is within +-2**51,
    C's division else; both give the truncated quotient of every pair, the zero divisor 0."""
    kernel = bcast.frameworks.onnx.ops._get("Div").kernel
    a, b = _near_pairs()
    if edge is not None:
        a[5] = edge
    b[::11] = 0
    expected = np.empty_like(a)
    kernel([a, b], expected)
    asked = []
    real = _kernels._near
    monkeypatch.setattr(_kernels, "_near", lambda flat: asked.append(real(flat)) or asked[-1])
    got = loop(kernel, [a, b], np.empty_like(a), 2)
    assert_same(got, expected)
    assert asked == [edge is None or abs(int(edge)) <= _kernels._NEAR]
    bcast.run.clear_caches()
    a2 = a[: a.size // 2 * 2].reshape(-1, 2)  # a stride-0 divisor, through the prepared call
    assert_same(bcast.onnx.run("Div", a2, b[:2]), _old_div(kernel, a2, b[:2]))


def test_the_compiled_range_check_of_int64_div():
    """The one-pass check (bcast.run._loops.within) says what numpy's min and max say, at the edges of +-2**51
    (the float64 loop's range) and of int64, on read-only and writable arrays, empty included."""
    if not _kernels.available():
        pytest.skip("the compiled loops are off here")
    from bcast.run import _loops

    within = _loops.within()
    n = _kernels._NEAR
    for edge in (0, n, -n, n + 1, -n - 1, np.iinfo(np.int64).min, np.iinfo(np.int64).max):
        for where in (0, 1000, 4095):
            x = RNG.integers(-n, n, 4096, endpoint=True)
            x[where] = edge
            want = bool(x.min() >= -n and x.max() <= n)
            assert within(x, np.int64(n)) == want
            x.flags.writeable = False
            assert within(x, np.int64(n)) == want
    assert within(np.zeros(0, np.int64), np.int64(n))


def _old_div(kernel, a, b):
    views = np.broadcast_arrays(a, b)
    out = np.empty(views[0].shape, np.int64)
    kernel(views, out)
    return out


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("top", [64, 65])
def test_integer_pow_of_small_exponents_takes_the_squares(monkeypatch, dtype, top):
    """ONNX's integer Pow takes the loop of the six squares where every exponent is from 0 to 63, the squaring
    loop else (a negative exponent, or 64 and more); the same bits either way, the wrapping ones too."""
    kernel = bcast.frameworks.onnx.ops._get("Pow").kernel
    x = values((64, 97), dtype)
    x[:, :7] = np.arange(-3, 4)
    y = np.broadcast_to(np.arange(top, dtype=dtype)[:, None], (top, 97))[:64].copy()
    if top == 65:
        y[3, 5] = 64
    asked: list = []
    real = _kernels._small_exponents
    monkeypatch.setattr(_kernels, "_small_exponents", lambda flat: asked.append(real(flat)) or asked[-1])
    for a, b in [(x, y), (x, y[:, :1]), (x[:1], y), (x, y[5:6, :1])]:
        b = b.copy()  # (the check reads the memory a view spans: y[:, :1] spans all of y)
        shape = np.broadcast_shapes(a.shape, b.shape)
        views = [np.broadcast_to(a, shape), np.broadcast_to(b, shape)]
        expected = np.empty(shape, dtype)
        kernel(views, expected)
        asked.clear()
        assert_same(loop(kernel, views, np.empty(shape, dtype), 2), expected)
        assert asked == [bool(b.max() < 64)]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "float16", "float32"])
def test_short_rows_take_a_narrower_remainder_and_numpys_bits(dtype):
    """Rows shorter than the loop's remainder width (32 lanes for 1-byte arrays, else 16) run in a loop
    compiled with a remainder of 16 or 8 lanes (its key says so); every row length gives numpy's bits,
    in rows that start off a vector boundary too.  (Less on three 1-byte arrays (bool out) and the others
    on float16 or float32 take the widths of their stored dtypes.)"""
    stored = (np.dtype(np.uint16) if dtype == "float16" else np.dtype(dtype),) * 3
    for k in range(1, 41):
        width = _kernels.lanes(k, stored)
        one_byte = np.dtype(dtype).itemsize == 1
        assert width == (16 if 16 <= k < 32 and one_byte else 8 if 8 <= k < 16 else 32 if one_byte else 16)
        a, b = values((5, 3, k), dtype), values((5, 1, k), dtype)
        for op in (np.add, np.maximum, np.less):
            with np.errstate(all="ignore"):
                expected = op(a, b)
            prepared = _kernels.prepare(op, (a.dtype, b.dtype), (a.shape, b.shape), expected.shape, expected.dtype)
            assert prepared.key[2] == width
            out = np.empty(expected.size + 1, expected.dtype)[1:].reshape(expected.shape)
            with np.errstate(all="ignore"):  # (a float loop that numpy might warn in runs with warnings off)
                assert prepared.run([a, b], out, 1)
            assert_same(out, expected, a, b)
        kernel = bcast.frameworks.onnx.ops._get("Max").kernel
        c = values((5, 3, 1), dtype)
        views = [np.broadcast_to(x, (5, 3, k)) for x in (a, b, c)]
        expected = np.empty((5, 3, k), dtype)
        kernel(views, expected)
        assert_same(loop(kernel, views, np.empty((5, 3, k), dtype)), expected, *views)
