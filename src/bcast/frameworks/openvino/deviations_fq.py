"""OpenVINO's deviation records about FakeQuantize-1 (:mod:`.fake_quantize`): where its shape inference
and its CPU plugin do not do what the op's spec says.  Measured on 2026.4.1 with constant ranges (as
in every quantized IR); the proofs are in :mod:`.proofs_fq`.
"""

from __future__ import annotations

import math

from ...core._format import format_shape as _fmt
from .._deviation import Deviation, Outcome
from .runtimes import _OV, OpenVINORuntime

__all__ = ["FQ_DEVIATIONS"]

_FQ = ("FakeQuantize",)


def _numpy_shape(shapes) -> tuple | None:
    """numpy's broadcast of ``shapes`` (both ways), or None."""
    out: list = []
    for s in shapes:
        s = tuple(s)
        n = max(len(out), len(s))
        a, b = [1] * (n - len(out)) + out, (1,) * (n - len(s)) + s
        if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
            return None
        out = [y if x == 1 else x for x, y in zip(a, b)]
    return tuple(out)


def _ov_fq_grows(o: Outcome) -> str | None:
    if o.error is None or o.rule != "unidirectional":
        return None
    grown = _numpy_shape(o.shapes)
    if grown is None:
        return None  # OpenVINO refuses these too ("Argument shapes are inconsistent.")
    return (f"OpenVINO does not refuse this: its shape inference merges each range into X both ways and declares "
            f"X's shape {_fmt(tuple(o.shapes[0]))}; its CPU plugin then returns {_fmt(grown)} (the numpy broadcast "
            "of all five inputs), X's shape with other values, or corrupts its heap, which kills the process "
            "(rarely it lives, with other values), depending on which ranges grow")


OPENVINO_FAKE_QUANTIZE_RANGE_GROWS = Deviation(
    id="openvino-fake-quantize-range-grows",
    runtime=OpenVINORuntime.OPENVINO,
    proven_on=_OV,
    rules=("unidirectional",),
    ops="FakeQuantize-1 with auto_broadcast numpy",
    condition="a range (input_low, input_high, output_low or output_high) is not broadcastable to X but numpy-"
              "broadcasts with it: a dim > 1 where X has 1, or a rank above X's, e.g. X (1,1,4,4), input_low (1,3,1,1)",
    behaviour="shape inference accepts it and declares X's shape; the CPU plugin (constant ranges) computes the "
              "grown shape (every range grown), X's shape with other values (output_high alone), or writes past its "
              "buffer, which kills the process (SIGSEGV or SIGABRT) or, rarely, leaves it X's shape with other "
              "values (input_low alone)",
    spec="FakeQuantize-1: each range's shape \"must be broadcastable to the shape of X\"; the output's shape "
         "matches X's",
    check=_ov_fq_grows,
    only_ops=_FQ,
    kills_process=True,
)


def _ov_cpu_fq_none(o: Outcome) -> str | None:
    if o.plan is None or o.rule != "none":
        return None
    return ("the CPU plugin fails to compile a FakeQuantize with auto_broadcast none whose ranges are constants "
            "(\"Argument shapes are inconsistent.\"), though every range has X's shape; auto_broadcast numpy "
            "computes the same values")


OPENVINO_CPU_FAKE_QUANTIZE_NONE = Deviation(
    id="openvino-cpu-fake-quantize-none",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("none",),
    ops="FakeQuantize-1 with auto_broadcast none and constant ranges",
    condition="any shapes (the spec's none: every range of X's shape)",
    behaviour="compiling fails: \"Argument shapes are inconsistent.\"",
    spec="FakeQuantize-1, auto_broadcast none: \"all input shapes should match\"",
    check=_ov_cpu_fq_none,
    only_ops=_FQ,
)


def _ov_cpu_fq_output_ranges(o: Outcome) -> str | None:
    if o.plan is None or len(o.shapes) != 5:
        return None
    low, high = (math.prod(o.shapes[i]) for i in (3, 4))
    if low == high or min(low, high) != 1:
        return None
    many, one = ("output_high", "output_low") if high > 1 else ("output_low", "output_high")
    return (f"the CPU plugin computes other values than the spec when {many} has {max(low, high)} elements and "
            f"{one} one (measured: a per-channel output_high is read as its first element for every channel), "
            f"unless {many}'s values are all equal; give both the same shape")


OPENVINO_CPU_FAKE_QUANTIZE_OUTPUT_RANGES = Deviation(
    id="openvino-cpu-fake-quantize-output-ranges",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("unidirectional", "numpy"),
    ops="FakeQuantize-1 with constant ranges",
    condition="one of output_low and output_high has one element, the other several (per channel) that differ, "
              "e.g. output_low (), output_high (1,3,1,1)",
    behaviour="other values than the spec on every channel but the first (up to the whole output range off)",
    spec="FakeQuantize-1: each range broadcast to X's shape, element by element",
    check=_ov_cpu_fq_output_ranges,
    only_ops=_FQ,
)


