"""The op OpenVINO's ONNX frontend makes of each ONNX op: plain data (no numpy), for the lint target
(:mod:`bcast.frameworks.openvino.lint_openvino`) and the modules that name ops across frameworks
(:mod:`bcast.translation.ops`)."""

from __future__ import annotations

__all__ = ["FROM_ONNX"]

#: ONNX op -> the op OpenVINO's ONNX frontend makes of it (as :data:`bcast.frameworks.openvino.ops.OPS` spells it).
FROM_ONNX = {"Add": "Add", "Sub": "Subtract", "Mul": "Multiply", "Div": "Divide", "Pow": "Power",
             "Max": "Maximum", "Min": "Minimum", "Sum": "Add", "PRelu": "PRelu", "Where": "Select",
             "Greater": "Greater", "GreaterOrEqual": "GreaterEqual", "Less": "Less", "LessOrEqual": "LessEqual",
             "Equal": "Equal", "SquaredDifference": "SquaredDifference"}
