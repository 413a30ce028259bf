"""bcast rewrite: the light model-zoo graphs made ncnn-explicit and run in onnxruntime against the
original; legacy opset-6 broadcast/axis models upgraded and run in onnxruntime against bcast.onnx.run
of the legacy op; the file rules (never the input, never an existing file, atomic)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from onnx_models import light, model, onnx, randomized, run_ort, saved  # noqa: F401 - saved: a fixture

import bcast
from bcast import onnx as bonnx
from bcast.errors import InputError
from bcast.linter import lint
from bcast.ncnn import FROM_ONNX
from bcast.rewriter import rewrite

pytest.importorskip("onnxruntime")

# the light models that run in well under a second (alexnet, vgg19, zfnet512 carry 100M-weight layers, resnet50
# has no broadcast to rewrite); densenet121 and inception_v2 are the ones with rank-changing broadcasts
FAST = ["densenet121", "inception_v1", "inception_v2", "shufflenet", "squeezenet"]


def _ranks_equal(m):
    g = onnx.shape_inference.infer_shapes(m).graph
    shapes = {v.name: len(v.type.tensor_type.shape.dim) for v in (*g.value_info, *g.output, *g.input)}
    shapes.update({t.name: len(t.dims) for t in m.graph.initializer})
    return all(shapes[n.input[0]] == shapes[n.input[1]] for n in m.graph.node if n.op_type in FROM_ONNX)


@pytest.mark.parametrize("name", FAST)
def test_light_model_ncnn_rewrite_computes_the_same(name):
    m, feeds = randomized(light(name))
    assert lint(m) == [] and lint(m, "onnx2ncnn") == []
    r = rewrite(m, "onnx2ncnn")
    onnx.checker.check_model(r.model)
    assert r.findings == [] and lint(r.model, "onnx2ncnn") == []
    assert _ranks_equal(r.model)
    assert [v.name for v in r.model.graph.input] == [v.name for v in m.graph.input]
    assert [v.name for v in r.model.graph.output] == [v.name for v in m.graph.output]
    before, after = run_ort(m, feeds), run_ort(r.model, feeds)
    assert before.keys() == after.keys()
    for k in before:
        np.testing.assert_array_equal(after[k], before[k], err_msg=k)
        assert np.isfinite(before[k]).all()
    if name in ("densenet121", "inception_v2"):
        assert len(r.changes) == {"densenet121": 242, "inception_v2": 138}[name]


# --------------------------------------------------------------------------- legacy upgrade

LEGACY = [  # (op, A, B, attrs)
    ("Add", (2, 3, 4, 5), (3, 4), {"broadcast": 1, "axis": 1}),
    ("Sub", (2, 3, 4, 5), (3,), {"broadcast": 1, "axis": 1}),
    ("Mul", (2, 3, 4, 5), (4,), {"broadcast": 1, "axis": 2}),
    ("Div", (2, 3, 4, 5), (2,), {"broadcast": 1, "axis": 0}),
    ("Add", (2, 3, 4, 5), (2, 3), {"broadcast": 1, "axis": 0}),
    ("Mul", (2, 3, 4, 5), (4, 5), {"broadcast": 1}),
    ("Sub", (2, 3, 4, 5), (5,), {"broadcast": 1, "axis": -1}),
    ("Div", (2, 3, 4, 5), (), {"broadcast": 1}),
    ("Add", (2, 3, 4, 5), (1, 1), {"broadcast": 1, "axis": 1}),
    ("Mul", (2, 3, 4), (1, 3), {"broadcast": 1, "axis": 0}),  # B's leading 1 ignored
    ("Sub", (2, 3, 4, 5), (3, 4, 1), {"broadcast": 1, "axis": 1}),  # and its trailing 1
    ("Add", (2, 3), (2, 3), {}),
    ("Div", (3, 4), (3, 4), {"broadcast": 0}),
    ("Mul", (6,), (6,), {"broadcast": 1, "axis": 0}),
]


def _legacy_model(cases, opset=6):
    nodes, inputs = [], {}
    for k, (op, a, b, attrs) in enumerate(cases):
        inputs[f"a{k}"], inputs[f"b{k}"] = list(a), list(b)
        nodes.append((op, [f"a{k}", f"b{k}"], [f"y{k}"], attrs))
    return model(nodes, inputs, [f"y{k}" for k in range(len(cases))], opset=opset)


def test_legacy_opset6_upgraded_and_run_in_onnxruntime():
    rng = np.random.default_rng(1)
    m = _legacy_model(LEGACY)
    assert [f.kind for f in lint(m)] == ["legacy"] * len(LEGACY)
    r = rewrite(m, "onnx")
    onnx.checker.check_model(r.model)
    assert r.findings == [] and lint(r.model) == []
    assert r.model.opset_import[0].version == 7
    feeds, want = {}, {}
    for k, (op, a, b, attrs) in enumerate(LEGACY):
        A = rng.standard_normal(a).astype(np.float32)
        B = rng.uniform(0.5, 1.5, b).astype(np.float32)  # no division by ~0
        feeds[f"a{k}"], feeds[f"b{k}"] = A, B
        want[f"y{k}"] = bonnx.run(op, A, B, opset=6, **attrs)
    got = run_ort(r.model, feeds)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=str(LEGACY[int(k[1:])]))
    # the axis > 0 cases onnx's own converter gets wrong are among them
    assert sum(1 for _, a, b, at in LEGACY if at.get("axis", -1) not in (-1, len(a) - len(b))) >= 5


def test_legacy_opset1_chain_with_other_ops_upgraded():
    """Add-1 (with consumed_inputs; onnx infers no shape for it: bcast's feeds Transpose-1), a Gemm-1
    broadcast and a legacy Mul at opset 5: the converter does the other ops."""
    m = model([("Add", ["a", "b"], ["c"], {"broadcast": 1, "axis": 0, "consumed_inputs": [0]}),
               ("Transpose", ["c"], ["d"], {"perm": [1, 0]}),
               ("Gemm", ["d", "w", "bias"], ["e"], {"broadcast": 1}),
               ("Mul", ["e", "s"], ["y"], {"broadcast": 1, "axis": 0})],
              {"a": [2, 3], "b": [2], "w": [2, 4], "bias": [4], "s": [3]}, {"y": [3, 4]}, opset=5)
    assert [f.kind for f in lint(m)] == ["legacy"] * 3
    r = rewrite(m, "onnx")
    onnx.checker.check_model(r.model)
    rng = np.random.default_rng(2)
    f = {k: rng.standard_normal(s).astype(np.float32) for k, s in
         {"a": (2, 3), "b": (2,), "w": (2, 4), "bias": (4,), "s": (3,)}.items()}
    c = bonnx.run("Add", f["a"], f["b"], opset=5, broadcast=1, axis=0)
    e = bonnx.run("Gemm", c.T.copy(), f["w"], f["bias"], opset=5, broadcast=1)
    want = bonnx.run("Mul", e, f["s"], opset=5, broadcast=1, axis=0)
    np.testing.assert_allclose(run_ort(r.model, f)["y"], want, rtol=1e-6)


def test_legacy_invalid_node_has_no_upgrade_and_nothing_is_written(tmp_path):
    m = _legacy_model([("Add", (2, 3, 4, 5), (3, 5), {"broadcast": 1, "axis": 1})])
    out = tmp_path / "out.onnx"
    r = rewrite(m, "onnx", out)
    assert r.out is None and r.model is None and not out.exists()
    assert [f.kind for f in r.findings] == ["invalid"]


def test_models_of_opset_7_and_later_are_left_alone():
    m = model([("Add", ["a", "b"], ["c"])], {"a": [2, 3], "b": [3]}, ["c"])
    r = rewrite(m, "onnx")
    assert r.changes == [] and r.findings == []


# --------------------------------------------------------------------------- ncnn on hand-built models


@pytest.mark.parametrize("opset", [11, 17])
def test_ncnn_rewrite_unsqueezes_with_the_opsets_form_and_runs(opset):
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = np.array([10, 20], np.float32)
    m = model([("Add", ["x", "w"], ["c"]), ("Mul", ["c", "v"], ["d"]), ("Sub", ["d", "w"], ["y"])],
              {"x": [1, 2, 3, 4]}, ["c", "d", "y"], opset=opset, inits={"w": w, "v": np.ones(4, np.float32)})
    assert [f.kind for f in lint(m, "onnx2ncnn")] == ["unsupported", "unsupported"]
    r = rewrite(m, "onnx2ncnn")
    onnx.checker.check_model(r.model)
    assert r.findings == [] and _ranks_equal(r.model)
    unsq = [n for n in r.model.graph.node if n.op_type == "Unsqueeze"]
    assert len(unsq) == 2  # one for w, shared by Add and Sub; one for v
    assert all((len(n.input) == 2) == (opset >= 13) for n in unsq)
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4)).astype(np.float32)
    before, after = run_ort(m, {"x": x}), run_ort(r.model, {"x": x})
    for k in before:
        np.testing.assert_array_equal(after[k], before[k])
    del v


def test_ncnn_rewrite_leaves_what_ncnn_cannot_compute_as_findings():
    m = model([("Add", ["x", "w"], ["c"])], {"x": [1, 2, 3, 4, 5, 6]}, ["c"], inits={"w": np.ones(6, np.float32)})
    r = rewrite(m, "onnx2ncnn")
    assert len(r.changes) == 1 and [f.kind for f in r.findings] == ["unsupported"]
    assert "rank 5" in r.findings[0].reason


def test_ncnn_rewrite_of_a_legacy_node_drops_its_axis():
    m = model([("Add", ["a", "w"], ["c"], {"broadcast": 1, "axis": 1})], {"a": [1, 3, 4, 5]}, ["c"], opset=6,
              inits={"w": np.ones((3, 4), np.float32)})
    r = rewrite(m, "onnx2ncnn")
    node = next(n for n in r.model.graph.node if n.op_type == "Add")
    assert [a.name for a in node.attribute] == ["broadcast"]
    assert lint(r.model, "onnx2ncnn") == [] and [f.kind for f in lint(r.model)] == ["legacy"]


# --------------------------------------------------------------------------- files


def test_rewrite_writes_atomically(saved, tmp_path):
    out = tmp_path / "out.onnx"
    r = bcast.rewrite(str(saved), "ncnn", str(out))
    assert r.out == str(out) and lint(str(out), "ncnn") == []
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "out.onnx"]  # no temp file left


def test_rewrite_refuses_the_input_and_existing_files(saved, tmp_path):
    data = saved.read_bytes()
    with pytest.raises(InputError, match="is the input model"):
        rewrite(str(saved), "ncnn", str(saved), force=True)
    (tmp_path / "link.onnx").symlink_to(saved)
    with pytest.raises(InputError, match="is the input model"):
        rewrite(str(saved), "ncnn", str(tmp_path / "link.onnx"), force=True)
    os.link(saved, tmp_path / "hard.onnx")
    with pytest.raises(InputError, match="is the input model"):
        rewrite(str(saved), "ncnn", str(tmp_path / "hard.onnx"), force=True)
    other = tmp_path / "other.onnx"
    other.write_bytes(b"keep")
    with pytest.raises(InputError, match="exists"):
        rewrite(str(saved), "ncnn", str(other))
    assert other.read_bytes() == b"keep" and saved.read_bytes() == data
    rewrite(str(saved), "ncnn", str(other), force=True)
    assert lint(str(other), "ncnn") == []
    with pytest.raises(InputError, match="does not exist"):
        rewrite(str(saved), "ncnn", str(tmp_path / "no" / "x.onnx"))
    with pytest.raises(InputError, match="unknown rewrite target"):
        rewrite(str(saved), "tflite", str(tmp_path / "x.onnx"))


def test_bad_input_writes_nothing(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07\x12\xff\xff")
    with pytest.raises(InputError):
        rewrite(str(bad), "ncnn", str(tmp_path / "out.onnx"))
    assert sorted(os.listdir(tmp_path)) == ["bad.onnx"]
