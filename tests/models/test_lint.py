"""bcast lint on hand-built models (one per kind of finding), on bad files, and on the onnx
wheel's light model-zoo graphs."""

from __future__ import annotations

import os

import numpy as np
import pytest

from support.cli import cli
from support.onnx_models import LIGHT, light, model

import bcast
from bcast.core.errors import InputError
from bcast.models.lint import KINDS, TARGETS, lint, lint_report

W = np.float32
#: the light models whose written-out BatchNorm Unsqueezes its (C,) scale: onnx2ncnn's ExpandDims makes it (1,1,C)
ONNX2NCNN_GARBAGE = ("densenet121", "inception_v2")


def kinds(m, target="onnx"):
    return [f.kind for f in lint(m, target)]


def only(m, target="onnx"):
    found = lint(m, target)
    assert len(found) == 1, found
    return found[0]


# --------------------------------------------------------------------------- one model per kind


def test_invalid_under_its_spec_names_node_inputs_shapes_and_the_explain_command():
    f = only(model([("Add", ["a", "b"], ["c"])], {"a": [2, 3], "b": [4]}, ["c"]))
    assert (f.kind, f.node, f.op_type, f.inputs, f.input_shapes) == ("invalid", "n0", "Add", ("a", "b"), ((2, 3), (4,)))
    assert f.output == "c" and f.output_shape is None and f.rule == "numpy"
    assert "axis -1 (A axis 1, B axis 0): 3 vs 4" in f.reason
    assert "`bcast explain 2,3 4, --rule numpy`" in f.fix


def test_invalid_prelu_slope_carries_the_runtimes_that_run_it_anyway():
    f = only(model([("PRelu", ["x", "s"], ["y"])], {"x": [3, 1], "s": [1, 4]}, ["y"]))
    assert f.kind == "invalid" and f.rule == "unidirectional"
    ids = [d.deviation.id for d in f.deviations]
    assert "onnxruntime-prelu-bidirectional" in ids and "onnx-shape-inference-unchecked" in ids


def test_gemm_c_that_onnx_shape_inference_does_not_check():
    f = only(model([("Gemm", ["a", "b", "c"], ["y"])], {"a": [2, 3], "b": [3, 4], "c": [3]}, ["y"]))
    assert f.kind == "invalid" and f.rule == "onnx-gemm"
    assert [d.deviation.id for d in f.deviations] == ["onnx-shape-inference-unchecked"]


def test_symbolic_dims_give_the_constraint_onnx_assumes():
    f = only(model([("Add", ["a", "b"], ["c"])], {"a": ["N", 3], "b": [5, 1]}, ["c"]))
    assert f.kind == "unproven" and f.output_shape == (5, 3)
    assert "N ∈ {1, 5}" in f.reason
    assert f.to_dict()["input_shapes"] == [["N", 3], [5, 1]]


def test_symbolic_dims_that_always_broadcast_are_clean():
    assert lint(model([("Add", ["a", "b"], ["c"])], {"a": ["N", 3], "b": [1, 3]}, ["c"])) == []


def test_missing_shapes_are_named_not_a_crash():
    f = only(model([("Add", ["a", "b"], ["c"])], {"a": None, "b": [5, 1]}, ["c"]))
    assert f.kind == "unknown" and f.input_shapes == (None, (5, 1))
    assert "'a' (a graph input without a shape)" in f.reason


def test_expand_reads_its_constant_shape_input():
    m = model([("Expand", ["a", "s"], ["y"])], {"a": [3, 1]}, ["y"], inits={"s": np.array([2, 4, 4])})
    f = only(m)
    assert f.kind == "invalid" and f.rule == "bidirectional" and f.input_shapes[1] == (2, 4, 4)


def test_ncnn_unsupported_pair_and_the_rewrite_that_fixes_it():
    m = model([("Add", ["x", "w"], ["c"])], {"x": [1, 2, 3, 4]}, ["c"], inits={"w": np.ones((3, 4), W)})
    assert lint(m) == [] and lint(m, "openvino") == []
    f = only(m, "onnx2ncnn")
    assert f.kind == "unsupported" and f.rule == "ncnn"
    assert "blobs A (2,3,4) and B (3,4)" in f.reason  # the batch axis is not an ncnn axis
    assert [d.deviation.id for d in f.deviations] == ["ncnn-garbage"]
    assert "--target onnx2ncnn" in f.fix and "reshape initializer B to (1,1,3,4)" in f.fix  # folded, not Unsqueezed


