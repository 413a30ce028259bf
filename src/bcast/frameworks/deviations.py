"""The deviation registry: where a runtime does not do what its own spec says.

bcast's rules implement the specs.  Each record here says which runtime (and
the versions it was proven on), which rule and ops, under which condition,
and what the runtime does instead.  Each has a proof in :mod:`bcast.conformance.drift`
that runs that runtime and says whether the deviation is still present, gone
(the runtime now follows its spec) or changed; ``bcast deviations --check``
runs them all on the installed versions, and the test suite on the locked ones.

:func:`applicable` returns the records that bear on one query (shapes, rule,
attributes), each with a sentence about those very shapes; ``explain`` and
``compare`` print them.

Some records concern one op only (an op's own kernel, not the broadcasting
rule it shares with other ops): their ``only_ops`` names those ops as the op
tables spell them (``"Mean"``, ``"DIV"``), and they bear on a query only when
the caller names one of them (``op=``), with the op's attributes that the rule
does not take (``op_attrs=``, e.g. Gemm's ``beta``).  Without ``op`` such
records stay silent, so ``explain`` and ``compare`` (which know no op) do not
show them; ``bcast deviations`` lists every record.

A record whose ``check`` is None is about values, not shapes (a kernel that
computes something else on some inputs): no shape predicts it, so it never
bears on a query; it is listed and proven like the others.

>>> [f.deviation.id for f in applicable((2, 1), (4, 2, 1), op="Mean")]
['reference-mean-in-place']
>>> applicable((2, 1), (4, 2, 1))  # the op is not known: numpy broadcasting itself deviates nowhere
[]
"""

from __future__ import annotations

import functools
import importlib.metadata
from dataclasses import dataclass, field
from typing import Callable

from ..core._format import format_shape as _fmt
from ..core.errors import BroadcastError
from ..core.plan import Plan

__all__ = ["Deviation", "Finding", "DEVIATIONS", "applicable", "findings_for", "installed_version"]


@dataclass(frozen=True)
class Outcome:
    """What a rule made of one query: a plan or an error, with the query (and
    the op it was for, with that op's other attributes, when the caller knows)."""

    rule: str
    shapes: tuple
    attrs: dict
    plan: Plan | None = None
    error: BroadcastError | None = None
    op: str | None = None
    op_attrs: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.plan is not None

    @classmethod
    def of(cls, result: Plan | BroadcastError, op: str | None = None, op_attrs: dict | None = None) -> "Outcome":
        extra = {"op": op, "op_attrs": dict(op_attrs or {})}
        if isinstance(result, Plan):
            return cls(result.rule, result.inputs, dict(result.attrs), plan=result, **extra)
        return cls(result.rule, result.shapes, dict(result.attrs), error=result, **extra)


@dataclass(frozen=True)
class Deviation:
    """One runtime's departure from its spec.

    ``proven_on``: the versions of the runtime's package (``package``) its
    proof found it on, oldest first; ``version`` is the newest of them.
    ``fixed_in``: the version where the proof found it gone, if any (the record
    stays: it still holds for the versions before).  The proof is the function
    registered under ``id`` in :mod:`bcast.conformance.drift` (``proof`` names it);
    ``bcast deviations --check`` runs it on the installed version.

    ``check(outcome)`` returns a sentence about one query where the record
    bears on it, else None; a ``check`` of None marks a deviation of values
    that no shape predicts.  ``only_ops``: the ops (as the op tables spell
    them) the record is about; empty for a record about a rule, whatever the op.
    """

    id: str
    runtime: str
    proven_on: tuple
    rules: tuple
    ops: str
    condition: str
    behaviour: str
    spec: str
    check: Callable[[Outcome], str | None] | None = field(default=None, repr=False, compare=False)
    only_ops: tuple = ()
    fixed_in: str | None = None

    @property
    def version(self) -> str:
        """The newest version the record was proven on."""
        return self.proven_on[-1]

    @property
    def package(self) -> str:
        """The distribution whose version the record is about: ``onnx`` for ``onnx.reference...``."""
        return self.runtime.split()[0].split(".")[0]

    @property
    def installed(self) -> str | None:
        """The version of ``package`` installed here, or None."""
        return installed_version(self.package)

    @property
    def proof(self) -> str:
        """The dotted name of the function that proves the record."""
        from ..conformance.drift import proof_name

        return proof_name(self.id)

    @property
    def test(self) -> str:
        """The test that runs the proof on the locked versions."""
        return f"tests/test_deviations.py::test_proof_holds[{self.id}]"

    def drift(self) -> str:
        """Empty where the installed version is one the record was proven on (or none is installed),
        else e.g. ``proven on 1.31.1, 1.32.0; installed 1.33.0``."""
        here = self.installed
        if here is None or here in self.proven_on:
            return ""
        fixed = f"; fixed in {self.fixed_in}" if self.fixed_in else ""
        return f"proven on {', '.join(self.proven_on)}{fixed}; installed {here}"

    def label(self) -> str:
        """The runtime and its version, as the notes print them: "onnxruntime 1.32.0", or with the
        installed version where the record was not proven on it ("onnxruntime (proven on ...; installed ...)")."""
        drift = self.drift()
        return f"{self.runtime} ({drift})" if drift else f"{self.runtime} {self.version}"

    def concerns(self, op: str | None) -> bool:
        """Whether a query about ``op`` (None: an op not known) may meet this record."""
        return not self.only_ops or op in self.only_ops

    def to_dict(self) -> dict:
        return {
            "id": self.id, "runtime": self.runtime, "version": self.version, "proven_on": list(self.proven_on),
            "fixed_in": self.fixed_in, "package": self.package, "installed": self.installed,
            "rules": list(self.rules), "ops": self.ops, "only_ops": list(self.only_ops),
            "condition": self.condition, "behaviour": self.behaviour, "spec": self.spec, "test": self.test,
            "proof": self.proof,
        }


