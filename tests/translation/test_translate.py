"""bcast.translate: recipes executed on the real targets equal the source rule's result.

Random cases of every rule (fixed seeds; shapes drawn so that they broadcast
under the source rule; random float32 values) are translated to every target;
each recipe runs on its real runtime (the numpy expression evaluated, the ONNX
model in onnxruntime, the OpenVINO model on the CPU plugin, the ncnn .param in
ncnn), all cases of one target in one model, and its output must equal numpy
on the source plan's aligned views.  Fixed cases show minimality and the
errors; the CLI has its own tests at the end.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import bcast
from bcast import BroadcastError, InputError, infer
from bcast.cli import main
from bcast.translation import OPS, TranslationError, model, run_many, translate
from support.cli import cli

CASES_PER_RULE = 48
BINARY_OPS = ("Add", "Sub", "Mul", "Div", "Max", "Min")

# --------------------------------------------------------------------------- random cases of every rule


def _pair(rng):
    """A base shape, A (the base, some dims 1) and B (a contiguous run of it, a suffix
    a third of the time, some dims 1, maybe a trailing 1; rarely a scalar), and where B starts."""
    base = tuple(int(d) for d in rng.integers(2, 5, rng.integers(1, 5)))
    a = tuple(d if rng.random() > 0.25 else 1 for d in base)
    start = int(rng.integers(0, len(base)))
    stop = len(base) if rng.random() < 0.35 else int(rng.integers(start + 1, len(base) + 1))
    b = tuple(d if rng.random() > 0.3 else 1 for d in base[start:stop])
    if rng.random() < 0.2:
        b += (1,)
    if rng.random() < 0.05:
        b = ()
    return base, a, b, start


def _axis(rng, start):
    return int(rng.choice([-1, start, start, rng.integers(-1, 4)]))


def _draw(rule, rng):
    """One (shapes, attrs) candidate for ``rule``; infer decides whether it is kept."""
    base, a, b, start = _pair(rng)
    if rule in ("numpy", "paddle", "ncnn", "none", "unidirectional") and rng.random() < 0.4:
        a, b = b, a
    if rule == "none":
        return (a, a), {}
    if rule in ("pdpd", "paddle"):
        return (a, b), {"axis": _axis(rng, start)}
    if rule == "onnx-legacy":
        return (base, b), {"broadcast": 1, "axis": None if rng.random() < 0.3 else _axis(rng, start)}
    if rule == "bidirectional":
        return (b, a), {}
    if rule == "explicit":
        return (b, base), {"axes_mapping": list(range(start, start + len(b)))}
    if rule == "openvino-broadcast-pdpd":
        return (b, base), {"axis": _axis(rng, start)}
    if rule == "openvino-select":
        cond = tuple(d if rng.random() > 0.3 else 1 for d in base[int(rng.integers(0, len(base) + 1)):])
        mode = str(rng.choice(["numpy", "pdpd", "none"]))
        shapes = (base, base, base) if mode == "none" else (cond, a if mode == "numpy" else base, b)
        return shapes, {"auto_broadcast": mode, "axis": _axis(rng, start) if mode == "pdpd" else -1}
    if rule == "tflite-select":  # x and y equal; the condition a scalar, x's first dim, or x's shape
        cond = ((), base[:1], base)[int(rng.integers(0, 3))]
        return (cond, base, base), {}
    if rule == "openvino-prelu":
        data = base if len(base) >= 2 else (2, 3)
        slope = (data[1],) if rng.random() < 0.4 else b
        return (data, slope), {}
    if rule == "onnx-gemm":
        m, k, n = (int(d) for d in rng.integers(1, 5, 3))
        ta, tb = bool(rng.random() < 0.3), bool(rng.random() < 0.3)
        c = [(), (1,), (n,), (1, n), (m, 1), (1, 1), (m, n), None][int(rng.integers(0, 8))]
        shapes = ((k, m) if ta else (m, k), (n, k) if tb else (k, n)) + (() if c is None else (c,))
        return shapes, {"transA": ta, "transB": tb}
    return (a, b), {}


def _cases(rule, seed, count=CASES_PER_RULE):
    rng = np.random.default_rng(seed)
    out, seen = [], set()
    for _ in range(5000):
        shapes, attrs = _draw(rule, rng)
        key = (shapes, repr(sorted(attrs.items())))
        if key in seen:
            continue
        seen.add(key)
        try:
            plan = infer(*shapes, rule=rule, **attrs)
        except BroadcastError:
            continue
        op = None if rule in ("openvino-select", "tflite-select", "openvino-prelu", "onnx-gemm", "bidirectional",
                              "explicit", "openvino-broadcast-pdpd") else BINARY_OPS[len(out) % len(BINARY_OPS)]
        out.append((plan, op))
        if len(out) == count:
            break
    assert len(out) == count, rule
    return out


ALL_CASES = [c for k, rule in enumerate(bcast.RULES) for c in _cases(rule, seed=k)]


def _inputs(plan, rng):
    """Random values for the plan's tensors (cond: bool; floats away from 0 for Div)."""
    n = 1 if plan.rule in ("bidirectional", "explicit", "openvino-broadcast-pdpd") else len(plan.inputs)
    xs = []
    for i in range(n):
        shape = plan.inputs[i]
        if plan.rule in ("openvino-select", "tflite-select") and i == 0:
            xs.append(rng.random(shape) < 0.5)
        else:
            x = rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
            xs.append(x.astype(np.float32))
    return xs


