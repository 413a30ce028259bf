"""Differential tests: bcast's ONNX rules against onnx and onnxruntime.

- ``numpy`` against ONNX's C++ shape inference (Add, Sum, Where) and against
  onnxruntime's kernels (values through the Plan);
- ``onnx-gemm`` / ``unidirectional`` against Gemm's C in onnxruntime and the
  ReferenceEvaluator;
- ``bidirectional`` against Expand in onnxruntime and the ReferenceEvaluator;
- every broadcasting node test that ships with onnx (its expected outputs);
- ``onnx-legacy`` (opset 1-6 ``broadcast``/``axis``) against an independent
  transcription of Caffe2's rule, and, where onnx's 6->7 converter handles
  the case, against onnxruntime running the converted model.

Where a runtime departs from its own spec the case must be a registered
deviation (``bcast.frameworks.deviations``); the test asserts that it is.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bcast
from bcast import BroadcastError
from bcast.frameworks.deviations import applicable
from support.arrays import through_plan
from support.shapes import random_shapes

onnx = pytest.importorskip("onnx")

from onnx import helper, shape_inference  # noqa: E402
from support.onnx_node_cases import all_node_cases, opset_of  # noqa: E402

from bcast.frameworks.onnx import reference as ref_oracle  # noqa: E402
from bcast.frameworks._oracle import RuntimeRefused  # noqa: E402
from bcast.frameworks.onnx._model import make_model as build_model  # noqa: E402

try:  # onnxruntime is optional: its tests skip without it
    import onnxruntime  # noqa: F401

    from bcast.frameworks.onnx import onnxruntime as ort_oracle
except ImportError:  # pragma: no cover
    ort_oracle = None

needs_ort = pytest.mark.skipif(ort_oracle is None, reason="onnxruntime is not installed")

OPSET = 21
F32 = "float32"


# --- helpers -------------------------------------------------------------------


def infer(*shapes, rule="numpy", **attrs):
    try:
        return bcast.infer(*shapes, rule=rule, **attrs)
    except BroadcastError as e:
        return e


def refused(res) -> bool:
    return isinstance(res, BroadcastError)


def make_model(op, inputs, *, attrs=None, initializers=None, opset=OPSET):
    """A one-node model (bcast.frameworks._oracle' builder).  ``inputs``: (name, dtype,
    shape or None) triples; ``initializers``: name -> array; the output is
    declared without a type or shape, so inference has to find them."""
    names, dtypes, shapes = zip(*inputs)
    return build_model(op, dtypes, names=names, shapes=shapes, attrs=attrs, initializers=initializers,
                       opset=opset)


def onnx_inferred_shape(model):
    """The output shape ONNX infers in strict mode, or ``None`` when it refuses."""
    try:
        out = shape_inference.infer_shapes(model, strict_mode=True).graph.output[0]
    except shape_inference.InferenceError:
        return None
    tt = out.type.tensor_type
    assert tt.HasField("shape"), "inference left the output without a shape"
    dims = []
    for d in tt.shape.dim:
        assert d.HasField("dim_value"), f"symbolic output dim {d}"
        dims.append(d.dim_value)
    return tuple(dims)


def _first_output_or_refusal(run, *args):
    try:
        return run(*args)[0]
    except RuntimeRefused as e:
        return e


def ort_run(model, feeds):
    """onnxruntime's output 0 for ``model``, or its refusal (at load or at run)."""
    return _first_output_or_refusal(ort_oracle.run_model, model, feeds)


def ort_run_op(op, arrays):
    """onnxruntime's output 0 for ``op`` on ``arrays`` (inputs declared without
    shapes: its kernels decide, one cached session per op and dtypes), or its refusal."""
    return _first_output_or_refusal(lambda: ort_oracle.run(op, arrays, opset=OPSET))


def reference_run(model, feeds):
    """The ReferenceEvaluator's output 0, or its refusal."""
    return _first_output_or_refusal(ref_oracle.run_model, model, feeds)


