"""Proofs of the OpenVINO records: shape inference, the CPU plugin and Model.evaluate on pdpd,
Select and Broadcast.  Runs that kill the process run in a child, judged by its output."""

from __future__ import annotations

import json

import numpy as np

from ...rules import infer, result_shape
from ...core.errors import BroadcastError
from ...core._format import format_shape
from ..deviations import applicable
from .._oracle import RuntimeRefused

from .._proof import (
    CASES, _aligned, _case, _changed, _expect, _expect_error, _findings, _fixed, _ids, _need, _plan, _raises,
    _refusal, _run_child, _signal_name, proof,
)


def _ov():
    """openvino and its oracle (shape inference, the CPU plugin, Model.evaluate)."""
    ov = _need("openvino")
    from . import oracle as oracle

    return ov, oracle


def _pdpd(axis) -> dict:
    """The oracle's attributes for an element-wise op (or Select) with auto_broadcast=pdpd and ``axis``."""
    return {"auto_broadcast": "pdpd", "axis": axis}


@proof("openvino-pdpd-trailing-ones", cases=[
    (((2, 3), (3, 1)), dict(rule="pdpd", axis=1)),
    (((3, 1), (2, 3), (3, 1)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=1)),
])
def openvino_pdpd_does_not_strip_trailing_ones(dev):
    ov, oracle = _ov()
    (a_shape, b_shape), attrs = _case(dev, 0)
    _expect(_plan(dev, 0).shape == (2, 3))  # PDPD rule 5: B (3,1) is read as (3)
    got = _refusal(oracle.infer_shape, "Add", [a_shape, b_shape], **_pdpd(attrs["axis"]))
    if isinstance(got, tuple):
        _fixed(dev, ov, f"Add pdpd axis 1 of A {a_shape} and B {b_shape} is accepted, shape {got}")
    _expect("Argument shapes are inconsistent" in got, got)

    shapes, attrs = _case(dev, 1)
    _expect(_plan(dev, 1).shape == (2, 3))
    got = _refusal(oracle.infer_shape, "Select", shapes, **_pdpd(attrs["axis"]))
    if isinstance(got, tuple):
        _fixed(dev, ov, f"Select pdpd axis 1 of cond, then, else {shapes} is accepted, shape {got}")
    _expect("tensor shape is not broadcastable" in got, got)


@proof("openvino-python-pdpd-axis0", cases=[
    (((2, 3, 4, 5), (4, 5)), dict(rule="pdpd", axis=-1)),
])
def openvino_python_pdpd_defaults_axis_to_zero(dev):
    """About openvino's Python builders themselves, so built with them (the oracle always sets the axis)."""
    ov, oracle = _ov()
    import openvino.opset16 as ops

    (a_shape, b_shape), attrs = _case(dev)
    _expect(_plan(dev).shape == a_shape)  # pdpd, axis -1: B (4,5) fits A's last two axes
    with _raises(BroadcastError):  # ... and with axis 0 it does not
        infer(a_shape, b_shape, rule="pdpd", axis=0)

    # The same pair with the axis given explicitly as -1 is fine in OpenVINO.
    _expect(oracle.infer_shape("Add", [a_shape, b_shape], **_pdpd(-1)) == a_shape)
    a, b = (ops.parameter(list(s), np.float32, name=n) for s, n in ((a_shape, "A"), (b_shape, "B")))
    try:
        node = ops.add(a, b, auto_broadcast="pdpd")
    except RuntimeError as e:
        _expect("Argument shapes are inconsistent" in str(e), str(e))
    else:
        axis = node.get_attributes().get("auto_broadcast.auto_broadcast_axis")
        if axis == 0:
            _changed(f"ops.add(pdpd) has axis 0 but accepted A {a_shape}, B {b_shape}: unexpected")
        _fixed(dev, ov, f"ops.add(a, b, auto_broadcast='pdpd') accepts A {a_shape}, B {b_shape} (axis {axis})")

    # The Broadcast builder has the same default: data (3,) into target [2,3] needs axis -1 (= 1);
    # with axis 0, 3 faces 2 and OpenVINO refuses.
    _expect(result_shape((3,), (2, 3), rule="openvino-broadcast-pdpd") == (2, 3))
    _expect(dev in _ids(applicable((3,), (2, 3), rule="openvino-broadcast-pdpd")))
    data = ops.parameter([3], np.float32, name="data")
    try:
        node = ops.broadcast(data, np.array([2, 3], dtype=np.int64), broadcast_spec="pdpd")
    except RuntimeError as e:
        _expect("Expecting either 1 or 3" in str(e), str(e))
    else:
        _fixed(dev, ov, f"ops.broadcast(pdpd) accepts data (3,) into [2,3]: {node.get_output_partial_shape(0)}")