_NUMPY_OPS = {o.name: getattr(np, o.numpy) for o in OPS if o.kind == "binary"}


def _expected(plan, op, xs):
    """numpy on the source plan's aligned views: what the source rule computes."""
    def view(i):
        return np.broadcast_to(xs[i].reshape(plan.aligned_shape(i)), plan.shape)

    if plan.rule == "onnx-gemm":  # A and B are contracted, C broadcast
        a, b = xs[0], xs[1]
        ab = np.matmul(a.T if plan.attr("transA") else a, b.T if plan.attr("transB") else b)
        return ab + view(2) if len(xs) == 3 else ab
    views = [view(i) for i in range(len(xs))]
    if plan.rule in ("bidirectional", "explicit", "openvino-broadcast-pdpd"):
        return views[0]
    if plan.rule in ("openvino-select", "tflite-select"):
        return np.where(*views)
    if plan.rule == "openvino-prelu":
        return np.where(views[0] < 0, views[0] * views[1], views[0])
    return _NUMPY_OPS[op or "Add"](*views)


def _run_target(target):
    """Translate every case to ``target``, run them all in one model; (results, refused)."""
    rng = np.random.default_rng(7)
    recipes, inputs, expected, refused = [], [], [], []
    for plan, op in ALL_CASES:
        try:
            recipe = translate(plan, to=target, op=op)
        except TranslationError as e:
            refused.append((plan, e))
            continue
        xs = _inputs(plan, rng)
        recipes.append(recipe)
        inputs.append(xs)
        expected.append(_expected(plan, op, xs))
    return recipes, run_many(recipes, inputs), expected, refused


def _check(recipes, got, expected, rtol):
    bad = []
    for recipe, g, e in zip(recipes, got, expected):
        if g.shape != e.shape or not np.allclose(g, e, rtol=rtol, atol=1e-6):
            bad.append(f"{recipe.plan} -> {recipe.target}:\n{recipe.text()}")
    assert not bad, f"{len(bad)} of {len(recipes)} disagree; first:\n" + bad[0]


@pytest.mark.parametrize("target", ["numpy", "onnx"])
def test_recipes_run_right(target):
    pytest.importorskip("onnxruntime") if target == "onnx" else None
    recipes, got, expected, refused = _run_target(target)
    assert not refused, refused[0][1]
    assert len(recipes) == len(ALL_CASES)
    _check(recipes, got, expected, rtol=1e-5)


def test_onnx_recipes_pass_the_checker():
    onnx = pytest.importorskip("onnx")
    recipes = [translate(plan, to="onnx", op=op) for plan, op in ALL_CASES]
    onnx.checker.check_model(recipes[0].model(), full_check=True)
    onnx.checker.check_model(model(recipes), full_check=True)


def test_openvino_recipes_run_right():
    pytest.importorskip("openvino")
    recipes, got, expected, refused = _run_target("openvino")
    assert len(recipes) + len(refused) == len(ALL_CASES)
    assert len(recipes) >= 0.9 * len(ALL_CASES), [str(e) for _, e in refused[:3]]
    _check(recipes, got, expected, rtol=1e-5)


