"""Deviation records about one op alone (``only_ops``) in ``bcast shape|explain|compare --framework F --op OP``
and the views behind them: they bear where the op is named, in any spelling the framework takes, and stay silent
by rule (no op).  Was: the command line asked ``notes_for(plan)`` without the op, so ``--framework mnn --op Greater``
never showed mnn-compare-bits, nor ``--framework onnx --op Mean`` reference-mean-in-place."""

import contextlib
import io
import json

import pytest

from bcast.cli import main
from bcast.core.errors import BroadcastError
from bcast.core.shapes import parse_shape
from bcast.frameworks import op_name, plan as plan_op
from bcast.views.comparison import compare, compare_ops
from bcast.views.explain import explain_error, explain_plan


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(list(argv), out=out)
    return code, out.getvalue(), err.getvalue()


#: (framework, op as asked, the table's spelling, shapes, the same asked by rule, the op's record: or None where
#: the record's condition does not hold on these shapes)
CASES = [
    ("mnn", "Greater", "GREATER", ["4,1", "1,8"], ["--rule", "numpy", "--max-rank", "9"], "mnn-compare-bits"),
    ("mnn", "GREATER", "GREATER", ["2,3", "3"], ["--rule", "numpy", "--max-rank", "9"], None),  # one stretched
    ("mnn", "less", "LESS", ["2,3", "2,3"], ["--rule", "numpy", "--max-rank", "9"], "mnn-less-bits"),
    ("mnn", "select", "SELECT", ["2,3", "2,3", "2,1"], ["--rule", "numpy", "--max-rank", "9"], "mnn-select-y"),
    ("mnn", "ADD", "ADD", ["4,1", "1,8"], ["--rule", "numpy", "--max-rank", "9"], None),
    ("onnx", "Mean", "Mean", ["2,1", "4,2,1"], ["--rule", "numpy"], "reference-mean-in-place"),
    ("onnx", "Add", "Add", ["2,1", "4,2,1"], ["--rule", "numpy"], None),
    ("tflite", "SELECT_V2", "SELECT_V2", ["1,1", "1", "()"], ["--rule", "numpy", "--max-rank", "5"],
     "tflite-select-one-element"),
]


def _ids(found):
    return [f["id"] for f in found]


@pytest.mark.parametrize("fw, asked, spelt, shapes, by_rule, record", CASES)
def test_the_cli_shows_the_records_about_the_op(fw, asked, spelt, shapes, by_rule, record):
    assert op_name(fw, asked) == spelt
    code, out, _ = _run("shape", *shapes, "--framework", fw, "--op", asked, "--json")
    d = json.loads(out)
    assert d["op"] == asked and (record in _ids(d["deviations"])) == (record is not None)
    by_rule_json = json.loads(_run("shape", *shapes, *by_rule, "--json")[1])
    assert record is None or record not in _ids(by_rule_json["deviations"])  # by rule: no op, the record is silent
    _, text, _ = _run("explain", *shapes, "--framework", fw, "--op", asked)
    assert (f"[{record}]" in text) == (record is not None)
    assert record is None or f"[{record}]" not in _run("explain", *shapes, *by_rule)[1]
    for argv in (["--op", asked], []):  # one op's row, or every op's
        _, out, _ = _run("compare", *shapes, "--framework", fw, *argv, "--json")
        about = [f for f in json.loads(out)["deviations"] if f["id"] == record]
        assert (record is not None) == bool(about)
        assert record is None or [asked if argv else spelt] in [f["ops"] for f in about]  # as its row names it


def test_an_op_the_framework_does_not_take_is_refused_as_before():
    """op_name reads case only: MNN spells it NOTEQUAL, so not_equal is a bad request (exit 2, one line)."""
    assert op_name("mnn", "not_equal") == "not_equal" and op_name("onnx", "mean") == "Mean"
    code, out, err = _run("shape", "4,1", "1,8", "--framework", "mnn", "--op", "not_equal")
    assert (code, out) == (2, "") and "unknown op 'not_equal'" in err and err.count("\n") == 1
    code, out, err = _run("compare", "2,1", "4,2,1", "--framework", "onnx", "--op", "mean")  # onnx: case matters
    assert (code, out) == (2, "") and "unknown op 'mean'" in err


@pytest.mark.parametrize("fw, asked, spelt, shapes, by_rule, record", CASES)
def test_the_views_take_the_op(fw, asked, spelt, shapes, by_rule, record):
    dims = [parse_shape(s) for s in shapes]
    result = plan_op(fw, spelt, *dims)  # each case broadcasts (the errors' path: test_an_error_names_the_op...)
    with_op, without = explain_plan(result, op=spelt), explain_plan(result)
    assert (f"[{record}]" in with_op) == (record is not None) and (record is None or f"[{record}]" not in without)
    assert (record in _ids(compare_ops(fw, *dims, op=asked)["deviations"])) == (record is not None)


def test_an_error_names_the_op_to_its_records_too():
    """A refused query: a record about the op alone bears on the error as on a plan (MNN dies on rank 10 under
    any op; ncnn's DIV-only record needs a plan, so an error shows the rule's records only, op or not)."""
    with pytest.raises(BroadcastError) as caught:
        plan_op("mnn", "GREATER", (1,) * 10, (2,))
    assert "[mnn-rank-crash]" in explain_error(caught.value, op="GREATER")
    code, out, _ = _run("explain", "1,1,1,1,1,1,1,1,1,1", "2", "--framework", "mnn", "--op", "Greater")
    assert code == 1 and "[mnn-rank-crash]" in out


def test_compare_shows_a_framework_rows_records_once():
    """Each framework's row in ``bcast compare`` is its element-wise op: its records bear (MNN's ADD cannot read
    an empty output), each said once, under the rule's row where that has said the same."""
    data = compare((0, 3), (1, 3))
    (mnn,) = [f for f in data["deviations"] if f["id"] == "mnn-empty-output"]
    assert (mnn["framework"], mnn["ops"], mnn["rule"]) == ("mnn", ["ADD"], "numpy")
    by_rule = {(f["id"], f["note"]) for f in data["deviations"] if "framework" not in f}
    by_framework = [(f["id"], f["note"]) for f in data["deviations"] if "framework" in f]
    assert len(by_framework) == len(set(by_framework)) and not by_rule & set(by_framework)
    assert not [f for f in data["deviations"] if "framework" in f and f["id"] == "ncnn-empty-blob"]  # the ncnn row's
    code, out, _ = _run("compare", "0,3", "1,3")
    assert code == 0 and "  - mnn ADD (numpy): MNN (PyPI wheel, x86-64 CPU) " in out and "[mnn-empty-output]" in out
