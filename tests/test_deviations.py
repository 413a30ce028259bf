"""Proofs of the deviation registry (src/bcast/deviations.py).

Every record there names one test here.  Each test runs the runtime on the
cases listed for the record in ``CASES`` and passes while the runtime still
deviates from its spec.  The day a runtime is fixed, the test fails with a
message saying so and asking for the registry entry to be revisited.

``test_registry_names_these_tests_and_checks_fire`` ties the two together:
every record names a function of this module, and every record's ``check``
fires (through :func:`bcast.deviations.applicable`) on the very cases its test
runs, which are taken from ``CASES`` -- a record about some ops (``only_ops``)
with the op named, and only then.  A record of values (no ``check``, e.g.
ncnn-fast-math) has no shape case; its test runs the values.

The runtimes run through bcast's oracles (:mod:`bcast.oracles`), as in the
differential tests.  Cases that kill the process (ncnn on an empty blob,
OpenVINO compiling a scalar Broadcast to [], broadcasting empty data, or
evaluating an empty output) run in a child process, judged by its return
code; so do runs that read memory they should not (OpenVINO's CPU plugin on
a Broadcast pdpd whose data runs past the target, on a PRelu with an
unchecked slope).
"""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import bcast
import bcast.ncnn
import bcast.onnx
from bcast.deviations import DEVIATIONS, applicable
from bcast.oracles import RuntimeRefused, last_line
from bcast.oracles._onnx_model import make_model

DEV = {d.id: d for d in DEVIATIONS}
TEST_FILE = "tests/test_deviations.py"

# record id -> the (shapes, query) each proof runs: the query is bcast.infer's rule and attributes, and for a
# record about some ops (only_ops) the op and its other attributes, as bcast.deviations.applicable takes them.
# A deviation of values (no check) has no shape case.
CASES = {
    "openvino-pdpd-trailing-ones": [
        (((2, 3), (3, 1)), dict(rule="pdpd", axis=1)),
        (((3, 1), (2, 3), (3, 1)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=1)),
    ],
    "openvino-python-pdpd-axis0": [
        (((2, 3, 4, 5), (4, 5)), dict(rule="pdpd", axis=-1)),
    ],
    "openvino-cpu-pdpd-ops": [
        (((2, 3, 4, 5), (3, 4)), dict(rule="pdpd", axis=1)),  # numpy's placement does not fit: fails
        (((3, 3), (3,)), dict(rule="pdpd", axis=0, op="Subtract")),  # it fits: computed, B along the last axis
        (((3, 1, 1), (3, 1)), dict(rule="pdpd", axis=0, op="Subtract", op_attrs={"element_type": "int64"})),
        (((2, 3), (3,)), dict(rule="pdpd", axis=1, op="Equal", op_attrs={"element_type": "float32"})),
    ],
    "openvino-cpu-pdpd-reference-fallback": [
        (((2, 3), (3,)), dict(rule="pdpd", axis=-1, op="Multiply", op_attrs={"element_type": "int8"})),
        (((2, 3, 4, 5), (4, 5)), dict(rule="pdpd", axis=-1, op="Mod", op_attrs={"element_type": "float32"})),
    ],
    "openvino-cpu-pdpd-squared-difference-int": [
        (((2, 3), (2, 3)), dict(rule="pdpd", axis=-1, op="SquaredDifference", op_attrs={"element_type": "int32"})),
    ],
    "openvino-cpu-select-pdpd-axis": [
        (((3,), (2, 3), (3,)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=1)),
        (((2, 3), (2, 3), (2, 3)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=0)),
    ],
    "openvino-broadcast-empty-data": [
        (((3, 0), (3, 0)), dict(rule="unidirectional")),  # Broadcast-3 mode numpy: target, then data
        (((0,), (2, 0)), dict(rule="bidirectional")),
    ],
    "openvino-evaluate-empty-output": [
        (((2, 0, 3), (3,)), dict(rule="numpy")),
        (((2, 0, 3), (3,), (3,)), dict(rule="openvino-select", auto_broadcast="numpy")),
        (((0, 3, 3), (3,)), dict(rule="openvino-prelu")),
    ],
    "openvino-evaluate-pdpd-greater": [
        (((2, 3), (3,)), dict(rule="pdpd", axis=-1, op="Greater")),
        (((2, 3), (3,)), dict(rule="pdpd", axis=-1, op="GreaterEqual")),
    ],
    "openvino-cpu-integer-values": [],  # values, not shapes
    "openvino-cpu-minmax-nan": [],
    "openvino-prelu-element-types": [],  # element types, not shapes
    "openvino-select-reference-pdpd": [
        (((5,), (2, 3, 4, 5), (3, 4, 5)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=-1)),
    ],
    "openvino-broadcast-pdpd-stretches-target": [
        (((3,), (2, 1)), dict(rule="openvino-broadcast-pdpd", axis=-1)),
        (((0,), (2, 1)), dict(rule="openvino-broadcast-pdpd", axis=-1)),  # the output is smaller
        (((3, 1), (1, 1)), dict(rule="openvino-broadcast-pdpd", axis=1)),  # fails at run time
    ],
    "openvino-broadcast-pdpd-long-data": [
        (((3, 5), (2, 3)), dict(rule="openvino-broadcast-pdpd", axis=1)),
        (((5,), (2, 3)), dict(rule="openvino-broadcast-pdpd", axis=7)),
        (((1,), ()), dict(rule="openvino-broadcast-pdpd", axis=0)),
        (((3, 1), (3, 3)), dict(rule="openvino-broadcast-pdpd", axis=1)),  # valid: the extra dim is a trailing 1
    ],
    "openvino-pdpd-zero-size": [
        (((0,), (1,)), dict(rule="pdpd", axis=-1)),  # a 1 facing a 0: refused
        (((2, 0), (1, 1)), dict(rule="pdpd", axis=0)),
        (((1,), (2, 0), (0,)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=-1)),
        (((2, 1), (0,)), dict(rule="pdpd", axis=-1)),  # a 0 facing a 1: accepted, (2,0)
        (((0,), (1, 1), (0,)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=-1)),  # (1,0)
    ],
    "openvino-explicit-scalar-axes": [
        (((), (1, 3)), dict(rule="explicit", axes_mapping=[0])),
    ],
    "openvino-broadcast-pdpd-short-data": [
        (((3,), (2, 3, 6)), dict(rule="openvino-broadcast-pdpd", axis=1)),
    ],
    "openvino-explicit-duplicate-axes": [
        (((1, 3), (2, 3, 4)), dict(rule="explicit", axes_mapping=[1, 1])),
    ],
    "openvino-prelu-unchecked": [
        (((3, 1), (1, 4)), dict(rule="openvino-prelu")),
        (((2, 1), (3,)), dict(rule="openvino-prelu")),
    ],
    "openvino-cpu-bidirectional-zero": [
        (((0,), (2, 1)), dict(rule="bidirectional")),
        (((1,), (2, 0)), dict(rule="bidirectional")),
    ],
    "openvino-cpu-scalar-to-scalar": [
        (((), ()), dict(rule="bidirectional")),
        (((), ()), dict(rule="unidirectional")),  # Broadcast-3 mode numpy
    ],
    "ncnn-garbage": [
        (((2, 3, 4), (3, 4)), dict(rule="ncnn")),
        (((3, 2), (4, 2)), dict(rule="ncnn")),
    ],
    "ncnn-empty-blob": [
        (((0, 3), (1, 3)), dict(rule="ncnn")),
    ],
    "onnxruntime-prelu-bidirectional": [
        (((3, 1), (1, 4)), dict(rule="unidirectional")),
    ],
    "reference-prelu-bidirectional": [
        (((3, 1), (1, 4)), dict(rule="unidirectional")),
    ],
    "reference-prelu-axis-fallback": [
        (((2, 3, 4, 5), (3,)), dict(rule="unidirectional")),
    ],
    "onnx-shape-inference-unchecked": [
        (((3, 4), (4, 5), (4,)), dict(rule="onnx-gemm")),
        (((3, 1), (1, 4)), dict(rule="unidirectional")),
    ],
    "onnxruntime-no-legacy-opsets": [
        (((2, 3, 4, 5), (3, 4)), dict(rule="onnx-legacy", broadcast=1, axis=1)),
    ],
    "reference-legacy-ignores-broadcast": [
        (((3, 3), (3,)), dict(rule="onnx-legacy", broadcast=1, axis=0)),
        (((2, 3, 4, 5), (5,)), dict(rule="onnx-legacy", broadcast=0)),
        (((2, 3, 4, 5), (3, 4)), dict(rule="onnx-legacy", broadcast=1, axis=1)),
    ],
    "onnx-version-converter-axis": [
        (((2, 3, 4, 5), (3, 4)), dict(rule="onnx-legacy", broadcast=1, axis=1)),
        (((2, 3, 4, 5), (5,)), dict(rule="onnx-legacy", broadcast=1, axis=-1)),
        (((2, 3, 4, 5), (2, 3)), dict(rule="onnx-legacy", broadcast=1, axis=0)),
    ],
    "reference-pow1-legacy-attrs": [
        (((2, 3, 4, 5), (3, 4)), dict(rule="onnx-legacy", broadcast=1, axis=1, op="Pow")),
        (((2, 3), (3,)), dict(rule="onnx-legacy", broadcast=0, op="Pow")),
    ],
    "reference-variadic-before-8-broadcasts": [
        (((2, 3), (3,)), dict(rule="none", op="Max")),
        (((2, 1), (3,)), dict(rule="none", op="Min")),
        (((2, 3), (1, 3), (2, 3)), dict(rule="none", op="Sum")),
        (((2, 3), ()), dict(rule="none", op="Mean")),
    ],
    "reference-gemm-beta0-unchecked-c": [
        (((2, 3), (3, 4), (3,)), dict(rule="onnx-gemm", op="Gemm", op_attrs={"beta": 0.0})),
    ],
    "onnxruntime-gemm-rank1-a": [
        (((5,), (5, 3)), dict(rule="onnx-gemm")),
        (((5,), (3, 5), (1, 3)), dict(rule="onnx-gemm", transB=1)),
    ],
    "reference-gemm-any-rank": [
        (((2, 3, 4), (4, 5)), dict(rule="onnx-gemm")),
        (((1, 4), ()), dict(rule="onnx-gemm")),
        (((5,), (5, 3)), dict(rule="onnx-gemm")),
    ],
    "reference-mean-in-place": [
        (((2, 1), (4, 2, 1)), dict(rule="numpy", op="Mean")),
    ],
    "ncnn-fast-math": [],  # values, not shapes
    "onnxruntime-where-negative-zero": [],  # values, not shapes
}


