"""Proofs of the ONNX records: onnxruntime, onnx's ReferenceEvaluator, shape inference and version
converter."""

from __future__ import annotations

import functools

import numpy as np

from ...core.errors import BroadcastError
from ...core._format import format_shape
from . import ops as onnx_ops
from ..deviations import BY_ID, applicable
from .._oracle import RuntimeRefused, last_line
from ._model import make_model

from .._proof import (
    CASES, _aligned, _case, _expect, _expect_error, _findings, _fixed, _ids, _need, _plan, _raises,
    _rule_attrs, proof,
)


def _onnx():
    """onnx and the ReferenceEvaluator's oracle."""
    onnx = _need("onnx")
    from . import reference

    return onnx, reference


@proof("onnxruntime-where-negative-zero", cases=[])
def onnxruntime_where_loses_the_sign_of_zero(dev):
    """A deviation of values (no shape case, no check): onnxruntime's Where gives +0.0 for an X of -0.0
    that cond selects; onnx_ops.run returns X's element, -0.0, as the spec says."""
    ort, oracle = _ort()
    _expect(BY_ID[dev].check is None and not CASES[dev])
    for dtype in (np.float32, np.float64):
        cond = np.array([True, False, True, False])
        x = np.array([-0.0, -0.0, -0.0, 1.0], dtype)
        y = np.array([-0.0, -0.0, 5.0, -0.0], dtype)
        (got,) = oracle.run("Where", [cond, x, y])
        if np.signbit(got[0]) and np.signbit(got[2]):
            _fixed(dev, ort, f"Where keeps -0.0 from X ({dtype.__name__})")
        _expect(list(np.signbit(got)) == [False, True, False, True])  # from X: +0.0; from Y: -0.0 kept
        spec = onnx_ops.run("Where", cond, x, y)
        _expect(list(np.signbit(spec)) == [True, True, True, True])


def _ort():
    """onnxruntime and its oracle."""
    ort = _need("onnxruntime")
    from . import onnxruntime

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


@proof("onnxruntime-prelu-bidirectional", cases=[
    (((3, 1), (1, 4)), dict(rule="unidirectional")),
])
def onnxruntime_prelu_broadcasts_both_ways(dev):
    ort, oracle = _ort()
    _prelu_runs_both_ways(dev, ort, "onnxruntime", oracle.run)


@proof("reference-prelu-bidirectional", cases=[
    (((3, 1), (1, 4)), dict(rule="unidirectional")),
])
def reference_prelu_broadcasts_both_ways(dev):
    onnx, oracle = _onnx()
    _prelu_runs_both_ways(dev, onnx, "ReferenceEvaluator", oracle.run)


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
    _expect(y.shape == np.broadcast_shapes(x_shape, s_shape) == (3, 4))
    np.testing.assert_allclose(y, _prelu(x, slope), rtol=1e-6)


@proof("reference-prelu-axis-fallback", cases=[
    (((2, 3, 4, 5), (3,)), dict(rule="unidirectional")),
])
def reference_prelu_axis_fallback(dev):
    onnx, oracle = _onnx()
    (x_shape, s_shape), attrs = _case(dev)
    _expect_error(dev)
    with _raises(ValueError):  # not numpy-broadcastable either
        np.broadcast_shapes(x_shape, s_shape)
    x, slope = _floats([x_shape, s_shape])
    try:
        (y,) = oracle.run("PRelu", [x, slope])
    except RuntimeRefused as e:
        _fixed(dev, onnx, f"ReferenceEvaluator refuses PRelu X {x_shape}, slope {s_shape}: {e.message}")
    _expect(y.shape == x_shape)
    np.testing.assert_allclose(y, _prelu(x, slope.reshape(1, 3, 1, 1)), rtol=1e-6)  # along axis 1


@proof("onnx-shape-inference-unchecked", cases=[
    (((3, 4), (4, 5), (4,)), dict(rule="onnx-gemm")),
    (((3, 1), (1, 4)), dict(rule="unidirectional")),
])
def onnx_shape_inference_does_not_check_gemm_c_or_prelu_slope(dev):
    onnx, _ = _onnx()
    from onnx import shape_inference

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
        _expect(got == want, f"{op} with {ins}: inferred {got}, expected the unchecked {want}")


