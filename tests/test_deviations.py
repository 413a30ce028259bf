"""Proofs of the deviation registry (src/bcast/deviations.py).

Every record there names one test here.  Each test runs the runtime on the
cases listed for the record in ``CASES`` and passes while the runtime still
deviates from its spec.  The day a runtime is fixed, the test fails with a
message saying so and asking for the registry entry to be revisited.

``test_registry_names_these_tests_and_checks_fire`` ties the two together:
every record names a function of this module, and every record's ``check``
fires (through :func:`bcast.deviations.applicable`) on the very cases its test
runs, which are taken from ``CASES``.

Cases that kill the process (ncnn on an empty blob, OpenVINO compiling a
scalar Broadcast to []) run in a subprocess, judged by its return code; so do
runs that read memory they should not (OpenVINO's CPU plugin on a Broadcast
pdpd whose data runs past the target, on a PRelu with an unchecked slope).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import bcast
from bcast.deviations import DEVIATIONS, applicable

DEV = {d.id: d for d in DEVIATIONS}
TEST_FILE = "tests/test_deviations.py"

# record id -> the (shapes, attrs of bcast.infer) each proof runs.
CASES = {
    "openvino-pdpd-trailing-ones": [
        (((2, 3), (3, 1)), dict(rule="pdpd", axis=1)),
        (((3, 1), (2, 3), (3, 1)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=1)),
    ],
    "openvino-python-pdpd-axis0": [
        (((2, 3, 4, 5), (4, 5)), dict(rule="pdpd", axis=-1)),
    ],
    "openvino-cpu-pdpd-ops": [
        (((2, 3, 4, 5), (3, 4)), dict(rule="pdpd", axis=1)),  # Subtract, Divide, Equal
        (((2, 3, 4, 5), (4, 5)), dict(rule="pdpd", axis=-1)),  # Mod
    ],
    "openvino-select-reference-pdpd": [
        (((5,), (2, 3, 4, 5), (3, 4, 5)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=-1)),
    ],
    "openvino-broadcast-pdpd-stretches-target": [
        (((3,), (2, 1)), dict(rule="openvino-broadcast-pdpd", axis=-1)),
        (((0,), (2, 1)), dict(rule="openvino-broadcast-pdpd", axis=-1)),  # the output is smaller
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


def _plan(dev_id: str, i: int = 0):
    shapes, attrs = _case(dev_id, i)
    return bcast.infer(*shapes, **attrs)


def _expect_error(dev_id: str, i: int = 0):
    shapes, attrs = _case(dev_id, i)
    with pytest.raises(bcast.BroadcastError):
        bcast.infer(*shapes, **attrs)


def _aligned(plan, arrays):
    """Every input viewed at the output shape, the way bcast's plan places it."""
    return [np.broadcast_to(x.reshape(plan.aligned_shape(i)), plan.shape) for i, x in enumerate(arrays)]


def _last_line(e: BaseException) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else repr(e)


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
    ov = pytest.importorskip("openvino")
    import openvino.opset16 as ops
    from openvino.utils.node_factory import NodeFactory

    return ov, ops, NodeFactory()


def _param(ops, shape, name, dtype=np.float32):
    return ops.parameter(list(shape), dtype, name=name)


def _pdpd(nf, op, inputs, axis):
    """An element-wise op (or Select) with auto_broadcast=pdpd and an explicit axis."""
    return nf.create(
        op, [x.output(0) for x in inputs], {"auto_broadcast": "pdpd", "auto_broadcast.auto_broadcast_axis": axis}
    )


def _broadcast_pdpd(nf, ops, data, target, axis):
    """Broadcast-3 mode pdpd with an explicit axis."""
    tgt = ops.constant(np.array(target, np.int64))
    return nf.create("Broadcast", [data.output(0), tgt.output(0)], {"mode": "pdpd", "mode.mode.axis": axis})


def _cpu(ov, model, feeds):
    return ov.Core().compile_model(model, "CPU")(feeds)[0]


def _evaluate(ov, model, feeds, out_shape, dtype=np.float32):
    out = [ov.Tensor(np.zeros(out_shape, dtype))]
    assert model.evaluate(out, [ov.Tensor(np.ascontiguousarray(x)) for x in feeds])
    return out[0].data.copy()


def test_openvino_pdpd_does_not_strip_trailing_ones():
    ov, ops, nf = _ov()
    dev = "openvino-pdpd-trailing-ones"
    (a_shape, b_shape), attrs = _case(dev, 0)
    assert _plan(dev, 0).shape == (2, 3)  # PDPD rule 5: B (3,1) is read as (3)
    a, b = _param(ops, a_shape, "A"), _param(ops, b_shape, "B")
    try:
        node = _pdpd(nf, "Add", [a, b], attrs["axis"])
    except RuntimeError as e:
        assert "Argument shapes are inconsistent" in str(e), str(e)
    else:
        _fixed(dev, ov, f"Add pdpd axis 1 of A {a_shape} and B {b_shape} is accepted, "
                        f"shape {node.get_output_partial_shape(0)}")

    (c_shape, t_shape, e_shape), attrs = _case(dev, 1)
    assert _plan(dev, 1).shape == (2, 3)
    c, t, e_ = _param(ops, c_shape, "c", np.bool_), _param(ops, t_shape, "t"), _param(ops, e_shape, "e")
    try:
        node = _pdpd(nf, "Select", [c, t, e_], attrs["axis"])
    except RuntimeError as e:
        assert "tensor shape is not broadcastable" in str(e), str(e)
    else:
        _fixed(dev, ov, f"Select pdpd axis 1 of cond {c_shape}, then {t_shape}, else {e_shape} is accepted, "
                        f"shape {node.get_output_partial_shape(0)}")