def test_ncnn_recipes_run_right():
    pytest.importorskip("ncnn")
    recipes, got, expected, refused = _run_target("ncnn")
    assert len(recipes) + len(refused) == len(ALL_CASES)
    _check(recipes, got, expected, rtol=1e-5)  # DIV: ncnn's fast math is within a few ulps
    why = {e.reason.split(":")[0] for _, e in refused}
    assert len(recipes) >= 100, why


def test_tflite_recipes_run_right():
    """Every recipe as a .tflite model (RESHAPE, then the op or BROADCAST_TO) in LiteRT's interpreter; TFLite has
    no form of PRelu and Gemm, and the one-element SELECT_V2 is avoided (deviation tflite-select-one-element)."""
    pytest.importorskip("ai_edge_litert")
    recipes, got, expected, refused = _run_target("tflite")
    assert len(recipes) + len(refused) == len(ALL_CASES)
    why = {e.reason.split(" (")[0] for _, e in refused}
    assert why <= {"TFLite has no builtin that broadcasts as PRelu does", "TFLite has no builtin that broadcasts "
                   "as Gemm does", "every form of Where on tflite hits a runtime deviation"}, why
    assert len(recipes) >= 0.8 * len(ALL_CASES), why
    _check(recipes, got, expected, rtol=1e-5)


_NO_FORM = {"tensorrt": {"Gemm"}, "tosa": {"PRelu", "Gemm"}, "stablehlo": {"PRelu", "Gemm"}}
_CASE_OP = {id(plan): op for plan, op in ALL_CASES}


def _no_form_only(target, refused):
    """The refused cases are those of the ops the target has no form of, each saying so."""
    from bcast.translation.ops import RULE_OP

    ops = {RULE_OP.get(plan.rule) for plan, _ in refused}
    assert ops <= _NO_FORM[target], [str(e) for _, e in refused]
    assert all("no recipe is written for it" in e.reason for _, e in refused), refused[0][1]


@pytest.mark.parametrize("target", ["tensorrt", "tosa"])
def test_equal_rank_recipes_run_right(target):
    """TensorRT and TOSA do not run here (TensorRT needs an NVIDIA GPU; tosa-tools' reference model pins numpy < 2.2,
    which the lock cannot take): every recipe runs step by step in bcast's model of the target (each layer or
    operator planned by the plug-in's equal-rank rule, which refuses operands of unequal rank), and the same
    graph (Reshape, then the ONNX op of each layer) runs in onnxruntime: both must give the source rule's result."""
    recipes, got, expected, refused = _run_target(target)
    assert len(recipes) + len(refused) == len(ALL_CASES) and len(recipes) >= 0.85 * len(ALL_CASES)
    _no_form_only(target, refused)
    _check(recipes, got, expected, rtol=1e-5)
    pytest.importorskip("onnxruntime")
    from bcast.translation.runtimes import run_onnx_equivalent

    rng = np.random.default_rng(8)
    inputs = [_inputs(r.plan, rng) for r in recipes]
    expected = [_expected(r.plan, _CASE_OP[id(r.plan)], xs) for r, xs in zip(recipes, inputs)]
    _check(recipes, run_onnx_equivalent(recipes, inputs), expected, rtol=1e-5)


def test_tosa_recipes_run_in_the_reference_model():
    """Where Arm's tosa-tools is installed (not in the lock: it pins numpy < 2.2; a venv of its own): every TOSA
    recipe's text, all in one function, validated by its tosa-opt (profile pro_fp, level 8K) and run by the TOSA
    reference model."""
    pytest.importorskip("tosa_reference_model")
    from bcast.translation.ops import RULE_OP
    from bcast.translation.runtimes import run_tosa_reference

    recipes = [translate(plan, to="tosa", op=op) for plan, op in ALL_CASES
               if RULE_OP.get(plan.rule) not in _NO_FORM["tosa"]]
    rng = np.random.default_rng(9)
    inputs = [_inputs(r.plan, rng) for r in recipes]
    expected = [_expected(r.plan, _CASE_OP[id(r.plan)], xs) for r, xs in zip(recipes, inputs)]
    _check(recipes, run_tosa_reference(recipes, inputs), expected, rtol=1e-5)


def test_stablehlo_recipes_run_right():
    """The recipes' StableHLO text itself, all in one module, compiled by XLA (jax's backend client) and run."""
    pytest.importorskip("jax")
    recipes, got, expected, refused = _run_target("stablehlo")
    assert len(recipes) + len(refused) == len(ALL_CASES) and len(recipes) >= 0.85 * len(ALL_CASES)
    _no_form_only("stablehlo", refused)
    _check(recipes, got, expected, rtol=1e-5)


