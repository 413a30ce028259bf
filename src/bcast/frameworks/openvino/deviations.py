"""OpenVINO's deviation records: where its shape inference, its CPU plugin, its reference evaluate
(Model.evaluate) and its Python builders do not do what OpenVINO's op specs say.  Each record follows
its ``check`` (the CPU plugin's in :mod:`.deviations_cpu`, FakeQuantize's in :mod:`.deviations_fq`); their proofs are in
:mod:`bcast.frameworks.openvino.proofs` and ``proofs_run``;
:mod:`bcast.frameworks.deviations` assembles the registry.
"""

from __future__ import annotations

from ...core._format import format_shape as _fmt
from ...core.plan import Plan
from .._deviation import Deviation, Outcome, attempt, verdict
from .deviations_cpu import (
    OPENVINO_CPU_BIDIRECTIONAL_ZERO, OPENVINO_CPU_INTEGER_VALUES, OPENVINO_CPU_MINMAX_NAN, OPENVINO_CPU_PDPD_OPS,
    OPENVINO_CPU_PDPD_REFERENCE_FALLBACK, OPENVINO_CPU_PDPD_SQUARED_DIFFERENCE_INT, OPENVINO_CPU_SCALAR_TO_SCALAR,
    OPENVINO_CPU_SELECT_PDPD_AXIS,
)
from .deviations_fq import FQ_DEVIATIONS
from .runtimes import _OV, OpenVINORuntime
from .shape_inference import broadcast_pdpd, pdpd_merge

__all__ = ["DEVIATIONS", "RUNTIME", "OpenVINORuntime"]


def _broadcast_data(o: Outcome) -> tuple | None:
    """The data shape of a Broadcast query (mode numpy is the unidirectional rule: target, then data)."""
    if o.rule == "unidirectional":
        return tuple(o.shapes[1])
    if o.rule in ("bidirectional", "explicit", "openvino-broadcast-pdpd"):
        return tuple(o.shapes[0])
    return None


_OV_ELEMENTWISE_RULES = ("numpy", "none", "pdpd", "openvino-select", "openvino-prelu")


def _ov_cpu_bpdpd_end_aligned(data, out):
    """What OpenVINO's CPU plugin does with a Broadcast pdpd whose data runs past the target: it ignores
    the axis, aligns data with the end of the output shape and tiles (measured on 2026.4.1)."""
    n = max(len(data), len(out))
    dp, tp = (1,) * (n - len(data)) + tuple(data), (1,) * (n - len(out)) + tuple(out)
    how = f"the CPU plugin ignores the axis and aligns data with the end of the output, as {_fmt(dp)}"
    if any(d > t for d, t in zip(dp, tp)):
        return how + ", and fails (\"Tile with non-positive repeats must produce an empty output shape.\")"
    if all(d == 1 or d == t for d, t in zip(dp, tp)):
        return how + ", and returns data broadcast from there"
    return how + ", which does not fit, and returns garbage"


def _ov_pdpd_trailing(o: Outcome) -> str | None:
    if o.rule == "pdpd" and o.plan is not None and None in o.plan.axis_maps[1]:
        return ("OpenVINO refuses this pair (\"Argument shapes are inconsistent.\"): its shape inference "
                "does not ignore B's trailing 1s, so B must fit from the axis with all of them")
    if o.rule == "openvino-select" and o.plan is not None and o.attrs.get("auto_broadcast") == "pdpd" and any(
        None in m for m in o.plan.axis_maps
    ):
        return ("OpenVINO refuses these shapes: its shape inference does not ignore trailing 1s of "
                "cond/else")
    return None


OPENVINO_PDPD_TRAILING_ONES = Deviation(
    id="openvino-pdpd-trailing-ones",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("pdpd", "openvino-select"),
    ops="element-wise ops and Select with auto_broadcast=pdpd",
    condition="B fits A from the axis only once its trailing 1s are ignored, e.g. A (2,3), B (3,1), axis 1",
    behaviour="shape inference refuses: \"Argument shapes are inconsistent.\"",
    spec="rule 5 of PDPD: trailing dims of size 1 of B are ignored, (3,1) => (3)",
    check=_ov_pdpd_trailing,
)


