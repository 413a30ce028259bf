"""One convention for the streams and exit status of every command (README "Commands").

stdout: the answer, and when it is no the reason (exit 1), with no ``error:`` prefix;
stderr: only a bad invocation, exactly one line ``bcast COMMAND: error: ...``, stdout empty,
exit 2.  Every subcommand's --help has a description and an exit-status line, wrapped to the
terminal's width.
"""

import contextlib
import io
import pathlib

import pytest

from bcast.conformance import matrix as conformance
from bcast.cli import build_parser, main

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMMANDS = ("shape", "explain", "compare", "translate", "lint", "rewrite", "conformance", "rules", "deviations")


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv, out=out)
        except SystemExit as e:  # argparse: --help, a usage error
            code = e.code
    return code, out.getvalue(), err.getvalue()


def test_every_command_is_covered():
    sub = build_parser()._subparsers._group_actions[0]
    assert tuple(sub.choices) == COMMANDS


# A "no" answer: exit 1, the reason on stdout, stderr empty, no `error:` anywhere.
NO = {
    "shape": (["2,3", "4"], "numpy: cannot broadcast A (2,3) with B (4,): axis -1"),
    "explain": (["2,3", "4"], "\nnot broadcastable: axis -1 (A axis 1, B axis 0): 3 vs 4\n"),
    "translate": (["2,3,4,5,6", "6", "--to", "ncnn"], "cannot translate numpy A (2,3,4,5,6), B (6,) to ncnn"),
    "lint": (["examples/legacy_add.onnx"], "1 finding"),
    "rewrite": (["examples/legacy_add.onnx", "--target", "ncnn", "-o", "{tmp}/out.onnx"], "1 finding left"),
    "conformance": (["--rules", "none", "--runtimes", "reference", "--cases", "4"], "UNEXPLAINED ("),
}