def data(rng, shape, dtype=np.float32):
    """Small integers, so sums are exact in float32 whatever the order."""
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    return np.asarray(rng.integers(-8, 9, size=shape), dtype=dtype)


# Multidirectional ops: (op, dtype of each input)
NUMPY_OPS = {
    "Add": (np.float32, np.float32),
    "Sum": (np.float32, np.float32, np.float32),
    "Where": (np.bool_, np.float32, np.float32),
}


def numpy_model(op, shapes):
    return make_model(op, [(f"x{i}", t, s) for i, (t, s) in enumerate(zip(NUMPY_OPS[op], shapes))])


def expected_numpy(op, plan, arrays):
    xs = through_plan(plan, *arrays)
    if op == "Add":
        return xs[0] + xs[1]
    if op == "Sum":
        return xs[0] + xs[1] + xs[2]
    return np.where(*xs)


# --- numpy rule vs ONNX shape inference ----------------------------------------

FIXED_NUMPY = [
    # Broadcasting.md's examples
    ("Add", [(2, 3, 4, 5), ()], (2, 3, 4, 5)),
    ("Add", [(2, 3, 4, 5), (5,)], (2, 3, 4, 5)),
    ("Add", [(4, 5), (2, 3, 4, 5)], (2, 3, 4, 5)),
    ("Add", [(1, 4, 5), (2, 3, 1, 1)], (2, 3, 4, 5)),
    ("Add", [(3, 4, 5), (2, 1, 1, 1)], (2, 3, 4, 5)),
    ("Add", [(), ()], ()),
    ("Add", [(1,), ()], (1,)),
    ("Add", [(0,), (1,)], (0,)),
    ("Add", [(1, 0), (3, 1)], (3, 0)),
    ("Add", [(2, 0), (0,)], (2, 0)),
    ("Add", [(3,), (4,)], None),
    ("Add", [(0,), (5,)], None),
    ("Add", [(2, 3), (3, 2)], None),
    ("Add", [(2, 1), (8, 4, 3)], None),
    ("Add", [(15, 3, 5), (15, 3)], None),
    ("Sum", [(3, 1), (1, 4), (2, 1, 1)], (2, 3, 4)),
    ("Sum", [(3, 1), (1, 4), (2, 1, 5)], None),
    ("Sum", [(), (0,), (1, 1)], (1, 0)),
    ("Where", [(2, 1, 4), (3, 1), (1,)], (2, 3, 4)),
    ("Where", [(2,), (3,), (1,)], None),
    ("Where", [(), (), ()], ()),
    ("Where", [(1, 0, 1), (2, 1, 1), (3,)], (2, 0, 3)),
]


@pytest.mark.parametrize("op,shapes,want", FIXED_NUMPY, ids=lambda v: str(v).replace(" ", ""))
def test_numpy_fixed_vs_onnx_inference(op, shapes, want):
    res = infer(*shapes)
    got = onnx_inferred_shape(numpy_model(op, shapes))
    if want is None:
        assert refused(res) and res.kind == "dims"
        assert got is None
    else:
        assert not refused(res), str(res)
        assert res.shape == want == got


def test_numpy_random_vs_onnx_inference():
    """Random shapes (0-size dims and rank 0 included): ONNX and bcast accept
    the same shapes with the same output, or both refuse."""
    rng = np.random.default_rng(2023)
    stats = {"accept": 0, "refuse": 0, "zero": 0, "rank0": 0}
    for op in NUMPY_OPS:
        for _ in range(300):
            shapes = random_shapes(rng, len(NUMPY_OPS[op]))
            res = infer(*shapes)
            got = onnx_inferred_shape(numpy_model(op, shapes))
            if refused(res):
                assert got is None, (op, shapes, "onnx infers", got, "bcast refuses:", str(res))
                stats["refuse"] += 1
            else:
                assert got == res.shape, (op, shapes, "onnx", got, "bcast", res.shape)
                stats["accept"] += 1
            stats["zero"] += any(0 in s for s in shapes)
            stats["rank0"] += any(len(s) == 0 for s in shapes)
    assert min(stats.values()) >= 60, stats  # the sample covers every kind of case
    print(f"onnx shape inference: {sum(stats[k] for k in ('accept', 'refuse'))} cases {stats}")