def test_openvino_python_pdpd_defaults_axis_to_zero():
    ov, ops, nf = _ov()
    dev = "openvino-python-pdpd-axis0"
    (a_shape, b_shape), attrs = _case(dev)
    assert _plan(dev).shape == a_shape  # pdpd, axis -1: B (4,5) fits A's last two axes
    with pytest.raises(bcast.BroadcastError):  # ... and with axis 0 it does not
        bcast.infer(a_shape, b_shape, rule="pdpd", axis=0)

    a, b = _param(ops, a_shape, "A"), _param(ops, b_shape, "B")
    # The same pair with the axis given explicitly as -1 is fine in OpenVINO.
    assert tuple(_pdpd(nf, "Add", [a, b], -1).get_output_partial_shape(0).to_shape()) == a_shape
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
    assert any(f.deviation.id == dev for f in applicable((3,), (2, 3), rule="openvino-broadcast-pdpd"))
    data = _param(ops, (3,), "data")
    try:
        node = ops.broadcast(data, np.array([2, 3], dtype=np.int64), broadcast_spec="pdpd")
    except RuntimeError as e:
        assert "Expecting either 1 or 3" in str(e), str(e)
    else:
        _fixed(dev, ov, f"ops.broadcast(pdpd) accepts data (3,) into [2,3]: {node.get_output_partial_shape(0)}")


def test_openvino_cpu_pdpd_subtract_fails():
    ov, ops, nf = _ov()
    dev = "openvino-cpu-pdpd-ops"
    rng = np.random.default_rng(0)
    working = []

    # Subtract, Divide and Equal with axis 1 != rank(A) - rank(B) = 2.
    (a_shape, b_shape), attrs = _case(dev, 0)
    plan = _plan(dev, 0)
    A = rng.uniform(1, 2, a_shape).astype(np.float32)
    B = rng.uniform(1, 2, b_shape).astype(np.float32)
    xa, xb = _aligned(plan, [A, B])
    expected = {"Add": xa + xb, "Subtract": xa - xb, "Divide": xa / xb, "Equal": xa == xb}
    for op, want in expected.items():
        a, b = _param(ops, a_shape, "A"), _param(ops, b_shape, "B")
        model = ov.Model([_pdpd(nf, op, [a, b], attrs["axis"]).output(0)], [a, b], op)
        # The op is valid: OpenVINO's reference evaluate computes it right.
        ref = _evaluate(ov, model, [A, B], plan.shape, want.dtype)
        np.testing.assert_allclose(ref, want, rtol=1e-6)
        if op == "Add":  # the control: Add compiles and is right on CPU
            np.testing.assert_allclose(_cpu(ov, model, [A, B]), want, rtol=1e-6)
            continue
        try:
            got = _cpu(ov, model, [A, B])
        except RuntimeError as e:
            assert "Argument shapes are inconsistent" in str(e), str(e)
        else:
            working.append(f"{op} pdpd axis 1 compiles on CPU (right values: {np.allclose(got, want)})")

    # Mod when rank(B) < rank(A), even with the default axis -1.
    (a_shape, b_shape), attrs = _case(dev, 1)
    plan = _plan(dev, 1)
    A = rng.uniform(1, 9, a_shape).astype(np.float32)
    B = rng.uniform(1, 3, b_shape).astype(np.float32)
    a, b = _param(ops, a_shape, "A"), _param(ops, b_shape, "B")
    model = ov.Model([_pdpd(nf, "Mod", [a, b], attrs["axis"]).output(0)], [a, b], "Mod")
    try:
        got = _cpu(ov, model, [A, B])
    except RuntimeError as e:
        assert "Doesn't support broadcast type: pdpd" in str(e), str(e)
    else:
        want = np.fmod(*_aligned(plan, [A, B]))
        working.append(f"Mod pdpd with B {b_shape} compiles on CPU (right values: {np.allclose(got, want)})")

    if working:
        _fixed(dev, ov, "; ".join(working))


def test_openvino_select_reference_pdpd_cond_axis():
    ov, ops, nf = _ov()
    dev = "openvino-select-reference-pdpd"
    (c_shape, t_shape, e_shape), attrs = _case(dev)
    plan = _plan(dev)
    C = np.array([True, False, True, False, False])
    T = np.arange(120, dtype=np.float32).reshape(t_shape)
    E = -1 - np.arange(60, dtype=np.float32).reshape(e_shape)
    want = np.where(*_aligned(plan, [C, T, E]))

    c, t, e_ = _param(ops, c_shape, "c", np.bool_), _param(ops, t_shape, "t"), _param(ops, e_shape, "e")
    node = _pdpd(nf, "Select", [c, t, e_], attrs["axis"])
    model = ov.Model([node.output(0)], [c, t, e_], "select")

    cpu = _cpu(ov, model, [C, T, E])
    np.testing.assert_array_equal(cpu, want, err_msg="the CPU plugin should place cond at rank(then) - rank(cond) = 3")

    ref = _evaluate(ov, model, [C, T, E], plan.shape)
    if np.array_equal(ref, want):
        _fixed(dev, ov, "Model.evaluate of Select pdpd axis -1 with cond (5,), then (2,3,4,5), else (3,4,5) "
                        "now agrees with the CPU plugin and with bcast")
    # What the reference does instead: cond placed at else's axis, 1, so it reads cond[0:3] there.
    at_else_axis = np.where(np.broadcast_to(C[:3].reshape(1, 3, 1, 1), plan.shape), T, np.broadcast_to(E, plan.shape))
    np.testing.assert_array_equal(ref, at_else_axis)


