"""OpenVINO's CPU plugin's deviation records: where the plugin does not compute what OpenVINO's op specs
(and its own shape inference) say.  Each record follows its ``check``; :mod:`.deviations` puts them in
the framework's registry order.
"""

from __future__ import annotations

from ...core._format import format_shape as _fmt
from ...core.plan import Plan
from .._deviation import Deviation, Outcome, attempt
from .runtimes import _OV, OpenVINORuntime

__all__ = ["CPU_NO_REFERENCE"]


#: The element-wise ops that OpenVINO's CPU plugin converts to numpy broadcasting when they have an explicit
#: pdpd axis (measured on 2026.4.1); Add, Multiply, Power, Maximum, Minimum, SquaredDifference, FloorMod, Mod
#: and integer Divide keep the axis.
_OV_CPU_AXIS_OPS = ("Subtract", "Divide", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                    "LogicalAnd", "LogicalOr", "LogicalXor", "BitwiseAnd", "BitwiseOr", "BitwiseXor")


def _element_type(o: Outcome) -> str | None:
    """The element type the caller named in ``op_attrs`` (``element_type``), or None."""
    return o.op_attrs.get("element_type")


#: (op, element type) pairs that the CPU plugin hands to the reference implementation with pdpd when rank(B) <
#: rank(A), and that it has no kernel for (measured on 2026.4.1: Model.evaluate fails on them too).
CPU_NO_REFERENCE = {
    "Multiply": ("int8", "uint8"), "Divide": ("int8", "uint8"), "Power": ("int8", "uint8"),
    "Maximum": ("int8", "uint8"), "Minimum": ("int8",), "SquaredDifference": ("int8", "uint8"),
    "Mod": ("float16", "float32"),
}


def _ov_cpu_pdpd_ops(o: Outcome) -> str | None:
    if o.rule != "pdpd" or o.plan is None or o.attrs.get("axis", -1) == -1:
        return None
    a, b = o.shapes
    if len(b) >= len(a):
        return None
    integer = str(_element_type(o) or "float").startswith(("int", "uint"))
    if o.op is not None and (o.op not in _OV_CPU_AXIS_OPS or (o.op == "Divide" and integer)):
        return None
    ops = o.op or "Subtract, Divide, the comparisons, the logical and the bitwise ops"
    both = attempt("numpy", a, b)
    if not isinstance(both, Plan):
        return (f"the CPU plugin fails to compile {ops} with an explicit pdpd axis where B right-aligned (numpy's "
                "placement, which it uses instead) does not fit A, as here")
    start = o.plan.attr("start_axis")
    fail = "" if o.op in ("Subtract", "Divide") else (
        "the comparisons, the logical and the bitwise ops fail to compile for some element types")
    if start == len(a) - len(b):  # numpy's placement is the axis's: only the failures deviate
        return f"with an explicit pdpd axis on the CPU plugin {fail}" if fail else None
    return (f"the CPU plugin ignores the axis of {ops}: it computes B right-aligned (numpy's placement), output "
            f"{_fmt(both.shape)}, not B from axis {start}"
            + ("" if both.shape == tuple(a) else f" and not A's shape {_fmt(a)}")
            + (f"; {fail} instead" if fail else ""))


OPENVINO_CPU_PDPD_OPS = Deviation(
    id="openvino-cpu-pdpd-ops",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("pdpd",),
    ops="Subtract, Divide (floating types), the comparisons, the logical and the bitwise ops with "
        "auto_broadcast=pdpd",
    condition="an explicit axis (not -1) and rank(B) < rank(A), e.g. A (3,3), B (3,), axis 0",
    behaviour="the plugin ignores the axis and broadcasts as numpy does (B right-aligned): where that does not fit A "
              "compile_model fails (\"Argument shapes are inconsistent.\", \"Eltwise executor got invalid "
              "input/output dims configuration\"); where it fits it silently computes that placement: Subtract "
              "A (3,3), B (3,), axis 0 returns A - B along the last axis, int64 A (3,1,1), B (3,1), axis 0 returns "
              "shape (3,3,1), not A's; the comparisons, the logical and the bitwise ops of some element types (Equal "
              "float32, bool) fail to compile instead, even where the axis is rank(A) - rank(B) (A (2,3), B (3,), "
              "axis 1); Add, Multiply, Power, Maximum, Minimum, SquaredDifference, FloorMod, Mod and integer Divide "
              "keep the axis",
    spec="every element-wise op supports auto_broadcast=pdpd with any valid axis: B is placed from the axis",
    check=_ov_cpu_pdpd_ops,
)


