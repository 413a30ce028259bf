"""The command line by framework and op: ``bcast shape|explain|compare --framework F --op OP``."""

import contextlib
import io
import json

import pytest

from bcast.cli import main
from bcast.frameworks import names


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(list(argv), out=out)
        except SystemExit as e:  # argparse: a bad --framework choice, --help
            code = e.code
    return code, out.getvalue(), err.getvalue()


#: (shapes and framework options, the same asked by rule): the same answer, but for the deviations shown, which by
#: op are those about that op (test_cli_op_records.py)
SAME = [
    (["2,3,4,5", "3,4", "--framework", "onnx", "--op", "Add"], ["2,3,4,5", "3,4"]),
    (["2,3,4,5", "3,4", "--framework", "onnx", "--op", "Add", "--opset", "6", "--broadcast", "1", "--axis", "2"],
     ["2,3,4,5", "3,4", "--rule", "onnx-legacy", "--broadcast", "1", "--axis", "2"]),
    (["4,3", "5,3", "--framework", "onnx", "--op", "Gemm", "--trans-b"],
     ["4,3", "5,3", "--rule", "onnx-gemm", "--trans-b"]),
    (["4,3,2", "4,3", "--framework", "ncnn", "--op", "ADD"], ["4,3,2", "4,3", "--rule", "ncnn"]),
    (["2,3,4", "3,4", "--framework", "ncnn", "--op", "mul"], ["2,3,4", "3,4", "--rule", "ncnn"]),
    (["[4,3,2]", "[4,3]", "--framework", "ncnn", "--op", "ADD", "--ncnn-order"],
     ["[4,3,2]", "[4,3]", "--rule", "ncnn", "--ncnn-order"]),
    (["2,3", "2", "--framework", "openvino", "--op", "Add", "--auto-broadcast", "pdpd", "--axis", "0"],
     ["2,3", "2", "--rule", "pdpd", "--axis", "0"]),
    (["1,3,4,4", "3", "--framework", "openvino", "--op", "PRelu"], ["1,3,4,4", "3", "--rule", "openvino-prelu"]),
    (["4,1", "1,8", "--framework", "mnn", "--op", "GREATER"], ["4,1", "1,8", "--rule", "numpy", "--max-rank", "9"]),
    (["1,1,1,1,1,2", "2", "--framework", "coreml", "--op", "add"],
     ["1,1,1,1,1,2", "2", "--rule", "numpy", "--max-rank", "5"]),
]


@pytest.mark.parametrize("command", ["shape", "explain"])
@pytest.mark.parametrize("by_op, by_rule", SAME)
def test_by_framework_and_op_is_the_output_by_rule(command, by_op, by_rule):
    code, out, err = _run(command, *by_op)
    head = "\nruntimes that deviate from the spec here:\n"
    assert (code, out.split(head)[0], err) == (lambda c, o, e: (c, o.split(head)[0], e))(*_run(command, *by_rule))
    assert code in (0, 1) and out and not err


@pytest.mark.parametrize("by_op, by_rule", SAME)
def test_json_gains_framework_and_op(by_op, by_rule):
    code, out, _ = _run("shape", *by_op, "--json")
    d = json.loads(out)
    fw, op = by_op[by_op.index("--framework") + 1], by_op[by_op.index("--op") + 1]
    assert (d.pop("framework"), d.pop("op")) == (fw, op)
    d.pop("deviations")
    assert (code, d) == (lambda c, o, e: (c, {k: v for k, v in json.loads(o).items() if k != "deviations"}))(
        *_run("shape", *by_rule, "--json"))


@pytest.mark.parametrize("argv, says", [
    (["--framework", "nosuch", "--op", "Add"], "invalid choice: 'nosuch' (choose from 'onnx', 'openvino', 'ncnn', "),
    (["--framework", "ncnn"], "--framework ncnn needs --op, one of: ADD, SUB, MUL"),
    (["--framework", "ncnn", "--op", "NOPE"], "or a name (ADD, SUB, MUL"),
    (["--framework", "onnx", "--op", "add"], "the ops are: Add, Sub"),
    (["--framework", "openvino", "--op", "add"], "did you mean Add?"),
    (["--op", "Add"], "--op needs --framework, one of: onnx, openvino, ncnn, tflite"),
    (["--opset", "7"], "--opset needs --framework"),
    (["--framework", "onnx", "--op", "Add", "--rule", "numpy"], "--rule does not apply with --framework"),
    (["--framework", "onnx", "--op", "Add", "--names", "x,y"], "--names does not apply with --framework"),
    (["--framework", "onnx", "--op", "Add", "--policy", "strict"], "--policy strict does not apply"),
    (["--framework", "ncnn", "--op", "ADD", "--ncnn-batch", "drop"], "no attribute ncnn_batch"),
    (["--framework", "openvino", "--op", "Add", "--auto-broadcast", "pdpd", "--trans-a"], "unknown attribute transA"),
])
@pytest.mark.parametrize("command", ["shape", "explain", "compare"])
def test_bad_framework_or_op_is_one_line_exit_2(command, argv, says):
    if command == "compare" and argv[-2:] in (["--rule", "numpy"], ["--names", "x,y"], ["--policy", "strict"]):
        return  # compare has no --rule, --names or --policy
    if command == "compare" and argv == ["--framework", "ncnn"]:
        return  # compare --framework alone compares every op
    code, out, err = _run(command, "2,3", "3", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"bcast {command}: error: ") and says in err, err


