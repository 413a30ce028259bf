"""Fuzz: the command line, with argv from a grammar (commands, shapes, options, values, garbage)
and argv of random tokens.

The invariant (README "Commands"): exit status 0, 1 or 2, never a traceback; on 2 stderr is
exactly one line ``bcast[ COMMAND]: error: ...`` and stdout is empty (a bare ``bcast`` too);
on 1 the reason is on stdout (the result of the command: "not broadcastable", "no recipe")
and stderr is empty; ``--json`` output always parses, with the documented fields;
the shape ``bcast shape`` prints reads back as a shape.  ``bcast.cli.main`` runs in-process;
a few real ``python -m bcast`` runs at the end check the same through the interpreter's streams.
"""

import contextlib
import io
import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bcast.cli import build_parser
from bcast.rules import RULES
from bcast.core.shapes import parse_shape
from support.cli import run_cli
from support.fuzz_harness import fuzz
from support.fuzz_inputs import dim_tokens, shape_texts

COMMANDS = ("shape", "explain", "compare", "translate", "rules", "deviations")
FILE_COMMANDS = ("lint", "rewrite", "conformance")  # read files or run runtimes: fuzzed elsewhere

SHAPE_JSON = {"rule", "attrs", "inputs", "names", "ok", "shape", "error", "deviations"}
ERROR_JSON = {"kind", "operands", "axis", "from_right", "dims", "reason", "message"}
COMPARE_JSON = {"inputs", "rules", "deviations"}
COMPARE_ROW = {"rule", "attrs", "ok", "shape", "error", "note"}
TRANSLATE_JSON = {"target", "rule", "attrs", "inputs", "names", "op", "ok", "feeds", "shape", "steps", "text",
                  "avoided", "error"}
RULES_JSON = {"rule", "inputs", "attrs", "framework", "summary", "source"}

USAGE_LINE = re.compile(r"bcast( [a-z]+)?: error: \S")

_garbage = st.one_of(
    st.sampled_from(["--", "-", "-x", "--bogus", "--json=1", "--axis=1", "--ax", "--r", "-h", "--help", "--version",
                     "--rule=pdpd", "--to=onnx", "--js", "", " ", "\n", "2,3\n4", "\u2028", "\x00", "é", "\udcff"]),
    st.text(max_size=8),
)
_values = {
    "--rule": st.sampled_from(sorted(RULES) + ["NUMPY", "", "foo", "-1"]),
    "--axis": st.sampled_from(["0", "1", "-1", "-2", "5", "99", str(2**63), "1" * 5000, "x", "1.0", "", " 1", "١"]),
    "--axes-mapping": st.sampled_from(["1", "0,1", "1,0", "1,1", "[1,2]", "(0,)", "-1", "", "x", "1,,2", "1" * 5000,
                                       str(2**63), "0,1,2,3,4,5"]),
    "--broadcast": st.sampled_from(["0", "1", "2", "x", "-1", "True"]),
    "--auto-broadcast": st.sampled_from(["numpy", "pdpd", "none", "NUMPY", "explicit", ""]),
    "--names": st.sampled_from(["A,B", "a,b,c", "x", "", ",", "data,target", "é,ü", "a b,c", "\udcff,b"]),
    "--policy": st.sampled_from(["permissive", "strict", "Strict", ""]),
    "--to": st.sampled_from(["numpy", "onnx", "openvino", "ncnn", "tflite", ""]),
    "--op": st.sampled_from(["Add", "Sub", "Mul", "Where", "PRelu", "Gemm", "Expand", "MUL", "Subtract", "Foo", ""]),
}
_switches = ("--ncnn-order", "--trans-a", "--trans-b", "--json", "--json")


@st.composite
def grammar_argv(draw) -> list:
    """A command, its shapes, options with values of every kind, and now and then garbage."""
    command = draw(st.sampled_from(COMMANDS + ("shape", "explain", "compare", "translate")))
    argv = [command]
    if command in ("rules", "deviations"):
        argv += draw(st.lists(st.sampled_from(["--json", "--json"]) | _garbage, max_size=2))
        return argv
    argv += draw(st.lists(shape_texts() | dim_tokens, min_size=0, max_size=4))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 9))
        if kind <= 5:
            flag = draw(st.sampled_from(sorted(_values)))
            argv += [flag, draw(_values[flag])]
        elif kind <= 7:
            argv.append(draw(st.sampled_from(_switches)))
        else:
            argv.append(draw(_garbage))
    if command == "translate" and "--to" not in argv and draw(st.integers(0, 4)):
        argv += ["--to", draw(_values["--to"])]
    if draw(st.integers(0, 2)):
        argv.append("--json")
    return argv


