"""Recipes as models of their target, and run on the real runtime (the runtimes load here, when used).

:func:`model` puts many recipes of one target into one model (an ONNX ``ModelProto``, an
``openvino.Model``, an ncnn ``.param``, numpy code objects); :func:`run_many` runs them
at once: one onnxruntime session, one OpenVINO compile, one ncnn net.  The runtimes are
reached through their oracle adapters' public functions (:mod:`bcast.frameworks`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core._require import require, require_all
from ..core.dims import is_static
from ..core.errors import InputError
from .step import Step
from .text import OV_CONST, ncnn_text, onnx_text, prefixed, renamed, stablehlo_text, tosa_text

if TYPE_CHECKING:
    from .recipe import Recipe

__all__ = ["model", "onnx_equivalent", "run_many", "run_onnx_equivalent", "run_tosa_reference"]


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


#: Each TensorRT layer / TOSA operator of a recipe as the ONNX op that computes the same (ISliceLayer's
#: stride-0 broadcast: Expand; TOSA's MUL drops its shift, 0 for floats).
_ONNX_OF = {
    "IShuffleLayer": "Reshape", "ISelectLayer": "Where", "IParametricReLULayer": "PRelu", "ISliceLayer": "Expand",
    "SUM": "Add", "SUB": "Sub", "PROD": "Mul", "DIV": "Div", "MAX": "Max", "MIN": "Min", "POW": "Pow",
    "RESHAPE": "Reshape", "ADD": "Add", "MUL": "Mul", "MAXIMUM": "Max", "MINIMUM": "Min", "RECIPROCAL": "Reciprocal",
    "SELECT": "Where", "TILE": "Tile",
}
#: The attribute of a TensorRT / TOSA step that is the ONNX node's constant input.
_ONNX_CONST_OF = {"IShuffleLayer": "reshape_dims", "ISliceLayer": "shape", "RESHAPE": "new_shape", "TILE": "multiples"}


def _as_onnx_step(s: Step) -> Step:
    op = s.attr("op") if s.op == "IElementWiseLayer" else s.op
    const = _ONNX_CONST_OF.get(s.op)
    attrs = () if const is None else (({"Tile": "repeats"}.get(_ONNX_OF[op], "shape"), s.attr(const)),)
    return Step(_ONNX_OF[op], s.inputs, s.output, attrs)


def onnx_equivalent(recipes: Iterable[Recipe]) -> Any:
    """TensorRT or TOSA recipes as one ONNX model (``ModelProto``) of the same graph, node for node: each
    IShuffleLayer / RESHAPE a Reshape, each layer or operator the ONNX op that computes the same (the
    stride-0 ISliceLayer an Expand, TOSA's TILE a Tile), so onnxruntime can run what those targets would."""
    return _onnx_model([replace(r, target="onnx", steps=tuple(_as_onnx_step(s) for s in r.steps)) for r in recipes])


def run_onnx_equivalent(recipes: Iterable[Recipe], inputs: Iterable[Iterable[Any]]) -> list:
    """TensorRT or TOSA recipes run as their :func:`onnx_equivalent` in onnxruntime, one session for all;
    ``inputs[k]`` are the arrays of ``recipes[k]``; one output array per recipe."""
    recipes, arrays = list(recipes), [list(x) for x in inputs]
    require_all(("onnx", "onnxruntime"), "running a recipe's ONNX equivalent")
    from ..frameworks.onnx.onnxruntime import run_model

    return run_model(onnx_equivalent(recipes), _feeds(recipes, arrays))


def _mlir_model(recipes: Sequence[Recipe]) -> str:
    text = {"tosa": tosa_text, "stablehlo": stablehlo_text}[recipes[0].target]
    return text(prefixed(recipes))


_MODEL: dict[str, Callable[[Sequence[Recipe]], Any]] = {
    "numpy": _numpy_model, "onnx": _onnx_model, "openvino": _openvino_model, "ncnn": _ncnn_model,
    "tflite": _tflite_models, "tensorrt": onnx_equivalent, "tosa": _mlir_model, "stablehlo": _mlir_model}


def model(recipes: Iterable[Recipe]) -> Any:
    """One model holding many recipes of one target, each's names prefixed ``r0_``, ``r1_``...
    (none for a single recipe): an ONNX ``ModelProto``, an ``openvino.Model``, an ncnn
    ``.param`` text, or for numpy a list of code objects (for TFLite: a list of ``.tflite`` models'
    bytes, one per recipe; for TOSA and StableHLO the MLIR text of one ``func.func @main``; for TensorRT
    the same graph as an ONNX model, :func:`onnx_equivalent`, what TensorRT's ONNX parser imports)."""
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


def _slice(x: Any, start: Sequence[int], shape: Sequence[int], stride: Sequence[int]) -> Any:
    """ISliceLayer (its default mode): element ``k`` of the output is ``x[start + k * stride]``, per axis."""
    import numpy as np

    if not (x.ndim == len(start) == len(shape) == len(stride)):
        raise ValueError(f"ISliceLayer: input of rank {x.ndim}, start/shape/stride of {len(start)}")
    return x[np.ix_(*[b + np.arange(n) * s for b, n, s in zip(start, shape, stride)])] if x.ndim else x


def _reshape(x: Any, shape: Sequence[int]) -> Any:
    if x.size != _count(shape):
        raise ValueError(f"reshape of {x.shape} to {tuple(shape)}: the element counts differ")
    return x.reshape(shape)


def _count(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _tile(x: Any, multiples: Sequence[int]) -> Any:
    import numpy as np

    if x.ndim != len(multiples):
        raise ValueError(f"TILE: input of rank {x.ndim}, multiples of {len(multiples)}")
    return np.tile(x, multiples)


def _execute(recipe: Recipe, xs: Sequence[Any], op: Callable[[Step, list], Any]) -> Any:
    values = dict(zip((n for n, _, _ in recipe.inputs), xs))
    for s in recipe.steps:
        values[s.output] = op(s, [values[x] for x in s.inputs])
    return values[recipe.output]


def _tensorrt_step(s: Step, args: list) -> Any:
    from ..frameworks.tensorrt.ops import run

    if s.op == "IShuffleLayer":
        return _reshape(args[0], s.attr("reshape_dims"))
    if s.op == "ISliceLayer":
        return _slice(args[0], s.attr("start"), s.attr("shape"), s.attr("stride"))
    name = {"ISelectLayer": "Select", "IParametricReLULayer": "ParametricReLU"}.get(s.op) or s.attr("op")
    return run(name, *args)


def _tosa_step(s: Step, args: list) -> Any:
    import numpy as np

    from ..frameworks.tosa.ops import run

    if s.op == "RESHAPE":
        return _reshape(args[0], s.attr("new_shape"))
    if s.op == "TILE":
        return _tile(args[0], s.attr("multiples"))
    if s.op == "RECIPROCAL":
        return np.reciprocal(args[0])
    return run(s.op, *args, level="8K")


def _run_equal_rank(recipes: Sequence[Recipe], inputs: Sequence[Sequence[Any]]) -> list:
    """TensorRT and TOSA, which do not run here: the recipe step by step in bcast's model of the target (each
    layer / operator planned by its plug-in's ``equal-rank`` rule, :mod:`bcast.frameworks.tensorrt.ops`,
    :mod:`bcast.frameworks.tosa.ops`, which refuses operands of unequal rank; reshape, slice and tile as
    their specifications say)."""
    step = _tensorrt_step if recipes[0].target == "tensorrt" else _tosa_step
    feeds = _feeds(recipes, inputs)
    return [_execute(recipe, [feeds[prefix + n] for n, _, _ in recipe.inputs], step)
            for recipe, prefix in prefixed(recipes)]


def run_tosa_reference(recipes: Iterable[Recipe], inputs: Iterable[Iterable[Any]]) -> list:
    """TOSA recipes in the TOSA reference model (Arm's ``tosa-tools``, which the lock cannot take: it pins
    numpy < 2.2): their MLIR text, all in one ``func.func``, through its ``tosa-opt`` (target profile
    ``pro_fp``, level 8K, validated with strict spec alignment, serialized to a flatbuffer), then run by
    ``tosa_reference_model.run`` at level EIGHTK.  One output array per recipe."""
    import subprocess
    import tempfile
    from pathlib import Path

    import numpy as np

    reference = require("tosa_reference_model", "running a TOSA recipe in the reference model")
    from importlib import metadata

    recipes, arrays = list(recipes), [list(x) for x in inputs]
    opt = Path(str(metadata.distribution("tosa-tools").locate_file("bin/tosa-opt")))
    with tempfile.TemporaryDirectory() as tmp:
        source, graph = Path(tmp) / "recipes.mlir", Path(tmp) / "recipes.tosa"
        source.write_text(_mlir_model(recipes))
        done = subprocess.run([str(opt), "--tosa-attach-target=profiles=pro_fp level=8k",
                               "--tosa-validate=strict-op-spec-alignment", "--tosa-serialize",
                               f"--tosa-flatbuffer-filename={graph}", str(source), "-o", os.devnull],
                              capture_output=True, text=True, check=False)
        if done.returncode:
            raise InputError(f"tosa-opt refused the recipes: {done.stderr.strip()[:500]}")
        outputs, status = reference.run(graph.read_bytes(), list(_feeds(recipes, arrays).values()),
                                        tosa_level="EIGHTK")
    if status != reference.GraphStatus.TOSA_VALID:
        raise InputError(f"the TOSA reference model refused the recipes: {status}")
    return [np.asarray(y).view(np.float32).reshape(r.shape) if np.asarray(y).dtype != np.float32
            else np.asarray(y).reshape(r.shape) for y, r in zip(outputs, recipes)]


#: Recipes per StableHLO module: XLA's compile time grows faster than the module, so many recipes go in chunks.
_STABLEHLO_CHUNK = 128


def _run_stablehlo(recipes: Sequence[Recipe], inputs: Sequence[Sequence[Any]]) -> list:
    """The recipes' StableHLO text itself, compiled by XLA (``jax.extend.backend``'s CPU client,
    ``compile_and_load`` of the MLIR text, backend optimization off: nothing here needs it) and run,
    up to :data:`_STABLEHLO_CHUNK` recipes per module."""
    import numpy as np

    jax = require("jax", "running a StableHLO recipe")
    from jax.extend import backend

    client = backend.get_backend("cpu")
    device = client.local_devices()[0]
    options = backend.get_compile_options(num_replicas=1, num_partitions=1)
    options.executable_build_options.debug_options.xla_backend_optimization_level = 0
    out: list = []
    for k in range(0, len(recipes), _STABLEHLO_CHUNK):
        chunk = recipes[k:k + _STABLEHLO_CHUNK]
        executable = client.compile_and_load(_mlir_model(chunk), [device], options)
        args = [jax.device_put(x, device) for x in _feeds(chunk, inputs[k:k + _STABLEHLO_CHUNK]).values()]
        out += [np.asarray(y) for y in executable.execute(args)]
    return out


_RUN: dict[str, Callable[[Sequence[Recipe], Sequence[Sequence[Any]]], list]] = {
    "numpy": _run_numpy, "onnx": _run_onnx, "openvino": _run_openvino, "ncnn": _run_ncnn, "tflite": _run_tflite,
    "tensorrt": _run_equal_rank, "tosa": _run_equal_rank, "stablehlo": _run_stablehlo}
