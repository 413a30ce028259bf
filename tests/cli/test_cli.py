"""The command line: output, --json fields, exit codes, one-line errors."""

import io
import json
import subprocess
import sys

import pytest

from bcast.cli import main


def run(*argv):
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_shape_ok():
    assert run("shape", "2,3,4,5", "5") == (0, "(2,3,4,5)\n")


def test_shape_syntaxes_agree():
    for a, b in [("2,3,4", "3,4"), ("[2,3,4]", "[3,4]"), ("2x3x4", "3x4"), ("(2, 3, 4)", "4")]:
        code, text = run("shape", a, b)
        assert code == 0 and text == "(2,3,4)\n"


def test_shape_scalar():
    assert run("shape", "[]", "scalar") == (0, "()\n")


def test_shape_not_broadcastable_exit_1():
    code, text = run("shape", "2,3", "4")
    assert code == 1
    assert text.startswith("numpy: cannot broadcast A (2,3) with B (4,): axis -1 (A axis 1, B axis 0): 3 vs 4")


def test_shape_json_fields():
    code, text = run("shape", "2,3", "3", "--json")
    d = json.loads(text)
    assert code == 0
    assert {"rule", "inputs", "ok", "shape", "error"} <= set(d)
    assert d["rule"] == "numpy" and d["ok"] is True and d["shape"] == [2, 3] and d["error"] is None
    assert d["inputs"] == [[2, 3], [3]]


def test_shape_json_error_fields():
    code, text = run("shape", "2,3", "4", "--json")
    d = json.loads(text)
    assert code == 1
    assert d["ok"] is False and d["shape"] is None
    err = d["error"]
    assert {"axis", "from_right", "dims", "reason"} <= set(err)
    assert err["axis"] == [1, 0] and err["from_right"] == -1 and err["dims"] == [3, 4]
    assert err["operands"] == ["A", "B"]


def test_rule_attributes_from_the_command_line():
    assert run("shape", "2,3,4,5", "3,4", "--rule", "pdpd", "--axis", "1") == (0, "(2,3,4,5)\n")
    assert run("shape", "16", "1,16,50,50", "--rule", "explicit", "--axes-mapping", "1") == (0, "(1,16,50,50)\n")
    assert run("shape", "4,3", "5,4", "--rule", "onnx-gemm", "--trans-a", "--trans-b") == (0, "(3,5)\n")
    assert run("shape", "2,3,4,5", "3,4", "--rule", "onnx-legacy", "--broadcast", "1", "--axis", "1")[0] == 0
    assert run("shape", "1,3", "2,3", "3", "--rule", "openvino-select", "--auto-broadcast", "none")[0] == 1


def test_ncnn_order_round_trip():
    # ncnn notation in, ncnn notation out
    assert run("shape", "[4,3,2]", "[3,2]", "--rule", "ncnn", "--ncnn-order") == (0, "[4,3,2]\n")
    d = json.loads(run("shape", "[4,3,2]", "[3,2]", "--rule", "ncnn", "--ncnn-order", "--json")[1])
    assert d["shape"] == [4, 3, 2] and d["numpy"]["shape"] == [2, 3, 4]


def test_explain_table():
    code, text = run("explain", "8,1,6,1", "7,1,5")
    assert code == 0
    assert "out          8   7   6   5" in text
    assert "1*" in text and "stretched" in text


def test_explain_failure_marks_the_column():
    code, text = run("explain", "2,3", "4")
    assert code == 1
    lines = text.splitlines()
    caret = next(line for line in lines if line.strip() == "^")
    b_row = next(line for line in lines if line.strip().startswith("B "))
    assert caret.index("^") == b_row.rstrip().index("4")


def test_explain_shows_deviations():
    code, text = run("explain", "2,3", "3,1", "--rule", "pdpd", "--axis", "1")
    assert code == 0 and "openvino-pdpd-trailing-ones" in text
    code, text = run("explain", "2,3,4", "3,4", "--rule", "ncnn")
    assert code == 1 and "ncnn-garbage" in text and "(3,4,4)" in text


def test_compare_one_row_per_rule():
    import bcast

    code, text = run("compare", "2,3,4,5", "3,4")
    assert code == 0  # a report: no rule broadcasts these without an axis, and that is the answer
    rows = text.split("\n\n")[1].splitlines()[1:]
    assert [r.split()[0] for r in rows] == list(bcast.RULES)
    assert all(len(r.split()) >= 2 for r in rows)


