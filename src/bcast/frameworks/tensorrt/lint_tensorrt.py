"""Lint target ``tensorrt``: the model as the ONNX-TensorRT parser (onnx/onnx-tensorrt, the parser
``trtexec --onnx`` and ``tensorrt.OnnxParser`` run) imports it.

The parser equalises ranks itself: ``elementwiseHelper`` (``importerUtils.cpp``) reshapes every input
of an elementwise node to the highest rank by prepending 1s (``broadcastTensor``: an IShuffleLayer)
before it adds the ``IElementWiseLayer``, whose own rule is ``equal-rank``; ``broadcastTensors`` does the
same for the PRelu, Where, Mod and Gemm importers (``onnxOpImporters.cpp``), and Expand's importer
pads the input's shape and the shape input with 1s before its ISliceLayer.  So an ONNX model with numpy
broadcasting imports as it is, and what is left is:

- rank > 8 (``nvinfer1::Dims::MAX_DIMS``): the plug-in's ``onnx:<op>`` rows (numpy, ``max_rank=8``,
  :mod:`bcast.frameworks.tensorrt.ops`);
- opset < 7: ``broadcastTensor`` asserts "Pre-opset 7 broadcasting is unsupported in this version of
  the ONNX parser", and ``elementwiseHelper`` calls it for every input, so every node it imports (Add ...
  Mean, the comparisons) is refused at opset < 7, equal ranks too; ``broadcastTensors`` (PRelu, Gemm's
  C) calls it only when the ranks differ;
- ops without an importer (BitShift, BitwiseAnd/Or/Xor: none in ``onnxOpImporters.cpp`` at
  onnx-tensorrt 96e7811, June 2024);
- PRelu: the parser broadcasts the data to a slope of higher rank (ONNX refuses that slope, so no
  valid model reaches it).

0-size dims are not refused: TensorRT takes empty tensors (a 0 broadcasts with 1 as numpy's rule says),
and the parser's reshapes keep them (``addShuffle(..., zeroIsPlaceholder=false)``).  TensorRT needs an
NVIDIA GPU and is not installed here: this target is checked against the parser's source, not run.
"""

from __future__ import annotations

from ...models.deploy import DeployChecks, Route
from ...models.target import Site

__all__ = ["TARGET", "Checks"]

TARGET = "tensorrt"

_SAME = ("Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "GreaterOrEqual", "Less",
         "LessOrEqual", "Max", "Min", "Sum", "Mean", "Where", "PRelu")
_HELPER = _SAME[:-2]  # the importers that call elementwiseHelper (Where and PRelu call broadcastTensors)
_NO_IMPORTER = ("BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor")


class Checks(DeployChecks):
    """The checks of target ``tensorrt`` (see the module docstring)."""

    name = TARGET
    framework = "tensorrt"
    label = "TensorRT's ONNX parser"
    routes = {
        **{op: Route(f"onnx:{op}") for op in _SAME},
        "Mod": Route("onnx:Sub", via="Mod: broadcastTensors, then elementwise layers"),
        "Expand": Route("onnx:Add", "expand", via="Expand: 1s prepended, then an ISliceLayer"),
        "Gemm": Route("onnx:Add", "gemm", via="Gemm: broadcastTensors(A*B, C), then a SUM layer"),
        **{op: f"TensorRT's ONNX parser has no importer for {op} (onnxOpImporters.cpp)" for op in _NO_IMPORTER},
    }

    def context(self, site: Site) -> tuple:
        return (site.opset < 7,)

    def refused(self, site: Site) -> str | None:
        ranks = {len(s) for s in site.shapes if s is not None}
        if site.opset < 7 and (site.op.name in _HELPER or len(ranks) > 1):
            return ("TensorRT's ONNX parser refuses elementwise nodes before opset 7: \"Pre-opset 7 broadcasting "
                    "is unsupported in this version of the ONNX parser\" (broadcastTensor, importerUtils.cpp)")
        return None
