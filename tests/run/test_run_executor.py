"""The one executor's shared pieces (bcast.run): kernel marks, caches, std::max/min, compiled-loop
failures, the quiet switch; and the one validation module (bcast.core.validate)."""

from __future__ import annotations

import inspect
import types

import numpy as np
import pytest

import bcast
import bcast.frameworks.ncnn.ops as ncnn_ops
import bcast.frameworks.onnx.ops as onnx_ops
import bcast.frameworks.openvino.ops as openvino_ops
from bcast.core import dims, validate
from bcast.core.errors import InputError
from bcast.frameworks.onnx import kernels as onnx_kernels
from bcast.rules._base import Ctx
from bcast.rules._cache import PLANS
from bcast.run import _fast, _kernels, kernel, parallel

_OLD_MARKS = ("_bcast_ufunc", "_bcast_elementwise", "natural", "ufunc", "natural_ufunc")


def test_clear_caches_empties_every_fast_path_and_the_plans():
    a, b = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    bcast.apply(np.add, a, b)
    onnx_ops.run("Add", a, b)
    openvino_ops.run("Add", a, b)
    ncnn_ops.run("ADD", a, b)
    assert all(len(c) for c in (_fast.APPLY, onnx_ops._FAST, openvino_ops._FAST, ncnn_ops._FAST))
    bcast.run.clear_caches()
    assert [len(c) for c in _fast._CACHES] == [0] * len(_fast._CACHES)
    assert len(PLANS) == 0
    assert {id(c) for c in (_fast.APPLY, _fast.NATURAL, onnx_ops._FAST, onnx_ops._NATURAL, openvino_ops._FAST,
                            ncnn_ops._FAST)} <= {id(c) for c in _fast._CACHES}
    np.testing.assert_array_equal(onnx_ops.run("Add", a, b), a + b)  # and the paths fill again


def test_one_mark_says_which_ufunc_a_kernel_computes():
    vino_add = openvino_ops.OPS["Add"].kernel("Add", {})
    ncnn_rsub = ncnn_ops._writer(ncnn_ops.op("RSUB"))
    onnx_add = onnx_ops._views_kernel(onnx_ops.OPS["Add"], (3,), np.dtype(np.float32), {})
    assert kernel.ufunc_of(vino_add) == (np.add, False)
    assert kernel.ufunc_of(ncnn_rsub) == (np.subtract, True)
    assert kernel.ufunc_of(onnx_add) == (np.add, False)
    assert kernel.ufunc_of(onnx_kernels.ufunc(np.equal)) == (np.equal, False)
    assert kernel.natural_ufunc(ncnn_rsub) is None and kernel.natural_ufunc(vino_add) is np.add
    for f in (vino_add, ncnn_rsub, onnx_add, openvino_ops.OPS["Maximum"].kernel("Maximum", {})):
        assert kernel.is_elementwise(f)
        assert [m for m in _OLD_MARKS if hasattr(f, m)] == []
    squared = openvino_ops.OPS["SquaredDifference"].kernel("SquaredDifference", {})
    assert kernel.is_elementwise(squared) and kernel.ufunc_of(squared) is None
    divide = openvino_ops.OPS["Divide"].kernel("Divide", {"python_division": True})  # refuses a 0 divisor
    assert not kernel.is_elementwise(divide)
    assert kernel.is_elementwise(np.add) and not kernel.is_elementwise(np.divmod)
    assert not kernel.is_elementwise(lambda *v, out=None: out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_std_max_min_written_once(dtype):
    x = np.array([np.nan, 1, 2, -0.0, 0.0], dtype)
    y = np.array([0, np.nan, 3, 0.0, -0.0], dtype)
    want_max = np.array([np.nan, 1, 3, -0.0, 0.0], dtype)  # (x < y) ? y : x
    want_min = np.array([np.nan, 1, 2, -0.0, 0.0], dtype)  # (y < x) ? y : x
    for f, want in ((kernel.std_max, want_max), (kernel.std_min, want_min)):
        bits = want.view(np.uint32 if dtype == np.float32 else np.uint64)
        assert (f(x, y).view(bits.dtype) == bits).all()
        out = np.empty_like(x)
        assert f(x, y, out) is out and (out.view(bits.dtype) == bits).all()
        inplace = y.copy()  # out is an input: no element read after it is overwritten
        assert (f(x, inplace, inplace).view(bits.dtype) == bits).all()
    if dtype == np.float32:  # both tables run it
        assert (ncnn_ops.run("MAX", x, y).view(np.uint32) == want_max.view(np.uint32)).all()
        assert (openvino_ops.run("Minimum", x, y).view(np.uint32) == want_min.view(np.uint32)).all()


def _fake_loops(rows):
    return types.SimpleNamespace(CODES={"add": 0, "subtract": 1, "multiply": 2, "divide": 3}, rows=rows)


def test_compiled_loop_that_cannot_compile_writes_nothing(monkeypatch):
    def rows(*args):
        raise TypeError("numba: no loop for these types")

    monkeypatch.setattr(_kernels, "_kernel", _fake_loops(rows))
    a = np.ones((4, 8))
    out = np.full((4, 8), 7.0)
    with np.errstate(all="ignore"):
        assert _kernels.try_run(np.add, [a, np.broadcast_to(np.arange(8.0), (4, 8))], out, 1) is None
    assert (out == 7).all()


def test_compiled_loop_failing_midway_leaves_no_half_written_out(monkeypatch):
    """A loop that writes part of ``out`` and then fails: numpy writes every element again."""

    def rows(op, a, b, out, J, K, *rest):
        t0, t1 = rest[-3], rest[-2]
        if t1 > t0:
            out[t0 * K:t1 * K] = -1.0  # garbage, then a failure
            raise MemoryError("the loop failed part way")

    monkeypatch.setattr(_kernels, "_kernel", _fake_loops(rows))
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 8)
    previous = parallel.set_threads(2)
    try:
        a, b = np.arange(64.0).reshape(8, 8), np.arange(8.0)
        out = np.zeros((8, 8))
        with np.errstate(all="ignore"):
            assert _kernels.try_run(np.add, [a, np.broadcast_to(b, a.shape)], out, 2) is None
            got = bcast.apply(np.add, a, b, out=out)
    finally:
        parallel.set_threads(previous)
    assert got is out
    np.testing.assert_array_equal(out, a + b)