def test_openvino_broadcast_pdpd_stretches_target():
    ov, ops, nf = _ov()
    dev = "openvino-broadcast-pdpd-stretches-target"
    # data 3 cannot go into a target dim of 1, nor can data 0: OpenVINO gives (2,3), larger than the
    # target, and (2,0), smaller
    for i, want in enumerate([(2, 3), (2, 0)]):
        (d_shape, target), attrs = _case(dev, i)
        _expect_error(dev, i)
        data = _param(ops, d_shape, "data")
        try:
            node = _broadcast_pdpd(nf, ops, data, target, attrs["axis"])
        except RuntimeError as e:
            _fixed(dev, ov, f"Broadcast pdpd of data {d_shape} to target {list(target)} is refused: {_last_line(e)}")
        out = tuple(node.get_output_partial_shape(0).to_shape())
        if out == tuple(target):
            _fixed(dev, ov, f"Broadcast pdpd of data {d_shape} to target {list(target)} gives the target shape")
        assert out == want, out
        (finding,) = [f for f in applicable(d_shape, target, **attrs) if f.deviation.id == dev]
        assert bcast.format_shape(want) in finding.note, finding.note
        if i == 0:  # the CPU plugin computes the stretched output
            D = np.array([1, 2, 3], np.float32)
            got = _cpu(ov, ov.Model([node.output(0)], [data], "b"), [D])
            np.testing.assert_array_equal(got, np.broadcast_to(D, (2, 3)))


def test_openvino_broadcast_pdpd_short_data():
    ov, ops, nf = _ov()
    dev = "openvino-broadcast-pdpd-short-data"
    (d_shape, target), attrs = _case(dev)
    plan = _plan(dev)
    assert plan.shape == target
    data = _param(ops, d_shape, "data")
    try:
        node = _broadcast_pdpd(nf, ops, data, target, attrs["axis"])
    except RuntimeError as e:
        assert "Accessing out-of-range dimension" in str(e), str(e)
    else:
        _fixed(dev, ov, f"Broadcast pdpd axis 1 of data {d_shape} to target {list(target)} is accepted, "
                        f"shape {node.get_output_partial_shape(0)}")
    # The workaround the note gives: write data with the trailing 1s; then OpenVINO computes bcast's plan.
    padded = d_shape + (1,) * (len(target) - attrs["axis"] - len(d_shape))
    data = _param(ops, padded, "data")
    node = _broadcast_pdpd(nf, ops, data, target, attrs["axis"])
    D = np.array([1, 2, 3], np.float32)
    got = _cpu(ov, ov.Model([node.output(0)], [data], "b"), [D.reshape(padded)])
    np.testing.assert_array_equal(got, _aligned(plan, [D, np.zeros(target)])[0])


_OV_BPDPD_CPU = """
import json, numpy as np, openvino as ov, openvino.opset16 as ops
from openvino.utils.node_factory import NodeFactory
nf = NodeFactory()
for data_shape, target, axis in {cases!r}:
    d = ops.parameter(list(data_shape), np.float32, name="d")
    t = ov.op.Constant(np.asarray(target, np.int64).reshape(-1))
    n = nf.create("Broadcast", [d.output(0), t.output(0)], {{"mode": "pdpd", "mode.mode.axis": axis}})
    x = np.arange(1, 1 + int(np.prod(data_shape)), dtype=np.float32).reshape(data_shape)
    try:
        y = ov.Core().compile_model(ov.Model([n.output(0)], [d], "b"), "CPU")([x])[0]
        out = {{"shape": list(y.shape), "values": y.ravel().tolist()}}
    except RuntimeError as e:
        out = {{"error": [ln for ln in str(e).splitlines() if ln.strip()][-1]}}
    print(json.dumps(out), flush=True)
"""