# --- numpy rule vs onnxruntime -------------------------------------------------


@needs_ort
@pytest.mark.parametrize("op,shapes,want", FIXED_NUMPY, ids=lambda v: str(v).replace(" ", ""))
def test_numpy_fixed_vs_onnxruntime(op, shapes, want):
    """Static input shapes: onnxruntime refuses at load (ONNX's inference) or runs."""
    rng = np.random.default_rng(0)
    arrays = [data(rng, s, t) for s, t in zip(shapes, NUMPY_OPS[op])]
    feeds = {f"x{i}": a for i, a in enumerate(arrays)}
    got = ort_run(numpy_model(op, shapes), feeds)
    res = infer(*shapes)
    if want is None:
        assert refused(res) and isinstance(got, Exception)
    else:
        assert not isinstance(got, Exception), str(got)
        assert got.shape == res.shape == want
        assert np.array_equal(got, expected_numpy(op, res, arrays))


@needs_ort
def test_numpy_random_vs_onnxruntime_kernels():
    """Inputs declared without shapes, so that onnxruntime's kernels (not
    ONNX's inference) decide: values equal numpy through the Plan; the kernel
    fails exactly when bcast refuses."""
    rng = np.random.default_rng(77)
    counts = {"accept": 0, "refuse": 0}
    for op in NUMPY_OPS:
        for _ in range(250):
            shapes = random_shapes(rng, len(NUMPY_OPS[op]), perturb=0.12)
            arrays = [data(rng, s, t) for s, t in zip(shapes, NUMPY_OPS[op])]
            got = ort_run_op(op, arrays)
            res = infer(*shapes)
            if refused(res):
                assert isinstance(got, Exception), (op, shapes, "onnxruntime gives", got.shape, str(res))
                counts["refuse"] += 1
            else:
                assert not isinstance(got, Exception), (op, shapes, str(got))
                assert got.shape == res.shape, (op, shapes, got.shape, res.shape)
                assert np.array_equal(got, expected_numpy(op, res, arrays)), (op, shapes)
                counts["accept"] += 1
    assert min(counts.values()) >= 80, counts
    print(f"onnxruntime kernels (numpy rule): {sum(counts.values())} cases {counts}")


# --- Gemm's C: onnx-gemm / unidirectional --------------------------------------

M, K, N = 3, 4, 5
GEMM_C_ACCEPTED = [(), (1,), (N,), (1, N), (M, 1), (1, 1), (M, N)]
GEMM_C_REFUSED = [(M,), (N, M), (1, 1, N), (1, M, N), (2, M, N), (K,), (2, N), (M, 2), (1, M), (N, 1)]


def gemm_case(c_shape, trans_a=0, trans_b=0, m=M, k=K, n=N):
    a_shape = (k, m) if trans_a else (m, k)
    b_shape = (n, k) if trans_b else (k, n)
    inputs = [("A", F32, a_shape), ("B", F32, b_shape)]
    if c_shape is not None:
        inputs.append(("C", F32, c_shape))
    model = make_model("Gemm", inputs, attrs={"transA": trans_a, "transB": trans_b})
    return a_shape, b_shape, model


GEMM_CASES = (
    [(c, 0, 0, M, N, True) for c in GEMM_C_ACCEPTED]
    + [(c, 0, 0, M, N, False) for c in GEMM_C_REFUSED]
    + [(c, 1, 0, M, N, c in GEMM_C_ACCEPTED) for c in GEMM_C_ACCEPTED + GEMM_C_REFUSED[:4]]
    + [(c, 1, 1, M, N, c in GEMM_C_ACCEPTED) for c in [(N,), (M, 1), (N, M), (M,)]]
    # M == N: a 1-D C of length M is (N,), so it is accepted
    + [(c, 0, 1, 3, 3, ok) for c, ok in (((3,), True), ((1, 3), True), ((3, 1), True), ((3, 3), True),
                                         ((2,), False), ((1, 3, 3), False))]
)