def _json_mode(argv: list) -> bool:
    """Whether argparse reads ``--json`` in argv (it also takes an abbreviation such as ``--js``)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return bool(getattr(build_parser().parse_args(argv), "json", False))
        except SystemExit:
            return False


def check_json(command: str, code: int, data) -> None:
    if command in ("shape", "explain"):
        assert SHAPE_JSON <= set(data), set(data)
        assert data["ok"] is (code == 0)
        if data["ok"]:
            assert {"axis_maps", "stretched"} <= set(data) and data["error"] is None
        else:
            assert data["shape"] is None and ERROR_JSON <= set(data["error"])
    elif command == "compare":
        assert code == 0 and COMPARE_JSON <= set(data)
        assert all(COMPARE_ROW <= set(row) for row in data["rules"])
    elif command == "translate":
        assert TRANSLATE_JSON <= set(data), set(data)
        assert data["ok"] is (code == 0) and (data["error"] is None) is data["ok"]
    elif command == "rules":
        assert all(RULES_JSON <= set(row) for row in data)
    else:
        assert isinstance(data, list) and all(isinstance(row, dict) for row in data)


def check_cli(argv: list) -> None:
    if argv and argv[0] in FILE_COMMANDS:
        return
    code, out, err = run_cli(*argv)
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err and "Traceback" not in out
    if code == 2:
        assert len(err.splitlines()) == 1 and err.endswith("\n"), err
        assert USAGE_LINE.match(err), err
        assert out == "", out
        return
    if code == 1:
        assert err == "" and out, (out, err)
    if any(a in ("-h", "--help", "--version") for a in argv) or not out:
        return
    command = argv[0]
    if _json_mode(argv):
        check_json(command, code, json.loads(out))
    elif command == "shape" and code == 0:
        parse_shape(out.splitlines()[0])  # the result reads back as a shape
    elif command == "shape":
        assert len(out.splitlines()) == 1 and ": cannot broadcast " in out and not out.startswith("error"), out


@given(argv=grammar_argv())
@example(argv=["shape", "1" * 5000])  # was: ValueError (int() of more than 4300 digits), a traceback
@example(argv=["shape", "2..٣"])  # was: an interval of non-ASCII digits that parsed
@example(argv=["compare", "2,3", "3", "--axes-mapping", "1" * 5000])
@example(argv=["shape", "2", "--names", "a b,c", "--json"])
@example(argv=["rules", "a\nb"])  # argparse's "unrecognized arguments" copies the token as it is
@example(argv=[])
@fuzz("cli argv (grammar)", examples=250)
def test_cli_grammar(argv):
    check_cli(argv)


@given(argv=st.lists(st.sampled_from(COMMANDS) | _garbage | shape_texts() | st.sampled_from(sorted(_values)),
                     max_size=6))
@fuzz("cli argv (random tokens)", examples=150)
def test_cli_random_tokens(argv):
    check_cli(argv)


SUBPROCESS_CASES = [
    (["shape", "2,3", "3"], None),
    (["shape", "2,3", "4"], None),
    (["shape", "1" * 5000], None),
    (["shape", "N,3", "5,1"], "ascii"),  # was: UnicodeEncodeError, a traceback (the constraint's ∈)
    (["explain", "N,3", "5,1"], "cp1252"),  # a Windows console
    (["explain", "2,3", "4", "--names", "\udcff,b"], "utf-8"),  # was: a traceback (a name of bytes not UTF-8)
    (["compare", "N,3", "1..4", "--json"], None),
    (["translate", "2,3", "3,1", "--rule", "pdpd", "--axis", "1", "--to", "openvino"], None),
    (["rules", "a\nb"], None),
    (["shape", "--axis"], None),
    ([], None),
]


@pytest.mark.parametrize("argv, encoding", SUBPROCESS_CASES,
                         ids=lambda a: " ".join(a)[:40].encode("unicode_escape").decode() if isinstance(a, list) else a)
def test_cli_subprocess(argv, encoding):
    """The same invariant through a real interpreter's streams (encodings, exit status)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    if encoding:
        env["PYTHONIOENCODING"] = encoding
    r = subprocess.run([sys.executable, "-m", "bcast", *argv], capture_output=True, env=env, timeout=60)
    err = r.stderr.decode("utf-8", "backslashreplace")
    assert r.returncode in (0, 1, 2) and "Traceback" not in err, err
    if r.returncode == 2:
        assert len(err.splitlines()) == 1 and USAGE_LINE.match(err), err
    else:
        assert r.stdout