def _child_json(code: str):
    p = _run_child(code)
    assert p.returncode == 0, (
        f"the child died ({_signal_name(p.returncode) if p.returncode < 0 else p.returncode}): "
        f"{p.stderr.strip()[-500:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def test_openvino_broadcast_pdpd_long_data():
    ov, ops, nf = _ov()
    dev = "openvino-broadcast-pdpd-long-data"
    from openvino.utils.node_factory import NodeFactory

    f1 = NodeFactory("opset1")  # Broadcast-1 has its own attribute key for the axis
    cases = CASES[dev]
    # Shape inference (Broadcast-3 and Broadcast-1) ignores data's dims past the target's last axis.
    for i, ((d_shape, target), attrs) in enumerate(cases):
        if i < 3:
            _expect_error(dev, i)  # rank(data) > rank(target) - axis with dims that are not trailing 1s
        else:
            plan = _plan(dev, i)  # rule 5: (3,1) is read as (3), placed at axis 1
            assert plan.shape == target and plan.aligned_shape(0) == (1, 3)
        tgt = ov.op.Constant(np.asarray(target, np.int64).reshape(-1)).output(0)  # [] too
        for version in (3, 1):
            ins = [_param(ops, d_shape, "d").output(0), tgt]
            try:
                if version == 3:
                    node = nf.create("Broadcast", ins, {"mode": "pdpd", "mode.mode.axis": attrs["axis"]})
                else:  # with the dummy axes input Broadcast-1 adds itself
                    ins.append(ov.op.Constant(np.array(0, dtype=np.uint8)).output(0))
                    node = f1.create("Broadcast", ins, {"mode": "pdpd", "mode.auto_broadcast_axis": attrs["axis"]})
            except RuntimeError as e:
                _fixed(dev, ov, f"Broadcast-{version} pdpd axis {attrs['axis']} of data {d_shape} to target "
                                f"{list(target)} is refused: {_last_line(e)}")
            out = tuple(node.get_output_partial_shape(0).to_shape())
            assert out == target, f"Broadcast-{version} {d_shape} -> {list(target)}: {out}"
        (finding,) = [f for f in applicable(d_shape, target, **attrs) if f.deviation.id == dev]
        assert bcast.format_shape(target) in finding.note, finding.note

    # The CPU plugin ignores the axis and aligns data with the target's end (as numpy does).  In a child:
    # where that placement does not fit it reads memory it should not.
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
    (finding,) = [f for f in applicable(d_shape, target, **attrs) if f.deviation.id == dev]
    assert "as (3,1)" in finding.note and "reshape data to (3,)" in finding.note, finding.note


def test_openvino_pdpd_zero_size():
    ov, ops, nf = _ov()
    dev = "openvino-pdpd-zero-size"
    # What OpenVINO's shape inference gives for each case: a refusal, or the shape (not A's, then's)
    ov_says = [None, None, None, (2, 0), (1, 0)]
    fixed = []
    for i, ((shapes, attrs), want) in enumerate(zip(CASES[dev], ov_says)):
        select = attrs["rule"] == "openvino-select"
        names = ("cond", "then", "else") if select else ("A", "B")
        where = f"{'Select' if select else 'Add'} pdpd axis {attrs['axis']} of " + ", ".join(
            f"{n} {s}" for n, s in zip(names, shapes))
        if want is None:  # the spec (and bcast) accept a 1 facing a 0, with A's (then's) shape
            assert _plan(dev, i).shape == shapes[1 if select else 0]
        else:  # and refuse a 0 facing a 1 (only B stretches)
            _expect_error(dev, i)
        params = [_param(ops, s, n, np.bool_ if select and k == 0 else np.float32)
                  for k, (n, s) in enumerate(zip(names, shapes))]
        try:
            got = tuple(_pdpd(nf, "Select" if select else "Add", params, attrs["axis"])
                        .get_output_partial_shape(0).to_shape())
        except RuntimeError as e:
            got = _last_line(e)
        (finding,) = [f for f in applicable(*shapes, **attrs) if f.deviation.id == dev]
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
    ov, ops, nf = _ov()
    dev = "openvino-explicit-scalar-axes"
    (d_shape, target), attrs = _case(dev)
    _expect_error(dev)  # one axes_mapping entry for a rank-0 data
    assert bcast.infer(d_shape, target, rule="explicit", axes_mapping=[]).shape == target  # the spec's way
    data = _param(ops, d_shape, "data")
    axes = np.array(attrs["axes_mapping"], np.int64)
    try:
        node = ops.broadcast(data, np.array(target, np.int64), axes, broadcast_spec="explicit")
    except RuntimeError as e:
        _fixed(dev, ov, f"Broadcast explicit of scalar data to {list(target)} with axes_mapping {list(axes)} is "
                        f"refused: {_last_line(e)}")
    assert tuple(node.get_output_partial_shape(0).to_shape()) == target
    got = _cpu(ov, ov.Model([node.output(0)], [data], "scalar"), [np.array(7.0, np.float32)])
    np.testing.assert_array_equal(got, np.full(target, 7.0, np.float32))
    # The scalar counts as one dim of 1: onto a target dim of 2 it is refused, as a (1,) would be.
    with pytest.raises(RuntimeError, match="Expected 1. Got 2"):
        ops.broadcast(_param(ops, (), "d"), np.array([2, 3], np.int64), axes, broadcast_spec="explicit")
    assert not [f for f in applicable((), (2, 3), rule="explicit", axes_mapping=[0]) if f.deviation.id == dev]


_OV_PRELU_CPU = """
import json, numpy as np, openvino as ov, openvino.opset16 as ops
for x_shape, s_shape in {cases!r}:
    x = ops.parameter(list(x_shape), np.float32, name="x")
    s = ops.parameter(list(s_shape), np.float32, name="s")
    n = ops.prelu(x, s)
    X = -np.arange(1, 1 + int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape)  # all negative
    S = 10 * np.arange(1, 1 + int(np.prod(s_shape)), dtype=np.float32).reshape(s_shape)
    out = {{"inferred": list(n.get_output_partial_shape(0).to_shape())}}
    try:
        y = ov.Core().compile_model(ov.Model([n.output(0)], [x, s], "prelu"), "CPU")([X, S])[0]
        out.update(shape=list(y.shape), values=y.ravel().tolist())
    except RuntimeError as e:
        out["error"] = [ln for ln in str(e).splitlines() if ln.strip()][-1]
    print(json.dumps(out), flush=True)
"""


def test_openvino_prelu_slope_unchecked():
    ov = pytest.importorskip("openvino")
    dev = "openvino-prelu-unchecked"
    cases = CASES[dev]
    for i in range(len(cases)):
        _expect_error(dev, i)  # neither per channel nor numpy-broadcastable into data
    runs = _child_json(_OV_PRELU_CPU.format(cases=[shapes for shapes, _ in cases]))
    assert len(runs) == len(cases), runs
    for ((x_shape, s_shape), attrs), run in zip(cases, runs):
        where = f"PRelu of data {x_shape} with slope {s_shape}"
        assert tuple(run["inferred"]) == x_shape, f"{where}: shape inference gives {run['inferred']}"
        if "error" in run:
            _fixed(dev, ov, f"{where} no longer runs on the CPU plugin: {run['error']}")
        assert tuple(run["shape"]) == x_shape, run
        X = -np.arange(1, 1 + int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape)
        last = 10 * float(np.prod(s_shape))  # the slope's last element
        np.testing.assert_array_equal(np.array(run["values"], np.float32).reshape(x_shape), X * last,
                                      err_msg=f"{where}: expected every element times the slope's last one")
        (finding,) = [f for f in applicable(x_shape, s_shape, **attrs) if f.deviation.id == dev]
        assert "compiles and runs" in finding.note and bcast.format_shape(x_shape) in finding.note, finding.note


def test_openvino_explicit_accepts_duplicate_axes():
    ov, ops, nf = _ov()
    dev = "openvino-explicit-duplicate-axes"
    (d_shape, target), attrs = _case(dev)
    _expect_error(dev)
    data = _param(ops, d_shape, "data")
    axes = np.array(attrs["axes_mapping"], np.int64)
    try:
        node = ops.broadcast(data, np.array(target, np.int64), axes, broadcast_spec="explicit")
    except RuntimeError as e:
        _fixed(dev, ov, f"Broadcast explicit with axes_mapping {list(axes)} is refused: {_last_line(e)}")
    assert tuple(node.get_output_partial_shape(0).to_shape()) == target
    model = ov.Model([node.output(0)], [data], "explicit")
    D = np.array([[1, 2, 3]], np.float32)
    cpu = _cpu(ov, model, [D])
    ref = _evaluate(ov, model, [D], target)
    if np.array_equal(cpu, ref):
        _fixed(dev, ov, f"Broadcast explicit with axes_mapping {list(axes)} is accepted and the CPU plugin and "
                        "the reference now agree")
    # Where the mapping is wrong in another way too, OpenVINO refuses it, and the registry does not list it.
    for d2, t2, a2 in [((1,), (1,), [0, 0]), ((3, 4), (2, 3, 4), [1, 1])]:  # length != rank; 4 vs target 3
        with pytest.raises(RuntimeError):
            ops.broadcast(_param(ops, d2, "d"), np.array(t2, np.int64), np.array(a2, np.int64),
                          broadcast_spec="explicit")
        assert not [f for f in applicable(d2, t2, rule="explicit", axes_mapping=a2) if f.deviation.id == dev]


def test_openvino_cpu_bidirectional_zero():
    ov, ops, nf = _ov()
    dev = "openvino-cpu-bidirectional-zero"
    (d_shape, target), attrs = _case(dev)
    plan = _plan(dev)
    assert plan.shape == (2, 0)
    data = _param(ops, d_shape, "data")
    node = ops.broadcast(data, np.array(target, np.int64), broadcast_spec="bidirectional")
    # OpenVINO's own shape inference agrees with bcast (and numpy) ...
    assert tuple(node.get_output_partial_shape(0).to_shape()) == plan.shape
    model = ov.Model([node.output(0)], [data], "zero")
    try:  # ... but the CPU plugin refuses to compile it
        got = _cpu(ov, model, [np.zeros(d_shape, np.float32)])
    except RuntimeError as e:
        assert "cannot be broadcasted" in str(e), str(e)
    else:
        _fixed(dev, ov, f"Broadcast bidirectional of data {d_shape} to {list(target)} compiles on CPU, "
                        f"output shape {got.shape}")


_OV_SCALAR = """
import numpy as np, openvino as ov, openvino.opset16 as ops
d = ops.parameter([], np.float32, name="d")
n = ops.broadcast(d, np.array([], np.int64), broadcast_spec={mode!r})
m = ov.Model([n.output(0)], [d], "scalar")
cm = ov.Core().compile_model(m, "CPU")
print("compiled; output shape", cm([np.array(3.0, np.float32)])[0].shape, flush=True)
"""


def test_openvino_cpu_scalar_to_scalar_crashes():
    ov = pytest.importorskip("openvino")
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


# -- ncnn ----------------------------------------------------------------------

_NCNN_PARAM = "7767517\n3 3\nInput in0 0 1 in0\nInput in1 0 1 in1\nBinaryOp op 2 1 in0 in1 out 0=0\n"


def _ncnn_add(ncnn, a, b):
    """ncnn's BinaryOp ADD on two blobs (reference/ncnn.md §5): (ret, output or None)."""
    net = ncnn.Net()
    net.opt.use_packing_layout = False
    net.opt.num_threads = 1
    net.opt.use_fp16_storage = net.opt.use_fp16_packed = net.opt.use_fp16_arithmetic = False
    net.opt.use_bf16_storage = False
    assert net.load_param_mem(_NCNN_PARAM) == 0
    net.load_model(ncnn.DataReaderFromEmpty())
    ex = net.create_extractor()
    ex.input("in0", ncnn.Mat(np.ascontiguousarray(a, np.float32)).clone())
    ex.input("in1", ncnn.Mat(np.ascontiguousarray(b, np.float32)).clone())
    ret, out = ex.extract("out")
    return ret, (np.array(out).copy() if ret == 0 else None)


def test_ncnn_computes_garbage_silently():
    ncnn = pytest.importorskip("ncnn")
    dev = "ncnn-garbage"

    # The registry's example: a mismatch on the innermost axis, out-of-bounds reads.
    (a_shape, b_shape), attrs = _case(dev, 0)
    _expect_error(dev, 0)
    A = np.arange(24, dtype=np.float32).reshape(a_shape)
    B = 100 * np.arange(12, dtype=np.float32).reshape(b_shape)
    ret, out = _ncnn_add(ncnn, A, B)
    if ret != 0:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} returns {ret}")
    (finding,) = [f for f in applicable(a_shape, b_shape, **attrs) if f.deviation.id == dev]
    assert out.shape == (3, 4, 4), out.shape  # B read as (3,4,1), A (2,3,4): per-axis max
    assert bcast.format_shape(out.shape) in finding.note, finding.note

    # A mismatch on an outer axis only: rows past the end of A are clamped.
    (a_shape, b_shape), attrs = _case(dev, 1)
    _expect_error(dev, 1)
    A = np.arange(6, dtype=np.float32).reshape(a_shape)
    B = 100 * np.arange(1, 9, dtype=np.float32).reshape(b_shape)
    ret, out = _ncnn_add(ncnn, A, B)
    if ret != 0:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} returns {ret}")
    clamped = A[np.minimum(np.arange(4), a_shape[0] - 1)] + B
    np.testing.assert_array_equal(out, clamped)


