"""``bcast lint model.param`` (bcast.models.ncnn_param): ncnn models that pnnx wrote from torch modules
(tests/support/make_ncnn_params.py regenerates them), and hand-edited ones (``*_edited.param``).

The verdicts are checked against ncnn itself: the BinaryOp's output as ncnn computes it against numpy's
broadcast of the very blobs ncnn fed it; a finding exactly where they differ."""

import os
import pathlib

import numpy as np
import pytest

from bcast.cli import main
from bcast.core.errors import InputError
from bcast.models import ncnn_param
from bcast.models.ncnn_param import format_report, lint_param, read_param, run_blobs

HERE = pathlib.Path(__file__).parent / "ncnn_param"
HAS_NCNN = ncnn_param.importlib.util.find_spec("ncnn") is not None

# model, its Input shapes (numpy order, as ncnn.Mat(ndarray) reads them), lint's verdict: the kind, or None
CASES = [
    ("se", "in0=1,3,4,5 in1=1,3,1,1", None),  # SE channel scale, as pnnx traced it
    ("se", "in0=3,4,5 in1=3,1,1", None),
    ("se", "in0=3,4,5 in1=3,1", "differs"),  # the scale without its last 1: ncnn aligns it to the leading axes
    ("attention_mask", "in0=1,2,4,4 in1=1,1,4,4", None),
    ("attention_mask", "in0=2,4,4 in1=1,4,4", None),
    ("attention_mask", "in0=2,4,4 in1=4,4", "unsupported"),  # the mask's batch of 1 dropped: garbage
    ("bias", "in0=1,3,4,5", None),  # a MemoryData bias, reshaped by pnnx to (1,1,1,5)
    ("bias", "in0=3,4,5", "differs"),  # fed without the batch axis: the 4-D bias lands on the wrong axes
    ("bias_tie", "in0=1,4,4", None),
    ("bias_tie", "in0=4,4", "differs"),
    ("outer", "in0=1,3,1,1 in1=1,1,4,5", None),  # (C,1,1) vs (1,H,W)
    ("outer", "in0=3,1,1 in1=1,4,5", None),
    ("outer", "in0=3,1,1 in1=4,5", "unsupported"),
    ("batch", "in0=2,3,4 in1=1,3,4", None),  # a broadcast across the batch axis
    ("batch", "in0=2,3,4 in1=3,4", "unsupported"),
    ("batch_both", "in0=2,1,4 in1=1,3,4", None),
    ("batch_both", "in0=2,1,4 in1=3,4", "unsupported"),
    ("row_scale", "in0=3,3 in1=3", None),  # pnnx reshapes the 1-D operand to (1,3): no tie left
    ("row_scale", "in0=4,3 in1=3", None),
    ("tie_edited", "in0=4,4", "differs"),  # edited: bias_tie without pnnx's Reshape, ncnn's 1-D tie rule
    ("tie_edited", "in0=1,4,4", None),
    ("chain_edited", "in0=3,4", "unsupported"),  # edited: ReLU, Split, Reshape -1, Sigmoid before the BinaryOp
    ("chain_edited", "in0=4", None),
]
_NUMPY = {0: np.add, 1: np.subtract, 2: np.multiply}


def _inputs(text):
    return text.split()