# -- helpers -----------------------------------------------------------------


def _installed(module) -> str:
    return getattr(module, "__version__", "?")


def _fixed(dev_id: str, module, what: str):
    """Fail: the runtime no longer deviates as the registry says."""
    d = DEV[dev_id]
    pytest.fail(
        f"deviation {dev_id!r} seems fixed in {d.runtime} {_installed(module)} (recorded for {d.version}): "
        f"{what}. Revisit its entry in src/bcast/deviations.py (and bcast's note for it).",
        pytrace=False,
    )


def _case(dev_id: str, i: int = 0):
    return CASES[dev_id][i]


def _rule_attrs(attrs: dict) -> dict:
    """A case's query without the op: what bcast.infer takes."""
    return {k: v for k, v in attrs.items() if k not in ("op", "op_attrs")}


def _ids(findings) -> list:
    return [f.deviation.id for f in findings]


def _findings(dev_id: str, i: int = 0) -> list:
    """The record's findings on its case ``i`` (one, where its check fires)."""
    shapes, attrs = _case(dev_id, i)
    return [f for f in applicable(*shapes, **attrs) if f.deviation.id == dev_id]


def _plan(dev_id: str, i: int = 0):
    shapes, attrs = _case(dev_id, i)
    return bcast.infer(*shapes, **_rule_attrs(attrs))


def _expect_error(dev_id: str, i: int = 0):
    shapes, attrs = _case(dev_id, i)
    with pytest.raises(bcast.BroadcastError):
        bcast.infer(*shapes, **_rule_attrs(attrs))


def _aligned(plan, arrays):
    """Every input viewed at the output shape, the way bcast's plan places it."""
    return [np.broadcast_to(x.reshape(plan.aligned_shape(i)), plan.shape) for i, x in enumerate(arrays)]


def _run_child(code: str):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


# -- OpenVINO ----------------------------------------------------------------


def _ov():
    """openvino and its oracle (shape inference, the CPU plugin, Model.evaluate)."""
    ov = pytest.importorskip("openvino")
    from bcast.oracles import openvino as oracle

    return ov, oracle


def _pdpd(axis) -> dict:
    """The oracle's attributes for an element-wise op (or Select) with auto_broadcast=pdpd and ``axis``."""
    return {"auto_broadcast": "pdpd", "axis": axis}


def _refusal(fn, *args, **kwargs):
    """``fn``'s result, or the message of the RuntimeRefused it raises."""
    try:
        return fn(*args, **kwargs)
    except RuntimeRefused as e:
        return e.message


def test_openvino_pdpd_does_not_strip_trailing_ones():
    ov, oracle = _ov()
    dev = "openvino-pdpd-trailing-ones"
    (a_shape, b_shape), attrs = _case(dev, 0)
    assert _plan(dev, 0).shape == (2, 3)  # PDPD rule 5: B (3,1) is read as (3)
    got = _refusal(oracle.infer_shape, "Add", [a_shape, b_shape], **_pdpd(attrs["axis"]))
    if isinstance(got, tuple):
        _fixed(dev, ov, f"Add pdpd axis 1 of A {a_shape} and B {b_shape} is accepted, shape {got}")
    assert "Argument shapes are inconsistent" in got, got

    shapes, attrs = _case(dev, 1)
    assert _plan(dev, 1).shape == (2, 3)
    got = _refusal(oracle.infer_shape, "Select", shapes, **_pdpd(attrs["axis"]))
    if isinstance(got, tuple):
        _fixed(dev, ov, f"Select pdpd axis 1 of cond, then, else {shapes} is accepted, shape {got}")
    assert "tensor shape is not broadcastable" in got, got


def test_openvino_python_pdpd_defaults_axis_to_zero():
    """About openvino's Python builders themselves, so built with them (the oracle always sets the axis)."""
    ov, oracle = _ov()
    import openvino.opset16 as ops

    dev = "openvino-python-pdpd-axis0"
    (a_shape, b_shape), attrs = _case(dev)
    assert _plan(dev).shape == a_shape  # pdpd, axis -1: B (4,5) fits A's last two axes
    with pytest.raises(bcast.BroadcastError):  # ... and with axis 0 it does not
        bcast.infer(a_shape, b_shape, rule="pdpd", axis=0)

    # The same pair with the axis given explicitly as -1 is fine in OpenVINO.
    assert oracle.infer_shape("Add", [a_shape, b_shape], **_pdpd(-1)) == a_shape
    a, b = (ops.parameter(list(s), np.float32, name=n) for s, n in ((a_shape, "A"), (b_shape, "B")))
    try:
        node = ops.add(a, b, auto_broadcast="pdpd")
    except RuntimeError as e:
        assert "Argument shapes are inconsistent" in str(e), str(e)
    else:
        axis = node.get_attributes().get("auto_broadcast.auto_broadcast_axis")
        if axis == 0:
            pytest.fail(f"ops.add(pdpd) has axis 0 but accepted A {a_shape}, B {b_shape}: unexpected")
        _fixed(dev, ov, f"ops.add(a, b, auto_broadcast='pdpd') accepts A {a_shape}, B {b_shape} (axis {axis})")

    # The Broadcast builder has the same default: data (3,) into target [2,3] needs axis -1 (= 1);
    # with axis 0, 3 faces 2 and OpenVINO refuses.
    assert bcast.result_shape((3,), (2, 3), rule="openvino-broadcast-pdpd") == (2, 3)
    assert dev in _ids(applicable((3,), (2, 3), rule="openvino-broadcast-pdpd"))
    data = ops.parameter([3], np.float32, name="data")
    try:
        node = ops.broadcast(data, np.array([2, 3], dtype=np.int64), broadcast_spec="pdpd")
    except RuntimeError as e:
        assert "Expecting either 1 or 3" in str(e), str(e)
    else:
        _fixed(dev, ov, f"ops.broadcast(pdpd) accepts data (3,) into [2,3]: {node.get_output_partial_shape(0)}")


def _ov_values(shape, dtype, low=1, high=9, seed=0):
    """Random integers in [low, high) of ``dtype`` (exact in every element type, no 0 divisor)."""
    return np.random.default_rng(seed).integers(low, high, size=shape).astype(dtype)


def test_openvino_cpu_pdpd_ignores_axis():
    """The CPU plugin broadcasts Subtract, Divide (floats), the comparisons, the logical and the bitwise ops
    with an explicit pdpd axis as numpy does; Model.evaluate (and Add on the CPU) place B from the axis."""
    ov, oracle = _ov()
    dev = "openvino-cpu-pdpd-ops"
    fixed = []
    # 0: B right-aligned does not fit A: the CPU fails to compile; evaluate and Add are right
    (a_shape, b_shape), attrs = _case(dev, 0)
    A, B = _ov_values(a_shape, np.float32), _ov_values(b_shape, np.float32, seed=1)
    xa, xb = _aligned(_plan(dev, 0), [A, B])
    np.testing.assert_array_equal(oracle.run("Add", [A, B], static=True, **_pdpd(attrs["axis"])), xa + xb)
    for op, want in (("Subtract", xa - xb), ("Divide", xa / xb), ("Equal", xa == xb)):
        np.testing.assert_allclose(oracle.run(op, [A, B], device="evaluate", **_pdpd(attrs["axis"])), want, rtol=1e-6)
        got = _refusal(oracle.run, op, [A, B], static=True, **_pdpd(attrs["axis"]))
        if not isinstance(got, str):
            fixed.append(f"{op} pdpd axis 1 of A {a_shape}, B {b_shape} compiles on the CPU")
        else:
            assert "Argument shapes are inconsistent" in got, got
    # 1, 2: it fits: the CPU computes B right-aligned, whatever the shape
    for i, dtype in ((1, np.float32), (2, np.int64)):
        (a_shape, b_shape), attrs = _case(dev, i)
        A, B = _ov_values(a_shape, dtype, 10, 20), _ov_values(b_shape, dtype, seed=1)
        spec = np.subtract(*_aligned(_plan(dev, i), [A, B]))
        np.testing.assert_array_equal(oracle.run("Subtract", [A, B], device="evaluate", **_pdpd(attrs["axis"])), spec)
        got = oracle.run("Subtract", [A, B], static=True, **_pdpd(attrs["axis"]))
        if got.shape == spec.shape and np.array_equal(got, spec):
            fixed.append(f"Subtract pdpd axis 0 of A {a_shape}, B {b_shape} is right on the CPU")
        else:
            np.testing.assert_array_equal(got, A - B)  # numpy's placement: (3,3) and (3,3,1)
        (finding,) = _findings(dev, i)
        assert bcast.format_shape((A - B).shape) in finding.note, finding.note
    # 3: Equal float32 with the axis rank(A) - rank(B) given explicitly: fails, where -1 runs
    (a_shape, b_shape), attrs = _case(dev, 3)
    A, B = _ov_values(a_shape, np.float32), _ov_values(b_shape, np.float32, 1, 3)
    got = _refusal(oracle.run, "Equal", [A, B], static=True, **_pdpd(attrs["axis"]))
    if not isinstance(got, str):
        fixed.append(f"Equal float32 pdpd axis 1 of A {a_shape}, B {b_shape} compiles on the CPU")
    np.testing.assert_array_equal(oracle.run("Equal", [A, B], static=True, **_pdpd(-1)), A == B)
    # The record is about these ops only: Add, Mod and integer Divide keep the axis
    for op, dtype in (("Add", "float32"), ("Mod", "int32"), ("Divide", "int32")):
        assert dev not in _ids(applicable((3, 3), (3,), rule="pdpd", axis=0, op=op,
                                          op_attrs={"element_type": dtype})), op
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