_NCNN_EMPTY = """
import numpy as np, ncnn
net = ncnn.Net()
net.opt.use_packing_layout = False
net.opt.num_threads = 1
net.opt.use_fp16_storage = net.opt.use_fp16_packed = net.opt.use_fp16_arithmetic = False
net.opt.use_bf16_storage = False
assert net.load_param_mem({param!r}) == 0
net.load_model(ncnn.DataReaderFromEmpty())
ex = net.create_extractor()
ex.input("in0", ncnn.Mat(np.zeros({a!r}, np.float32)).clone())
ex.input("in1", ncnn.Mat(np.ones({b!r}, np.float32)).clone())
ret, out = ex.extract("out")
print("ret", ret, "shape", np.array(out).shape, flush=True)
"""


def test_ncnn_empty_blob_crashes():
    ncnn = pytest.importorskip("ncnn")
    dev = "ncnn-empty-blob"
    (a_shape, b_shape), attrs = _case(dev)
    _expect_error(dev)
    p = _run_child(_NCNN_EMPTY.format(param=_NCNN_PARAM, a=a_shape, b=b_shape))
    if p.returncode >= 0:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} no longer kills the process: rc "
                          f"{p.returncode}, stdout {p.stdout.strip()!r}, stderr {p.stderr.strip()[-300:]!r}")
    assert p.returncode == -signal.SIGFPE, f"killed by {_signal_name(p.returncode)}, expected SIGFPE"

    # 1-D empty blobs do not crash: ncnn returns 0 and a non-empty output, as the note says.
    assert "gives (1,)" in applicable((0,), (1,), rule="ncnn")[0].note
    p = _run_child(_NCNN_EMPTY.format(param=_NCNN_PARAM, a=(0,), b=(1,)))
    assert p.returncode == 0, p.stderr[-300:]
    assert "ret 0 shape (1,)" in p.stdout, p.stdout