@needs_ort
@pytest.mark.parametrize("c_shape,trans_a,trans_b,m,n,ok", GEMM_CASES, ids=lambda v: str(v).replace(" ", ""))
def test_gemm_c_vs_onnxruntime_and_reference(c_shape, trans_a, trans_b, m, n, ok):
    a_shape, b_shape, model = gemm_case(c_shape, trans_a, trans_b, m=m, n=n)
    res = infer(a_shape, b_shape, c_shape, rule="onnx-gemm", transA=trans_a, transB=trans_b)
    assert refused(res) != ok, (c_shape, str(res) if refused(res) else res.shape)
    # C as the B of the unidirectional rule, with A = (M, N)
    uni = infer((m, n), c_shape, rule="unidirectional")
    assert refused(uni) == refused(res), (c_shape, uni)

    rng = np.random.default_rng(1)
    a, b, c = data(rng, a_shape), data(rng, b_shape), data(rng, c_shape)
    feeds = {"A": a, "B": b, "C": c}
    got = ort_run(model, feeds)
    ref = reference_run(model, feeds)
    if refused(res):
        assert isinstance(got, Exception), (c_shape, "onnxruntime accepts, shape", got.shape)
        assert "Invalid bias shape" in str(got)
        assert isinstance(ref, Exception), (c_shape, "ReferenceEvaluator accepts, shape", ref.shape)
        # ONNX's inference lets the model through: that is a registered deviation
        if onnx_inferred_shape(model) is not None:
            ids = [f.deviation.id for f in applicable(a_shape, b_shape, c_shape, rule="onnx-gemm",
                                                      transA=trans_a, transB=trans_b)]
            assert "onnx-shape-inference-unchecked" in ids
        return
    assert res.shape == (m, n) == uni.shape
    a2 = a.T if trans_a else a
    b2 = b.T if trans_b else b
    (cb,) = through_plan(uni, np.zeros((m, n), np.float32), c)[1:]
    want = a2 @ b2 + cb
    for name, out in (("onnxruntime", got), ("reference", ref)):
        assert not isinstance(out, Exception), (name, c_shape, str(out))
        assert out.shape == res.shape, (name, out.shape)
        assert np.array_equal(out, want), name
    # the Plan of onnx-gemm places C as the unidirectional rule does
    assert res.aligned_shape(2) == uni.aligned_shape(1)
    assert onnx_inferred_shape(model) == res.shape


@needs_ort
def test_gemm_without_c():
    a_shape, b_shape, model = gemm_case(None)
    res = bcast.infer(a_shape, b_shape, rule="onnx-gemm")
    got = ort_run(model, {"A": np.ones(a_shape, np.float32), "B": np.ones(b_shape, np.float32)})
    assert got.shape == res.shape == (M, N)


# --- Expand: bidirectional -----------------------------------------------------

FIXED_EXPAND = [
    ((3, 1), (2, 1, 6), (2, 3, 6)),
    ((3, 1), (1,), (3, 1)),
    ((3, 1), (3, 4), (3, 4)),
    ((3, 4), (1, 1), (3, 4)),
    ((3, 1), (2,), (3, 2)),
    ((1,), (0,), (0,)),
    ((0,), (2, 1), (2, 0)),
    ((), (2, 3), (2, 3)),
    ((2, 3), (), (2, 3)),
    ((), (), ()),
    ((1, 1), (3,), (1, 3)),
    ((3,), (4,), None),
    ((3, 1), (2, 4, 1), None),
    ((0,), (3,), None),
    ((2, 3), (3, 2), None),
]


