"""bcast.translate to TensorRT, TOSA and StableHLO: fixed recipes (their text), rank limits, the ops with no
form, symbolic dims, the command line.  The random cases of every rule run in test_translate.py (TensorRT and
TOSA in bcast's equal-rank model and as their ONNX equivalent in onnxruntime, StableHLO compiled by XLA)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from bcast import BroadcastError, infer
from bcast.translation import OPS, TranslationError, run_many, translate
from support.cli import cli

TRT_DIV = """\
a = network.add_input("a", trt.float32, (2, 3, 4))
b = network.add_input("b", trt.float32, (4,))
b_1_layer = network.add_shuffle(b)
b_1_layer.reshape_dims = (1, 1, 4)
b_1 = b_1_layer.get_output(0)
y_layer = network.add_elementwise(a, b_1, trt.ElementWiseOperation.DIV)
y = y_layer.get_output(0)
network.mark_output(y)"""

TRT_EXPAND = """\
data = network.add_input("data", trt.float32, (3, 1))
data_1_layer = network.add_shuffle(data)
data_1_layer.reshape_dims = (1, 3, 1)
data_1 = data_1_layer.get_output(0)
y_layer = network.add_slice(data_1, (0, 0, 0), (2, 3, 6), (0, 1, 0))
y = y_layer.get_output(0)
network.mark_output(y)"""

TOSA_DIV = """\
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %b_1_shape = tosa.const_shape {values = dense<[1, 1, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %b_1 = tosa.reshape %b, %b_1_shape : (tensor<4xf32>, !tosa.shape<3>) -> tensor<1x1x4xf32>
  %b_1_inv = tosa.reciprocal %b_1 : (tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %y_shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.mul %a, %b_1_inv, %y_shift : (tensor<2x3x4xf32>, tensor<1x1x4xf32>, tensor<1xi8>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}"""

TOSA_SELECT = """\
func.func @main(%cond: tensor<3xi1>, %then: tensor<2x3x4xf32>, %else_: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %cond_1_shape = tosa.const_shape {values = dense<[1, 3, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %cond_1 = tosa.reshape %cond, %cond_1_shape : (tensor<3xi1>, !tosa.shape<3>) -> tensor<1x3x1xi1>
  %else__1_shape = tosa.const_shape {values = dense<[1, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %else__1 = tosa.reshape %else_, %else__1_shape : (tensor<3x4xf32>, !tosa.shape<3>) -> tensor<1x3x4xf32>
  %y = tosa.select %cond_1, %then, %else__1 : (tensor<1x3x1xi1>, tensor<2x3x4xf32>, tensor<1x3x4xf32>) -> \
tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}"""

TOSA_TILE = """\
func.func @main(%data: tensor<3x1xf32>) -> tensor<2x3x6xf32> {
  %data_1_shape = tosa.const_shape {values = dense<[1, 3, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %data_1 = tosa.reshape %data, %data_1_shape : (tensor<3x1xf32>, !tosa.shape<3>) -> tensor<1x3x1xf32>
  %y_multiples = tosa.const_shape {values = dense<[2, 1, 6]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %y = tosa.tile %data_1, %y_multiples : (tensor<1x3x1xf32>, !tosa.shape<3>) -> tensor<2x3x6xf32>
  return %y : tensor<2x3x6xf32>
}"""

SHLO_PDPD = """\
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x1xf32>) -> tensor<2x3xf32> {
  %b_0 = stablehlo.reshape %b : (tensor<3x1xf32>) -> tensor<3xf32>
  %b_1 = stablehlo.broadcast_in_dim %b_0, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %y = stablehlo.multiply %a, %b_1 : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}"""

SHLO_SELECT = """\
func.func @main(%a: tensor<i1>, %b: tensor<2x3xf32>, %c: tensor<3xf32>) -> tensor<2x3xf32> {
  %c_1 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %y = stablehlo.select %a, %b, %c_1 : tensor<i1>, tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}"""

SHLO_TRANSPOSE = """\
func.func @main(%data: tensor<1x3xf32>) -> tensor<2x3x2xf32> {
  %y = stablehlo.broadcast_in_dim %data, dims = [2, 1] : (tensor<1x3xf32>) -> tensor<2x3x2xf32>
  return %y : tensor<2x3x2xf32>
}"""


@pytest.mark.parametrize("plan, target, op, text", [
    (infer((2, 3, 4), (4,)), "tensorrt", "Div", TRT_DIV),
    (infer((3, 1), (2, 1, 6), rule="bidirectional"), "tensorrt", None, TRT_EXPAND),
    (infer((2, 3, 4), (4,)), "tosa", "Div", TOSA_DIV),
    (infer((3,), (2, 3, 4), (3, 4), rule="openvino-select", auto_broadcast="pdpd", axis=1), "tosa", None,
     TOSA_SELECT),
    (infer((3, 1), (2, 1, 6), rule="bidirectional"), "tosa", None, TOSA_TILE),
    (infer((2, 3), (3, 1), rule="pdpd", axis=1), "stablehlo", "Mul", SHLO_PDPD),  # PDPD's trailing 1 dropped
    (infer((), (2, 3), (3,)), "stablehlo", "Where", SHLO_SELECT),  # select's rank-0 pred as it is (spec C1)
    (infer((1, 3), (2, 3, 2), rule="explicit", axes_mapping=[2, 1], transpose=1), "stablehlo", None,
     SHLO_TRANSPOSE),  # a transposing broadcast: broadcast_in_dim's own
])
def test_fixed_recipes(plan, target, op, text):
    assert translate(plan, to=target, op=op).text() == text


@pytest.mark.parametrize("target, ops", [
    ("tensorrt", ["IShuffleLayer", "IElementWiseLayer"]), ("tosa", ["RESHAPE", "ADD"]),
    ("stablehlo", ["broadcast_in_dim", "add"]),
])
def test_lower_ranks_are_made_equal(target, ops):
    """Every lower-rank input gets its 1s (no target here broadcasts ranks); equal ranks need the op alone."""
    assert [s.op for s in translate(infer((2, 3, 4), (3, 1)), to=target).steps] == ops
    if target != "stablehlo":  # (StableHLO broadcasts both: no implicit broadcasting at all)
        assert [s.op for s in translate(infer((2, 1, 4), (1, 3, 1)), to=target).steps] == ops[1:]


def test_stablehlo_broadcasts_every_input_not_of_the_result_shape():
    recipe = translate(infer((2, 1, 4), (1, 3, 1)), to="stablehlo")
    assert [(s.op, s.attr("broadcast_dimensions")) for s in recipe.steps] == [
        ("broadcast_in_dim", (0, 1, 2)), ("broadcast_in_dim", (0, 1, 2)), ("add", None)]


@pytest.mark.parametrize("name, target, expected", [
    ("SUM", "tensorrt", "SUM"), ("PROD", "onnx", "Mul"), ("Subtract", "tensorrt", "SUB"),
    ("MAXIMUM", "tosa", "MAXIMUM"),
    ("Div", "tosa", "RECIPROCAL+MUL"), ("power", "stablehlo", "power"), ("Where", "tosa", "SELECT"),
])
def test_op_names(name, target, expected):
    plan = infer((2, 3), (3,), (3,)) if expected in ("SELECT",) else infer((2, 3), (3,))
    assert translate(plan, to=target, op=name).op == expected


def test_op_table_matches_the_frameworks_tables():
    from bcast.frameworks.stablehlo import ops as stablehlo
    from bcast.frameworks.tensorrt import ops as tensorrt
    from bcast.frameworks.tosa import ops as tosa

    for o in OPS:
        if o.tensorrt is not None:
            assert o.tensorrt in tensorrt.ops(), o
        if o.tosa is not None:
            assert o.tosa in tosa.ops(), o
        if o.stablehlo is not None:
            assert o.stablehlo in stablehlo.ops(), o


@pytest.mark.parametrize("plan, target, op, match", [
    (infer((2,) * 9, (2,)), "tensorrt", None,
     r"the output has rank 9: a TensorRT tensor has at most 8 dims \(nvinfer1::Dims::MAX_DIMS\)$"),
    (infer((1,) * 7, (1,)), "tosa", None, "the output has rank 7: TOSA's level 8K allows rank 6 at most$"),
    (infer((1,) * 7, (1,), rule="bidirectional"), "tosa", None, "the output has rank 7"),
    (infer((2, 3), (3, 4), rule="onnx-gemm"), "tensorrt", None, "Gemm is a matrix product"),
    (infer((0, 3), (3,)), "tosa", None, "TOSA 1.0 has no tensor with a 0-size dim$"),
    (infer((1, 3, 2, 2), (3,), rule="openvino-prelu"), "tosa", None, "TOSA has no PReLU operator"),
    (infer((2, 3, 4), (4,), rule="unidirectional"), "stablehlo", "PRelu", "StableHLO has no PReLU op"),
    (infer((2, 3), (3, 4), rule="onnx-gemm"), "stablehlo", None, r"stablehlo.dot_general"),
    (infer((1, 3), (2, 3, 2), rule="explicit", axes_mapping=[2, 1], transpose=1), "tosa", None, "transpose data first"),
    (infer("N,3", "3"), "stablehlo", None, r"B \(3,\) must be broadcast to \(N,3\): broadcast_in_dim's result type"),
    (infer("2,N", "N,1", rule="pdpd", axis=1), "tensorrt", None, r"must be reshaped to \(N,\), which needs static"),
    (infer("2,N", "N", rule="pdpd", axis=1), "tosa", None, r"must be reshaped to \(1,N\), which needs static dims"),
    (infer("3,1", "N,1,6", rule="bidirectional"), "tosa", None, r"TILE takes the shape \(N,3,6\) as values"),
])
def test_no_recipe_says_why(plan, target, op, match):
    with pytest.raises(TranslationError, match=match) as info:
        translate(plan, to=target, op=op)
    assert info.value.target == target and "\n" not in str(info.value)


def test_tensorrt_recipe_with_a_symbolic_dim():
    """An input's open dim is -1 (a dynamic dim); only the reshaped input needs static dims."""
    text = translate(infer("N,3", "3"), to="tensorrt").text()
    assert text.startswith('a = network.add_input("a", trt.float32, (-1, 3))') and "reshape_dims = (1, 3)" in text
    assert "tensor<?x3xf32>" in translate(infer("N,3", "3"), to="tosa").text()


def test_equal_rank_model_refuses_a_missing_reshape():
    """The check has teeth: a TensorRT recipe without its IShuffleLayer is refused by the equal-rank rule."""
    recipe = translate(infer((2, 3), (3,)), to="tensorrt")
    bare = dataclasses.replace(recipe, steps=(dataclasses.replace(recipe.steps[-1], inputs=("a", "b")),))
    with pytest.raises(BroadcastError, match="equal-rank"):
        bare.run(np.ones((2, 3)), np.ones(3))


def test_stablehlo_recipes_with_transposes_and_scalar_preds_run():
    pytest.importorskip("jax")
    cases = [infer((1, 3), (2, 3, 2), rule="explicit", axes_mapping=[2, 1], transpose=1), infer((), (2, 3), (3,)),
             infer((2, 3), (3, 1), rule="pdpd", axis=1)]
    x = np.arange(3, dtype=np.float32).reshape(1, 3)
    b, c = np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32)
    got = run_many([translate(p, to="stablehlo") for p in cases], [[x], [np.array(False), b, c], [b, c[:, None]]])
    np.testing.assert_array_equal(got[0], np.broadcast_to(x.T[None], (2, 3, 2)))
    np.testing.assert_array_equal(got[1], np.broadcast_to(c, (2, 3)))
    np.testing.assert_array_equal(got[2], b + c)


def test_cli():
    code, text = cli("translate", "2,3,4", "4", "--op", "Div", "--to", "tensorrt")
    assert (code, text) == (0, TRT_DIV + "\n")
    code, text = cli("translate", "2,3,4", "4", "--to", "tosa", "--json")
    d = json.loads(text)
    assert code == 0 and d["target"] == "tosa" and d["op"] == "ADD"
    assert d["steps"] == [{"op": "RESHAPE", "inputs": ["b"], "output": "b_1", "attrs": {"new_shape": [1, 1, 4]}},
                          {"op": "ADD", "inputs": ["a", "b_1"], "output": "y", "attrs": {}}]
    code, text = cli("translate", "1,1,1,1,1,1,1", "1", "--to", "tosa")
    assert code == 1 and text == ("cannot translate numpy A (1,1,1,1,1,1,1), B (1,) to tosa: the output has rank 7: "
                                  "TOSA's level 8K allows rank 6 at most\n")
    d = json.loads(cli("translate", "2,3", "3,4", "--rule", "onnx-gemm", "--to", "stablehlo", "--json")[1])
    assert d["ok"] is False and d["error"]["kind"] == "untranslatable" and d["steps"] is None