@functools.lru_cache(maxsize=None)
def installed_version(package: str) -> str | None:
    """The installed version of distribution ``package`` (read from its metadata: nothing is imported)."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Finding:
    """One deviation that bears on one query, and what it means there."""

    deviation: Deviation
    note: str

    def to_dict(self) -> dict:
        d = self.deviation
        return {"id": d.id, "runtime": d.runtime, "version": d.version, "note": self.note,
                "proven_on": list(d.proven_on), "fixed_in": d.fixed_in, "installed": d.installed}


def _try(rule: str, *shapes, **attrs):
    from ..rules import infer

    try:
        return infer(*shapes, rule=rule, **attrs)
    except BroadcastError as e:
        return e


def _verdict(result) -> str:
    return _fmt(result.shape) if isinstance(result, Plan) else "an error"


# -- the checks: each returns a sentence about the query, or None ------------


def _ov_pdpd_trailing(o: Outcome):
    if o.rule == "pdpd" and o.ok and None in o.plan.axis_maps[1]:
        return ("OpenVINO refuses this pair (\"Argument shapes are inconsistent.\"): its shape inference "
                "does not ignore B's trailing 1s, so B must fit from the axis with all of them")
    if o.rule == "openvino-select" and o.ok and o.attrs.get("auto_broadcast") == "pdpd" and any(
        None in m for m in o.plan.axis_maps
    ):
        return ("OpenVINO refuses these shapes: its shape inference does not ignore trailing 1s of "
                "cond/else")
    return None


def _ncnn_garbage(o: Outcome):
    e = o.error
    if o.rule != "ncnn" or e is None or e.kind != "dims":
        return None
    from ..rules.ncnn import NCNN, garbage_shape

    shape = garbage_shape(e.shapes, e.alignment, e.out_rank)
    shown = NCNN.shape(shape) + " in ncnn order" if e.notation == NCNN.name else _fmt(shape)
    return (f"ncnn's BinaryOp returns 0 (success) and an output of shape {shown}: rows past the end of "
            "the smaller input are clamped, a mismatch on the innermost axis reads out of bounds")


def _ncnn_empty(o: Outcome):
    e = o.error
    if o.rule == "ncnn" and e is not None and e.kind == "unsupported" and any(0 in s for s in e.shapes):
        if any(0 in s and len(s) >= 2 for s in e.shapes):
            return "ncnn's BinaryOp kills the process (SIGFPE) on an empty blob instead of reporting an error"
        return ("ncnn's BinaryOp returns 0 (success) and a non-empty output for an empty 1-D blob "
                "(e.g. (0,) with (1,) gives (1,))")
    return None


def _prelu_numpy(o: Outcome):
    if o.rule != "unidirectional" or o.ok:
        return None
    both = _try("numpy", *o.shapes)
    if isinstance(both, Plan):
        return f"as PRelu(X=A, slope=B) it runs anyway and returns shape {_fmt(both.shape)}, not A's"
    return None


def _reference_prelu_fallback(o: Outcome):
    if o.rule != "unidirectional" or o.ok:
        return None
    x, slope = o.shapes
    if isinstance(_try("numpy", x, slope), Plan):
        return None
    if len(slope) == 1 and list(x).count(slope[0]) == 1:
        ax = list(x).index(slope[0])
        return (f"as PRelu(X=A, slope=B) the ReferenceEvaluator falls back to applying the 1-D slope along "
                f"A's axis {ax} (the only axis of length {slope[0]}) and returns {_fmt(x)}")
    return None


def _ort_no_legacy(o: Outcome):
    if o.rule == "onnx-legacy":
        return ("onnxruntime cannot run opset 1-6 Add/Sub/Mul/Div/...: NOT_IMPLEMENTED \"Could not find an "
                "implementation for Add(6)\"; upgrade the model to opset >= 7 first")
    return None


def _converter_axis(o: Outcome):
    if o.rule != "onnx-legacy" or not o.ok or not o.attrs.get("broadcast"):
        return None
    a, b = o.shapes
    axis = o.attrs.get("axis")
    gap = len(a) - len(b)
    if axis is None or axis == gap or gap == 0 or all(d == 1 for d in b):
        return None  # no Unsqueeze is inserted, or B fits anywhere
    if axis == 0:
        return ("onnx's 6->7 version converter unsqueezes B correctly but leaves the Unsqueeze output without "
                "an element type: onnxruntime refuses to load the converted model (\"Invalid tensor data type 0\")")
    literally = " (it reads axis -1 literally, not as suffix matching)" if axis == -1 else ""
    return (f"onnx's 6->7 version converter unsqueezes {gap} trailing 1s into B instead of "
            f"{gap - (gap if axis == -1 else axis)}{literally}, then fails (assert_numpy_multibroadcastable)")


def _ov_python_pdpd_axis0(o: Outcome):
    if o.rule not in ("pdpd", "openvino-broadcast-pdpd") or o.attrs.get("axis") != -1:
        return None
    big, small = o.shapes if o.rule == "pdpd" else o.shapes[::-1]  # (A, B) or (data, target)
    if len(big) <= len(small):
        return None
    at0 = _try(o.rule, *o.shapes, axis=0)
    if o.rule == "pdpd":
        how = "ops.add(a, b, auto_broadcast=\"pdpd\") and the other element-wise builders use"
    else:
        how = "ops.broadcast(data, target, broadcast_spec=\"pdpd\") uses"
    return (f"openvino's Python {how} axis 0, not -1, so there these shapes give {_verdict(at0)}; "
            "pass the axis explicitly")


def _numpy_instead(o: Outcome):
    """What numpy broadcasting makes of a legacy query, where that differs from the legacy rule; else None."""
    both = _try("numpy", *o.shapes)
    if isinstance(both, Plan) and o.ok and both.shape == o.plan.shape and both.axis_maps == o.plan.axis_maps:
        return None
    return _verdict(both)


def _reference_legacy_numpy(o: Outcome):
    if o.rule != "onnx-legacy" or o.op == "Pow":  # Pow-1 does worse: reference-pow1-legacy-attrs
        return None
    instead = _numpy_instead(o)
    if instead is None:
        return None
    return f"onnx's ReferenceEvaluator ignores broadcast/axis and applies numpy broadcasting: here it gives {instead}"


def _reference_pow1(o: Outcome):
    if o.rule != "onnx-legacy":
        return None
    refuses = ("onnx's ReferenceEvaluator does not run a Pow-1 node that has a broadcast or axis attribute "
               "(\"Pow._run() got an unexpected keyword argument 'broadcast'\", or 'axis')")
    if o.attrs.get("broadcast") or o.attrs.get("axis") is not None:
        return refuses
    instead = _numpy_instead(o)  # broadcast=0: given (refused) or left out (numpy broadcasting)
    return refuses + ", not even broadcast=0; without them it applies numpy broadcasting" + (
        f" and here gives {instead}" if instead else "")


def _reference_variadic_numpy(o: Outcome):
    if o.rule != "none" or o.ok:
        return None
    both = _try("numpy", *o.shapes)
    if not isinstance(both, Plan):
        return None
    if o.op == "Mean" and both.shape != tuple(o.shapes[0]):
        return None  # its Mean adds in place into data_0, which cannot hold the output: it refuses too
    return (f"onnx's ReferenceEvaluator does not require equal shapes for {o.op} before opset 8: it applies numpy "
            f"broadcasting and returns {_fmt(both.shape)} (onnxruntime refuses, as the spec says)")


def _reference_gemm_beta0(o: Outcome):
    e = o.error
    if o.rule != "onnx-gemm" or e is None or len(e.shapes) != 3 or 2 not in (e.operands or ()):
        return None
    if o.op_attrs.get("beta", 1.0) != 0:
        return None
    ab = _try("onnx-gemm", *e.shapes[:2], transA=o.attrs.get("transA", 0), transB=o.attrs.get("transB", 0))
    if not isinstance(ab, Plan):
        return None
    return (f"with beta=0 onnx's ReferenceEvaluator never reads C: it returns {_fmt(ab.shape)} "
            "(onnxruntime refuses: \"Gemm: Invalid bias shape for broadcast\")")


def _reference_mean_in_place(o: Outcome):
    if o.rule != "numpy" or not o.ok or o.plan.shape == tuple(o.shapes[0]):
        return None
    return (f"onnx's ReferenceEvaluator refuses: its Mean adds in place into data_0 {_fmt(o.shapes[0])}, which cannot "
            f"hold the output {_fmt(o.plan.shape)} (\"non-broadcastable output operand\")")


#: The element-wise ops that OpenVINO's CPU plugin converts to numpy broadcasting when they have an explicit
#: pdpd axis (measured on 2026.4.1); Add, Multiply, Power, Maximum, Minimum, SquaredDifference, FloorMod, Mod
#: and integer Divide keep the axis.
_OV_CPU_AXIS_OPS = ("Subtract", "Divide", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                    "LogicalAnd", "LogicalOr", "LogicalXor", "BitwiseAnd", "BitwiseOr", "BitwiseXor")


def _element_type(o: Outcome):
    """The element type the caller named in ``op_attrs`` (``element_type``), or None."""
    return o.op_attrs.get("element_type")


def _ov_cpu_pdpd_ops(o: Outcome):
    if o.rule != "pdpd" or not o.ok or o.attrs.get("axis", -1) == -1:
        return None
    a, b = o.shapes
    if len(b) >= len(a):
        return None
    integer = str(_element_type(o) or "float").startswith(("int", "uint"))
    if o.op is not None and (o.op not in _OV_CPU_AXIS_OPS or (o.op == "Divide" and integer)):
        return None
    ops = o.op or "Subtract, Divide, the comparisons, the logical and the bitwise ops"
    both = _try("numpy", a, b)
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


#: (op, element type) pairs that the CPU plugin hands to the reference implementation with pdpd when rank(B) <
#: rank(A), and that it has no kernel for (measured on 2026.4.1: Model.evaluate fails on them too).
_OV_CPU_NO_REFERENCE = {
    "Multiply": ("int8", "uint8"), "Divide": ("int8", "uint8"), "Power": ("int8", "uint8"),
    "Maximum": ("int8", "uint8"), "Minimum": ("int8",), "SquaredDifference": ("int8", "uint8"),
    "Mod": ("float16", "float32"),
}


def _ov_cpu_reference_fallback(o: Outcome):
    if o.rule != "pdpd" or not o.ok or len(o.shapes[1]) >= len(o.shapes[0]):
        return None
    types = _OV_CPU_NO_REFERENCE.get(o.op, ())
    dtype = _element_type(o)
    if dtype is not None and dtype not in types:
        return None
    which = dtype or " or ".join(types)
    return (f"the CPU plugin hands {o.op} {which} with pdpd and rank(B) < rank(A) to OpenVINO's reference "
            f"implementation, which has no {which} kernel: compile_model fails (\"Cannot fallback on ngraph "
            "reference implementation\")")


def _ov_cpu_sqdiff_int(o: Outcome):
    if o.rule != "pdpd" or not o.ok or _element_type(o) not in ("int32", "int64"):
        return None
    return (f"the CPU plugin never compiles SquaredDifference {_element_type(o)} with pdpd (\"Cannot fallback on "
            "ngraph reference implementation\"), equal shapes included")


def _ov_cpu_select_axis(o: Outcome):
    if o.rule != "openvino-select" or not o.ok or o.attrs.get("auto_broadcast") != "pdpd":
        return None
    if o.attrs.get("axis", -1) == -1 or 0 in o.plan.shape:
        return None
    if _element_type(o) in ("int32", "int64"):
        return None
    return ("the CPU plugin fails to compile Select with an explicit pdpd axis (\"Unsupported auto broadcast "
            "specification\", \"'Else' tensor shape is not broadcastable.\") for every element type but int32 "
            "and int64: leave the axis at -1 where it means the same")


def _broadcast_data(o: Outcome):
    """The data shape of a Broadcast query (mode numpy is the unidirectional rule: target, then data)."""
    if o.rule == "unidirectional":
        return tuple(o.shapes[1])
    if o.rule in ("bidirectional", "explicit", "openvino-broadcast-pdpd"):
        return tuple(o.shapes[0])
    return None


def _ov_broadcast_empty_data(o: Outcome):
    data = _broadcast_data(o)
    if data is None or 0 not in data:
        return None
    return (f"as OpenVINO's Broadcast of data {_fmt(data)}: a static-shape model on the CPU plugin and "
            "Model.evaluate kill the process (SIGFPE) where they compute an output (empty)")


_OV_ELEMENTWISE_RULES = ("numpy", "none", "pdpd", "openvino-select", "openvino-prelu")


def _ov_evaluate_empty_output(o: Outcome):
    if o.rule not in _OV_ELEMENTWISE_RULES or not any(0 in s for s in o.shapes):
        return None  # an input with a dim of 0: any output OpenVINO computes is empty (in pdpd-zero-size's too)
    return ("OpenVINO's Model.evaluate computes elements of the empty output anyway, writing memory it does not "
            "own (int64 Add or Select of (2,0,3) and (3,), or PRelu of (0,3,3) and (3,), repeated, kill the process)")


def _ov_evaluate_pdpd_greater(o: Outcome):
    if o.rule != "pdpd" or not o.ok or o.plan.aligned_shape(1) == o.plan.shape:
        return None
    return (f"OpenVINO's Model.evaluate computes {o.op} with pdpd as if B were not broadcast, reading past B's "
            "end: wrong values (the CPU plugin is right)")


def _ov_bpdpd_stretch(o: Outcome):
    e = o.error
    if o.rule != "openvino-broadcast-pdpd" or e is None or e.kind != "dims":
        return None
    if e.dims[0] != 1 and e.dims[1] == 1:  # (data dim, target dim 1)
        ov = _ov_broadcast_pdpd_shape(*e.shapes, dict(e.attrs).get("axis", -1))
        if ov is None:
            return None
        data, target = e.shapes
        axis = dict(e.attrs).get("axis", -1)
        note = (f"OpenVINO lets a target dim of 1 take data's dim and returns {_fmt(ov)}, not the target "
                f"{_fmt(target)}")
        if axis != -1 and len(data) > len(target) - axis:  # data runs past the target's end (trailing 1s)
            note += ("; at run time the CPU plugin and Model.evaluate align data with the end of that output "
                     "and fail (\"Tile with non-positive repeats must produce an empty output shape.\")")
        return note
    return None


def _ov_pdpd_merge(big, small, axis):
    """OpenVINO's element-wise pdpd shape inference, ``PartialShape::broadcast_merge_into``
    (reference/openvino.md §1), for static dims: ``small`` merged into ``big``, or None where it refuses."""
    if len(small) > len(big) or axis < -1:
        return None
    start = len(big) - len(small) if axis == -1 else axis
    if start + len(small) > len(big):
        return None
    out = list(big)
    for i, d in enumerate(small):
        t = out[start + i]
        if d > t:  # its static "src > dst" check
            return None
        if d == t or d == 1:
            continue
        if t != 1:
            return None
        out[start + i] = d  # Dimension::broadcast_merge lets a 0 (d < t, so d == 0) take a dim of 1
    return tuple(out)


def _ov_pdpd_zero(o: Outcome):
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
        out = _ov_pdpd_merge(then, else_, axis)  # else first, then cond into what that gave
        out = None if out is None else _ov_pdpd_merge(out, cond, axis)
    else:
        out = _ov_pdpd_merge(o.shapes[0], o.shapes[1], axis)
    if out is None or out == big:
        return None
    return (f"OpenVINO accepts these shapes: its pdpd shape inference lets a dim 0 of {facing(0, 1)} take "
            f"a dim 1 of {big_name} and returns {_fmt(out)}, not {big_name}'s shape {_fmt(big)}")


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


def _ov_bpdpd_long(o: Outcome):
    if o.rule != "openvino-broadcast-pdpd":
        return None
    data, target = o.shapes
    axis = o.attrs.get("axis", -1)
    if axis < 0 or len(data) <= len(target) - axis:  # axis -1 makes data end exactly at the target's end
        return None
    reach = max(0, len(target) - axis)  # data's dims up to the target's last axis
    extra = data[reach:]
    ov = _ov_broadcast_pdpd_shape(data[:reach], target, axis)
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


def _ov_prelu_unchecked(o: Outcome):
    if o.rule != "openvino-prelu" or o.ok:
        return None
    data, slope = o.shapes
    head = (f"OpenVINO does not refuse this: PRelu's shape inference never checks the slope and returns data's "
            f"shape {_fmt(data)}")
    if isinstance(_try("numpy", data, slope), Plan):
        return (head + f"; the CPU plugin compiles and runs it too and returns {_fmt(data)}, its values computed "
                "with slope elements that no broadcasting rule pairs with them (silent garbage)")
    return (head + "; the CPU plugin fails to compile some such slopes (\"Attempt to broadcast non-1 dimension\", "
            "\"Loop ports have incompatible dimensions\") and runs others, returning data's shape with values "
            "from the wrong slope elements")


def _ov_broadcast_pdpd_shape(data, target, axis):
    """OpenVINO's own shape inference for Broadcast pdpd (reference/openvino.md §3)."""
    start = len(target) - len(data) if axis == -1 else axis
    if start < 0 or len(data) < len(target) - start:
        return None
    out = list(target)
    for i in range(start, len(target)):
        d = data[i - start]
        if d == 1:
            continue
        if target[i] == 1 or target[i] == d:
            out[i] = d
        else:
            return None
    return tuple(out)