# --------------------------------------------------------------------------- fixed cases: minimality


def _ops(recipe):
    return [s.op for s in recipe.steps]


@pytest.mark.parametrize("target, op", [("numpy", "add"), ("onnx", "Add"), ("openvino", "Add"), ("ncnn", "BinaryOp"),
                                        ("tflite", "ADD")])
def test_numpy_rule_is_just_the_op(target, op):
    """A pair numpy's rule and the target's own broadcasting agree on needs nothing but the op."""
    for a, b in [((2, 3, 4), (4,)), ((8, 1, 6, 1), (7, 1, 5)), ((3, 1), (1, 3)), ((2, 3), (2, 3))]:
        plan = infer(a, b)
        if target == "ncnn" and len(a) != len(b) and len(b) > 1:
            continue  # ncnn aligns a lower rank B of rank >= 2 to the LEADING axes: not the op alone
        assert _ops(translate(plan, to=target)) == [op], (a, b)


@pytest.mark.parametrize("plan, target, text", [
    (infer((2, 3, 4, 5), (3, 4), rule="paddle", axis=1), "numpy", "np.add(a, b.reshape(3, 4, 1))"),
    (infer((2, 3, 4), (3,), rule="onnx-legacy", broadcast=1, axis=1), "numpy", "np.add(a, b.reshape(3, 1))"),
    (infer((4, 3, 2), (4, 3), rule="ncnn"), "numpy", "np.add(a, b.reshape(4, 3, 1))"),
    (infer((2, 3), (3, 1), rule="pdpd", axis=1), "numpy", "np.add(a, b.reshape(3))"),
    (infer((3, 1), (2, 1, 6), rule="bidirectional"), "numpy", "np.broadcast_to(data, (2, 3, 6))"),
    (infer((16,), (1, 16, 50, 50), rule="explicit", axes_mapping=[1]), "numpy",
     "np.broadcast_to(data.reshape(16, 1, 1), (1, 16, 50, 50))"),
    (infer((1, 3, 2, 3), (3,), rule="openvino-prelu"), "numpy",
     "np.where(data < 0, data * slope.reshape(3, 1, 1), data)"),
    (infer((3,), (2, 3, 4), (3, 4), rule="openvino-select", auto_broadcast="pdpd", axis=1), "numpy",
     "np.where(cond.reshape(3, 1), then, else_)"),
    (infer((4, 3), (4, 5), rule="onnx-gemm", transA=True), "numpy", "np.matmul(a.T, b)"),
    (infer("N,3,4", "3", rule="paddle", axis=1), "numpy", "np.add(a, b.reshape(3, 1))"),
    (infer("N,3,4", "M", rule="paddle", axis=0), "numpy", "np.add(a, np.expand_dims(b, (1, 2)))"),
])
def test_fixed_recipes(plan, target, text):
    assert translate(plan, to=target).text() == text


def test_onnx_unsqueeze_takes_axes_as_an_input():
    recipe = translate(infer((2, 3, 4, 5), (3, 4), rule="paddle", axis=1), to="onnx")
    assert _ops(recipe) == ["Unsqueeze", "Add"]
    assert recipe.steps[0].attr("axes") == (2,)
    assert "b_1 = Unsqueeze (b, b_1_axes)" in recipe.text() and "int64[1] b_1_axes = {2}" in recipe.text()


def test_openvino_keeps_pdpd_unless_a_deviation_applies():
    plan = infer((2, 3, 4, 5), (3, 4), rule="pdpd", axis=1)
    add = translate(plan, to="openvino")
    assert _ops(add) == ["Add"] and add.steps[0].attrs == (("auto_broadcast", "pdpd"), ("axis", 1))
    sub = translate(plan, to="openvino", op="Subtract")  # the CPU plugin ignores Subtract's pdpd axis
    assert _ops(sub) == ["Unsqueeze", "Subtract"] and dict(sub.steps[1].attrs)["auto_broadcast"] == "numpy"
    assert [f.deviation.id for f in sub.avoided] == ["openvino-cpu-pdpd-ops"]
    trailing = translate(infer((2, 3), (3, 1), rule="pdpd", axis=1), to="openvino")
    assert _ops(trailing) == ["Reshape", "Add"]
    assert [f.deviation.id for f in trailing.avoided] == ["openvino-pdpd-trailing-ones"]