def test_openvino_cpu_pdpd_reference_fallback():
    """Each (op, element type) the record lists fails with rank(B) < rank(A) and runs with equal ranks."""
    ov, oracle = _ov()
    from bcast.deviations import _OV_CPU_NO_REFERENCE

    dev = "openvino-cpu-pdpd-reference-fallback"
    fixed = []
    for op, dtypes in _OV_CPU_NO_REFERENCE.items():
        cases = []
        for dtype in dtypes:
            A, B = _ov_values((2, 3), dtype, 1, 4), _ov_values((3,), dtype, 1, 3)
            cases += [([A, B], _pdpd(-1)), ([A, np.broadcast_to(B, (2, 3)).copy()], _pdpd(-1))]
            assert dev in _ids(applicable((2, 3), (3,), rule="pdpd", axis=-1, op=op,
                                          op_attrs={"element_type": dtype})), (op, dtype)
        got = oracle.run_many(op, cases)
        for dtype, lower, equal in zip(dtypes, got[::2], got[1::2]):
            assert isinstance(equal, np.ndarray), f"{op} {dtype} with equal shapes: {equal}"
            if not isinstance(lower, RuntimeRefused):
                fixed.append(f"{op} {dtype} pdpd of (2,3) and (3,) runs on the CPU")
            else:
                assert "Cannot fallback on ngraph reference implementation" in lower.message, lower.message
    # ... and not an element type the reference has a kernel for
    assert dev not in _ids(applicable((2, 3), (3,), rule="pdpd", op="Multiply", op_attrs={"element_type": "int32"}))
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


def test_openvino_cpu_pdpd_squared_difference_int():
    ov, oracle = _ov()
    dev = "openvino-cpu-pdpd-squared-difference-int"
    fixed = []
    for dtype in ("int32", "int64"):
        A, B = _ov_values((2, 3), dtype), _ov_values((2, 3), dtype, seed=1)
        got = _refusal(oracle.run, "SquaredDifference", [A, B], static=True, **_pdpd(-1))
        if not isinstance(got, str):
            fixed.append(f"SquaredDifference {dtype} pdpd of equal shapes compiles on the CPU")
        else:
            assert "Cannot fallback on ngraph reference implementation" in got, got
        # numpy broadcasting runs
        np.testing.assert_array_equal(oracle.run("SquaredDifference", [A, B], static=True), (A - B) ** 2)
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


def test_openvino_select_reference_pdpd_cond_axis():
    ov, oracle = _ov()
    dev = "openvino-select-reference-pdpd"
    (c_shape, t_shape, e_shape), attrs = _case(dev)
    plan = _plan(dev)
    C = np.array([True, False, True, False, False])
    T = np.arange(120, dtype=np.float32).reshape(t_shape)
    E = -1 - np.arange(60, dtype=np.float32).reshape(e_shape)
    want = np.where(*_aligned(plan, [C, T, E]))

    cpu = oracle.run("Select", [C, T, E], static=True, **_pdpd(attrs["axis"]))
    np.testing.assert_array_equal(cpu, want, err_msg="the CPU plugin should place cond at rank(then) - rank(cond) = 3")

    ref = oracle.run("Select", [C, T, E], device="evaluate", **_pdpd(attrs["axis"]))
    if np.array_equal(ref, want):
        _fixed(dev, ov, "Model.evaluate of Select pdpd axis -1 with cond (5,), then (2,3,4,5), else (3,4,5) "
                        "now agrees with the CPU plugin and with bcast")
    # What the reference does instead: cond placed at else's axis, 1, so it reads cond[0:3] there.
    at_else_axis = np.where(np.broadcast_to(C[:3].reshape(1, 3, 1, 1), plan.shape), T, np.broadcast_to(E, plan.shape))
    np.testing.assert_array_equal(ref, at_else_axis)


def test_openvino_broadcast_pdpd_stretches_target():
    ov, oracle = _ov()
    dev = "openvino-broadcast-pdpd-stretches-target"
    # data 3 cannot go into a target dim of 1, nor can data 0: OpenVINO gives (2,3), larger than the
    # target, and (2,0), smaller
    for i, want in enumerate([(2, 3), (2, 0)]):
        (d_shape, target), attrs = _case(dev, i)
        _expect_error(dev, i)
        out = _refusal(oracle.infer_shape, "Broadcast", [d_shape, target], mode="pdpd", axis=attrs["axis"])
        if isinstance(out, str):
            _fixed(dev, ov, f"Broadcast pdpd of data {d_shape} to target {list(target)} is refused: {out}")
        if out == tuple(target):
            _fixed(dev, ov, f"Broadcast pdpd of data {d_shape} to target {list(target)} gives the target shape")
        assert out == want, out
        (finding,) = _findings(dev, i)
        assert bcast.format_shape(want) in finding.note, finding.note
        if i == 0:  # the CPU plugin computes the stretched output
            D = np.array([1, 2, 3], np.float32)
            got = oracle.run("Broadcast", [D, target], static=True, mode="pdpd", axis=attrs["axis"])
            np.testing.assert_array_equal(got, np.broadcast_to(D, (2, 3)))
    # data that also runs past the target's end (a trailing 1): inferred (1,3), but neither device runs it
    (d_shape, target), attrs = _case(dev, 2)
    _expect_error(dev, 2)
    assert oracle.infer_shape("Broadcast", [d_shape, target], mode="pdpd", axis=attrs["axis"]) == (1, 3)
    D = np.arange(1, 4, dtype=np.float32).reshape(d_shape)
    for how in ({"static": True}, {"device": "evaluate"}):
        got = _refusal(oracle.run, "Broadcast", [D, target], mode="pdpd", axis=attrs["axis"], **how)
        if not isinstance(got, str):
            _fixed(dev, ov, f"Broadcast pdpd axis 1 of data {d_shape} to {list(target)} runs ({how}): {got.shape}")
        assert "Tile with non-positive repeats" in got, got
    (finding,) = _findings(dev, 2)
    assert "Tile with non-positive repeats" in finding.note, finding.note


def test_openvino_broadcast_pdpd_short_data():
    ov, oracle = _ov()
    dev = "openvino-broadcast-pdpd-short-data"
    (d_shape, target), attrs = _case(dev)
    plan = _plan(dev)
    assert plan.shape == target
    out = _refusal(oracle.infer_shape, "Broadcast", [d_shape, target], mode="pdpd", axis=attrs["axis"])
    if isinstance(out, tuple):
        _fixed(dev, ov, f"Broadcast pdpd axis 1 of data {d_shape} to target {list(target)} is accepted, shape {out}")
    assert "Accessing out-of-range dimension" in out, out
    # The workaround the note gives: write data with the trailing 1s; then OpenVINO computes bcast's plan.
    padded = d_shape + (1,) * (len(target) - attrs["axis"] - len(d_shape))
    D = np.array([1, 2, 3], np.float32)
    got = oracle.run("Broadcast", [D.reshape(padded), target], static=True, mode="pdpd", axis=attrs["axis"])
    np.testing.assert_array_equal(got, _aligned(plan, [D, np.zeros(target)])[0])


#: Broadcast pdpd on the CPU plugin, one case at a time, in a child: where data does not fit the plugin's
#: placement it reads memory it should not.
_OV_BPDPD_CPU = """
import json, numpy as np
from bcast.oracles import openvino as oracle
for data_shape, target, axis in {cases!r}:
    x = np.arange(1, 1 + int(np.prod(data_shape)), dtype=np.float32).reshape(data_shape)
    try:
        y = oracle.run("Broadcast", [x, target], static=True, mode="pdpd", axis=axis)
        out = {{"shape": list(y.shape), "values": y.ravel().tolist()}}
    except oracle.RuntimeRefused as e:
        out = {{"error": e.message}}
    print(json.dumps(out), flush=True)
"""