def test_compare_with_axis_and_json():
    code, text = run("compare", "2,3,4,5", "3,4", "--axis", "1", "--json")
    d = json.loads(text)
    assert code == 0
    by_rule = {r["rule"]: r for r in d["rules"]}
    assert by_rule["pdpd"]["shape"] == [2, 3, 4, 5]
    assert by_rule["numpy"]["ok"] is False and by_rule["numpy"]["error"]["dims"] == [5, 4]
    assert by_rule["explicit"]["ok"] is None and "axes-mapping" in by_rule["explicit"]["note"]
    assert by_rule["onnx-legacy"]["attrs"] == {"broadcast": 1, "axis": 1}
    assert any(f["id"] == "onnx-version-converter-axis" for f in d["deviations"])


def test_compare_three_shapes():
    code, text = run("compare", "1,3", "2,1", "3")
    assert code == 0
    assert "openvino-select" in text and "(2,3)" in text


@pytest.mark.parametrize("argv", [
    ["shape", "2,-1", "3"],
    ["shape", "2,,3"],
    ["shape", "2,3", "3", "--rule", "nope"],
    ["shape", "2,3", "3", "--axis", "1"],
    ["shape", "2,3", "3", "--rule", "explicit"],
    ["shape", "2,3", "3", "--rule", "pdpd", "--axis", "x"],
    ["shape", "2,3", "3", "--rule", "explicit", "--axes-mapping", "a"],
    ["shape", "N-1,3", "3"],
    ["shape", "2,3", "3", "--policy", "lax"],
    ["shape"],
    ["explain", "2,3", "3", "4", "--rule", "pdpd"],
    ["compare", "2x"],
    ["compare", "2,3", "--axes-mapping", "q"],
    ["frobnicate"],
])
def test_usage_errors_exit_2_with_one_line(argv, capsys):
    try:
        code = main(argv, out=io.StringIO())
    except SystemExit as exit_:  # argparse's own errors, through our one-line error()
        code = exit_.code
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


def test_rules_and_deviations_listings():
    code, text = run("rules")
    assert code == 0 and "openvino-broadcast-pdpd" in text and "--axes-mapping" in text
    code, text = run("deviations", "--json")
    assert code == 0 and len(json.loads(text)) >= 6


def test_console_script_and_help():
    exe = [sys.executable, "-m", "bcast"]
    r = subprocess.run(exe + ["--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "compare" in r.stdout
    r = subprocess.run(exe + ["shape", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "examples:" in r.stdout and "exit status" in r.stdout
    r = subprocess.run(exe + ["shape", "2,-1"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = subprocess.run(exe + ["compare", "2,3,4,5", "3,4"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "ncnn" in r.stdout


def test_closed_pipe_is_quiet():
    # `bcast deviations | head -1`: no traceback, no "Exception ignored" noise
    p = subprocess.Popen([sys.executable, "-m", "bcast", "deviations"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=60)
    assert b"Traceback" not in err and b"Exception ignored" not in err, err
    assert p.returncode in (0, 141)


def test_compare_python_api():
    import bcast

    d = bcast.compare("2,3", [3], (1, 1))
    assert d["inputs"] == [[2, 3], [3], [1, 1]]
    rows = {r["rule"]: r for r in d["rules"]}
    assert rows["numpy"]["shape"] == [2, 3] and rows["pdpd"]["ok"] is None
    with pytest.raises(bcast.InputError):
        bcast.compare("2,,3")


# Without an optional dependency a command says which extra to install: one line, exit 2, no traceback.
_BLOCKED = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # as if not installed: importing it raises ImportError
from bcast.cli import main
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize("blocked, argv, extra", [
    (("onnx",), ["lint", "examples/legacy_add.onnx"], "bcast[onnx]"),
    (("onnx",), ["rewrite", "examples/legacy_add.onnx", "--target", "onnx", "-o", "never-written.onnx"], "bcast[onnx]"),
    (("hypothesis",), ["conformance"], "bcast[hypothesis]"),
])
def test_missing_optional_dependency_is_one_line(blocked, argv, extra, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    argv = [str(root / a) if a.startswith("examples/") else a for a in argv]
    r = subprocess.run([sys.executable, "-c", _BLOCKED.format(blocked=blocked, argv=argv)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"bcast {argv[0]}: error: ") and extra in r.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written
