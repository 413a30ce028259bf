"""Framework knowledge stays out of the core, the rules' machinery and the views: a rule registers its
notation and declares what the views say of it; the ncnn rule is a pure function of its Ctx."""

import ast
import dataclasses
import pathlib
import pickle
import re

import pytest

import bcast
from bcast import BroadcastError, infer
from bcast.core._format import Notation, _NOTATIONS, format_shape, lookup_notation, register_notation
from bcast.frameworks import names as framework_names
from bcast.rules import RULES
from bcast.rules._base import Ctx, check_attrs, check_inputs
from bcast.rules.ncnn import NCNN

SRC = pathlib.Path(bcast.__file__).resolve().parent


def _strings(path: pathlib.Path) -> list[str]:
    """The string constants of a module that are not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs]


@pytest.mark.parametrize("module", ["errors", "plan", "_format", "shapes", "dims"])
def test_the_core_names_no_framework(module):
    said = [s for s in _strings(SRC / "core" / f"{module}.py")
            if any(re.search(rf"\b{name}", s) for name in framework_names())]
    assert said == []


@pytest.mark.parametrize("path", sorted((SRC / "views").glob("*.py")), ids=lambda p: p.name)
def test_the_views_name_no_rule(path):
    assert [s for s in _strings(path) if s in RULES and s != "numpy"] == []  # numpy: the default rule


def test_a_notation_is_a_hook_the_core_applies():
    rev = register_notation(Notation("test-rev", "[y,x]", ("x", "yx")))
    try:
        err = BroadcastError("r", ((2, 3), (2, 4)), ("A", "B"), "why", operands=(0, 1), axes=(1, 1),
                             from_right=-1, dims=(3, 4), out_rank=2, notation="test-rev")
        assert str(err) == "r: cannot broadcast A [3,2] with B [4,2]: axis x (A x, B x): 3 vs 4; why"
        assert str(pickle.loads(pickle.dumps(err))) == str(err)
        assert lookup_notation("test-rev") is rev and lookup_notation("numpy") is None
    finally:
        del _NOTATIONS["test-rev"]


def test_ncnn_registers_its_notation_and_plans_carry_its_name():
    assert lookup_notation("ncnn") is NCNN and NCNN.shape((4, 3, 2)) == "[2,3,4]" and NCNN.axis(3, 0) == "c"
    p = infer([2, 3, 4], [3, 4], rule="ncnn", ncnn_order=True)
    assert p.notation == "ncnn" and p.inputs == ((4, 3, 2), (4, 3))
    assert p.to_dict()["ncnn"] == {"inputs": [[2, 3, 4], [3, 4]], "shape": [2, 3, 4]}
    assert infer((4, 3, 2), (4, 3), rule="ncnn").notation == "numpy"
    assert bcast.result_shape([2, 3, 4], [3, 4], rule="ncnn", ncnn_order=True) == (2, 3, 4)
    assert "in ncnn's [w,h,d,c] order: A [2,3,4], B [3,4] -> [2,3,4]" in p.explain()
    with pytest.raises(BroadcastError, match=r"A \[2,3,4\] with B \[4,3\]: axis h \(A h, B w\)") as e:
        infer([2, 3, 4], [4, 3], rule="ncnn", ncnn_order=True)
    assert e.value.notation == "ncnn"


@pytest.mark.parametrize("shapes, attrs", [
    (((2, 3, 4), (3, 4)), {"ncnn_order": True}),
    (((1, 3, 4, 4), (1, 3, 1, 1)), {"ncnn_batch": "drop"}),
    (((1, 3, 4, 4), (1, 5, 1, 1)), {"ncnn_batch": "drop"}),
    ((("N", 3, 4), (3, 4)), {}),
])
def test_the_ncnn_rule_changes_nothing_in_its_ctx(shapes, attrs):
    rule = RULES["ncnn"]
    checked, names = check_inputs(rule, shapes, None)
    ctx = Ctx(rule.name, checked, names, check_attrs(rule, attrs))
    kept = [f.name for f in dataclasses.fields(ctx) if f.name not in ("constraints", "_recorded")]  # accumulators
    before = {name: getattr(ctx, name) for name in kept}
    try:
        rule.func(ctx)
    except BroadcastError:
        pass
    assert {f: getattr(ctx, f) for f in before} == before


def test_the_ncnn_rules_message_names_no_runtime_version():
    with pytest.raises(BroadcastError) as e:
        infer((0, 3), (3,), rule="ncnn")
    assert "mishandles an empty blob" in str(e.value) and not re.search(r"\d+\.\d+\.\d+", str(e.value))


def test_what_the_views_say_of_a_rule_is_declared_by_it():
    assert RULES["ncnn"].path and f"path: {RULES['ncnn'].path}" in infer((2, 3), (2, 3), rule="ncnn").explain()
    assert not RULES["numpy"].path and "path:" not in infer((2, 3), (3,)).explain()
    assert "B axis 0 (dim 4) is contracted (Gemm's K)" in infer((3, 4), (4, 5), rule="onnx-gemm").explain()
    rows = {r["rule"]: r for r in bcast.compare((1, 3, 4, 4), (1, 3, 1, 1), axis=1)["rules"]}
    assert rows["onnx-legacy"]["attrs"] == {"axis": 1, "broadcast": 1}
    assert rows["ncnn"]["attrs"] == {"ncnn_batch": "keep"} and "--ncnn-batch drop" in rows["ncnn"]["note"]


def test_format_shape_is_numpys():
    assert (format_shape((2, 3)), format_shape((4,)), format_shape(())) == ("(2,3)", "(4,)", "()")