def test_ncnn_differs_where_a_1d_operand_matches_the_first_axis():
    m = model([("Mul", ["x", "w"], ["c"])], {"x": [1, 2, 2]}, ["c"], inits={"w": np.ones(2, W)})
    f = only(m, "onnx2ncnn")
    assert f.kind == "differs" and "aligns B as (2,1), not (1,2)" in f.reason


def test_ncnn_one_d_on_the_last_axis_is_fine():
    m = model([("Mul", ["x", "w"], ["c"])], {"x": [1, 4, 3, 2]}, ["c"], inits={"w": np.ones(2, W)})
    assert lint(m, "onnx2ncnn") == []


def test_ncnn_rank_limit_has_no_rewrite():
    m = model([("Add", ["x", "w"], ["c"])], {"x": [1, 2, 3, 4, 5, 6]}, ["c"], inits={"w": np.ones(6, W)})
    f = only(m, "onnx2ncnn")
    assert f.kind == "unsupported" and "rank 5" in f.reason and f.fix.startswith("none that bcast knows")


def test_ncnn_constant_varying_along_the_batch_axis():
    # onnx2ncnn holds x (1,3) as the blob (3,) and w (2,3) as MemoryData (2,3): ncnn's 1-D rule then broadcasts
    # (3,) along w's rows, numpy's answer; under pnnx the batch axis of x (none: no batched layer) is no question
    m = model([("Add", ["x", "w"], ["c"])], {"x": [1, 3]}, ["c"], inits={"w": np.ones((2, 3), W)})
    assert lint(m, "onnx2ncnn") == [] and lint(m, "ncnn") == []


def test_ncnn_batch_axis_follows_transpose():
    # x (1,3,4) -> Transpose perm (1,2,0): (3,4,1), batch on axis 2; w (3,4,5) faces it with 5
    m = model([("Transpose", ["x"], ["t"], {"perm": [1, 2, 0]}), ("Add", ["t", "w"], ["c"])],
              {"x": [1, 3, 4]}, ["c"], inits={"w": np.ones((3, 4, 5), W)})
    f = only(m, "onnx2ncnn")  # t is held as (4,1) without its axis 0 (onnx2ncnn's batch): garbage against (3,4,5)
    assert f.kind == "unsupported" and "(3,4,1)" in f.reason and "garbage" in f.reason


def test_openvino_prelu_per_channel_heuristic():
    m = model([("PRelu", ["x", "s"], ["y"])], {"x": [1, 3, 2, 3]}, ["y"], inits={"s": np.ones(3, W)})
    assert lint(m) == []
    assert [f.kind for f in lint(m, "onnx2ncnn")] == ["differs"]  # onnx2ncnn's PReLU is per channel too
    f = only(m, "openvino")
    assert f.kind == "differs" and f.rule == "openvino-prelu"
    assert "(1,3,1,1), the spec's (1,1,1,3)" in f.reason and "Unsqueeze slope to (1,1,1,3)" in f.fix


def test_openvino_prelu_numpy_slope_is_fine():
    m = model([("PRelu", ["x", "s"], ["y"])], {"x": [1, 3, 2, 3]}, ["y"], inits={"s": np.ones((3, 1, 1), W)})
    assert lint(m, "openvino") == []


def test_legacy_axis_form_names_onnxruntime_and_the_converter_bug():
    m = model([("Add", ["a", "b"], ["c"], {"broadcast": 1, "axis": 1})], {"a": [2, 3, 4, 5], "b": [3, 4]}, ["c"],
              opset=6)
    f = only(m)
    assert f.kind == "legacy" and f.op_type == "Add" and f.opset == 6 and f.output_shape == (2, 3, 4, 5)
    ids = [d.deviation.id for d in f.deviations]
    assert "onnxruntime-no-legacy-opsets" in ids and "onnx-version-converter-axis" in ids
    assert "--target onnx" in f.fix and "version converter gets this axis wrong" in f.fix


def test_legacy_invalid_middle_one_does_not_stretch():
    m = model([("Mul", ["a", "b"], ["c"], {"broadcast": 1, "axis": 1})], {"a": [2, 3, 4, 5], "b": [3, 1, 5]}, ["c"],
              opset=6)
    f = only(m)
    assert f.kind == "invalid" and f.rule == "onnx-legacy" and "a 1 inside B does not stretch" in f.reason