def test_ncnn_reshapes_as_pnnx_does():
    """A lower-rank B gets 1s PREPENDED (numpy's alignment made explicit); same rank needs nothing."""
    recipe = translate(infer((2, 3, 4, 5), (4, 5)), to="ncnn")
    assert recipe.text().splitlines()[:2] == ["7767517", "4 4"]
    assert recipe.steps[0].op == "Reshape" and recipe.steps[0].attrs == (("0", 5), ("1", 4), ("11", 1), ("2", 1))
    assert _ops(translate(infer((4, 3, 2), (4, 3), rule="ncnn"), to="ncnn")) == ["BinaryOp"]  # its own rule
    assert _ops(translate(infer((4, 3, 2), (2,)), to="ncnn")) == ["BinaryOp"]  # the outer-axis rule is numpy's
    tie = translate(infer((2, 2), (2,)), to="ncnn")  # ncnn would put B on the first axis
    assert _ops(tie) == ["Reshape", "BinaryOp"] and tie.steps[0].attrs == (("0", 2), ("1", 1))


@pytest.mark.parametrize("name, target, expected", [
    ("Sub", "openvino", "Subtract"), ("subtract", "onnx", "Sub"), ("MUL", "ncnn", "MUL"),
    ("Maximum", "numpy", "maximum"),
])
def test_op_names_of_any_framework(name, target, expected):
    assert translate(infer((2, 3), (3,)), to=target, op=name).op == expected


def test_op_table_matches_the_frameworks_tables():
    from bcast.frameworks.ncnn import ops as ncnn
    from bcast.frameworks.onnx import ops as onnx
    from bcast.frameworks.openvino import ops as openvino

    for o in OPS:
        assert o.onnx in onnx.ops(), o
        if o.openvino != "MatMul":
            assert o.openvino in openvino.OPS, o
        if o.ncnn is not None:
            assert ncnn.op(o.ncnn_name).code == o.ncnn, o
        if o.kind == "binary":
            assert callable(getattr(np, o.numpy)), o


# --------------------------------------------------------------------------- symbolic dims


