"""``bcast rewrite --target tensorrt|tosa`` (bcast.models.equal_ranks): every input of every broadcasting node at
its output's rank -- initializers folded into new initializers, other values by an Unsqueeze -- and onnxruntime
computes the new model's outputs bit for bit as the old one's, on every corpus model (random inputs)."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

from support.cli import run_cli

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from support.onnx_models import model  # noqa: E402

import bcast  # noqa: E402
from bcast.models.lint import sites  # noqa: E402
from bcast.models.onnx_model import Shapes  # noqa: E402
from bcast.models.rewrite import rewrite  # noqa: E402

CORPUS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "convert_corpus", "*.onnx")))
TARGETS = ("tensorrt", "tosa")


def _feeds(m, rng) -> dict:
    inits = {t.name for t in m.graph.initializer}
    out = {}
    for v in m.graph.input:
        if v.name in inits:
            continue
        tt = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if dtype == np.bool_:
            out[v.name] = rng.random(shape) > 0.5
        elif dtype.kind in "iu":
            out[v.name] = rng.integers(1, 5, shape).astype(dtype)
        else:
            out[v.name] = rng.standard_normal(shape).astype(dtype)
    return out


def _run(m, feeds) -> list:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(None, feeds)


def _ranks_equal(m) -> list:
    """The broadcasting nodes of the main graph whose tensor inputs are not all at the output's rank."""
    out = []
    for _, _, site in sites(m, Shapes(m)):
        if site is None or site.plan is None or site.legacy:
            continue
        skip = {site.op.shape_input, *((0, 1) if site.op.name == "Gemm" else ())}
        if any(len(s) != site.plan.ndim for i, s in enumerate(site.plan.inputs) if i not in skip):
            out.append(site.label)
    return out


def test_every_corpus_model_keeps_its_outputs_bit_for_bit():
    rng = np.random.default_rng(0)
    changed = 0
    for path in CORPUS:
        original = onnx.load(path)
        feeds = _feeds(original, rng)
        want = _run(original, feeds)
        for target in TARGETS:
            report = rewrite(path, target)
            onnx.checker.check_model(report.model)
            got = _run(report.model, feeds)
            name = (os.path.basename(path), target)
            assert len(got) == len(want), name
            for a, b in zip(want, got):
                assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name
            assert _ranks_equal(report.model) == [], name
            assert report.findings == bcast.lint(report.model, target), name
            assert rewrite(report.model, target).changes == [], name  # once is enough
            changed += len(report.changes)
    assert changed > 200  # most corpus models broadcast across ranks


def test_initializers_fold_shared_ones_stay_and_unread_ones_go():
    w = np.arange(3, dtype=np.float32)
    m = model([("Add", ["x", "w"], ["y"]), ("Mul", ["v", "w"], ["z"]), ("Sub", ["x", "b"], ["u"])],
              {"x": [2, 4, 3], "v": [3]}, ["y", "z", "u"], inits={"w": w, "b": np.float32(2.0)})
    report = rewrite(m, "tosa")
    g = report.model.graph
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in g.initializer}
    assert inits["w"].shape == (3,)  # read by Mul as it is: never changed
    assert "b" not in inits  # its one reader reads the folded copy
    add, mul, sub = (n for n in g.node if n.op_type in ("Add", "Mul", "Sub"))
    assert inits[add.input[1]].shape == (1, 1, 3) and mul.input[1] == "w" and inits[sub.input[1]].shape == (1, 1, 1)
    assert [n.op_type for n in g.node] == ["Add", "Mul", "Sub"]  # no Unsqueeze: every operand was an initializer
    assert report.changes == ["n0: initializer B w (3,) -> (1,1,3)", "n2: initializer B b () -> (1,1,1)"]


@pytest.mark.parametrize("opset, as_input", [(11, False), (13, True), (17, True)])
def test_activations_get_an_opset_correct_unsqueeze(opset, as_input):
    m = model([("Add", ["x", "v"], ["y"])], {"x": [2, 4, 3], "v": [3]}, ["y"], opset=opset)
    new = rewrite(m, "tensorrt").model
    (unsqueeze,) = [n for n in new.graph.node if n.op_type == "Unsqueeze"]
    assert (len(unsqueeze.input) == 2) == as_input and bool(unsqueeze.attribute) != as_input
    onnx.checker.check_model(new)
    feeds = {"x": np.ones((2, 4, 3), np.float32), "v": np.arange(3, dtype=np.float32)}
    assert np.array_equal(_run(new, feeds)[0], _run(m, feeds)[0])


def test_an_initializer_that_is_a_graph_input_is_unsqueezed_not_folded():
    """(IR < 4: a graph input with an initializer is only its default: a feed may replace it)"""
    m = model([("Add", ["x", "w"], ["y"])], {"x": [2, 3]}, ["y"], opset=9, inits={"w": np.ones(3, np.float32)},
              ir_version=3)
    new = rewrite(m, "tosa").model
    assert [n.op_type for n in new.graph.node] == ["Unsqueeze", "Add"]
    assert [t.name for t in new.graph.initializer] == ["w"]


def test_the_cli_writes_a_new_file_and_never_the_input(saved, tmp_path):
    data = saved.read_bytes()
    out = tmp_path / "out.onnx"
    code, text, err = run_cli("rewrite", str(saved), "--target", "tensorrt", "-o", str(out))
    assert code == 0 and err == "" and "1 change" in text, (code, text, err)
    assert saved.read_bytes() == data and bcast.lint(str(out), "tensorrt") == []
    code, _, err = run_cli("rewrite", str(saved), "--target", "tosa", "-o", str(saved), "--force")
    assert code == 2 and "is the input model" in err and saved.read_bytes() == data
