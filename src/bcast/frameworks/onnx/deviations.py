"""ONNX's deviation records: where onnxruntime, onnx's ReferenceEvaluator, its shape inference and its
version converter do not do what the ONNX spec says.  Each record follows its ``check``; their proofs
are in :mod:`bcast.frameworks.onnx.proofs`; :mod:`bcast.frameworks.deviations` assembles the registry.
"""

from __future__ import annotations

from ...core._format import format_shape as _fmt
from ...core.errors import BroadcastError
from ...core.plan import Plan
from .._deviation import Deviation, Outcome, Runtime, attempt, verdict

__all__ = ["DEVIATIONS", "RUNTIME", "OnnxRuntime"]


class OnnxRuntime(Runtime):
    """The ONNX programs whose deviations are recorded."""

    ONNXRUNTIME = "onnxruntime"
    REFERENCE = "onnx.reference.ReferenceEvaluator"
    SHAPE_INFERENCE = "onnx.shape_inference"
    VERSION_CONVERTER = "onnx.version_converter"


#: The versions the records were proven on, oldest first (``bcast deviations --check`` reruns the proofs;
#: a record that stops holding gets ``fixed_in`` or its own tuple).
_ORT = ("1.31.1", "1.32.0")
_ONNX = ("1.23.2",)


def _numpy_instead(o: Outcome) -> str | None:
    """What numpy broadcasting makes of a legacy query, where that differs from the legacy rule; else None."""
    both = attempt("numpy", *o.shapes)
    plan = o.plan
    if isinstance(both, Plan) and plan is not None and both.shape == plan.shape and both.axis_maps == plan.axis_maps:
        return None
    return verdict(both)


def _gemm_rank_error(o: Outcome) -> BroadcastError | None:
    """The rank error of a Gemm query whose A or B is not 2-D (None for any other outcome)."""
    e = o.error
    if o.rule != "onnx-gemm" or e is None or e.kind != "rank" or e.operands not in ((0,), (1,)):
        return None
    return e


def _prelu_numpy(o: Outcome) -> str | None:
    if o.rule != "unidirectional" or o.ok:
        return None
    both = attempt("numpy", *o.shapes)
    if isinstance(both, Plan):
        return f"as PRelu(X=A, slope=B) it runs anyway and returns shape {_fmt(both.shape)}, not A's"
    return None


ONNXRUNTIME_PRELU_BIDIRECTIONAL = Deviation(
    id="onnxruntime-prelu-bidirectional",
    runtime=OnnxRuntime.ONNXRUNTIME,
    proven_on=_ORT,
    rules=("unidirectional",),
    ops="PRelu",
    condition="the slope is not unidirectionally broadcastable to X but numpy-broadcastable with it, "
              "e.g. X (3,1), slope (1,4)",
    behaviour="runs and returns the two-way broadcast shape, (3,4)",
    spec="PRelu's slope is unidirectionally broadcast to X; the output has X's shape",
    check=_prelu_numpy,
)


REFERENCE_PRELU_BIDIRECTIONAL = Deviation(
    id="reference-prelu-bidirectional",
    runtime=OnnxRuntime.REFERENCE,
    proven_on=_ONNX,
    rules=("unidirectional",),
    ops="PRelu",
    condition="the slope is not unidirectionally broadcastable to X but numpy-broadcastable with it",
    behaviour="returns the two-way broadcast shape",
    spec="PRelu's slope is unidirectionally broadcast to X; the output has X's shape",
    check=_prelu_numpy,
)


def _reference_prelu_fallback(o: Outcome) -> str | None:
    if o.rule != "unidirectional" or o.ok:
        return None
    x, slope = o.shapes
    if isinstance(attempt("numpy", x, slope), Plan):
        return None
    if len(slope) == 1 and list(x).count(slope[0]) == 1:
        ax = list(x).index(slope[0])
        return (f"as PRelu(X=A, slope=B) the ReferenceEvaluator falls back to applying the 1-D slope along "
                f"A's axis {ax} (the only axis of length {slope[0]}) and returns {_fmt(x)}")
    return None


REFERENCE_PRELU_AXIS_FALLBACK = Deviation(
    id="reference-prelu-axis-fallback",
    runtime=OnnxRuntime.REFERENCE,
    proven_on=_ONNX,
    rules=("unidirectional",),
    ops="PRelu",
    condition="numpy broadcasting fails and the 1-D slope's length occurs exactly once in X's shape, "
              "e.g. X (2,3,4,5), slope (3,)",
    behaviour="applies the slope along that axis instead of failing",
    spec="PRelu's slope is unidirectionally broadcast to X (right-aligned)",
    check=_reference_prelu_fallback,
)


