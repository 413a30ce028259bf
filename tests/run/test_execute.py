"""The executor: views never copies, out=, the memory budget, array API libraries, dask."""

import os
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp

import bcast
from bcast import BroadcastError, InputError
from bcast.run.execute import (
    MemoryBudgetError,
    apply,
    broadcast_arrays,
    check_memory,
    memory_budget,
    memory_budget_set,
    parse_bytes,
    set_memory_budget,
    view,
)

RNG = np.random.default_rng(3)


def arr(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# (rule, attrs, A shape, B shape, how numpy must see B to give the same answer)
PLACED = [
    ("numpy", {}, (2, 3, 4), (3, 1), (1, 3, 1)),
    ("unidirectional", {}, (2, 3, 4), (4,), (1, 1, 4)),
    ("pdpd", {"axis": 1}, (2, 3, 4, 5), (3, 4), (1, 3, 4, 1)),
    ("pdpd", {"axis": 1}, (2, 3, 4, 5), (3, 1), (1, 3, 1, 1)),  # trailing 1 of B dropped, per spec
    ("pdpd", {"axis": -1}, (2, 3, 4, 5), (4, 5), (1, 1, 4, 5)),
    ("ncnn", {}, (4, 3, 2), (4,), (4, 1, 1)),  # inner-axis rule: B lands on A's first axis
    ("ncnn", {}, (2, 2), (2,), (2, 1)),  # the tie rule
    ("ncnn", {}, (4, 3, 2), (2,), (1, 1, 2)),
    ("paddle", {"axis": 0}, (2,), (2, 3), (2, 3)),
    ("onnx-legacy", {"broadcast": 1, "axis": 0}, (2, 3, 4), (2,), (2, 1, 1)),
    ("none", {}, (2, 3), (2, 3), (2, 3)),
]


@pytest.mark.parametrize("rule, attrs, sa, sb, placed", PLACED, ids=[f"{r[0]}-{r[2]}-{r[3]}" for r in PLACED])
def test_apply_places_b_as_the_rule_says(rule, attrs, sa, sb, placed):
    a, b = arr(*sa), arr(*sb)
    if rule == "paddle":  # either side may be the smaller one
        expected = np.subtract(a.reshape(2, 1), b)
    else:
        expected = np.subtract(a, b.reshape(placed))
    got = apply(np.subtract, a, b, rule=rule, **attrs)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype


def test_views_are_stride_0_and_read_only():
    a, b = arr(5, 1, 3), arr(4, 1)
    va, vb = broadcast_arrays(a, b)
    assert va.shape == vb.shape == (5, 4, 3)
    assert np.shares_memory(va, a) and np.shares_memory(vb, b)
    assert va.strides[1] == 0 and vb.strides[0] == 0 and vb.strides[2] == 0
    assert not va.flags.writeable and not vb.flags.writeable


def test_non_contiguous_inputs_stay_views():
    base = arr(6, 8)
    a = base[::2, ::-3]  # (3, 3), negative and non-unit strides
    b = base.T[1:4, 0]  # (3,), strided
    va, vb = broadcast_arrays(a, b, rule="pdpd", axis=0)
    assert np.shares_memory(va, base) and np.shares_memory(vb, base)
    np.testing.assert_array_equal(apply(np.add, a, b, rule="pdpd", axis=0), a + b[:, None])


def test_out_is_written_and_returned():
    a, b = arr(2, 3, 4), arr(3, 1)
    out = np.empty((2, 3, 4))
    res = apply(np.multiply, a, b, rule="pdpd", axis=1, out=out)
    assert res is out
    np.testing.assert_array_equal(out, a * b[None])


@pytest.mark.parametrize(
    "out, dtype, message",
    [
        (np.empty((2, 3)), None, "out= has shape (2,3); the result has shape (2,3,4)"),
        (np.empty((2, 3, 4), np.float32), np.float64, "out= has dtype float32; the result has dtype float64"),
        (np.broadcast_to(np.empty(1), (2, 3, 4)), None, "out= is read-only"),
        ([1, 2], None, "out= must be an array, got list"),
    ],
)
def test_bad_out_is_an_input_error(out, dtype, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply(np.add, arr(2, 3, 4), arr(4), out=out, dtype=dtype)


def test_out_numpy_cannot_cast_to_is_an_input_error():
    with pytest.raises(InputError, match="add"):
        apply(np.add, arr(3), arr(3), out=np.empty(3, np.int32))


def test_broadcast_error_propagates_with_its_fields():
    with pytest.raises(BroadcastError) as e:
        apply(np.add, arr(2, 3), arr(4))
    assert e.value.dims == (3, 4) and e.value.from_right == -1


@pytest.mark.parametrize(
    "arrays, attrs, message",
    [
        ((np.ones(3), "x"), {}, "expected an array or an array-like, got str"),
        ((np.ones(3), np.ones(3)), {"ncnn_order": True}, "arrays are always in numpy order"),
    ],
)
def test_bad_requests_are_input_errors(arrays, attrs, message):
    with pytest.raises(InputError, match=message):
        apply(np.add, *arrays, rule="ncnn" if attrs else "numpy", **attrs)


@pytest.mark.parametrize("func, message", [("nonexistent", "numpy has no function 'nonexistent'"),
                                           (3, "func must be callable")])
def test_bad_functions_are_input_errors(func, message):
    with pytest.raises(InputError, match=message):
        apply(func, arr(3), arr(3))


def test_python_scalars_are_rank_0():
    np.testing.assert_array_equal(apply(np.add, arr(2, 2) * 0, 1.5), np.full((2, 2), 1.5))


@settings(max_examples=60, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=4))
def test_numpy_rule_equals_numpy(shapes):
    xs = [np.arange(np.prod(s), dtype=np.float64).reshape(s) for s in shapes.input_shapes]
    want = np.add(np.add(xs[0], xs[1]), xs[2])
    got = apply(lambda a, b, c: a + b + c, *xs)
    assert got.shape == shapes.result_shape
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------- the memory budget


def test_terabyte_output_is_refused_before_allocating():
    a = np.broadcast_to(np.float32(1), (2**20, 2**20))  # 4 TiB of float32, viewed from one element
    with pytest.raises(MemoryBudgetError) as e:
        apply(np.add, a, np.ones((1, 2**20), np.float32))
    err = e.value
    assert err.nbytes == 2**42 and err.shape == (2**20, 2**20)
    assert "needs 4.0 TiB, over the memory budget of" in str(err) and "nothing was allocated" in str(err)
    assert isinstance(err, InputError) and isinstance(err, MemoryError)


def test_dims_past_any_machine_are_refused():
    with pytest.raises(MemoryBudgetError, match="EiB|ZiB"):
        check_memory((2**40, 2**40), np.float64)


def test_views_past_numpy_s_index_range_are_refused():
    with pytest.raises(InputError,
                       match=r"\(1000000,1000000,1000000,1000000\) has 1e\+24 elements, more than a numpy array"):
        view(np.ones(1), bcast.infer((1,), (10**6,) * 4, rule="bidirectional"), 0)


def test_budget_settings():
    default = memory_budget()
    assert default > 0
    with memory_budget_set("1MiB") as budget:
        assert budget == memory_budget() == 2**20
        check_memory((2**17,), np.float64)  # exactly 1 MiB: allowed
        with pytest.raises(MemoryBudgetError, match=r"needs 1\.0 MiB, over the memory budget of 1\.0 MiB"):
            check_memory((2**17 + 1,), np.float64)
    assert memory_budget() == default
    previous = set_memory_budget(12345)
    try:
        assert previous is None and memory_budget() == 12345
    finally:
        set_memory_budget(None)


def test_budget_from_the_environment(monkeypatch):
    monkeypatch.setenv("BCAST_MEMORY_BUDGET", "2GiB")
    assert memory_budget() == 2 * 2**30
    monkeypatch.setenv("BCAST_MEMORY_BUDGET", "10%")
    assert 0 < memory_budget() < 2**50


@pytest.mark.parametrize("code", [
    "import numpy as np, bcast\nbcast.apply(np.add, np.ones(2), 1)",  # a small op: was silently fine
    "from bcast import onnx",
    "import bcast\nbcast.memory_budget()",
])
def test_a_bad_budget_in_the_environment_fails_at_first_use_whatever_the_size(code):
    import subprocess
    import sys

    env = {**os.environ, "BCAST_MEMORY_BUDGET": "lots"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 1 and r.stderr.strip().splitlines()[-1] == (
        "bcast.core.errors.InputError: BCAST_MEMORY_BUDGET='lots': bad memory budget 'lots': give bytes, e.g. 8GiB, "
        "500MB, 1000000, or a percentage, 25%"), r.stderr


def test_a_bad_budget_in_the_environment_is_one_line_from_the_cli(tmp_path):
    import pathlib
    import subprocess
    import sys

    model = pathlib.Path(__file__).resolve().parents[2] / "examples" / "legacy_add.onnx"
    src = str(pathlib.Path(bcast.__file__).resolve().parent.parent)  # this bcast, from any folder
    env = {**os.environ, "BCAST_MEMORY_BUDGET": "lots", "PYTHONPATH": src}
    r = subprocess.run([sys.executable, "-m", "bcast", "lint", str(model)], capture_output=True, text=True,
                       timeout=120, env=env, cwd=tmp_path)
    assert (r.returncode, r.stdout) == (2, "") and r.stderr.count("\n") == 1
    assert r.stderr.startswith("bcast lint: error: BCAST_MEMORY_BUDGET='lots': bad memory budget"), r.stderr


@pytest.mark.parametrize("name, value, message", [
    ("BCAST_THREADS", "lots", "BCAST_THREADS must be a whole number of threads >= 1, got 'lots'"),
    ("BCAST_THREADS", "0", "BCAST_THREADS must be a whole number of threads >= 1, got '0'"),
    ("BCAST_RECYCLE", "maybe", "BCAST_RECYCLE must be 0 (off) or 1 (on), got 'maybe'"),
    ("BCAST_KERNELS", "fast", "BCAST_KERNELS must be 0 (off) or 1 (on), got 'fast'"),
])
def test_a_bad_switch_in_the_environment_fails_at_first_use_whatever_the_size(name, value, message):
    """Was: BCAST_THREADS=lots failed only on an op of 2**21 elements or more, and BCAST_RECYCLE=maybe or
    BCAST_KERNELS=fast read as "on" without a word."""
    import subprocess
    import sys

    code = "import numpy as np, bcast\nbcast.apply(np.add, np.ones(3), np.ones(3))"  # the small-op fast path
    env = {**os.environ, name: value}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().splitlines()[-1] == "bcast.core.errors.InputError: " + message, r.stderr


@pytest.mark.parametrize("value, on", [("", True), ("1", True), ("On", True), ("0", False), ("off", False),
                                       ("FALSE", False), (" no ", False)])
def test_switches_read_the_usual_spellings(value, on, monkeypatch):
    from bcast.core import _env

    monkeypatch.setenv("BCAST_RECYCLE", value)
    assert _env.switch("BCAST_RECYCLE") is on


@pytest.mark.parametrize("text", ["", "lots", "-1", "5 parsecs", "0%", "150%", "1e9"])
def test_bad_budgets_are_input_errors(text):
    with pytest.raises(InputError, match="bad memory budget"):
        parse_bytes(text)


@pytest.mark.parametrize("value", [-1, 1.5, True, [1]])
def test_bad_budget_values_are_input_errors(value):
    with pytest.raises(InputError, match="bad memory budget"):
        set_memory_budget(value)


# --------------------------------------------------------------------------- other array libraries


def test_array_api_strict():
    xs = pytest.importorskip("array_api_strict")
    pytest.importorskip("array_api_compat")
    a = xs.reshape(xs.arange(24, dtype=xs.float32), (2, 3, 4))
    b = xs.asarray([[1.0], [2.0], [3.0]], dtype=xs.float32)
    got = apply("multiply", a, b, rule="pdpd", axis=1)
    assert type(got).__module__.startswith("array_api_strict")
    want = np.arange(24, dtype=np.float32).reshape(2, 3, 4) * np.array([1.0, 2.0, 3.0], np.float32)[:, None]
    np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(BroadcastError):
        apply("add", a, xs.ones((5,)))


def test_dask_stays_lazy_and_runs_on_the_local_scheduler():
    da = pytest.importorskip("dask.array")
    pytest.importorskip("array_api_compat")
    import dask

    calls = []
    lock = threading.Lock()

    def block(x):
        if x.size:  # dask also calls it once on an empty array, to learn the dtype
            with lock:
                calls.append(x.shape)
        return x

    whole = da.arange(4000 * 3000, chunks=1_000_000, dtype=np.float64).reshape(4000, 3000)
    a = da.map_blocks(block, whole, dtype=np.float64)
    b = da.arange(4000, chunks=1000, dtype=np.float64)
    with memory_budget_set("1MiB"):  # the output (96 MB) is far over it: dask never holds it whole
        got = apply("add", a, b, rule="pdpd", axis=0)
        assert isinstance(got, da.Array) and got.shape == (4000, 3000)
        assert calls == []  # nothing computed yet
        total = got.sum().compute(scheduler="threads")
        with pytest.raises(InputError, match="lazy"):
            apply("add", a, b, rule="pdpd", axis=0, out=np.empty((4000, 3000)))
    assert calls  # now it ran, chunk by chunk
    n = 4000 * 3000
    assert total == pytest.approx(n * (n - 1) / 2 + 3000 * 4000 * 3999 / 2)
    small = apply("add", da.ones((3, 4), chunks=2), da.arange(3, chunks=2), rule="ncnn")
    np.testing.assert_array_equal(dask.compute(small, scheduler="synchronous")[0],
                                  np.ones((3, 4)) + np.arange(3)[:, None])


def test_lazy_exports():
    assert bcast.apply is apply and bcast.MemoryBudgetError is MemoryBudgetError
    with pytest.raises(AttributeError):
        _ = bcast.no_such_thing


@pytest.mark.parametrize("func, n", [(np.negative, 2), (np.maximum, 3), ("negative", 2), (np.add, 1)])
def test_ufunc_arity(func, n):
    """numpy takes extra positional arrays as outputs (np.negative(a, b) writes into b): bcast refuses."""
    arrays = [np.arange(3.0) for _ in range(n)]
    before = [x.copy() for x in arrays]
    with pytest.raises(InputError, match=r"takes \d inputs?, got \d arrays"):
        bcast.apply(func, *arrays)
    assert all(np.array_equal(x, y) for x, y in zip(arrays, before))