@proof("onnxruntime-no-legacy-opsets", cases=[
    (((2, 3, 4, 5), (3, 4)), dict(rule="onnx-legacy", broadcast=1, axis=1)),
])
def onnxruntime_does_not_run_legacy_opsets(dev):
    ort, oracle = _ort()
    (a_shape, b_shape), attrs = _case(dev)
    plan = _plan(dev)
    A = np.ones(a_shape, np.float32)
    B = np.arange(12, dtype=np.float32).reshape(b_shape)
    try:
        (y,) = oracle.run("Add", [A, B], opset=6, **_legacy(attrs))
    except RuntimeRefused as e:
        _expect("NOT_IMPLEMENTED" in e.message and "Could not find an implementation for Add(6)" in e.message, e)
    else:
        right = np.array_equal(y, np.add(*_aligned(plan, [A, B])))
        _fixed(dev, ort, f"an opset-6 Add (broadcast=1, axis=1) runs; result right: {right}")


@proof("reference-legacy-ignores-broadcast", cases=[
    (((3, 3), (3,)), dict(rule="onnx-legacy", broadcast=1, axis=0)),
    (((2, 3, 4, 5), (5,)), dict(rule="onnx-legacy", broadcast=0)),
    (((2, 3, 4, 5), (3, 4)), dict(rule="onnx-legacy", broadcast=1, axis=1)),
])
def reference_ignores_legacy_broadcast_axis(dev):
    onnx, oracle = _onnx()

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
        _expect("could not be broadcast" in e.message, e.message)
    else:
        _fixed(dev, onnx, f"Add-6 broadcast=1 axis=1 with A {a_shape}, B {b_shape} runs; right: "
                          f"{np.array_equal(y, np.add(*_aligned(plan, [A, B])))}")


@proof("reference-pow1-legacy-attrs", cases=[
    (((2, 3, 4, 5), (3, 4)), dict(rule="onnx-legacy", broadcast=1, axis=1, op="Pow")),
    (((2, 3), (3,)), dict(rule="onnx-legacy", broadcast=0, op="Pow")),
])
def reference_pow1_refuses_legacy_attributes(dev):
    onnx, oracle = _onnx()
    other = "reference-legacy-ignores-broadcast"

    # 1. broadcast=1, axis=1: the legacy rule accepts; the evaluator does not run the node at all.
    (a_shape, b_shape), attrs = _case(dev, 0)
    plan = _plan(dev, 0)
    A, B = _floats([a_shape, b_shape], low=0.5)
    want = np.power(*_aligned(plan, [A, B]))
    np.testing.assert_allclose(onnx_ops.run("Pow", A, B, opset=1, **_legacy(attrs)), want, rtol=1e-6)
    try:
        (y,) = oracle.run("Pow", [A, B], opset=1, **_legacy(attrs))
    except RuntimeRefused as e:
        _expect("Pow._run() got an unexpected keyword argument" in e.message, e.message)  # 'broadcast' or 'axis'
    else:
        _fixed(dev, onnx, f"Pow-1 broadcast=1 axis=1 of A {a_shape}, B {b_shape} runs; right: "
                          f"{y.shape == want.shape and np.allclose(y, want)}")

    # 2. broadcast=0 given: refused even so; left out: numpy broadcasting, as the other legacy ops do.
    (a_shape, b_shape), attrs = _case(dev, 1)
    _expect_error(dev, 1)
    A, B = _floats([a_shape, b_shape], low=0.5)
    with _raises(RuntimeRefused, match="unexpected keyword argument 'broadcast'"):
        oracle.run("Pow", [A, B], opset=1, broadcast=0)
    (y,) = oracle.run("Pow", [A, B], opset=1)
    np.testing.assert_allclose(y, np.power(A, B), rtol=1e-6)
    (finding,) = _findings(dev, 1)
    _expect(format_shape(y.shape) in finding.note, finding.note)

    # The two records agree: the older one speaks of Pow-1 no more, of Add-6 still.
    for shapes, attrs in CASES[dev]:
        rule_attrs = _rule_attrs(attrs)
        _expect(other not in _ids(applicable(*shapes, op="Pow", **rule_attrs)), shapes)
        _expect(other in _ids(applicable(*shapes, op="Add", **rule_attrs)), shapes)
        _expect(dev not in _ids(applicable(*shapes, op="Add", **rule_attrs)), shapes)


_NUMPY_VARIADIC = {
    "Max": lambda xs: functools.reduce(np.maximum, xs),
    "Min": lambda xs: functools.reduce(np.minimum, xs),
    "Sum": lambda xs: functools.reduce(np.add, xs),
    "Mean": lambda xs: functools.reduce(np.add, xs) / np.float32(len(xs)),
}