def _one_layer_ir(a_shape, b_shape, data: str) -> str:
    """An IR v11 of one Add of two Parameters, its ``<data>`` attributes ``data``."""
    def port(i, shape, out=False):
        dims = "".join(f"<dim>{d}</dim>" for d in shape)
        names = f' names="p{i}"' if out else ""
        return f'<port id="{i}" precision="FP32"{names}>{dims}</port>'
    def parameter(i, name, shape):
        return (f'<layer id="{i}" name="{name}" type="Parameter" version="opset1"><data shape="'
                f'{",".join(map(str, shape))}" element_type="f32"/><output>{port(0, shape, True)}</output></layer>')
    layers = (parameter(0, "A", a_shape) + parameter(1, "B", b_shape) +
              f'<layer id="2" name="sum" type="Add" version="opset1"><data {data}/><input>{port(0, a_shape)}'
              f'{port(1, b_shape)}</input><output>{port(2, a_shape, True)}</output></layer>'
              f'<layer id="3" name="out" type="Result" version="opset1"><input>{port(0, a_shape)}</input></layer>')
    edges = ('<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>'
             '<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>'
             '<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>')
    return f'<?xml version="1.0"?><net name="m" version="11"><layers>{layers}</layers><edges>{edges}</edges></net>'


@proof("openvino-ir-pdpd-axis0", cases=[
    (((2, 3, 4, 5), (4, 5)), dict(rule="pdpd", axis=-1)),
])
def openvino_ir_pdpd_defaults_axis_to_zero(dev):
    """An IR whose pdpd layer leaves out the axis, read by Core().read_model: refused as axis 0 places B;
    the same IR with the axis written as -1 is read, of A's shape."""
    ov, _ = _ov()
    (a_shape, b_shape), _attrs = _case(dev)
    _expect(_plan(dev).shape == a_shape)
    with _raises(BroadcastError):
        infer(a_shape, b_shape, rule="pdpd", axis=0)
    core = ov.Core()
    axis = 'auto_broadcast="pdpd" auto_broadcast.auto_broadcast_axis="-1"'
    written = core.read_model(_one_layer_ir(a_shape, b_shape, axis).encode(), b"")
    _expect(tuple(written.output(0).get_partial_shape().to_shape()) == a_shape)
    try:
        left_out = core.read_model(_one_layer_ir(a_shape, b_shape, 'auto_broadcast="pdpd"').encode(), b"")
    except RuntimeError as e:
        _expect("broadcast_merge_into" in str(e), str(e))
    else:
        _fixed(dev, ov, f"an IR Add pdpd with no axis of A {a_shape}, B {b_shape} is read: "
                        f"{left_out.output(0).get_partial_shape()}")


def _ov_values(shape, dtype, low=1, high=9, seed=0):
    """Random integers in [low, high) of ``dtype`` (exact in every element type, no 0 divisor)."""
    return np.random.default_rng(seed).integers(low, high, size=shape).astype(dtype)