@pytest.mark.skipif(not HAS_NCNN, reason="needs the ncnn wheel")
@pytest.mark.parametrize("model, inputs, kind", CASES)
def test_the_verdict_is_what_ncnn_computes(model, inputs, kind):
    param = str(HERE / f"{model}.param")
    text, layers = read_param(param)
    (binop,) = [x for x in layers if x.type == "BinaryOp"]
    rng = np.random.default_rng(0)
    feeds = {n: rng.random(tuple(map(int, s.split(","))), np.float32) + 0.5
             for n, s in (i.split("=") for i in _inputs(inputs))}
    blobs = run_blobs(text, str(HERE / f"{model}.bin"), feeds, [*binop.bottoms, *binop.tops], values=True)
    a, b, out = (blobs[n] for n in (*binop.bottoms, *binop.tops))
    try:
        expected = _NUMPY[binop.params.get(0, 0)](a, b)
        agrees = expected.shape == out.shape and np.allclose(expected, out)
    except ValueError:  # numpy refuses the pair
        agrees = False
    assert agrees == (kind is None), (a.shape, b.shape, out.shape)
    report = lint_param(param, _inputs(inputs))
    assert report.shapes_from == "ncnn's run of the model"
    assert [f.kind for f in report.findings] == ([kind] if kind else [])
    for f in report.findings:  # the real shapes, and the one ncnn wrote
        assert f.input_shapes == (a.shape, b.shape) and f.output_shape == out.shape
        assert "shapes from ncnn's run of the model" in f.reason
    if kind == "unsupported":
        (f,) = report.findings
        assert [d.deviation.id for d in f.deviations] == ["ncnn-garbage"]
        assert "garbage of shape" in f.reason and "as w,h,d,c" in f.reason
    # without running ncnn: the shapes bcast propagates give the same verdict
    derived = lint_param(param, _inputs(inputs), run_ncnn=False)
    assert [(f.kind, f.input_shapes, f.output_shape) for f in derived.findings] == \
        [(f.kind, f.input_shapes, f.output_shape) for f in report.findings]
    assert "ncnn not run" in derived.shapes_from and "ncnn's run" not in derived.shapes_from


def test_the_generated_models_are_those_of_the_script():
    import ast

    script = (HERE.parents[1] / "support" / "make_ncnn_params.py").read_text(encoding="utf-8")
    tree = ast.parse(script)
    (models,) = [n.value for n in ast.walk(tree) if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") ==
                 "MODELS" or isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "MODELS"]
    names = {k.value for k in models.keys}
    files = {p.stem for p in HERE.glob("*.param") if not p.stem.endswith("_edited")}
    assert names == files
    assert all((HERE / f"{n}.bin").is_file() for n in names)
    assert sum(p.stat().st_size for p in HERE.iterdir()) < 10_000  # small test data


def test_shape_hints_are_read():
    report = lint_param(HERE / "hint_edited.param")  # edited: -23330 hints on the Inputs, no .bin
    (f,) = report.findings
    assert (f.kind, f.input_shapes, f.output_shape) == ("unsupported", ((2, 4, 4), (4, 4)), (4, 4, 4))
    assert "shapes from the .param's shape hints" in f.reason


def test_unknown_shapes_are_never_guessed():
    report = lint_param(HERE / "se.param", ["in0=1,3,4,5"])  # in1 not given: ncnn cannot run
    (f,) = report.findings
    assert f.kind == "unknown" and f.input_shapes == ((1, 3, 4, 5), None) and "'in1'" in f.reason
    assert "not every Input has a --input shape" in report.shapes_from
    assert not report.ok


@pytest.mark.parametrize("text, error", [
    ("", "not an ncnn .param (the first line is not the magic number 7767517)"),
    ("7767516\n1 1\nInput in0 0 1 in0\n", "magic number"),
    ("7767517\n1\n", "line 2 must be the layer and blob counts"),
    ("7767517\n\u00b2 1\n", "line 2 must be the layer and blob counts"),
    ("7767517\n1 1\nInput in0 0 \u00b2 in0\n", "line 3: a layer is"),
    ("7767517\n2 1\nInput in0 0 1 in0\n", "line 2 declares 2 layers, the file has 1"),
    ("7767517\n1 1\nInput in0\n", "line 3: a layer is"),
    ("7767517\n1 1\nInput in0 0 3 in0\n", "0 bottoms and 3 tops declared, 1 names given"),
    ("7767517\n1 1\nInput in0 0 1 in0 0=x\n", "'x' is not a number"),
    ("7767517\n1 1\nInput in0 0 1 in0 zero\n", "is not a param (id=value)"),
    ("7767517\n1 1\nInput in0 0 1 in0 -23330=3,1,2\n", "says 3 values and has 2"),
    ("7767517\n1 1\nInput in0 0 1 in0 40=1\n", "param id 40 out of ncnn's range"),
    ("7767517\n2 2\nInput in0 0 1 in0\nInput in1 0 1 in0\n", "blob 'in0' is produced twice"),
    ("7767517\n1 1\nInput " + "n" * 300 + " 0 1 in0\n", "longer than ncnn's 255"),
    ("7767517\n2000000 1\n", "more than 1000000"),
    ("7767517\n1 1\npnnx.Input pnnx_input_0 0 1 0 #0=(1,3,4,5)f32\n", "this is pnnx's own graph (.pnnx.param)"),
])
def test_a_malformed_param_is_one_line(tmp_path, text, error):  # hand-edited files
    p = tmp_path / "bad.param"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as e:
        lint_param(p)
    assert error in str(e.value) and "\n" not in str(e.value)