def _ov_python_pdpd_axis0(o: Outcome) -> str | None:
    if o.rule not in ("pdpd", "openvino-broadcast-pdpd") or o.attrs.get("axis") != -1:
        return None
    big, small = o.shapes if o.rule == "pdpd" else o.shapes[::-1]  # (A, B) or (data, target)
    if len(big) <= len(small):
        return None
    at0 = attempt(o.rule, *o.shapes, axis=0)
    if o.rule == "pdpd":
        how = "ops.add(a, b, auto_broadcast=\"pdpd\") and the other element-wise builders use"
    else:
        how = "ops.broadcast(data, target, broadcast_spec=\"pdpd\") uses"
    return (f"openvino's Python {how} axis 0, not -1, so there these shapes give {verdict(at0)}; "
            "pass the axis explicitly")


OPENVINO_PYTHON_PDPD_AXIS0 = Deviation(
    id="openvino-python-pdpd-axis0",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("pdpd", "openvino-broadcast-pdpd"),
    ops="ops.add(...) and the other Python element-wise builders with auto_broadcast=\"pdpd\"; "
        "ops.broadcast(..., broadcast_spec=\"pdpd\")",
    condition="no axis attribute is given",
    behaviour="the op gets axis 0 (the default AutoBroadcastSpec's), not -1",
    spec="PDPD's default axis is -1, meaning rank(A) - rank(B)",
    check=_ov_python_pdpd_axis0,
    needs_omitted_attr=True,
)


def _ov_ir_pdpd_axis0(o: Outcome) -> str | None:
    if o.rule != "pdpd" or o.attrs.get("axis") != -1 or len(o.shapes[0]) <= len(o.shapes[1]):
        return None
    at0 = attempt(o.rule, *o.shapes, axis=0)
    return (f"openvino's IR reader (Core().read_model) gives a layer with auto_broadcast=\"pdpd\" and no "
            f"auto_broadcast.auto_broadcast_axis axis 0, not -1, so an IR written so gives {verdict(at0)} here; "
            "write the axis")


OPENVINO_IR_PDPD_AXIS0 = Deviation(
    id="openvino-ir-pdpd-axis0",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("pdpd",),
    ops="an IR layer (Add, Subtract, ... of opset1 and later) with auto_broadcast=\"pdpd\", read by Core().read_model",
    condition="the layer's <data> has no auto_broadcast.auto_broadcast_axis (the one spelling the reader reads)",
    behaviour="the layer gets axis 0, as the Python builders do (openvino-python-pdpd-axis0), not -1",
    spec="PDPD's default axis is -1, meaning rank(A) - rank(B)",
    check=_ov_ir_pdpd_axis0,
    needs_omitted_attr=True,
)


def _ov_select_reference(o: Outcome) -> str | None:
    if o.rule != "openvino-select" or o.plan is None or o.attrs.get("auto_broadcast") != "pdpd":
        return None
    if o.attrs.get("axis") == -1 and len(o.shapes[0]) != len(o.shapes[2]):
        return ("openvino's reference evaluate (Model.evaluate) places cond with else's axis "
                f"(rank(then) - rank(else) = {len(o.shapes[1]) - len(o.shapes[2])}) and computes wrong values; "
                "the CPU plugin is right")
    return None


OPENVINO_SELECT_REFERENCE_PDPD = Deviation(
    id="openvino-select-reference-pdpd",
    runtime=OpenVINORuntime.EVALUATE,
    proven_on=_OV,
    rules=("openvino-select",),
    ops="Select with auto_broadcast=pdpd, axis -1, cond and else of different ranks",
    condition="always",
    behaviour="the reference evaluate places cond with else's axis and returns wrong values",
    spec="with axis -1 each input is placed at rank(then) - rank(input)",
    check=_ov_select_reference,
)


def _ov_bpdpd_stretch(o: Outcome) -> str | None:
    e = o.error
    if o.rule != "openvino-broadcast-pdpd" or e is None or e.kind != "dims" or e.dims is None:
        return None
    if e.dims[0] != 1 and e.dims[1] == 1:  # (data dim, target dim 1)
        data, target = e.shapes
        axis = dict(e.attrs).get("axis", -1)
        ov = broadcast_pdpd(data, target, axis)
        if ov is None:
            return None
        note = (f"OpenVINO lets a target dim of 1 take data's dim and returns {_fmt(ov)}, not the target "
                f"{_fmt(target)}")
        if axis != -1 and len(data) > len(target) - axis:  # data runs past the target's end (trailing 1s)
            note += ("; at run time the CPU plugin and Model.evaluate align data with the end of that output "
                     "and fail (\"Tile with non-positive repeats must produce an empty output shape.\")")
        return note
    return None