def _onnx_unchecked(o: Outcome) -> str | None:
    e = o.error
    if e is None:
        return None
    if o.rule == "onnx-gemm" and len(e.shapes) == 3 and 2 in e.operands:
        return "onnx shape inference never checks Gemm's C: it infers (M, N) for this model without a word"
    if o.rule == "unidirectional":
        return "onnx shape inference never checks PRelu's slope: it infers X's shape for this model without a word"
    return None


ONNX_SHAPE_INFERENCE_UNCHECKED = Deviation(
    id="onnx-shape-inference-unchecked",
    runtime=OnnxRuntime.SHAPE_INFERENCE,
    proven_on=_ONNX,
    rules=("onnx-gemm", "unidirectional"),
    ops="Gemm's C and PRelu's slope",
    condition="C is not broadcastable to (M, N), or the slope not to X",
    behaviour="infer_shapes (strict mode too) infers (M, N) or X's shape and reports nothing",
    spec="C and the slope are unidirectionally broadcastable, else the model is invalid",
    check=_onnx_unchecked,
)


def _ort_no_legacy(o: Outcome) -> str | None:
    if o.rule == "onnx-legacy":
        return ("onnxruntime cannot run opset 1-6 Add/Sub/Mul/Div/...: NOT_IMPLEMENTED \"Could not find an "
                "implementation for Add(6)\"; upgrade the model to opset >= 7 first")
    return None


ONNXRUNTIME_NO_LEGACY_OPSETS = Deviation(
    id="onnxruntime-no-legacy-opsets",
    runtime=OnnxRuntime.ONNXRUNTIME,
    proven_on=_ORT,
    rules=("onnx-legacy",),
    ops="Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater, Less, Gemm, PRelu at opset 1-6",
    condition="always",
    behaviour="NOT_IMPLEMENTED: \"Could not find an implementation for Add(6) node\"",
    spec="opset 1-6 models are valid ONNX with the legacy broadcast/axis semantics",
    check=_ort_no_legacy,
)


def _reference_legacy_numpy(o: Outcome) -> str | None:
    if o.rule != "onnx-legacy" or o.op == "Pow":  # Pow-1 does worse: reference-pow1-legacy-attrs
        return None
    instead = _numpy_instead(o)
    if instead is None:
        return None
    return f"onnx's ReferenceEvaluator ignores broadcast/axis and applies numpy broadcasting: here it gives {instead}"


REFERENCE_LEGACY_IGNORES_BROADCAST = Deviation(
    id="reference-legacy-ignores-broadcast",
    runtime=OnnxRuntime.REFERENCE,
    proven_on=_ONNX,
    rules=("onnx-legacy",),
    ops="Add-1/Add-6 and the other legacy broadcasting ops but Pow-1 (reference-pow1-legacy-attrs)",
    condition="broadcast/axis change the result (an axis, broadcast=0 with different shapes, B larger than A)",
    behaviour="ignores broadcast and axis and applies numpy broadcasting",
    spec="the legacy rule: B's dims EQUAL A's from axis; broadcast=0 needs identical shapes",
    check=_reference_legacy_numpy,
)


def _converter_axis(o: Outcome) -> str | None:
    if o.rule != "onnx-legacy" or o.plan is None or not o.attrs.get("broadcast"):
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


ONNX_VERSION_CONVERTER_AXIS = Deviation(
    id="onnx-version-converter-axis",
    runtime=OnnxRuntime.VERSION_CONVERTER,
    proven_on=_ONNX,
    rules=("onnx-legacy",),
    ops="convert_version from opset 6 to 7+ of Add/Sub/Mul/Div with broadcast=1",
    condition="an explicit axis other than rank(A) - rank(B), with rank(B) < rank(A)",
    behaviour="axis > 0 or -1: unsqueezes rank(A) - rank(B) trailing 1s into B instead of rank(A) - rank(B) - axis "
              "(-1 read literally, not as suffix matching), then fails assert_numpy_multibroadcastable; axis 0: the "
              "Unsqueeze is right but its output has no element type, so onnxruntime refuses the converted model "
              "(\"Invalid tensor data type 0\")",
    spec="the opset-7 model must compute what the legacy rule computes",
    check=_converter_axis,
)


def _reference_pow1(o: Outcome) -> str | None:
    if o.rule != "onnx-legacy":
        return None
    refuses = ("onnx's ReferenceEvaluator does not run a Pow-1 node that has a broadcast or axis attribute "
               "(\"Pow._run() got an unexpected keyword argument 'broadcast'\", or 'axis')")
    if o.attrs.get("broadcast") or o.attrs.get("axis") is not None:
        return refuses
    instead = _numpy_instead(o)  # broadcast=0: given (refused) or left out (numpy broadcasting)
    return refuses + ", not even broadcast=0; without them it applies numpy broadcasting" + (
        f" and here gives {instead}" if instead else "")


