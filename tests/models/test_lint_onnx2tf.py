"""``bcast lint --target onnx2tf``, rule by rule (bcast.frameworks.tflite.lint_onnx2tf), on one-node
models; the whole target against onnx2tf's real conversions is tests/models/test_onnx2tf_corpus.py."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from bcast.models.lint import lint  # noqa: E402


def _model(nodes, inputs: dict, consts: dict, output_shape):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape)],
        [numpy_helper.from_array(np.ones(s, np.float32), n) for n, s in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# (op, the activation x's shape, the other operand's shape, whether it is a constant, the finding's kind or None,
#  the rule of lint_onnx2tf's docstring)
CASES = [
    ("Max", (1, 3, 4, 5), (3, 1, 1), True, "unsupported", "1: Max.py reconciles nothing"),
    ("Max", (1, 3, 4, 5), (1, 3, 1, 1), True, None, "1's fix: the activation's rank, transposed by onnx2tf"),
    ("Min", (1, 3, 4, 5), (3, 1, 1), True, "unsupported", "1"),
    ("Pow", (1, 3, 3, 3), (3, 1, 1), True, "differs", "1: dims coincide, Pow.py reconciles nothing"),
    ("Pow", (1, 3, 4, 5), (1,), True, None, "a scalar-like constant keeps its meaning"),
    ("Mul", (1, 3, 4, 5), (3, 1, 1), True, None, "2: explicit_broadcast transposes it"),
    ("PRelu", (1, 3, 4, 5), (3, 1, 1), True, None, "2"),
    ("Add", (1, 2, 4, 5), (4, 5), True, None, "2"),
    ("Mul", (1, 4, 4, 5), (4, 1, 1), True, "differs", "2a: C == H, the operands still broadcast"),
    ("Add", (1, 8, 8), (8, 8), True, "differs", "2a: a (T,T) table on NWC"),
    ("PRelu", (1, 4, 4, 4), (4,), True, None, "2a's exception: a 1-D constant of the last dim's size"),
    ("Add", (1, 2, 2, 3, 4), (2, 3, 4), True, "unsupported", "2b: (2,3,4) transposed as a rank-3 tensor"),
    ("Add", (1, 2, 2, 3, 3), (1, 2, 2, 3, 3), True, None, "2b: the activation's own shape"),
    ("Add", (2, 2, 2, 3, 3), (1, 2, 2, 3, 3), True, "unsupported", "2b: transposed twice"),
    ("Mul", (1, 3, 2, 3, 4), (3, 1, 1, 1), True, None, "2b: one axis that is not 1"),
    ("Add", (1, 2, 4, 4), (1, 1, 1, 4), False, "differs", "4: H == W, the mask put on H"),
    ("Add", (1, 2, 3, 4), (1, 1, 1, 4), False, None, "4: H != W, onnx2tf gets it right"),
    ("Mul", (1, 3, 4, 4), (1, 3, 1, 1), False, None, "4: a per-channel activation (SE, FiLM)"),
    ("Add", (1, 4), (4,), True, None, "rank 2: no layout change"),
    ("Less", (1, 3, 4, 5), (3, 1, 1), True, "unsupported", "1: Less.py rotates equal ranks only"),
]


@pytest.mark.parametrize(("op", "x", "other", "const", "kind", "rule"), CASES,
                         ids=[f"{c[0]}{c[1]}-{c[2]}" for c in CASES])
def test_each_rule_on_one_node(op, x, other, const, kind, rule):
    model = _model([helper.make_node(op, ["x", "w"], ["y"], name="n")], {"x": x, **({} if const else {"w": other})},
                   {"w": other} if const else {}, x)
    found = lint(model, target="onnx2tf")
    assert [f.kind for f in found] == ([kind] if kind else []), rule


def test_a_variadic_op_after_a_channels_first_result():
    """Rule 3 (mean_heads): Add meets a lower-rank constant and leaves its result channels-first; Mean stacks it
    with a channels-last activation.  A binary op in Mean's place reconciles the two."""
    add = helper.make_node("Add", ["a", "w"], ["s"], name="add")
    for op, kind in (("Mean", "unsupported"), ("Max", "unsupported"), ("Sub", None)):
        model = _model([add, helper.make_node(op, ["x", "s"], ["y"], name="last")],
                       {"x": (1, 3, 4, 5), "a": (1, 3, 4, 5)}, {"w": (3, 1, 1)}, (1, 3, 4, 5))
        found = [f for f in lint(model, target="onnx2tf") if f.node == "last"]
        assert [f.kind for f in found] == ([kind] if kind else []), op


def test_the_fix_of_a_max_is_the_constant_at_the_activations_rank():
    model = _model([helper.make_node("Max", ["x", "w"], ["y"], name="n")], {"x": (1, 3, 4, 5)}, {"w": (3, 1, 1)},
                   (1, 3, 4, 5))
    (finding,) = lint(model, target="onnx2tf")
    assert "ops/Max.py" in finding.reason and "give w the shape (1,3,1,1)" in finding.fix


@pytest.mark.parametrize(("scaled", "other", "kind"), [
    (False, (8, 8), None), (False, (1, 8, 8), None), (False, (8,), None),
    (True, (8, 8), None), (True, (1, 8, 8), "differs")])
def test_a_matmul_result_keeps_the_onnx_layout(scaled, other, kind):
    """linear_stem and attention_qk: a MatMul's result is not channels-last, nor marked as transposed
    (before_op_output_shape_trans), so a constant of its rank is not transposed either; a Mul's square result is
    marked (its dims after the first are one size), and a (1,T,T) constant after it is transposed: other values
    (attention_qk; but the probe matmul_squared_table3 of test_onnx2tf_corpus.py, this very pattern, onnx2tf converts
    right: the model's one known false alarm).  A (T,T) table (rank 2) is never transposed."""
    nodes = [helper.make_node("MatMul", ["x", "k"], ["h"], name="mm")]
    if scaled:
        nodes.append(helper.make_node("Mul", ["h", "h"], ["g"], name="square"))
    nodes.append(helper.make_node("Add", ["g" if scaled else "h", "w"], ["y"], name="n"))
    model = _model(nodes, {"x": (1, 8, 8)}, {"k": (8, 8), "w": other}, (1, 8, 8))
    assert [f.kind for f in lint(model, target="onnx2tf")] == ([kind] if kind else [])