def _ov_bidirectional_zero(o: Outcome) -> str | None:
    if o.rule != "bidirectional" or o.plan is None:
        return None
    data, target = o.shapes
    n = len(o.plan.shape)
    dpad = (1,) * (n - len(data)) + data
    tpad = (1,) * (n - len(target)) + target
    if any(d == 0 and t == 1 for d, t in zip(dpad, tpad)):
        return ("OpenVINO's CPU plugin fails to compile this Broadcast (\"Input shape dimension equal 0 cannot "
                "be broadcasted (numpy mode) to 1\") although its shape inference agrees")
    if any(d == 1 and t == 0 for d, t in zip(dpad, tpad)):
        kept = tuple(1 if d == 1 and t == 0 else s for d, t, s in zip(dpad, tpad, o.plan.shape))
        return (f"OpenVINO's CPU plugin, on a model of static shapes, keeps data's dim 1 where the target has 0 and "
                f"returns {_fmt(kept)}, although its shape inference says {_fmt(o.plan.shape)}")
    return None


OPENVINO_CPU_BIDIRECTIONAL_ZERO = Deviation(
    id="openvino-cpu-bidirectional-zero",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("bidirectional",),
    ops="Broadcast-3 mode bidirectional",
    condition="a data dim of 0 faces a target dim of 1, e.g. data (0,), target [2,1]; or a data dim of 1 faces a "
              "target dim of 0, e.g. data (1,), target [2,0]",
    behaviour="the first: compile_model fails (\"Input shape dimension equal 0 cannot be broadcasted (numpy mode) to "
              "1\"); the second, on a model of static shapes: the output keeps data's 1, (2,1), although its own "
              "shape inference says (2,0) (a model of dynamic shapes returns (2,0))",
    spec="numpy.array(data) * numpy.ones(target) has shape (2,0) in both examples",
    check=_ov_bidirectional_zero,
)


def _ov_scalar_to_scalar(o: Outcome) -> str | None:
    if o.rule in ("bidirectional", "unidirectional") and o.plan is not None and all(len(s) == 0 for s in o.shapes):
        return ("OpenVINO's CPU plugin crashes (segmentation fault) compiling a Broadcast of a scalar to the "
                "target shape []")
    return None


OPENVINO_CPU_SCALAR_TO_SCALAR = Deviation(
    id="openvino-cpu-scalar-to-scalar",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("bidirectional", "unidirectional"),
    ops="Broadcast-3 modes numpy and bidirectional",
    condition="scalar data and the target shape []",
    behaviour="compile_model crashes the process (segmentation fault)",
    spec="the output is a scalar",
    check=_ov_scalar_to_scalar,
    kills_process=True,
)


def _ov_cpu_reference_fallback(o: Outcome) -> str | None:
    if o.rule != "pdpd" or o.plan is None or len(o.shapes[1]) >= len(o.shapes[0]):
        return None
    types = CPU_NO_REFERENCE.get(o.op or "", ())
    dtype = _element_type(o)
    if dtype is not None and dtype not in types:
        return None
    which = dtype or " or ".join(types)
    return (f"the CPU plugin hands {o.op} {which} with pdpd and rank(B) < rank(A) to OpenVINO's reference "
            f"implementation, which has no {which} kernel: compile_model fails (\"Cannot fallback on ngraph "
            "reference implementation\")")


OPENVINO_CPU_PDPD_REFERENCE_FALLBACK = Deviation(
    id="openvino-cpu-pdpd-reference-fallback",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("pdpd",),
    ops="Multiply, Divide, Power, Maximum, SquaredDifference int8/uint8, Minimum int8, Mod float16/float32 with "
        "auto_broadcast=pdpd",
    condition="rank(B) < rank(A), e.g. Multiply int8 A (2,3), B (3,)",
    behaviour="the plugin hands these to OpenVINO's reference implementation, which has no kernel for them: "
              "compile_model fails (\"Cannot fallback on ngraph reference implementation\"); the same ops run with "
              "equal ranks",
    spec="every element-wise op supports auto_broadcast=pdpd for each element type it accepts",
    check=_ov_cpu_reference_fallback,
    only_ops=tuple(CPU_NO_REFERENCE),
)


