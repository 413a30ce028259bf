"""Lint target ``nnapi``: each broadcasting ONNX node as the Android NNAPI operation that computes it
(``NeuralNetworksTypes.h``, :mod:`bcast.frameworks.nnapi.ops`).

NNAPI's operations broadcast by numpy's rule, but ADD, SUB, MUL and DIV take tensors of rank <= 4 only
(the TFLite NNAPI delegate checks the same before it delegates them), every operation rank >= 1, and
SELECT does not broadcast at all: an ONNX Where whose inputs differ in shape is ``unsupported``.  A
rank-0 input of the arithmetic, comparison, POW, MAXIMUM, MINIMUM and PRELU operations is given to NNAPI
as a 1-D tensor of one element by the TFLite NNAPI delegate (``IsScalarInputSupported`` and
``NN_TENSOR_FLAG_SCALAR_AS_TENSOR``, ``tensorflow/lite/delegates/nnapi/nnapi_delegate.cc``): checked so.  Mean
and Sum become ADDs, Gemm's C an ADD (FULLY_CONNECTED's bias is 1-D), Expand a RESHAPE and TILE (no
broadcasting operation: not checked), Xor NOT_EQUAL of bools.  NNAPI has no modulo, shift nor
bitwise operation: Mod, BitShift and Bitwise* are ``unsupported``.  No NNAPI driver runs here: checked
against the header.
"""

from __future__ import annotations

from ...core.errors import BroadcastError, InputError
from ...models.deploy import DeployChecks, Route
from ...models.target import Site

__all__ = ["TARGET", "Checks"]

TARGET = "nnapi"

_NNAPI = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "DIV", "Pow": "POW", "Equal": "EQUAL",
          "Greater": "GREATER", "GreaterOrEqual": "GREATER_EQUAL", "Less": "LESS", "LessOrEqual": "LESS_EQUAL",
          "And": "LOGICAL_AND", "Or": "LOGICAL_OR", "Where": "SELECT", "PRelu": "PRELU"}

#: The operations whose rank-0 inputs the TFLite NNAPI delegate passes as 1-D tensors (IsScalarInputSupported).
_SCALAR_AS_TENSOR = ("ADD", "SUB", "MUL", "DIV", "EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL",
                     "POW", "MAXIMUM", "MINIMUM", "PRELU")


class Checks(DeployChecks):
    """The checks of target ``nnapi`` (see the module docstring)."""

    name = TARGET
    framework = "nnapi"
    label = "NNAPI"
    routes = {
        **{op: Route(n) for op, n in _NNAPI.items()},
        "Xor": Route("NOT_EQUAL", via="Xor: NOT_EQUAL of bools"),
        "Max": Route("MAXIMUM", "output"),
        "Min": Route("MINIMUM", "output"),
        "Sum": Route("ADD", "output"),
        "Mean": Route("ADD", "output", via="Mean: ADDs, then a MUL"),
        "Gemm": Route("ADD", "gemm", via="Gemm: FULLY_CONNECTED or BATCH_MATMUL, then C added"),
        "Expand": Route(None, via="Expand: RESHAPE and TILE"),
        **{op: f"NNAPI has no operation for {op}" for op in ("Mod", "BitShift", "BitwiseAnd", "BitwiseOr",
                                                             "BitwiseXor")},
    }

    def operand_shapes(self, site: Site, route: Route) -> list[tuple]:
        found = super().operand_shapes(site, route)
        if route.op in _SCALAR_AS_TENSOR:
            return [tuple(s if len(s) else (1,) for s in shapes) for shapes in found]
        return found

    def fix(self, site: Site, route: Route, error: BroadcastError | InputError) -> str:
        if route.op == "SELECT" and site.plan is not None:
            return (f"Expand the inputs to the output's shape {list(site.plan.shape)} (NNAPI's SELECT takes equal "
                    "shapes)")
        return super().fix(site, route, error)