@proof("openvino-cpu-pdpd-ops", cases=[
    (((2, 3, 4, 5), (3, 4)), dict(rule="pdpd", axis=1)),  # numpy's placement does not fit: fails
    (((3, 3), (3,)), dict(rule="pdpd", axis=0, op="Subtract")),  # it fits: computed, B along the last axis
    (((3, 1, 1), (3, 1)), dict(rule="pdpd", axis=0, op="Subtract", op_attrs={"element_type": "int64"})),
    (((2, 3), (3,)), dict(rule="pdpd", axis=1, op="Equal", op_attrs={"element_type": "float32"})),
])
def openvino_cpu_pdpd_ignores_axis(dev):
    """The CPU plugin broadcasts Subtract, Divide (floats), the comparisons, the logical and the bitwise ops
    with an explicit pdpd axis as numpy does; Model.evaluate (and Add on the CPU) place B from the axis."""
    ov, oracle = _ov()
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
            _expect("Argument shapes are inconsistent" in got, got)
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
        _expect(format_shape((A - B).shape) in finding.note, finding.note)
    # 3: Equal float32 with the axis rank(A) - rank(B) given explicitly: fails, where -1 runs
    (a_shape, b_shape), attrs = _case(dev, 3)
    A, B = _ov_values(a_shape, np.float32), _ov_values(b_shape, np.float32, 1, 3)
    got = _refusal(oracle.run, "Equal", [A, B], static=True, **_pdpd(attrs["axis"]))
    if not isinstance(got, str):
        fixed.append(f"Equal float32 pdpd axis 1 of A {a_shape}, B {b_shape} compiles on the CPU")
    np.testing.assert_array_equal(oracle.run("Equal", [A, B], static=True, **_pdpd(-1)), A == B)
    # The record is about these ops only: Add, Mod and integer Divide keep the axis
    for op, element_type in (("Add", "float32"), ("Mod", "int32"), ("Divide", "int32")):
        _expect(dev not in _ids(applicable((3, 3), (3,), rule="pdpd", axis=0, op=op,
                                           op_attrs={"element_type": element_type})), op)
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


@proof("openvino-cpu-pdpd-reference-fallback", cases=[
    (((2, 3), (3,)), dict(rule="pdpd", axis=-1, op="Multiply", op_attrs={"element_type": "int8"})),
    (((2, 3, 4, 5), (4, 5)), dict(rule="pdpd", axis=-1, op="Mod", op_attrs={"element_type": "float32"})),
])
def openvino_cpu_pdpd_reference_fallback(dev):
    """Each (op, element type) the record lists fails with rank(B) < rank(A) and runs with equal ranks."""
    ov, oracle = _ov()
    from .deviations_cpu import CPU_NO_REFERENCE

    fixed = []
    for op, dtypes in CPU_NO_REFERENCE.items():
        cases = []
        for dtype in dtypes:
            A, B = _ov_values((2, 3), dtype, 1, 4), _ov_values((3,), dtype, 1, 3)
            cases += [([A, B], _pdpd(-1)), ([A, np.broadcast_to(B, (2, 3)).copy()], _pdpd(-1))]
            _expect(dev in _ids(applicable((2, 3), (3,), rule="pdpd", axis=-1, op=op,
                                           op_attrs={"element_type": dtype})), (op, dtype))
        got = oracle.run_many(op, cases)
        for dtype, lower, equal in zip(dtypes, got[::2], got[1::2]):
            _expect(isinstance(equal, np.ndarray), f"{op} {dtype} with equal shapes: {equal}")
            if not isinstance(lower, RuntimeRefused):
                fixed.append(f"{op} {dtype} pdpd of (2,3) and (3,) runs on the CPU")
            else:
                _expect("Cannot fallback on ngraph reference implementation" in lower.message, lower.message)
    # ... and not an element type the reference has a kernel for
    _expect(dev not in _ids(applicable((2, 3), (3,), rule="pdpd", op="Multiply", op_attrs={"element_type": "int32"})))
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


