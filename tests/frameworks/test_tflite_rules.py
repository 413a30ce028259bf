"""``bcast.tflite.plan`` / ``run`` without the runtime: TFLite's kernels' rules, each row cited to its source.

The rows are the kernels' own statements (tensorflow ``tensorflow/lite/kernels``, LiteRT
``tflite/kernels``); tests/frameworks/test_tflite_run.py runs the same rows against the interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest

import bcast
from bcast import BroadcastError, InputError
from bcast.frameworks import FRAMEWORKS, framework, plan as registry_plan
from bcast.frameworks.tflite import ops as tflite

G8, H8 = (2, 1) * 4, (1, 2) * 4  # rank 8, every axis stretched one way or the other: the generic loop
G9, H9 = G8 + (2,), H8 + (1,)

#: (op, shapes, result shape or the error's kind, source)
ROWS = [
    ("ADD", ((2, 1, 3), (4, 1)), (2, 4, 3), "kernel_util.cc CalculateShapeForBroadcast: right-aligned, equal or 1"),
    ("SUB", ((2, 3), (4,)), "dims", "kernel_util.cc: 'Given shapes, ... are not broadcastable.'"),
    ("MUL", ((0, 3), (1, 3)), (0, 3), "kernel_util.cc: d1 == 0 or d2 == 0 gives 0 (with a 1)"),
    ("DIV", ((0,), (5,)), "dims", "kernel_util.cc: 0 with 5 is neither equal nor 1"),
    ("ADD", ((), (2, 3)), (2, 3), "a rank-0 input counts as all 1s"),
    ("ADD", (G8, H8), (2,) * 8, "broadcast_loop.h BroadcastBinaryOpSimple: kMaxRank = 8"),
    ("ADD", (G9, H9), "rank", "broadcast_loop.h: TFLITE_CHECK_LE(dims_count, kMaxRank)"),
    ("FLOOR_MOD", (G9, H9), "rank", "floor_mod.cc -> BroadcastBinaryFunction4DSlow -> BroadcastBinaryOpSimple"),
    ("POW", ((3,) * 9, (3,) * 9), (3,) * 9, "HaveSameShapes: no broadcast, so no rank limit"),
    ("LESS", ((2, 3), (3,)), (2, 3), "comparisons.cc: CalculateShapeForBroadcast"),
    ("LOGICAL_OR", ((4, 1), (1, 5)), (4, 5), "logical.cc: CalculateShapeForBroadcast"),
    ("SELECT", ((3,), (3, 4), (3, 4)), (3, 4), "select.cc kVersionOne: rank-1 condition on x's first dim"),
    ("SELECT", ((), (3, 4), (3, 4)), (3, 4), "select.cc kVersionOne: scalar condition"),
    ("SELECT", ((3, 4), (3, 4), (3, 4)), (3, 4), "select.cc: same shapes"),
    ("SELECT", ((4,), (3, 4), (3, 4)), "dims", "select.cc: a rank-1 condition is not right-aligned"),
    ("SELECT", ((1,), (3, 4), (3, 4)), "dims", "select.cc: a 1 does not stretch"),
    ("SELECT", ((3, 1), (3, 4), (3, 4)), "dims", "select.cc: rank 2+ condition must be x's shape"),
    ("SELECT", ((3, 4, 1), (3, 4), (3, 4)), "rank", "select.cc: rank 2+ condition must be x's shape"),
    ("SELECT", ((3,), (3, 4), (4,)), "rank", "select.cc: HaveSameShapes(input_x, input_y)"),
    ("SELECT", ((3,), (3, 4), (3, 1)), "dims", "select.cc: HaveSameShapes(input_x, input_y)"),
    ("SELECT", ((3,), (), ()), "unsupported", "select.cc: SizeOfDimension(input_x, 0) of a scalar x"),
    ("SELECT_V2", ((3, 1), (1, 4), (4,)), (3, 4), "select.cc kVersionTwo: CalculateShapeForBroadcast of three"),
    ("SELECT_V2", ((4,), (3, 4), (3, 4)), (3, 4), "select.cc kVersionTwo: numpy's rule"),
    ("SELECT_V2", (G8, H8, ()), (2,) * 8, "select.cc: output_size->size <= 8"),
    ("SELECT_V2", (G9, H9, ()), "rank", "select.cc: TF_LITE_ENSURE(context, output_size->size <= 8)"),
    ("BROADCAST_TO", ((3, 1), (2, 3, 4)), (2, 3, 4), "broadcast_to.cc: input dim equal to the target's or 1"),
    ("BROADCAST_TO", ((1,), (0,)), (0,), "broadcast_to.cc: a 1 becomes the target's 0"),
    ("BROADCAST_TO", ((2, 3), (3,)), "rank", "broadcast_to.cc: input_num_dims <= output_num_dims"),
    ("BROADCAST_TO", ((3,), (2, 4)), "dims", "broadcast_to.cc: 'Output shape must be broadcastable from input shape.'"),
    ("BROADCAST_TO", ((2, 3), (2, 1)), "dims", "broadcast_to.cc: the target's 1 does not shrink a 3"),
    ("BROADCAST_TO", ((2,) * 9, (3, 2) + (2,) * 8), (3,) + (2,) * 9, "broadcast_to.cc: no rank limit in the kernel"),
]


@pytest.mark.parametrize("op, shapes, expected, source", ROWS, ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)])
def test_plan(op, shapes, expected, source):
    if isinstance(expected, tuple):
        assert tflite.plan(op, *shapes).shape == expected, source
        return
    with pytest.raises(BroadcastError) as e:
        tflite.plan(op, *shapes)
    assert e.value.kind == expected, (source, e.value)


def test_registered_and_public():
    assert FRAMEWORKS["tflite"] == "bcast.frameworks.tflite"
    assert framework("tflite") is tflite and bcast.tflite.plan is tflite.plan
    assert tflite.ops() == tuple(tflite.OPS) and "SELECT_V2" in tflite.ops()
    assert registry_plan("tflite", "ADD", (2, 3), (3,)).shape == (2, 3)


def test_rank_limit_is_numpys_max_rank_attribute():
    p = tflite.plan("ADD", G8, H8)
    assert p.rule == "numpy" and dict(p.attrs)["max_rank"] == tflite.KERNEL_MAX_RANK == 8
    assert dict(tflite.plan("ADD", (2, 3), (2, 3)).attrs).get("max_rank") is None  # one shape: no broadcast, no limit


def test_select_condition_lands_on_the_first_axis():
    p = tflite.plan("SELECT", (2,), (2, 5), (2, 5))
    assert p.rule == "tflite-select" and p.aligned_shape(0) == (2, 1)
    with pytest.raises(BroadcastError, match="first dim"):
        tflite.plan("SELECT", (5,), (2, 5), (2, 5))
    assert tflite.plan("SELECT_V2", (5,), (2, 5), (2, 5)).aligned_shape(0) == (1, 5)  # numpy: the last axis


def test_converter_limits_are_the_converters_source():
    assert tflite.CONVERTER_MAX_RANK["ADD"] == 6 and tflite.CONVERTER_MAX_RANK["POW"] == 4
    assert set(tflite.CONVERTER_MAX_RANK) <= set(tflite.OPS)


F = np.float32


@pytest.mark.parametrize("op, inputs, expected", [
    ("SUB", (F([[5], [7]]), F([1, 2, 3])), F([[4, 3, 2], [6, 5, 4]])),
    ("DIV", (F([1, -1]), F([0, 0])), F([np.inf, -np.inf])),
    ("FLOOR_DIV", (F([7, -7]), F([2, 2])), F([3, -4])),
    ("FLOOR_MOD", (F([7, -7, 7]), F([3, 3, -3])), F([1, 2, -2])),
    ("FLOOR_MOD", (np.int32([7, -7]), np.int32([-3, 3])), np.int32([-2, 2])),
    ("SQUARED_DIFFERENCE", (F([1, 4]), F([3])), F([4, 1])),
    ("MAXIMUM", (np.int32([[1], [5]]), np.int32([3, 4])), np.int32([[3, 4], [5, 5]])),
    ("POW", (np.int32([2, 3]), np.int32([3])), np.int32([8, 27])),
    ("GREATER_EQUAL", (F([1, 2]), F([[2], [1]])), np.array([[False, True], [True, True]])),
    ("LOGICAL_AND", (np.array([True, False]), np.array(True)), np.array([True, False])),
    ("SELECT", (np.array([True, False]), F([[1, 2], [3, 4]]), F([[5, 6], [7, 8]])), F([[1, 2], [7, 8]])),
    ("SELECT_V2", (np.array([True, False]), F([[1, 2], [3, 4]]), F(0)), F([[1, 0], [3, 0]])),
    ("BROADCAST_TO", (np.int32([[1], [2]]), [2, 2, 3]), np.int32([[[1] * 3, [2] * 3]] * 2)),
])
def test_run_values(op, inputs, expected):
    got = tflite.run(op, *inputs)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("args, message", [
    (("ADDD", F(1), F(1)), "unknown op 'ADDD'"),
    (("add", F(1), F(1)), "did you mean ADD"),
    (("ADD", F(1)), "takes 2 inputs"),
    (("ADD", F([1]), np.int32([1])), "must have the same type"),
    (("DIV", np.int32([1]), np.int32([1])), "must be float32"),
    (("LOGICAL_OR", F([1]), F([1])), "must be bool"),
    (("SELECT", F([1]), F([1]), F([1])), "condition must be bool"),
    (("FLOOR_DIV", F([1, 2]), F([1, 0])), "Division by 0"),
    (("FLOOR_MOD", np.int32([1]), np.int32([0])), "Division by 0"),
    (("POW", np.int32([2]), np.int32([-1])), "negative int32 exponent"),
    (("ADD", [1.0], F([1])), "must be a numpy array"),
    (("BROADCAST_TO", F([1]), [[2]]), "1-D sequence of integers"),
    (("BROADCAST_TO", F([1]), [-2]), "shape"),
])
def test_bad_input(args, message):
    with pytest.raises(InputError, match=message):
        tflite.run(*args)


def test_out():
    out = np.empty((2, 3), np.float32)
    assert tflite.run("ADD", np.ones((2, 1), np.float32), np.ones(3, np.float32), out=out) is out
    assert (out == 2).all()
    with pytest.raises(InputError, match="tflite ADD"):
        tflite.run("ADD", np.ones((2, 1), np.float32), np.ones(3, np.float32), out=np.empty((3, 2), np.float32))