def _ov_bpdpd_short(o: Outcome):
    if o.rule != "openvino-broadcast-pdpd" or not o.ok:
        return None
    data, target = o.shapes
    start = o.plan.attr("start_axis")
    if len(data) < len(target) - start:
        return ("OpenVINO refuses this (\"Accessing out-of-range dimension\"): its shape inference needs data "
                f"to reach the target's last axis, so data must be written {_fmt(data + (1,) * (len(target) - start - len(data)))}")
    return None


def _ov_explicit_dups(o: Outcome):
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


def _ov_explicit_scalar(o: Outcome):
    if o.rule != "explicit" or o.ok:
        return None
    data, target = o.shapes
    axes = tuple(o.attrs.get("axes_mapping") or ())
    if data == () and len(axes) == 1 and 0 <= axes[0] < len(target) and target[axes[0]] == 1:
        return (f"OpenVINO's shape inference accepts this: it counts scalar data as rank 1 (one dim of 1), so "
                f"axes_mapping {list(axes)} passes; the CPU plugin returns the target {_fmt(target)} filled with "
                "the scalar, Model.evaluate refuses at run time; give scalar data the axes_mapping []")
    return None


def _ov_select_reference(o: Outcome):
    if o.rule != "openvino-select" or not o.ok or o.attrs.get("auto_broadcast") != "pdpd":
        return None
    if o.attrs.get("axis") == -1 and len(o.shapes[0]) != len(o.shapes[2]):
        return ("openvino's reference evaluate (Model.evaluate) places cond with else's axis "
                f"(rank(then) - rank(else) = {len(o.shapes[1]) - len(o.shapes[2])}) and computes wrong values; "
                "the CPU plugin is right")
    return None


