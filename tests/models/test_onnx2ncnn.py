"""Target onnx2ncnn (ncnn's legacy converter: raw BinaryOp, MemoryData, ExpandDims), its rewrite, and
the ``values`` findings of the deviation registry's value records."""

from __future__ import annotations

import numpy as np
import pytest

from support.onnx_models import light, model, randomized, run_ort
from onnx import TensorProto as T, helper, numpy_helper

from bcast.frameworks.deviations import DEVIATIONS
from bcast.frameworks.ncnn.lint_onnx2ncnn import memorydata_blob
from bcast.models.lint import TARGET_CHECKS, lint
from bcast.models.rewrite import rewrite

W = np.float32


def kinds(m, target="onnx2ncnn"):
    return [(f.kind, f.op_type) for f in lint(m, target)]


def _same_on_ort(m, new, feeds):
    a, b = run_ort(m, feeds), run_ort(new, feeds)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(W)


# --------------------------------------------------------------------------- the converter's blobs


def test_memorydata_dims_as_onnx2ncnn_writes_them():
    assert memorydata_blob((5,)) == (5,)
    assert memorydata_blob((1, 5)) == (5,) and memorydata_blob((4, 5)) == (4, 5)
    assert memorydata_blob((1, 4, 5)) == (4, 5) and memorydata_blob((6, 1, 8)) == (6, 1, 8)
    assert memorydata_blob((1, 3, 4, 5)) == (3, 4, 5)


def test_readme_mul_is_garbage_and_rewrite_reshapes_the_initializer_not_unsqueeze():
    m = model([("Mul", ["x", "w"], ["y"])], {"x": [1, 5, 4, 5]}, ["y"], inits={"w": _x((4, 5))})
    [f] = lint(m, "onnx2ncnn")
    assert f.kind == "unsupported" and "blobs A (5,4,5) and B (4,5)" in f.reason
    assert "garbage of shape (5,5,5)" in f.reason
    assert "reshape initializer B to (1,1,4,5)" in f.fix
    r = rewrite(m, "onnx2ncnn")
    assert r.findings == [] and r.changes == ["n0: initializer B w (4,5) -> (1,1,4,5)"]
    assert [n.op_type for n in r.model.graph.node] == ["Mul"]  # no Unsqueeze: onnx2ncnn makes ExpandDims of it
    new = {t.name: tuple(t.dims) for t in r.model.graph.initializer}
    assert new[r.model.graph.node[0].input[1]] == (1, 1, 4, 5)
    _same_on_ort(m, r.model, {"x": _x((1, 5, 4, 5))})


def test_scalars_and_unflagged_nodes_are_left_alone():
    m = model([("Mul", ["x", "s"], ["a"]), ("Sub", ["s1", "a"], ["b"]), ("Add", ["b", "c"], ["y"])],
              {"x": [1, 3, 4, 5]}, ["y"], inits={"s": W(2), "s1": np.ones((1,), W), "c": _x((3, 1, 1))})
    assert lint(m, "onnx2ncnn") == [] or {f.kind for f in lint(m, "onnx2ncnn")} == {"values"}
    r = rewrite(m, "onnx2ncnn")
    assert r.changes == []
    assert rewrite(m, "ncnn").changes == []  # pnnx inserts the reshapes itself: nothing to rewrite for it


def test_computed_operand_gets_a_reshape_with_a_constant_shape():
    """r = mean over (C,H) of x (1,5,4,5) is (1,5): onnx2ncnn holds it as (5,), which ncnn's BinaryOp puts
    on the channel axis (its length is the channel count): the spec's W axis.  A Reshape to (1,1,1,5)
    (onnx2ncnn writes ncnn's Reshape less shape[0]: (1,1,5)) makes it right."""
    m = model([("ReduceMean", ["x"], ["r"], {"axes": [1, 2], "keepdims": 0}), ("Mul", ["x", "r"], ["y"])],
              {"x": [1, 5, 4, 5]}, ["y"], opset=13)
    [f] = lint(m, "onnx2ncnn")
    assert f.kind == "differs" and "B as (5,1,1), not (1,1,5)" in f.reason
    r = rewrite(m, "onnx2ncnn")
    assert r.findings == [] and r.changes == ["n1: Reshape B r (1,5) -> (1,1,1,5)"]
    reshape = r.model.graph.node[1]
    assert reshape.op_type == "Reshape" and reshape.input[1] in {t.name for t in r.model.graph.initializer}
    _same_on_ort(m, r.model, {"x": _x((1, 5, 4, 5))})


def test_sequence_first_constant_is_kept_3d_and_is_not_fixable():
    """A (T,1,C) constant on a sequence-first (T,B,C) tensor: MemoryData keeps (6,1,8), and x's axis 0
    is no batch of 1."""
    for batch in (1, 2):
        m = model([("Add", ["x", "w"], ["y"])], {"x": [6, batch, 8]}, ["y"], inits={"w": _x((6, 1, 8))})
        [f] = lint(m, "onnx2ncnn")
        assert f.kind == "unsupported" and f"blobs A ({batch},8) and B (6,1,8)" in f.reason and f.fix.startswith("none")
        assert rewrite(m, "onnx2ncnn").changes == []
    assert "garbage of shape (6,8,8)" in f.reason  # what the issue saw at batch 2