def _child_json(code: str):
    p = _run_child(code)
    assert p.returncode == 0, (
        f"the child died ({_signal_name(p.returncode) if p.returncode < 0 else p.returncode}): "
        f"{p.stderr.strip()[-500:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def test_openvino_broadcast_pdpd_long_data():
    ov, oracle = _ov()
    dev = "openvino-broadcast-pdpd-long-data"
    cases = CASES[dev]
    # Shape inference (Broadcast-3 and Broadcast-1) ignores data's dims past the target's last axis.
    for i, ((d_shape, target), attrs) in enumerate(cases):
        if i < 3:
            _expect_error(dev, i)  # rank(data) > rank(target) - axis with dims that are not trailing 1s
        else:
            plan = _plan(dev, i)  # rule 5: (3,1) is read as (3), placed at axis 1
            assert plan.shape == target and plan.aligned_shape(0) == (1, 3)
        for version in (3, 1):
            out = _refusal(oracle.infer_shape, "Broadcast", [d_shape, target], mode="pdpd", axis=attrs["axis"],
                           version=version)
            if isinstance(out, str):
                _fixed(dev, ov, f"Broadcast-{version} pdpd axis {attrs['axis']} of data {d_shape} to target "
                                f"{list(target)} is refused: {out}")
            assert out == target, f"Broadcast-{version} {d_shape} -> {list(target)}: {out}"
        (finding,) = _findings(dev, i)
        assert bcast.format_shape(target) in finding.note, finding.note

    # The CPU plugin ignores the axis and aligns data with the target's end (as numpy does).
    runs = _child_json(_OV_BPDPD_CPU.format(cases=[(s[0], s[1], a["axis"]) for s, a in cases]
                                            + [((3,), (3, 3), 1)]))  # the workaround for the last case
    assert len(runs) == len(cases) + 1, runs
    for i in (0, 1):  # (3,5) and (5,) aligned with the end of (2,3): 3 > 2, 5 > 3
        assert "Tile with non-positive repeats" in runs[i].get("error", ""), runs[i]
    assert runs[2] == {"shape": [], "values": [1.0]}, runs[2]  # (1,) into [] runs
    (d_shape, target), attrs = cases[3]
    D = np.arange(1, 4, dtype=np.float32).reshape(d_shape)
    spec = _aligned(bcast.infer(d_shape, target, **attrs), [D, np.zeros(target)])[0]  # D along axis 1
    cpu = np.array(runs[3]["values"], np.float32).reshape(runs[3]["shape"])
    if np.array_equal(cpu, spec):
        _fixed(dev, ov, f"the CPU plugin computes Broadcast pdpd axis 1 of data {d_shape} to {list(target)} "
                        "as the spec says")
    np.testing.assert_array_equal(cpu, np.broadcast_to(D, target))  # D along axis 0: aligned with the end
    # The note's workaround, data without the trailing 1, is right.
    fixed_data = np.array(runs[4]["values"], np.float32).reshape(runs[4]["shape"])
    np.testing.assert_array_equal(fixed_data, spec)
    (finding,) = _findings(dev, 3)
    assert "as (3,1)" in finding.note and "reshape data to (3,)" in finding.note, finding.note


def test_openvino_pdpd_zero_size():
    ov, oracle = _ov()
    dev = "openvino-pdpd-zero-size"
    # What OpenVINO's shape inference gives for each case: a refusal, or the shape (not A's, then's)
    ov_says = [None, None, None, (2, 0), (1, 0)]
    fixed = []
    for i, ((shapes, attrs), want) in enumerate(zip(CASES[dev], ov_says)):
        select = attrs["rule"] == "openvino-select"
        names = ("cond", "then", "else") if select else ("A", "B")
        op = "Select" if select else "Add"
        where = f"{op} pdpd axis {attrs['axis']} of " + ", ".join(f"{n} {s}" for n, s in zip(names, shapes))
        if want is None:  # the spec (and bcast) accept a 1 facing a 0, with A's (then's) shape
            assert _plan(dev, i).shape == shapes[1 if select else 0]
        else:  # and refuse a 0 facing a 1 (only B stretches)
            _expect_error(dev, i)
        got = _refusal(oracle.infer_shape, op, shapes, **_pdpd(attrs["axis"]))
        (finding,) = _findings(dev, i)
        if want is None:
            if isinstance(got, tuple):
                fixed.append(f"{where} is accepted: {got}")
            else:
                assert "inconsistent" in got or "not broadcastable" in got, got
                assert "refuses" in finding.note, finding.note
        elif got != want:
            fixed.append(f"{where} gives {got}, not {want}")
        else:
            assert bcast.format_shape(want) in finding.note, finding.note
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


def test_openvino_explicit_scalar_with_one_axis():
    ov, oracle = _ov()
    dev = "openvino-explicit-scalar-axes"
    (d_shape, target), attrs = _case(dev)
    _expect_error(dev)  # one axes_mapping entry for a rank-0 data
    assert bcast.infer(d_shape, target, rule="explicit", axes_mapping=[]).shape == target  # the spec's way
    axes = attrs["axes_mapping"]
    out = _refusal(oracle.infer_shape, "Broadcast", [d_shape, target, axes], mode="explicit")
    if isinstance(out, str):
        _fixed(dev, ov, f"Broadcast explicit of scalar data to {list(target)} with axes_mapping {axes} is "
                        f"refused: {out}")
    assert out == target
    got = oracle.run("Broadcast", [np.array(7.0, np.float32), target, axes], static=True, mode="explicit")
    np.testing.assert_array_equal(got, np.full(target, 7.0, np.float32))
    # Model.evaluate refuses it at run time
    ref = _refusal(oracle.run, "Broadcast", [np.array(7.0, np.float32), target, axes], device="evaluate",
                   mode="explicit")
    if not isinstance(ref, str):
        _fixed(dev, ov, f"Model.evaluate runs Broadcast explicit of scalar data with axes_mapping {axes}")
    assert "doesn't match rank of input tensor" in ref, ref
    # The scalar counts as one dim of 1: onto a target dim of 2 it is refused, as a (1,) would be.
    with pytest.raises(RuntimeRefused, match="Expected 1. Got 2"):
        oracle.infer_shape("Broadcast", [(), (2, 3), axes], mode="explicit")
    assert dev not in _ids(applicable((), (2, 3), rule="explicit", axes_mapping=[0]))


#: PRelu on the CPU plugin, in a child (it reads slope elements no rule pairs with data's).
_OV_PRELU_CPU = """
import json, numpy as np
from bcast.oracles import openvino as oracle
for x_shape, s_shape in {cases!r}:
    X = -np.arange(1, 1 + int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape)  # all negative
    S = 10 * np.arange(1, 1 + int(np.prod(s_shape)), dtype=np.float32).reshape(s_shape)
    out = {{"inferred": list(oracle.infer_shape("PRelu", [x_shape, s_shape]))}}
    try:
        y = oracle.run("PRelu", [X, S], static=True)
        out.update(shape=list(y.shape), values=y.ravel().tolist())
    except oracle.RuntimeRefused as e:
        out["error"] = e.message
    print(json.dumps(out), flush=True)
"""


def test_openvino_prelu_slope_unchecked():
    ov, _ = _ov()
    dev = "openvino-prelu-unchecked"
    cases = CASES[dev]
    for i in range(len(cases)):
        _expect_error(dev, i)  # neither per channel nor numpy-broadcastable into data
    runs = _child_json(_OV_PRELU_CPU.format(cases=[shapes for shapes, _ in cases]))
    assert len(runs) == len(cases), runs
    for i, (((x_shape, s_shape), attrs), run) in enumerate(zip(cases, runs)):
        where = f"PRelu of data {x_shape} with slope {s_shape}"
        assert tuple(run["inferred"]) == x_shape, f"{where}: shape inference gives {run['inferred']}"
        if "error" in run:
            _fixed(dev, ov, f"{where} no longer runs on the CPU plugin: {run['error']}")
        assert tuple(run["shape"]) == x_shape, run
        X = -np.arange(1, 1 + int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape)
        last = 10 * float(np.prod(s_shape))  # the slope's last element
        np.testing.assert_array_equal(np.array(run["values"], np.float32).reshape(x_shape), X * last,
                                      err_msg=f"{where}: expected every element times the slope's last one")
        (finding,) = _findings(dev, i)
        assert "compiles and runs" in finding.note and bcast.format_shape(x_shape) in finding.note, finding.note


def test_openvino_explicit_accepts_duplicate_axes():
    ov, oracle = _ov()
    dev = "openvino-explicit-duplicate-axes"
    (d_shape, target), attrs = _case(dev)
    _expect_error(dev)
    axes = attrs["axes_mapping"]
    out = _refusal(oracle.infer_shape, "Broadcast", [d_shape, target, axes], mode="explicit")
    if isinstance(out, str):
        _fixed(dev, ov, f"Broadcast explicit with axes_mapping {axes} is refused: {out}")
    assert out == target
    D = np.array([[1, 2, 3]], np.float32)
    cpu = oracle.run("Broadcast", [D, target, axes], static=True, mode="explicit")
    ref = oracle.run("Broadcast", [D, target, axes], device="evaluate", mode="explicit")
    if np.array_equal(cpu, ref):
        _fixed(dev, ov, f"Broadcast explicit with axes_mapping {axes} is accepted and the CPU plugin and "
                        "the reference now agree")
    # Where the mapping is wrong in another way too, OpenVINO refuses it, and the registry does not list it.
    for d2, t2, a2 in [((1,), (1,), [0, 0]), ((3, 4), (2, 3, 4), [1, 1])]:  # length != rank; 4 vs target 3
        with pytest.raises(RuntimeRefused):
            oracle.infer_shape("Broadcast", [d2, t2, a2], mode="explicit")
        assert dev not in _ids(applicable(d2, t2, rule="explicit", axes_mapping=a2))


def test_openvino_cpu_bidirectional_zero():
    ov, oracle = _ov()
    dev = "openvino-cpu-bidirectional-zero"
    (d_shape, target), attrs = _case(dev)
    plan = _plan(dev)
    assert plan.shape == (2, 0)
    # OpenVINO's own shape inference agrees with bcast (and numpy) ...
    assert oracle.infer_shape("Broadcast", [d_shape, target], mode="bidirectional") == plan.shape
    # ... but the CPU plugin refuses to compile it
    got = _refusal(oracle.run, "Broadcast", [np.zeros(d_shape, np.float32), target], static=True,
                   mode="bidirectional")
    if not isinstance(got, str):
        _fixed(dev, ov, f"Broadcast bidirectional of data {d_shape} to {list(target)} compiles on CPU, "
                        f"output shape {got.shape}")
    assert "cannot be broadcasted" in got, got

    # data (1,) into [2,0]: a static-shape model keeps the 1; a dynamic one and shape inference give (2,0)
    (d_shape, target), _ = _case(dev, 1)
    assert _plan(dev, 1).shape == (2, 0)
    assert oracle.infer_shape("Broadcast", [d_shape, target], mode="bidirectional") == (2, 0)
    D = np.ones(d_shape, np.float32)
    assert oracle.run("Broadcast", [D, target], mode="bidirectional").shape == (2, 0)
    got = oracle.run("Broadcast", [D, target], static=True, mode="bidirectional")
    if got.shape == (2, 0):
        _fixed(dev, ov, f"Broadcast bidirectional of data {d_shape} to {list(target)} gives (2,0) on the CPU")
    np.testing.assert_array_equal(got, np.ones((2, 1), np.float32))
    (finding,) = _findings(dev, 1)
    assert "(2,1)" in finding.note, finding.note


#: A scalar Broadcast to [] on the CPU plugin, in a child: compiling it kills the process.
_OV_SCALAR = """
import numpy as np
from bcast.oracles import openvino as oracle
y = oracle.run("Broadcast", [np.array(3.0, np.float32), []], static=True, mode={mode!r})
print("compiled; output shape", y.shape, flush=True)
"""


def test_openvino_cpu_scalar_to_scalar_crashes():
    ov, _ = _ov()
    dev = "openvino-cpu-scalar-to-scalar"
    outcomes = []
    for (shapes, attrs), mode in zip(CASES[dev], ("bidirectional", "numpy")):
        assert bcast.infer(*shapes, **attrs).shape == ()
        p = _run_child(_OV_SCALAR.format(mode=mode))
        outcomes.append((mode, p))
    crashed = [(m, p.returncode) for m, p in outcomes if p.returncode < 0]
    if len(crashed) != len(outcomes):
        told = "; ".join(
            f"mode {m}: rc {p.returncode}, stdout {p.stdout.strip()!r}, stderr {p.stderr.strip()[-300:]!r}"
            for m, p in outcomes if p.returncode >= 0
        )
        _fixed(dev, ov, f"compiling a scalar Broadcast to [] no longer kills the process: {told}")
    for mode, rc in crashed:  # a segmentation fault in 2026.4.1
        assert rc == -signal.SIGSEGV, f"mode {mode}: killed by {_signal_name(rc)}, expected SIGSEGV"


def test_openvino_cpu_select_pdpd_axis():
    ov, oracle = _ov()
    dev = "openvino-cpu-select-pdpd-axis"
    fixed = []
    for i, (shapes, attrs) in enumerate(CASES[dev]):
        C = np.arange(int(np.prod(shapes[0]))).reshape(shapes[0]) % 2 == 0
        T = _ov_values(shapes[1], np.float32, 1, 9, seed=i)
        E = -_ov_values(shapes[2], np.float32, 1, 9, seed=i + 1)
        want = np.where(*_aligned(_plan(dev, i), [C, T, E]))
        np.testing.assert_array_equal(oracle.run("Select", [C, T, E], device="evaluate", **_pdpd(attrs["axis"])), want)
        got = _refusal(oracle.run, "Select", [C, T, E], static=True, **_pdpd(attrs["axis"]))
        if not isinstance(got, str):
            fixed.append(f"Select pdpd axis {attrs['axis']} of {shapes} compiles on the CPU")
        else:
            assert "not broadcastable" in got or "Unsupported auto broadcast specification" in got, got
    # int32 and int64 run them right
    for dtype in ("int32", "int64"):
        C, T, E = np.array([True, False, True]), np.ones((2, 3), dtype), np.zeros(3, dtype)
        np.testing.assert_array_equal(oracle.run("Select", [C, T, E], static=True, **_pdpd(1)), np.where(C, T, E))
        assert dev not in _ids(applicable((3,), (2, 3), (3,), rule="openvino-select", auto_broadcast="pdpd", axis=1,
                                          op_attrs={"element_type": dtype}))
    # the same first case with axis -1 (which means 1 for else, 1 for cond) runs; so does an empty output
    C, T, E = np.array([True, False, True]), np.ones((2, 3), np.float32), np.zeros(3, np.float32)
    np.testing.assert_array_equal(oracle.run("Select", [C, T, E], static=True, **_pdpd(-1)), np.where(C, T, E))
    empty = [np.ones(0, bool), np.ones((2, 0), np.float32), np.ones(0, np.float32)]
    assert oracle.run("Select", empty, static=True, **_pdpd(1)).shape == (2, 0)
    assert dev not in _ids(applicable((0,), (2, 0), (0,), rule="openvino-select", auto_broadcast="pdpd", axis=1))
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


#: One Broadcast of data with a 0 dim, in a child: it dies of SIGFPE.
_OV_EMPTY_DATA = """
import numpy as np
from bcast.oracles import openvino as oracle
y = oracle.run("Broadcast", [np.zeros({shape}, np.float32), {target}], {how}, mode={mode!r})
print("survived; output shape", y.shape, flush=True)
"""


def test_openvino_broadcast_of_empty_data_crashes():
    ov, oracle = _ov()
    dev = "openvino-broadcast-empty-data"
    runs = []
    for (shapes, attrs), mode in zip(CASES[dev], ("numpy", "bidirectional")):
        target, data = shapes if mode == "numpy" else shapes[::-1]
        assert _plan(dev, len(runs) // 2).shape == target  # the spec: the empty target shape
        # a CPU model of dynamic shapes returns it (in-process: it does not crash)
        assert oracle.run("Broadcast", [np.zeros(data, np.float32), list(target)], mode=mode).shape == target
        for how in ("static=True", "device='evaluate'"):
            p = _run_child(_OV_EMPTY_DATA.format(shape=data, target=list(target), how=how, mode=mode))
            runs.append((f"Broadcast mode {mode} of data {data} to {list(target)} ({how})", p))
    survived = [f"{what}: rc {p.returncode}, {p.stdout.strip()!r}" for what, p in runs if p.returncode >= 0]
    if survived:
        _fixed(dev, ov, "; ".join(survived))
    for what, p in runs:
        assert p.returncode == -signal.SIGFPE, f"{what}: killed by {_signal_name(p.returncode)}, expected SIGFPE"


#: Model.evaluate of an op with an empty output, repeated, in a child: it corrupts the heap.
_OV_EMPTY_OUTPUT = """
import numpy as np
from bcast.oracles import openvino as oracle
inputs = [np.ones(s, {dtypes!r}[i]) for i, s in enumerate({shapes!r})]
for _ in range(100):
    y = oracle.run({op!r}, inputs, device="evaluate")
print("survived; output shape", y.shape, flush=True)
"""


def test_openvino_evaluate_empty_output_corrupts_memory():
    ov, oracle = _ov()
    dev = "openvino-evaluate-empty-output"
    element_types = {"Add": ["int64"] * 2, "Select": ["bool", "int64", "int64"], "PRelu": ["float32"] * 2}
    for i, (op, dtypes) in enumerate(element_types.items()):
        shapes, _ = _case(dev, i)
        inputs = [np.ones(s, t) for s, t in zip(shapes, dtypes)]
        empty = shapes[0] if op == "PRelu" else (2, 0, 3)
        assert bcast.openvino.run(op, *inputs).shape == _plan(dev, i).shape == empty
        p = _run_child(_OV_EMPTY_OUTPUT.format(op=op, shapes=shapes, dtypes=dtypes))
        if "survived" in p.stdout:
            _fixed(dev, ov, f"{op} of {shapes} in Model.evaluate, 100 times, exits with "
                            f"{p.returncode}: {p.stdout.strip()!r}")
        # the corrupted heap kills the process, or a corrupted size makes an allocation fail
        # (SIGABRT or SIGSEGV seen; any signal is accepted, the heap it corrupts is not ours to predict)
        assert p.returncode < 0 or "std::bad_alloc" in p.stderr, (
            f"{op}: rc {p.returncode} ({_signal_name(p.returncode) if p.returncode < 0 else 'exit'}), "
            f"{p.stderr.strip()[-300:]!r}")


def test_openvino_evaluate_pdpd_greater():
    ov, oracle = _ov()
    dev = "openvino-evaluate-pdpd-greater"
    A = np.array([[1, 5, 3], [4, 2, 6]], np.float32)
    B = np.array([3, 3, 3], np.float32)
    fixed = []
    for i, op in enumerate(("Greater", "GreaterEqual")):
        ((a_shape, b_shape), attrs) = _case(dev, i)
        assert (a_shape, b_shape) == (A.shape, B.shape)
        want = getattr(np, op.lower().replace("equal", "_equal"))(A, B)
        np.testing.assert_array_equal(oracle.run(op, [A, B], static=True, **_pdpd(attrs["axis"])), want)  # the CPU
        # the second row reads whatever memory follows B, which may by chance give the right answer:
        # only five right answers in a row count as fixed
        for _ in range(5):
            got = oracle.run(op, [A, B.copy()], device="evaluate", **_pdpd(attrs["axis"]))
            if not np.array_equal(got, want):
                break
        else:
            fixed.append(f"Model.evaluate {op} pdpd of {a_shape} and {b_shape} is right")
            continue
        np.testing.assert_array_equal(got[0], want[0])  # the first row reads B itself, the second what follows
    assert dev not in _ids(applicable((2, 3), (3,), rule="pdpd", op="Less"))
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


def test_openvino_cpu_integer_values():
    """A deviation of values (no check): bcast computes what Model.evaluate (the reference) computes."""
    ov, oracle = _ov()
    dev = "openvino-cpu-integer-values"
    assert DEV[dev].check is None and not CASES[dev]
    run = bcast.openvino.run
    cases = [  # what, op, (A, B), element type, attrs, a model of static shapes?, the CPU's values, the spec's
        # (None: an error)
        ("int8 saturates", "Add", [[100, -100], [100, 100]], "int8", {}, False, [127, 0], [-56, 0]),
        ("uint8 saturates", "Subtract", [[3], [5]], "uint8", {}, False, [0], [254]),
        ("int8 Divide rounds (dynamic)", "Divide", [[4, 7, -7], [7, 2, 2]], "int8", {}, False, [1, 4, -4], [0, 3, -4]),
        ("int8 Divide truncates (static)", "Divide", [[4, 7, -7], [7, 2, 2]], "int8", {}, True, [0, 3, -3],
         [0, 3, -4]),
        ("int64 in int32", "Add", [[2**40], [3]], "int64", {}, False, [3], [2**40 + 3]),
        ("Divide by 0", "Divide", [[7, 1], [0, 1]], "int32", {}, False, [np.iinfo(np.int32).min, 1], None),
    ] + [
        (f"{t} Divide truncates", "Divide", [[-7, 7], [2, -2]], t, {}, False, [-3, -3], [-4, -4])
        for t in ("int16", "int32", "int64")
    ]
    fixed = []
    for what, op, (x, y), dtype, attrs, static, cpu_model, spec in cases:
        X, Y = np.array(x, dtype), np.array(y, dtype)
        if spec is None:  # bcast refuses, as the reference does
            with pytest.raises(bcast.InputError, match="division by zero"):
                run(op, X, Y)
            with pytest.raises(RuntimeRefused, match="division by zero"):
                oracle.run(op, [X, Y], device="evaluate")
        else:
            assert run(op, X, Y, **attrs).tolist() == spec, what
            ref = _refusal(oracle.run, op, [X, Y], device="evaluate", **attrs)
            assert isinstance(ref, str) or ref.tolist() == spec, what  # (evaluate lacks int8, int16 Divide)
        cpu = oracle.run(op, [X, Y], static=static, **attrs).tolist()
        if cpu == spec:
            fixed.append(f"{what}: {op} {x} {y} gives {cpu} on the CPU")
        else:
            assert cpu == cpu_model, (what, cpu)
    # with pdpd the CPU honours python_division: floors by default, truncates without
    X, Y = np.array([-7, 7], np.int32), np.array([2, -2], np.int32)
    assert oracle.run("Divide", [X, Y], **_pdpd(-1)).tolist() == [-4, -4]
    assert oracle.run("Divide", [X, Y], python_division=False, **_pdpd(-1)).tolist() == [-3, -3]
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


def test_openvino_cpu_minmax_nan():
    ov, oracle = _ov()
    dev = "openvino-cpu-minmax-nan"
    assert DEV[dev].check is None and not CASES[dev]
    x, y = np.array([np.nan, 1], np.float32), np.array([1, np.nan], np.float32)
    fixed = []
    for op in ("Maximum", "Minimum"):
        spec = oracle.run(op, [x, y], device="evaluate")  # std::max / std::min: the first operand on a NaN
        np.testing.assert_array_equal(spec, [np.nan, 1])
        np.testing.assert_array_equal(bcast.openvino.run(op, x, y), spec)
        cpu = oracle.run(op, [x, y])
        if np.array_equal(cpu, spec, equal_nan=True):
            fixed.append(f"{op}(NaN, 1), {op}(1, NaN) on the CPU give {cpu.tolist()}")
        else:
            np.testing.assert_array_equal(cpu, [1, np.nan])
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


def test_openvino_prelu_checks_no_element_types():
    ov, oracle = _ov()
    dev = "openvino-prelu-element-types"
    assert DEV[dev].check is None and not CASES[dev]
    accepted = []
    for data, slope in (("float32", "int32"), ("bool", "bool"), ("int8", "float16")):
        with pytest.raises(bcast.InputError):  # bcast follows the spec: one floating-point type
            bcast.openvino.run("PRelu", np.ones((2, 3), data), np.ones(3, slope))
        if not isinstance(_refusal(oracle.infer_shape, "PRelu", [(2, 3), (3,)], [data, slope]), str):
            accepted.append((data, slope))
    if len(accepted) < 3:
        _fixed(dev, ov, f"PRelu's shape inference now refuses some element types (accepts only {accepted})")


# -- ncnn ----------------------------------------------------------------------


def _ncnn():
    ncnn = pytest.importorskip("ncnn")
    from bcast.oracles import ncnn as oracle

    return ncnn, oracle


def test_ncnn_computes_garbage_silently():
    ncnn, oracle = _ncnn()
    dev = "ncnn-garbage"

    # The registry's example: a mismatch on the innermost axis, out-of-bounds reads (in this process: they
    # stay within the allocator's slack).
    (a_shape, b_shape), attrs = _case(dev, 0)
    _expect_error(dev, 0)
    A = np.arange(24, dtype=np.float32).reshape(a_shape)
    B = 100 * np.arange(12, dtype=np.float32).reshape(b_shape)
    ret, out = oracle.forward("ADD", A, B)
    if ret != 0:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} returns {ret}")
    (finding,) = _findings(dev, 0)
    assert np.array(out).shape == (3, 4, 4), np.array(out).shape  # B read as (3,4,1), A (2,3,4): per-axis max
    assert bcast.format_shape(np.array(out).shape) in finding.note, finding.note

    # A mismatch on an outer axis only: rows past the end of A are clamped.
    (a_shape, b_shape), attrs = _case(dev, 1)
    _expect_error(dev, 1)
    A = np.arange(6, dtype=np.float32).reshape(a_shape)
    B = 100 * np.arange(1, 9, dtype=np.float32).reshape(b_shape)
    ret, out = oracle.forward("ADD", A, B)
    if ret != 0:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} returns {ret}")
    clamped = A[np.minimum(np.arange(4), a_shape[0] - 1)] + B
    np.testing.assert_array_equal(np.array(out), clamped)