def _ov_cpu_sqdiff_int(o: Outcome) -> str | None:
    if o.rule != "pdpd" or o.plan is None or _element_type(o) not in ("int32", "int64"):
        return None
    return (f"the CPU plugin never compiles SquaredDifference {_element_type(o)} with pdpd (\"Cannot fallback on "
            "ngraph reference implementation\"), equal shapes included")


OPENVINO_CPU_PDPD_SQUARED_DIFFERENCE_INT = Deviation(
    id="openvino-cpu-pdpd-squared-difference-int",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("pdpd",),
    ops="SquaredDifference int32/int64 with auto_broadcast=pdpd",
    condition="always, equal shapes included, e.g. A (2,3), B (2,3)",
    behaviour="compile_model fails (\"Cannot fallback on ngraph reference implementation\"); with numpy broadcasting "
              "it runs",
    spec="SquaredDifference supports auto_broadcast=pdpd for every numeric type",
    check=_ov_cpu_sqdiff_int,
    only_ops=("SquaredDifference",),
)


def _ov_cpu_select_axis(o: Outcome) -> str | None:
    if o.rule != "openvino-select" or o.plan is None or o.attrs.get("auto_broadcast") != "pdpd":
        return None
    if o.attrs.get("axis", -1) == -1 or 0 in o.plan.shape:
        return None
    if _element_type(o) in ("int32", "int64"):
        return None
    return ("the CPU plugin fails to compile Select with an explicit pdpd axis (\"Unsupported auto broadcast "
            "specification\", \"'Else' tensor shape is not broadcastable.\") for every element type but int32 "
            "and int64: leave the axis at -1 where it means the same")


OPENVINO_CPU_SELECT_PDPD_AXIS = Deviation(
    id="openvino-cpu-select-pdpd-axis",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("openvino-select",),
    ops="Select with auto_broadcast=pdpd",
    condition="an explicit axis (not -1) and a non-empty output, e.g. float32 cond (3,), then (2,3), else (3,), axis 1 "
              "(equal shapes with axis 0, and scalars, too)",
    behaviour="compile_model fails (\"'Else' tensor shape is not broadcastable.\", \"'Cond' tensor shape is not "
              "broadcastable.\", \"Unsupported auto broadcast specification\") for every element type of then/else "
              "but int32 and int64, which it runs right; an empty output compiles",
    spec="Select supports auto_broadcast=pdpd with any valid axis",
    check=_ov_cpu_select_axis,
)


OPENVINO_CPU_INTEGER_VALUES = Deviation(
    id="openvino-cpu-integer-values",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("numpy", "none", "pdpd"),
    ops="integer Add, Subtract, Multiply, Divide, Power, SquaredDifference, FloorMod, Mod",
    condition="any shapes; these values: int8/uint8 results out of range; int8/uint8 Divide; int16/int32/int64 Divide "
              "with numpy or no broadcasting; int64 values beyond int32; a zero divisor",
    behaviour="int8/uint8 arithmetic saturates (int8 100 + 100 = 127, uint8 3 - 5 = 0) and int8/uint8 Divide rounds "
              "to nearest on a model of dynamic shapes (4 / 7 = 1), truncates on one of static shapes (-7 / 2 = -3); "
              "int16/int32/int64 Divide with numpy or no broadcasting truncates (-7 / 2 = -3) whatever "
              "python_division says (with pdpd it floors, as the spec says); int64 is computed in int32 "
              "(2**40 + 3 = 3); integer Divide, FloorMod and Mod by 0 return garbage (INT_MIN, 0) with no error",
    spec="the reference implementation (Model.evaluate): wrapping arithmetic in the element type, int64 in "
         "int64, Divide floors with python_division=True (the default) and truncates without; division by 0 is "
         "an error",
    only_ops=("Add", "Subtract", "Multiply", "Divide", "Power", "SquaredDifference", "FloorMod", "Mod"),
)


OPENVINO_CPU_MINMAX_NAN = Deviation(
    id="openvino-cpu-minmax-nan",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("numpy", "none", "pdpd"),
    ops="Maximum, Minimum on floats",
    condition="any shapes; one operand NaN",
    behaviour="the result depends on the operands' order (x > y ? x : y): Maximum(NaN, 1) = 1, Maximum(1, NaN) = NaN",
    spec="the reference implementation (std::max, std::min): Maximum(NaN, 1) = NaN, Maximum(1, NaN) = 1",
    only_ops=("Maximum", "Minimum"),
)