def _onnx_unchecked(o: Outcome):
    e = o.error
    if e is None:
        return None
    if o.rule == "onnx-gemm" and len(e.shapes) == 3 and 2 in e.operands:
        return "onnx shape inference never checks Gemm's C: it infers (M, N) for this model without a word"
    if o.rule == "unidirectional":
        return "onnx shape inference never checks PRelu's slope: it infers X's shape for this model without a word"
    return None


def _gemm_rank_error(o: Outcome):
    """The rank error of a Gemm query whose A or B is not 2-D (None for any other outcome)."""
    e = o.error
    if o.rule != "onnx-gemm" or e is None or e.kind != "rank" or e.operands not in ((0,), (1,)):
        return None
    return e


def _ort_gemm_rank1_a(o: Outcome):
    e = _gemm_rank_error(o)
    if e is None or o.attrs.get("transA") or len(e.shapes[0]) != 1 or len(e.shapes[1]) != 2:
        return None
    (k,), b = e.shapes[0], e.shapes[1]
    row = _try("onnx-gemm", (1, k), *e.shapes[1:], transB=o.attrs.get("transB", 0))
    if not isinstance(row, Plan):
        return None
    return (f"onnxruntime reads the 1-D A ({k},) as the row (1,{k}) and returns {_fmt(row.shape)} instead of "
            "refusing")


def _reference_gemm_any_rank(o: Outcome):
    if _gemm_rank_error(o) is None:
        return None
    return ("onnx's ReferenceEvaluator checks no rank: it computes numpy.dot(A', B') (+ C, numpy-broadcast) and "
            "returns numpy's shape wherever numpy can compute it")


def _ov_bidirectional_zero(o: Outcome):
    if o.rule != "bidirectional" or not o.ok:
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


def _ov_scalar_to_scalar(o: Outcome):
    if o.rule in ("bidirectional", "unidirectional") and o.ok and all(len(s) == 0 for s in o.shapes):
        return ("OpenVINO's CPU plugin crashes (segmentation fault) compiling a Broadcast of a scalar to the "
                "target shape []")
    return None


#: The versions each runtime's records were proven on, oldest first (``bcast deviations --check`` reruns
#: the proofs; a record that stops holding gets ``fixed_in`` or its own tuple).
_OV = ("2026.4.1",)
_ORT = ("1.31.1", "1.32.0")
_ONNX = ("1.23.2",)
_NCNN = ("1.0.20261020",)

DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "openvino-pdpd-trailing-ones", "openvino", _OV, ("pdpd", "openvino-select"),
        "element-wise ops and Select with auto_broadcast=pdpd",
        "B fits A from the axis only once its trailing 1s are ignored, e.g. A (2,3), B (3,1), axis 1",
        "shape inference refuses: \"Argument shapes are inconsistent.\"",
        "rule 5 of PDPD: trailing dims of size 1 of B are ignored, (3,1) => (3)",
        _ov_pdpd_trailing,
    ),
    Deviation(
        "openvino-python-pdpd-axis0", "openvino", _OV, ("pdpd", "openvino-broadcast-pdpd"),
        "ops.add(...) and the other Python element-wise builders with auto_broadcast=\"pdpd\"; "
        "ops.broadcast(..., broadcast_spec=\"pdpd\")",
        "no axis attribute is given",
        "the op gets axis 0 (the default AutoBroadcastSpec's), not -1",
        "PDPD's default axis is -1, meaning rank(A) - rank(B)",
        _ov_python_pdpd_axis0,
    ),
    Deviation(
        "openvino-cpu-pdpd-ops", "openvino (CPU plugin)", _OV, ("pdpd",),
        "Subtract, Divide (floating types), the comparisons, the logical and the bitwise ops with "
        "auto_broadcast=pdpd",
        "an explicit axis (not -1) and rank(B) < rank(A), e.g. A (3,3), B (3,), axis 0",
        "the plugin ignores the axis and broadcasts as numpy does (B right-aligned): where that does not fit A "
        "compile_model fails (\"Argument shapes are inconsistent.\", \"Eltwise executor got invalid "
        "input/output dims configuration\"); where it fits it silently computes that placement: Subtract A (3,3), "
        "B (3,), axis 0 returns A - B along the last axis, int64 A (3,1,1), B (3,1), axis 0 returns shape "
        "(3,3,1), not A's; the comparisons, the logical and the bitwise ops of some element types (Equal "
        "float32, bool) fail to compile instead, even where the axis is rank(A) - rank(B) (A (2,3), B (3,), "
        "axis 1); Add, Multiply, Power, Maximum, Minimum, SquaredDifference, FloorMod, Mod and integer Divide "
        "keep the axis",
        "every element-wise op supports auto_broadcast=pdpd with any valid axis: B is placed from the axis",
        _ov_cpu_pdpd_ops,
    ),
    Deviation(
        "openvino-select-reference-pdpd", "openvino (Model.evaluate)", _OV, ("openvino-select",),
        "Select with auto_broadcast=pdpd, axis -1, cond and else of different ranks",
        "always",
        "the reference evaluate places cond with else's axis and returns wrong values",
        "with axis -1 each input is placed at rank(then) - rank(input)",
        _ov_select_reference,
    ),
    Deviation(
        "openvino-broadcast-pdpd-stretches-target", "openvino", _OV, ("openvino-broadcast-pdpd",),
        "Broadcast-1/3 mode pdpd",
        "a target dim of 1 faces a data dim other than 1 (> 1, or 0), e.g. data (3,) or (0,), target [2,1]",
        "the output takes data's dim, so it differs from target_shape: (2,3) or (2,0); where data, placed from "
        "the axis, also runs past the target's end with trailing 1s (data (3,1), target [1,1], axis 1: shape "
        "inference gives (1,3)) both the CPU plugin and Model.evaluate fail at run time (\"Tile with "
        "non-positive repeats must produce an empty output shape.\")",
        "PDPD broadcasts data into the target only; the output is target_shape",
        _ov_bpdpd_stretch,
    ),
    Deviation(
        "openvino-broadcast-pdpd-short-data", "openvino", _OV, ("openvino-broadcast-pdpd",),
        "Broadcast-1/3 mode pdpd",
        "data ends before the target does (rank(data) < rank(target) - axis)",
        "shape inference refuses: \"Accessing out-of-range dimension\"",
        "data is a contiguous run of the target from the axis; axes after it are 1s",
        _ov_bpdpd_short,
    ),
    Deviation(
        "openvino-explicit-duplicate-axes", "openvino", _OV, ("explicit",),
        "Broadcast-3 mode explicit",
        "axes_mapping repeats an axis, e.g. [1, 1], and is otherwise what OpenVINO accepts: one entry per data "
        "axis, each an axis of the target, sorted, each data dim 1 or the target dim it maps to",
        "accepted (it passes is_sorted), output target_shape; the values are nonsense and CPU and reference "
        "disagree",
        "axes_mapping maps each data axis to its own output axis, sorted",
        _ov_explicit_dups,
    ),
    Deviation(
        "openvino-broadcast-pdpd-long-data", "openvino", _OV, ("openvino-broadcast-pdpd",),
        "Broadcast-1/3 mode pdpd",
        "data placed from the axis runs past the target's last axis (rank(data) > rank(target) - axis, an axis "
        "past the target's rank included), e.g. data (3,5), target [2,3], axis 1",
        "shape inference ignores data's dims past the target's last axis (and an axis past the target's rank) "
        "and returns what the rest gives "
        "(target_shape, but for the stretches-target deviation); the CPU plugin ignores the axis and aligns data "
        "with the end of the output: it fails (\"Tile with non-positive repeats must produce an empty output "
        "shape.\") where a data dim is then larger than the output's, else returns data broadcast from there, or "
        "garbage where a dim neither matches nor is 1 -- also where the extra dims are 1s the spec ignores, "
        "e.g. data (3,1), target [3,3], axis 1 gives data along axis 0",
        "data is a contiguous run of the target from the axis, rank(data) <= rank(target); only its trailing 1s "
        "are ignored",
        _ov_bpdpd_long,
    ),
    Deviation(
        "openvino-pdpd-zero-size", "openvino", _OV, ("pdpd", "openvino-select"),
        "element-wise ops and Select with auto_broadcast=pdpd",
        "a B (cond, else) dim of 1 faces an A (then) dim of 0, e.g. A (0,), B (1,); or a B dim of 0 faces an "
        "A dim of 1, e.g. A (2,1), B (0,)",
        "shape inference refuses the first (its static check src > dst reads 1 > 0) and accepts the second, "
        "the 0 taking A's 1: output (2,0), not A's shape",
        "B's dims equal A's or are 1 (only B stretches: \"only B to A broadcast is supported for PDPD\"); "
        "the output is A's shape",
        _ov_pdpd_zero,
    ),
    Deviation(
        "openvino-explicit-scalar-axes", "openvino", _OV, ("explicit",),
        "Broadcast-3 mode explicit",
        "scalar data with a one-entry axes_mapping [a] where target[a] is 1, e.g. data (), target [1,3], axes [0]",
        "shape inference accepts it (a scalar counts as rank 1): target_shape; the CPU plugin returns "
        "target_shape filled with the scalar; Model.evaluate refuses at run time (\"Broadcast axes_mapping shape 1 "
        "doesn't match rank of input tensor 0\")",
        "axes_mapping has one entry per data axis, so [] for scalar data",
        _ov_explicit_scalar,
    ),
    Deviation(
        "openvino-prelu-unchecked", "openvino", _OV, ("openvino-prelu",),
        "PRelu",
        "the slope is neither per channel (1-D of length data[1]) nor numpy-broadcastable into data, "
        "e.g. data (3,1), slope (1,4)",
        "shape inference never checks the slope and returns data's shape; the CPU plugin compiles and runs it "
        "wherever slope and data are numpy-broadcastable both ways, returning data's shape with values from the "
        "wrong slope elements (for data (3,1), slope (1,4): the slope's last element throughout); other slopes "
        "it fails to compile (\"Attempt to broadcast non-1 dimension\") or runs the same way",
        "otherwise the slope is broadcast with numpy rules into data (the output is data's shape); any other "
        "slope makes the op invalid",
        _ov_prelu_unchecked,
    ),
    Deviation(
        "openvino-cpu-bidirectional-zero", "openvino (CPU plugin)", _OV, ("bidirectional",),
        "Broadcast-3 mode bidirectional",
        "a data dim of 0 faces a target dim of 1, e.g. data (0,), target [2,1]; or a data dim of 1 faces a "
        "target dim of 0, e.g. data (1,), target [2,0]",
        "the first: compile_model fails (\"Input shape dimension equal 0 cannot be broadcasted (numpy mode) to "
        "1\"); the second, on a model of static shapes: the output keeps data's 1, (2,1), although its own "
        "shape inference says (2,0) (a model of dynamic shapes returns (2,0))",
        "numpy.array(data) * numpy.ones(target) has shape (2,0) in both examples",
        _ov_bidirectional_zero,
    ),
    Deviation(
        "openvino-cpu-scalar-to-scalar", "openvino (CPU plugin)", _OV, ("bidirectional", "unidirectional"),
        "Broadcast-3 modes numpy and bidirectional",
        "scalar data and the target shape []",
        "compile_model crashes the process (segmentation fault)",
        "the output is a scalar",
        _ov_scalar_to_scalar,
    ),
    Deviation(
        "openvino-cpu-pdpd-reference-fallback", "openvino (CPU plugin)", _OV, ("pdpd",),
        "Multiply, Divide, Power, Maximum, SquaredDifference int8/uint8, Minimum int8, Mod float16/float32 with "
        "auto_broadcast=pdpd",
        "rank(B) < rank(A), e.g. Multiply int8 A (2,3), B (3,)",
        "the plugin hands these to OpenVINO's reference implementation, which has no kernel for them: "
        "compile_model fails (\"Cannot fallback on ngraph reference implementation\"); the same ops run with "
        "equal ranks",
        "every element-wise op supports auto_broadcast=pdpd for each element type it accepts",
        _ov_cpu_reference_fallback,
        only_ops=tuple(_OV_CPU_NO_REFERENCE),
    ),
    Deviation(
        "openvino-cpu-pdpd-squared-difference-int", "openvino (CPU plugin)", _OV, ("pdpd",),
        "SquaredDifference int32/int64 with auto_broadcast=pdpd",
        "always, equal shapes included, e.g. A (2,3), B (2,3)",
        "compile_model fails (\"Cannot fallback on ngraph reference implementation\"); with numpy broadcasting "
        "it runs",
        "SquaredDifference supports auto_broadcast=pdpd for every numeric type",
        _ov_cpu_sqdiff_int,
        only_ops=("SquaredDifference",),
    ),
    Deviation(
        "openvino-cpu-select-pdpd-axis", "openvino (CPU plugin)", _OV, ("openvino-select",),
        "Select with auto_broadcast=pdpd",
        "an explicit axis (not -1) and a non-empty output, e.g. float32 cond (3,), then (2,3), else (3,), axis 1 "
        "(equal shapes with axis 0, and scalars, too)",
        "compile_model fails (\"'Else' tensor shape is not broadcastable.\", \"'Cond' tensor shape is not "
        "broadcastable.\", \"Unsupported auto broadcast specification\") for every element type of then/else "
        "but int32 and int64, which it runs right; an empty output compiles",
        "Select supports auto_broadcast=pdpd with any valid axis",
        _ov_cpu_select_axis,
    ),
    Deviation(
        "openvino-broadcast-empty-data", "openvino", _OV, ("unidirectional", "bidirectional", "explicit",
                                                          "openvino-broadcast-pdpd"),
        "Broadcast-3, every mode",
        "data has a dim of 0, e.g. data (3,0), target [3,0]; a model of static shapes on the CPU plugin, or "
        "Model.evaluate",
        "the process dies (SIGFPE) where OpenVINO accepts the shapes; a CPU model of dynamic shapes returns the "
        "empty output",
        "the output is target_shape (or the broadcast shape), empty",
        _ov_broadcast_empty_data,
    ),
    Deviation(
        "openvino-evaluate-empty-output", "openvino (Model.evaluate)", _OV,
        _OV_ELEMENTWISE_RULES,
        "element-wise ops, Select and PRelu",
        "an input has a dim of 0, so that the output is empty, e.g. int64 Add of A (2,0,3), B (3,)",
        "evaluate computes elements anyway and writes memory it does not own: int64 Add, Multiply or Divide of "
        "A (2,0,3), B (3,), Select of cond (2,0,3), then and else int64 (3,), or PRelu float32 of data (0,3,3), "
        "slope (3,), run a few times, kill the process (\"munmap_chunk(): invalid pointer\", SIGABRT, or SIGSEGV) "
        "or make an allocation fail (std::bad_alloc)",
        "an empty output: nothing is computed",
        _ov_evaluate_empty_output,
    ),
    Deviation(
        "openvino-evaluate-pdpd-greater", "openvino (Model.evaluate)", _OV, ("pdpd",),
        "Greater, GreaterEqual with auto_broadcast=pdpd",
        "B is broadcast, e.g. A (2,3), B (3,)",
        "wrong values: B is read as if it had A's shape, past its end ([[1,5,3],[4,2,6]] > [3,3,3] gets the "
        "first row right, [F,T,F], and compares the second with whatever memory follows B); the CPU plugin is "
        "right",
        "A > B with B broadcast into A: [[F,T,F],[T,F,T]]",
        _ov_evaluate_pdpd_greater,
        only_ops=("Greater", "GreaterEqual"),
    ),
    Deviation(
        "openvino-cpu-integer-values", "openvino (CPU plugin)", _OV, ("numpy", "none", "pdpd"),
        "integer Add, Subtract, Multiply, Divide, Power, SquaredDifference, FloorMod, Mod",
        "any shapes; these values: int8/uint8 results out of range; int8/uint8 Divide; int16/int32/int64 Divide "
        "with numpy or no broadcasting; int64 values beyond int32; a zero divisor",
        "int8/uint8 arithmetic saturates (int8 100 + 100 = 127, uint8 3 - 5 = 0) and int8/uint8 Divide rounds "
        "to nearest on a model of dynamic shapes (4 / 7 = 1), truncates on one of static shapes (-7 / 2 = -3); "
        "int16/int32/int64 Divide with numpy or no broadcasting truncates (-7 / 2 = -3) whatever "
        "python_division says (with pdpd it floors, as the spec says); int64 is computed in int32 "
        "(2**40 + 3 = 3); integer Divide, FloorMod and Mod by 0 return garbage (INT_MIN, 0) with no error",
        "the reference implementation (Model.evaluate): wrapping arithmetic in the element type, int64 in "
        "int64, Divide floors with python_division=True (the default) and truncates without; division by 0 is "
        "an error",
        check=None,
        only_ops=("Add", "Subtract", "Multiply", "Divide", "Power", "SquaredDifference", "FloorMod", "Mod"),
    ),
    Deviation(
        "openvino-cpu-minmax-nan", "openvino (CPU plugin)", _OV, ("numpy", "none", "pdpd"),
        "Maximum, Minimum on floats",
        "any shapes; one operand NaN",
        "the result depends on the operands' order (x > y ? x : y): Maximum(NaN, 1) = 1, Maximum(1, NaN) = NaN",
        "the reference implementation (std::max, std::min): Maximum(NaN, 1) = NaN, Maximum(1, NaN) = 1",
        check=None,
        only_ops=("Maximum", "Minimum"),
    ),
    Deviation(
        "openvino-prelu-element-types", "openvino", _OV, ("openvino-prelu",),
        "PRelu",
        "data and slope of different element types, or of a non-floating type, e.g. float32 data with an "
        "int32 slope, or bool",
        "shape inference checks no element type: it accepts them all",
        "data and slope have one floating-point type T",
        check=None,
        only_ops=("PRelu",),
    ),
    Deviation(
        "ncnn-garbage", "ncnn", _NCNN, ("ncnn",),
        "BinaryOp with two blobs",
        "a pair outside ncnn's broadcasting rules, e.g. A (2,3,4) with B (3,4)",
        "returns 0 (success) and an output of the per-axis max shape, filled with clamped or out-of-bounds "
        "values; no error is ever reported",
        "binaryop-broadcasting.md lists the supported pairs; nothing else is defined",
        _ncnn_garbage,
    ),
    Deviation(
        "ncnn-empty-blob", "ncnn", _NCNN, ("ncnn",),
        "BinaryOp",
        "an input has a 0-size dim",
        "the process dies with SIGFPE (e.g. (0,3) with (1,3)); with 1-D blobs it returns 0 and a wrong, "
        "non-empty output ((0,) with (1,) gives (1,))",
        "not defined by the spec; any error would be expected, not a crash",
        _ncnn_empty,
    ),
    Deviation(
        "onnxruntime-prelu-bidirectional", "onnxruntime", _ORT, ("unidirectional",),
        "PRelu",
        "the slope is not unidirectionally broadcastable to X but numpy-broadcastable with it, "
        "e.g. X (3,1), slope (1,4)",
        "runs and returns the two-way broadcast shape, (3,4)",
        "PRelu's slope is unidirectionally broadcast to X; the output has X's shape",
        _prelu_numpy,
    ),
    Deviation(
        "reference-prelu-bidirectional", "onnx.reference.ReferenceEvaluator", _ONNX, ("unidirectional",),
        "PRelu",
        "the slope is not unidirectionally broadcastable to X but numpy-broadcastable with it",
        "returns the two-way broadcast shape",
        "PRelu's slope is unidirectionally broadcast to X; the output has X's shape",
        _prelu_numpy,
    ),
    Deviation(
        "reference-prelu-axis-fallback", "onnx.reference.ReferenceEvaluator", _ONNX, ("unidirectional",),
        "PRelu",
        "numpy broadcasting fails and the 1-D slope's length occurs exactly once in X's shape, "
        "e.g. X (2,3,4,5), slope (3,)",
        "applies the slope along that axis instead of failing",
        "PRelu's slope is unidirectionally broadcast to X (right-aligned)",
        _reference_prelu_fallback,
    ),
    Deviation(
        "onnx-shape-inference-unchecked", "onnx.shape_inference", _ONNX, ("onnx-gemm", "unidirectional"),
        "Gemm's C and PRelu's slope",
        "C is not broadcastable to (M, N), or the slope not to X",
        "infer_shapes (strict mode too) infers (M, N) or X's shape and reports nothing",
        "C and the slope are unidirectionally broadcastable, else the model is invalid",
        _onnx_unchecked,
    ),
    Deviation(
        "onnxruntime-no-legacy-opsets", "onnxruntime", _ORT, ("onnx-legacy",),
        "Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater, Less, Gemm, PRelu at opset 1-6",
        "always",
        "NOT_IMPLEMENTED: \"Could not find an implementation for Add(6) node\"",
        "opset 1-6 models are valid ONNX with the legacy broadcast/axis semantics",
        _ort_no_legacy,
    ),
    Deviation(
        "reference-legacy-ignores-broadcast", "onnx.reference.ReferenceEvaluator", _ONNX, ("onnx-legacy",),
        "Add-1/Add-6 and the other legacy broadcasting ops but Pow-1 (reference-pow1-legacy-attrs)",
        "broadcast/axis change the result (an axis, broadcast=0 with different shapes, B larger than A)",
        "ignores broadcast and axis and applies numpy broadcasting",
        "the legacy rule: B's dims EQUAL A's from axis; broadcast=0 needs identical shapes",
        _reference_legacy_numpy,
    ),
    Deviation(
        "onnx-version-converter-axis", "onnx.version_converter", _ONNX, ("onnx-legacy",),
        "convert_version from opset 6 to 7+ of Add/Sub/Mul/Div with broadcast=1",
        "an explicit axis other than rank(A) - rank(B), with rank(B) < rank(A)",
        "axis > 0 or -1: unsqueezes rank(A) - rank(B) trailing 1s into B instead of rank(A) - rank(B) - axis "
        "(-1 read literally, not as suffix matching), then fails assert_numpy_multibroadcastable; axis 0: the "
        "Unsqueeze is right but its output has no element type, so onnxruntime refuses the converted model "
        "(\"Invalid tensor data type 0\")",
        "the opset-7 model must compute what the legacy rule computes",
        _converter_axis,
    ),
    Deviation(
        "reference-pow1-legacy-attrs", "onnx.reference.ReferenceEvaluator", _ONNX, ("onnx-legacy",),
        "Pow-1",
        "the node has a broadcast or axis attribute, whatever its value",
        "does not run: \"Pow._run() got an unexpected keyword argument 'broadcast'\" (or 'axis'); a Pow-1 without "
        "them runs with numpy broadcasting, as reference-legacy-ignores-broadcast says of the other legacy ops",
        "Pow-1 takes broadcast and axis and broadcasts by the legacy rule: B's dims EQUAL A's from axis",
        _reference_pow1,
        only_ops=("Pow",),
    ),
    Deviation(
        "reference-variadic-before-8-broadcasts", "onnx.reference.ReferenceEvaluator", _ONNX, ("none",),
        "Max, Min, Sum, Mean at opset 1-7",
        "the shapes differ but are numpy-broadcastable (for Mean: to data_0's shape), e.g. Max-6 of (2,3) and (3,)",
        "runs with numpy broadcasting and returns the broadcast shape, (2,3); onnxruntime refuses",
        "before opset 8 all inputs must have the same shape (no broadcasting)",
        _reference_variadic_numpy,
        only_ops=("Max", "Min", "Sum", "Mean"),
    ),
    Deviation(
        "reference-gemm-beta0-unchecked-c", "onnx.reference.ReferenceEvaluator", _ONNX, ("onnx-gemm",),
        "Gemm",
        "beta=0 and C is not unidirectionally broadcastable to (M, N), e.g. A (2,3), B (3,4), C (3,)",
        "never reads C and returns alpha * A' * B', (2,4); onnxruntime refuses (\"Gemm: Invalid bias shape for "
        "broadcast\")",
        "C must be unidirectionally broadcastable to (M, N), whatever beta",
        _reference_gemm_beta0,
        only_ops=("Gemm",),
    ),
    Deviation(
        "reference-mean-in-place", "onnx.reference.ReferenceEvaluator", _ONNX, ("numpy",),
        "Mean (opset 8+)",
        "the broadcast output is larger than data_0, e.g. data_0 (2,1), data_1 (4,2,1)",
        "refuses: it adds in place into data_0 (\"non-broadcastable output operand with shape (2,1) doesn't match "
        "the broadcast shape (4,2,1)\"); onnxruntime returns (4,2,1)",
        "Mean broadcasts multidirectionally (numpy): the output has the broadcast shape",
        _reference_mean_in_place,
        only_ops=("Mean",),
    ),
    Deviation(
        "onnxruntime-gemm-rank1-a", "onnxruntime", _ORT, ("onnx-gemm",),
        "Gemm",
        "A is 1-D, (K,), transA=0, and B (K, N) (or (N, K) with transB=1), e.g. A (5,), B (5,3)",
        "runs and returns (1, N), as if A were the row (1, K); C is then checked against (1, N)",
        "A and B are 2-D: \"Input tensor A. The shape of A should be (M, K) if transA is 0\"",
        _ort_gemm_rank1_a,
    ),
    Deviation(
        "reference-gemm-any-rank", "onnx.reference.ReferenceEvaluator", _ONNX, ("onnx-gemm",),
        "Gemm",
        "A or B is not 2-D, e.g. A (2,3,4), B (4,5), or A (1,4), B ()",
        "computes numpy.dot(A', B') and adds C with numpy broadcasting: returns (2,3,5), (1,4)... wherever numpy "
        "can compute it (onnxruntime refuses all but a 1-D A)",
        "A and B are 2-D: (M, K) and (K, N)",
        _reference_gemm_any_rank,
    ),
    Deviation(
        "onnxruntime-where-negative-zero", "onnxruntime", _ORT, ("numpy",),
        "Where",
        "float32 or float64; an element taken from X (cond true) that is -0.0, e.g. Where(True, -0.0, 5.0)",
        "returns +0.0: the sign of a zero taken from X is lost (one taken from Y keeps it)",
        "\"Return elements, either from X or Y, depending on condition\": the element of X, -0.0",
        check=None, only_ops=("Where",),
    ),
    Deviation(
        "ncnn-fast-math", "ncnn (PyPI wheel, x86-64)", _NCNN, ("ncnn",),
        "BinaryOp DIV, FLOOR_DIVIDE, POW, ATAN2, FMOD, REMAINDER and their R- forms; MIN",
        "any shapes; these values (finite ones, and NaN for MIN): a zero divisor; a POW base <= 0; ATAN2(-0, x) "
        "with x < 0 or x = -0; x/y within a few ulps of an integer (for REMAINDER of a half-integer); MIN of -0 "
        "and +0, or of x and NaN, on the one-element path",
        "the wheel's vector code (built with -ffast-math; MIN: its one-element path) computes something else: "
        "DIV and FLOOR_DIVIDE by zero give NaN, not +-inf; POW with a base <= 0 gives garbage (2.4e38); "
        "ATAN2(-0, x) gives +pi, not -pi; FMOD, REMAINDER and FLOOR_DIVIDE are off by one divisor (by 1), "
        "and a -0 result comes back +0 (REMAINDER(1.37, -2.74) gives -1.37, not 1.37); MIN(-0, +0) gives +0 and "
        "MIN(x, NaN) gives NaN",
        "ncnn's reference functors (src/layer/binaryop.cpp) in IEEE float32: x / y, floorf(x / y), powf, "
        "atan2f, fmodf, remainderf, std::min; the wheel's other path computes them",
        check=None,
        only_ops=("DIV", "RDIV", "FLOOR_DIVIDE", "RFLOOR_DIVIDE", "POW", "RPOW", "ATAN2", "RATAN2", "FMOD", "RFMOD",
                  "REMAINDER", "RREMAINDER", "MIN"),
    ),
)

