"""bcast rewrite (the onnx2ncnn, ncnn and openvino rewrites have their own tests: test_onnx2ncnn.py,
test_lint_graphs.py, test_convert_corpus.py): legacy opset-6 broadcast/axis models upgraded and run in
onnxruntime against bcast.frameworks.onnx.ops.run of the legacy op; the file rules (never the input, never
an existing file, atomic)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from support.onnx_models import model, onnx, run_ort

import bcast
from bcast.frameworks.onnx import ops as bonnx
from bcast.core.errors import InputError
from bcast.models.lint import lint
from bcast.models.rewrite import rewrite

pytest.importorskip("onnxruntime")

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