def expand_model(data_shape, target):
    """Expand with the target as an initializer, so that ONNX's inference sees it."""
    shape_t = np.array(target, dtype=np.int64).reshape(len(target))
    return make_model("Expand", [("x", F32, data_shape)], initializers={"s": shape_t})


def _check_expand(data_shape, target, want_ok, rng):
    res = infer(data_shape, target, rule="bidirectional")
    assert refused(res) != want_ok, (data_shape, target, res)
    x = data(rng, data_shape)
    model = expand_model(data_shape, target)
    outs = {"infer_shapes": onnx_inferred_shape(model), "reference": reference_run(model, {"x": x})}
    if ort_oracle is not None:
        outs["onnxruntime"] = ort_run(model, {"x": x})
        outs["onnxruntime (shape fed)"] = ort_run_op("Expand", [x, np.array(target, np.int64).reshape(len(target))])
    for name, out in outs.items():
        if refused(res):
            assert out is None or isinstance(out, Exception), (name, data_shape, target, "accepts", out)
            continue
        assert out is not None and not isinstance(out, Exception), (name, data_shape, target, str(out))
        if name == "infer_shapes":
            assert out == res.shape, (name, data_shape, target, out, res.shape)
        else:
            assert out.shape == res.shape, (name, data_shape, target, out.shape, res.shape)
            assert np.array_equal(out, through_plan(res, x, np.zeros(target))[0]), (name, data_shape, target)
    return not refused(res)


@pytest.mark.parametrize("data_shape,target,want", FIXED_EXPAND, ids=lambda v: str(v).replace(" ", ""))
def test_expand_fixed(data_shape, target, want):
    res = infer(data_shape, target, rule="bidirectional")
    if want is not None:
        assert res.shape == want
    _check_expand(data_shape, target, want is not None, np.random.default_rng(2))


def test_expand_random():
    rng = np.random.default_rng(8)
    counts = [0, 0]
    for _ in range(250):
        data_shape, target = random_shapes(rng, 2, perturb=0.2)
        ok = not refused(infer(data_shape, target, rule="bidirectional"))
        _check_expand(data_shape, target, ok, rng)
        counts[ok] += 1
    assert min(counts) >= 40, counts
    print(f"Expand: {sum(counts)} random cases, accepted {counts[1]}, refused {counts[0]}")


# --- ONNX's own node tests -----------------------------------------------------

MULTIDIRECTIONAL = {
    "Add", "And", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Div", "Equal", "Greater",
    "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Mean", "Min", "Mod", "Mul", "Or", "Pow", "Sub", "Sum",
    "Where", "Xor",
}
NODE_TEST_OPS = MULTIDIRECTIONAL | {"Expand", "PRelu", "Gemm"}
#: the broadcasting cases the brief names: they must all be found
REQUIRED_NODE_TESTS = [
    *(f"test_{op}_bcast" for op in ("add", "sub", "mul", "div", "equal", "greater", "less")),
    *(f"test_{op}_bcast{v}" for op in ("and", "or", "xor") for v in ("3v1d", "3v2d", "4v2d", "4v3d", "4v4d")),
    "test_pow_bcast_scalar", "test_pow_bcast_array", "test_expand_dim_changed", "test_expand_dim_unchanged",
    "test_prelu_broadcast", "test_gemm_default_scalar_bias", "test_gemm_default_single_elem_vector_bias",
    "test_gemm_default_vector_bias", "test_gemm_default_matrix_bias", "test_gemm_default_zero_bias",
]


@pytest.fixture(scope="module")
def node_tests():
    out = []
    for case in all_node_cases():
        nodes = case.model.graph.node
        if len(nodes) != 1 or nodes[0].op_type not in NODE_TEST_OPS or nodes[0].domain not in ("", "ai.onnx"):
            continue
        out.append(case)
    return out