def test_what_is_not_a_param_file_is_refused_before_reading(tmp_path, monkeypatch):
    (tmp_path / "dir.param").mkdir()
    with pytest.raises(InputError, match="not a regular file"):
        lint_param(tmp_path / "dir.param")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.param")
        with pytest.raises(InputError, match="not a regular file"):
            lint_param(tmp_path / "fifo.param")
    (tmp_path / "bin.param").write_bytes(b"7767517\n\xff\xfe")
    with pytest.raises(InputError, match="not text"):
        lint_param(tmp_path / "bin.param")
    monkeypatch.setattr(ncnn_param, "MAX_BYTES", 10 << 20)
    (tmp_path / "big.param").write_bytes(b" " * ((10 << 20) + 1))
    with pytest.raises(InputError, match="larger than 10 MiB"):
        lint_param(tmp_path / "big.param")


@pytest.mark.parametrize("inputs, error", [
    (["in0"], "write NAME=SHAPE"),
    (["x=1"], "'x' is not an Input blob of the model (they are: in0, in1)"),
    (["in0=1,2,3,4,5"], "rank 1 to 4"),
    (["in0=0,3"], "dims of 1 or more"),
    (["in0=N,3"], "dims of 1 or more"),
    (["in0=2,,3"], "invalid shape"),
])
def test_bad_input_shapes(inputs, error):
    with pytest.raises(InputError) as e:
        lint_param(HERE / "se.param", inputs)
    assert error in str(e.value)


def _cli(argv, capsys):
    code = main(argv)
    return code, *capsys.readouterr()


def test_cli(capsys):
    param = str(HERE / "batch.param")
    code, out, err = _cli(["lint", param, "--input", "in0=2,3,4", "--input", "in1=3,4"], capsys)
    assert (code, err) == (1, "") and "unsupported (ncnn)" in out and out.startswith(f"{param} (ncnn .param")
    code, out, err = _cli(["lint", param, "--input", "in0=2,3,4", "--input", "in1=1,3,4", "--json"], capsys)
    import json

    d = json.loads(out)
    assert (code, d["ok"], d["format"], d["target"], d["findings"]) == (0, True, "ncnn .param", "ncnn", [])
    assert d["shapes_from"].startswith("ncnn's run") if HAS_NCNN else "ncnn not run" in d["shapes_from"]
    for argv in (["--target", "onnx"], ["--target", "onnx2ncnn"]):
        code, out, err = _cli(["lint", param, *argv], capsys)
        assert (code, out) == (2, "") and err.count("\n") == 1 and "the target of a .param is ncnn" in err
    code, out, err = _cli(["lint", "examples/legacy_add.onnx", "--input", "a=1"], capsys)
    assert (code, out) == (2, "") and "--input gives the Input shapes of an ncnn .param" in err


def test_the_text_report(capsys):
    text = format_report(lint_param(HERE / "tie_edited.param", ["in0=4,4"], run_ncnn=False), "m.param")
    assert text.splitlines()[2] == "add_0: BinaryOp ADD(in0 (4,4), 1 (4,)) -> out0 (4,4)"


def test_when_ncnn_dies_the_other_paths_give_the_shapes(monkeypatch):
    def dies(*args, **kwargs):
        raise RuntimeError("ncnn's process died (exit status -11)")

    monkeypatch.setattr(ncnn_param, "run_blobs", dies)
    monkeypatch.setattr(ncnn_param.importlib.util, "find_spec", lambda name: object())
    report = lint_param(HERE / "batch.param", ["in0=2,3,4", "in1=3,4"])
    assert report.shapes_from == "--input (ncnn not run: ncnn's process died (exit status -11))"
    assert [f.kind for f in report.findings] == ["unsupported"]