OPENVINO_BROADCAST_PDPD_STRETCHES_TARGET = Deviation(
    id="openvino-broadcast-pdpd-stretches-target",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("openvino-broadcast-pdpd",),
    ops="Broadcast-1/3 mode pdpd",
    condition="a target dim of 1 faces a data dim other than 1 (> 1, or 0), e.g. data (3,) or (0,), target [2,1]",
    behaviour="the output takes data's dim, so it differs from target_shape: (2,3) or (2,0); where data, placed from "
              "the axis, also runs past the target's end with trailing 1s (data (3,1), target [1,1], axis 1: shape "
              "inference gives (1,3)) both the CPU plugin and Model.evaluate fail at run time (\"Tile with "
              "non-positive repeats must produce an empty output shape.\")",
    spec="PDPD broadcasts data into the target only; the output is target_shape",
    check=_ov_bpdpd_stretch,
)


def _ov_bpdpd_short(o: Outcome) -> str | None:
    if o.rule != "openvino-broadcast-pdpd" or o.plan is None:
        return None
    data, target = o.shapes
    start = o.plan.attr("start_axis")
    if len(data) < len(target) - start:
        return ("OpenVINO refuses this (\"Accessing out-of-range dimension\"): its shape inference needs data "
                f"to reach the target's last axis, so data must be written "
                f"{_fmt(data + (1,) * (len(target) - start - len(data)))}")
    return None


OPENVINO_BROADCAST_PDPD_SHORT_DATA = Deviation(
    id="openvino-broadcast-pdpd-short-data",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("openvino-broadcast-pdpd",),
    ops="Broadcast-1/3 mode pdpd",
    condition="data ends before the target does (rank(data) < rank(target) - axis)",
    behaviour="shape inference refuses: \"Accessing out-of-range dimension\"",
    spec="data is a contiguous run of the target from the axis; axes after it are 1s",
    check=_ov_bpdpd_short,
)


def _ov_explicit_dups(o: Outcome) -> str | None:
    if o.rule != "explicit" or o.ok:
        return None
    data, target = o.shapes
    axes = tuple(o.attrs.get("axes_mapping") or ())
    # OpenVINO's other checks (reference/openvino.md §3): one entry per data axis, each an axis of the
    # target, sorted (std::is_sorted, so repeats pass), each data dim 1 or the target dim it maps to.
    if len(axes) != len(data) or not all(0 <= a < len(target) for a in axes):
        return None
    if list(axes) != sorted(axes) or len(set(axes)) == len(axes):
        return None
    if any(d != 1 and d != target[a] for d, a in zip(data, axes)):
        return None
    return ("OpenVINO accepts repeated axes_mapping entries (they pass its is_sorted check), returns the target "
            f"{_fmt(target)} and computes inconsistent values: the CPU plugin and the reference disagree")


OPENVINO_EXPLICIT_DUPLICATE_AXES = Deviation(
    id="openvino-explicit-duplicate-axes",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("explicit",),
    ops="Broadcast-3 mode explicit",
    condition="axes_mapping repeats an axis, e.g. [1, 1], and is otherwise what OpenVINO accepts: one entry per data "
              "axis, each an axis of the target, sorted, each data dim 1 or the target dim it maps to",
    behaviour="accepted (it passes is_sorted), output target_shape; the values are nonsense and CPU and reference "
              "disagree",
    spec="axes_mapping maps each data axis to its own output axis, sorted",
    check=_ov_explicit_dups,
)


def _ov_bpdpd_long(o: Outcome) -> str | None:
    if o.rule != "openvino-broadcast-pdpd":
        return None
    data, target = o.shapes
    axis = o.attrs.get("axis", -1)
    if axis < 0 or len(data) <= len(target) - axis:  # axis -1 makes data end exactly at the target's end
        return None
    reach = max(0, len(target) - axis)  # data's dims up to the target's last axis
    extra = data[reach:]
    ov = broadcast_pdpd(data[:reach], target, axis)
    if ov is None:  # OpenVINO refuses too (a dim mismatch before the target's end)
        return None
    cpu = _ov_cpu_bpdpd_end_aligned(data, ov)
    if o.ok:  # data's dims past the target are trailing 1s, which the spec ignores too
        if all(d == 1 for d in data):
            return None  # all 1s: every placement gives the same values
        return (f"OpenVINO's shape inference agrees ({_fmt(ov)}: it ignores data's dims past the target's last "
                f"axis), but {cpu}, not from axis {axis}; reshape data to {_fmt(data[:reach])} first")
    if all(d == 1 for d in extra) and len(data) <= len(target) and axis <= len(target):
        return None  # the spec ignores those 1s as well: something else refuses this
    ignored = []
    if axis > len(target):
        ignored.append(f"that axis {axis} is past the target's rank {len(target)}")
    if extra:
        ignored.append(f"data's dims past the target's last axis, {_fmt(extra)},")
    return (f"OpenVINO accepts this: its shape inference ignores {' and '.join(ignored)} and returns {_fmt(ov)}; "
            f"{cpu}")