def test_ncnn_empty_blob_crashes():
    ncnn, oracle = _ncnn()
    dev = "ncnn-empty-blob"
    (a_shape, b_shape), attrs = _case(dev)
    _expect_error(dev)
    try:  # in a child process
        out = oracle.run_isolated("ADD", np.zeros(a_shape, np.float32), np.ones(b_shape, np.float32))
    except oracle.RuntimeCrashed as e:
        assert e.returncode == -signal.SIGFPE, f"killed by {_signal_name(e.returncode)}, expected SIGFPE"
    except oracle.RuntimeRefused as e:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} no longer kills the process: {e.message}")
    else:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} no longer kills the process: it returns 0 and "
                          f"an output of shape {out.shape}")

    # 1-D empty blobs do not crash: ncnn returns 0 and a non-empty output, as the note says.
    assert "gives (1,)" in applicable((0,), (1,), rule="ncnn")[0].note
    out = oracle.run_isolated("ADD", np.zeros((0,), np.float32), np.ones((1,), np.float32))
    assert out.shape == (1,), out.shape


def test_ncnn_fast_math_departs_from_the_functors():
    """A deviation of values (no shape case, no check): where the wheel's vector body (MIN: its
    one-element path) departs from ncnn's functor, bcast computes the functor, which the wheel's other
    path computes.  test_ncnn_run.py's differential allows exactly ``ncnn_wheel.wheel_departs``."""
    ncnn, oracle = _ncnn()
    from ncnn_wheel import same_bits, wheel_departs

    dev = "ncnn-fast-math"
    assert DEV[dev].check is None and not CASES[dev]
    f32 = np.float32
    cases = [  # op, a, b, the functor's value, the path that departs
        ("DIV", 1.0, 0.0, f32(np.inf), "vector"),
        ("RDIV", 0.0, 2.0, f32(np.inf), "vector"),
        ("FLOOR_DIVIDE", -3.0, 0.0, f32(-np.inf), "vector"),
        ("POW", -2.0, 2.0, f32(4.0), "vector"),
        ("RPOW", 3.0, -2.0, f32(-8.0), "vector"),
        ("ATAN2", -0.0, -1.0, f32(-np.pi), "vector"),
        ("FMOD", -12.33, -4.11, np.fmod(f32(-12.33), f32(-4.11)), "vector"),  # x/y rounds to 3
        ("FMOD", -2.0, 1.0, f32(-0.0), "vector"),  # fmodf keeps the dividend's sign: -0
        ("FLOOR_DIVIDE", -6.85, 1.37, np.floor(f32(-6.85) / f32(1.37)), "vector"),  # rounds to -5
        ("REMAINDER", 1.37, -2.74, f32(1.37), "vector"),  # x/y is -0.5: the tie goes to even, 0
        ("MIN", -0.0, 0.0, f32(-0.0), "scalar"),  # std::min keeps its first operand
        ("MIN", 1.0, np.nan, f32(1.0), "scalar"),  # ... and a NaN second operand gives the first
    ]
    fixed = []
    for name, a, b, functor, path in cases:
        assert name in DEV[dev].only_ops, name
        x, y = np.full(32, a, f32), np.full(32, b, f32)
        assert wheel_departs(name, x[:1], y[:1])[0], name
        assert same_bits(bcast.ncnn.run(name, x, y), np.full(32, functor, f32)), name
        departing, keeping = (slice(None), slice(0, 1)) if path == "vector" else (slice(0, 1), slice(None))
        assert same_bits(oracle.run(name, x[keeping], y[keeping]), np.full(len(x[keeping]), functor, f32)), name
        wheel = oracle.run(name, x[departing], y[departing])
        if same_bits(wheel[:1], np.full(1, functor, f32)):
            fixed.append(f"{name}({a}, {b}) on its {path} path gives the functor's {functor}")
    if fixed:
        _fixed(dev, ncnn, "; ".join(fixed))


