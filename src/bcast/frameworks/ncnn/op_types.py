"""ncnn's BinaryOp op types by number, and the ONNX ops its converters make into them: plain data
(no numpy), for the modules that name ops across frameworks (:mod:`bcast.translation.ops`)."""

from __future__ import annotations

__all__ = ["FROM_ONNX", "OP_TYPES", "code"]

#: BinaryOp's op types, at their numbers (``0=op_type`` in a ``.param``).
OP_TYPES = ("ADD", "SUB", "MUL", "DIV", "MAX", "MIN", "POW", "RSUB", "RDIV", "RPOW", "ATAN2", "RATAN2", "FMOD",
            "RFMOD", "LOGADDEXP", "FLOOR_DIVIDE", "RFLOOR_DIVIDE", "REMAINDER", "RREMAINDER")

#: The ONNX ops that onnx2ncnn and pnnx turn into one two-blob BinaryOp, with its op type
#: (``bcast lint --target ncnn`` checks them under the ``ncnn`` rule).
FROM_ONNX = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "DIV", "Max": "MAX", "Min": "MIN", "Pow": "POW"}
assert set(FROM_ONNX.values()) <= set(OP_TYPES), "FROM_ONNX names ncnn op types"


def code(op_type: str) -> int:
    """The number of an op type (``code("DIV")`` is 3)."""
    return OP_TYPES.index(op_type)