@pytest.mark.parametrize("name", names())
def test_compare_by_framework_has_a_row_per_op(name):
    from bcast.frameworks import framework

    code, out, err = _run("compare", "2,3", "3", "--framework", name, "--json")
    d = json.loads(out)
    assert code == 0 and not err
    assert [r["op"] for r in d["rules"]] == list(framework(name).ops())
    for r in d["rules"]:
        assert r["framework"] == name and set(r) >= {"rule", "attrs", "ok", "shape", "error", "note"}
        assert (r["rule"] is None) == (r["ok"] is None)
    code, text, _ = _run("compare", "2,3", "3", "--framework", name)
    assert code == 0 and f"{framework(name).ops()[0]} (" in text


def test_compare_one_op():
    code, out, _ = _run("compare", "2,3,4", "3,4", "--framework", "ncnn", "--op", "ADD", "--json")
    rows = json.loads(out)["rules"]
    assert code == 0 and [(r["op"], r["rule"], r["ok"]) for r in rows] == [("ADD", "ncnn", False)]


@pytest.mark.parametrize("command", ["shape", "explain", "compare"])
def test_help_names_the_frameworks(command):
    code, out, _ = _run(command, "--help")
    assert code == 0 and "--framework" in out and "--op" in out
    assert all(name in out for name in names())


def test_an_answer_by_framework_shows_that_frameworks_records_only():
    """``shape``/``explain --framework F`` keep the records of F's own runtimes (as ``compare --framework``):
    onnxruntime's PRelu records for onnx's PRelu, none for WebNN's expand, which no runtime here runs."""
    code, out, _ = _run("explain", "8,1,6,1", "7,1,5", "--framework", "onnx", "--op", "PRelu")
    assert "onnxruntime-prelu-bidirectional" in out
    for argv in (["explain", "2,3", "1,3"], ["shape", "2,3", "1,3", "--json"]):
        code, out, _ = _run(*argv, "--framework", "webnn", "--op", "expand")
        assert "onnxruntime" not in out and "openvino" not in out, out
    code, out, _ = _run("shape", "8,1,6,1", "7,1,5", "--rule", "unidirectional", "--json")
    assert "onnxruntime-prelu-bidirectional" in out  # by rule: every record


#: torch's and Paddle's expand / broadcast_to from the command line: a -1 in the sizes (the second shape) keeps the
#: tensor's dim, as torch.Tensor.expand(-1, 4) does; (argv, exit status, what it prints)
SIZES = [
    (["3,1", "[-1,4]", "--framework", "torch", "--op", "expand"], 0, "(3,4)"),
    (["3,1", "--", "-1,4"], 0, "(3,4)"),  # (shapes after --: a leading '-' is not an option; the framework below)
    (["3,1", "2,-1,4", "--framework", "paddle", "--op", "broadcast_to"], 0, "(2,3,4)"),
    (["3,1", "2,-1,4", "--framework", "torch", "--op", "broadcast_to"], 0, "(2,3,4)"),
    # torch refuses a -1 on a new leading axis, and any other negative size
    (["3,1", "[-1,3,4]", "--framework", "torch", "--op", "expand"], 2, "-1 is not allowed at axis 0"),
    (["3,1", "[-2,4]", "--framework", "torch", "--op", "expand"], 2, "dim -2 is negative"),
    # only the sizes take -1: the tensor's shape, and every other op's shapes, refuse it
    (["[-1,4]", "3,1", "--framework", "torch", "--op", "expand"], 2, "write ? for an unknown dim"),
    (["3,1", "[-1,4]", "--framework", "torch", "--op", "add"], 2, "write ? for an unknown dim"),
    (["3,1", "[-1,4]"], 2, "write ? for an unknown dim"),
]


@pytest.mark.parametrize(("argv", "code", "text"), SIZES)
def test_expand_sizes_take_minus_one(argv, code, text):
    if "--" in argv:
        argv = ["--framework", "torch", "--op", "expand", *argv]
    got, out, err = _run("shape", *argv)
    assert (got, text in (out if code == 0 else err)) == (code, True), (out, err)


def test_expand_json_inputs_follow_their_names():
    """By op, ``--json``'s inputs are the plan's, in the order of its names: torch's expand plans (size, self),
    its -1 resolved.  Was: the shapes as written beside the plan's names, so size read (3,1) and self (-1,4)."""
    code, out, _ = _run("shape", "3,1", "[-1,4]", "--framework", "torch", "--op", "expand", "--json")
    d = json.loads(out)
    assert (code, dict(zip(d["names"], d["inputs"])), d["shape"]) == (0, {"size": [3, 4], "self": [3, 1]}, [3, 4])
