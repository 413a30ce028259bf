"""The deployment targets of ``bcast lint`` (bcast.models.deploy): tensorrt, tflite, coreml, tosa, webnn, nnapi.

- every corpus model (tests/models/convert_corpus) through each target: the findings are exactly the rows of
  CORPUS_FINDINGS (a finding on a node the target's converter really handles would be a false alarm: each
  row is a limit its source states -- Core ML's rank <= 5, NNAPI's rank <= 4 for ADD/SUB/MUL/DIV);
- the rules each target models, one row per case (CASES), from the converters' sources;
- TFLite's verdicts against LiteRT's interpreter: every corpus node lint passes runs as its one-op
  ``.tflite`` and computes numpy's broadcast; a node past the kernels' rank limit, which lint refuses,
  does not run;
- Core ML's verdicts against coremltools 9.0: MIL's type inference on every distinct corpus node, its
  converter's rank check on the nodes lint flags and on a sample of the others.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

pytest.importorskip("onnx")

from support.onnx_models import model  # noqa: E402

from bcast.core.errors import BroadcastError  # noqa: E402
from bcast.models.lint import lint, lint_report  # noqa: E402

CORPUS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "convert_corpus", "*.onnx")))
DEPLOY = ("tensorrt", "tflite", "coreml", "tosa", "webnn", "nnapi")

#: (target, model, node, kind): every finding of the deployment targets on the corpus, both batches.
CORPUS_FINDINGS = sorted([
    *((("coreml", f"rank6_b{b}.onnx", "add_2_n", "unsupported")) for b in (1, 2)),  # rank 6 > MIL's 5
    *(("nnapi", f"{m}_b{b}.onnx", node, "unsupported")  # ADD / MUL of rank 5 or 6 > NNAPI's 4
      for m, node in (("rank5_conv_table", "add_5_n"), ("rank5_scale", "mul_5_n"), ("rank5_table", "add_2_n"),
                      ("rank6", "add_2_n"))
      for b in (1, 2)),
])


def test_corpus_findings_per_target():
    found = sorted((t, os.path.basename(path), f.node, f.kind)
                   for t in DEPLOY for path in CORPUS for f in lint_report(path, t).findings)
    assert found == CORPUS_FINDINGS
    assert len(CORPUS) >= 120


def _one(op, shapes, *, opset=17, attrs=None, inits=None):
    names = [f"i{k}" for k in range(len(shapes))]
    inputs = {n: list(s) for n, s in zip(names, shapes) if s is not None}
    return model([(op, names, ["y"], attrs or {})], inputs, ["y"], opset=opset, inits=inits)


#: (target, op, input shapes, opset, kinds, a phrase of the reason): each rule a target models.
CASES = [
    # the ONNX-TensorRT parser pads ranks itself (broadcastTensor): numpy broadcasting imports
    ("tensorrt", "Add", [(2, 3, 4), (4,)], 17, [], ""),
    ("tensorrt", "Where", [(3, 1), (2, 1, 4), (4,)], 17, [], ""),
    ("tensorrt", "PRelu", [(1, 3, 4, 4), (3, 1, 1)], 17, [], ""),
    ("tensorrt", "Add", [(1,) * 9, (2,)], 17, ["unsupported"], "max_rank 8"),  # nvinfer1::Dims::MAX_DIMS
    ("tensorrt", "Add", [(2, 3), (2, 3)], 6, ["unsupported"], "Pre-opset 7 broadcasting"),  # even equal ranks
    ("tensorrt", "BitShift", [(2, 3), (3,)], 17, ["unsupported"], "no importer for BitShift"),
    ("tensorrt", "Add", [(0, 3), (1, 3)], 17, [], ""),  # empty tensors: TensorRT takes them
    # TFLite: numpy broadcasting in the kernels up to rank 8 (inputs that differ)
    ("tflite", "Add", [(2, 3, 4), (4,)], 17, [], ""),
    ("tflite", "Sub", [(1,) * 9, (2,)], 17, ["unsupported"], "max_rank 8"),
    ("tflite", "Add", [(1,) * 9, (2,)], 17, [], ""),  # float32 ADD: the five-fold fast path computes it
    ("tflite", "Add", [(2, 1) * 4 + (2,), (1, 2) * 4 + (1,)], 17, ["unsupported"], "max_rank 8"),  # generic loop
    ("tflite", "Add", [(1,) * 9, (1,) * 9], 17, [], ""),  # one shape: no broadcast, no limit (HaveSameShapes)
    ("tflite", "Where", [(1,) * 9, (1,) * 9, (2,)], 17, ["unsupported"], "SELECT_V2"),
    ("tflite", "BitwiseAnd", [(2, 3), (3,)], 18, ["unsupported"], "no builtin"),
    # Core ML: MIL, rank <= 5
    ("coreml", "Mul", [(2, 3, 4, 5, 6), (6,)], 17, [], ""),
    ("coreml", "Mul", [(1, 2, 3, 4, 5, 6), (6,)], 17, ["unsupported"], "max_rank 5"),
    ("coreml", "BitShift", [(2, 3), (3,)], 17, ["unsupported"], "no bitwise op"),
    # TOSA (onnx-mlir): ranks equalised by the front end; level 8K: rank <= 6; no 0-size dim
    ("tosa", "Add", [(2, 3, 4), (4,)], 17, [], ""),
    ("tosa", "Less", [(2, 3, 4), (3, 1)], 17, [], ""),
    ("tosa", "Add", [(1,) * 7, (2,)], 17, ["unsupported"], "max_rank 6"),
    ("tosa", "Add", [(0, 3), (1, 3)], 17, ["unsupported"], "0-size"),
    # WebNN: bidirectional but for expand (unidirectional); dims > 0
    ("webnn", "Add", [(2, 3, 4), (4,)], 17, [], ""),
    ("webnn", "Mod", [(2, 3), (3,)], 17, ["unsupported"], "no method for Mod"),
    ("webnn", "Add", [(0, 3), (1, 3)], 17, ["unsupported"], "greater than zero"),
    # NNAPI: ADD/SUB/MUL/DIV rank <= 4, SELECT equal shapes, scalars as 1-D tensors (the TFLite delegate)
    ("nnapi", "Add", [(2, 3, 4, 5), (5,)], 17, [], ""),
    ("nnapi", "Add", [(1, 2, 3, 4, 5), (5,)], 17, ["unsupported"], "max_rank 4"),
    ("nnapi", "Greater", [(), ()], 17, [], ""),
    ("nnapi", "Where", [(2, 3), (2, 3), (3,)], 17, ["unsupported"], "no broadcasting"),
    ("nnapi", "Where", [(2, 3), (2, 3), (2, 3)], 17, [], ""),
    ("nnapi", "Mod", [(2, 3), (3,)], 17, ["unsupported"], "no operation for Mod"),
]


@pytest.mark.parametrize("target, op, shapes, opset, kinds, phrase", CASES,
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_each_target_models_its_converter(target, op, shapes, opset, kinds, phrase):
    attrs = {"direction": "LEFT"} if op == "BitShift" else {}
    found = lint(_one(op, shapes, opset=opset, attrs=attrs), target)
    assert [f.kind for f in found] == kinds, [f.reason for f in found]
    assert all(phrase in f.reason and f.fix and f.target == target for f in found), [f.reason for f in found]


def test_webnn_expand_is_unidirectional():
    """ONNX's Expand is bidirectional; WebNN's expand takes the new shape as the output's (webnn index.bs)."""
    shape = np.array([2, 1, 4], np.int64)
    m = model([("Expand", ["x", "s"], ["y"])], {"x": [3, 1]}, ["y"], inits={"s": shape})
    (f,) = lint(m, "webnn")
    assert f.kind == "unsupported" and "[2, 3, 4]" in f.fix
    whole = model([("Expand", ["x", "s"], ["y"])], {"x": [3, 1]}, ["y"], inits={"s": np.array([2, 3, 4], np.int64)})
    assert lint(whole, "webnn") == []
    assert [lint(m, t) for t in ("tensorrt", "tflite", "coreml", "tosa", "nnapi")] == [[]] * 5


