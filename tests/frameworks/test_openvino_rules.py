"""Differential tests: bcast's OpenVINO rules against OpenVINO itself.

The oracle is OpenVINO's own shape inference (:func:`bcast.frameworks.openvino.oracle.infer_shape`:
Parameters with static shapes, the op, its output's partial shape; a refusal
while the node is built means OpenVINO refuses the shapes).  A few cases are
also compiled and run on the CPU plugin to check values (and, for PRelu, whose
shape inference never refuses, to see what the plugin refuses); the values of
every op on random arrays are in ``test_openvino_run.py``.

How a comparison is judged (:func:`judge`):

- both accept with the same output shape, or both refuse: agreement;
- otherwise bcast's deviation registry (``bcast.frameworks.deviations.applicable``) must
  list a shape-inference deviation for this very query, and OpenVINO must do
  what that deviation says it does (``EXPECTED_DEVIATION_BEHAVIOUR``); a
  registered deviation that OpenVINO does *not* show fails too;
- anything else fails the test: every disagreement this file finds is in the
  registry.

Random cases (``openvino_shapes``) use a fixed seed: ranks 0-4, dims drawn
from {0, 1, 2, 3}, and about half of the cases derived from the other operand
so that a fair share is accepted.

Spec texts: OpenVINO "Broadcast Rules For Elementwise Operations", Broadcast-1/3,
Select-1, PRelu-1; measured behaviour: reference notes on OpenVINO 2026.4.1.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("openvino")
from openvino import opset1  # noqa: E402  (the Python builders' own default axis is tested)

import bcast  # noqa: E402
from bcast import BroadcastError, Plan, format_shape  # noqa: E402
from bcast.frameworks.openvino import shape_inference  # noqa: E402
from bcast.frameworks.deviations import applicable  # noqa: E402
from bcast.frameworks.openvino import oracle as oracle  # noqa: E402
from bcast.frameworks._oracle import RuntimeRefused  # noqa: E402
from support.openvino_shapes import random_cases  # noqa: E402

SEED = 20260417


# ---------------------------------------------------------------------------
# The OpenVINO side: its shape inference, through the oracle
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OvResult:
    """OpenVINO's answer: an output shape, or the last line of its error."""

    shape: tuple | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.shape is not None

    def __str__(self) -> str:
        return format_shape(self.shape) if self.ok else f"refused ({self.error})"


def ov_infer(op, shapes, dtypes=None, **attrs) -> OvResult:
    """OpenVINO's shape inference of ``op`` (see :func:`bcast.frameworks.openvino.oracle.infer_shape`)."""
    try:
        return OvResult(oracle.infer_shape(op, shapes, dtypes, **attrs))
    except RuntimeRefused as e:
        return OvResult(None, e.message)


def _pdpd_axis(mode, axis) -> dict:
    return {"auto_broadcast": mode} if axis is None else {"auto_broadcast": mode, "axis": axis}


def ov_eltwise(a, b, mode, axis=None, op="Add", dtype=np.float32) -> OvResult:
    """Add (or another binary element-wise op) with auto_broadcast ``mode``."""
    return ov_infer(op, [a, b], [dtype, dtype], **_pdpd_axis(mode, axis))


def ov_select(cond, then, else_, mode, axis=None) -> OvResult:
    return ov_infer("Select", [cond, then, else_], **_pdpd_axis(mode, axis))


def ov_broadcast3(data, target, mode, axes_mapping=None) -> OvResult:
    """Broadcast-3, modes numpy / explicit / bidirectional; target_shape is a Constant."""
    axes = [] if axes_mapping is None else [axes_mapping]
    return ov_infer("Broadcast", [data, target] + axes, mode=mode)


def ov_broadcast_pdpd(data, target, axis, version=3) -> OvResult:
    """Broadcast-3 or Broadcast-1 (with the dummy axes input v1 adds itself) in pdpd mode."""
    return ov_infer("Broadcast", [data, target], mode="pdpd", axis=axis, version=version)


def cpu_run(op, arrays, **attrs):
    """``op`` compiled on the CPU plugin with the arrays' static shapes, and run."""
    return oracle.run(op, arrays, device="CPU", static=True, **attrs)


# ---------------------------------------------------------------------------
# The bcast side, and the judge
# ---------------------------------------------------------------------------


def bc(rule, *shapes, **attrs):
    """bcast's answer: a Plan, or the BroadcastError."""
    try:
        return bcast.infer(*shapes, rule=rule, **attrs)
    except BroadcastError as e:
        return e


def show(b) -> str:
    return format_shape(b.shape) if isinstance(b, Plan) else f"refused ({b.reason})"


# The registry's own models of OpenVINO's shape inference (reference notes §1 and §3), written
# from the measured behaviour; every query below also runs OpenVINO, so they are checked here too.
_ov_bpdpd_model = shape_inference.broadcast_pdpd
_ov_pdpd_model = shape_inference.pdpd_merge


def _ov_pdpd_query_model(rule, shapes, attrs):
    if rule == "pdpd":
        return _ov_pdpd_model(shapes[0], shapes[1], attrs.get("axis", -1))
    if rule == "openvino-select" and attrs.get("auto_broadcast") == "pdpd":
        cond, then, else_ = shapes
        out = _ov_pdpd_model(then, else_, attrs.get("axis", -1))
        return None if out is None else _ov_pdpd_model(out, cond, attrs.get("axis", -1))
    return None


def _names_shape(ov_res, finding):
    if format_shape(ov_res.shape) not in finding.note:
        return f"the registry note does not name OpenVINO's shape {format_shape(ov_res.shape)}: {finding.note}"
    return None


def _expect_refused(ov_res, query, finding):
    return None if not ov_res.ok else f"registry says OpenVINO refuses, but it gives {ov_res}"


def _expect_stretch(ov_res, query, finding):
    rule, shapes, attrs = query
    data, target = shapes
    want = _ov_bpdpd_model(data, target, attrs.get("axis", -1))
    if not ov_res.ok or ov_res.shape != want:
        return (f"registry says OpenVINO returns {format_shape(want)} (data's dim in place of a target 1),"
                f" it gives {ov_res}")
    return _names_shape(ov_res, finding)


def _expect_short_data(ov_res, query, finding):
    if ov_res.ok or "out-of-range" not in ov_res.error:
        return f"registry says OpenVINO refuses (\"Accessing out-of-range dimension\"), it gives {ov_res}"
    return None