OPENVINO_BROADCAST_PDPD_LONG_DATA = Deviation(
    id="openvino-broadcast-pdpd-long-data",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("openvino-broadcast-pdpd",),
    ops="Broadcast-1/3 mode pdpd",
    condition="data placed from the axis runs past the target's last axis (rank(data) > rank(target) - axis, an axis "
              "past the target's rank included), e.g. data (3,5), target [2,3], axis 1",
    behaviour="shape inference ignores data's dims past the target's last axis (and an axis past the target's rank) "
              "and returns what the rest gives "
              "(target_shape, but for the stretches-target deviation); the CPU plugin ignores the axis and aligns data "
              "with the end of the output: it fails (\"Tile with non-positive repeats must produce an empty output "
              "shape.\") where a data dim is then larger than the output's, else returns data broadcast from there, or "
              "garbage where a dim neither matches nor is 1 -- also where the extra dims are 1s the spec ignores, "
              "e.g. data (3,1), target [3,3], axis 1 gives data along axis 0",
    spec="data is a contiguous run of the target from the axis, rank(data) <= rank(target); only its trailing 1s "
         "are ignored",
    check=_ov_bpdpd_long,
)


def _ov_pdpd_zero(o: Outcome) -> str | None:
    select = o.rule == "openvino-select"
    if o.rule not in ("pdpd", "openvino-select") or (select and o.attrs.get("auto_broadcast") != "pdpd"):
        return None
    names = ("cond", "then", "else") if select else ("A", "B")
    main = 1 if select else 0  # the input whose shape is the output
    big, big_name = tuple(o.shapes[main]), names[main]
    axis = o.attrs.get("axis", -1)

    def facing(d_small, d_big):
        """The inputs with a dim ``d_small`` placed on a dim ``d_big`` of the main input."""
        found = []
        for i, shape in enumerate(o.shapes):
            if i == main or len(shape) > len(big):
                continue
            start = len(big) - len(shape) if axis == -1 else axis
            if any(start + k < len(big) and d == d_small and big[start + k] == d_big for k, d in enumerate(shape)):
                found.append(names[i])
        return " and ".join(found)

    if o.ok:
        who = facing(1, 0)
        if who:
            return (f"OpenVINO refuses these shapes: a dim 1 of {who} faces a dim 0 of {big_name}, and its pdpd "
                    f"shape inference refuses any static dim larger than the {big_name} dim it faces (1 > 0)")
        return None
    if select:
        cond, then, else_ = o.shapes
        out = pdpd_merge(then, else_, axis)  # else first, then cond into what that gave
        out = None if out is None else pdpd_merge(out, cond, axis)
    else:
        out = pdpd_merge(o.shapes[0], o.shapes[1], axis)
    if out is None or out == big:
        return None
    return (f"OpenVINO accepts these shapes: its pdpd shape inference lets a dim 0 of {facing(0, 1)} take "
            f"a dim 1 of {big_name} and returns {_fmt(out)}, not {big_name}'s shape {_fmt(big)}")


OPENVINO_PDPD_ZERO_SIZE = Deviation(
    id="openvino-pdpd-zero-size",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("pdpd", "openvino-select"),
    ops="element-wise ops and Select with auto_broadcast=pdpd",
    condition="a B (cond, else) dim of 1 faces an A (then) dim of 0, e.g. A (0,), B (1,); or a B dim of 0 faces an "
              "A dim of 1, e.g. A (2,1), B (0,)",
    behaviour="shape inference refuses the first (its static check src > dst reads 1 > 0) and accepts the second, "
              "the 0 taking A's 1: output (2,0), not A's shape",
    spec="B's dims equal A's or are 1 (only B stretches: \"only B to A broadcast is supported for PDPD\"); "
         "the output is A's shape",
    check=_ov_pdpd_zero,
)