def test_opset1_shapes_come_from_bcast_where_onnx_has_no_inference():
    # Add-1 has no shape inference in onnx: bcast's shape feeds Transpose-1 (onnx's, one node) and Mul-1
    m = model([("Add", ["a", "b"], ["c"], {"broadcast": 1}), ("Transpose", ["c"], ["t"], {"perm": [1, 0]}),
               ("Mul", ["t", "v"], ["e"], {"broadcast": 1, "axis": 0})],
              {"a": [2, 3], "b": [3], "v": [3]}, ["e"], opset=1)
    found = lint(m)
    assert [f.kind for f in found] == ["legacy", "legacy"]
    assert found[1].input_shapes == ((3, 2), (3,))


def test_every_target_and_kind_is_documented():
    import bcast.models.lint as L

    for k in KINDS:
        assert k in L.__doc__
    assert TARGETS == ("onnx", "coreml", "ncnn", "nnapi", "onnx2ncnn", "onnx2tf", "openvino", "tensorrt", "tflite",
                       "tosa", "webnn")
    for t in TARGETS:
        assert f"``{t}``" in L.__doc__, t


def test_finding_to_dict_is_json_ready():
    import json

    m = model([("Add", ["a", "b"], ["c"])], {"a": ["N", 3], "b": [5, 1]}, ["c"])
    d = lint(m)[0].to_dict()
    assert set(d) == {"node", "op_type", "opset", "inputs", "input_shapes", "output", "output_shape", "kind",
                      "target", "rule", "reason", "fix", "deviations", "path"}
    assert d["path"] == ["n0"]
    assert json.loads(json.dumps(d)) == d


def test_lint_is_exported_lazily():
    assert bcast.lint is not None and callable(bcast.lint)
    with pytest.raises(InputError, match="unknown target 'tpu'"):
        bcast.lint(model([("Relu", ["a"], ["b"])], {"a": [2]}, ["b"]), target="tpu")


# --------------------------------------------------------------------------- the light models


#: The light models whose graph.input starts with initializers: pnnx converts none of them (a model finding).
PNNX_DROPS_INPUTS = {"densenet121", "inception_v1", "squeezenet", "vgg19"}


@pytest.mark.parametrize("name", sorted(f[6:-5] for f in os.listdir(LIGHT) if f.endswith(".onnx")))
def test_light_models_are_clean_for_every_target(name):
    for target in TARGETS:
        if target == "onnx2ncnn" and name in ONNX2NCNN_GARBAGE:
            continue  # test_onnx2ncnn.py::test_light_models_unsqueezed_batchnorm_is_garbage_and_rewrite_fixes_it
        if target == "ncnn" and name in PNNX_DROPS_INPUTS:
            continue  # test_lint_pnnx.py::test_onnx_light_model_zoo_verdicts (pnnx removes the wrong graph inputs)
        report = lint_report(light(name), target)
        assert report.findings == [], (target, report.findings[:2])
        assert report.nodes > 0


def test_light_densenet_checks_every_broadcasting_node():
    report = lint_report(light("densenet121"))
    assert report.checked == 242  # 121 Mul + 121 Add (its BatchNorm written out)


# --------------------------------------------------------------------------- bad files