@proof("reference-variadic-before-8-broadcasts", cases=[
    (((2, 3), (3,)), dict(rule="none", op="Max")),
    (((2, 1), (3,)), dict(rule="none", op="Min")),
    (((2, 3), (1, 3), (2, 3)), dict(rule="none", op="Sum")),
    (((2, 3), ()), dict(rule="none", op="Mean")),
])
def reference_variadic_before_8_broadcasts(dev):
    onnx, oracle = _onnx()
    ort, ort_oracle = _ort()
    fixed = []
    for i, (shapes, attrs) in enumerate(CASES[dev]):
        op = attrs["op"]
        where = f"{op}-6 of {', '.join(map(format_shape, shapes))}"
        _expect_error(dev, i)
        inputs = _floats(shapes, seed=i)
        with _raises(BroadcastError):
            onnx_ops.run(op, *inputs, opset=6)
        with _raises(RuntimeRefused):  # onnxruntime keeps to the spec
            ort_oracle.run(op, inputs, opset=6)
        try:
            (y,) = oracle.run(op, inputs, opset=6)
        except RuntimeRefused as e:
            fixed.append(f"{where} is refused: {e.message}")
            continue
        want = _NUMPY_VARIADIC[op](inputs)
        _expect(y.shape == want.shape, (where, y.shape))
        np.testing.assert_allclose(y, want, rtol=1e-6, err_msg=where)
        (finding,) = _findings(dev, i)
        _expect(format_shape(want.shape) in finding.note, finding.note)
    if fixed:
        _fixed(dev, onnx, "; ".join(fixed))
    # Mean with an output larger than data_0: the evaluator refuses too (it adds in place), and the record
    # says nothing.
    small_first = _floats([(3,), (2, 3)])
    with _raises(RuntimeRefused, match="non-broadcastable output operand"):
        oracle.run("Mean", small_first, opset=6)
    _expect(dev not in _ids(applicable((3,), (2, 3), rule="none", op="Mean")))


@proof("reference-gemm-beta0-unchecked-c", cases=[
    (((2, 3), (3, 4), (3,)), dict(rule="onnx-gemm", op="Gemm", op_attrs={"beta": 0.0})),
])
def reference_gemm_beta0_does_not_check_c(dev):
    onnx, oracle = _onnx()
    ort, ort_oracle = _ort()
    shapes, attrs = _case(dev)
    _expect_error(dev)
    beta = attrs["op_attrs"]["beta"]
    A, B, C = _floats(shapes)
    with _raises(BroadcastError):
        onnx_ops.run("Gemm", A, B, C, beta=beta)
    with _raises(RuntimeRefused, match="Invalid bias shape"):  # onnxruntime keeps to the spec
        ort_oracle.run("Gemm", [A, B, C], beta=beta)
    try:
        (y,) = oracle.run("Gemm", [A, B, C], beta=beta)
    except RuntimeRefused as e:
        _fixed(dev, onnx, f"Gemm beta=0 with C {shapes[2]} is refused: {e.message}")
    np.testing.assert_allclose(y, A @ B, rtol=1e-6)
    (finding,) = _findings(dev)
    _expect(format_shape(y.shape) in finding.note, finding.note)
    # With beta=1 the evaluator reads C and refuses, and the record says nothing.
    with _raises(RuntimeRefused):
        oracle.run("Gemm", [A, B, C], beta=1.0)
    _expect(dev not in _ids(applicable(*shapes, rule="onnx-gemm", op="Gemm", op_attrs={"beta": 1.0})))


@proof("onnxruntime-gemm-rank1-a", cases=[
    (((5,), (5, 3)), dict(rule="onnx-gemm")),
    (((5,), (3, 5), (1, 3)), dict(rule="onnx-gemm", transB=1)),
])
def onnxruntime_gemm_reads_a_1d_a_as_a_row(dev):
    ort, oracle = _ort()
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
        _expect(format_shape(y.shape) in finding.note)
    # A 1-D B is refused, as the spec says: the record does not fire there.
    with _raises(RuntimeRefused):
        oracle.run("Gemm", _floats([(2, 5), (5,)]))
    _expect(dev not in _ids(applicable((2, 5), (5,), rule="onnx-gemm")))