@pytest.mark.parametrize("command", sorted(NO))
def test_a_no_answer_is_on_stdout_exit_1(command, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(conformance, "notes_for", lambda *a, **k: [])  # conformance: an empty registry
    args, reason = NO[command]
    code, out, err = _run([command, *[a.format(tmp=tmp_path) for a in args]])
    assert (code, err) == (1, ""), (code, err)
    assert reason in out and "error:" not in out, out


# A bad invocation: exit 2, one line `bcast COMMAND: error: ...` on stderr, nothing on stdout.
BAD = {
    "shape": [["2,,3"], ["2,3", "3", "--trans-a"], ["2", "--rule", "nope"], ["--bogus", "2"], []],
    "explain": [["2,,3"], ["2,3", "3", "--axis", "1"], ["2", "--axis", "x"]],
    "compare": [["2,,3"], ["2", "--bogus"], []],
    "translate": [["2,3", "3", "--to", "onnx", "--op", "Foo"], ["2", "3"], ["2", "3", "--to", "onnx", "--trans-b"]],
    "lint": [["no-such-model.onnx"], ["examples/legacy_add.onnx", "--target", "tpu"]],
    "rewrite": [["examples/legacy_add.onnx", "--target", "onnx", "-o", "examples/legacy_add.onnx"], []],
    "conformance": [["--rules", "nope"], ["--cases", "x"], ["--html", ""]],
    "rules": [["--bogus"], ["extra"]],
    "deviations": [["--bogus"]],
}


@pytest.mark.parametrize("command, args", [(c, a) for c in COMMANDS for a in BAD[c]])
def test_a_bad_invocation_is_one_line_on_stderr_exit_2(command, args, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, err = _run([command, *args])
    assert (code, out) == (2, ""), (code, out, err)
    assert err.count("\n") == 1 and err.startswith(f"bcast {command}: error: "), err


def test_bare_bcast_is_a_usage_error_like_any_other():
    """Was: the whole help on stdout, then the error line."""
    code, out, err = _run([])
    assert (code, out) == (2, "")
    assert err.startswith("bcast: error: name a COMMAND: shape, explain, compare") and err.count("\n") == 1


def test_compare_is_a_report_exit_0():
    code, out, err = _run(["compare", "2,3", "4"])
    assert (code, err) == (0, "") and "numpy " in out


@pytest.mark.parametrize("argv, message", [
    (["shape", "2,3", "3", "--trans-a"],
     "--trans-a does not apply to rule numpy (its options: --max-rank)"),
    (["shape", "2,3", "3", "--trans-a", "--trans-b"], "--trans-a, --trans-b do not apply to rule numpy"),
    (["shape", "2", "3", "--rule", "pdpd", "--trans-a"], "--trans-a does not apply to rule pdpd (its options: --axis)"),
    (["shape", "2", "3", "--rule", "explicit"], "explicit: --axes-mapping is required"),
    (["translate", "2", "3", "--to", "onnx", "--rule", "explicit", "--axes-mapping", "x"],
     "explicit: --axes-mapping must be a list of integers"),
])
def test_options_are_named_as_typed(argv, message):
    """Was: 'numpy has no attribute 'transA'', the Python attribute instead of the flag."""
    code, out, err = _run(argv)
    assert code == 2 and message in err and "transA" not in err, err


@pytest.mark.parametrize("command", ("",) + COMMANDS)
def test_help_has_a_description_an_exit_status_and_fits(command, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = _run([command, "--help"] if command else ["--help"])
    assert code == 0 and err == ""
    usage, description = out.split("\n\n")[:2]
    assert usage.startswith("usage: bcast") and not description.startswith(("options:", "positional")), out
    assert "\nexit status: " in out, out
    assert max(len(line) for line in out.splitlines()) <= 80, out
    if command == "rewrite":
        assert "--target {onnx,ncnn}\n" not in out  # the option has its help


def test_rewrite_to_stdout_is_refused_not_a_file_named_dash(tmp_path, monkeypatch):
    """Was: `-o -` wrote the model to a file named '-' in the current folder, exit 0."""
    model = ROOT / "examples" / "legacy_add.onnx"
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(["rewrite", str(model), "--target", "onnx", "-o", "-"])
    assert (code, out) == (2, "") and err.startswith("bcast rewrite: error: -o -: ") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("width", (80, 100))
@pytest.mark.parametrize("command", ("",) + COMMANDS)
def test_help_prose_is_reflowed_and_examples_stay_whole(command, width, monkeypatch):
    """Was: each source line wrapped on its own ('...the versions it was proven on, the' / 'version
    installed, and ...'), and examples cut mid-command ('--cases' / '200')."""
    import re
    import shlex

    monkeypatch.setenv("COLUMNS", str(width))
    code, out, err = _run([command, "--help"] if command else ["--help"])
    lines = out.splitlines()
    parser = build_parser()
    for i, line in enumerate(lines):
        assert len(line) <= width, line
        if line.startswith("  bcast "):  # an example: a whole command the parser takes
            example = re.split(r"\s{2,}", line.strip())[0].split(" > ")[0]
            parser.parse_args(shlex.split(example)[1:])
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if (not line or line.startswith((" ", "usage:")) or line.endswith(":") or not following.strip()
                or following.startswith(("exit status:", "rules:"))):  # a label starts a new paragraph
            continue
        if not following.startswith(" ") or (following.startswith("  ") and following[2] != " "
                                             and line.startswith(("exit status:", "rules:"))):
            # the next line continues this paragraph: its first word did not fit here (argparse keeps 2 columns)
            assert len(line) + 1 + len(following.split()[0]) > width - 2, (line, following)


@pytest.mark.parametrize("command", ("shape", "explain", "compare", "translate", "rules", "deviations"))
def test_every_help_example_runs_and_says_when_it_exits_1(command, monkeypatch):
    """Was: `bcast shape [4,3,2] [4,3] --rule ncnn --ncnn-order`, an example that exits 1 unannounced."""
    import re
    import shlex

    monkeypatch.chdir(ROOT)
    epilog = build_parser()._subparsers._group_actions[0].choices[command].epilog
    for line in epilog.splitlines():
        if line.startswith("  bcast ") and "--check" not in line:
            example, comment = (re.split(r"\s{2,}", line.strip(), maxsplit=1) + [""])[:2]
            code, out, err = _run(shlex.split(example)[1:])
            assert code in (0, 1) and out, (example, err)
            assert (code == 1) == ("exit 1" in comment), (example, code, comment)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_argument_has_help(command):
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    for action in sub._actions:
        assert action.help, (command, action.dest)


def test_compare_says_what_the_ncnn_row_assumes_of_the_batch_axis():
    """Was: the ncnn row read NCHW's batch axis as an ncnn axis, silently: (3,3,224,224)."""
    code, out, _ = _run(["compare", "1,3,224,224", "3,1,1"])
    row = next(line for line in out.splitlines() if line.startswith("ncnn "))
    assert row.startswith("ncnn [ncnn_batch=keep]") and "(3,3,224,224)" in row
    assert "axis 0 read as an ncnn axis; --ncnn-batch drop if it is a batch a converter drops" in row
    code, out, _ = _run(["compare", "1,3,224,224", "3,1,1", "--ncnn-batch", "drop"])
    row = next(line for line in out.splitlines() if line.startswith("ncnn "))
    assert row.split()[:4] == ["ncnn", "[ncnn_batch=drop]", "(1,3,224,224)", "same"], row
    code, out, _ = _run(["compare", "2,3,4", "3,4", "--json"])
    import json

    row = next(r for r in json.loads(out)["rules"] if r["rule"] == "ncnn")
    assert row["attrs"] == {"ncnn_batch": "keep"} and "batch" not in row["note"]  # no leading 1: no hint


def test_ncnn_batch_drop_in_shape_explain_and_python():
    import bcast

    plan = bcast.infer((1, 3, 224, 224), (3, 1, 1), rule="ncnn", ncnn_batch="drop")
    assert plan.shape == (1, 3, 224, 224) and plan.axis_maps == ((0, 1, 2, 3), (1, 2, 3))
    assert bcast.result_shape((1, 3, 224, 224), (3, 1, 1), rule="ncnn") == (3, 3, 224, 224)  # keep: blobs
    assert bcast.infer((1, 2, 3, 4, 5), (1, 2, 3, 4, 5), rule="ncnn", ncnn_batch="drop").shape == (1, 2, 3, 4, 5)
    assert [str(c) for c in bcast.infer("N,3,4,4", "3,1,1", rule="ncnn", ncnn_batch="drop").constraints] == [
        "N == 1"]
    with pytest.raises(bcast.BroadcastError, match="batch axis is 2: a converter .* drops only a batch of 1") as e:
        bcast.infer((2, 3, 4, 4), (3, 1, 1), rule="ncnn", ncnn_batch="drop")
    assert e.value.kind == "unsupported"
    with pytest.raises(bcast.BroadcastError, match=r"reading B \(4,5\) as \(4,5,1\).*on the blobs A \(3,4,5\)"):
        bcast.infer((1, 3, 4, 5), (4, 5), rule="ncnn", ncnn_batch="drop")
    # an unnamed open dim is named by its own axis in the input, not the blob's
    assert [str(c) for c in bcast.infer("1,?,4", "3,1", rule="ncnn", ncnn_batch="drop").constraints] == [
        "A[1] != 0", "A[1] ∈ {1, 3}"]
    with pytest.raises(bcast.BroadcastError) as e:  # the error shows the shapes as given, and says which rank
        bcast.infer((1, 2, 3, 4, 5, 6), (5, 6), rule="ncnn", ncnn_batch="drop")
    assert e.value.shapes[0] == (1, 2, 3, 4, 5, 6) and "A has rank 5 without its batch axis" in str(e.value)
    with pytest.raises(bcast.InputError, match="ncnn_order"):
        bcast.infer([4, 3], [4, 3], rule="ncnn", ncnn_order=True, ncnn_batch="drop")
    assert _run(["shape", "1,3,224,224", "3,1,1", "--rule", "ncnn", "--ncnn-batch", "drop"])[:2] == (
        0, "(1,3,224,224)\n")
    code, out, _ = _run(["explain", "1,3,224,224", "3,1,1", "--rule", "ncnn", "--ncnn-batch", "drop"])
    assert code == 0 and "alignment: same rank, batch axis dropped" in out


def test_ncnn_rows_say_which_conversion_path_they_describe():
    """compare and explain say that the ncnn rule is a raw BinaryOp's (onnx2ncnn, a hand-written .param), and that
    pnnx, which inserts the reshapes, computes numpy's answer (issue: one ncnn target mixed both converters)."""
    import io

    from bcast.cli import main

    for argv in (["compare", "2,3,4", "3,4"], ["explain", "2,3,4", "3,4", "--rule", "ncnn"],
                 ["explain", "2,3,4", "4", "--rule", "ncnn"]):
        out = io.StringIO()
        main(argv, out=out)
        text = out.getvalue()
        assert "raw BinaryOp" in text and "onnx2ncnn" in text and "pnnx inserts the reshapes" in text, argv
    out = io.StringIO()
    main(["compare", "2,3,4", "3,4", "5"], out=out)  # the ncnn row is n/a (3 shapes): no such line
    assert "pnnx inserts" not in out.getvalue()