def _expect_long_data(ov_res, query, finding):
    """Broadcast pdpd, data past the target's last axis: OpenVINO answers as for data cut there."""
    rule, shapes, attrs = query
    data, target = shapes
    axis = attrs["axis"]
    reach = max(0, len(target) - axis)
    want = _ov_bpdpd_model(data[:reach], target, axis)
    if want is None or not ov_res.ok or ov_res.shape != want:
        return (f"registry says OpenVINO ignores data's dims past the target and returns {format_shape(want)}, "
                f"it gives {ov_res}")
    return _names_shape(ov_res, finding)


def _expect_duplicates_accepted(ov_res, query, finding):
    rule, shapes, attrs = query
    if not ov_res.ok or ov_res.shape != tuple(shapes[1]):
        return f"registry says OpenVINO accepts repeated axes (output = target), it gives {ov_res}"
    return _names_shape(ov_res, finding)


def _expect_explicit_scalar(ov_res, query, finding):
    rule, shapes, attrs = query
    if not ov_res.ok or ov_res.shape != tuple(shapes[1]):
        return f"registry says OpenVINO accepts the scalar with one axis (output = target), it gives {ov_res}"
    return _names_shape(ov_res, finding)


def _expect_pdpd_zero_size(ov_res, query, finding):
    """pdpd with zero-size dims: bcast accepts a 1 facing a 0 (OpenVINO refuses), refuses a 0 facing a 1
    (OpenVINO accepts, the 0 taking the 1)."""
    rule, shapes, attrs = query
    if isinstance(bc(rule, *shapes, **attrs), Plan):
        return _expect_refused(ov_res, query, finding)
    want = _ov_pdpd_query_model(rule, shapes, attrs)
    main = shapes[0] if rule == "pdpd" else shapes[1]
    if want is None or want == tuple(main) or not ov_res.ok or ov_res.shape != want:
        return f"registry says OpenVINO accepts with {format_shape(want)}, not {format_shape(main)}, it gives {ov_res}"
    return _names_shape(ov_res, finding)


#: The registry records about OpenVINO's *shape inference*, and what each says
#: OpenVINO does.  (The other OpenVINO records are about the CPU plugin, the
#: reference evaluate or the Python builders' default axis -- the builders here
#: always set the axis -- and PRelu's, whose shape inference never refuses, is
#: checked against the CPU plugin by the PRelu tests.)
EXPECTED_DEVIATION_BEHAVIOUR = {
    "openvino-pdpd-trailing-ones": _expect_refused,
    "openvino-pdpd-zero-size": _expect_pdpd_zero_size,
    "openvino-broadcast-pdpd-stretches-target": _expect_stretch,
    "openvino-broadcast-pdpd-short-data": _expect_short_data,
    "openvino-broadcast-pdpd-long-data": _expect_long_data,
    "openvino-explicit-duplicate-axes": _expect_duplicates_accepted,
    "openvino-explicit-scalar-axes": _expect_explicit_scalar,
}


def judge(rule, shapes, attrs, ov_res, *, expect_deviation=None):
    """Compare bcast with OpenVINO for one query; return a problem, or None.

    ``expect_deviation``: for fixed cases, the registry id that must (or, with
    ``""``, no shape-inference id that may) apply.
    """
    shapes = tuple(tuple(s) for s in shapes)
    query = (rule, shapes, attrs)
    b = bc(rule, *shapes, **attrs)
    where = f"{rule} {', '.join(format_shape(s) for s in shapes)} {attrs}: bcast {show(b)}, OpenVINO {ov_res}"
    findings = {f.deviation.id: f for f in applicable(*shapes, rule=rule, **attrs)
                if f.deviation.id in EXPECTED_DEVIATION_BEHAVIOUR}
    if expect_deviation is not None and set(findings) != ({expect_deviation} - {""}):
        return f"{where}: expected registry deviation {expect_deviation or 'none'}, got {sorted(findings) or 'none'}"
    if findings:
        problems = [f"{did}: {EXPECTED_DEVIATION_BEHAVIOUR[did](ov_res, query, f)}"
                    for did, f in findings.items() if EXPECTED_DEVIATION_BEHAVIOUR[did](ov_res, query, f)]
        return f"{where}: {'; '.join(problems)}" if problems else None
    agree = (isinstance(b, Plan) and ov_res.ok and b.shape == ov_res.shape) or (
        isinstance(b, BroadcastError) and not ov_res.ok)
    if agree:
        return None
    return f"{where}: disagreement not covered by the deviation registry"


def check_fixed(rule, shapes, attrs, ov_res, spec, deviation=""):
    """A fixed case: bcast gives the spec's answer, and the judge is satisfied."""
    b = bc(rule, *shapes, **attrs)
    if spec is None:
        assert isinstance(b, BroadcastError), f"the spec refuses, bcast gives {show(b)}"
    else:
        assert isinstance(b, Plan) and b.shape == tuple(spec), f"the spec gives {spec}, bcast {show(b)}"
    problem = judge(rule, shapes, attrs, ov_res, expect_deviation=deviation)
    assert problem is None, problem


def check_random(cases, run):
    """Judge every random case; fail with all the problems at once."""
    problems, tally = [], Counter()
    for rule, shapes, attrs in cases:
        ov_res = run(shapes, attrs)
        tally["ov accepts" if ov_res.ok else "ov refuses"] += 1
        p = judge(rule, shapes, attrs, ov_res)
        if p:
            problems.append(p)
    assert not problems, f"{len(problems)} of {len(cases)} cases:\n" + "\n".join(problems[:40])
    # a generator that only produced refusals (or only acceptances) would test little
    assert tally["ov accepts"] >= len(cases) // 5 and tally["ov refuses"] >= len(cases) // 10, tally


# ---------------------------------------------------------------------------
# 1. Element-wise Add: auto_broadcast none / numpy / pdpd
# ---------------------------------------------------------------------------

