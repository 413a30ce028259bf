"""The ops a plan translates for, named in every target, derived from the frameworks' op tables.

An op is known by its ONNX name (bcast's); ncnn's BinaryOp type comes from
:data:`bcast.frameworks.ncnn.op_types.FROM_ONNX`, OpenVINO's op from
:data:`bcast.frameworks.openvino.from_onnx.FROM_ONNX`; numpy, a target with no framework
package, has its function names here.  The op-specific source rules fix the op
(:data:`RULE_OP`); :func:`source_op` checks an op against the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core._format import brief
from ..core.errors import InputError
from ..core.plan import Plan
from ..frameworks.ncnn.op_types import FROM_ONNX as NCNN_FROM_ONNX
from ..frameworks.ncnn.op_types import code as ncnn_code
from ..frameworks.openvino.from_onnx import FROM_ONNX as OPENVINO_FROM_ONNX
from ..frameworks.tflite.from_onnx import FROM_ONNX as TFLITE_FROM_ONNX

__all__ = ["OPS", "Op", "RULE_OP", "PRELU_RULES", "find", "source_op", "tensors"]


@dataclass(frozen=True)
class Op:
    """One op as each framework names it.  ``kind``: ``binary`` (element-wise,
    two inputs), ``where`` (cond, then, else), ``prelu``, ``gemm`` or
    ``broadcast`` (data to a shape); ``ncnn``: BinaryOp's op_type, or None
    where ncnn has no such BinaryOp."""

    name: str
    kind: str
    numpy: str
    onnx: str
    openvino: str
    ncnn: int | None = None
    ncnn_name: str | None = None
    tflite: str | None = None  # TFLite's builtin, or None where it has none
    tensorrt: str | None = None  # TensorRT's layer (ElementWiseOperation member, Select, ParametricReLU), or None
    tosa: str | None = None  # TOSA's operator, or None where the recipe composes it (Div) or TOSA has none
    stablehlo: str | None = None  # StableHLO's op, or None where it has none


#: The ops, by ONNX name, with numpy's function for each (in the order :data:`OPS` lists them).
_NUMPY = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Max": "maximum",
          "Min": "minimum", "Pow": "power", "Where": "where", "PRelu": "prelu", "Gemm": "matmul",
          "Expand": "broadcast_to"}
_KINDS = {"Where": "where", "PRelu": "prelu", "Gemm": "gemm", "Expand": "broadcast"}  # the others: binary
#: The ops OpenVINO's recipe composes itself (Gemm: MatMul, then Add of C; Expand: Broadcast).
_OPENVINO_COMPOSED = {"Gemm": "MatMul", "Expand": "Broadcast"}
#: TensorRT's layer API (NvInfer.h: ``ElementWiseOperation``, ``ISelectLayer``, ``IParametricReLULayer``;
#: :mod:`bcast.frameworks.tensorrt.ops`); Expand is a strided ``ISliceLayer`` (the recipe's), Gemm has no form.
_TENSORRT = {"Add": "SUM", "Sub": "SUB", "Mul": "PROD", "Div": "DIV", "Max": "MAX", "Min": "MIN", "Pow": "POW",
             "Where": "Select", "PRelu": "ParametricReLU"}
#: TOSA's operators (the specification's names, :mod:`bcast.frameworks.tosa.ops`); Div of floats is
#: RECIPROCAL then MUL (TOSA's INTDIV is for integers), Expand is TILE; PRelu and Gemm have no form.
_TOSA = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Max": "MAXIMUM", "Min": "MINIMUM", "Pow": "POW",
         "Where": "SELECT"}
#: StableHLO's ops (openxla/stablehlo docs/spec.md, :mod:`bcast.frameworks.stablehlo.ops`).
_STABLEHLO = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Max": "maximum",
              "Min": "minimum", "Pow": "power", "Where": "select", "Expand": "broadcast_in_dim"}


def _row(name: str) -> Op:
    ncnn = NCNN_FROM_ONNX.get(name)
    openvino = OPENVINO_FROM_ONNX.get(name) or _OPENVINO_COMPOSED[name]
    return Op(name, _KINDS.get(name, "binary"), _NUMPY[name], name, openvino,
              None if ncnn is None else ncnn_code(ncnn), ncnn, TFLITE_FROM_ONNX.get(name), _TENSORRT.get(name),
              _TOSA.get(name), _STABLEHLO.get(name))


#: The op table: bcast's (ONNX's) name first; any of the names below selects the op.
OPS = tuple(_row(name) for name in _NUMPY)
_BY_NAME = {alias.lower(): o for o in OPS for alias in (o.name, o.numpy, o.onnx, o.openvino, o.ncnn_name, o.tflite,
                                                         o.tensorrt, o.tosa, o.stablehlo) if alias}

#: Source rules whose op is fixed; every other rule is element-wise (a binary op, or Where for 3 inputs).
RULE_OP = {
    "bidirectional": "Expand", "explicit": "Expand", "openvino-broadcast-pdpd": "Expand",
    "openvino-select": "Where", "openvino-prelu": "PRelu", "onnx-gemm": "Gemm", "tflite-select": "Where",
}
#: Element-wise rules that may also take PRelu (a slope broadcast into data).
PRELU_RULES = ("unidirectional", "openvino-prelu")


def find(name: Any) -> Op:
    """The op of any of its names (any case); :class:`InputError` if none."""
    found = _BY_NAME.get(name.strip().lower()) if isinstance(name, str) else None
    if found is None:
        raise InputError(f"translate: unknown op {brief(name)}; the ops are: {', '.join(o.name for o in OPS)} "
                         "(or any target's name for them)")
    return found


def source_op(plan: Plan, op: Any) -> Op:
    """The op the plan is translated for: ``op`` (default: the rule's own, else Add for two
    inputs and Where for three), checked against the rule and the inputs."""
    fixed = RULE_OP.get(plan.rule)
    n = len(plan.inputs)
    o = find(fixed or ("Where" if n == 3 else "Add") if op is None else op)
    if fixed is not None:
        if o.name != fixed:
            raise InputError(f"translate: rule {plan.rule} is the op {fixed}, not {o.name}")
        return o
    if o.kind == "prelu" and plan.rule not in PRELU_RULES:
        raise InputError(f"translate: PRelu broadcasts by the rules {', '.join(PRELU_RULES)}, not {plan.rule}")
    if o.kind not in ("binary", "where", "prelu"):
        raise InputError(f"translate: {o.name} is the op of the rules "
                         f"{', '.join(r for r, v in RULE_OP.items() if v == o.name)}, not of {plan.rule}")
    arity = 3 if o.kind == "where" else 2
    if n != arity:
        raise InputError(f"translate: {o.name} takes {arity} inputs; the plan has {n} ({', '.join(plan.names)})")
    return o


def tensors(plan: Plan) -> tuple[int, ...]:
    """The inputs that are tensors: all, but for the broadcast-to rules only data."""
    return (0,) if RULE_OP.get(plan.rule) == "Expand" else tuple(range(len(plan.inputs)))
