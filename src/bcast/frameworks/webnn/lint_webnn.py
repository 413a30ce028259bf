"""Lint target ``webnn``: each broadcasting ONNX node as the WebNN ``MLGraphBuilder`` method that computes it
(the W3C specification's rules, :mod:`bcast.frameworks.webnn.ops`; what onnxruntime's WebNN execution
provider builds).

The elementwise methods, ``prelu`` and ``where`` broadcast bidirectionally (numpy's rule, any rank here;
an implementation reports its own ``rankRange``); ``expand`` broadcasts *unidirectionally*: the new
shape must be the output's, so an ONNX Expand whose shape input is smaller than its output (ONNX's
Expand is bidirectional) is ``unsupported`` as it stands (onnxruntime's WebNN provider works around it,
onnxruntime PR#21163).  Gemm's C is unidirectionally broadcast to the output ("C ... unidirectionally
broadcastable to [M, N]", ``gemm``), Mod has no method, nor have BitShift and the Bitwise ops;
variadic Max / Min / Sum / Mean become chains of binary methods.  WebNN's dims are greater than zero:
a 0-size dim is ``unsupported``.  No WebNN implementation runs here: checked against the specification.
"""

from __future__ import annotations

from ...core.errors import BroadcastError, InputError
from ...models.deploy import DeployChecks, Route
from ...models.target import Site

__all__ = ["TARGET", "Checks"]

TARGET = "webnn"

_WEBNN = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow", "Equal": "equal",
          "Greater": "greater", "GreaterOrEqual": "greaterOrEqual", "Less": "lesser", "LessOrEqual": "lesserOrEqual",
          "And": "logicalAnd", "Or": "logicalOr", "Xor": "logicalXor", "Where": "where", "PRelu": "prelu"}


class Checks(DeployChecks):
    """The checks of target ``webnn`` (see the module docstring)."""

    name = TARGET
    framework = "webnn"
    label = "WebNN"
    routes = {
        **{op: Route(w) for op, w in _WEBNN.items()},
        "Max": Route("max", "output"),
        "Min": Route("min", "output"),
        "Sum": Route("add", "output"),
        "Mean": Route("add", "output", via="Mean: adds, then a div"),
        "Gemm": Route("expand", "gemm", swap=True, via="gemm's C, unidirectionally broadcast to [M, N]"),
        "Expand": Route("expand", "expand"),
        **{op: f"WebNN has no method for {op}" for op in ("Mod", "BitShift", "BitwiseAnd", "BitwiseOr",
                                                           "BitwiseXor")},
    }

    def fix(self, site: Site, route: Route, error: BroadcastError | InputError) -> str:
        if site.op.name == "Expand" and site.plan is not None:
            return f"give Expand the output's whole shape {list(site.plan.shape)} (WebNN's expand is unidirectional)"
        return super().fix(site, route, error)
