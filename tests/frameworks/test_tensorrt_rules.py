"""bcast.tensorrt against TensorRT's API documentation (NvInfer.h, the operator pages) and onnx-tensorrt's
importers.  Spec only: TensorRT needs an NVIDIA GPU, none runs here; every row is read from the cited source."""

import numpy as np
import pytest

import bcast
from bcast import BroadcastError, InputError
from bcast.frameworks import framework

#: (op, shapes, output shape or the BroadcastError's kind)
CASES = [
    # IElementWiseLayer: equal ranks, each dim equal or 1 (NvInfer.h; operator docs "ElementWise")
    ("SUM", ((2, 3), (2, 3)), (2, 3)),
    ("SUM", ((2, 3), (1, 3)), (2, 3)),
    ("PROD", ((2, 1, 5), (1, 4, 1)), (2, 4, 5)),
    ("SUM", ((2, 3), (3,)), "rank"),  # numpy would prepend a 1: TensorRT's layer does not
    ("SUM", ((), (3,)), "rank"),
    ("SUB", ((2, 3), (2, 4)), "dims"),
    ("SUM", ((), ()), ()),
    ("SUM", ((0, 3), (1, 3)), (0, 3)),  # a 0-length dim meets 1: the length that is not one
    ("SUM", ((0, 3), (2, 3)), "dims"),
    ("SUM", ((1,) * 8, (2,) * 8), (2,) * 8),  # nvinfer1::Dims::MAX_DIMS = 8
    ("SUM", ((1,) * 9, (1,) * 9), "rank"),
    # ISelectLayer: addSelect's example in NvInfer.h, and its empty-tensor example
    ("Select", ((1, 1, 5, 9), (1, 1, 5, 9), (1, 3, 1, 9)), (1, 3, 5, 9)),
    ("Select", ((1, 1, 0, 9), (1, 1, 0, 9), (1, 3, 1, 9)), (1, 3, 0, 9)),
    ("Select", ((2, 3), (2, 3), (3,)), "rank"),
    # IParametricReLULayer: slopes [b_0..b_n], b_i = a_i or 1 (operator docs "ParametricReLU")
    ("ParametricReLU", ((2, 3), (2, 3)), (2, 3)),
    ("ParametricReLU", ((2, 3), (2, 1)), (2, 3)),  # the operator page's broadcasting example
    ("ParametricReLU", ((2, 3), (3,)), "rank"),
    ("ParametricReLU", ((1, 3), (2, 3)), "dims"),  # the slope is broadcast to the input, never the reverse
    # the ONNX parser prepends 1s (importerUtils.cpp broadcastTensor), then adds the layer
    ("onnx:Add", ((2, 3), (3,)), (2, 3)),
    ("onnx:Add", ((2, 3, 4, 5), ()), (2, 3, 4, 5)),
    ("onnx:Add", ((2, 3), (4,)), "dims"),
    ("onnx:Add", ((1,) * 9, (1,)), "rank"),
    ("onnx:Sum", ((2, 1), (3,), (4, 1, 1)), (4, 2, 3)),
    ("onnx:Max", ((5,),), (5,)),
    ("onnx:Where", ((3,), (2, 1), (1,)), (2, 3)),
    ("onnx:PRelu", ((1, 3, 4, 4), (3, 1, 1)), (1, 3, 4, 4)),
    ("onnx:PRelu", ((1, 3, 4, 4), (3,)), "dims"),  # ONNX's rule: a 1-D slope lands on the last axis
    ("onnx:PRelu", ((3,), (1, 3)), (1, 3)),  # the data is reshaped to the slope's rank (ONNX refuses it)
    ("onnx:PRelu", ((3,), (2, 3)), "dims"),
    ("onnx:PRelu", ((2, 3), (1, 2, 3)), (1, 2, 3)),
]


@pytest.mark.parametrize("op, shapes, expected", CASES)
def test_tensorrt_cases(op, shapes, expected):
    if isinstance(expected, str):
        with pytest.raises(BroadcastError) as e:
            bcast.tensorrt.plan(op, *shapes)
        assert e.value.kind == expected, e.value
    else:
        assert bcast.tensorrt.plan(op, *shapes).shape == expected


def test_layer_ops_plan_by_equal_rank_and_parser_ops_by_numpy():
    fw = framework("tensorrt")
    for op in fw.ops():
        shapes = ((2, 3), (2, 3), (2, 3)) if op in ("Select", "onnx:Where") else ((2, 3), (2, 3))
        rule = fw.plan(op, *shapes).rule
        if op.startswith("onnx:"):
            assert rule == ("unidirectional" if op == "onnx:PRelu" else "numpy"), op
        else:
            assert rule == ("unidirectional" if op == "ParametricReLU" else "equal-rank"), op
    assert dict(fw.plan("SUM", (2,), (2,)).attrs)["max_rank"] == 8
    assert dict(fw.plan("onnx:Add", (2,), (2,)).attrs)["max_rank"] == 8


def test_onnx_prelu_of_a_higher_rank_slope_differs_from_onnx():
    """onnx-tensorrt accepts what ONNX's unidirectional PRelu refuses (the data gets leading 1s)."""
    with pytest.raises(BroadcastError):
        bcast.onnx.plan("PRelu", (3,), (1, 3))
    assert bcast.tensorrt.plan("onnx:PRelu", (3,), (1, 3)).shape == (1, 3)


def test_run_computes_under_the_plan():
    a, b = np.arange(6.0).reshape(2, 3), np.array([[10.0, 20.0, 30.0]])
    assert np.array_equal(bcast.tensorrt.run("SUM", a, b), a + b)
    assert np.array_equal(bcast.tensorrt.run("onnx:Add", a, b[0]), a + b)
    assert np.array_equal(bcast.tensorrt.run("onnx:Mean", a, b[0], np.zeros(1)), (a + b) / 3)
    x = np.array([[-1.0, 2.0, -3.0]])
    assert np.array_equal(bcast.tensorrt.run("ParametricReLU", x, np.array([[0.5, 0.5, 2.0]])), [[-0.5, 2.0, -6.0]])
    c = np.array([[True], [False]])
    assert np.array_equal(bcast.tensorrt.run("Select", c, np.ones((2, 2)), np.zeros((1, 2))), [[1, 1], [0, 0]])
    with pytest.raises(BroadcastError):
        bcast.tensorrt.run("SUM", a, b[0])
    with pytest.raises(InputError, match="tensorrt onnx:Sum: takes 1 or more inputs"):
        bcast.tensorrt.run("onnx:Sum")
    with pytest.raises(InputError, match="tensorrt SUM: takes 2 inputs \\(input1, input2\\), got 3"):
        bcast.tensorrt.plan("SUM", (1,), (1,), (1,))
    with pytest.raises(InputError, match="unknown op 'Add'; the ops are: SUM, PROD"):
        bcast.tensorrt.plan("Add", (1,), (1,))