@pytest.mark.parametrize("exponent", [2.0, 3.0])
def test_pow_is_binaryop_pow_and_reports_ncnn_fast_math(exponent):
    m = model([("Pow", ["x", "e"], ["y"])], {"x": [1, 3, 4]}, ["y"], inits={"e": W(exponent)})
    [f] = lint(m, "onnx2ncnn")
    assert (f.kind, [d.deviation.id for d in f.deviations]) == ("values", ["ncnn-fast-math"])
    assert "as POW" in f.reason and "x * x" in f.fix
    # pnnx makes x ** 2 a UnaryOp square (right) and x ** 3 a BinaryOp POW (wrong for bases <= 0): its own finding
    assert [f.kind for f in lint(m, "ncnn")] == ([] if exponent == 2.0 else ["differs"])


@pytest.mark.parametrize("op", ["Greater", "Less", "Equal", "Where", "And", "Mod"])
def test_ops_onnx2ncnn_does_not_convert_are_unsupported(op):
    if op == "Where":
        m = model([("Greater", ["x", "z"], ["c"]), ("Where", ["c", "x", "z"], ["y"])], {"x": [1, 3]}, ["y"],
                  inits={"z": W(0)})
    elif op == "And":
        m = model([("Greater", ["x", "z"], ["a"]), ("Less", ["x", "z"], ["b"]), ("And", ["a", "b"], ["y"])],
                  {"x": [1, 3]}, ["y"], inits={"z": W(0)})
    else:
        m = model([(op, ["x", "z"], ["y"], {"fmod": 1} if op == "Mod" else {})], {"x": [1, 3]}, ["y"],
                  inits={"z": W(1)})
    found = [f for f in lint(m, "onnx2ncnn") if f.op_type == op]
    assert found and found[0].kind == "unsupported" and f"{op} not supported yet!" in found[0].reason


def test_sum_is_eltwise_and_prelu_is_per_channel():
    m = model([("Sum", ["x", "b"], ["y"])], {"x": [1, 3, 4]}, ["y"], inits={"b": _x((4,))})
    assert kinds(m) == [("unsupported", "Sum")]
    m = model([("PRelu", ["x", "s"], ["y"])], {"x": [1, 5, 4, 5]}, ["y"], inits={"s": _x((5,))})
    assert kinds(m) == [("differs", "PRelu")]
    m = model([("PRelu", ["x", "s"], ["y"])], {"x": [1, 5, 4, 5]}, ["y"], inits={"s": _x((5, 1, 1))})
    assert kinds(m) == []


@pytest.mark.parametrize("name", ["densenet121", "inception_v2"])
def test_light_models_unsqueezed_batchnorm_is_garbage_and_rewrite_fixes_it(name):
    """Their written-out BatchNorm Unsqueezes a (C,) scale to (C,1,1) (opset 9, axes [1,2]): onnx2ncnn's
    ExpandDims takes the axes less 1 and makes the blob (1,1,C).  Reshapes fix every one."""
    m, feeds = randomized(light(name))
    found = lint(m, "onnx2ncnn")
    assert found and {(f.kind, f.op_type) for f in found} <= {("unsupported", "Mul"), ("unsupported", "Add")}
    assert all("B (1,1," in f.reason for f in found)
    r = rewrite(m, "onnx2ncnn")
    assert r.findings == [] and len(r.changes) == len(found)
    _same_on_ort(m, r.model, feeds)


# --------------------------------------------------------------------------- values findings