def test_tensorrt_opset6_gemm_with_equal_ranks_imports():
    """broadcastTensors returns before broadcastTensor's opset assertion when the ranks are equal (Gemm's C)."""
    inits = {"b": np.ones((3, 4), np.float32), "c": np.ones((2, 4), np.float32)}
    m = model([("Gemm", ["a", "b", "c"], ["y"])], {"a": [2, 3]}, ["y"], opset=6, inits=inits)
    assert [f.kind for f in lint(m, "tensorrt")] == []


def test_legacy_forms_are_unsupported_with_the_upgrade_as_fix():
    m = model([("Add", ["a", "b"], ["y"], {"broadcast": 1, "axis": 0})], {"a": [2, 3], "b": [2]}, ["y"], opset=6)
    for target in DEPLOY:
        (f,) = lint(m, target)
        assert f.kind == "unsupported" and ("rewrite --target onnx" in f.fix or "opset 7" in f.reason), target


def test_tflite_findings_carry_the_interpreters_records():
    (f,) = lint(_one("Sub", [(1,) * 9, (2,)]), "tflite")
    assert "tflite-rank-abort" in {d.deviation.id for d in f.deviations}


# --------------------------------------------------------------------------- against LiteRT's interpreter


def _jobs():
    """Every corpus node the tflite target routes to one builtin on the node's own inputs, as a job for the
    interpreter: (model, node, op, arrays, lint's verdict)."""
    from bcast.frameworks.tflite.lint_tflite import Checks
    from bcast.frameworks.tflite.oracle import OP_CODES
    from bcast.models.lint import sites
    from bcast.models.onnx_model import Shapes, load

    rng = np.random.default_rng(0)
    jobs, seen = [], set()
    for path in CORPUS:
        proto = load(path)
        shapes = Shapes(proto)
        flagged = {f.node for f in lint(proto, "tflite")}
        for _, _, site in sites(proto, shapes):
            if site is None or site.plan is None:
                continue
            route = Checks.routes.get(site.op.name)
            if not hasattr(route, "op") or route.operands != "inputs" or route.op not in OP_CODES:
                continue
            types = [shapes.elem_type(n) for n in site.inputs]
            if route.op == "SELECT_V2":
                types = types[1:]
            if any(t != 1 for t in types):  # float32 (and Where's bool condition) only
                continue
            key = (route.op, site.plan.inputs)
            if key in seen:
                continue
            seen.add(key)
            arrays = [rng.standard_normal(s).astype(np.float32) for s in site.plan.inputs]
            if route.op == "SELECT_V2":
                arrays[0] = arrays[0] > 0
            if route.op == "POW":
                arrays[0] = np.abs(arrays[0]) + 0.5
            jobs.append((os.path.basename(path), site.label, route.op, arrays, site.label in flagged))
    return jobs