# (id, A, B, spec's answer or None for refused); spec: broadcast-rules "Numpy examples", zero-size notes
NUMPY_FIXED = [
    ("scalar+scalar", (), (), ()),
    ("2x3+1", (2, 3), (1,), (2, 3)),
    ("3+2x3", (3,), (2, 3), (2, 3)),
    ("2x3x5+scalar", (2, 3, 5), (), (2, 3, 5)),
    ("2x1x5+1x4x5", (2, 1, 5), (1, 4, 5), (2, 4, 5)),
    ("6x5+2x1x5", (6, 5), (2, 1, 5), (2, 6, 5)),
    ("2x1x5+4x1", (2, 1, 5), (4, 1), (2, 4, 5)),
    ("3x2x1x4+5x4", (3, 2, 1, 4), (5, 4), (3, 2, 5, 4)),
    ("1x5x3+5x2x1x3", (1, 5, 3), (5, 2, 1, 3), (5, 2, 5, 3)),
    ("8x1x6x1+7x1x5", (8, 1, 6, 1), (7, 1, 5), (8, 7, 6, 5)),
    ("3+2-refused", (3,), (2,), None),
    ("3x1x5+4x4x5-refused", (3, 1, 5), (4, 4, 5), None),
    ("0x3+1x3", (0, 3), (1, 3), (0, 3)),
    ("0x3+2x3-refused", (0, 3), (2, 3), None),
    ("2x0+1x1", (2, 0), (1, 1), (2, 0)),
    ("0+scalar", (0,), (), (0,)),
    ("1+0", (1,), (0,), (0,)),
]


@pytest.mark.parametrize("a, b, spec", [c[1:] for c in NUMPY_FIXED], ids=[c[0] for c in NUMPY_FIXED])
def test_add_numpy_fixed(a, b, spec):
    check_fixed("numpy", (a, b), {}, ov_eltwise(a, b, "numpy"), spec)


NONE_FIXED = [
    ("scalar", (), (), ()),
    ("2x3", (2, 3), (2, 3), (2, 3)),
    ("zero", (0, 2), (0, 2), (0, 2)),
    ("2x3+3-refused", (2, 3), (3,), None),
    ("2x3+3x2-refused", (2, 3), (3, 2), None),
    ("2x3+1x3-refused", (2, 3), (1, 3), None),
    ("1+0-refused", (1,), (0,), None),
    ("scalar+1-refused", (), (1,), None),
]


@pytest.mark.parametrize("a, b, spec", [c[1:] for c in NONE_FIXED], ids=[c[0] for c in NONE_FIXED])
def test_add_none_fixed(a, b, spec):
    check_fixed("none", (a, b), {}, ov_eltwise(a, b, "none"), spec)


# (id, A, B, axis, spec's answer, registry deviation expected ("" = none))
PDPD_FIXED = [
    # broadcast-rules "PDPD examples"
    ("spec-3x4-axis1", (2, 3, 4, 5), (3, 4), 1, (2, 3, 4, 5), ""),
    ("spec-3x1-axis1", (2, 3, 4, 5), (3, 1), 1, (2, 3, 4, 5), ""),
    ("spec-4x5-axis-1", (2, 3, 4, 5), (4, 5), -1, (2, 3, 4, 5), ""),
    ("spec-4x5-axis2", (2, 3, 4, 5), (4, 5), 2, (2, 3, 4, 5), ""),
    ("spec-1x3-axis0", (2, 3, 4, 5), (1, 3), 0, (2, 3, 4, 5), ""),
    ("spec-scalar", (2, 3, 4, 5), (), -1, (2, 3, 4, 5), ""),
    ("spec-5", (2, 3, 4, 5), (5,), -1, (2, 3, 4, 5), ""),
    ("spec-8x1x6x1-7x1x5-axis1-refused", (8, 1, 6, 1), (7, 1, 5), 1, None, ""),
    # rule 5 (trailing 1s of B ignored): OpenVINO's shape inference does not do it
    ("rule5-2x3-3x1-axis1", (2, 3), (3, 1), 1, (2, 3), "openvino-pdpd-trailing-ones"),
    ("rule5-2x3x4x5-3x4x1x1-axis1", (2, 3, 4, 5), (3, 4, 1, 1), 1, (2, 3, 4, 5), "openvino-pdpd-trailing-ones"),
    ("rule5-2-1-axis1", (2,), (1,), 1, (2,), "openvino-pdpd-trailing-ones"),
    # one-way, rank and axis checks
    ("A-does-not-stretch", (2, 1, 4, 5), (3, 4), 1, None, ""),
    ("rankB-gt-rankA", (2, 3), (2, 3, 4), -1, None, ""),
    ("axis-2-refused", (2, 3), (3,), -2, None, ""),
    ("axis-too-large", (2, 3, 4, 5), (4, 5), 3, None, ""),
    ("axis0-mismatch", (2, 3, 4, 5), (4, 5), 0, None, ""),
    ("equal-shapes", (2, 3), (2, 3), -1, (2, 3), ""),
    ("equal-shapes-axis0", (2, 3), (2, 3), 0, (2, 3), ""),
    ("scalar-scalar", (), (), -1, (), ""),
    ("scalar-scalar-axis0", (), (), 0, (), ""),
    ("scalar-B-axis-end", (2, 3), (), 2, (2, 3), ""),
    ("scalar-B-axis-past-end", (2, 3), (), 3, None, ""),
    ("zero-dims-equal", (2, 0), (0,), -1, (2, 0), ""),
    # zero-size dims: OpenVINO refuses a 1 facing a 0 (static src > dst), and lets a 0 take a 1
    ("zero-1-onto-0", (0,), (1,), -1, (0,), "openvino-pdpd-zero-size"),
    ("zero-1x1-onto-2x0-axis0", (2, 0), (1, 1), 0, (2, 0), "openvino-pdpd-zero-size"),
    ("zero-0-onto-2x1", (2, 1), (0,), -1, None, "openvino-pdpd-zero-size"),
    ("zero-0x0-onto-1x1", (1, 1), (0, 0), -1, None, "openvino-pdpd-zero-size"),
]


@pytest.mark.parametrize("a, b, axis, spec, dev", [c[1:] for c in PDPD_FIXED], ids=[c[0] for c in PDPD_FIXED])
def test_add_pdpd_fixed(a, b, axis, spec, dev):
    check_fixed("pdpd", (a, b), {"axis": axis}, ov_eltwise(a, b, "pdpd", axis), spec, dev)


@pytest.mark.parametrize("op", ["Subtract", "Multiply", "Maximum", "Power", "SquaredDifference"])
@pytest.mark.parametrize("mode, a, b, axis", [
    ("numpy", (2, 1, 5), (4, 1), None),
    ("numpy", (3,), (2,), None),
    ("pdpd", (2, 3, 4, 5), (3, 4), 1),
    ("pdpd", (2, 3, 4, 5), (3, 1), 1),
    ("pdpd", (2, 1, 4, 5), (3, 4), 1),
    ("none", (2, 3), (2, 3), None),
], ids=["numpy-ok", "numpy-refused", "pdpd-ok", "pdpd-ok-1", "pdpd-refused", "none-ok"])
def test_other_binary_ops_share_the_rule(op, mode, a, b, axis):
    """The element-wise shape inference is shared: a few cases on other arithmetic ops."""
    rule = {"numpy": "numpy", "pdpd": "pdpd", "none": "none"}[mode]
    attrs = {"axis": axis} if mode == "pdpd" else {}
    problem = judge(rule, (a, b), attrs, ov_eltwise(a, b, mode, axis, op=op))
    assert problem is None, problem