def _node_test_plan(case, inputs):
    node = case.model.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    present = [name for name in node.input]
    shapes = [tuple(np.shape(x)) for x in inputs]
    op = node.op_type
    if op in MULTIDIRECTIONAL:
        if opset_of(case.model) < 7:
            return bcast.infer(*shapes, rule="onnx-legacy", broadcast=attrs.get("broadcast", 0),
                               axis=attrs.get("axis"))
        return bcast.infer(*shapes, rule="numpy")
    if op == "Expand":
        return bcast.infer(shapes[0], tuple(int(v) for v in np.asarray(inputs[1]).reshape(-1)),
                           rule="bidirectional")
    if op == "PRelu":
        return bcast.infer(shapes[0], shapes[1], rule="unidirectional")
    assert op == "Gemm"
    if len(present) > 2 and present[2] == "":
        shapes = shapes[:2]
    return bcast.infer(*shapes, rule="onnx-gemm", transA=attrs.get("transA", 0), transB=attrs.get("transB", 0))


def test_onnx_node_tests(node_tests):
    """For every single-node test of a broadcasting op (and Expand, PRelu,
    Gemm) shipped with onnx, the matching rule infers the expected output's
    shape from the input shapes."""
    names = {c.name for c in node_tests}
    missing = [n for n in REQUIRED_NODE_TESTS if n not in names]
    assert not missing, missing
    checked = 0
    for case in node_tests:
        for inputs, outputs in case.data_sets:
            if any(not isinstance(x, np.ndarray) for x in list(inputs) + list(outputs[:1])):
                continue  # sequences / optionals: not element-wise tensors
            plan = _node_test_plan(case, inputs)
            assert plan.shape == tuple(outputs[0].shape), (case.name, [x.shape for x in inputs], plan.shape,
                                                           outputs[0].shape)
            checked += 1
    assert checked >= 150, checked
    print(f"onnx node tests: {len(node_tests)} tests, {checked} data sets checked")


def test_onnx_bcast_node_tests_values(node_tests):
    """The *_bcast* data sets of the arithmetic ops: numpy through the Plan
    reproduces ONNX's expected values, not only their shape."""
    ops = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
           "And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor, "Equal": np.equal,
           "Greater": np.greater, "Less": np.less}
    n = 0
    for case in node_tests:
        op = case.model.graph.node[0].op_type
        if op not in ops or "bcast" not in case.name:
            continue
        for inputs, outputs in case.data_sets:
            plan = _node_test_plan(case, inputs)
            got = ops[op](*through_plan(plan, *inputs))
            assert got.shape == outputs[0].shape, case.name
            if got.dtype == np.bool_:
                assert np.array_equal(got, outputs[0]), case.name
            else:
                np.testing.assert_allclose(got, outputs[0], rtol=1e-6, err_msg=case.name)
            n += 1
    assert n >= 20, n


# --- the legacy rule (opset 1-6 broadcast / axis) ------------------------------


def caffe2_legacy(a, b, broadcast, axis):
    """Caffe2's ComputeLegacyBroadcastSizes as described in
    reference/onnx_paddle_xla.md section 1.2: the B axis map, or None."""
    if not broadcast:
        return tuple(range(len(b))) if a == b else None
    if len(b) > len(a):  # ONNX's text: "rank equal to or smaller than the first tensor"
        return None
    if int(np.prod(b, dtype=np.int64)) == 1:  # Caffe2 checks this before looking at axis
        return "scalar"
    start = len(a) - len(b) if axis is None or axis == -1 else axis
    if not 0 <= start <= len(a) - len(b):
        return None
    lo, hi = 0, len(b)
    while lo < hi and b[lo] == 1:
        lo += 1
    while hi > lo and b[hi - 1] == 1:
        hi -= 1
    if any(b[k] != a[start + k] for k in range(lo, hi)):
        return None
    return tuple(range(start, start + len(b)))


def legacy_add_by_index(a, b, start):
    """C = A + B with B's axis k on A's axis start + k, computed element by element."""
    c = np.empty_like(a)
    for idx in np.ndindex(*a.shape):
        bidx = tuple(0 if b.shape[k] == 1 else idx[start + k] for k in range(b.ndim))
        c[idx] = a[idx] + b[bidx]
    return c