# -- ONNX: onnxruntime, ReferenceEvaluator, shape inference, version converter --


def _onnx():
    """onnx and the ReferenceEvaluator's oracle."""
    onnx = pytest.importorskip("onnx")
    from bcast.oracles import reference

    return onnx, reference


def test_onnxruntime_where_loses_the_sign_of_zero():
    """A deviation of values (no shape case, no check): onnxruntime's Where gives +0.0 for an X of -0.0
    that cond selects; bcast.onnx.run returns X's element, -0.0, as the spec says."""
    ort, oracle = _ort()
    dev = "onnxruntime-where-negative-zero"
    assert DEV[dev].check is None and not CASES[dev]
    for dtype in (np.float32, np.float64):
        cond = np.array([True, False, True, False])
        x = np.array([-0.0, -0.0, -0.0, 1.0], dtype)
        y = np.array([-0.0, -0.0, 5.0, -0.0], dtype)
        (got,) = oracle.run("Where", [cond, x, y])
        if np.signbit(got[0]) and np.signbit(got[2]):
            _fixed(dev, ort, f"Where keeps -0.0 from X ({dtype.__name__})")
        assert list(np.signbit(got)) == [False, True, False, True]  # from X: +0.0; from Y: -0.0 kept
        spec = bcast.onnx.run("Where", cond, x, y)
        assert list(np.signbit(spec)) == [True, True, True, True]


def _ort():
    """onnxruntime and its oracle."""
    ort = pytest.importorskip("onnxruntime")
    from bcast.oracles import onnxruntime

    return ort, onnxruntime


def _legacy(attrs) -> dict:
    """A legacy case's broadcast and axis as node attributes (axis only where set)."""
    return {k: v for k, v in attrs.items() if k in ("broadcast", "axis") and v is not None}


def _legacy_add_model(a_shape, b_shape, attrs):
    """An opset-6 Add of float inputs A, B of declared shapes, with the case's broadcast and axis."""
    return make_model("Add", ["float32"] * 2, opset=6, attrs=_legacy(attrs), names=("A", "B"),
                      shapes=(a_shape, b_shape))