@pytest.mark.parametrize("op, dtype", [("Equal", np.float32), ("LogicalAnd", np.bool_), ("BitwiseAnd", np.int32)])
def test_comparison_logical_bitwise_pdpd_shape(op, dtype):
    for a, b, axis in [((2, 3, 4, 5), (3, 4), 1), ((2, 3, 4, 5), (4, 5), -1), ((2, 1, 4, 5), (3, 4), 1)]:
        ov_res = ov_eltwise(a, b, "pdpd", axis, op=op, dtype=dtype)
        problem = judge("pdpd", (a, b), {"axis": axis}, ov_res)
        assert problem is None, problem


def test_python_builder_pdpd_default_axis_is_zero():
    """Registry ``openvino-python-pdpd-axis0``: ``opset1.add(..., auto_broadcast="pdpd")`` gets axis 0."""
    def param(shape):
        return opset1.parameter(list(shape), np.float32)

    a, b = (2, 3, 4, 5), (4, 5)
    ids = {f.deviation.id for f in applicable(a, b, rule="pdpd", axis=-1)}
    assert "openvino-python-pdpd-axis0" in ids
    # at axis 0, (4,5) does not fit (2,3,...): the builder refuses what the spec's default (-1) accepts
    with pytest.raises(RuntimeError, match="inconsistent"):
        opset1.add(param(a), param(b), auto_broadcast="pdpd")
    assert isinstance(bc("pdpd", a, b, axis=0), BroadcastError)
    assert bc("pdpd", a, b).shape == a
    # where axis 0 fits, the builder's node says so
    node = opset1.add(param((2, 3, 4, 5)), param((2, 3)), auto_broadcast="pdpd")
    assert node.get_attributes()["auto_broadcast.auto_broadcast_axis"] == 0
    assert tuple(node.get_output_partial_shape(0).to_shape()) == bc("pdpd", (2, 3, 4, 5), (2, 3), axis=0).shape


def test_add_none_random():
    check_random(random_cases("none"), lambda s, at: ov_eltwise(*s, "none"))


def test_add_numpy_random():
    check_random(random_cases("numpy"), lambda s, at: ov_eltwise(*s, "numpy"))


def test_add_pdpd_random():
    check_random(random_cases("pdpd"), lambda s, at: ov_eltwise(*s, "pdpd", at["axis"]))


# ---------------------------------------------------------------------------
# 2. Broadcast-3 (and Broadcast-1 pdpd)
# ---------------------------------------------------------------------------

# (id, data, target, spec's answer or None); numpy mode is unidirectional(target, data)
BROADCAST_NUMPY_FIXED = [
    ("spec-16x1x1-to-1x16x50x50", (16, 1, 1), (1, 16, 50, 50), (1, 16, 50, 50)),
    ("issue33254-one-way", (52, 1, 33, 1), (2, 52, 33, 1), None),
    ("5-to-1-refused", (5,), (1,), None),
    ("rank-data-gt-target", (3, 4), (4,), None),
    ("scalar-to-2x3", (), (2, 3), (2, 3)),
    ("scalar-to-scalar", (), (), ()),
    ("1x3-to-2x3", (1, 3), (2, 3), (2, 3)),
    ("3-to-2x4-refused", (3,), (2, 4), None),
    ("1-to-0", (1,), (2, 0), (2, 0)),
    ("0-to-1-refused", (0,), (2, 1), None),
]


@pytest.mark.parametrize("data, target, spec", [c[1:] for c in BROADCAST_NUMPY_FIXED],
                         ids=[c[0] for c in BROADCAST_NUMPY_FIXED])
def test_broadcast_numpy_fixed(data, target, spec):
    check_fixed("unidirectional", (target, data), {}, ov_broadcast3(data, target, "numpy"), spec)


def test_broadcast_numpy_random():
    # the rule takes (A=target, B=data); OpenVINO takes (data, target)
    check_random(random_cases("broadcast-numpy"), lambda s, at: ov_broadcast3(s[1], s[0], "numpy"))


# (id, data, target, axes_mapping, spec's answer or None, registry deviation)
EXPLICIT_FIXED = [
    ("spec-16-axes1", (16,), (1, 16, 50, 50), (1,), (1, 16, 50, 50), ""),
    ("spec-50x50-axes12", (50, 50), (1, 50, 50, 16), (1, 2), (1, 50, 50, 16), ""),
    ("1-stretches-axes1", (1,), (1, 16, 5, 5), (1,), (1, 16, 5, 5), ""),
    ("1x1-to-3x4", (1, 1), (3, 4), (0, 1), (3, 4), ""),
    ("identity", (2, 3), (2, 3), (0, 1), (2, 3), ""),
    ("scalar-empty-axes", (), (2, 3), (), (2, 3), ""),
    ("mismatch-refused", (3,), (2, 4), (1,), None, ""),
    ("unsorted-refused", (3, 2), (2, 3, 4), (2, 1), None, ""),
    ("out-of-range-refused", (3,), (2, 3), (2,), None, ""),
    ("negative-refused", (3,), (2, 3), (-1,), None, ""),
    ("too-few-axes-refused", (2, 3), (2, 3), (0,), None, ""),
    ("too-many-axes-refused", (3,), (2, 3), (0, 1), None, ""),
    ("duplicates-1-1", (3, 3), (2, 3, 4), (1, 1), None, "openvino-explicit-duplicate-axes"),
    ("duplicates-0-0-ones", (1, 1), (2, 3), (0, 0), None, "openvino-explicit-duplicate-axes"),
    ("duplicates-zero-dims", (0, 0), (2, 0, 3), (1, 1), None, "openvino-explicit-duplicate-axes"),
    # a repeat that OpenVINO refuses for another reason: both refuse, the registry says nothing
    ("duplicates-wrong-length-refused", (1,), (1,), (0, 0), None, ""),
    ("duplicates-mismatch-refused", (3, 4), (2, 3, 4), (1, 1), None, ""),
    ("duplicates-out-of-range-refused", (1, 1), (2,), (1, 1), None, ""),
    # scalar data: OpenVINO takes it as one dim of 1
    ("scalar-one-axis-onto-1", (), (1, 3), (0,), None, "openvino-explicit-scalar-axes"),
    ("scalar-one-axis-onto-1-last", (), (3, 1), (1,), None, "openvino-explicit-scalar-axes"),
    ("scalar-one-axis-onto-2-refused", (), (2, 3), (0,), None, ""),
    ("scalar-two-axes-refused", (), (1, 1), (0, 1), None, ""),
]