@proof("openvino-cpu-pdpd-squared-difference-int", cases=[
    (((2, 3), (2, 3)), dict(rule="pdpd", axis=-1, op="SquaredDifference", op_attrs={"element_type": "int32"})),
])
def openvino_cpu_pdpd_squared_difference_int(dev):
    ov, oracle = _ov()
    fixed = []
    for dtype in ("int32", "int64"):
        A, B = _ov_values((2, 3), dtype), _ov_values((2, 3), dtype, seed=1)
        got = _refusal(oracle.run, "SquaredDifference", [A, B], static=True, **_pdpd(-1))
        if not isinstance(got, str):
            fixed.append(f"SquaredDifference {dtype} pdpd of equal shapes compiles on the CPU")
        else:
            _expect("Cannot fallback on ngraph reference implementation" in got, got)
        # numpy broadcasting runs
        np.testing.assert_array_equal(oracle.run("SquaredDifference", [A, B], static=True), (A - B) ** 2)
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


@proof("openvino-select-reference-pdpd", cases=[
    (((5,), (2, 3, 4, 5), (3, 4, 5)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=-1)),
])
def openvino_select_reference_pdpd_cond_axis(dev):
    ov, oracle = _ov()
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


@proof("openvino-broadcast-pdpd-stretches-target", cases=[
    (((3,), (2, 1)), dict(rule="openvino-broadcast-pdpd", axis=-1)),
    (((0,), (2, 1)), dict(rule="openvino-broadcast-pdpd", axis=-1)),  # the output is smaller
    (((3, 1), (1, 1)), dict(rule="openvino-broadcast-pdpd", axis=1)),  # fails at run time
])
def openvino_broadcast_pdpd_stretches_target(dev):
    ov, oracle = _ov()
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
        _expect(out == want, out)
        (finding,) = _findings(dev, i)
        _expect(format_shape(want) in finding.note, finding.note)
        if i == 0:  # the CPU plugin computes the stretched output
            D = np.array([1, 2, 3], np.float32)
            got = oracle.run("Broadcast", [D, target], static=True, mode="pdpd", axis=attrs["axis"])
            np.testing.assert_array_equal(got, np.broadcast_to(D, (2, 3)))
    # data that also runs past the target's end (a trailing 1): inferred (1,3), but neither device runs it
    (d_shape, target), attrs = _case(dev, 2)
    _expect_error(dev, 2)
    _expect(oracle.infer_shape("Broadcast", [d_shape, target], mode="pdpd", axis=attrs["axis"]) == (1, 3))
    D = np.arange(1, 4, dtype=np.float32).reshape(d_shape)
    for how in ({"static": True}, {"device": "evaluate"}):
        got = _refusal(oracle.run, "Broadcast", [D, target], mode="pdpd", axis=attrs["axis"], **how)
        if not isinstance(got, str):
            _fixed(dev, ov, f"Broadcast pdpd axis 1 of data {d_shape} to {list(target)} runs ({how}): {got.shape}")
        _expect("Tile with non-positive repeats" in got, got)
    (finding,) = _findings(dev, 2)
    _expect("Tile with non-positive repeats" in finding.note, finding.note)


@proof("openvino-broadcast-pdpd-short-data", cases=[
    (((3,), (2, 3, 6)), dict(rule="openvino-broadcast-pdpd", axis=1)),
])
def openvino_broadcast_pdpd_short_data(dev):
    ov, oracle = _ov()
    (d_shape, target), attrs = _case(dev)
    plan = _plan(dev)
    _expect(plan.shape == target)
    out = _refusal(oracle.infer_shape, "Broadcast", [d_shape, target], mode="pdpd", axis=attrs["axis"])
    if isinstance(out, tuple):
        _fixed(dev, ov, f"Broadcast pdpd axis 1 of data {d_shape} to target {list(target)} is accepted, shape {out}")
    _expect("Accessing out-of-range dimension" in out, out)
    # The workaround the note gives: write data with the trailing 1s; then OpenVINO computes bcast's plan.
    padded = d_shape + (1,) * (len(target) - attrs["axis"] - len(d_shape))
    D = np.array([1, 2, 3], np.float32)
    got = oracle.run("Broadcast", [D.reshape(padded), target], static=True, mode="pdpd", axis=attrs["axis"])
    np.testing.assert_array_equal(got, _aligned(plan, [D, np.zeros(target)])[0])


