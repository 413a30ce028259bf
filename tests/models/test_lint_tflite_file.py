"""``bcast lint model.tflite`` (bcast.models.tflite_model): proven on files nobody here wrote, onnx2tf
1.29.24's conversions of the corpus (tests/models/onnx2tf_corpus), every one of which LiteRT runs, and on
models written with bcast's own flatbuffer writer (marked: edited) that LiteRT refuses or dies on."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

from bcast import InputError
from bcast.models.tflite_model import lint_tflite, lint_tflite_report

HERE = pathlib.Path(__file__).parent
CONVERTED = sorted((HERE / "onnx2tf_corpus").glob("*.tflite"))


def test_onnx2tfs_models_have_no_finding_and_litert_runs_each():
    pytest.importorskip("ai_edge_litert")
    from ai_edge_litert.interpreter import Interpreter

    assert len(CONVERTED) == 103
    checked = 0
    for path in CONVERTED:
        report = lint_tflite_report(path)
        assert report.findings == [], (path.name, report.findings)
        checked += report.checked
        it = Interpreter(model_path=str(path))
        it.allocate_tensors()  # LiteRT takes the model: no broadcast it refuses
    assert checked == 148  # the broadcasting operators in them (ADD, MUL, SUB, DIV, MAXIMUM, ...)


def _edited(tmp_path, op, shapes, out_shape, name):
    """A one-op model written by bcast's writer (edited: shapes chosen to be refused)."""
    oracle = pytest.importorskip("bcast.frameworks.tflite.oracle")
    pytest.importorskip("flatbuffers")
    inputs = tuple((f"in{i}", s, "bool" if op == "SELECT_V2" and i == 0 else "float32") for i, s in enumerate(shapes))
    content = oracle.graph(inputs, ((op, tuple(n for n, _, _ in inputs), "out", None),), ("out", out_shape, "float32"))
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(content)
    return path


# op, input shapes, output shape, lint's kind, what LiteRT does
EDITED = [
    ("ADD", ((2, 3), (4,)), (2, 3), "invalid", "refuses"),
    ("SUB", ((2, 1, 3), (4, 1)), (2, 4, 3), None, "runs"),
    ("MAXIMUM", ((5, 4), (4,)), (5, 4), None, "runs"),
    ("SELECT_V2", ((2, 1), (1, 3), (2, 3)), (2, 3), None, "runs"),
    ("DIV", ((3, 2), (3,)), (3, 2), "invalid", "refuses"),
]


@pytest.mark.parametrize("op,shapes,out,kind,litert", EDITED)
def test_edited_models_lint_as_litert_does(tmp_path, op, shapes, out, kind, litert):
    path = _edited(tmp_path, op, shapes, out, f"edited_{op.lower()}")
    found = lint_tflite(path)
    assert [f.kind for f in found] == ([kind] if kind else [])
    pytest.importorskip("ai_edge_litert")
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=str(path))
    try:
        it.allocate_tensors()
        ran = "runs"
    except (RuntimeError, ValueError):
        ran = "refuses"
    assert ran == litert


def test_past_rank_8_the_interpreter_dies_and_lint_says_so(tmp_path):
    path = _edited(tmp_path, "SUB", ((2,) * 9, (1,) * 8 + (2,)), (2,) * 9, "edited_rank9")
    found = lint_tflite(path)
    assert [f.kind for f in found] == ["unsupported"]
    assert any(n.deviation.id == "tflite-rank-abort" for n in found[0].deviations)


@pytest.mark.parametrize("content,why", [
    (b"", "0 bytes"), (b"\x00" * 16, "no TFL3 identifier"), (b"\x08\x00\x00\x00TFL3" + b"\xff" * 8, "past the end"),
    (b"\x10\x00\x00\x00TFL3" + b"\x00" * 4, "past the end"),
])
def test_damaged_files_are_one_line(tmp_path, content, why):
    path = tmp_path / "bad.tflite"
    path.write_bytes(content)
    with pytest.raises(InputError, match=why):
        lint_tflite(path)


def test_every_truncation_and_bit_flip_of_a_real_model_is_a_report_or_one_line():
    source = CONVERTED[0].read_bytes()
    rng = np.random.default_rng(0)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.tflite")
        for k in range(300):
            data = bytearray(source)
            if k % 2:
                data = data[:int(rng.integers(0, len(data)))]
            else:
                for _ in range(int(rng.integers(1, 8))):
                    data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
            with open(path, "wb") as f:
                f.write(data)
            try:
                lint_tflite_report(path)
            except InputError as e:
                assert "\n" not in str(e)


def test_not_a_regular_file_is_refused_before_reading(tmp_path):
    fifo = tmp_path / "m.tflite"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        lint_tflite(fifo)


def test_cli(tmp_path, capsys):
    from bcast.cli import main

    assert main(["lint", str(CONVERTED[0])]) == 0
    assert "TFLite model, schema version 3" in capsys.readouterr().out
    bad = _edited(tmp_path, "ADD", ((2, 3), (4,)), (2, 3), "edited_add")
    assert main(["lint", str(bad), "--json"]) == 1
    assert '"kind": "invalid"' in capsys.readouterr().out
    assert main(["lint", str(bad), "--target", "onnx"]) == 2
    assert "linted for target tflite only" in capsys.readouterr().err
