"""Prepared calls at every size (bcast.run._fast.large, apply_large, the op tables' runners): the same
bits and errors as the full path, the same memory budget (refused with the same words, reserved while
the call runs), out= that overlaps an input, thread count and budget read on every call, and numpy's
public API only."""

import functools
import pathlib
import re
import threading

import numpy as np
import pytest

import bcast
import bcast.ncnn
import bcast.onnx
import bcast.openvino
from bcast.frameworks.ncnn import ops as ncnn_ops
from bcast.frameworks.onnx import ops as onnx_ops
from bcast.frameworks.openvino import ops as openvino_ops
from bcast.run import _fast, _recycle, parallel
from bcast.run.execute import MemoryBudgetError, memory_budget_set, memory_reserved

RNG = np.random.default_rng(20261125)
DTYPES = ["int8", "uint8", "float16", "float32", "float64", "int64"]
# output (8, 16, 64): 8192 elements, over SMALL_ELEMENTS; B of each broadcast pattern
PATTERNS = {"channel": ((8, 16, 64), (16, 1)), "row": ((8, 16, 64), (64,)), "column": ((128, 64), (128, 1)),
            "outer": ((128, 1), (64,)), "scalar": ((8, 16, 64), ()), "same": ((8, 16, 64), (8, 16, 64)),
            "left": ((16, 64), (8, 1, 1))}