def test_symbolic_dims_where_no_value_is_needed():
    plan = infer("N,3,4", "3", rule="onnx-legacy", broadcast=1, axis=1)
    recipe = translate(plan, to="onnx")
    assert _ops(recipe) == ["Unsqueeze", "Add"] and "float[N,3,4] a" in recipe.text()
    onnx = pytest.importorskip("onnx")
    onnx.checker.check_model(recipe.model(), full_check=True)
    ort = pytest.importorskip("onnxruntime")  # noqa: F841
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((5, 3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    np.testing.assert_array_equal(recipe.run(a, b), a + b[:, None])
    assert _ops(translate(plan, to="openvino")) == ["Unsqueeze", "Add"]


def test_symbolic_dims_where_a_value_is_needed():
    with pytest.raises(TranslationError, match=r"B \(N,1\) must be reshaped to \(N,\), which needs static dims"):
        translate(infer("2,N", "N,1", rule="pdpd", axis=1), to="onnx")
    with pytest.raises(TranslationError, match=r"Expand takes the shape \(N,1,6\) as values, and it has open dims"):
        translate(infer("3,1", "N,1,6", rule="bidirectional"), to="onnx")


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("plan, target, match", [
    (infer((2, 3, 4, 5, 6), (6,)), "ncnn", "the output has rank 5: an ncnn blob has rank 1 to 4"),
    (infer((2, 3), ()), "ncnn", r"B is a scalar \(rank 0\): ncnn has no rank-0 blob"),
    (infer((1, 3), (2, 3), (3,), rule="openvino-select"), "ncnn", "a 3-input op has no ncnn form"),
    (infer((3, 1), (2, 1, 6), rule="bidirectional"), "ncnn", "ncnn has no broadcast-to op"),
    (infer((1, 3, 2, 2), (3,), rule="openvino-prelu"), "ncnn", "slope as a weight"),
    (infer((2, 3), (3, 4), rule="onnx-gemm"), "ncnn", "Gemm is a matrix product"),
    (infer((0, 3), (3,)), "ncnn", "0-size dim"),
    (infer((), (), rule="bidirectional"), "openvino", "openvino-cpu-scalar-to-scalar"),
    (infer((3, 0), (3, 0), rule="bidirectional"), "openvino", "openvino-broadcast-empty-data"),
])
def test_no_recipe_says_why(plan, target, match):
    with pytest.raises(TranslationError, match=match) as info:
        translate(plan, to=target)
    assert info.value.target == target and info.value.rule == plan.rule
    assert info.value.to_dict()["kind"] == "untranslatable" and str(info.value).startswith("cannot translate")


@pytest.mark.parametrize("source, to, op, match", [
    ((infer((2, 3), (3,)),), "caffe", None,
     "unknown target 'caffe'; the targets are: numpy, onnx, openvino, ncnn, tflite, tensorrt"),
    (((2, 3), (3,)), "caffe", None, "unknown target 'caffe'"),  # shapes, as infer takes them
    ((infer((2, 3), (3,)),), "onnx", "Foo", "unknown op 'Foo'"),
    ((infer((2, 3), (3,)),), "onnx", "Where", r"Where takes 3 inputs; the plan has 2 \(A, B\)"),
    ((infer((2, 3), (3,), rule="pdpd"),), "onnx", "PRelu", "PRelu broadcasts by the rules"),
    ((infer((3,), (2, 3), rule="bidirectional"),), "onnx", "Add", "rule bidirectional is the op Expand, not Add"),
    ((infer((2, 3), (3,)),), "onnx", "Expand", "Expand is the op of the rules bidirectional"),
])
def test_bad_requests_are_input_errors(source, to, op, match):
    with pytest.raises(InputError, match=match):
        translate(*source, to=to, op=op)


def test_three_inputs_default_to_where():
    assert translate(infer((2, 3), (3,), (3,)), to="onnx").op == "Where"
    with pytest.raises(InputError, match=r"Add takes 2 inputs; the plan has 4"):
        translate(infer((2, 3), (3,), (3,), (1,)), to="onnx")


def test_translation_error_pickles():
    import pickle

    with pytest.raises(TranslationError) as info:
        translate(infer((2, 3), ()), to="ncnn")
    back = pickle.loads(pickle.dumps(info.value))
    assert str(back) == str(info.value) and back.reason == info.value.reason


# --------------------------------------------------------------------------- CLI and JSON


def test_cli_prints_the_recipe():
    code, text = cli("translate", "2,3,4,5", "3,4", "--rule", "paddle", "--axis", "1", "--to", "numpy")
    assert (code, text) == (0, "np.add(a, b.reshape(3, 4, 1))\n")
    code, text = cli("translate", "[2,3,4]", "[3,4]", "--rule", "ncnn", "--ncnn-order", "--to", "numpy", "--op", "Mul")
    assert (code, text) == (0, "np.multiply(a, b.reshape(4, 3, 1))\n")  # recipes are in numpy order


def test_cli_errors():
    assert cli("translate", "2,3", "4", "--to", "onnx") == (
        1, "numpy: cannot broadcast A (2,3) with B (4,): axis -1 (A axis 1, B axis 0): 3 vs 4; "
           "dims must be equal or one of them 1\n")
    code, text = cli("translate", "2,3,4,5,6", "6", "--to", "ncnn")
    assert code == 1 and text.startswith("cannot translate numpy A (2,3,4,5,6), B (6,) to ncnn: the output")
    assert len(text.splitlines()) == 1


def test_cli_usage_errors(capsys):
    with pytest.raises(SystemExit) as info:
        main(["translate", "2,3", "3", "--to", "caffe"])
    assert info.value.code == 2 and "invalid choice: 'caffe'" in capsys.readouterr().err
    assert main(["translate", "2,3", "3", "--to", "onnx", "--op", "Foo"]) == 2
    assert capsys.readouterr().err.startswith("bcast translate: error: translate: unknown op 'Foo'")


def test_json_of_a_recipe():
    code, text = cli("translate", "2,3,4,5", "3,4", "--rule", "paddle", "--axis", "1", "--to", "onnx", "--json")
    d = json.loads(text)
    assert code == 0 and d["ok"] is True and d["error"] is None
    assert (d["target"], d["rule"], d["attrs"], d["op"]) == ("onnx", "paddle", {"axis": 1, "start_axis": 1}, "Add")
    assert d["inputs"] == [[2, 3, 4, 5], [3, 4]] and d["names"] == ["A", "B"] and d["shape"] == [2, 3, 4, 5]
    assert d["feeds"] == [{"name": "a", "shape": [2, 3, 4, 5], "dtype": "float32"},
                          {"name": "b", "shape": [3, 4], "dtype": "float32"}]
    assert d["steps"] == [{"op": "Unsqueeze", "inputs": ["b"], "output": "b_1", "attrs": {"axes": [2]}},
                          {"op": "Add", "inputs": ["a", "b_1"], "output": "y", "attrs": {}}]
    assert d["output"] == "y" and d["text"].startswith("<ir_version: 7") and d["avoided"] == []


def test_json_when_there_is_no_recipe():
    code, text = cli("translate", "2,3,4,5,6", "6", "--to", "ncnn", "--json")
    d = json.loads(text)
    assert code == 1 and d["ok"] is False and d["steps"] is None and d["text"] is None
    assert d["shape"] == [2, 3, 4, 5, 6] and d["target"] == "ncnn"
    assert d["error"]["kind"] == "untranslatable" and "rank 1 to 4" in d["error"]["reason"]
    code, text = cli("translate", "2,3", "4", "--to", "onnx", "--json")
    d = json.loads(text)
    assert code == 1 and d["ok"] is False and d["shape"] is None and d["error"]["kind"] == "dims"


def test_json_lists_the_avoided_deviations():
    code, text = cli("translate", "2,3", "3,1", "--rule", "pdpd", "--axis", "1", "--to", "openvino", "--json")
    d = json.loads(text)
    assert [a["id"] for a in d["avoided"]] == ["openvino-pdpd-trailing-ones"]
    assert [s["op"] for s in d["steps"]] == ["Reshape", "Add"]


def test_bcast_translate_is_callable():
    plan = infer((2, 3), (3,))
    assert bcast.translate(plan, to="numpy").text() == "np.add(a, b)"
    assert bcast.translation.Recipe is bcast.translate(plan, to="numpy").__class__
    assert bcast.TranslationError is TranslationError


def test_recipes_that_avoid_deviations_run_right_on_openvino():
    """Where OpenVINO's CPU plugin deviates (pdpd Subtract with an axis, B's trailing 1s, Select with a pdpd
    axis), the recipe's numpy form gives the rule's result; a recipe with open dims runs too."""
    pytest.importorskip("openvino")
    cases = [(infer((2, 3, 4, 5), (3, 4), rule="pdpd", axis=1), "Subtract"),
             (infer((2, 3), (3, 1), rule="pdpd", axis=1), "Add"),
             (infer((3,), (2, 3, 4), (3, 4), rule="openvino-select", auto_broadcast="pdpd", axis=1), None)]
    recipes = [translate(plan, to="openvino", op=op) for plan, op in cases]
    assert all(r.avoided for r in recipes)
    rng = np.random.default_rng(11)
    inputs = [_inputs(plan, rng) for plan, _ in cases]
    for (plan, op), got, xs in zip(cases, run_many(recipes, inputs), inputs):
        np.testing.assert_allclose(got, _expected(plan, {"Subtract": "Sub"}.get(op, op), xs), rtol=1e-6)
    symbolic = translate(infer("N,3,4", "3", rule="paddle", axis=1), to="openvino")
    a, b = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    np.testing.assert_array_equal(symbolic.run(a, b), a + b[:, None])


def test_cli_prints_the_condition_the_recipe_rests_on():
    """Was: the recipe alone, exit 0, with nothing saying it holds only if N == M or N == 1 or M == 1."""
    code, text = cli("translate", "N,3", "M,3", "--to", "ncnn")
    assert code == 0 and text.endswith("out0 0=0\nif N == M or N == 1 or M == 1\n"), text
    code, text = cli("translate", "N,3", "M,3", "--to", "numpy", "--json")
    d = json.loads(text)
    assert d["constraints"] == ["N == M or N == 1 or M == 1"] and d["text"] == "np.add(a, b)"
    code, text = cli("translate", "N,3", "5,1", "--to", "onnx", "--json")
    assert json.loads(text)["constraints"] == ["N ∈ {1, 5}"]
    assert cli("translate", "2,3", "3", "--to", "numpy") == (0, "np.add(a, b)\n")  # static: nothing to add
    assert json.loads(cli("translate", "2,3", "3", "--to", "numpy", "--json")[1])["constraints"] == []
    assert json.loads(cli("translate", "2,3", "4", "--to", "numpy", "--json")[1])["constraints"] is None
    assert translate("N,3", "M,3", to="onnx").to_dict()["constraints"] == ["N == M or N == 1 or M == 1"]