LEGACY_CASES = [
    # A, B, axis, B aligned to A (None: refused)
    ((2, 3, 4, 5), (3, 4), 1, (1, 3, 4, 1)),
    ((2, 3, 4, 5), (2,), 0, (2, 1, 1, 1)),
    ((2, 3, 4, 5), (3, 1, 4), 1, None),  # a middle 1 does not stretch
    ((2, 3, 4, 5), (1, 3, 4, 1), 0, (1, 3, 4, 1)),
    ((2, 3, 4, 5), (), None, (1, 1, 1, 1)),
    ((2, 3, 4, 5), (1, 1), None, (1, 1, 1, 1)),
    ((2, 3, 4, 5), (5,), None, (1, 1, 1, 5)),
    ((2, 3, 4, 5), (5,), -1, (1, 1, 1, 5)),  # -1: suffix matching, as unset
    ((2, 3, 4, 5), (4, 5), None, (1, 1, 4, 5)),
    ((2, 3, 4, 5), (4, 5), 2, (1, 1, 4, 5)),
    ((2, 3, 4, 5), (3, 4, 1), 1, (1, 3, 4, 1)),  # a trailing 1 is ignored
    ((2, 3, 4, 5), (1, 3, 4), 0, (1, 3, 4, 1)),  # a leading 1 is ignored
    ((2, 3, 4, 5), (3, 1), 1, (1, 3, 1, 1)),
    ((2, 3, 4, 5), (3, 4), None, None),  # suffix matching: (3,4) vs (4,5)
    ((2, 3, 4, 5), (3, 4), 3, None),  # axis out of range
    ((2, 3, 4, 5), (1, 4, 5), 0, None),  # 4,5 vs 3,4
    ((2, 3, 4, 5), (2, 3, 4, 5, 1), None, None),  # B of higher rank
    ((2, 3, 4, 5), (3, 5), 1, None),
]


@pytest.mark.parametrize("a_shape,b_shape,axis,aligned", LEGACY_CASES, ids=lambda v: str(v).replace(" ", ""))
def test_legacy_plan(a_shape, b_shape, axis, aligned):
    """opset-6 Add, broadcast=1: the Plan's alignment, and numpy through it
    equals an element-by-element legacy add; ONNX inference gives A's shape."""
    res = infer(a_shape, b_shape, rule="onnx-legacy", broadcast=1, axis=axis)
    if aligned is None:
        assert refused(res)
        assert caffe2_legacy(a_shape, b_shape, 1, axis) is None
        return
    assert not refused(res), str(res)
    assert res.shape == a_shape
    assert res.aligned_shape(0) == a_shape
    assert res.aligned_shape(1) == aligned
    rng = np.random.default_rng(6)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    x, y = through_plan(res, a, b)
    start = len(a_shape) - len(b_shape) if axis is None or axis == -1 else axis  # the spec's reading
    want = legacy_add_by_index(a, b, start)
    assert np.array_equal(x + y, want)
    attrs = {"broadcast": 1} if axis is None else {"broadcast": 1, "axis": axis}
    model = make_model("Add", [("A", F32, a_shape), ("B", F32, b_shape)], attrs=attrs, opset=6)
    assert onnx_inferred_shape(model) == a_shape