def _bad(path):
    with pytest.raises(InputError) as e:
        lint(str(path))
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_truncated_files(tmp_path):
    data = open(light("squeezenet"), "rb").read()
    for cut in (0, 1, 7, 100, len(data) // 3, len(data) // 2, len(data) - 40, len(data) - 1):
        p = tmp_path / f"cut{cut}.onnx"
        p.write_bytes(data[:cut])
        _bad(p)


def test_random_bytes_and_non_files(tmp_path):
    rng = np.random.default_rng(5)
    for i in range(20):
        p = tmp_path / f"r{i}.onnx"
        p.write_bytes(rng.integers(0, 256, 64 + 37 * i, dtype=np.uint8).tobytes())
        _bad(p)
    assert "no such file" in _bad(tmp_path / "missing.onnx")
    assert "not a regular file" in _bad(tmp_path)
    (tmp_path / "text.onnx").write_text("ir_version: 7\n")
    _bad(tmp_path / "text.onnx")


def _external_model(folder, location, *, data=b"\0" * 24):
    """A model whose Add input 'w' (6 floats) is in external data at ``location``."""
    from onnx import TensorProto

    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[6], data_location=TensorProto.EXTERNAL)
    for k, v in (("location", location), ("offset", "0"), ("length", str(len(data)))):
        e = w.external_data.add()
        e.key, e.value = k, v
    m = model([("Add", ["x", "w"], ["y"])], {"x": [2, 6]}, ["y"])
    m.graph.initializer.append(w)
    path = os.path.join(folder, "m.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def test_external_data_inside_the_folder_loads(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.arange(6, dtype=W).tobytes())
    assert lint(_external_model(str(tmp_path), "w.bin")) == []


@pytest.mark.parametrize("location, match", [
    ("../w.bin", "leaves the model's folder"),
    ("sub/../../w.bin", "leaves the model's folder"),
    ("/etc/passwd", "absolute path"),
    ("link.bin", "symlink out of the model's folder"),
    ("nothere.bin", "no such file"),
    ("short.bin", "run past the file"),
])
def test_external_data_that_escapes_is_refused(tmp_path, location, match):
    inner = tmp_path / "model"
    inner.mkdir()
    (tmp_path / "w.bin").write_bytes(b"\0" * 24)
    os.symlink(tmp_path / "w.bin", inner / "link.bin")
    (inner / "short.bin").write_bytes(b"\0" * 8)
    assert match in _bad(_external_model(str(inner), location))


# --------------------------------------------------------------------------- command line

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")


def test_cli_lint_exit_status_and_blocks():
    path = os.path.join(EXAMPLES, "scale_prelu.onnx")
    assert cli("lint", path)[0] == 0
    code, text = cli("lint", path, "--target", "onnx2ncnn")
    assert code == 1 and "checked 2 broadcasting nodes of 2: 2 findings" in text  # the Mul, and PRelu per channel
    assert "\nscale: Mul-17(x (1,5,4,5), w (4,5)) -> scaled (1,5,4,5)\n  unsupported (onnx2ncnn, ncnn): " in text
    code, text = cli("lint", path, "--target", "ncnn")  # pnnx inserts the reshape for Mul; PRelu's slope is not
    assert code == 1
    assert "\nact: PRelu-17(scaled (1,5,4,5), slope (5,)) -> y (1,5,4,5)\n  differs (ncnn, ncnn): " in text


def test_cli_lint_json():
    import json

    code, text = cli("lint", os.path.join(EXAMPLES, "scale_prelu.onnx"), "--target", "openvino", "--json")
    d = json.loads(text)
    assert code == 1 and d["ok"] is False
    assert (d["target"], d["opset"], d["nodes"], d["checked"]) == ("openvino", 17, 2, 2)
    (f,) = d["findings"]
    assert (f["node"], f["kind"], f["input_shapes"], f["output_shape"]) == ("act", "differs", [[1, 5, 4, 5], [5]],
                                                                          [1, 5, 4, 5])


def test_cli_bad_model_is_one_line_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\xff" * 10)
    assert cli("lint", str(bad))[0] == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bcast lint: error: ")
    assert cli("rewrite", str(bad), "--target", "ncnn", "-o", str(tmp_path / "o.onnx"))[0] == 2
    assert sorted(os.listdir(tmp_path)) == ["bad.onnx"]


def test_cli_rewrite_json_then_clean(tmp_path):
    import json

    out = tmp_path / "up.onnx"
    code, text = cli("rewrite", os.path.join(EXAMPLES, "legacy_add.onnx"), "--target", "onnx", "-o", str(out),
                      "--json")
    d = json.loads(text)
    assert code == 0 and d["written"] and d["out"] == str(out) and d["findings"] == [] and len(d["changes"]) == 3
    assert cli("lint", str(out))[0] == 0
    assert cli("rewrite", os.path.join(EXAMPLES, "legacy_add.onnx"), "--target", "onnx", "-o", str(out))[0] == 2


def test_cli_targets_are_the_modules():
    from bcast import cli
    from bcast.models import rewrite as rewriter

    assert cli.LINT_TARGETS == TARGETS and cli.REWRITE_TARGETS == rewriter.TARGETS


def test_example_models_are_what_the_script_makes():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_models", os.path.join(EXAMPLES, "make_models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, make in mod.MODELS.items():
        with open(os.path.join(EXAMPLES, name), "rb") as f:
            assert f.read() == make().SerializeToString(), name
