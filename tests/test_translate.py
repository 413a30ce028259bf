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

import io
import json

import numpy as np
import pytest

import bcast
from bcast import BroadcastError, InputError, infer
from bcast.cli import main
from bcast.translate import OPS, TARGETS, TranslationError, model, run_many, translate

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
        op = None if rule in ("openvino-select", "openvino-prelu", "onnx-gemm", "bidirectional", "explicit",
                              "openvino-broadcast-pdpd") else BINARY_OPS[len(out) % len(BINARY_OPS)]
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
        if plan.rule == "openvino-select" and i == 0:
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
    if plan.rule == "openvino-select":
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