def _ov_explicit_scalar(o: Outcome) -> str | None:
    if o.rule != "explicit" or o.ok:
        return None
    data, target = o.shapes
    axes = tuple(o.attrs.get("axes_mapping") or ())
    if data == () and len(axes) == 1 and 0 <= axes[0] < len(target) and target[axes[0]] == 1:
        return (f"OpenVINO's shape inference accepts this: it counts scalar data as rank 1 (one dim of 1), so "
                f"axes_mapping {list(axes)} passes; the CPU plugin returns the target {_fmt(target)} filled with "
                "the scalar, Model.evaluate refuses at run time; give scalar data the axes_mapping []")
    return None


OPENVINO_EXPLICIT_SCALAR_AXES = Deviation(
    id="openvino-explicit-scalar-axes",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("explicit",),
    ops="Broadcast-3 mode explicit",
    condition="scalar data with a one-entry axes_mapping [a] where target[a] is 1, e.g. data (), target [1,3], "
              "axes [0]",
    behaviour="shape inference accepts it (a scalar counts as rank 1): target_shape; the CPU plugin returns "
              "target_shape filled with the scalar; Model.evaluate refuses at run time (\"Broadcast axes_mapping "
              "shape 1 doesn't match rank of input tensor 0\")",
    spec="axes_mapping has one entry per data axis, so [] for scalar data",
    check=_ov_explicit_scalar,
)


def _ov_prelu_unchecked(o: Outcome) -> str | None:
    if o.rule != "openvino-prelu" or o.ok:
        return None
    data, slope = o.shapes
    head = (f"OpenVINO does not refuse this: PRelu's shape inference never checks the slope and returns data's "
            f"shape {_fmt(data)}")
    if isinstance(attempt("numpy", data, slope), Plan):
        return (head + f"; the CPU plugin compiles and runs it too and returns {_fmt(data)}, its values computed "
                "with slope elements that no broadcasting rule pairs with them (silent garbage)")
    return (head + "; the CPU plugin fails to compile some such slopes (\"Attempt to broadcast non-1 dimension\", "
            "\"Loop ports have incompatible dimensions\") and runs others, returning data's shape with values "
            "from the wrong slope elements")


OPENVINO_PRELU_UNCHECKED = Deviation(
    id="openvino-prelu-unchecked",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("openvino-prelu",),
    ops="PRelu",
    condition="the slope is neither per channel (1-D of length data[1]) nor numpy-broadcastable into data, "
              "e.g. data (3,1), slope (1,4)",
    behaviour="shape inference never checks the slope and returns data's shape; the CPU plugin compiles and runs it "
              "wherever slope and data are numpy-broadcastable both ways, returning data's shape with values from the "
              "wrong slope elements (for data (3,1), slope (1,4): the slope's last element throughout); other slopes "
              "it fails to compile (\"Attempt to broadcast non-1 dimension\") or runs the same way",
    spec="otherwise the slope is broadcast with numpy rules into data (the output is data's shape); any other "
         "slope makes the op invalid",
    check=_ov_prelu_unchecked,
)


def _ov_broadcast_empty_data(o: Outcome) -> str | None:
    data = _broadcast_data(o)
    if data is None or 0 not in data:
        return None
    return (f"as OpenVINO's Broadcast of data {_fmt(data)}: a static-shape model on the CPU plugin and "
            "Model.evaluate kill the process (SIGFPE) where they compute an output (empty)")


OPENVINO_BROADCAST_EMPTY_DATA = Deviation(
    id="openvino-broadcast-empty-data",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("unidirectional", "bidirectional", "explicit",
          "openvino-broadcast-pdpd"),
    ops="Broadcast-3, every mode",
    condition="data has a dim of 0, e.g. data (3,0), target [3,0]; a model of static shapes on the CPU plugin, or "
              "Model.evaluate",
    behaviour="the process dies (SIGFPE) where OpenVINO accepts the shapes; a CPU model of dynamic shapes returns the "
              "empty output",
    spec="the output is target_shape (or the broadcast shape), empty",
    check=_ov_broadcast_empty_data,
    kills_process=True,
)


def _ov_evaluate_empty_output(o: Outcome) -> str | None:
    if o.rule not in _OV_ELEMENTWISE_RULES or not any(0 in s for s in o.shapes):
        return None  # an input with a dim of 0: any output OpenVINO computes is empty (in pdpd-zero-size's too)
    return ("OpenVINO's Model.evaluate computes elements of the empty output anyway, writing memory it does not "
            "own (int64 Add or Select of (2,0,3) and (3,), or PRelu of (0,3,3) and (3,), repeated, kill the process)")


