"""The compiled loops (bcast.run._kernels, numba) give numpy's bits, or are not used.

Every case calls the loop directly (asserting that it ran) and compares the
output's bytes with numpy's ufunc under ``errstate(all="ignore")``: four ops,
four dtypes, every layout the loop has a branch for, NaN payloads, infinities,
-0.0 and overflow, one and two threads.  One freedom is allowed, and only
there: where both operands are NaN the result is a NaN with the payload of
either (IEEE 754 leaves it open; x86 takes the first operand's, and both LLVM
and the C compiler that built numpy may swap the operands of a commutative
op).  One and two threads give the same bytes exactly.  Then the entry
points: which calls take the loop, and that numpy's warnings and errors are
kept where the loop would lose them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bcast
import bcast.frameworks.ncnn.ops
import bcast.frameworks.onnx.ops
import bcast.frameworks.openvino.ops
from bcast.run import _kernels, parallel

pytest.importorskip("numba")

RNG = np.random.default_rng(7)
OPS = [np.add, np.subtract, np.multiply, np.divide]
DTYPES = [np.float32, np.float64, np.int32, np.int64]

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
    ((3, 67), (3, 67)),  # rows that start at every alignment: a head, streamed vectors, a tail
    ((5, 61), (61,)),
    ((71, 3), (71, 1)),  # rows shorter than a vector
]

# quiet NaNs with payloads and signs, a signalling NaN's bits, infinities, zeros, extremes
SPECIAL32 = np.array([0x7FC00001, 0xFFC12345, 0x7FA00000, 0x7F800000, 0xFF800000, 0x80000000, 0x00000001,
                      0x7F7FFFFF], np.uint32).view(np.float32)
SPECIAL64 = np.array([0x7FF8000000000001, 0xFFF8000000ABCDEF, 0x7FF4000000000000, 0x7FF0000000000000,
                      0xFFF0000000000000, 0x8000000000000000, 1, 0x7FEFFFFFFFFFFFFF], np.uint64).view(np.float64)


def values(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)  # whole range: sums and products overflow and wrap
        return RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    x = (RNG.standard_normal(shape) * 1e3).astype(dtype)
    special = SPECIAL32 if dtype == np.float32 else SPECIAL64
    flat = x.reshape(-1)
    flat[:: max(1, flat.size // 5)] = special[RNG.integers(0, len(special), size=len(flat[:: max(1, flat.size // 5)]))]
    return x


def assert_same(got, expected, a, b):
    """Same bytes, except a NaN for a NaN where both operands are NaN."""
    both = np.broadcast_to(np.isnan(a) & np.isnan(b), expected.shape) if expected.dtype.kind == "f" else False
    same = got.view(f"u{got.itemsize}") == expected.view(f"u{got.itemsize}")
    assert np.all(same | both), np.flatnonzero(~(same | both))[:5]
    assert np.all(np.isnan(got[both])) if both is not False else True


def loop(func, a, b, out, n=1):
    shape = out.shape
    done = _kernels.try_run(func, [np.broadcast_to(a, shape), np.broadcast_to(b, shape)], out, n)
    assert done is out, "the compiled loop did not run"
    return out


@pytest.fixture(params=["plain", "streamed"])
def stores(request, monkeypatch):
    """Plain stores, or streaming ones (every output counts as large)."""
    if request.param == "streamed":
        monkeypatch.setattr(_kernels, "STREAM_BYTES", 0)
        monkeypatch.setattr(_kernels, "STREAM_ROW_BYTES", 0)
    return request.param


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_same_bits_as_numpy(op, dtype, stores):
    if op is np.divide and np.dtype(dtype).kind == "i":
        pytest.skip("integer divide is numpy's (true division makes floats)")
    for sa, sb in LAYOUTS:
        a, b = values(sa, dtype), values(sb, dtype)
        with np.errstate(all="ignore"):
            expected = op(a, b)
            one = loop(op, a, b, np.empty(expected.shape, dtype), 1)
            assert_same(one, expected, a, b)
            shifted = np.empty(expected.size + 1, dtype)[1:].reshape(expected.shape)  # not on a vector boundary
            two = loop(op, a, b, shifted, 2)
            assert two.tobytes() == one.tobytes()


def test_views_that_are_not_contiguous(stores):
    a = values((8, 12, 10), np.float32)
    b = values((12, 1), np.float32)
    cases = [(a[:, ::2], b[::2]), (a[::2, :, 1:7], b), (a.transpose(1, 0, 2), values((8, 1), np.float32)),
             (a[..., ::3], b)]
    with np.errstate(all="ignore"):
        for x, y in cases:
            expected = np.multiply(x, y)
            got = loop(np.multiply, x, y, np.empty(expected.shape, np.float32), 2)
            assert_same(got, expected, x, y)


def test_layout_falls_back():
    assert _kernels.layout([(-1,), (1,)], (4,)) is None  # a negative stride
    # four axes that do not merge: (2,3,4,5) + (3,1,5)
    assert _kernels.layout([(60, 20, 5, 1), (0, 5, 0, 1)], (2, 3, 4, 5)) is None
    a = np.ones((4, 5), np.float32)
    out = np.empty((4, 5), np.float32)
    views = [a[::-1], np.broadcast_to(np.float32(1), (4, 5))]
    with np.errstate(all="ignore"):
        assert _kernels.try_run(np.add, views, out, 1) is None  # numpy's turn
        assert _kernels.try_run(np.add, [a, a.astype(np.float64)], out, 1) is None  # mixed
        assert _kernels.try_run(np.power, [a, a], out, 1) is None  # not compiled
        assert _kernels.try_run(np.add, [a, a], np.empty((5, 4), np.float32).T, 1) is None
    i = np.ones((4, 5), np.int32)
    assert _kernels.try_run(np.divide, [i, i], np.empty((4, 5), np.int32), 1) is None


def test_numpy_warnings_kept():
    """numpy warns (or raises) on float overflow: with warnings on, the loop is not used."""
    a = np.full((4, 5), 3e38, np.float32)
    out = np.empty_like(a)
    assert _kernels.try_run(np.add, [a, a], out, 1) is None  # errstate "warn"
    with np.errstate(over="raise"):
        assert _kernels.try_run(np.add, [a, a], out, 1) is None
    i = np.full((4, 5), 2**31 - 1, np.int32)  # integer overflow: numpy neither warns nor raises
    assert _kernels.try_run(np.add, [i, i], np.empty_like(i), 1) is not None


@pytest.fixture
def large(monkeypatch):
    """Every output of 8 elements or more counts as large; counts the compiled loop's runs."""
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 8)
    monkeypatch.setattr(bcast.run._fast, "SMALL_ELEMENTS", 0)
    bcast.run.clear_caches()
    runs = []
    real = _kernels.try_run

    def spy(*args):
        done = real(*args)
        runs.append(done is not None)
        return done

    monkeypatch.setattr(_kernels, "try_run", spy)
    previous = parallel.set_threads(2)
    yield runs
    parallel.set_threads(previous)