# -- ONNX: onnxruntime, ReferenceEvaluator, shape inference, version converter --


def _onnx():
    onnx = pytest.importorskip("onnx")
    from onnx import helper

    return onnx, helper


def _onnx_model(op, inputs, *, opset=21, ir_version=10, **attrs):
    """A one-node model, float inputs [(name, shape)], output Y of unknown shape."""
    onnx, helper = _onnx()
    f = onnx.TensorProto.FLOAT
    node = helper.make_node(op, [n for n, _ in inputs], ["Y"], name="n0", **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, f, list(s)) for n, s in inputs],
        [helper.make_tensor_value_info("Y", f, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def _legacy_add(a_shape, b_shape, attrs):
    """An opset-6 Add with the case's broadcast (and axis, when set)."""
    legacy = {k: v for k, v in attrs.items() if k in ("broadcast", "axis") and v is not None}
    return _onnx_model("Add", [("A", a_shape), ("B", b_shape)], opset=6, ir_version=3, **legacy)


def _ort_session(ort, model):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _reference(model, feeds):
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, feeds)[0]


def _prelu(x, slope):
    return np.where(x < 0, x * slope, x)


def _prelu_feeds(x_shape, s_shape):
    rng = np.random.default_rng(1)
    return {
        "X": rng.standard_normal(x_shape).astype(np.float32),
        "slope": rng.uniform(0.1, 0.9, s_shape).astype(np.float32),
    }


def test_onnxruntime_prelu_broadcasts_both_ways():
    ort = pytest.importorskip("onnxruntime")
    _prelu_runs_both_ways("onnxruntime-prelu-bidirectional", ort, "onnxruntime",
                          lambda model, feeds: _ort_session(ort, model).run(None, feeds)[0])


def test_reference_prelu_broadcasts_both_ways():
    onnx, _ = _onnx()
    _prelu_runs_both_ways("reference-prelu-bidirectional", onnx, "ReferenceEvaluator", _reference)


def _prelu_runs_both_ways(dev, module, who, run):
    """PRelu X (3,1), slope (1,4): the spec refuses; ``run`` returns the two-way broadcast."""
    (x_shape, s_shape), attrs = _case(dev)
    _expect_error(dev)
    feeds = _prelu_feeds(x_shape, s_shape)
    model = _onnx_model("PRelu", [("X", x_shape), ("slope", s_shape)])
    try:
        y = run(model, feeds)
    except Exception as e:  # noqa: BLE001 - any refusal means the deviation is gone
        _fixed(dev, module, f"{who} refuses PRelu X {x_shape}, slope {s_shape}: {_last_line(e)}")
    if y.shape == x_shape:
        _fixed(dev, module, f"{who}'s PRelu X {x_shape}, slope {s_shape} returns X's shape")
    assert y.shape == np.broadcast_shapes(x_shape, s_shape) == (3, 4)
    np.testing.assert_allclose(y, _prelu(feeds["X"], feeds["slope"]), rtol=1e-6)


def test_reference_prelu_axis_fallback():
    onnx, _ = _onnx()
    dev = "reference-prelu-axis-fallback"
    (x_shape, s_shape), attrs = _case(dev)
    _expect_error(dev)
    with pytest.raises(ValueError):  # not numpy-broadcastable either
        np.broadcast_shapes(x_shape, s_shape)
    feeds = _prelu_feeds(x_shape, s_shape)
    model = _onnx_model("PRelu", [("X", x_shape), ("slope", s_shape)])
    try:
        y = _reference(model, feeds)
    except Exception as e:  # noqa: BLE001
        _fixed(dev, onnx, f"ReferenceEvaluator refuses PRelu X {x_shape}, slope {s_shape}: {_last_line(e)}")
    assert y.shape == x_shape
    along_axis_1 = _prelu(feeds["X"], feeds["slope"].reshape(1, 3, 1, 1))
    np.testing.assert_allclose(y, along_axis_1, rtol=1e-6)


def test_onnx_shape_inference_does_not_check_gemm_c_or_prelu_slope():
    onnx, _ = _onnx()
    from onnx import shape_inference

    dev = "onnx-shape-inference-unchecked"
    models = []
    (a_shape, b_shape, c_shape), attrs = _case(dev, 0)
    _expect_error(dev, 0)
    models.append(("Gemm", _onnx_model("Gemm", [("A", a_shape), ("B", b_shape), ("C", c_shape)]), (3, 5)))
    (x_shape, s_shape), attrs = _case(dev, 1)
    _expect_error(dev, 1)
    models.append(("PRelu", _onnx_model("PRelu", [("X", x_shape), ("slope", s_shape)]), x_shape))

    for op, model, want in models:
        ins = ", ".join(f"{i.name} {tuple(d.dim_value for d in i.type.tensor_type.shape.dim)}" for i in model.graph.input)
        try:
            inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        except Exception as e:  # noqa: BLE001
            _fixed(dev, onnx, f"infer_shapes(strict_mode=True) now rejects {op} with {ins}: {_last_line(e)}")
        (y,) = inferred.graph.output
        dims = y.type.tensor_type.shape.dim
        got = tuple(d.dim_value if d.HasField("dim_value") else None for d in dims)
        assert got == want, f"{op} with {ins}: inferred {got}, expected the unchecked {want}"


def test_onnxruntime_does_not_run_legacy_opsets():
    ort = pytest.importorskip("onnxruntime")
    dev = "onnxruntime-no-legacy-opsets"
    (a_shape, b_shape), attrs = _case(dev)
    plan = _plan(dev)
    model = _legacy_add(a_shape, b_shape, attrs)
    A = np.ones(a_shape, np.float32)
    B = np.arange(12, dtype=np.float32).reshape(b_shape)
    try:
        y = _ort_session(ort, model).run(None, {"A": A, "B": B})[0]
    except Exception as e:  # noqa: BLE001
        assert "NOT_IMPLEMENTED" in str(e) and "Could not find an implementation for Add(6)" in str(e), str(e)
    else:
        right = np.array_equal(y, np.add(*_aligned(plan, [A, B])))
        _fixed(dev, ort, f"an opset-6 Add (broadcast=1, axis=1) runs; result right: {right}")


def test_reference_ignores_legacy_broadcast_axis():
    onnx, _ = _onnx()
    dev = "reference-legacy-ignores-broadcast"

    # 1. Both rules run, with different values: legacy puts B along axis 0, numpy along axis 1.
    (a_shape, b_shape), attrs = _case(dev, 0)
    plan = _plan(dev, 0)
    A = np.arange(9, dtype=np.float32).reshape(a_shape)
    B = np.array([100, 200, 300], np.float32)
    legacy = np.add(*_aligned(plan, [A, B]))
    y = _reference(_legacy_add(a_shape, b_shape, attrs), {"A": A, "B": B})
    if np.array_equal(y, legacy):
        _fixed(dev, onnx, "Add-6 with axis=0 puts B along axis 0 as the legacy rule says")
    np.testing.assert_array_equal(y, A + B)

    # 2. broadcast=0 with different shapes: legacy refuses, the reference broadcasts anyway.
    (a_shape, b_shape), attrs = _case(dev, 1)
    _expect_error(dev, 1)
    A = np.ones(a_shape, np.float32)
    B = np.arange(5, dtype=np.float32)
    try:
        y = _reference(_legacy_add(a_shape, b_shape, attrs), {"A": A, "B": B})
    except Exception as e:  # noqa: BLE001
        _fixed(dev, onnx, f"Add-6 broadcast=0 with A {a_shape}, B {b_shape} is refused: {_last_line(e)}")
    np.testing.assert_array_equal(y, A + B)

    # 3. broadcast=1, axis=1: legacy accepts, numpy (and so the reference) refuses.
    (a_shape, b_shape), attrs = _case(dev, 2)
    plan = _plan(dev, 2)
    A = np.ones(a_shape, np.float32)
    B = np.arange(12, dtype=np.float32).reshape(b_shape)
    try:
        y = _reference(_legacy_add(a_shape, b_shape, attrs), {"A": A, "B": B})
    except (TypeError, ValueError) as e:
        assert "could not be broadcast" in f"{e} {e.__cause__}", repr(e)
    else:
        _fixed(dev, onnx, f"Add-6 broadcast=1 axis=1 with A {a_shape}, B {b_shape} runs; right: "
                          f"{np.array_equal(y, np.add(*_aligned(plan, [A, B])))}")


def test_onnx_version_converter_axis():
    onnx, _ = _onnx()
    from onnx import version_converter

    dev = "onnx-version-converter-axis"
    _converter_axis_minus_one_and_zero()
    (a_shape, b_shape), attrs = _case(dev)
    plan = _plan(dev)
    model = _legacy_add(a_shape, b_shape, attrs)
    try:
        converted = version_converter.convert_version(model, 7)
    except RuntimeError as e:
        # It unsqueezed B (3,4) to (3,4,1,1) instead of (3,4,1), then checks it against A's axes 1..
        assert "assert_numpy_multibroadcastable" in str(e), str(e)
        return
    # No error: the deviation stands only if the converted model is wrong.
    rng = np.random.default_rng(2)
    A = rng.standard_normal(a_shape).astype(np.float32)
    B = rng.standard_normal(b_shape).astype(np.float32)
    legacy = np.add(*_aligned(plan, [A, B]))
    try:
        y = _reference(converted, {"A": A, "B": B})
    except Exception:  # noqa: BLE001 - a converted model that does not run is wrong
        return
    if y.shape == legacy.shape and np.allclose(y, legacy):
        _fixed(dev, onnx, f"convert_version(Add-6 broadcast=1 axis=1, A {a_shape}, B {b_shape}, 7) "
                          "now gives a model that computes the legacy result")


def _converter_axis_minus_one_and_zero():
    """The record's other two cases: axis -1 is read literally; axis 0 loses a type."""
    onnx, _ = _onnx()
    ort = pytest.importorskip("onnxruntime")
    from onnx import version_converter

    dev = "onnx-version-converter-axis"
    (a_shape, b_shape), attrs = _case(dev, 1)
    assert attrs["axis"] == -1 and _plan(dev, 1).aligned_shape(1) == (1, 1, 1, 5)
    with pytest.raises(RuntimeError, match="assert_numpy_multibroadcastable"):
        version_converter.convert_version(_legacy_add(a_shape, b_shape, attrs), 7)

    (a_shape, b_shape), attrs = _case(dev, 2)
    assert attrs["axis"] == 0
    converted = version_converter.convert_version(_legacy_add(a_shape, b_shape, attrs), 7)
    try:
        _ort_session(ort, converted)
    except Exception as e:  # noqa: BLE001 - onnxruntime's own exception types
        assert "Invalid tensor data type 0" in str(e), str(e)
    else:
        _fixed(dev, onnx, "convert_version(Add-6 axis=0) now gives a model onnxruntime loads")
    # with the bad value_info dropped, the converted graph computes the legacy result
    del converted.graph.value_info[:]
    rng = np.random.default_rng(3)
    A = rng.standard_normal(a_shape).astype(np.float32)
    B = rng.standard_normal(b_shape).astype(np.float32)
    y = _ort_session(ort, converted).run(None, {"A": A, "B": B})[0]
    np.testing.assert_allclose(y, np.add(*_aligned(_plan(dev, 2), [A, B])), rtol=1e-6)


# -- the registry and these tests ------------------------------------------------


def test_registry_names_these_tests_and_checks_fire():
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
        for shapes, attrs in CASES[d.id]:
            attrs = dict(attrs)
            rule = attrs.pop("rule")
            if rule not in d.rules:
                problems.append(f"{d.id}: case rule {rule!r} is not one of its rules {d.rules}")
            found = [f for f in applicable(*shapes, rule=rule, **attrs) if f.deviation.id == d.id]
            if not found:
                problems.append(f"{d.id}: check does not fire for {shapes} rule={rule} {attrs}")
            elif not found[0].note:
                problems.append(f"{d.id}: empty note for {shapes} rule={rule} {attrs}")
    ours = {n for n in dir(module) if n.startswith("test_") and callable(getattr(module, n))}
    extra = ours - named - {"test_registry_names_these_tests_and_checks_fire"}
    if extra:
        problems.append(f"test functions no record names: {sorted(extra)}")
    assert not problems, "\n".join(problems)
