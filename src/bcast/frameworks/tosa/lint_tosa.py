"""Lint target ``tosa``: the model as onnx-mlir lowers it to TOSA (``--EmitONNXIR`` then
``convert-onnx-to-tosa``), at TOSA level 8K.

TOSA's elementwise ops take operands of equal rank (:mod:`bcast.frameworks.tosa.ops`, rule ``equal-rank``);
the front ends equalise ranks before they emit them: onnx-mlir's binary lowerings call
``TosaBuilder::equalizeRanks`` (``src/Conversion/ONNXToTOSA/Math/Elementwise.cpp``, onnx-mlir PR#2269),
as torch-mlir's and TensorFlow's legalisations do with MLIR's ``EqualizeRanks``
(``mlir/lib/Dialect/Tosa/Utils/ConversionUtils.cpp``).  So a numpy broadcast lowers, and what is left is
the level: rank <= 6 at level 8K (``TOSA_LEVEL_EIGHTK``), and no 0-size dim (TOSA 1.0). The ONNX ops and their
TOSA ops, from onnx-mlir's lowerings: Add ADD, Sub SUB, Mul MUL, Div MUL by RECIPROCAL (INTDIV for integers),
Pow POW, Max MAXIMUM, Min MINIMUM (of more than two inputs: checked as a chain, each input with the output),
And / Or / Xor LOGICAL_*, Bitwise* BITWISE_*, Equal EQUAL, Greater GREATER, GreaterOrEqual GREATER_EQUAL, Less
and LessOrEqual GREATER / GREATER_EQUAL of the swapped operands, Where SELECT (``Tensor/Where.cpp``), PRelu
MUL then SELECT, Gemm's C an ADD (``Math/Gemm.cpp``), Expand (``Tensor/Expand.cpp``) the broadcast of the
input to the output's shape.  Sum and Mean are chains of ADD (onnx-mlir lowers them to no TOSA op of their own:
they are checked as the ADDs a front end writes), Mod is INTDIV / MUL / SUB, BitShift the shifts.
No TOSA implementation runs here: checked against the specification and onnx-mlir's source.
"""

from __future__ import annotations

from ...models.deploy import DeployChecks, Route

__all__ = ["TARGET", "Checks"]

TARGET = "tosa"

_TOSA = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "MUL", "Pow": "POW",
         "And": "LOGICAL_AND", "Or": "LOGICAL_OR", "Xor": "LOGICAL_XOR", "BitwiseAnd": "BITWISE_AND",
         "BitwiseOr": "BITWISE_OR", "BitwiseXor": "BITWISE_XOR", "Equal": "EQUAL", "Greater": "GREATER",
         "GreaterOrEqual": "GREATER_EQUAL", "Where": "SELECT", "PRelu": "MUL"}


class Checks(DeployChecks):
    """The checks of target ``tosa`` (see the module docstring)."""

    name = TARGET
    framework = "tosa"
    label = "TOSA (onnx-mlir, level 8K)"
    equalise = True
    plan_attrs = {"level": "8K"}
    routes = {
        **{op: Route(t) for op, t in _TOSA.items()},
        "Max": Route("MAXIMUM", "output"),
        "Min": Route("MINIMUM", "output"),
        "Less": Route("GREATER", swap=True),
        "LessOrEqual": Route("GREATER_EQUAL", swap=True),
        "Gemm": Route("ADD", "gemm", via="Gemm: MATMUL, then C added"),
        "Expand": Route("ADD", "expand", via="Expand: the input broadcast to the output's shape"),
        "Sum": Route("ADD", "output"),
        "Mean": Route("ADD", "output", via="Mean: ADDs, then a MUL"),
        "Mod": Route("SUB", via="Mod: INTDIV, MUL, SUB"),
        "BitShift": Route("LOGICAL_LEFT_SHIFT", via="BitShift: the TOSA shift of its direction"),
    }
