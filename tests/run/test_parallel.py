"""Threads, blocking, the plan cache and the small-op fast paths change nothing but speed.

Every threaded result is compared bit for bit (bytes, dtype and shape) with
the single-threaded one, and every blocked result with numpy's plain call, on
random shapes (fixed seed), dtypes and ops of every entry point; the thread
threshold and the tile are lowered so that small arrays are split and blocked too.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import bcast
import bcast.frameworks.ncnn.ops
import bcast.frameworks.onnx.ops
import bcast.frameworks.openvino.ops
from bcast.run import _blocked, _fast, _kernels, _recycle, parallel
from bcast.core.errors import BroadcastError, InputError
from bcast.run.execute import MemoryBudgetError, memory_budget_set, run_plan
from bcast.rules._cache import PLANS, BoundedCache, plan_key

RNG = np.random.default_rng(20261122)


@pytest.fixture
def split_everything(monkeypatch):
    """Two threads, and every output of 8 elements or more split (the small-op fast
    paths are off); counts the splits."""
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 8)
    monkeypatch.setattr(_fast, "SMALL_ELEMENTS", 0)
    bcast.run.clear_caches()
    calls = []
    real = parallel.run_chunked

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(parallel, "run_chunked", spy)
    previous = parallel.set_threads(2)
    yield calls
    parallel.set_threads(previous)
    bcast.run.clear_caches()


def single(f, /, *args, **kwargs):
    """``f(*args, **kwargs)`` on one thread."""
    previous = parallel.set_threads(1)
    try:
        return f(*args, **kwargs)
    finally:
        parallel.set_threads(previous)


def same_bits(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def values(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype)
    x = np.array(RNG.standard_normal(shape) * 10.0 ** RNG.integers(-3, 30, shape))
    x[RNG.random(shape) < 0.05] = np.nan
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def partner(shape):
    """A random shape of the same rank that broadcasts into ``shape`` (some dims 1)."""
    return tuple(d if RNG.random() < 0.5 else 1 for d in shape)


def shape_pair():
    """A random output shape (rank 1-4) and a shorter or equal broadcast partner of it."""
    out = tuple(int(d) for d in RNG.integers(1, 9, RNG.integers(1, 5)))
    return out, partner(out[RNG.integers(0, len(out)):])


# --------------------------------------------------------------------------- threads vs one thread

UFUNCS = {"f": [np.add, np.subtract, np.multiply, np.true_divide, np.maximum, np.power, np.arctan2],
          "i": [np.add, np.multiply, np.bitwise_xor, np.floor_divide, np.left_shift, np.maximum],
          "b": [np.logical_and, np.logical_xor, np.not_equal]}
DTYPES = {"f": ["float32", "float64", "float16"], "i": ["int8", "uint16", "int64"], "b": ["bool"]}


def test_apply_threads_match_one_thread(split_everything):
    cases = 0
    for kind, ufuncs in UFUNCS.items():
        for dtype in DTYPES[kind]:
            for f in ufuncs:
                for _ in range(4):
                    out_shape, b_shape = shape_pair()
                    a, b = values(out_shape, dtype), values(b_shape, dtype)
                    with np.errstate(all="ignore"):
                        got = bcast.apply(f, a, b)
                        want = single(bcast.apply, f, a, b)
                    assert same_bits(got, want), (f, dtype, out_shape, b_shape)
                    cases += 1
    assert cases > 150 and split_everything  # threads did run


@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_out_of_any_layout(split_everything, order):
    # (b is not stretched along the last axis: such a broadcast runs as numpy's one call, see bcast.run._fast.large)
    a, b = values((6, 5, 7), "float32"), values((5, 7), "float32")
    if order == "strided":
        out = np.zeros((12, 5, 14), np.float32)[::2, :, 1::2]
    else:
        out = np.zeros((6, 5, 7), np.float32, order=order)
    result = bcast.apply(np.add, a, b, out=out)
    assert result is out and same_bits(np.ascontiguousarray(out), np.add(a, b))
    assert split_everything


def test_zero_size_and_rank_0(split_everything):
    for shapes in [((0, 5), (5,)), ((3, 0, 2), (1, 2)), ((), ())]:
        a, b = (values(s, "float64") for s in shapes)
        assert same_bits(bcast.apply(np.add, a, b), np.add(a, b))


ONNX_OPS = [("Add", 2), ("Sub", 2), ("Mul", 2), ("Div", 2), ("Pow", 2), ("Mod", 2), ("Max", 3), ("Min", 2),
            ("Sum", 4), ("Mean", 3), ("Greater", 2), ("Equal", 2), ("PRelu", 2)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_onnx_threads_match_one_thread(split_everything, dtype):
    n = 0
    for op, arity in ONNX_OPS:
        if dtype.startswith("int") and op in ("Sum", "Mean", "PRelu"):
            continue
        for _ in range(3):
            out_shape, _ = shape_pair()
            shapes = [out_shape] + [partner(out_shape) for _ in range(arity - 1)]
            arrays = [values(s, dtype) for s in shapes]
            if op in ("Div", "Mod") and dtype.startswith("int"):
                arrays[1][arrays[1] == 0] = 3
            attrs = {"fmod": 1} if op == "Mod" and not dtype.startswith("int") else {}
            got = bcast.frameworks.onnx.ops.run(op, *arrays, **attrs)
            want = single(bcast.frameworks.onnx.ops.run, op, *arrays, **attrs)
            assert same_bits(got, want), (op, dtype, shapes)
            n += 1
    assert n >= 27 and split_everything


def test_onnx_where_and_sum_order(split_everything):
    """Sum adds in input order in every chunk: float32 results that depend on the order agree."""
    big = np.full((64, 33), 1e8, np.float32)
    ones, minus = np.ones(33, np.float32), np.full((64, 1), -1e8, np.float32)
    got = bcast.frameworks.onnx.ops.run("Sum", big, ones, minus, ones)
    assert same_bits(got, ((big + ones) + minus) + ones)
    assert same_bits(got, single(bcast.frameworks.onnx.ops.run, "Sum", big, ones, minus, ones))
    assert same_bits(bcast.frameworks.onnx.ops.run("Mean", big, minus, ones), ((big + minus) + ones) / np.float32(3))
    cond = RNG.random((64, 1)) < 0.5
    got = bcast.frameworks.onnx.ops.run("Where", cond, big, ones)
    assert same_bits(got, np.where(cond, big, ones))


def test_openvino_and_ncnn_threads_match_one_thread(split_everything):
    a = values((8, 6, 5, 4), "float32")
    for op, inputs, kw in [
        ("Add", (a, values((6, 5), "float32")), {"auto_broadcast": "pdpd", "axis": 1}),
        ("Maximum", (a, values((5, 1), "float32")), {}),
        ("SquaredDifference", (a, values((4,), "float32")), {}),
        ("Select", (values((5, 4), "bool"), a, values((6, 1, 1), "float32")), {}),
        ("Divide", (values((8, 6), "int32"), np.full(6, 3, np.int32)), {}),
    ]:
        got = bcast.frameworks.openvino.ops.run(op, *inputs, **kw)
        assert same_bits(got, single(bcast.frameworks.openvino.ops.run, op, *inputs, **kw)), op
    for op in bcast.frameworks.ncnn.ops.ops():
        b = np.abs(values((6, 1, 1), "float32")) + 1
        got = bcast.frameworks.ncnn.ops.run(op, a[0], b)
        assert same_bits(got, single(bcast.frameworks.ncnn.ops.run, op, a[0], b)), op
    assert split_everything


def test_out_that_overlaps_an_input_is_not_split(split_everything):
    x = values((16, 8), "float64")
    want = x + x[0]
    bcast.apply(np.add, x, x[0], out=x)  # numpy buffers this overlap; chunks would not
    assert same_bits(x, want) and not split_everything


def test_errors_and_errstate_reach_the_caller(split_everything):
    a, zero = np.ones((16, 8)), np.zeros(8)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        bcast.apply(np.divide, a, zero)
    with np.errstate(divide="ignore"):
        assert np.isinf(bcast.apply(np.divide, a, zero)).all()
    with pytest.raises(InputError, match="add"):
        bcast.apply(np.add, a, np.ones(8), out=np.empty((16, 8), np.int8))


def test_memory_budget_is_checked_before_any_thread_or_allocation(monkeypatch):
    monkeypatch.setattr(parallel, "run_chunked", lambda *a, **k: pytest.fail("split an op over budget"))
    previous = parallel.set_threads(2)
    try:
        with memory_budget_set("2MiB"), pytest.raises(MemoryBudgetError, match="nothing was allocated"):
            bcast.apply(np.add, np.ones((2048, 1), np.float32), np.ones(2048, np.float32))
        with memory_budget_set("2MiB"), pytest.raises(MemoryBudgetError):
            bcast.frameworks.onnx.ops.run("Sum", np.ones((2048, 1), np.float32), np.ones(2048, np.float32))
    finally:
        parallel.set_threads(previous)


def test_thread_count_settings(monkeypatch):
    previous = parallel.set_threads(None)
    try:
        monkeypatch.delenv("BCAST_THREADS", raising=False)
        assert parallel.threads() == len(os.sched_getaffinity(0)) == bcast.threads()
        monkeypatch.setenv("BCAST_THREADS", "3")
        assert parallel.threads() == 3
        assert bcast.set_threads(1) is None and parallel.threads() == 1
        for bad in (0, -1, 1.5, True, "2"):
            with pytest.raises(InputError, match="set_threads must be a whole number"):
                parallel.set_threads(bad)
        parallel.set_threads(None)
        monkeypatch.setenv("BCAST_THREADS", "many")
        with pytest.raises(InputError, match="BCAST_THREADS"):
            parallel.threads()
    finally:
        parallel.set_threads(previous)


# --------------------------------------------------------------------------- blocking


@pytest.fixture
def block_everything(monkeypatch):
    """Tiles of 4 elements, tasks of 16, operands read in place from runs of 8: small arrays
    are blocked (and split in two threads); counts the blocked schedules.  The compiled loops are
    off (they would take float16, for one: tests/run/test_kernels.py tests them)."""
    monkeypatch.setattr(_kernels, "_kernel", False)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 8)
    monkeypatch.setattr(_fast, "SMALL_ELEMENTS", 0)
    monkeypatch.setattr(_blocked, "TILE", 4)
    monkeypatch.setattr(_blocked, "TASK", 16)
    monkeypatch.setattr(_blocked, "RUN", 8)
    bcast.run.clear_caches()
    blocked = []
    real = _blocked.schedule

    def spy(*args, **kwargs):
        s = real(*args, **kwargs)
        blocked.append(s.blocked)
        return s

    monkeypatch.setattr(_blocked, "schedule", spy)
    previous = parallel.set_threads(2)
    yield blocked
    parallel.set_threads(previous)
    bcast.run.clear_caches()


def broadcast_partner(shape):
    """A shape that broadcasts into ``shape``: some dims 1 (inner ones most often, so that the
    operand is stride 0 inside the tile), sometimes fewer dims."""
    b = [d if RNG.random() < 0.4 else 1 for d in shape]
    return tuple(b[RNG.integers(0, len(b)):]) if RNG.random() < 0.3 else tuple(b)


def big_shape():
    return tuple(int(d) for d in RNG.integers(2, 9, RNG.integers(2, 5)))


@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_blocked_matches_numpy_and_one_thread(block_everything, order):
    cases = 0
    for kind, ufuncs in UFUNCS.items():
        for dtype in DTYPES[kind]:
            for f in ufuncs:
                shape = big_shape()
                a, b = values(shape, dtype), values(broadcast_partner(shape), dtype)
                if RNG.random() < 0.5:
                    a, b = b, a
                with np.errstate(all="ignore"):
                    want = f(a, b)
                    out = {"C": np.empty_like(want, order="C"), "F": np.empty_like(want, order="F"),
                           "strided": np.empty(want.shape + (2,), want.dtype)[..., 1]}[order]
                    got = bcast.apply(f, a, b, out=out)
                    # one thread: the full path blocks (a prepared call runs numpy's own loop)
                    one = single(run_plan, bcast.infer(a.shape, b.shape), f, [a, b])
                assert same_bits(np.ascontiguousarray(got), want), (f, dtype, a.shape, b.shape)
                assert same_bits(one, want), (f, dtype, a.shape, b.shape)
                cases += 1
    assert cases == 42 and any(block_everything)  # out= of other layouts: plain chunks (one thread: blocked)


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "int32", "float64", "complex128", "str"])
def test_blocked_onnx_where_sum_mean(block_everything, dtype):
    for _ in range(3):
        shape = big_shape()
        cond = values(broadcast_partner(shape), "bool")
        x, y = (values(broadcast_partner(shape), dtype if dtype != "str" else "int64") for _ in range(2))
        x = values(shape, x.dtype) if RNG.random() < 0.5 else x
        if dtype == "str":
            x, y = x.astype(str), y.astype(str)
        got = bcast.frameworks.onnx.ops.run("Where", cond, x, y)
        assert same_bits(got, np.where(cond, x, y)), (dtype, cond.shape, x.shape, y.shape)
        assert same_bits(got, single(bcast.frameworks.onnx.ops.run, "Where", cond, x, y))
        if dtype in ("float16", "float64"):
            z = values(broadcast_partner(shape), dtype)
            with np.errstate(all="ignore"):
                assert same_bits(bcast.frameworks.onnx.ops.run("Sum", x, y, z), (x + y) + z)
                assert same_bits(bcast.frameworks.onnx.ops.run("Mean", x, y, z), ((x + y) + z) / x.dtype.type(3))
    assert any(block_everything)


def test_blocked_frameworks_and_scratch_reuse(block_everything):
    a = values((8, 6, 5, 4), "float32")
    for op, inputs, kw in [
        ("Add", (a, values((6, 5), "float32")), {"auto_broadcast": "pdpd", "axis": 1}),
        ("Select", (values((5, 4), "bool"), a, values((6, 1, 1), "float32")), {}),
        ("Power", (np.abs(a), values((5, 1), "float32")), {}),
    ]:
        got = bcast.frameworks.openvino.ops.run(op, *inputs, **kw)
        assert same_bits(got, single(bcast.frameworks.openvino.ops.run, op, *inputs, **kw)), op
    want = a + values((6, 1, 1), "float32")[None]
    b = values((6, 1, 1), "float32")
    for _ in range(2):  # the same schedule shape twice: each worker's scratch is refilled, never stale
        assert same_bits(bcast.frameworks.ncnn.ops.run("ADD", a[0], b), a[0] + b)
        b = b + 1
    assert same_bits(bcast.frameworks.ncnn.ops.run("ADD", a[0], b), a[0] + b) and want.shape == a.shape
    assert any(block_everything)


def test_schedule_shapes():
    x = np.empty((16, 256, 56, 56), np.float32)
    s = _blocked.schedule([x, np.broadcast_to(np.ones((256, 1, 1), np.float32), x.shape)], x, 8)
    assert s.blocked and s.tile == (16, 56, 56) and len(s.tasks) == 16  # one task per group of 16 channels
    region = s.regions[0]
    assert region.short == [1] and region.loop == (1,) and region.bufsize is None
    pd = np.broadcast_to(np.ones((256, 56, 1), np.float32), x.shape)  # Paddle's (256,56) at axis 1
    assert _blocked.schedule([x, pd], x, 8).regions[0].short == [1]
    m = np.empty((4096, 4096), np.float32)  # runs of 4096 are read in place, numpy's buffers made as short
    s = _blocked.schedule([m, np.broadcast_to(np.ones(4096, np.float32), m.shape)], m, 8)
    assert s.blocked and s.regions[0].short == [] and s.regions[0].bufsize == 4096
    n = np.empty((256, 112, 112), np.float32)  # runs of 12544 >= numpy's buffers: plain chunks
    assert not _blocked.schedule([n, np.broadcast_to(np.ones((256, 1, 1), np.float32), n.shape)], n, 8).blocked


def test_recycled_outputs_are_never_in_use(monkeypatch):
    monkeypatch.setattr(_recycle, "MIN_BYTES", 64)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 8)
    monkeypatch.setattr(_fast, "SMALL_ELEMENTS", 0)
    bcast.run.clear_caches()
    _recycle.release()
    a, b = values((64, 8), "float64"), values((8,), "float64")
    r1 = bcast.apply(np.add, a, b)
    r2 = bcast.apply(np.add, a, b)
    assert not np.shares_memory(r1, r2)  # r1 is alive
    view = r1[3:5]
    del r1
    r3 = bcast.apply(np.subtract, a, b)
    assert not np.shares_memory(r3, view) and not np.shares_memory(r3, r2)  # a view keeps its buffer
    address = r3.ctypes.data
    del r3
    # another dtype, a smaller size
    r4 = bcast.frameworks.onnx.ops.run("Mul", a.astype(np.float32), b.astype(np.float32))
    assert r4.ctypes.data == address and r4.dtype == np.float32
    with np.errstate(all="ignore"):
        assert same_bits(r4, a.astype(np.float32) * b.astype(np.float32))
    assert same_bits(view, (a + b)[3:5]) and same_bits(r2, a + b)
    del r4
    assert not np.shares_memory(bcast.apply(np.add, values((64, 32), "float64"), b[:1]), r2)  # over 2x: fresh
    monkeypatch.setenv("BCAST_RECYCLE", "0")
    assert bcast.apply(np.add, a, b).flags.owndata
    _recycle.release()
    bcast.run.clear_caches()


# --------------------------------------------------------------------------- the plan cache


def test_plan_cache_gives_the_same_plan_object():
    assert bcast.infer((5, 1, 3), (4, 1)) is bcast.infer((5, 1, 3), (4, 1))
    assert bcast.infer("2,3", "3") is bcast.infer("2,3", "3")
    p0 = bcast.infer((2, 3, 4), (3,), rule="pdpd", axis=1)
    p1 = bcast.infer((2, 3, 4), (4,), rule="pdpd", axis=2)
    assert p0 is not p1 and p0.aligned_shape(1) == (1, 3, 1) and p1.aligned_shape(1) == (1, 1, 4)
    assert bcast.infer((2, 3), (3,), names=("x", "y")).names == ("x", "y")
    assert bcast.infer((2, 3), (3,)).names == ("A", "B")


def test_plan_cache_keys_keep_types_apart():
    assert plan_key("pdpd", ((2, 3),), None, "permissive", {"axis": 1}) != \
        plan_key("pdpd", ((2, 3),), None, "permissive", {"axis": True})
    assert plan_key("numpy", ((2, 3.0),), None, "permissive", {}) is None
    assert plan_key("numpy", ([2, 3],), None, "permissive", {}) is None
    assert plan_key("numpy", ((np.int64(2),),), None, "permissive", {}) is None
    # what is not cached still works, and errors are never cached
    assert bcast.infer([2, 3], [3]).shape == (2, 3)
    for _ in range(2):
        with pytest.raises(BroadcastError):
            bcast.infer((2, 3), (4,))
        with pytest.raises(InputError):
            bcast.infer((2, 3), (3,), rule="pdpd", axis=True)


def test_plan_cache_is_bounded():
    c: BoundedCache = BoundedCache(3)
    for i in range(10):
        c.put(i, str(i))
    assert len(c) == 3 and c.get(9) == "9" and c.get(0) is None
    for i in range(PLANS.maxsize + 50):
        bcast.infer((i + 1, 1), (1,))
    assert len(PLANS) <= PLANS.maxsize


# --------------------------------------------------------------------------- small-op fast paths


def test_small_fast_paths_agree_with_the_full_path():
    a, b = values((2, 3), "float32"), values((2,), "float32")
    assert same_bits(bcast.apply(np.add, a, b, rule="pdpd", axis=0), a + b[:, None])
    with np.errstate(over="ignore"):
        assert same_bits(bcast.apply("multiply", a, b[:1]), a * b[:1])
    assert same_bits(bcast.apply(np.add, np.float32(1), np.float32(2)), np.asarray(np.float32(3)))
    with pytest.raises(InputError, match="add"):
        bcast.apply(np.add, a, a, out=np.empty((2, 3), np.int8))
    for _ in range(2):  # after a success with float32, other dtypes and shapes still get their errors
        assert same_bits(bcast.frameworks.onnx.ops.run("Add", a, a), a + a)
        with pytest.raises(InputError, match="same type"):
            bcast.frameworks.onnx.ops.run("Add", a, a.astype(np.float64))
        with pytest.raises(BroadcastError):
            bcast.frameworks.onnx.ops.run("Add", a, values((4,), "float32"))
        with pytest.raises(InputError, match="must be one of"):
            bcast.frameworks.onnx.ops.run("Add", values((2, 3), "bool"), values((2, 3), "bool"))
    big_endian = a.astype(">f4")
    assert bcast.frameworks.onnx.ops.run("Add", big_endian, big_endian).dtype == np.dtype(">f4")
    out = np.empty((2, 3), np.float32)
    assert bcast.frameworks.onnx.ops.run("Add", a, a, out=out) is out and same_bits(out, a + a)
    f64 = a.astype(np.float64)  # the same shapes in another dtype: its own entry
    assert same_bits(bcast.frameworks.onnx.ops.run("Add", f64, f64), f64 + f64)
    assert same_bits(bcast.apply("add", f64, f64), f64 + f64)
    with pytest.raises(InputError, match="subtract"):  # a cached entry for the shapes: numpy's refusal still says so
        bcast.apply(np.subtract, values((2, 3), "bool"), values((2, 3), "bool"))
    with pytest.raises(InputError, match="unknown"):
        bcast.frameworks.onnx.ops.run(["Add"], a, a)
    with np.errstate(all="raise"):  # ONNX ops never warn nor raise on inf
        huge = np.full(2, 1e30, np.float32)
        assert np.isinf(bcast.frameworks.onnx.ops.run("Mul", huge, huge)).all()


def full_path(f, *args):
    """``f(*args)`` with the small-op fast paths off."""
    previous = _fast.SMALL_ELEMENTS
    _fast.SMALL_ELEMENTS = 0
    bcast.run.clear_caches()
    try:
        return f(*args)
    finally:
        _fast.SMALL_ELEMENTS = previous
        bcast.run.clear_caches()


def test_openvino_and_ncnn_fast_paths_agree_with_the_full_path():
    a, col = values((4, 3), "float32"), values((4, 1), "float32")
    ints = values((4, 3), "int32")
    calls = [(bcast.frameworks.openvino.ops.run, op, x, y)
             for op in ("Add", "Divide", "Maximum", "Less", "SquaredDifference", "FloorMod", "LogicalXor")
             for x, y in [(a, col), (col, a), (ints, ints[0]), (a > 0, col > 0)]]
    calls += [(bcast.frameworks.ncnn.ops.run, op, x, y) for op in ("ADD", "RSUB", "MAX", "REMAINDER", 3) for x, y in
              [(a, col), (a, a[0]), (a[None], col)]]
    want = []
    for run, op, x, y in calls:  # the full path: a result, or an error
        try:
            want.append(full_path(run, op, x, y))
        except (InputError, BroadcastError) as e:
            want.append(type(e))
    for _ in range(2):  # first call builds the fast path, the second takes it
        for (run, op, x, y), w in zip(calls, want):
            if isinstance(w, type):
                with pytest.raises(w):
                    run(op, x, y)
            else:
                with np.errstate(all="raise"):  # neither runtime warns
                    assert same_bits(run(op, x, y), w), (run.__module__, op, x.shape, y.shape)
    assert sum(isinstance(w, type) for w in want) == 8  # bool arithmetic, int logic, (4,1) + (3,) in ncnn
    zero = np.zeros(3, np.int32)
    for _ in range(2):  # a value check of the kernel still runs on the fast path
        with pytest.raises(InputError, match="zero"):
            bcast.frameworks.openvino.ops.run("Divide", ints, zero)
    with pytest.raises(InputError, match="unknown op"):
        bcast.frameworks.openvino.ops.run(["Add"], a, a)
    with pytest.raises(InputError, match="op_type"):
        bcast.frameworks.ncnn.ops.run(["ADD"], a, a)