def test_compiled_loop_never_writes_an_out_that_overlaps_an_input(monkeypatch):
    monkeypatch.setattr(_kernels, "_kernel", _fake_loops(lambda *a: pytest.fail("ran on an overlapping out")))
    a = np.ones((4, 8))
    with np.errstate(all="ignore"):
        assert _kernels.try_run(np.add, [a, np.broadcast_to(np.arange(8.0), (4, 8))], a, 1) is None


def test_quiet_switch_turns_warnings_off_and_back():
    before = np.geterr()
    for quiet in (lambda f, *a: _fast.quiet(f, *a), lambda f, *a: _fast.quieted(f)(*a)):
        assert quiet(np.geterr) == {"divide": "ignore", "over": "ignore", "under": "ignore", "invalid": "ignore"}
        assert quiet(np.divide, np.ones(1), np.zeros(1))[0] == np.inf
        assert np.geterr() == before


def test_one_validation_module_states_the_limits():
    assert dims.MAX_RANK is validate.MAX_RANK == 64
    assert dims.MAX_DIM == validate.INT64_MAX == 2**63 - 1
    assert validate.integer(np.int64(5), "x") == 5
    for bad, message in ((True, "must be an integer"), (1.5, "must be an integer"),
                         (2**63, "does not fit in int64"), (-(2**63), "does not fit in int64")):
        with pytest.raises(InputError, match=message):
            validate.integer(bad, "x")
    assert validate.flag(np.True_, "f") == 1 and validate.flag(0, "f") == 0
    with pytest.raises(InputError, match="f must be 0 or 1, got 2"):
        validate.flag(2, "f")
    assert validate.number(np.float32(1.5), "n") == 1.5
    for bad in (float("nan"), float("inf"), 2**1100, True, "1", np.array(1.0)):
        with pytest.raises(InputError, match="must be a finite number"):
            validate.number(bad, "n")
    assert validate.axes("[1, 2]", "a") == (1, 2) and validate.axes(3, "a") == (3,)
    with pytest.raises(InputError, match="at most 64 integers"):
        validate.axes(list(range(65)), "a")
    with pytest.raises(InputError, match="does not fit in int64"):
        validate.axes([2**63], "a")
    # the callers say the same things
    with pytest.raises(InputError, match="onnx Gemm: attribute alpha must be a finite number"):
        onnx_ops.run("Gemm", np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), alpha=float("inf"))
    with pytest.raises(InputError, match="attribute axis = .* does not fit in int64"):
        bcast.infer((2, 3), (3,), rule="pdpd", axis=2**63)


def test_ctx_require_takes_keywords():
    for method in (Ctx.require, Ctx.dims_error):
        params = inspect.signature(method).parameters
        positional = [p for p in params.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert len(positional) <= 4  # self, (found,) a, b: the rest by name