def test_entry_points(large):
    a, b = values((4, 6, 10), np.float32), values((6, 1), np.float32)
    with np.errstate(all="ignore"):
        add, sub, rsub = np.add(a, b), np.subtract(b, a), np.subtract(b, a[0])
    cases = [
        (lambda: bcast.frameworks.onnx.ops.run("Add", a, b), add, a),
        (lambda: bcast.frameworks.openvino.ops.run("Add", a, b), add, a),
        (lambda: bcast.frameworks.openvino.ops.run("Subtract", b, a), sub, a),
        (lambda: bcast.frameworks.ncnn.ops.run("RSUB", a[0], b), rsub, a[0]),  # RSUB: b - a, the loop's inputs swapped
        (lambda: bcast.apply(np.add, a, b, out=np.empty_like(a)), add, a),
    ]
    for run, expected, x in cases:
        large.clear()
        with np.errstate(all="ignore"):
            got = run()
        assert large == [True]
        assert_same(got, expected, x, b)


def test_apply_keeps_numpy_warnings(large):
    a = np.full((4, 6), 3e38, np.float32)
    with pytest.warns(RuntimeWarning, match="overflow"):
        bcast.apply(np.add, a, a)
    assert large == [False]


def test_turned_off(monkeypatch, large):
    monkeypatch.setattr(_kernels, "_kernel", False)  # as BCAST_KERNELS=0 or no numba leaves it
    a, b = values((4, 6, 10), np.float64), values((10,), np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = bcast.frameworks.onnx.ops.run("Mul", a, b)
    assert large == [False]
    with np.errstate(all="ignore"):
        assert got.tobytes() == np.multiply(a, b).tobytes()