REFERENCE_POW1_LEGACY_ATTRS = Deviation(
    id="reference-pow1-legacy-attrs",
    runtime=OnnxRuntime.REFERENCE,
    proven_on=_ONNX,
    rules=("onnx-legacy",),
    ops="Pow-1",
    condition="the node has a broadcast or axis attribute, whatever its value",
    behaviour="does not run: \"Pow._run() got an unexpected keyword argument 'broadcast'\" (or 'axis'); a Pow-1 "
              "without "
              "them runs with numpy broadcasting, as reference-legacy-ignores-broadcast says of the other legacy ops",
    spec="Pow-1 takes broadcast and axis and broadcasts by the legacy rule: B's dims EQUAL A's from axis",
    check=_reference_pow1,
    only_ops=("Pow",),
)


def _reference_variadic_numpy(o: Outcome) -> str | None:
    if o.rule != "none" or o.ok:
        return None
    both = attempt("numpy", *o.shapes)
    if not isinstance(both, Plan):
        return None
    if o.op == "Mean" and both.shape != tuple(o.shapes[0]):
        return None  # its Mean adds in place into data_0, which cannot hold the output: it refuses too
    return (f"onnx's ReferenceEvaluator does not require equal shapes for {o.op} before opset 8: it applies numpy "
            f"broadcasting and returns {_fmt(both.shape)} (onnxruntime refuses, as the spec says)")


REFERENCE_VARIADIC_BEFORE_8_BROADCASTS = Deviation(
    id="reference-variadic-before-8-broadcasts",
    runtime=OnnxRuntime.REFERENCE,
    proven_on=_ONNX,
    rules=("none",),
    ops="Max, Min, Sum, Mean at opset 1-7",
    condition="the shapes differ but are numpy-broadcastable (for Mean: to data_0's shape), e.g. Max-6 of (2,3) "
              "and (3,)",
    behaviour="runs with numpy broadcasting and returns the broadcast shape, (2,3); onnxruntime refuses",
    spec="before opset 8 all inputs must have the same shape (no broadcasting)",
    check=_reference_variadic_numpy,
    only_ops=("Max", "Min", "Sum", "Mean"),
)


def _reference_gemm_beta0(o: Outcome) -> str | None:
    e = o.error
    if o.rule != "onnx-gemm" or e is None or len(e.shapes) != 3 or 2 not in (e.operands or ()):
        return None
    if o.op_attrs.get("beta", 1.0) != 0:
        return None
    ab = attempt("onnx-gemm", *e.shapes[:2], transA=o.attrs.get("transA", 0), transB=o.attrs.get("transB", 0))
    if not isinstance(ab, Plan):
        return None
    return (f"with beta=0 onnx's ReferenceEvaluator never reads C: it returns {_fmt(ab.shape)} "
            "(onnxruntime refuses: \"Gemm: Invalid bias shape for broadcast\")")


REFERENCE_GEMM_BETA0_UNCHECKED_C = Deviation(
    id="reference-gemm-beta0-unchecked-c",
    runtime=OnnxRuntime.REFERENCE,
    proven_on=_ONNX,
    rules=("onnx-gemm",),
    ops="Gemm",
    condition="beta=0 and C is not unidirectionally broadcastable to (M, N), e.g. A (2,3), B (3,4), C (3,)",
    behaviour="never reads C and returns alpha * A' * B', (2,4); onnxruntime refuses (\"Gemm: Invalid bias shape for "
              "broadcast\")",
    spec="C must be unidirectionally broadcastable to (M, N), whatever beta",
    check=_reference_gemm_beta0,
    only_ops=("Gemm",),
)


def _reference_mean_in_place(o: Outcome) -> str | None:
    if o.rule != "numpy" or o.plan is None or o.plan.shape == tuple(o.shapes[0]):
        return None
    return (f"onnx's ReferenceEvaluator refuses: its Mean adds in place into data_0 {_fmt(o.shapes[0])}, which cannot "
            f"hold the output {_fmt(o.plan.shape)} (\"non-broadcastable output operand\")")


