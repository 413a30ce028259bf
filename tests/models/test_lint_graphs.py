"""lint and rewrite look inside every graph: If/Loop/Scan bodies (nested too), model-local functions;
each finding says where it is by its path.  And lint never crashes on rank-0 / rank-1 operands."""

from __future__ import annotations

import json

import numpy as np
import pytest

from support.cli import cli
from support.onnx_models import onnx, readme_if, run_ort, vi as _vi
from onnx import TensorProto as T, helper, numpy_helper

from bcast.core.errors import InputError
from bcast.models.lint import KINDS, TARGETS, lint, lint_report
from bcast.models.rewrite import rewrite

OPSET = 17


@pytest.mark.parametrize("target", ["onnx2ncnn"])  # ncnn (pnnx): the If itself is the finding (no inlining)
def test_the_readme_garbage_mul_inside_an_if_branch_is_a_finding_with_its_path(target):
    report = lint_report(readme_if(), target)
    assert report.checked == 2 and report.nodes == 3
    [f] = report.findings
    assert (f.node, f.path, f.kind) == ("If_0/then_branch/Mul_3", ("If_0", "then_branch", "Mul_3"), "unsupported")
    assert f.input_shapes == ((1, 5, 4, 5), (4, 5))  # onnx's inference reaches into the branch, and x is outer
    assert "If_0/then_branch/Mul_3: Mul-17(x (1,5,4,5), w (4,5))" in str(f)
    assert f.to_dict()["path"] == ["If_0", "then_branch", "Mul_3"]


def test_nested_subgraphs_give_the_whole_path():
    [f] = lint(readme_if(nested=True), "onnx2ncnn")
    assert f.node == "Loop_2/body/If_0/then_branch/Mul_3"
    assert f.path == ("Loop_2", "body", "If_0", "then_branch", "Mul_3")


def test_scan_body_and_bcast_shapes_cross_into_subgraphs():
    """A Scan body is checked; a shape that only bcast knows (an opset-1 Add's output has no onnx
    inference) is seen from inside the subgraph that reads it."""
    body = helper.make_graph([helper.make_node("Add", ["s_in", "row"], ["s_out"], name="acc"),
                              helper.make_node("Identity", ["s_out"], ["emit"], name="id")], "body",
                             [_vi("s_in", [3]), _vi("row", [4])], [_vi("s_out", [3]), _vi("emit", [3])])
    g = helper.make_graph([helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], name="Scan_0", body=body,
                                            num_scan_inputs=1)],
                          "g", [_vi("s0", [3]), _vi("xs", [2, 4])], [_vi("s", None), _vi("ys", None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    [f] = lint(m)
    assert (f.node, f.kind, f.input_shapes) == ("Scan_0/body/acc", "invalid", ((3,), (4,)))


def test_model_local_function_is_checked_at_each_call_with_the_callers_shapes():
    mul = helper.make_node("Mul", ["a", "b"], ["o"], name="Mul_0")
    fn = helper.make_function("my", "Scale", ["a", "b"], ["o"], [mul], [helper.make_opsetid("", OPSET)])
    unused = helper.make_function("my", "Unused", ["a"], ["o"], [helper.make_node("Add", ["a", "a"], ["o"])],
                                  [helper.make_opsetid("", OPSET)])
    w = numpy_helper.from_array(np.ones((4, 5), np.float32), "w")
    v = numpy_helper.from_array(np.ones((1, 1, 4, 5), np.float32), "v")
    g = helper.make_graph([helper.make_node("Scale", ["x", "w"], ["y"], name="Call_4", domain="my"),
                           helper.make_node("Scale", ["x", "v"], ["z"], name="Call_5", domain="my")],
                          "g", [_vi("x", [1, 5, 4, 5])], [_vi("y", [1, 5, 4, 5]), _vi("z", [1, 5, 4, 5])], [w, v])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("my", 1)],
                          functions=[fn, unused])
    report = lint_report(m, "onnx2ncnn")
    assert [(f.node, f.input_shapes) for f in report.findings] == [("Call_4/Scale/Mul_0", ((1, 5, 4, 5), (4, 5)))]
    assert report.checked == 2  # one Mul per call; the function nobody calls never runs