def _floats(shapes, seed=1, low=-2.0, high=2.0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, s).astype(np.float32) for s in shapes]


def _prelu(x, slope):
    return np.where(x < 0, x * slope, x)


def test_onnxruntime_prelu_broadcasts_both_ways():
    ort, oracle = _ort()
    _prelu_runs_both_ways("onnxruntime-prelu-bidirectional", ort, "onnxruntime", oracle.run)


def test_reference_prelu_broadcasts_both_ways():
    onnx, oracle = _onnx()
    _prelu_runs_both_ways("reference-prelu-bidirectional", onnx, "ReferenceEvaluator", oracle.run)


def _prelu_runs_both_ways(dev, module, who, run):
    """PRelu X (3,1), slope (1,4): the spec refuses; ``run`` (an oracle's) returns the two-way broadcast."""
    (x_shape, s_shape), attrs = _case(dev)
    _expect_error(dev)
    x, slope = _floats([x_shape, s_shape])
    try:
        (y,) = run("PRelu", [x, slope])
    except RuntimeRefused as e:
        _fixed(dev, module, f"{who} refuses PRelu X {x_shape}, slope {s_shape}: {e.message}")
    if y.shape == x_shape:
        _fixed(dev, module, f"{who}'s PRelu X {x_shape}, slope {s_shape} returns X's shape")
    assert y.shape == np.broadcast_shapes(x_shape, s_shape) == (3, 4)
    np.testing.assert_allclose(y, _prelu(x, slope), rtol=1e-6)


def test_reference_prelu_axis_fallback():
    onnx, oracle = _onnx()
    dev = "reference-prelu-axis-fallback"
    (x_shape, s_shape), attrs = _case(dev)
    _expect_error(dev)
    with pytest.raises(ValueError):  # not numpy-broadcastable either
        np.broadcast_shapes(x_shape, s_shape)
    x, slope = _floats([x_shape, s_shape])
    try:
        (y,) = oracle.run("PRelu", [x, slope])
    except RuntimeRefused as e:
        _fixed(dev, onnx, f"ReferenceEvaluator refuses PRelu X {x_shape}, slope {s_shape}: {e.message}")
    assert y.shape == x_shape
    np.testing.assert_allclose(y, _prelu(x, slope.reshape(1, 3, 1, 1)), rtol=1e-6)  # along axis 1


def test_onnx_shape_inference_does_not_check_gemm_c_or_prelu_slope():
    onnx, _ = _onnx()
    from onnx import shape_inference

    dev = "onnx-shape-inference-unchecked"
    models = []
    for i, (op, names, want) in enumerate([("Gemm", ("A", "B", "C"), (3, 5)), ("PRelu", ("X", "slope"), (3, 1))]):
        shapes, attrs = _case(dev, i)
        _expect_error(dev, i)
        models.append((op, make_model(op, ["float32"] * len(names), opset=21, names=names, shapes=shapes), want))

    for op, model, want in models:
        ins = ", ".join(f"{i.name} {tuple(d.dim_value for d in i.type.tensor_type.shape.dim)}"
                        for i in model.graph.input)
        try:
            inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        except Exception as e:  # noqa: BLE001 - onnx's own exception types
            _fixed(dev, onnx, f"infer_shapes(strict_mode=True) now rejects {op} with {ins}: {last_line(e)}")
        (y,) = inferred.graph.output
        dims = y.type.tensor_type.shape.dim
        got = tuple(d.dim_value if d.HasField("dim_value") else None for d in dims)
        assert got == want, f"{op} with {ins}: inferred {got}, expected the unchecked {want}"


def test_onnxruntime_does_not_run_legacy_opsets():
    ort, oracle = _ort()
    dev = "onnxruntime-no-legacy-opsets"
    (a_shape, b_shape), attrs = _case(dev)
    plan = _plan(dev)
    A = np.ones(a_shape, np.float32)
    B = np.arange(12, dtype=np.float32).reshape(b_shape)
    try:
        (y,) = oracle.run("Add", [A, B], opset=6, **_legacy(attrs))
    except RuntimeRefused as e:
        assert "NOT_IMPLEMENTED" in e.message and "Could not find an implementation for Add(6)" in e.message, e
    else:
        right = np.array_equal(y, np.add(*_aligned(plan, [A, B])))
        _fixed(dev, ort, f"an opset-6 Add (broadcast=1, axis=1) runs; result right: {right}")


def test_reference_ignores_legacy_broadcast_axis():
    onnx, oracle = _onnx()
    dev = "reference-legacy-ignores-broadcast"

    # 1. Both rules run, with different values: legacy puts B along axis 0, numpy along axis 1.
    (a_shape, b_shape), attrs = _case(dev, 0)
    plan = _plan(dev, 0)
    A = np.arange(9, dtype=np.float32).reshape(a_shape)
    B = np.array([100, 200, 300], np.float32)
    legacy = np.add(*_aligned(plan, [A, B]))
    (y,) = oracle.run("Add", [A, B], opset=6, **_legacy(attrs))
    if np.array_equal(y, legacy):
        _fixed(dev, onnx, "Add-6 with axis=0 puts B along axis 0 as the legacy rule says")
    np.testing.assert_array_equal(y, A + B)

    # 2. broadcast=0 with different shapes: legacy refuses, the reference broadcasts anyway.
    (a_shape, b_shape), attrs = _case(dev, 1)
    _expect_error(dev, 1)
    A = np.ones(a_shape, np.float32)
    B = np.arange(5, dtype=np.float32)
    try:
        (y,) = oracle.run("Add", [A, B], opset=6, **_legacy(attrs))
    except RuntimeRefused as e:
        _fixed(dev, onnx, f"Add-6 broadcast=0 with A {a_shape}, B {b_shape} is refused: {e.message}")
    np.testing.assert_array_equal(y, A + B)

    # 3. broadcast=1, axis=1: legacy accepts, numpy (and so the reference) refuses.
    (a_shape, b_shape), attrs = _case(dev, 2)
    plan = _plan(dev, 2)
    A = np.ones(a_shape, np.float32)
    B = np.arange(12, dtype=np.float32).reshape(b_shape)
    try:
        (y,) = oracle.run("Add", [A, B], opset=6, **_legacy(attrs))
    except RuntimeRefused as e:
        assert "could not be broadcast" in e.message, e.message
    else:
        _fixed(dev, onnx, f"Add-6 broadcast=1 axis=1 with A {a_shape}, B {b_shape} runs; right: "
                          f"{np.array_equal(y, np.add(*_aligned(plan, [A, B])))}")


def test_reference_pow1_refuses_legacy_attributes():
    onnx, oracle = _onnx()
    dev = "reference-pow1-legacy-attrs"
    other = "reference-legacy-ignores-broadcast"

    # 1. broadcast=1, axis=1: the legacy rule accepts; the evaluator does not run the node at all.
    (a_shape, b_shape), attrs = _case(dev, 0)
    plan = _plan(dev, 0)
    A, B = _floats([a_shape, b_shape], low=0.5)
    want = np.power(*_aligned(plan, [A, B]))
    np.testing.assert_allclose(bcast.onnx.run("Pow", A, B, opset=1, **_legacy(attrs)), want, rtol=1e-6)
    try:
        (y,) = oracle.run("Pow", [A, B], opset=1, **_legacy(attrs))
    except RuntimeRefused as e:
        assert "Pow._run() got an unexpected keyword argument" in e.message, e.message  # 'broadcast' or 'axis'
    else:
        _fixed(dev, onnx, f"Pow-1 broadcast=1 axis=1 of A {a_shape}, B {b_shape} runs; right: "
                          f"{y.shape == want.shape and np.allclose(y, want)}")

    # 2. broadcast=0 given: refused even so; left out: numpy broadcasting, as the other legacy ops do.
    (a_shape, b_shape), attrs = _case(dev, 1)
    _expect_error(dev, 1)
    A, B = _floats([a_shape, b_shape], low=0.5)
    with pytest.raises(RuntimeRefused, match="unexpected keyword argument 'broadcast'"):
        oracle.run("Pow", [A, B], opset=1, broadcast=0)
    (y,) = oracle.run("Pow", [A, B], opset=1)
    np.testing.assert_allclose(y, np.power(A, B), rtol=1e-6)
    (finding,) = _findings(dev, 1)
    assert bcast.format_shape(y.shape) in finding.note, finding.note

    # The two records agree: the older one speaks of Pow-1 no more, of Add-6 still.
    for shapes, attrs in CASES[dev]:
        rule_attrs = _rule_attrs(attrs)
        assert other not in _ids(applicable(*shapes, op="Pow", **rule_attrs)), shapes
        assert other in _ids(applicable(*shapes, op="Add", **rule_attrs)), shapes
        assert dev not in _ids(applicable(*shapes, op="Add", **rule_attrs)), shapes


_NUMPY_VARIADIC = {
    "Max": lambda xs: functools.reduce(np.maximum, xs),
    "Min": lambda xs: functools.reduce(np.minimum, xs),
    "Sum": lambda xs: functools.reduce(np.add, xs),
    "Mean": lambda xs: functools.reduce(np.add, xs) / np.float32(len(xs)),
}


