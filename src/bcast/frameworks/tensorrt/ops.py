"""TensorRT's broadcasting, as its API documentation and its ONNX parser's source say (spec only: no
TensorRT runs here, it needs an NVIDIA GPU; nothing in this table was proven against it).

Two op sets, because a TensorRT network is built two ways:

- **The layer API** (``INetworkDefinition``), spelled as TensorRT spells it: the
  ``ElementWiseOperation`` members (``SUM``, ``PROD``, ``MAX``, ``MIN``, ``SUB``, ``DIV``, ``POW``,
  ``FLOOR_DIV``, ``AND``, ``OR``, ``XOR``, ``EQUAL``, ``GREATER``, ``LESS``) of ``IElementWiseLayer``,
  ``ParametricReLU`` (``IParametricReLULayer``) and ``Select`` (``ISelectLayer``).  NvInfer.h
  (NVIDIA/TensorRT ``include/NvInfer.h``, ``IElementWiseLayer`` and ``addElementWise``): "The input
  tensors must have the same rank. For each dimension, their lengths must match, or one of them must
  be one"; ``addSelect``: "All three input tensors must have the same rank, and along each axis must
  have the same length or a length of one" -- the rule ``equal-rank``.  ``addParametricReLU``: the
  slope "should be unidirectionally broadcastable to the input tensor", and the operator
  documentation (docs.nvidia.com, TensorRT operators, ParametricReLU, "Shape Information") gives
  the slopes the input's rank, each dim equal to the input's or 1: a rank mismatch is
  ``equal-rank``'s refusal, the rest ``unidirectional`` (slope into input; the output is the
  input's shape).  A tensor has at most ``nvinfer1::Dims::MAX_DIMS`` = 8 dims (NvInferRuntimeBase.h,
  ``Dims64``): ``max_rank=8``.
- **The ONNX parser** (onnx/onnx-tensorrt), ops named ``onnx:<ONNX op>``.  Its importers equalise
  ranks before they add the layer: ``elementwiseHelper`` and ``broadcastTensors`` (importerUtils.cpp)
  reshape every input of lower rank to the highest rank by prepending 1s (``broadcastTensor``), so an
  ONNX model with numpy broadcasting imports: ``Add``, ``Sub``, ``Mul``, ``Div``, ``Pow``, ``And``,
  ``Or``, ``Xor``, ``Equal``, ``Greater``, ``GreaterOrEqual``, ``Less``, ``LessOrEqual``, the variadic
  ``Max``, ``Min``, ``Sum``, ``Mean`` and ``Where`` (onnxOpImporters.cpp) plan by ``numpy`` with
  ``max_rank=8``.  ``PRelu``'s importer equalises ranks too, then adds the ParametricReLU layer: a
  slope of lower rank is ``unidirectional`` (ONNX's own rule), and a slope of *higher* rank is
  accepted when its extra leading dims are 1 (the data is reshaped to the slope's rank; ONNX itself
  refuses that slope) -- its plan is then ``numpy``'s, which says where each input lands.

>>> plan("SUM", (2, 3), (1, 3)).shape
(2, 3)
>>> plan("SUM", (2, 3), (3,))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: equal-rank: cannot broadcast input1 (2,3)...
>>> plan("onnx:Add", (2, 3), (3,)).shape  # the parser prepends the 1s
(2, 3)
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ...core.errors import BroadcastError
from ...core.plan import Plan
from ...rules import infer
from .._spec import SpecOp, Table, by_rule, fold, mean, prelu, refuse_above_rank, where

__all__ = ["MAX_RANK", "OPS", "TABLE", "ops", "plan", "run"]

#: ``nvinfer1::Dims::MAX_DIMS``: the most dims a TensorRT tensor has.
MAX_RANK = 8


class TensorRTOp(SpecOp):
    framework: ClassVar[str] = "tensorrt"


_LAYER = by_rule("equal-rank", max_rank=MAX_RANK)
_PARSER = by_rule("numpy", max_rank=MAX_RANK)


def _rank_first(op: SpecOp, shapes: tuple, names: tuple) -> None:
    """``equal-rank``'s refusal when the ranks differ or exceed the limit (its dims are not asked)."""
    try:
        infer(*shapes, rule="equal-rank", names=names, max_rank=MAX_RANK)
    except BroadcastError as e:
        if e.kind == "rank":
            raise


def _layer_prelu(op: SpecOp, shapes: tuple, names: tuple, attrs: dict) -> Plan:
    """IParametricReLULayer: equal ranks, each slope dim equal to the input's or 1; output the input's."""
    _rank_first(op, shapes, names)
    return infer(*shapes, rule="unidirectional", names=names)


