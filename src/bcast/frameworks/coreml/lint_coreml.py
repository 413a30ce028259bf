"""Lint target ``coreml``: each broadcasting ONNX node as the MIL op that computes it, in an ML program
coremltools converts (rank <= 5).

coremltools has no ONNX front end any more (the ``onnx-coreml`` converter was removed from
coremltools 6; ``ct.convert`` takes TensorFlow and PyTorch models), so this target models the path a
user of an ONNX model takes today: the same computation reaching MIL through a supported front end,
whose elementwise ops (``mb.add`` ... ``mb.select``, :mod:`bcast.frameworks.coreml.ops`) broadcast by
numpy's rule (``broadcast_shapes`` in ``mil/ops/defs/_utils.py``), on tensors of rank <= 5
(``Program._check_invalid_tensor_rank``).  A node past rank 5 is ``unsupported`` (ct.convert refuses the
program; the MIL builder alone does not: deviation ``coreml-mil-rank``, attached).  Div is ``real_div``
(``floor_div`` for integers computes other values on negatives: not a broadcasting matter), Mod ``mod``,
Xor ``logical_xor``, PRelu the ``mul`` of its slope (MIL's ``prelu`` takes a per-channel alpha only),
Gemm's C an ``add`` to ``linear``/``matmul``'s output, Expand the ``add`` of the input and the shape
(MIL's ``tile``/``broadcast`` after it), variadic ops chains of binary ones.  MIL has no bitwise op:
BitShift and Bitwise* are ``unsupported``.  Planned by coremltools' MIL rules as the plug-in states
them (``tests/frameworks/test_coreml_rules.py`` proves the plug-in against MIL type inference).
"""

from __future__ import annotations

from ...models.deploy import DeployChecks, Route
from .deviations import CoreMLRuntime

__all__ = ["TARGET", "Checks"]

TARGET = "coreml"

_MIL = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "real_div", "Pow": "pow", "Mod": "mod",
        "Equal": "equal", "Greater": "greater", "GreaterOrEqual": "greater_equal", "Less": "less",
        "LessOrEqual": "less_equal", "And": "logical_and", "Or": "logical_or", "Xor": "logical_xor", "Where": "select"}


class Checks(DeployChecks):
    """The checks of target ``coreml`` (see the module docstring)."""

    name = TARGET
    framework = "coreml"
    label = "Core ML"
    runtimes = tuple(CoreMLRuntime)  # the builder's records: notes, never a finding by themselves
    routes = {
        **{op: Route(m) for op, m in _MIL.items()},
        "Max": Route("maximum", "output"),
        "Min": Route("minimum", "output"),
        "Sum": Route("add", "output"),
        "Mean": Route("add", "output", via="Mean: adds, then a mul"),
        "PRelu": Route("mul", via="PRelu: the slope's product"),
        "Gemm": Route("add", "gemm", via="Gemm: linear or matmul, then C added"),
        "Expand": Route("add", "expand", via="Expand: the input and the shape broadcast"),
        **{op: f"Core ML's MIL has no bitwise op for {op}" for op in ("BitShift", "BitwiseAnd", "BitwiseOr",
                                                                      "BitwiseXor")},
    }