@pytest.mark.parametrize("data, target, axes, spec, dev", [c[1:] for c in EXPLICIT_FIXED],
                         ids=[c[0] for c in EXPLICIT_FIXED])
def test_broadcast_explicit_fixed(data, target, axes, spec, dev):
    ov_res = ov_broadcast3(data, target, "explicit", axes)
    check_fixed("explicit", (data, target), {"axes_mapping": axes}, ov_res, spec, dev)


def test_broadcast_explicit_random():
    cases = random_cases("explicit")
    check_random(cases, lambda s, at: ov_broadcast3(s[0], s[1], "explicit", at["axes_mapping"]))
    # every invalid mapping is refused by bcast as an attribute error, whatever OpenVINO does;
    # and the generator produced each kind of invalid mapping
    kinds, accepted = Counter(), []
    for _, (data, target), at in cases:
        axes = at["axes_mapping"]
        bad = {
            "wrong length": len(axes) != len(data),
            "unsorted": list(axes) != sorted(axes),
            "duplicate": len(set(axes)) != len(axes),
            "out of range": any(a >= len(target) for a in axes),
            "negative": any(a < 0 for a in axes),
        }
        kinds.update(k for k, v in bad.items() if v)
        b = bc("explicit", data, target, **at)
        if any(bad.values()) and not (isinstance(b, BroadcastError) and b.kind == "attribute"):
            accepted.append(f"{format_shape(data)} -> {format_shape(target)} axes {list(axes)}: {show(b)}")
    assert not accepted, "bcast must refuse these mappings:\n" + "\n".join(accepted)
    assert all(kinds[k] >= 5 for k in ("wrong length", "unsorted", "duplicate", "out of range", "negative")), kinds


BIDIRECTIONAL_FIXED = [
    ("spec-16x1x1-to-1x1x50x50", (16, 1, 1), (1, 1, 50, 50), (1, 16, 50, 50)),
    ("spec-5-to-1", (5,), (1,), (5,)),
    ("spec-2x3-to-3", (2, 3), (3,), (2, 3)),
    ("spec-3x1-to-3x4", (3, 1), (3, 4), (3, 4)),
    ("spec-3x4-to-scalar", (3, 4), (), (3, 4)),
    ("spec-3x1-to-2x1x6", (3, 1), (2, 1, 6), (2, 3, 6)),
    ("3-to-2-refused", (3,), (2,), None),
    ("2x1-to-3x3-refused", (2, 1), (3, 3), None),
    ("scalar-to-scalar", (), (), ()),
    ("0-to-2x1", (0,), (2, 1), (2, 0)),
]


@pytest.mark.parametrize("data, target, spec", [c[1:] for c in BIDIRECTIONAL_FIXED],
                         ids=[c[0] for c in BIDIRECTIONAL_FIXED])
def test_broadcast_bidirectional_fixed(data, target, spec):
    check_fixed("bidirectional", (data, target), {}, ov_broadcast3(data, target, "bidirectional"), spec)


def test_broadcast_bidirectional_random():
    check_random(random_cases("bidirectional"), lambda s, at: ov_broadcast3(s[0], s[1], "bidirectional"))


# (id, data, target, axis, spec's answer or None, registry deviation)
BROADCAST_PDPD_FIXED = [
    ("3x1-to-2x3x6-axis1", (3, 1), (2, 3, 6), 1, (2, 3, 6), ""),
    ("3x6-to-2x3x6", (3, 6), (2, 3, 6), -1, (2, 3, 6), ""),
    ("1x6-to-2x3x6-axis1", (1, 6), (2, 3, 6), 1, (2, 3, 6), ""),
    ("scalar-to-2x3", (), (2, 3), -1, (2, 3), ""),
    ("equal", (2, 3), (2, 3), 0, (2, 3), ""),
    ("mismatch-refused", (4,), (2, 3), -1, None, ""),
    ("rank-data-gt-target-refused", (2, 3, 4), (3, 4), -1, None, ""),
    ("axis-2-refused", (3,), (2, 3), -2, None, ""),
    ("short-data-3-to-2x3x6-axis1", (3,), (2, 3, 6), 1, (2, 3, 6), "openvino-broadcast-pdpd-short-data"),
    ("short-data-2-to-2x3-axis0", (2,), (2, 3), 0, (2, 3), "openvino-broadcast-pdpd-short-data"),
    ("stretch-3-to-2x1", (3,), (2, 1), -1, None, "openvino-broadcast-pdpd-stretches-target"),
    ("stretch-3x4-to-1x4-axis0", (3, 4), (1, 4), 0, None, "openvino-broadcast-pdpd-stretches-target"),
    ("stretch-0-to-2x1", (0,), (2, 1), -1, None, "openvino-broadcast-pdpd-stretches-target"),
    ("stretch-trailing-1-3x1-to-2x1-axis1", (3, 1), (2, 1), 1, None, "openvino-broadcast-pdpd-stretches-target"),
    # data past the target's last axis: OpenVINO's shape inference ignores the extra dims
    ("long-3x5-to-2x3-axis1", (3, 5), (2, 3), 1, None, "openvino-broadcast-pdpd-long-data"),
    ("long-5-to-2x3-axis7", (5,), (2, 3), 7, None, "openvino-broadcast-pdpd-long-data"),
    ("long-1-to-scalar-axis0", (1,), (), 0, None, "openvino-broadcast-pdpd-long-data"),
    ("long-4x5x6-to-3x4-axis1", (4, 5, 6), (3, 4), 1, None, "openvino-broadcast-pdpd-long-data"),
    ("long-stretch-3x5-to-2x1-axis1", (3, 5), (2, 1), 1, None, "openvino-broadcast-pdpd-long-data"),
    ("long-trailing-1s-3x1x1-to-2x3-axis1", (3, 1, 1), (2, 3), 1, None, "openvino-broadcast-pdpd-long-data"),
    ("long-mismatch-refused", (3, 5), (2, 4), 1, None, ""),
    # valid (the extra dim is a trailing 1): shape inference agrees, the CPU plugin does not
    ("long-valid-3x1-to-3x3-axis1", (3, 1), (3, 3), 1, (3, 3), "openvino-broadcast-pdpd-long-data"),
    ("long-valid-ones-1x1-to-2x3-axis1", (1, 1), (2, 3), 1, (2, 3), ""),
]