def values(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    x = np.array(RNG.standard_normal(shape) * 10.0 ** RNG.integers(-3, 5, shape))
    x[RNG.random(shape) < 0.05] = np.nan
    x[RNG.random(shape) < 0.05] = np.inf
    x[RNG.random(shape) < 0.05] = 0.0
    return x.astype(dtype)


def outcome(f, *args, **kwargs):
    """``("ok", dtype, shape, bytes)`` of a result, or ``(error type, message)``."""
    try:
        with np.errstate(all="ignore"):
            r = f(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared with the full path's
        return type(e), str(e)
    r = np.asarray(r)
    return "ok", r.dtype, r.shape, r.tobytes()


@pytest.fixture
def full_path(monkeypatch):
    """``full_path(f, *args)``: ``f(*args)`` with no call prepared (every table and bcast.apply
    take the full path)."""

    def run(f, *args, **kwargs):
        with monkeypatch.context() as m:
            for table in (onnx_ops, openvino_ops, ncnn_ops):
                m.setattr(table, "_fast_build", lambda *a: _fast.MISS)
            m.setattr(_fast, "apply_small", lambda *a: _fast.MISS)
            m.setattr(_fast, "apply_large", lambda *a: _fast.MISS)
            bcast.run.clear_caches()
            try:
                return outcome(f, *args, **kwargs)
            finally:
                bcast.run.clear_caches()

    return run


@pytest.fixture(params=[1, 2])
def threads(request, monkeypatch):
    """One thread, or two with every output of SMALL_ELEMENTS or more split."""
    if request.param == 2:
        monkeypatch.setattr(parallel, "MIN_ELEMENTS", _fast.SMALL_ELEMENTS)
        monkeypatch.setattr(parallel, "MIN_ELEMENTS_F16", _fast.SMALL_ELEMENTS)
    previous = parallel.set_threads(request.param)
    bcast.run.clear_caches()
    yield request.param
    parallel.set_threads(previous)
    bcast.run.clear_caches()


def check_calls(calls, full_path):
    """Each call prepared (twice: built, then cached; without and with out=) gives the full path's outcome."""
    ran = 0
    for f, args, dtype in calls:
        want = full_path(f, *args)
        assert outcome(f, *args) == want == outcome(f, *args), (f, [a.shape for a in args], dtype)
        if want[0] == "ok":
            ran += 1
            out = np.empty(want[2], want[1])
            got = outcome(f, *args, out=out)
            assert got == want, (f, [a.shape for a in args], dtype)
            assert out.tobytes() == want[3]
    return ran


def pairs(dtypes):
    for dtype in dtypes:
        for pattern, (sa, sb) in PATTERNS.items():
            a, b = values(sa, dtype), values(sb, dtype)
            yield pattern, dtype, a, b
            yield pattern, dtype, b, a


def test_onnx_large_calls_match_the_full_path(threads, full_path):
    calls = [(onnx_ops.run, (op, a, b), dtype) for _, dtype, a, b in pairs(DTYPES)
             for op in ("Add", "Sub", "Mul", "Div", "Max", "Min", "Greater", "Equal", "Mod", "Pow")]
    assert check_calls(calls, full_path) > len(calls) // 2


def test_openvino_large_calls_match_the_full_path(threads, full_path):
    calls = [(openvino_ops.run, (op, a, b), dtype) for _, dtype, a, b in pairs(DTYPES)
             for op in ("Add", "Subtract", "Multiply", "Divide", "Maximum", "Minimum", "Less", "NotEqual",
                        "SquaredDifference", "FloorMod", "Power")]
    assert check_calls(calls, full_path) > len(calls) // 2


def test_ncnn_large_calls_match_the_full_path(threads, full_path):
    shapes = [((8, 16, 64), (16, 1, 1)), ((8, 16, 64), (64,)), ((8, 16, 64), (8, 16, 64)), ((16, 8, 64), (8, 64)),
              ((128, 64), (128, 1)), ((8, 16, 64), (1,)), ((2, 4, 16, 64), (4, 1, 1, 1))]
    calls = [(ncnn_ops.run, (op, x, y), "float32") for sa, sb in shapes
             for a, b in [(values(sa, "float32"), values(sb, "float32"))] for x, y in ((a, b), (b, a))
             for op in ("ADD", "SUB", "MUL", "DIV", "MAX", "MIN", "RSUB", "POW", "RDIV")]
    assert check_calls(calls, full_path) > len(calls) // 2


def test_apply_large_calls_match_the_full_path(threads, full_path):
    calls = [(bcast.apply, (f, a, b), dtype) for _, dtype, a, b in pairs(DTYPES + ["bool"])
             for f in (np.add, np.subtract, np.multiply, np.divide, np.maximum, np.fmin, np.greater, np.equal,
                       np.floor_divide, np.power, "add", "maximum")]
    assert check_calls(calls, full_path) > len(calls) // 2


def test_apply_keeps_numpy_warnings_and_out_casting():
    a = np.full((64, 128), 3e38, np.float32)
    with pytest.warns(RuntimeWarning, match="overflow"):
        bcast.apply(np.add, a, a[0])
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        bcast.apply(np.add, a, a[0])
    out = np.empty((64, 128), np.float64)  # numpy casts into an out= of another dtype; so does bcast.apply
    assert bcast.apply(np.add, a[:, :1], np.ones(128, np.float32), out=out) is out
    assert np.array_equal(out, np.add(a[:, :1], np.ones(128, np.float32), dtype=np.float64))


# --------------------------------------------------------------------------- the memory budget


LARGE = [
    (onnx_ops.run, ("Add", np.ones((1024, 1), np.float32), np.ones(512, np.float32))),
    (onnx_ops.run, ("Max", np.ones((1024, 1), np.float32), np.ones(512, np.float32))),  # a kernel, not a ufunc
    (openvino_ops.run, ("Greater", np.ones((1024, 1), np.int8), np.ones(2048, np.int8))),
    (ncnn_ops.run, ("MUL", np.ones((4, 256, 512), np.float32), np.ones((4, 1, 1), np.float32))),
    (ncnn_ops.run, ("RSUB", np.ones((4, 256, 512), np.float32), np.ones((4, 1, 1), np.float32))),
    (bcast.apply, (np.add, np.ones((1024, 1), np.float32), np.ones(512, np.float32))),
    (bcast.apply, ("multiply", np.ones((1024, 1), np.int16), np.ones(1024, np.int16))),
]


@pytest.mark.parametrize("f, args", LARGE + [  # bcast.apply's dtype= sizes the check: 8 MiB, not 1 MiB
    (functools.partial(bcast.apply, dtype=np.float64), (np.add, np.ones((1024, 1), np.int8), np.ones(1024, np.int8)))])
def test_budget_refuses_a_cached_large_call_as_the_full_path_does(f, args, full_path):
    bcast.run.clear_caches()
    f(*args)  # prepared under the default budget, and cached
    with memory_budget_set("1MiB"):
        with pytest.raises(MemoryBudgetError) as refused:
            f(*args)
        want = full_path(f, *args)
    assert want == (MemoryBudgetError, str(refused.value)) and "nothing was allocated" in want[1]
    assert memory_reserved() == 0
    f(*args)  # the default budget again, on the same key


@pytest.mark.parametrize("f, args", LARGE)
def test_a_large_prepared_call_is_reserved_while_it_runs(f, args, monkeypatch):
    bcast.run.clear_caches()
    nbytes = f(*args).nbytes
    seen = []
    real = _recycle.empty

    def spy(shape, dtype):
        seen.append(memory_reserved())
        return real(shape, dtype)

    monkeypatch.setattr(_recycle, "MIN_BYTES", 1)  # every output allocated by _recycle.empty: the spy sees it
    monkeypatch.setattr(_recycle, "empty", spy)
    before = memory_reserved()
    f(*args)
    assert seen and seen[0] >= before + nbytes and memory_reserved() == before
    # another thread, while this call holds its output: refused under a budget that fits one output only
    refused = []

    def other():
        with memory_budget_set(nbytes + nbytes // 2):
            try:
                f(*args)
            except MemoryBudgetError as e:
                refused.append(e.reserved)

    def spy_other(shape, dtype):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        return real(shape, dtype)

    monkeypatch.setattr(_recycle, "empty", spy_other)
    with memory_budget_set(nbytes + nbytes // 2):
        f(*args)
    assert refused and refused[0] >= nbytes


def test_a_changed_thread_count_takes_effect_on_a_cached_key(monkeypatch):
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", _fast.SMALL_ELEMENTS)
    calls = []
    real = parallel.run_chunked
    monkeypatch.setattr(parallel, "run_chunked", lambda *a, **k: calls.append(1) or real(*a, **k))
    a, b = values((8, 16, 64), "int8"), values((64,), "int8")
    want = np.add(a, b)
    previous = parallel.set_threads(1)
    try:
        bcast.run.clear_caches()
        for f in (lambda: onnx_ops.run("Add", a, b), lambda: bcast.apply(np.add, a, b)):
            parallel.set_threads(1)
            assert np.array_equal(f(), want) and not calls
            parallel.set_threads(2)
            assert np.array_equal(f(), want) and calls  # the same cached key, now split
            calls.clear()
    finally:
        parallel.set_threads(previous)


# --------------------------------------------------------------------------- out= that overlaps an input


def test_out_that_overlaps_an_input_gives_numpys_answer():
    a, b = values((64, 128), "float32"), values((128,), "float32")
    with np.errstate(all="ignore"):
        cases = [
            (lambda x: onnx_ops.run("Add", x, b, out=x), a + b),
            (lambda x: onnx_ops.run("Max", x, b, out=x), np.maximum(a, b)),  # a kernel of its own
            (lambda x: onnx_ops.run("Sub", b, x, out=x), b - a),
            (lambda x: openvino_ops.run("SquaredDifference", x, b, out=x), (a - b) * (a - b)),
            (lambda x: ncnn_ops.run("RSUB", x, b, out=x), b - a),
            (lambda x: bcast.apply(np.subtract, b, x, out=x), b - a),
            (lambda x: bcast.apply(np.add, x[:, ::-1], x[0], out=x), a[:, ::-1] + a[0]),
        ]
        for f, want in cases:
            for _ in range(2):  # built, then cached
                x = a.copy()
                assert f(x) is x and x.tobytes() == want.tobytes()


# --------------------------------------------------------------------------- numpy's public API only


def test_no_module_uses_numpy_private_names():
    src = pathlib.Path(bcast.__file__).parent
    private = re.compile(r"numpy\._core|np\._core|numpy\.core\.|\bnp\.core\.|_extobj")
    found = [str(p.relative_to(src)) for p in src.rglob("*.py") if private.search(p.read_text())]
    assert found == []


INTS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


@pytest.mark.parametrize("dtype", INTS)
def test_silent_ufuncs_raise_no_floating_point_error_on_integers(dtype):
    info = np.iinfo(dtype) if dtype != "bool" else None
    edge = np.array([0, 1] if info is None else [info.min, info.min + 1, -1 if info.min else 2, 0, 1, info.max - 1,
                                                  info.max], dtype)
    col = np.tile(edge, 1100)[:, None]  # long runs too: numpy's vector loops
    checked = 0
    for ufunc in _fast._SILENT:
        if not _fast.silent(ufunc, [np.dtype(dtype)] * 2):
            continue
        try:
            ufunc.resolve_dtypes((np.dtype(dtype), np.dtype(dtype), None))
        except TypeError:  # no loop for this type (logical ops on ints go through bool)
            continue
        with np.errstate(all="raise"):
            ufunc(col, edge)
            ufunc(edge, col)
            ufunc(col[:, 0], col[::-1, 0])
        checked += 1
    assert checked >= 10
    if dtype != "bool":  # what silent does not claim: an integer division by zero warns
        assert not _fast.silent(np.floor_divide, [np.dtype(dtype)] * 2)
        with np.errstate(all="raise"), pytest.raises(FloatingPointError):
            np.floor_divide(edge, np.zeros_like(edge))


def test_floats_are_never_silent():
    assert not any(_fast.silent(u, [np.dtype(d)] * 2) for u in _fast._SILENT for d in ("float16", "float32"))
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        np.add(np.full(4, 6e4, np.float16), np.full(4, 6e4, np.float16))


def test_inputs_of_any_layout(threads, full_path):
    calls = []
    for dtype in ("float32", "int8", "float16"):
        base = values((16, 8, 128), dtype)
        for a in (base[:, :, ::2], base[::-1], np.asfortranarray(base), base.transpose(1, 0, 2)[:, :8]):
            assert not a.flags.c_contiguous or a.strides[0] < 0
            for b in (values(a.shape[-1:], dtype)[::-1], values(a.shape[:1] + (1, 1), dtype)[::-1], a[::-1]):
                calls += [(onnx_ops.run, (op, a, b), dtype) for op in ("Add", "Max", "Div")]
                calls += [(bcast.apply, (np.add, b, a), dtype), (openvino_ops.run, ("Minimum", a, b), dtype)]
    assert check_calls(calls, full_path) == len(calls)


# --------------------------------------------------------------------------- the compiled loop's place


class FakeLoop:
    """A compiled loop as bcast.run._kernels.prepare gives one: writes numpy's answer (ready) or nothing."""

    def __init__(self, ufunc, ready):
        self.ufunc, self.ready, self.runs = ufunc, ready, []

    def run(self, arrays, out, threads):
        assert out.flags.c_contiguous and all(x.flags.c_contiguous for x in arrays)
        assert not any(np.shares_memory(out, x) for x in arrays)
        self.runs.append((tuple(x.shape for x in arrays), threads))
        if self.ready:
            with np.errstate(all="ignore"):
                self.ufunc(*arrays, out=out)
        return self.ready


@pytest.mark.parametrize("ready", [True, False])
def test_the_compiled_loop_runs_first_where_it_may(monkeypatch, ready):
    from bcast.run import _kernels

    prepared = []

    def prepare(func, dtypes, shapes, shape, dtype):
        prepared.append((dtypes, shapes, shape, dtype))
        return FakeLoop(np.add, ready)

    monkeypatch.setattr(_kernels, "prepare", prepare)
    bcast.run.clear_caches()
    a, b = values((64, 128), "int8"), values((64, 1), "int8")
    want = np.add(a, b)
    for f in (lambda *x, **k: onnx_ops.run("Add", *x, **k), lambda *x, **k: bcast.apply(np.add, *x, **k)):
        prepared.clear()
        for _ in range(3):
            assert f(a, b).tobytes() == want.tobytes()
        out = np.empty_like(want)
        assert f(a, b, out=out) is out and out.tobytes() == want.tobytes()
        assert prepared == [((a.dtype, b.dtype), ((64, 128), (64, 1)), (64, 128), np.dtype("int8"))]  # once a key
        x = a.copy()  # an out= that is an input: not for the loop; numpy's answer
        assert f(x, b, out=x) is x and x.tobytes() == want.tobytes()
        assert f(a[:, ::-1], b).tobytes() == np.add(a[:, ::-1], b).tobytes()  # not C-contiguous: not for the loop
    bcast.run.clear_caches()


# --------------------------------------------------------------------------- warnings off, by public API


@pytest.mark.parametrize("shape", [(4, 3), (64, 128)])  # small, large
def test_framework_ops_never_warn_nor_raise_on_floats(shape):
    huge = np.full(shape, 3e38, np.float32)
    zero = np.zeros(shape[-1:], np.float32)
    bcast.run.clear_caches()
    with np.errstate(all="raise"):
        for _ in range(2):  # built, then cached
            assert np.isinf(onnx_ops.run("Mul", huge, huge)).all()
            assert np.isinf(onnx_ops.run("Div", huge, zero)).all()
            assert np.isinf(openvino_ops.run("Multiply", huge, huge)).all()
            assert np.isinf(ncnn_ops.run("MUL", huge, huge)).all()
            assert np.isinf(ncnn_ops.run("ADD", huge, huge, out=np.empty(shape, np.float32))).all()
        assert np.geterr()["over"] == "raise"


def test_quieted_keeps_each_threads_own_state():
    divide = _fast.quieted(np.divide)
    errors = []

    def work(mode):
        try:
            with np.errstate(all=mode):
                for _ in range(2000):
                    assert divide(np.ones(2), np.zeros(2))[0] == np.inf
                    assert np.geterr()["divide"] == mode
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(mode,)) for mode in ("raise", "warn", "raise", "ignore")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_onnx_views_kernel_keeps_the_kernels_marks():
    from types import SimpleNamespace

    from bcast.run.kernel import elementwise, loop_of, ufunc_of

    for marks in ({"loop": "where"}, {"ufunc": np.subtract, "swapped": True}, {"ufunc": np.add}):
        o = SimpleNamespace(kernel=elementwise(lambda views, out: None, **marks))
        func = onnx_ops._views_kernel(o, (2, 3), np.dtype("float32"), {})
        assert loop_of(func) == marks.get("loop")
        assert ufunc_of(func) == (None if "ufunc" not in marks else (marks["ufunc"], marks.get("swapped", False)))


@pytest.mark.parametrize("shape", [(4, 3), (64, 128)])  # small, large
def test_a_bad_out_is_refused_as_the_full_path_does(shape, full_path):
    a, b = values(shape, "float32"), values(shape[-1:], "float32")
    read_only = np.empty(shape, np.float32)
    read_only.flags.writeable = False
    bad = [np.empty(shape[::-1], np.float32), np.empty(shape, np.float64), read_only, [[0.0]]]
    calls = [(onnx_ops.run, ("Add", a, b)), (onnx_ops.run, ("Max", a, b)), (openvino_ops.run, ("Add", a, b)),
             (ncnn_ops.run, ("ADD", a, b)), (ncnn_ops.run, ("RSUB", a, b)), (bcast.apply, (np.add, a, b))]
    for f, args in calls:
        for out in bad:
            if f is bcast.apply and out is bad[1]:
                continue  # numpy casts into an out= of another dtype
            want = full_path(f, *args, out=out)
            assert want[0] != "ok" and outcome(f, *args, out=out) == want, (f, args[0], out)