def test_tflite_verdicts_match_the_interpreter():
    pytest.importorskip("ai_edge_litert")
    import bcast.tflite
    from bcast.frameworks.tflite.oracle import run_many

    jobs = _jobs()
    rank9 = [np.ones((1,) * 9, np.float32), np.ones((2,), np.float32)]
    for onnx_op, op in (("Sub", "SUB"), ("Add", "ADD")):  # SUB: lint refuses (rank 9 > 8); ADD: the fast path
        jobs.append(("(made)", "rank9", op, rank9, bool(lint(_one(onnx_op, [(1,) * 9, (2,)]), "tflite"))))
    expand9 = model([("Expand", ["x", "s"], ["y"])], {"x": [1] * 9}, ["y"], inits={"s": np.array([2] * 9, np.int64)})
    jobs.append(("(made)", "expand9", "BROADCAST_TO", [np.ones((1,) * 9, np.float32), np.array([2] * 9, np.int32)],
                 bool(lint(expand9, "tflite"))))  # BROADCAST_TO has no rank limit in LiteRT 2.3.0: no finding
    assert len(jobs) >= 150
    results = run_many([(op, *arrays) for _, _, op, arrays, _ in jobs])
    for (name, node, op, arrays, flagged), got in zip(jobs, results):
        ran = isinstance(got, np.ndarray)
        assert ran != flagged, (name, node, op, [a.shape for a in arrays], got)
        if ran:
            try:
                want = bcast.tflite.run(op, *arrays)
            except BroadcastError:  # past the kernels' rank 8: the fast path's values are numpy's
                want = {"ADD": np.add, "MUL": np.multiply}[op](*arrays)
            # (values to float32's precision: the kernels' POW is not numpy's to the last bit)
            assert got.shape == want.shape and np.allclose(got, want, rtol=1e-6, equal_nan=True), (name, node, op)


# --------------------------------------------------------------------------- against coremltools' MIL


def test_coreml_verdicts_match_mil_and_its_converter():
    """Each distinct corpus node the coreml target sends to one MIL op on its own inputs: MIL's type inference
    gives the spec's output shape; the converter's check (ct.convert, no passes) refuses exactly the nodes lint
    flags (rank 6), and takes a sample of the others."""
    pytest.importorskip("coremltools")
    from bcast.frameworks.coreml.lint_coreml import Checks
    from bcast.frameworks.coreml.oracle import convert_refuses, infer_shape
    from bcast.models.lint import sites
    from bcast.models.onnx_model import Shapes, load

    cases, seen = [], set()
    for path in CORPUS:
        proto = load(path)
        flagged = {f.node for f in lint(proto, "coreml")}
        shapes = Shapes(proto)
        for _, _, site in sites(proto, shapes):
            route = Checks.routes.get(site.op.name) if site is not None and site.plan is not None else None
            if not hasattr(route, "op") or route.operands != "inputs" or route.op == "select":
                continue
            if any(shapes.elem_type(n) != 1 for n in site.inputs):  # float32 only
                continue
            key = (route.op, site.plan.inputs)
            if key not in seen:
                seen.add(key)
                cases.append((route.op, site.plan.inputs, site.plan.shape, site.label in flagged))
    assert len(cases) >= 100 and sum(c[3] for c in cases) == 2  # rank6_b1, rank6_b2
    for op, inputs, out, _ in cases:
        assert infer_shape(op, inputs) == out, (op, inputs)
    checked = [c for c in cases if c[3]] + [c for c in cases if not c[3]][:3]
    for op, inputs, _, flagged in checked:
        assert (convert_refuses(op, inputs) is not None) == flagged, (op, inputs)