def test_legacy_rule_vs_caffe2_transcription():
    """Random legacy queries: bcast's onnx-legacy accepts exactly what the
    Caffe2 rule accepts, with the same placement of B."""
    rng = np.random.default_rng(66)
    counts = [0, 0]
    shapes = [s for r in range(0, 5) for s in itertools.product((1, 2, 3), repeat=r)]
    for _ in range(3000):
        a = shapes[int(rng.integers(len(shapes)))]
        b = shapes[int(rng.integers(len(shapes)))]
        if rng.random() < 0.3 and a:  # B a piece of A, the interesting case
            i, j = sorted(int(v) for v in rng.integers(0, len(a) + 1, 2))
            b = tuple(1 if rng.random() < 0.2 else d for d in a[i:j])
        broadcast = int(rng.random() < 0.85)
        axis = [None, -1, *range(0, 5)][int(rng.integers(7))]
        res = infer(a, b, rule="onnx-legacy", broadcast=broadcast, axis=axis)
        model = caffe2_legacy(a, b, broadcast, axis)
        where = (a, b, broadcast, axis)
        if model is None:
            assert refused(res), (where, res.shape)
        else:
            assert not refused(res), (where, str(res))
            assert res.shape == a
            if model != "scalar":
                aligned = [1] * len(a)
                for k, ax in enumerate(model):
                    aligned[ax] = b[k]
                assert res.aligned_shape(1) == tuple(aligned), where
        counts[model is not None] += 1
    assert min(counts) >= 500, counts
    print(f"onnx-legacy vs Caffe2 transcription: {sum(counts)} cases {counts}")


CONVERTIBLE = [(a, b, ax) for a, b, ax, al in LEGACY_CASES if al is not None]


@needs_ort
@pytest.mark.parametrize("a_shape,b_shape,axis", CONVERTIBLE, ids=lambda v: str(v).replace(" ", ""))
def test_legacy_converted_model_in_onnxruntime(a_shape, b_shape, axis):
    """onnxruntime has no opset-6 kernels (deviation onnxruntime-no-legacy-opsets),
    so the model goes through onnx's 6->7 converter first.  Where the converter
    handles the case, onnxruntime's result equals numpy through the Plan."""
    from onnx import version_converter

    attrs = {"broadcast": 1} if axis is None else {"broadcast": 1, "axis": axis}
    model = make_model("Add", [("A", F32, a_shape), ("B", F32, b_shape)], attrs=attrs, opset=6)
    res = bcast.infer(a_shape, b_shape, rule="onnx-legacy", **attrs)
    ids = [f.deviation.id for f in applicable(a_shape, b_shape, rule="onnx-legacy", **attrs)]
    assert "onnxruntime-no-legacy-opsets" in ids
    assert isinstance(ort_run(model, {"A": np.zeros(a_shape, np.float32), "B": np.zeros(b_shape, np.float32)}),
                      Exception)
    if "onnx-version-converter-axis" in ids and axis != 0:
        pytest.skip("registered deviation onnx-version-converter-axis"
                    " (tests/frameworks/test_deviations_onnx.py proves it)")
    converted = version_converter.convert_version(model, 7)
    # with axis 0 the converter leaves the element type of its Unsqueeze output unset in value_info,
    # which onnxruntime refuses to load (the same registered deviation); the annotations are not needed
    del converted.graph.value_info[:]
    rng = np.random.default_rng(9)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    got = ort_run(converted, {"A": a, "B": b})
    assert not isinstance(got, Exception), str(got)
    x, y = through_plan(res, a, b)
    assert got.shape == res.shape
    assert np.array_equal(got, x + y)


def test_legacy_suffix_axis_minus_one_is_accepted_by_bcast():
    """axis=-1 is Caffe2's "unset" (suffix matching); bcast follows it."""
    assert bcast.infer((2, 3, 4, 5), (5,), rule="onnx-legacy", broadcast=1, axis=-1).aligned_shape(1) == (1, 1, 1, 5)


def test_legacy_one_element_b_with_out_of_range_axis():
    """Caffe2 takes a one-element B as a scalar before it looks at axis, so an out-of-range
    axis is ignored there; ONNX's text ("element size 1 ... or ... a contiguous subset") agrees."""
    for a, b, axis in (((1, 1), (1,), 2), ((2, 3), (1,), 5), ((2, 3), (1, 1), 1), ((2, 3, 4), (), 4)):
        assert caffe2_legacy(a, b, 1, axis) == "scalar"
        assert bcast.infer(a, b, rule="onnx-legacy", broadcast=1, axis=axis).shape == a