REFERENCE_MEAN_IN_PLACE = Deviation(
    id="reference-mean-in-place",
    runtime=OnnxRuntime.REFERENCE,
    proven_on=_ONNX,
    rules=("numpy",),
    ops="Mean (opset 8+)",
    condition="the broadcast output is larger than data_0, e.g. data_0 (2,1), data_1 (4,2,1)",
    behaviour="refuses: it adds in place into data_0 (\"non-broadcastable output operand with shape (2,1) doesn't "
              "match "
              "the broadcast shape (4,2,1)\"); onnxruntime returns (4,2,1)",
    spec="Mean broadcasts multidirectionally (numpy): the output has the broadcast shape",
    check=_reference_mean_in_place,
    only_ops=("Mean",),
)


def _ort_gemm_rank1_a(o: Outcome) -> str | None:
    e = _gemm_rank_error(o)
    if e is None or o.attrs.get("transA") or len(e.shapes[0]) != 1 or len(e.shapes[1]) != 2:
        return None
    (k,) = e.shapes[0]
    row = attempt("onnx-gemm", (1, k), *e.shapes[1:], transB=o.attrs.get("transB", 0))
    if not isinstance(row, Plan):
        return None
    return (f"onnxruntime reads the 1-D A ({k},) as the row (1,{k}) and returns {_fmt(row.shape)} instead of "
            "refusing")


ONNXRUNTIME_GEMM_RANK1_A = Deviation(
    id="onnxruntime-gemm-rank1-a",
    runtime=OnnxRuntime.ONNXRUNTIME,
    proven_on=_ORT,
    rules=("onnx-gemm",),
    ops="Gemm",
    condition="A is 1-D, (K,), transA=0, and B (K, N) (or (N, K) with transB=1), e.g. A (5,), B (5,3)",
    behaviour="runs and returns (1, N), as if A were the row (1, K); C is then checked against (1, N)",
    spec="A and B are 2-D: \"Input tensor A. The shape of A should be (M, K) if transA is 0\"",
    check=_ort_gemm_rank1_a,
)


def _reference_gemm_any_rank(o: Outcome) -> str | None:
    if _gemm_rank_error(o) is None:
        return None
    return ("onnx's ReferenceEvaluator checks no rank: it computes numpy.dot(A', B') (+ C, numpy-broadcast) and "
            "returns numpy's shape wherever numpy can compute it")


REFERENCE_GEMM_ANY_RANK = Deviation(
    id="reference-gemm-any-rank",
    runtime=OnnxRuntime.REFERENCE,
    proven_on=_ONNX,
    rules=("onnx-gemm",),
    ops="Gemm",
    condition="A or B is not 2-D, e.g. A (2,3,4), B (4,5), or A (1,4), B ()",
    behaviour="computes numpy.dot(A', B') and adds C with numpy broadcasting: returns (2,3,5), (1,4)... wherever numpy "
              "can compute it (onnxruntime refuses all but a 1-D A)",
    spec="A and B are 2-D: (M, K) and (K, N)",
    check=_reference_gemm_any_rank,
)


ONNXRUNTIME_WHERE_NEGATIVE_ZERO = Deviation(
    id="onnxruntime-where-negative-zero",
    runtime=OnnxRuntime.ONNXRUNTIME,
    proven_on=_ORT,
    rules=("numpy",),
    ops="Where",
    condition="float32 or float64; an element taken from X (cond true) that is -0.0, e.g. Where(True, -0.0, 5.0)",
    behaviour="returns +0.0: the sign of a zero taken from X is lost (one taken from Y keeps it)",
    spec="\"Return elements, either from X or Y, depending on condition\": the element of X, -0.0",
    only_ops=("Where",),
)


DEVIATIONS: tuple[Deviation, ...] = (
    ONNXRUNTIME_PRELU_BIDIRECTIONAL,
    REFERENCE_PRELU_BIDIRECTIONAL,
    REFERENCE_PRELU_AXIS_FALLBACK,
    ONNX_SHAPE_INFERENCE_UNCHECKED,
    ONNXRUNTIME_NO_LEGACY_OPSETS,
    REFERENCE_LEGACY_IGNORES_BROADCAST,
    ONNX_VERSION_CONVERTER_AXIS,
    REFERENCE_POW1_LEGACY_ATTRS,
    REFERENCE_VARIADIC_BEFORE_8_BROADCASTS,
    REFERENCE_GEMM_BETA0_UNCHECKED_C,
    REFERENCE_MEAN_IN_PLACE,
    ONNXRUNTIME_GEMM_RANK1_A,
    REFERENCE_GEMM_ANY_RANK,
    ONNXRUNTIME_WHERE_NEGATIVE_ZERO,
)

#: The enum of this framework's runtimes: a record is this framework's when its runtime is a member
#: (``bcast compare --framework`` keeps those).
RUNTIME = OnnxRuntime