@pytest.mark.parametrize("version", [3, 1], ids=["v3", "v1"])
@pytest.mark.parametrize("data, target, axis, spec, dev", [c[1:] for c in BROADCAST_PDPD_FIXED],
                         ids=[c[0] for c in BROADCAST_PDPD_FIXED])
def test_broadcast_pdpd_fixed(data, target, axis, spec, dev, version):
    ov_res = ov_broadcast_pdpd(data, target, axis, version)
    check_fixed("openvino-broadcast-pdpd", (data, target), {"axis": axis}, ov_res, spec, dev)


@pytest.mark.parametrize("version", [3, 1], ids=["v3", "v1"])
def test_broadcast_pdpd_random(version):
    check_random(random_cases("broadcast-pdpd"), lambda s, at: ov_broadcast_pdpd(s[0], s[1], at["axis"], version))


LONG_DATA = "openvino-broadcast-pdpd-long-data"

_BPDPD_CHILD = """
import json, numpy as np
from bcast.frameworks.openvino import oracle as oracle
for data, target, axis, version in {cases!r}:
    x = np.arange(1, 1 + int(np.prod(data)), dtype=np.float32).reshape(data)
    try:
        y = oracle.run("Broadcast", [x, target], mode="pdpd", axis=axis, version=version, static=True)
        out = {{"shape": list(y.shape), "values": y.ravel().tolist()}}
    except oracle.RuntimeRefused as e:
        out = {{"error": e.message}}
    print(json.dumps(out), flush=True)
"""