def test_a_function_that_calls_itself_is_refused():
    fn = helper.make_function("my", "F", ["a"], ["o"], [helper.make_node("F", ["a"], ["o"], domain="my")],
                              [helper.make_opsetid("", OPSET), helper.make_opsetid("my", 1)])
    g = helper.make_graph([helper.make_node("F", ["x"], ["y"], domain="my")], "g", [_vi("x", [2])], [_vi("y", [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("my", 1)],
                          functions=[fn])
    with pytest.raises(InputError, match="calls itself"):
        lint(m)


def test_function_calls_that_expand_past_the_node_limit_are_refused(monkeypatch):
    import bcast.models.graphs as G

    monkeypatch.setattr(G, "MAX_NODES", 20)
    f0 = helper.make_function("my", "F0", ["a"], ["o"], [helper.make_node("Relu", ["a"], ["o"])],
                              [helper.make_opsetid("", OPSET)])
    fns = [f0]
    for k in range(1, 6):  # each calls the one before twice: 2**5 Relus from 7 nodes
        fns.append(helper.make_function("my", f"F{k}", ["a"], ["o"], [
            helper.make_node(f"F{k - 1}", ["a"], ["t"], domain="my"),
            helper.make_node(f"F{k - 1}", ["t"], ["o"], domain="my")],
            [helper.make_opsetid("", OPSET), helper.make_opsetid("my", 1)]))
    g = helper.make_graph([helper.make_node("F5", ["x"], ["y"], domain="my")], "g", [_vi("x", [2])], [_vi("y", [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("my", 1)],
                          functions=fns)
    with pytest.raises(InputError, match="function calls are"):
        lint(m)


def test_cli_prints_the_path_in_text_and_json(tmp_path):

    path = tmp_path / "if.onnx"
    onnx.save(readme_if(), str(path))
    code, text = cli("lint", str(path), "--target", "onnx2ncnn")
    assert code == 1 and "\nIf_0/then_branch/Mul_3: Mul-17(" in text
    code, text = cli("lint", str(path), "--target", "onnx2ncnn", "--json")
    d = json.loads(text)
    assert [(f["node"], f["path"]) for f in d["findings"]] == [("If_0/then_branch/Mul_3",
                                                                ["If_0", "then_branch", "Mul_3"])]


@pytest.mark.parametrize("target", ["onnx2ncnn"])
@pytest.mark.parametrize("nested", [False, True])
def test_rewrite_fixes_the_mul_inside_the_branch_and_computes_the_same(target, nested):
    m = readme_if(nested)
    r = rewrite(m, target)
    assert r.findings == [] and len(r.changes) == 1
    assert r.changes[0].startswith(("If_0/then_branch/Mul_3: ", "Loop_2/body/If_0/then_branch/Mul_3: "))
    x = np.random.default_rng(0).standard_normal((1, 5, 4, 5)).astype(np.float32)
    for c in (True, False):
        feeds = {"x": x, "c": np.array(c)}
        if nested:
            feeds["n"] = np.array(2, np.int64)
        assert np.array_equal(run_ort(m, feeds)["y"], run_ort(r.model, feeds)["y"])


def test_rewrite_names_stay_fresh_across_graphs():
    m = readme_if()
    # an outer value named as rewrite would name its new initializer: the subgraph must not shadow it
    m.graph.initializer.append(numpy_helper.from_array(np.zeros(1, np.float32), "w_bcast0"))
    r = rewrite(m, "onnx2ncnn")
    sub = next(a.g for a in r.model.graph.node[0].attribute if a.name == "then_branch")
    assert [t.name for t in sub.initializer] == ["w_bcast1"]


# --------------------------------------------------------------------------- rank-0 / rank-1 operands


def _rank_model(op, a, b, a_const: bool, b_const: bool, keepdims_a: bool):
    """``op`` of a and b: each an initializer of that shape, or computed (a ReduceMean with keepdims=0 of
    an input, for a rank-0 or rank-1 result, as ``y.mean() > -100`` exports)."""
    nodes, inputs, inits = [], [_vi("x", [1, 3])], []
    names = []
    for k, (shape, const) in enumerate(((a, a_const), (b, b_const))):
        name = f"v{k}"
        if const:
            inits.append(numpy_helper.from_array(np.full(shape, -100, np.float32), name))
        elif len(shape) == 0:
            nodes.append(helper.make_node("ReduceMean", ["x"], [name], keepdims=0))
        elif keepdims_a:
            nodes.append(helper.make_node("ReduceMean", ["x"], [name], axes=[0], keepdims=0))  # (3,)
        else:
            nodes.append(helper.make_node("ReduceMean", ["x"], [name], axes=[1], keepdims=0))  # (1,)
        names.append(name)
    extra = {"fmod": 1} if op == "Mod" else {}
    nodes.append(helper.make_node(op, names, ["y"], name="op", **extra))
    y_type = T.BOOL if op in ("Greater", "Less", "Equal") else T.FLOAT
    g = helper.make_graph(nodes, "g", inputs, [_vi("y", None, y_type)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_rank0_comparison_does_not_crash_any_target():
    """``y.mean() > -100``: ReduceMean keepdims=0 -> Greater.  Target ncnn raised IndexError."""
    m = _rank_model("Greater", (), (), False, True, False)
    for target in TARGETS:
        for f in lint(m, target):
            assert f.kind in KINDS


@pytest.mark.parametrize("op", ["Add", "Mul", "Pow", "Greater", "Equal", "Max", "Mod", "PRelu"])
def test_rank0_and_rank1_operands_fuzz_every_target(op):
    shapes = [(), (1,), (3,)]
    for a in shapes:
        for b in shapes:
            for a_const in (False, True):
                for b_const in (False, True):
                    for keep in (False, True):
                        if a_const and b_const or (op == "PRelu" and len(a) < len(b)):
                            continue
                        m = _rank_model(op, a, b, a_const, b_const, keep)
                        for target in TARGETS:
                            report = lint_report(m, target)  # no exception
                            assert all(f.kind in KINDS for f in report.findings)
                            json.dumps(report.to_dict("m"))


def _scale_calls(second_shape):
    """Function Scale (a Mul) called by Call_4 with (x, w (4,5)) and by Call_5 with (x, v ``second_shape``)."""
    mul = helper.make_node("Mul", ["a", "b"], ["o"], name="Mul_0")
    fn = helper.make_function("my", "Scale", ["a", "b"], ["o"], [mul], [helper.make_opsetid("", OPSET)])
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((4, 5)).astype(np.float32), "w")
    v = numpy_helper.from_array(rng.standard_normal(second_shape).astype(np.float32), "v")
    g = helper.make_graph([helper.make_node("Scale", ["x", "w"], ["y"], name="Call_4", domain="my"),
                           helper.make_node("Scale", ["x", "v"], ["z"], name="Call_5", domain="my")],
                          "g", [_vi("x", [1, 5, 4, 5])], [_vi("y", [1, 5, 4, 5]), _vi("z", [1, 5, 4, 5])], [w, v])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("my", 1)],
                             functions=[fn])


@pytest.mark.parametrize("target", ["onnx2ncnn"])
def test_rewrite_of_a_function_body_that_every_call_needs_alike(target):
    m = _scale_calls((4, 5))
    assert [f.node for f in lint(m, target)] == ["Call_4/Scale/Mul_0", "Call_5/Scale/Mul_0"]
    r = rewrite(m, target)
    assert r.findings == []
    assert r.changes[0].startswith("Call_4/Scale/Mul_0: ")
    assert r.changes[-1] == "function Scale: rewritten once for its 2 calls"
    body = [n.op_type for n in r.model.functions[0].node]
    assert body[-1] == "Mul" and "Constant" in body  # a function has no initializers: its constants are nodes
    x = np.random.default_rng(2).standard_normal((1, 5, 4, 5)).astype(np.float32)
    a, b = run_ort(m, {"x": x}), run_ort(r.model, {"x": x})
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_a_function_whose_calls_need_different_edits_is_left_and_stays_a_finding():
    m = _scale_calls((1, 1, 4, 5))
    r = rewrite(m, "onnx2ncnn")
    assert r.changes == [] and [f.node for f in r.findings] == ["Call_4/Scale/Mul_0"]