def test_reference_variadic_before_8_broadcasts():
    onnx, oracle = _onnx()
    ort, ort_oracle = _ort()
    dev = "reference-variadic-before-8-broadcasts"
    fixed = []
    for i, (shapes, attrs) in enumerate(CASES[dev]):
        op = attrs["op"]
        where = f"{op}-6 of {', '.join(map(bcast.format_shape, shapes))}"
        _expect_error(dev, i)
        inputs = _floats(shapes, seed=i)
        with pytest.raises(bcast.BroadcastError):
            bcast.onnx.run(op, *inputs, opset=6)
        with pytest.raises(RuntimeRefused):  # onnxruntime keeps to the spec
            ort_oracle.run(op, inputs, opset=6)
        try:
            (y,) = oracle.run(op, inputs, opset=6)
        except RuntimeRefused as e:
            fixed.append(f"{where} is refused: {e.message}")
            continue
        want = _NUMPY_VARIADIC[op](inputs)
        assert y.shape == want.shape, (where, y.shape)
        np.testing.assert_allclose(y, want, rtol=1e-6, err_msg=where)
        (finding,) = _findings(dev, i)
        assert bcast.format_shape(want.shape) in finding.note, finding.note
    if fixed:
        _fixed(dev, onnx, "; ".join(fixed))
    # Mean with an output larger than data_0: the evaluator refuses too (it adds in place), and the record
    # says nothing.
    small_first = _floats([(3,), (2, 3)])
    with pytest.raises(RuntimeRefused, match="non-broadcastable output operand"):
        oracle.run("Mean", small_first, opset=6)
    assert dev not in _ids(applicable((3,), (2, 3), rule="none", op="Mean"))


def test_reference_gemm_beta0_does_not_check_c():
    onnx, oracle = _onnx()
    ort, ort_oracle = _ort()
    dev = "reference-gemm-beta0-unchecked-c"
    shapes, attrs = _case(dev)
    _expect_error(dev)
    beta = attrs["op_attrs"]["beta"]
    A, B, C = _floats(shapes)
    with pytest.raises(bcast.BroadcastError):
        bcast.onnx.run("Gemm", A, B, C, beta=beta)
    with pytest.raises(RuntimeRefused, match="Invalid bias shape"):  # onnxruntime keeps to the spec
        ort_oracle.run("Gemm", [A, B, C], beta=beta)
    try:
        (y,) = oracle.run("Gemm", [A, B, C], beta=beta)
    except RuntimeRefused as e:
        _fixed(dev, onnx, f"Gemm beta=0 with C {shapes[2]} is refused: {e.message}")
    np.testing.assert_allclose(y, A @ B, rtol=1e-6)
    (finding,) = _findings(dev)
    assert bcast.format_shape(y.shape) in finding.note, finding.note
    # With beta=1 the evaluator reads C and refuses, and the record says nothing.
    with pytest.raises(RuntimeRefused):
        oracle.run("Gemm", [A, B, C], beta=1.0)
    assert dev not in _ids(applicable(*shapes, rule="onnx-gemm", op="Gemm", op_attrs={"beta": 1.0}))


def test_onnxruntime_gemm_reads_a_1d_a_as_a_row():
    ort, oracle = _ort()
    dev = "onnxruntime-gemm-rank1-a"
    for i, (shapes, attrs) in enumerate(CASES[dev]):
        _expect_error(dev, i)
        arrays = _floats(shapes)
        trans = {k: int(v) for k, v in _rule_attrs(attrs).items() if k != "rule"}
        try:
            (y,) = oracle.run("Gemm", arrays, **trans)
        except RuntimeRefused as e:
            _fixed(dev, ort, f"Gemm of A {shapes[0]} is refused: {e.message}")
        b = arrays[1].T if trans.get("transB") else arrays[1]
        want = arrays[0][None, :] @ b + (arrays[2] if len(arrays) == 3 else 0)
        np.testing.assert_allclose(y, want, rtol=1e-5)
        (finding,) = _findings(dev, i)
        assert bcast.format_shape(y.shape) in finding.note
    # A 1-D B is refused, as the spec says: the record does not fire there.
    with pytest.raises(RuntimeRefused):
        oracle.run("Gemm", _floats([(2, 5), (5,)]))
    assert dev not in _ids(applicable((2, 5), (5,), rule="onnx-gemm"))


def test_reference_gemm_takes_any_rank():
    onnx, oracle = _onnx()
    dev = "reference-gemm-any-rank"
    for i, (shapes, attrs) in enumerate(CASES[dev]):
        _expect_error(dev, i)
        arrays = _floats(shapes)
        try:
            (y,) = oracle.run("Gemm", arrays)
        except RuntimeRefused as e:
            _fixed(dev, onnx, f"Gemm of {shapes} is refused: {e.message}")
        np.testing.assert_allclose(y, np.dot(*arrays), rtol=1e-5)
        assert _findings(dev, i)


def test_reference_mean_adds_in_place():
    onnx, oracle = _onnx()
    ort, ort_oracle = _ort()
    dev = "reference-mean-in-place"
    (d0, d1), attrs = _case(dev)
    plan = _plan(dev)
    X0, X1 = _floats([d0, d1])
    want = bcast.onnx.run("Mean", X0, X1)
    assert want.shape == plan.shape == (4, 2, 1)
    (got,) = ort_oracle.run("Mean", [X0, X1])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    try:
        (y,) = oracle.run("Mean", [X0, X1])
    except RuntimeRefused as e:
        assert "non-broadcastable output operand" in e.message, e.message
    else:
        _fixed(dev, onnx, f"Mean of data_0 {d0} and data_1 {d1} runs; right: "
                          f"{y.shape == want.shape and np.allclose(y, want)}")
    # data_0 the largest: the evaluator is right, and the record says nothing.
    (y,) = oracle.run("Mean", [X1, X0])
    np.testing.assert_allclose(y, want, rtol=1e-6)
    assert dev not in _ids(applicable(d1, d0, op="Mean"))


def test_onnx_version_converter_axis():
    onnx, oracle = _onnx()
    from onnx import version_converter

    dev = "onnx-version-converter-axis"
    _converter_axis_minus_one_and_zero()
    (a_shape, b_shape), attrs = _case(dev)
    plan = _plan(dev)
    try:
        converted = version_converter.convert_version(_legacy_add_model(a_shape, b_shape, attrs), 7)
    except RuntimeError as e:
        # It unsqueezed B (3,4) to (3,4,1,1) instead of (3,4,1), then checks it against A's axes 1..
        assert "assert_numpy_multibroadcastable" in str(e), str(e)
        return
    # No error: the deviation stands only if the converted model is wrong.
    A, B = _floats([a_shape, b_shape], seed=2)
    legacy = np.add(*_aligned(plan, [A, B]))
    try:
        (y,) = oracle.run_model(converted, {"A": A, "B": B})
    except RuntimeRefused:  # a converted model that does not run is wrong
        return
    if y.shape == legacy.shape and np.allclose(y, legacy):
        _fixed(dev, onnx, f"convert_version(Add-6 broadcast=1 axis=1, A {a_shape}, B {b_shape}, 7) "
                          "now gives a model that computes the legacy result")


def _converter_axis_minus_one_and_zero():
    """The record's other two cases: axis -1 is read literally; axis 0 loses a type."""
    onnx, _ = _onnx()
    ort, ort_oracle = _ort()
    from onnx import version_converter

    dev = "onnx-version-converter-axis"
    (a_shape, b_shape), attrs = _case(dev, 1)
    assert attrs["axis"] == -1 and _plan(dev, 1).aligned_shape(1) == (1, 1, 1, 5)
    with pytest.raises(RuntimeError, match="assert_numpy_multibroadcastable"):
        version_converter.convert_version(_legacy_add_model(a_shape, b_shape, attrs), 7)

    (a_shape, b_shape), attrs = _case(dev, 2)
    assert attrs["axis"] == 0
    converted = version_converter.convert_version(_legacy_add_model(a_shape, b_shape, attrs), 7)
    A, B = _floats([a_shape, b_shape], seed=3)
    try:
        ort_oracle.run_model(converted, {"A": A, "B": B})
    except RuntimeRefused as e:
        assert "Invalid tensor data type 0" in e.message, e.message
    else:
        _fixed(dev, onnx, "convert_version(Add-6 axis=0) now gives a model onnxruntime loads")
    # with the bad value_info dropped, the converted graph computes the legacy result
    del converted.graph.value_info[:]
    (y,) = ort_oracle.run_model(converted, {"A": A, "B": B})
    np.testing.assert_allclose(y, np.add(*_aligned(_plan(dev, 2), [A, B])), rtol=1e-6)


# -- the registry and these tests ------------------------------------------------


def test_registry_names_these_tests_and_checks_fire():
    """Every record names a test of this module and has shape cases where its check fires (a record
    about an op fires only when the op is named); a record without a check is about values, not shapes
    (e.g. ncnn-fast-math): it has no shape cases and its test runs the values themselves."""
    module = sys.modules[__name__]
    problems = []
    assert set(CASES) == set(DEV), "CASES must have one entry per registry record"
    named = set()
    for d in DEVIATIONS:
        path, sep, name = d.test.partition("::")
        named.add(name)
        if path != TEST_FILE or not sep:
            problems.append(f"{d.id}: test {d.test!r} is not in {TEST_FILE}")
        if not (name.startswith("test_") and callable(getattr(module, name, None))):
            problems.append(f"{d.id}: {name!r} is not a test function of {TEST_FILE}")
        if d.check is None:
            if CASES[d.id]:
                problems.append(f"{d.id}: a deviation of values (no check) has no shape cases")
            continue
        if not CASES[d.id]:
            problems.append(f"{d.id}: no shape cases for its check")
        for shapes, attrs in CASES[d.id]:
            rule = attrs["rule"]
            if rule not in d.rules:
                problems.append(f"{d.id}: case rule {rule!r} is not one of its rules {d.rules}")
            if d.only_ops and attrs.get("op") not in d.only_ops:
                problems.append(f"{d.id}: case {shapes} names no op of {d.only_ops}")
            found = [f for f in applicable(*shapes, **attrs) if f.deviation.id == d.id]
            if not found:
                problems.append(f"{d.id}: check does not fire for {shapes} {attrs}")
            elif not found[0].note:
                problems.append(f"{d.id}: empty note for {shapes} {attrs}")
            if d.only_ops and d.id in _ids(applicable(*shapes, **_rule_attrs(attrs))):
                problems.append(f"{d.id}: fires for {shapes} {attrs} with no op named")
    ours = {n for n in dir(module) if n.startswith("test_") and callable(getattr(module, n))}
    extra = ours - named - {"test_registry_names_these_tests_and_checks_fire"}
    if extra:
        problems.append(f"test functions no record names: {sorted(extra)}")
    assert not problems, "\n".join(problems)