def test_broadcast_pdpd_long_data_on_cpu():
    """Registry ``openvino-broadcast-pdpd-long-data`` says, query by query, what the CPU plugin does with
    data running past the target (it aligns data with the end of the output): check it on random such
    queries, in a child process (some read memory they should not)."""
    rng = random.Random(f"{SEED}-long-data")
    cases = []
    while len(cases) < 60:
        target = tuple(rng.choice((1, 2, 3, 4)) for _ in range(rng.randint(0, 3)))
        data = tuple(rng.choice((1, 1, 2, 3, 4)) for _ in range(rng.randint(1, 3)))
        axis = rng.randint(0, len(target) + 1)
        found = [f for f in applicable(data, target, rule="openvino-broadcast-pdpd", axis=axis)
                 if f.deviation.id == LONG_DATA]
        if found and (data, target, axis) not in [c[:3] for c in cases]:
            cases.append((data, target, axis, found[0].note))
    queries = [(d, t, a, v) for d, t, a, _ in cases for v in (3, 1)]
    p = subprocess.run([sys.executable, "-c", _BPDPD_CHILD.format(cases=queries)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"the child died (rc {p.returncode}): {p.stderr.strip()[-500:]}"
    runs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert len(runs) == len(queries)
    problems, tally = [], Counter()
    for (data, target, axis, version), run in zip(queries, runs):
        note = next(c[3] for c in cases if c[:3] == (data, target, axis))
        out = _ov_bpdpd_model(data[:max(0, len(target) - axis)], target, axis)  # shape inference's answer
        n = max(len(data), len(out))
        dp, tp = (1,) * (n - len(data)) + data, (1,) * (n - len(out)) + out  # aligned with the end
        where = f"Broadcast-{version} pdpd {format_shape(data)} -> {list(target)} axis {axis}: {run}"
        if "and fails" in note:
            tally["fails"] += 1
            if "Tile with non-positive repeats" not in run.get("error", ""):
                problems.append(f"{where}: the registry says the CPU plugin fails")
        elif "broadcast from there" in note:
            tally["runs"] += 1
            x = np.arange(1, 1 + int(np.prod(data)), dtype=np.float32).reshape(dp)
            want = np.broadcast_to(x, tp).reshape(out)
            if "error" in run or tuple(run["shape"]) != out or not np.array_equal(
                    np.array(run["values"], np.float32).reshape(out), want):
                problems.append(f"{where}: the registry says it returns data aligned with the end, {dp}")
        else:
            tally["garbage"] += 1
            if "garbage" not in note or "error" in run or tuple(run["shape"]) != out:
                problems.append(f"{where}: the registry says the CPU plugin runs it (garbage)")
    assert not problems, "\n".join(problems[:40])
    assert min(tally["fails"], tally["runs"], tally["garbage"]) >= 5, tally


# ---------------------------------------------------------------------------
# 3. Select and PRelu
# ---------------------------------------------------------------------------

# (id, cond, then, else, mode, axis, spec's answer or None, registry deviation)
SELECT_FIXED = [
    ("numpy-3way", (1, 3), (2, 1), (3,), "numpy", None, (2, 3), ""),
    ("numpy-then-stretches", (2, 1), (1,), (1, 3), "numpy", None, (2, 3), ""),
    ("numpy-cond-biggest", (4, 2, 3), (3,), (2, 1), "numpy", None, (4, 2, 3), ""),
    ("numpy-scalars", (), (), (), "numpy", None, (), ""),
    ("numpy-refused", (2,), (3,), (1,), "numpy", None, None, ""),
    ("none-equal", (2, 3), (2, 3), (2, 3), "none", None, (2, 3), ""),
    ("none-refused", (2, 3), (2, 3), (1, 3), "none", None, None, ""),
    ("none-rank-refused", (3,), (2, 3), (2, 3), "none", None, None, ""),
    ("pdpd-per-input-axis", (5,), (2, 3, 4, 5), (3, 4, 5), "pdpd", -1, (2, 3, 4, 5), ""),
    ("pdpd-axis1", (3, 4), (2, 3, 4, 5), (3, 1), "pdpd", 1, (2, 3, 4, 5), ""),
    ("pdpd-then-does-not-stretch", (2, 3), (2, 1), (2, 3), "pdpd", -1, None, ""),
    ("pdpd-else-rank-gt-then", (3,), (3,), (2, 3), "pdpd", -1, None, ""),
    ("pdpd-cond-mismatch", (4,), (2, 3), (3,), "pdpd", -1, None, ""),
    ("pdpd-trailing-ones-else", (3,), (2, 3), (3, 1), "pdpd", 1, (2, 3), "openvino-pdpd-trailing-ones"),
    ("pdpd-trailing-ones-cond", (3, 1), (2, 3), (3,), "pdpd", 1, (2, 3), "openvino-pdpd-trailing-ones"),
    ("pdpd-zero-cond-1-onto-0", (1,), (2, 0), (0,), "pdpd", -1, (2, 0), "openvino-pdpd-zero-size"),
    ("pdpd-zero-0-onto-1x1", (0,), (1, 1), (0,), "pdpd", -1, None, "openvino-pdpd-zero-size"),
    ("pdpd-zero-cond-0-onto-1", (0,), (1,), (1,), "pdpd", -1, None, "openvino-pdpd-zero-size"),
    ("pdpd-zero-else-0-then-cond-1-refused", (1,), (1,), (0,), "pdpd", -1, None, ""),
]


@pytest.mark.parametrize("cond, then, else_, mode, axis, spec, dev", [c[1:] for c in SELECT_FIXED],
                         ids=[c[0] for c in SELECT_FIXED])
def test_select_fixed(cond, then, else_, mode, axis, spec, dev):
    attrs = {"auto_broadcast": mode} if axis is None else {"auto_broadcast": mode, "axis": axis}
    ov_res = ov_select(cond, then, else_, mode, axis)
    check_fixed("openvino-select", (cond, then, else_), attrs, ov_res, spec, dev)


@pytest.mark.parametrize("mode", ["numpy", "pdpd", "none"])
def test_select_random(mode):
    check_random(random_cases(f"select-{mode}"),
                 lambda s, at: ov_select(*s, at["auto_broadcast"], at.get("axis")))


def _prelu_values(x, slope, plan):
    s = np.broadcast_to(slope.reshape(plan.aligned_shape(1)), plan.shape)
    return np.where(x < 0, x * s, x)


# (id, data, slope, spec's answer or None, how the spec places the slope, what the CPU plugin does)
# CPU: "values" runs and matches bcast's plan; "refuses" fails to compile or run; "runs" compiles and
# runs although bcast (and the spec) refuse.  Wherever the spec refuses, the registry lists
# openvino-prelu-unchecked (shape inference never checks the slope), saying which the CPU plugin does.
PRELU_FIXED = [
    ("per-channel-2x3x4x5-3", (2, 3, 4, 5), (3,), (2, 3, 4, 5), "per channel", "values"),
    ("per-channel-issue35958", (1, 3, 2, 3), (3,), (1, 3, 2, 3), "per channel", "values"),
    ("per-channel-not-last-2x3x3", (2, 3, 3), (3,), (2, 3, 3), "per channel", "values"),
    ("per-channel-2x3", (2, 3), (3,), (2, 3), "per channel", "values"),
    ("numpy-5", (2, 3, 4, 5), (5,), (2, 3, 4, 5), "numpy", "values"),
    ("numpy-4x5", (2, 3, 4, 5), (4, 5), (2, 3, 4, 5), "numpy", "values"),
    ("numpy-1", (2, 3, 4, 5), (1,), (2, 3, 4, 5), "numpy", "values"),
    ("numpy-3x1x1", (2, 3, 4, 5), (3, 1, 1), (2, 3, 4, 5), "numpy", "values"),
    ("numpy-1x3x4x1", (2, 3, 4, 5), (1, 3, 4, 1), (2, 3, 4, 5), "numpy", "values"),
    ("numpy-1d-data", (3,), (3,), (3,), "numpy", "values"),
    ("numpy-scalar-slope", (2, 3), (), (2, 3), "numpy", "values"),
    ("slope-2-refused", (2, 3, 4, 5), (2,), None, None, "refuses"),
    ("slope-3x1-refused", (2, 3, 4, 5), (3, 1), None, None, "refuses"),
    ("slope-rank-gt-data-refused", (2, 3, 4, 5), (2, 3, 4, 5, 1), None, None, "refuses"),
    ("slope-both-ways-3x1-1x4", (3, 1), (1, 4), None, None, "runs"),
    ("slope-3-data-2x1", (2, 1), (3,), None, None, "runs"),
    ("slope-rank-gt-data-2x3-into-3", (3,), (2, 3), None, None, "runs"),
]

PRELU_DEVIATION = "openvino-prelu-unchecked"


def _prelu_finding(data, slope):
    found = [f for f in applicable(data, slope, rule="openvino-prelu") if f.deviation.id == PRELU_DEVIATION]
    return found[0] if found else None


@pytest.mark.parametrize("data, slope, spec, how, cpu", [c[1:] for c in PRELU_FIXED],
                         ids=[c[0] for c in PRELU_FIXED])
def test_prelu_fixed(data, slope, spec, how, cpu):
    """PRelu's shape inference always answers data's shape, so the CPU plugin is the oracle:
    what it refuses, and the values it computes (compared through bcast's plan)."""
    b = bc("openvino-prelu", data, slope)
    if spec is None:
        assert isinstance(b, BroadcastError), f"the spec refuses, bcast gives {show(b)}"
    else:
        assert isinstance(b, Plan) and b.shape == spec and b.attr("alignment") == how, show(b)
    finding = _prelu_finding(data, slope)
    assert (finding is None) == (spec is not None), f"registry {PRELU_DEVIATION}: {finding}"
    assert oracle.infer_shape("PRelu", [data, slope]) == tuple(data)
    if finding is not None:
        assert f"returns data's shape {format_shape(data)}" in finding.note, finding.note
        assert ("compiles and runs" in finding.note) == (cpu == "runs"), finding.note
    rng = np.random.default_rng(11)
    x = rng.standard_normal(data).astype(np.float32).reshape(data)
    s = np.asarray(rng.standard_normal(slope), dtype=np.float32).reshape(slope)
    try:
        got = cpu_run("PRelu", [x, s])
    except RuntimeRefused as e:
        got = e
    if cpu == "refuses":
        assert isinstance(got, RuntimeRefused), f"bcast refuses, the CPU plugin returns shape {got.shape}"
    elif cpu == "runs":
        assert not isinstance(got, RuntimeRefused), f"the CPU plugin now refuses: {got.message}"
        assert got.shape == tuple(data)
    else:
        assert not isinstance(got, RuntimeRefused), f"bcast accepts, the CPU plugin fails: {got.message}"
        np.testing.assert_allclose(got, _prelu_values(x, s, b), rtol=1e-6, atol=1e-6)


_PRELU_CHILD = """
import json, numpy as np
from bcast.frameworks.openvino import oracle as oracle
for data, slope in {cases!r}:
    out = {{"inferred": list(oracle.infer_shape("PRelu", [data, slope]))}}
    x = -np.arange(1, 1 + int(np.prod(data)), dtype=np.float32).reshape(data)
    s = np.arange(1, 1 + int(np.prod(slope)), dtype=np.float32).reshape(slope)
    try:
        out["shape"] = list(oracle.run("PRelu", [x, s], static=True).shape)
    except oracle.RuntimeRefused as e:
        out["error"] = e.message
    print(json.dumps(out), flush=True)
"""


def test_prelu_unchecked_slopes_random():
    """Random slopes the spec refuses (dims 1-3): OpenVINO's shape inference answers data's shape for
    every one, and the CPU plugin runs each one the registry says it runs (it reads memory it should
    not, so this runs in a child process)."""
    rng = random.Random(f"{SEED}-prelu")
    cases = []
    while len(cases) < 80:
        data = tuple(rng.choice((1, 2, 3)) for _ in range(rng.randint(1, 4)))
        slope = tuple(rng.choice((1, 2, 3)) for _ in range(rng.randint(0, 4)))
        if (data, slope) not in cases and isinstance(bc("openvino-prelu", data, slope), BroadcastError):
            cases.append((data, slope))
    p = subprocess.run([sys.executable, "-c", _PRELU_CHILD.format(cases=cases)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"the child died (rc {p.returncode}): {p.stderr.strip()[-500:]}"
    runs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert len(runs) == len(cases)
    problems, tally = [], Counter()
    for (data, slope), run in zip(cases, runs):
        finding = _prelu_finding(data, slope)
        says_runs = finding is not None and "compiles and runs" in finding.note
        tally[("registry: runs" if says_runs else "registry: some fail", "error" not in run)] += 1
        where = f"PRelu {format_shape(data)}, slope {format_shape(slope)}: {run}"
        if finding is None:
            problems.append(f"{where}: the registry does not list {PRELU_DEVIATION}")
        elif tuple(run["inferred"]) != data:
            problems.append(f"{where}: shape inference does not answer data's shape")
        elif "error" not in run and tuple(run["shape"]) != data:
            problems.append(f"{where}: the CPU plugin does not return data's shape")
        elif says_runs and "error" in run:
            problems.append(f"{where}: the registry says the CPU plugin runs it")
    assert not problems, "\n".join(problems)
    # both kinds were drawn, and some of those the registry hedges on fail, some run
    assert tally[("registry: runs", True)] >= 10 and tally[("registry: some fail", False)] >= 10, tally


# ---------------------------------------------------------------------------
# 4. Values on the CPU plugin, computed through the Plan
# ---------------------------------------------------------------------------


def _plan_view(arr, plan, i):
    return np.broadcast_to(arr.reshape(plan.aligned_shape(i)), plan.shape)


ADD_VALUE_CASES = [
    ("numpy", (2, 1, 5), (4, 1), None),
    ("numpy", (3, 2, 1, 4), (5, 4), None),
    ("numpy", (1, 5, 3), (5, 2, 1, 3), None),
    ("numpy", (2, 3), (), None),
    ("pdpd", (2, 3, 4, 5), (4, 5), "natural"),
    ("pdpd", (2, 3, 4, 5), (4, 1), "natural"),
    ("pdpd", (2, 3, 4, 5), (1, 3, 1, 5), "natural"),
    ("pdpd", (2, 3, 4, 5), (), "natural"),
    ("pdpd", (2, 3, 4, 5), (3, 4), 1),
    ("pdpd", (2, 3, 4, 5), (3, 1), 1),
    ("pdpd", (2, 3, 4, 5), (1, 3), 0),
]


def _add_value_id(m, a, b, ax):
    axis = f"-axis{len(a) - len(b) if ax == 'natural' else ax}" if m == "pdpd" else ""
    return f"{m}-{format_shape(a)}+{format_shape(b)}" + axis


@pytest.mark.parametrize("mode, a, b, axis", ADD_VALUE_CASES, ids=[_add_value_id(*case) for case in ADD_VALUE_CASES])
def test_add_values_on_cpu(mode, a, b, axis):
    if axis == "natural":
        axis = len(a) - len(b)
    attrs = {"axis": axis} if mode == "pdpd" else {}
    plan = bcast.infer(a, b, rule=mode, **attrs)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(a).astype(np.float32).reshape(a)
    y = np.asarray(rng.standard_normal(b), dtype=np.float32).reshape(b)
    got = cpu_run("Add", [x, y], auto_broadcast=mode, **attrs)
    want = _plan_view(x, plan, 0) + _plan_view(y, plan, 1)
    assert got.shape == plan.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_select_pdpd_values_on_cpu():
    """Select pdpd axis -1: each of cond and else at its own rank(then) - rank(input) (the CPU is right)."""
    shapes = ((5,), (2, 3, 4, 5), (3, 4, 5))
    plan = bcast.infer(*shapes, rule="openvino-select", auto_broadcast="pdpd")
    rng = np.random.default_rng(3)
    cond = rng.random(shapes[0]) < 0.5
    then = rng.standard_normal(shapes[1]).astype(np.float32)
    else_ = rng.standard_normal(shapes[2]).astype(np.float32)
    got = cpu_run("Select", [cond, then, else_], auto_broadcast="pdpd", axis=-1)
    want = np.where(_plan_view(cond, plan, 0), _plan_view(then, plan, 1), _plan_view(else_, plan, 2))
    np.testing.assert_array_equal(got, want)


BROADCAST_VALUE_CASES = [
    ("numpy", (16, 1, 1), (2, 16, 5, 5), None),
    ("explicit", (16,), (1, 16, 5, 5), (1,)),
    ("explicit", (5, 5), (1, 5, 5, 16), (1, 2)),
    ("explicit", (1, 1), (3, 4), (0, 1)),
    ("bidirectional", (3, 1), (2, 1, 6), None),
    ("bidirectional", (3, 4), (), None),
]


@pytest.mark.parametrize("mode, data, target, axes", BROADCAST_VALUE_CASES,
                         ids=[f"{m}-{format_shape(d)}-to-{format_shape(t)}" for m, d, t, _ in BROADCAST_VALUE_CASES])
def test_broadcast_values_on_cpu(mode, data, target, axes):
    if mode == "numpy":
        plan, i = bcast.infer(target, data, rule="unidirectional"), 1
    elif mode == "explicit":
        plan, i = bcast.infer(data, target, rule="explicit", axes_mapping=axes), 0
    else:
        plan, i = bcast.infer(data, target, rule="bidirectional"), 0
    x = np.arange(int(np.prod(data)), dtype=np.float32).reshape(data)
    got = cpu_run("Broadcast", [x, target] + ([] if axes is None else [axes]), mode=mode)
    np.testing.assert_array_equal(got, _plan_view(x, plan, i))