def test_bcast_lint_reads_a_param_too():
    import bcast

    (f,) = bcast.lint(str(HERE / "batch.param"), inputs=["in0=2,3,4", "in1=3,4"])
    assert (f.kind, f.target, f.op_type) == ("unsupported", "ncnn", "BinaryOp MUL")
    with pytest.raises(InputError, match="the target of a .param is ncnn"):
        bcast.lint(str(HERE / "batch.param"), target="openvino")


def test_a_model_ncnn_cannot_run_is_linted_all_the_same(tmp_path):
    """Hand-edited: a MemoryData of 10^17 floats (the child's allocation fails: it dies or
    returns nothing) and a BinaryOp on it; lint says so and derives the shapes."""
    p = tmp_path / "huge_edited.param"
    p.write_text("7767517\n3 3\nInput in0 0 1 in0\nMemoryData m 0 1 m 0=100000 1=100000 2=10000000\n"
                 "BinaryOp add 2 1 in0 m out 0=0\n", encoding="utf-8")
    (tmp_path / "huge_edited.bin").write_bytes(b"")
    report = lint_param(p, ["in0=2,3"])
    assert "ncnn not run" in report.shapes_from or not HAS_NCNN
    (f,) = report.findings
    assert (f.kind, f.input_shapes) == ("unsupported", ((2, 3), (10000000, 100000, 100000)))


def test_mutated_params_give_a_finding_or_one_line(tmp_path):
    """Hand-edited by a seeded mutator: tokens dropped, doubled, swapped, numbers made odd; without ncnn's
    run (fast): lint answers or refuses with one InputError line, never a traceback."""
    import random

    rng = random.Random(20)
    seeds = [(HERE / f"{m}.param").read_text(encoding="utf-8").split("\n")
             for m in ("bias", "chain_edited", "hint_edited", "row_scale")]
    odd = ["-1", "0", "-233", "99999999999", "1.5", "1e9", "x", "=", "-23330=1,1", "-23330=4,3,0,-2,5", "", "\x00"]
    for _ in range(300):
        lines = [ln.split(" ") for ln in rng.choice(seeds)]
        for _ in range(rng.randint(1, 3)):
            ln = rng.choice(lines)
            if not ln:
                continue
            k = rng.randrange(len(ln))
            action = rng.randrange(4)
            if action == 0:
                del ln[k]
            elif action == 1:
                ln.insert(k, ln[k])
            elif action == 2:
                ln[k] = rng.choice(odd)
            else:
                j = rng.randrange(len(ln))
                ln[k], ln[j] = ln[j], ln[k]
        p = tmp_path / "m.param"
        p.write_text("\n".join(" ".join(ln) for ln in lines), encoding="utf-8")
        try:
            lint_param(p, run_ncnn=False)
        except InputError as e:
            assert "\n" not in str(e)


def test_string_params_as_pnnx_writes_them(tmp_path):
    """pnnx writes a Reshape's shape expression as a string param (``6="0w,-1"``, ncnn's ParamDict type 7): 10
    of the 120 conversion-corpus models have one (attention_qk, gelu_tanh_export, linear_stem, ...). The text is
    such a file, cut down (edited)."""
    text = ("7767517\n3 3\nInput in0 0 1 in0\nReshape reshape_0 1 1 in0 1 0=-1 6=\"0w,-1\"\n"
            "BinaryOp add_0 2 1 in0 1 out0 0=0\n")
    path = tmp_path / "edited_string.ncnn.param"
    path.write_text(text)
    _, layers = read_param(str(path))
    assert layers[1].params[6] == "0w,-1"
    lint_param(str(path), ["in0=4,3"], run_ncnn=False)  # a report, not an error
    bad = tmp_path / "edited_bad_string.ncnn.param"
    bad.write_text(text.replace('6="0w,-1"', '6="0w,-1'))
    with pytest.raises(InputError, match="a string param"):
        read_param(str(bad))