#: Broadcast pdpd on the CPU plugin, one case at a time, in a child: where data does not fit the plugin's
#: placement it reads memory it should not.
_OV_BPDPD_CPU = """
import json, numpy as np
from bcast.frameworks.openvino import oracle as oracle
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
    _expect(p.returncode == 0, (
        f"the child died ({_signal_name(p.returncode) if p.returncode < 0 else p.returncode}): "
        f"{p.stderr.strip()[-500:]}"))
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


@proof("openvino-broadcast-pdpd-long-data", cases=[
    (((3, 5), (2, 3)), dict(rule="openvino-broadcast-pdpd", axis=1)),
    (((5,), (2, 3)), dict(rule="openvino-broadcast-pdpd", axis=7)),
    (((1,), ()), dict(rule="openvino-broadcast-pdpd", axis=0)),
    (((3, 1), (3, 3)), dict(rule="openvino-broadcast-pdpd", axis=1)),  # valid: the extra dim is a trailing 1
])
def openvino_broadcast_pdpd_long_data(dev):
    ov, oracle = _ov()
    cases = CASES[dev]
    # Shape inference (Broadcast-3 and Broadcast-1) ignores data's dims past the target's last axis.
    for i, ((d_shape, target), attrs) in enumerate(cases):
        if i < 3:
            _expect_error(dev, i)  # rank(data) > rank(target) - axis with dims that are not trailing 1s
        else:
            plan = _plan(dev, i)  # rule 5: (3,1) is read as (3), placed at axis 1
            _expect(plan.shape == target and plan.aligned_shape(0) == (1, 3))
        for version in (3, 1):
            out = _refusal(oracle.infer_shape, "Broadcast", [d_shape, target], mode="pdpd", axis=attrs["axis"],
                           version=version)
            if isinstance(out, str):
                _fixed(dev, ov, f"Broadcast-{version} pdpd axis {attrs['axis']} of data {d_shape} to target "
                                f"{list(target)} is refused: {out}")
            _expect(out == target, f"Broadcast-{version} {d_shape} -> {list(target)}: {out}")
        (finding,) = _findings(dev, i)
        _expect(format_shape(target) in finding.note, finding.note)

    # The CPU plugin ignores the axis and aligns data with the target's end (as numpy does).
    runs = _child_json(_OV_BPDPD_CPU.format(cases=[(s[0], s[1], a["axis"]) for s, a in cases]
                                            + [((3,), (3, 3), 1)]))  # the workaround for the last case
    _expect(len(runs) == len(cases) + 1, runs)
    for i in (0, 1):  # (3,5) and (5,) aligned with the end of (2,3): 3 > 2, 5 > 3
        _expect("Tile with non-positive repeats" in runs[i].get("error", ""), runs[i])
    _expect(runs[2] == {"shape": [], "values": [1.0]}, runs[2])  # (1,) into [] runs
    (d_shape, target), attrs = cases[3]
    D = np.arange(1, 4, dtype=np.float32).reshape(d_shape)
    spec = _aligned(infer(d_shape, target, **attrs), [D, np.zeros(target)])[0]  # D along axis 1
    cpu = np.array(runs[3]["values"], np.float32).reshape(runs[3]["shape"])
    if np.array_equal(cpu, spec):
        _fixed(dev, ov, f"the CPU plugin computes Broadcast pdpd axis 1 of data {d_shape} to {list(target)} "
                        "as the spec says")
    np.testing.assert_array_equal(cpu, np.broadcast_to(D, target))  # D along axis 0: aligned with the end
    # The note's workaround, data without the trailing 1, is right.
    fixed_data = np.array(runs[4]["values"], np.float32).reshape(runs[4]["shape"])
    np.testing.assert_array_equal(fixed_data, spec)
    (finding,) = _findings(dev, 3)
    _expect("as (3,1)" in finding.note and "reshape data to (3,)" in finding.note, finding.note)


@proof("openvino-pdpd-zero-size", cases=[
    (((0,), (1,)), dict(rule="pdpd", axis=-1)),  # a 1 facing a 0: refused
    (((2, 0), (1, 1)), dict(rule="pdpd", axis=0)),
    (((1,), (2, 0), (0,)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=-1)),
    (((2, 1), (0,)), dict(rule="pdpd", axis=-1)),  # a 0 facing a 1: accepted, (2,0)
    (((0,), (1, 1), (0,)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=-1)),  # (1,0)
])
def openvino_pdpd_zero_size(dev):
    ov, oracle = _ov()
    # What OpenVINO's shape inference gives for each case: a refusal, or the shape (not A's, then's)
    ov_says = [None, None, None, (2, 0), (1, 0)]
    fixed = []
    for i, ((shapes, attrs), want) in enumerate(zip(CASES[dev], ov_says)):
        select = attrs["rule"] == "openvino-select"
        names = ("cond", "then", "else") if select else ("A", "B")
        op = "Select" if select else "Add"
        where = f"{op} pdpd axis {attrs['axis']} of " + ", ".join(f"{n} {s}" for n, s in zip(names, shapes))
        if want is None:  # the spec (and bcast) accept a 1 facing a 0, with A's (then's) shape
            _expect(_plan(dev, i).shape == shapes[1 if select else 0])
        else:  # and refuse a 0 facing a 1 (only B stretches)
            _expect_error(dev, i)
        got = _refusal(oracle.infer_shape, op, shapes, **_pdpd(attrs["axis"]))
        (finding,) = _findings(dev, i)
        if want is None:
            if isinstance(got, tuple):
                fixed.append(f"{where} is accepted: {got}")
            else:
                _expect("inconsistent" in got or "not broadcastable" in got, got)
                _expect("refuses" in finding.note, finding.note)
        elif got != want:
            fixed.append(f"{where} gives {got}, not {want}")
        else:
            _expect(format_shape(want) in finding.note, finding.note)
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


@proof("openvino-explicit-scalar-axes", cases=[
    (((), (1, 3)), dict(rule="explicit", axes_mapping=[0])),
])
def openvino_explicit_scalar_with_one_axis(dev):
    ov, oracle = _ov()
    (d_shape, target), attrs = _case(dev)
    _expect_error(dev)  # one axes_mapping entry for a rank-0 data
    _expect(infer(d_shape, target, rule="explicit", axes_mapping=[]).shape == target)  # the spec's way
    axes = attrs["axes_mapping"]
    out = _refusal(oracle.infer_shape, "Broadcast", [d_shape, target, axes], mode="explicit")
    if isinstance(out, str):
        _fixed(dev, ov, f"Broadcast explicit of scalar data to {list(target)} with axes_mapping {axes} is "
                        f"refused: {out}")
    _expect(out == target)
    got = oracle.run("Broadcast", [np.array(7.0, np.float32), target, axes], static=True, mode="explicit")
    np.testing.assert_array_equal(got, np.full(target, 7.0, np.float32))
    # Model.evaluate refuses it at run time
    ref = _refusal(oracle.run, "Broadcast", [np.array(7.0, np.float32), target, axes], device="evaluate",
                   mode="explicit")
    if not isinstance(ref, str):
        _fixed(dev, ov, f"Model.evaluate runs Broadcast explicit of scalar data with axes_mapping {axes}")
    _expect("doesn't match rank of input tensor" in ref, ref)
    # The scalar counts as one dim of 1: onto a target dim of 2 it is refused, as a (1,) would be.
    with _raises(RuntimeRefused, match="Expected 1. Got 2"):
        oracle.infer_shape("Broadcast", [(), (2, 3), axes], mode="explicit")
    _expect(dev not in _ids(applicable((), (2, 3), rule="explicit", axes_mapping=[0])))