OPENVINO_EVALUATE_EMPTY_OUTPUT = Deviation(
    id="openvino-evaluate-empty-output",
    runtime=OpenVINORuntime.EVALUATE,
    proven_on=_OV,
    rules=_OV_ELEMENTWISE_RULES,
    ops="element-wise ops, Select and PRelu",
    condition="an input has a dim of 0, so that the output is empty, e.g. int64 Add of A (2,0,3), B (3,)",
    behaviour="evaluate computes elements anyway and writes memory it does not own: int64 Add, Multiply or Divide of "
              "A (2,0,3), B (3,), Select of cond (2,0,3), then and else int64 (3,), or PRelu float32 of data (0,3,3), "
              "slope (3,), run a few times, kill the process (\"munmap_chunk(): invalid pointer\", SIGABRT, or "
              "SIGSEGV) or make an allocation fail (std::bad_alloc)",
    spec="an empty output: nothing is computed",
    check=_ov_evaluate_empty_output,
    kills_process=True,
)


def _ov_evaluate_pdpd_greater(o: Outcome) -> str | None:
    if o.rule != "pdpd" or o.plan is None or o.plan.aligned_shape(1) == o.plan.shape:
        return None
    return (f"OpenVINO's Model.evaluate computes {o.op} with pdpd as if B were not broadcast, reading past B's "
            "end: wrong values (the CPU plugin is right)")


OPENVINO_EVALUATE_PDPD_GREATER = Deviation(
    id="openvino-evaluate-pdpd-greater",
    runtime=OpenVINORuntime.EVALUATE,
    proven_on=_OV,
    rules=("pdpd",),
    ops="Greater, GreaterEqual with auto_broadcast=pdpd",
    condition="B is broadcast, e.g. A (2,3), B (3,)",
    behaviour="wrong values: B is read as if it had A's shape, past its end ([[1,5,3],[4,2,6]] > [3,3,3] gets the "
              "first row right, [F,T,F], and compares the second with whatever memory follows B); the CPU plugin is "
              "right",
    spec="A > B with B broadcast into A: [[F,T,F],[T,F,T]]",
    check=_ov_evaluate_pdpd_greater,
    only_ops=("Greater", "GreaterEqual"),
)


OPENVINO_PRELU_ELEMENT_TYPES = Deviation(
    id="openvino-prelu-element-types",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("openvino-prelu",),
    ops="PRelu",
    condition="data and slope of different element types, or of a non-floating type, e.g. float32 data with an "
              "int32 slope, or bool",
    behaviour="shape inference checks no element type: it accepts them all",
    spec="data and slope have one floating-point type T",
    only_ops=("PRelu",),
)


DEVIATIONS: tuple[Deviation, ...] = (
    OPENVINO_PDPD_TRAILING_ONES,
    OPENVINO_PYTHON_PDPD_AXIS0,
    OPENVINO_IR_PDPD_AXIS0,
    OPENVINO_CPU_PDPD_OPS,
    OPENVINO_SELECT_REFERENCE_PDPD,
    OPENVINO_BROADCAST_PDPD_STRETCHES_TARGET,
    OPENVINO_BROADCAST_PDPD_SHORT_DATA,
    OPENVINO_EXPLICIT_DUPLICATE_AXES,
    OPENVINO_BROADCAST_PDPD_LONG_DATA,
    OPENVINO_PDPD_ZERO_SIZE,
    OPENVINO_EXPLICIT_SCALAR_AXES,
    OPENVINO_PRELU_UNCHECKED,
    OPENVINO_CPU_BIDIRECTIONAL_ZERO,
    OPENVINO_CPU_SCALAR_TO_SCALAR,
    OPENVINO_CPU_PDPD_REFERENCE_FALLBACK,
    OPENVINO_CPU_PDPD_SQUARED_DIFFERENCE_INT,
    OPENVINO_CPU_SELECT_PDPD_AXIS,
    OPENVINO_BROADCAST_EMPTY_DATA,
    OPENVINO_EVALUATE_EMPTY_OUTPUT,
    OPENVINO_EVALUATE_PDPD_GREATER,
    OPENVINO_CPU_INTEGER_VALUES,
    OPENVINO_CPU_MINMAX_NAN,
    OPENVINO_PRELU_ELEMENT_TYPES,
    *FQ_DEVIATIONS,
)

#: The enum of this framework's runtimes: a record is this framework's when its runtime is a member
#: (``bcast compare --framework`` keeps those).
RUNTIME = OpenVINORuntime