@proof("reference-gemm-any-rank", cases=[
    (((2, 3, 4), (4, 5)), dict(rule="onnx-gemm")),
    (((1, 4), ()), dict(rule="onnx-gemm")),
    (((5,), (5, 3)), dict(rule="onnx-gemm")),
])
def reference_gemm_takes_any_rank(dev):
    onnx, oracle = _onnx()
    for i, (shapes, _attrs) in enumerate(CASES[dev]):
        _expect_error(dev, i)
        arrays = _floats(shapes)
        try:
            (y,) = oracle.run("Gemm", arrays)
        except RuntimeRefused as e:
            _fixed(dev, onnx, f"Gemm of {shapes} is refused: {e.message}")
        np.testing.assert_allclose(y, np.dot(*arrays), rtol=1e-5)
        _expect(_findings(dev, i))


@proof("reference-mean-in-place", cases=[
    (((2, 1), (4, 2, 1)), dict(rule="numpy", op="Mean")),
])
def reference_mean_adds_in_place(dev):
    onnx, oracle = _onnx()
    ort, ort_oracle = _ort()
    (d0, d1), attrs = _case(dev)
    plan = _plan(dev)
    X0, X1 = _floats([d0, d1])
    want = onnx_ops.run("Mean", X0, X1)
    _expect(want.shape == plan.shape == (4, 2, 1))
    (got,) = ort_oracle.run("Mean", [X0, X1])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    try:
        (y,) = oracle.run("Mean", [X0, X1])
    except RuntimeRefused as e:
        _expect("non-broadcastable output operand" in e.message, e.message)
    else:
        _fixed(dev, onnx, f"Mean of data_0 {d0} and data_1 {d1} runs; right: "
                          f"{y.shape == want.shape and np.allclose(y, want)}")
    # data_0 the largest: the evaluator is right, and the record says nothing.
    (y,) = oracle.run("Mean", [X1, X0])
    np.testing.assert_allclose(y, want, rtol=1e-6)
    _expect(dev not in _ids(applicable(d1, d0, op="Mean")))


@proof("onnx-version-converter-axis", cases=[
    (((2, 3, 4, 5), (3, 4)), dict(rule="onnx-legacy", broadcast=1, axis=1)),
    (((2, 3, 4, 5), (5,)), dict(rule="onnx-legacy", broadcast=1, axis=-1)),
    (((2, 3, 4, 5), (2, 3)), dict(rule="onnx-legacy", broadcast=1, axis=0)),
])
def onnx_version_converter_axis(dev):
    onnx, oracle = _onnx()
    from onnx import version_converter

    _converter_axis_minus_one_and_zero(dev)
    (a_shape, b_shape), attrs = _case(dev)
    plan = _plan(dev)
    try:
        converted = version_converter.convert_version(_legacy_add_model(a_shape, b_shape, attrs), 7)
    except RuntimeError as e:
        # It unsqueezed B (3,4) to (3,4,1,1) instead of (3,4,1), then checks it against A's axes 1..
        _expect("assert_numpy_multibroadcastable" in str(e), str(e))
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


def _converter_axis_minus_one_and_zero(dev):
    """The record's other two cases: axis -1 is read literally; axis 0 loses a type."""
    onnx, _ = _onnx()
    ort, ort_oracle = _ort()
    from onnx import version_converter

    (a_shape, b_shape), attrs = _case(dev, 1)
    _expect(attrs["axis"] == -1 and _plan(dev, 1).aligned_shape(1) == (1, 1, 1, 5))
    with _raises(RuntimeError, match="assert_numpy_multibroadcastable"):
        version_converter.convert_version(_legacy_add_model(a_shape, b_shape, attrs), 7)

    (a_shape, b_shape), attrs = _case(dev, 2)
    _expect(attrs["axis"] == 0)
    converted = version_converter.convert_version(_legacy_add_model(a_shape, b_shape, attrs), 7)
    A, B = _floats([a_shape, b_shape], seed=3)
    try:
        ort_oracle.run_model(converted, {"A": A, "B": B})
    except RuntimeRefused as e:
        _expect("Invalid tensor data type 0" in e.message, e.message)
    else:
        _fixed(dev, onnx, "convert_version(Add-6 axis=0) now gives a model onnxruntime loads")
    # with the bad value_info dropped, the converted graph computes the legacy result
    del converted.graph.value_info[:]
    (y,) = ort_oracle.run_model(converted, {"A": A, "B": B})
    np.testing.assert_allclose(y, np.add(*_aligned(_plan(dev, 2), [A, B])), rtol=1e-6)