_ids = [d.id for d in DEVIATIONS]
assert len(_ids) == len(set(_ids)), "deviation ids must be unique"


def findings_for(result: Plan | BroadcastError, op: str | None = None,
                 op_attrs: dict | None = None) -> list[Finding]:
    """The deviations that bear on a plan or a broadcast error, with their notes.

    ``op``: the op the query was for, as its op table spells it (``"Max"``,
    ``"DIV"``); records with ``only_ops`` bear only on those ops, so they are
    left out when ``op`` is None.  ``op_attrs``: the op's attributes, for
    those the rule does not take (e.g. ``{"beta": 0.0}`` for Gemm; the op's
    defaults where left out), and ``element_type`` (a numpy dtype name, e.g.
    ``"int8"``) for the records that depend on it (OpenVINO's CPU plugin);
    without it such a record speaks of the element types it concerns.

    Every entry is proven on static shapes, so shapes with other dims (``N``,
    ``?``, ``2..4``) get none.
    """
    outcome = Outcome.of(result, op, op_attrs)
    if not all(type(d) is int for s in outcome.shapes for d in s):
        return []
    out = []
    for dev in DEVIATIONS:
        if outcome.rule not in dev.rules or dev.check is None or not dev.concerns(op):
            continue
        note = dev.check(outcome)
        if note:
            out.append(Finding(dev, note))
    return out


def applicable(*shapes, rule: str = "numpy", op: str | None = None, op_attrs: dict | None = None,
               **attrs) -> list[Finding]:
    """The deviations that bear on ``shapes`` under ``rule`` (see :func:`bcast.infer`);
    ``op`` and ``op_attrs`` as for :func:`findings_for`.

    >>> [f.deviation.id for f in applicable((2, 3), (3,), rule="none", op="Max")]
    ['reference-variadic-before-8-broadcasts']
    >>> [f.deviation.id for f in applicable((2, 3), (3, 4), (3,), rule="onnx-gemm", op="Gemm",
    ...                                     op_attrs={"beta": 0.0})]
    ['onnx-shape-inference-unchecked', 'reference-gemm-beta0-unchecked-c']
    """
    return findings_for(_try(rule, *shapes, **attrs), op, op_attrs)
