"""Recipes as models of their target, and run on the real runtime (the runtimes load here, when used).

:func:`model` puts many recipes of one target into one model (an ONNX ``ModelProto``, an
``openvino.Model``, an ncnn ``.param``, numpy code objects); :func:`run_many` runs them
at once: one onnxruntime session, one OpenVINO compile, one ncnn net.  The runtimes are
reached through their oracle adapters' public functions (:mod:`bcast.frameworks`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..core._require import require, require_all
from ..core.dims import is_static
from ..core.errors import InputError
from .text import OV_CONST, ncnn_text, onnx_text, prefixed, renamed

if TYPE_CHECKING:
    from .recipe import Recipe

__all__ = ["model", "run_many"]


def _onnx_model(recipes: Sequence[Recipe]) -> Any:
    parser = require("onnx.parser", "an ONNX model of a recipe")
    m = parser.parse_model(onnx_text(prefixed(recipes)))
    for value in (*m.graph.input, *m.graph.output):  # the parser reads float[] as "no shape", not rank 0
        if not value.type.tensor_type.HasField("shape"):
            value.type.tensor_type.shape.SetInParent()
    return m


def _openvino_model(recipes: Sequence[Recipe]) -> Any:
    import numpy as np

    ov = require("openvino", "an OpenVINO model of a recipe")

    from ..frameworks.openvino.oracle import node

    params, results = [], []
    for recipe, prefix in prefixed(recipes):
        inputs, steps, output = renamed(recipe, prefix)
        values = {}
        for n, s, t in inputs:
            p = ov.op.Parameter(ov.Type.boolean if t == "bool" else ov.Type.f32,
                                ov.PartialShape([d if is_static(d) else -1 for d in s]))
            p.set_friendly_name(n)
            params.append(p)
            values[n] = p.output(0)
        for s in steps:
            consts = OV_CONST.get(s.op, ())
            args = [values[x] for x in s.inputs]
            args += [ov.op.Constant(np.asarray(s.attr(c), np.int64).reshape(-1)).output(0)
                     for c in consts if s.attr(c) is not None]
            values[s.output] = node(s.op, args, {k: v for k, v in s.attrs if k not in consts}).output(0)
        results.append(values[output])
    return ov.Model(results, params, "bcast_translate")


def _numpy_model(recipes: Sequence[Recipe]) -> list:
    return [compile(r.text(), "<bcast translate>", "eval") for r in recipes]


def _ncnn_model(recipes: Sequence[Recipe]) -> str:
    return ncnn_text(prefixed(recipes))


def _tflite_models(recipes: Sequence[Recipe]) -> list[bytes]:
    """One ``.tflite`` model (its bytes) per recipe: a TFLite subgraph has one output here."""
    from ..frameworks.tflite.oracle import graph

    out = []
    for recipe in recipes:
        steps = tuple((s.op, s.inputs, s.output, s.attr("shape")) for s in recipe.steps)
        out.append(graph(recipe.inputs, steps, (recipe.output, tuple(recipe.shape), "float32")))
    return out


_MODEL: dict[str, Callable[[Sequence[Recipe]], Any]] = {
    "numpy": _numpy_model, "onnx": _onnx_model, "openvino": _openvino_model, "ncnn": _ncnn_model,
    "tflite": _tflite_models}


def model(recipes: Iterable[Recipe]) -> Any:
    """One model holding many recipes of one target, each's names prefixed ``r0_``, ``r1_``...
    (none for a single recipe): an ONNX ``ModelProto``, an ``openvino.Model``, an ncnn
    ``.param`` text, or for numpy a list of code objects (for TFLite: a list of ``.tflite`` models'
    bytes, one per recipe)."""
    recipes = list(recipes)
    return _MODEL[_one_target(recipes)](recipes)


def _one_target(recipes: Sequence[Recipe]) -> str:
    targets = {r.target for r in recipes}
    if len(targets) != 1:
        raise InputError("translate: recipes of one target, at least one")
    return targets.pop()


def run_many(recipes: Iterable[Recipe], inputs: Iterable[Iterable[Any]]) -> list:
    """Run many recipes of one target at once: one model (one onnxruntime session, one
    OpenVINO compile, one ncnn net) holds them all.  ``inputs[k]`` are the arrays of
    ``recipes[k]``; returns one output array per recipe."""
    recipes, arrays = list(recipes), [list(x) for x in inputs]
    if not recipes:
        return []
    target = _one_target(recipes)
    if len(arrays) != len(recipes):
        raise InputError(f"translate.run_many: {len(recipes)} recipes but {len(arrays)} lists of inputs")
    for r, xs in zip(recipes, arrays):
        if len(xs) != len(r.inputs):
            raise InputError(f"the {r.target} recipe takes {len(r.inputs)} inputs "
                             f"({', '.join(n for n, _, _ in r.inputs)}), got {len(xs)}")
    return _RUN[target](recipes, arrays)


def _feeds(recipes: Sequence[Recipe], inputs: Sequence[Sequence[Any]]) -> dict:
    import numpy as np

    feeds = {}
    for (recipe, prefix), xs in zip(prefixed(recipes), inputs):
        for (n, _, t), x in zip(recipe.inputs, xs):
            # (np.ascontiguousarray would make a 0-d array 1-d)
            feeds[prefix + n] = np.require(np.asarray(x, dtype=bool if t == "bool" else np.float32), requirements="C")
    return feeds


def _run_numpy(recipes: Sequence[Recipe], inputs: Sequence[Sequence[Any]]) -> list:
    import numpy as np

    out = []
    for code, recipe, xs in zip(_numpy_model(recipes), recipes, inputs):
        env = {n: x for (n, _, _), x in zip(recipe.inputs, _feeds([recipe], [xs]).values())}
        out.append(np.asarray(eval(code, {"np": np, "__builtins__": {}}, env)))  # noqa: S307 - our own expression
    return out


def _run_onnx(recipes: Sequence[Recipe], inputs: Sequence[Sequence[Any]]) -> list:
    require_all(("onnx", "onnxruntime"), "running an ONNX recipe")  # both named at once
    from ..frameworks.onnx.onnxruntime import run_model

    return run_model(_onnx_model(recipes), _feeds(recipes, inputs))


def _run_openvino(recipes: Sequence[Recipe], inputs: Sequence[Sequence[Any]]) -> list:
    import numpy as np

    from ..frameworks.openvino.oracle import compile_cpu

    compiled = compile_cpu(_openvino_model(recipes))
    result = compiled(list(_feeds(recipes, inputs).values()))
    return [np.asarray(result[compiled.output(k)]).copy() for k in range(len(recipes))]


def _run_ncnn(recipes: Sequence[Recipe], inputs: Sequence[Sequence[Any]]) -> list:
    require("ncnn", "running an ncnn recipe")
    from ..frameworks.ncnn.oracle import extract, load_net

    net = load_net(_ncnn_model(recipes), "the recipe's .param")
    feeds = _feeds(recipes, inputs)
    return [extract(net, {prefix + n: feeds[prefix + n] for n, _, _ in recipe.inputs}, prefix + recipe.output)
            for recipe, prefix in prefixed(recipes)]


def _run_tflite(recipes: Sequence[Recipe], inputs: Sequence[Sequence[Any]]) -> list:
    require("ai_edge_litert", "running a TFLite recipe")
    from ..frameworks.tflite.oracle import run_graph

    feeds = _feeds(recipes, inputs)
    return [run_graph(content, *(feeds[prefix + n] for n, _, _ in recipe.inputs))
            for content, (recipe, prefix) in zip(_tflite_models(recipes), prefixed(recipes))]


_RUN: dict[str, Callable[[Sequence[Recipe], Sequence[Sequence[Any]]], list]] = {
    "numpy": _run_numpy, "onnx": _run_onnx, "openvino": _run_openvino, "ncnn": _run_ncnn, "tflite": _run_tflite}