def _where(elem):
    x = helper.make_tensor_value_info("x", elem, [2, 3])
    c = helper.make_tensor_value_info("c", T.BOOL, [2, 3])
    g = helper.make_graph([helper.make_node("Where", ["c", "x", "x"], ["y"], name="w")], "g", [c, x],
                          [helper.make_tensor_value_info("y", elem, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _binary(op, elem, shape=(2, 3)):
    a = helper.make_tensor_value_info("a", elem, list(shape))
    g = helper.make_graph([helper.make_node(op, ["a", "a"], ["y"], name="n")], "g", [a],
                          [helper.make_tensor_value_info("y", elem, [2, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_values_findings_follow_the_records_element_types():
    [f] = lint(_where(T.FLOAT))
    assert f.kind == "values" and f.deviations[0].deviation.id == "onnxruntime-where-negative-zero"
    assert lint(_where(T.INT32)) == []
    assert [f.deviations[0].deviation.id for f in lint(_binary("Add", T.INT8), "openvino")] == [
        "openvino-cpu-integer-values"]
    assert lint(_binary("Add", T.FLOAT), "openvino") == []
    assert [f.deviations[0].deviation.id for f in lint(_binary("Max", T.FLOAT), "openvino")] == [
        "openvino-cpu-minmax-nan"]
    div = _binary("Div", T.FLOAT, (1, 3))
    assert [f.deviations[0].deviation.id for f in lint(div, "onnx2ncnn")] == ["ncnn-fast-math"]


def test_every_value_record_is_reported_by_some_target():
    import importlib

    # (a framework with no lint target, torch, has no model a record could be found in)
    records = [d for d in DEVIATIONS
               if d.check is None and importlib.import_module(f"bcast.frameworks.{d.framework}").TARGETS]
    assert records
    for d in records:
        assert any(d.runtime.startswith(p) for c in TARGET_CHECKS.values() for p in c.decisive_runtimes), d.id


# --------------------------------------------------------------------------- against ncnn's BinaryOp


#: (x's ONNX shape, the other operand's shape, whether it is an initializer); x is computed (a graph input).
PROOF = [
    ((1, 5, 4, 5), (4, 5), True), ((1, 5, 4, 5), (1, 1, 4, 5), True), ((1, 5, 4, 5), (5, 1, 1), True),
    ((1, 5, 4, 5), (1, 5, 1, 1), True), ((1, 3, 4, 5), (5,), True), ((1, 5, 4, 5), (5,), True),
    ((1, 6, 8), (8,), True), ((1, 6, 8), (6, 1), True), ((1, 6, 8), (1, 6, 1), True), ((1, 6, 8), (6, 8), True),
    ((1, 8), (8,), True), ((1, 8), (1, 8), True), ((1, 4, 6, 8), (6, 8), True), ((1, 4, 6, 8), (1, 8), True),
    ((1, 4, 6, 8), (4, 1, 8), True), ((1, 4, 6, 8), (1, 1, 1, 8), True), ((1, 4, 6, 8), (6, 1), True),
    ((1, 8, 6, 8), (8,), True), ((1, 8, 6, 8), (1, 8), True), ((1, 3, 4, 5), (1, 3, 4, 5), False),
    ((1, 3, 4, 5), (1, 1, 4, 5), False), ((1, 3, 4, 5), (1, 3, 1, 1), False), ((1, 3, 4, 5), (1, 5), False),
    ((1, 5, 4, 5), (1, 5), False), ((1, 4, 5), (1, 5), False), ((1, 4, 5), (1, 4, 1), False),
]


def _blob(shape, const):
    return memorydata_blob(shape) if const else (shape[1:] if len(shape) > 1 else shape)


def test_onnx2ncnn_rule_against_ncnns_binaryop():
    """For each pair: the blobs onnx2ncnn holds (MemoryData's dims rule for the initializer, the tensor
    less axis 0 for a computed one) run through ncnn's own BinaryOp (the PyPI wheel, in a child process:
    a pair outside its rules reads out of bounds).  lint finds nothing exactly where ncnn's output is
    numpy's (less axis 0); after rewrite, the rewritten blobs give numpy's result every time."""
    pytest.importorskip("ncnn")
    from bcast.frameworks.ncnn import oracle as oracle

    rng = np.random.default_rng(7)
    cases, expected, verdicts = [], [], []
    for xs, ws, const in PROOF:
        x, w = rng.standard_normal(xs).astype(W), rng.standard_normal(ws).astype(W)
        want = (x + w)[0]
        inputs = {"x": list(xs)} if const else {"x": list(xs), "w": list(ws)}
        m = model([("Add", ["x", "w"], ["y"])], inputs, ["y"], inits={"w": w} if const else None)
        found = lint(m, "onnx2ncnn")
        verdicts.append(not found)
        cases.append(("ADD", x.reshape(_blob(xs, False)), w.reshape(_blob(ws, const))))
        expected.append(want)
        if found:  # the rewritten model's blobs
            r = rewrite(m, "onnx2ncnn")
            assert r.findings == [], (xs, ws, r.findings)
            node = r.model.graph.node[-1]
            new = {t.name: tuple(t.dims) for t in r.model.graph.initializer}
            shapes = {"x": xs, "w": ws}
            if const:
                blobs = [_blob(xs, False), memorydata_blob(new[node.input[1]])]
            else:  # a Reshape of a computed operand: onnx2ncnn writes ncnn's Reshape less shape[0]
                reshaped = {n.output[0]: tuple(numpy_helper.to_array(
                    next(t for t in r.model.graph.initializer if t.name == n.input[1]))) for n in r.model.graph.node
                    if n.op_type == "Reshape"}
                blobs = [_blob(reshaped.get(name, shapes.get(name)), False) for name in node.input]
            cases.append(("ADD", x.reshape(blobs[0]), w.reshape(blobs[1])))
            expected.append(want)
            verdicts.append(True)
    results = oracle.run_many(cases)
    assert len(results) > len(PROOF)  # some pairs were flagged and rewritten
    for (_name, a, b), want, ok, got in zip(cases, expected, verdicts, results):
        right = isinstance(got, np.ndarray) and got.shape == want.shape and np.allclose(got, want)
        assert right == ok, (a.shape, b.shape, ok, getattr(got, "shape", got))
