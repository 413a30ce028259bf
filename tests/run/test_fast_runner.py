"""bcast.run._fast.runner, the one small-op runner of the three op tables: swapped ufuncs, the natural
call, the kernel path (views of the output's shape, out= that overlaps an input)."""

import numpy as np
import pytest

import bcast.ncnn
import bcast.openvino
from bcast.run import _fast


def _runner(a_shape, b_shape, kernel=None, ufunc=None, natural=False, swapped=False, dtype=np.float64):
    p = _fast.prepare("numpy", (np.ones(a_shape), np.ones(b_shape)))
    return _fast.runner(p, kernel, np.dtype(dtype), ufunc, natural, swapped=swapped)


@pytest.mark.parametrize("natural", [True, False])
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,))])
def test_swapped_ufunc_takes_its_inputs_reversed(natural, shapes):
    a, b = np.arange(1.0, 1 + np.prod(shapes[0])).reshape(shapes[0]), np.full(shapes[1], 10.0)
    run = _runner(*shapes, ufunc=np.subtract, natural=natural, swapped=True)
    assert np.array_equal(run((a, b), None), b - a)
    out = np.empty(np.broadcast_shapes(*shapes))
    assert run((a, b), out) is out and np.array_equal(out, b - a)


def test_kernel_gets_views_of_the_output_shape_and_a_fresh_out():
    seen = []

    def kernel(views, out):
        seen.append([v.shape for v in views])
        np.add(views[0], views[1], out=out)

    run = _runner((2, 3), (3,), kernel=kernel)
    got = run((np.ones((2, 3)), np.arange(3.0)), None)
    assert seen == [[(2, 3), (2, 3)]] and np.array_equal(got, 1 + np.arange(3.0)[None].repeat(2, 0))


def test_kernel_into_an_out_that_is_an_input_reads_the_inputs_first():
    def kernel(views, out):  # two steps: the second reads views[0] after the first wrote out
        np.multiply(views[1], 2, out=out)
        np.add(out, views[0], out=out)

    run = _runner((3,), (3,), kernel=kernel)
    a, b = np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0])
    assert run((a, b), a) is a and a.tolist() == [21.0, 42.0, 63.0]


@pytest.mark.parametrize("op", ["RSUB", "RDIV", "MAX", "RREMAINDER", "LOGADDEXP"])
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((3, 2), (3,)), ((4, 3, 2), (4, 3))])
def test_ncnn_small_path_is_the_full_path(op, shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    full = bcast.ncnn.run(op, a, b, out=np.empty(bcast.ncnn.plan(op, *shapes).shape, np.float32))
    for _ in range(2):  # the first call builds the runner, the second takes it
        assert np.array_equal(bcast.ncnn.run(op, a, b), full, equal_nan=True)


@pytest.mark.parametrize("op", ["Divide", "Maximum", "Power", "FloorMod", "Less", "SquaredDifference"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_openvino_small_path_is_the_full_path(op, dtype):
    a, b = np.arange(1, 7, dtype=dtype).reshape(2, 3), np.array([2, 3, 4], dtype)
    full = bcast.openvino.run(op, a, b, auto_broadcast="".join(["num", "py"]))  # equal, not the same: full path
    for _ in range(2):
        got = bcast.openvino.run(op, a, b)
        assert got.dtype == full.dtype and np.array_equal(got, full)