def _parser_prelu(op: SpecOp, shapes: tuple, names: tuple, attrs: dict) -> Plan:
    """onnx-tensorrt's PRelu importer: broadcastTensors(input, slopes) (the lower rank gets leading 1s),
    then the ParametricReLU layer."""
    refuse_above_rank("unidirectional", shapes, names, MAX_RANK,
                      f"a TensorRT tensor has at most {MAX_RANK} dims (nvinfer1::Dims::MAX_DIMS)")
    data, slope = shapes
    if len(slope) <= len(data):
        return infer(data, slope, rule="unidirectional", names=names)
    padded = (1,) * (len(slope) - len(data)) + tuple(data)
    infer(padded, slope, rule="unidirectional", names=names)  # what the layer sees: its refusal
    return infer(data, slope, rule="numpy", names=names)


def _ew(name: str, kernel: Any) -> TensorRTOp:
    return TensorRTOp(name, ("input1", "input2"), _LAYER, kernel)


def _onnx(name: str, kernel: Any, inputs: tuple[str, ...] = ("A", "B"), variadic: bool = False) -> TensorRTOp:
    return TensorRTOp(f"onnx:{name}", inputs, _PARSER, kernel, variadic)


#: Every op: the layer API's first, then the ONNX parser's.
OPS = (
    _ew("SUM", np.add),
    _ew("PROD", np.multiply),
    _ew("MAX", np.maximum),
    _ew("MIN", np.minimum),
    _ew("SUB", np.subtract),
    _ew("DIV", np.divide),
    _ew("POW", np.power),
    _ew("FLOOR_DIV", np.floor_divide),
    _ew("AND", np.logical_and),
    _ew("OR", np.logical_or),
    _ew("XOR", np.logical_xor),
    _ew("EQUAL", np.equal),
    _ew("GREATER", np.greater),
    _ew("LESS", np.less),
    TensorRTOp("ParametricReLU", ("input", "slope"), _layer_prelu, prelu),
    TensorRTOp("Select", ("condition", "thenInput", "elseInput"), _LAYER, where),
    _onnx("Add", np.add),
    _onnx("Sub", np.subtract),
    _onnx("Mul", np.multiply),
    _onnx("Div", np.divide),
    _onnx("Pow", np.power),
    _onnx("And", np.logical_and),
    _onnx("Or", np.logical_or),
    _onnx("Xor", np.logical_xor),
    _onnx("Equal", np.equal),
    _onnx("Greater", np.greater),
    _onnx("GreaterOrEqual", np.greater_equal),
    _onnx("Less", np.less),
    _onnx("LessOrEqual", np.less_equal),
    _onnx("Max", fold(np.maximum), ("data",), variadic=True),
    _onnx("Min", fold(np.minimum), ("data",), variadic=True),
    _onnx("Sum", fold(np.add), ("data",), variadic=True),
    _onnx("Mean", mean, ("data",), variadic=True),
    TensorRTOp("onnx:PRelu", ("X", "slope"), _parser_prelu, prelu),
    _onnx("Where", where, ("condition", "X", "Y")),
)

TABLE = Table("tensorrt", OPS)


def ops() -> tuple[str, ...]:
    """The op names: the layer API's (``SUM``... ``Select``), then the ONNX parser's (``onnx:Add``...).

    >>> ops()[:3], ops()[-1]
    (('SUM', 'PROD', 'MAX'), 'onnx:Where')
    """
    return TABLE.ops()


def plan(op: str, *shapes: Any) -> Plan:
    """The Plan of ``op`` on inputs of these shapes (numpy order).

    >>> plan("Select", (1, 1, 5, 9), (1, 1, 5, 9), (1, 3, 1, 9)).shape  # addSelect's example in NvInfer.h
    (1, 3, 5, 9)
    >>> plan("onnx:PRelu", (3,), (1, 3)).shape  # the parser reshapes the data to the slope's rank
    (1, 3)
    """
    return TABLE.plan(op, shapes, {})


def run(op: str, *arrays: Any, out: Any = None) -> Any:
    """``op`` on numpy arrays: the plan's views and numpy's element function (TensorRT's own kernels
    do not run here).

    >>> run("SUM", np.ones((2, 1)), np.arange(3.0).reshape(1, 3))
    array([[1., 2., 3.],
           [1., 2., 3.]])
    """
    return TABLE.run(op, arrays, {}, out=out)
