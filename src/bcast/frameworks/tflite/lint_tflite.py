"""Lint target ``tflite``: the model as a converter (onnx2tf, or onnx-tf and TensorFlow's TFLite converter)
writes it with TFLite builtins, and LiteRT's interpreter runs it.

The converters emit each elementwise ONNX op as the builtin that computes it with numpy broadcasting
(:data:`~bcast.frameworks.tflite.from_onnx.FROM_ONNX`, the comparisons and logical ops alike); where the
TFLite converter's per-op limits stop it (``CONVERTER_MAX_RANK``, ``IsRankSupported`` in
``optimize_broadcast_like_pass.cc``) it broadcasts the inputs explicitly with BROADCAST_TO first
(``ApplyExplicitBroadcasting``, ``legalize_tf.cc``) rather than fail.  What is left are the kernels' own
limits, from the plug-in (:func:`bcast.frameworks.tflite.ops.plan`): inputs of different shapes broadcast
up to rank 8 (``KERNEL_MAX_RANK``: ``kMaxRank`` of ``BroadcastBinaryOpSimple``); past it the interpreter
aborts (deviation ``tflite-rank-abort``, attached), SELECT_V2's ``Prepare`` refuses it -- but for ADD
and MUL of float32 whose shapes take the five-fold fast path, which compute at any rank (deviation
``tflite-rank-fast-path``: no finding).  Variadic Max,
Min, Sum and Mean become chains of binary builtins, Gemm's C an ADD to FULLY_CONNECTED's output, Expand
a BROADCAST_TO of the output's shape.  The deviation records of the interpreter bear on each builtin
(SELECT_V2 of one-element inputs, ...).  TFLite has no builtin for BitShift's left shift nor for
BitwiseAnd / BitwiseOr (TensorFlow's converter would need Flex ops), and bcast does not model its
RIGHT_SHIFT / BITWISE_XOR: those are ``unsupported``.  PRelu is checked as the MUL of its slope (a
converter's PRELU broadcasts in ``BroadcastPrelu4DSlow``, whose rank <= 4 is a debug check only:
not modelled).
"""

from __future__ import annotations

from typing import Any

from onnx import helper

from ...models.deploy import DeployChecks, Route
from ...models.target import Site
from .deviations import TFLiteRuntime
from .from_onnx import FROM_ONNX

__all__ = ["TARGET", "Checks"]

TARGET = "tflite"

_BINARY = {"Equal": "EQUAL", "Greater": "GREATER", "GreaterOrEqual": "GREATER_EQUAL", "Less": "LESS",
           "LessOrEqual": "LESS_EQUAL", "And": "LOGICAL_AND", "Or": "LOGICAL_OR", "Mod": "FLOOR_MOD"}


class Checks(DeployChecks):
    """The checks of target ``tflite`` (see the module docstring)."""

    name = TARGET
    framework = "tflite"
    label = "TFLite"
    runtimes = decisive_runtimes = tuple(TFLiteRuntime)
    routes = {
        **{op: Route(b) for op, b in FROM_ONNX.items() if op not in ("Max", "Min", "Expand")},
        **{op: Route(b) for op, b in _BINARY.items()},
        "Xor": Route("NOT_EQUAL", via="Xor: NOT_EQUAL of bools"),
        "Max": Route("MAXIMUM", "output"),
        "Min": Route("MINIMUM", "output"),
        "Sum": Route("ADD", "output"),
        "Mean": Route("ADD", "output", via="Mean: ADDs, then a MUL"),
        "PRelu": Route("MUL", via="PRelu: the slope's product"),
        "Gemm": Route("ADD", "gemm", via="Gemm: FULLY_CONNECTED, then C added"),
        "Expand": Route("BROADCAST_TO", "into", via="Expand: BROADCAST_TO of the output's shape"),
        **{op: f"TFLite has no builtin for {op} that bcast models (TensorFlow's converter would need Flex ops)"
           for op in ("BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor")},
    }

    computing = ("tflite-rank-fast-path",)

    def context(self, site: Site) -> tuple:
        return (self._element_type(site),)

    def op_attrs(self, site: Site) -> dict[str, Any] | None:
        element_type = self._element_type(site)
        return None if element_type is None else {"element_type": element_type}

    def _element_type(self, site: Site) -> str | None:
        """The numpy name of the node's data type (its last input's: Where's x and y, not its condition)."""
        elem = self.shapes.elem_type(site.inputs[-1])
        try:
            return str(helper.tensor_dtype_to_np_dtype(elem)) if elem else None
        except (KeyError, ValueError, TypeError):
            return None