def _moved(o: Outcome) -> list[int]:
    """The ranges a pdpd plan places otherwise than right-aligned (numpy's placement)."""
    if o.plan is None or o.rule != "pdpd":
        return []
    n = len(o.plan.shape)
    return [i for i in range(1, len(o.shapes))
            if o.plan.aligned_shape(i) != (1,) * (n - len(o.shapes[i])) + tuple(o.shapes[i])]


def _ov_cpu_fq_pdpd(o: Outcome) -> str | None:
    moved = _moved(o)
    if not moved:
        return None
    x = tuple(o.shapes[0])
    fits = all(_numpy_shape([x, o.shapes[i]]) == x for i in moved)
    return ("the CPU plugin ignores the pdpd axis of FakeQuantize and aligns the ranges with X's end (numpy's "
            "placement): " + ("it computes those values, not the spec's" if fits else
                              "they do not fit there, and it fails to compile (\"Argument shapes are inconsistent.\")"))


OPENVINO_CPU_FAKE_QUANTIZE_PDPD = Deviation(
    id="openvino-cpu-fake-quantize-pdpd",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("pdpd",),
    ops="FakeQuantize-1 with auto_broadcast pdpd and constant ranges",
    condition="a range placed from the axis lands otherwise than right-aligned, e.g. X (1,3,4,4), input_low (3,), "
              "axis 1",
    behaviour="the ranges are right-aligned: other values where they fit so, else compiling fails "
              "(\"Argument shapes are inconsistent.\")",
    spec="auto_broadcast pdpd: each range broadcast into X from axis",
    check=_ov_cpu_fq_pdpd,
    only_ops=_FQ,
)


def _ov_evaluate_fq_pdpd(o: Outcome) -> str | None:
    if not _moved(o):
        return None
    return ("openvino's reference evaluate (Model.evaluate) reads the ranges of a pdpd FakeQuantize right-aligned "
            "(numpy's placement; a dim that does not match there is read as its first element): other values")


OPENVINO_EVALUATE_FAKE_QUANTIZE_PDPD = Deviation(
    id="openvino-evaluate-fake-quantize-pdpd",
    runtime=OpenVINORuntime.EVALUATE,
    proven_on=_OV,
    rules=("pdpd",),
    ops="FakeQuantize-1 with auto_broadcast pdpd",
    condition="a range placed from the axis lands otherwise than right-aligned, e.g. X (1,3,4,4), input_low (3,), "
              "axis 1",
    behaviour="other values: the ranges read right-aligned",
    spec="auto_broadcast pdpd: each range broadcast into X from axis",
    check=_ov_evaluate_fq_pdpd,
    only_ops=_FQ,
)


OPENVINO_CPU_FAKE_QUANTIZE_VALUES = Deviation(
    id="openvino-cpu-fake-quantize-values",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("unidirectional", "none", "pdpd"),
    ops="FakeQuantize-1 with constant ranges",
    condition="input_low > input_high, or input_low == input_high (levels > 2); any ranges for the last bits",
    behaviour="the plugin precomputes a scale and a shift: it crops x to [input_low, input_high] as given (not "
              "[min, max]), gives NaN where input_low == input_high, and its values differ from the formula's "
              "by an ulp or two elsewhere",
    spec="FakeQuantize-1: x <= min(input_low, input_high) gives output_low, x > max(...) output_high, else "
         "round((x - input_low) / (input_high - input_low) * (levels-1)) / (levels-1) * (output_high - output_low) "
         "+ output_low",
    only_ops=_FQ,
)

OPENVINO_CPU_FAKE_QUANTIZE_BINARIZATION = Deviation(
    id="openvino-cpu-fake-quantize-binarization",
    runtime=OpenVINORuntime.CPU_PLUGIN,
    proven_on=_OV,
    rules=("unidirectional", "none", "pdpd"),
    ops="FakeQuantize-1 with constant ranges, levels 2",
    condition="a binarization: levels 2, input_low == input_high, output_low and output_high each 0 or 1",
    behaviour="X of rank 4: the process dies (its heap corrupted: \"corrupted double-linked list\"; kills the "
              "process) or, with output_low 1 and output_high 0, other values; any other rank: compiling fails "
              "(\"doesn't support input/output rank != 4\")",
    spec="FakeQuantize-1: x <= input_low gives output_low, x > input_high output_high, for any rank",
    only_ops=_FQ,
    kills_process=True,
)


FQ_DEVIATIONS = (OPENVINO_FAKE_QUANTIZE_RANGE_GROWS, OPENVINO_CPU_FAKE_QUANTIZE_NONE,
                 OPENVINO_CPU_FAKE_QUANTIZE_OUTPUT_RANGES, OPENVINO_CPU_FAKE_QUANTIZE_PDPD,
                 OPENVINO_EVALUATE_FAKE_QUANTIZE_PDPD, OPENVINO_CPU_FAKE_QUANTIZE_VALUES,
                 OPENVINO_CPU_FAKE_QUANTIZE_BINARIZATION)
