"""Translate: one framework's broadcast as another framework's explicit ops.

:func:`translate` takes the :class:`~bcast.core.plan.Plan` of a source rule and a
target (``numpy``, ``onnx``, ``openvino``, ``ncnn``, ``tflite``, ``tensorrt``, ``tosa`` or
``stablehlo``) and returns the
:class:`Recipe`: the *minimal* sequence of explicit steps -- Reshape /
Unsqueeze of some inputs, then the op, or the target's broadcast-to op -- that
makes the target compute what the source computes: the same output shape and
the same element of every input at every output position.

How: the plan says where every input axis lands (``Plan.aligned_shape(i)``).
For each way the target can express the op (its *forms*: ONNX's numpy
broadcasting; OpenVINO's ``auto_broadcast`` numpy, pdpd or none; ncnn's
BinaryOp alignment; Expand, Broadcast...), bcast tries every input as it is,
reshaped to the part of its aligned shape from its first mapped axis (numpy's
implicit left padding does the rest), or reshaped to the full output rank,
fewest reshapes first, and keeps the first combination whose plan under the
target's own rule aligns every input exactly as the source does.  A form that
would hit a recorded runtime deviation (:mod:`bcast.frameworks.deviations`: OpenVINO's
CPU plugin on pdpd, ncnn's garbage pairs...) is skipped, so a recipe computes
the right result on the real runtime, not only by the spec; the skipped ones
are listed in ``Recipe.avoided``.

Recipes are plain data (no runtime is imported to make one):

- ``numpy``: a Python expression over the input names (``a``, ``b``, ... the
  plan's names in lower case), for ``eval`` with ``np`` bound;
- ``onnx``: nodes at opset 13 (Unsqueeze with its axes as an input, Reshape
  and Expand with a shape initializer), in ONNX's textual syntax;
  :meth:`Recipe.model` parses it into a ``ModelProto``;
- ``openvino``: ops with their ``auto_broadcast`` (or Broadcast ``mode``);
  :meth:`Recipe.model` builds an ``ov.Model``;
- ``ncnn``: the ``.param`` text as pnnx writes it (magic 7767517, layer and
  blob counts, Input layers, Reshape with ``0=w 1=h 11=d 2=c``, BinaryOp
  with ``0=op_type``); inputs are the blobs ``in0``, ``in1``, the output ``out0``.
- ``tflite``: TFLite builtins (RESHAPE with a constant shape, then the op --
  ADD ... POW, SELECT_V2 -- within the kernels' rank limit 8, or BROADCAST_TO);
  :meth:`Recipe.model` writes ``.tflite`` models, :meth:`Recipe.run` runs them in
  LiteRT's interpreter.
- ``tensorrt``: TensorRT's layers, which take inputs of equal rank (NvInfer.h): an IShuffleLayer
  (``reshape_dims``) for every lower-rank input, then IElementWiseLayer, ISelectLayer or
  IParametricReLULayer, or a stride-0 ISliceLayer for the broadcast-to rules; rank <= 8; written as
  the Python network-definition calls.  TensorRT does not run here: :meth:`Recipe.run` runs the steps
  in bcast's model of it (:mod:`bcast.frameworks.tensorrt`'s ``equal-rank``), :meth:`Recipe.model`
  is the same graph in ONNX (:func:`~bcast.translation.runtimes.onnx_equivalent`).
- ``tosa``: TOSA 1.0 in MLIR's TOSA dialect: ``tosa.reshape`` (a ``tosa.const_shape``), then the
  operator (``tosa.mul`` with its ``shift``; Div of floats ``tosa.reciprocal`` then ``tosa.mul``),
  or ``tosa.tile``; level 8K (rank <= 6).  :meth:`Recipe.run` runs the steps in bcast's model
  (:mod:`bcast.frameworks.tosa`), :func:`~bcast.translation.runtimes.run_tosa_reference` in the
  TOSA reference model where tosa-tools is installed.
- ``stablehlo``: StableHLO in MLIR: ``stablehlo.broadcast_in_dim`` of every input not of the
  result's shape (no search: StableHLO has no implicit broadcasting; a transposing plan too), then
  the op; :meth:`Recipe.run` compiles the text with XLA (jax) and runs it.

Recipes assume float32 tensors (Select's cond: bool): the deviations are
consulted for that element type, on the CPU plugin for OpenVINO.  Where no
recipe exists, :class:`TranslationError` says why.

>>> from bcast import infer
>>> print(translate(infer((2, 3, 4, 5), (3, 4), rule="paddle", axis=1), to="numpy"))
np.add(a, b.reshape(3, 4, 1))
>>> print(translate(infer((2, 3, 4), (4,)), to="onnx", op="Mul").text())
<ir_version: 7, opset_import: ["" : 13]>
bcast_translate (float[2,3,4] a, float[4] b) => (float[2,3,4] y)
{
   y = Mul (a, b)
}
>>> translate(infer((2, 3), (3,), rule="pdpd", axis=1), to="openvino").steps[-1].attrs
(('auto_broadcast', 'pdpd'), ('axis', 1))
>>> translate(infer((2, 3, 4), (3, 4), (4,)), to="ncnn", op="Where")
Traceback (most recent call last):
...
bcast.translation.recipe.TranslationError: cannot translate numpy A (2,3,4), ... to ncnn: ncnn has no select layer ...
"""


from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from ..core._format import brief, format_shape
from ..core.dims import is_static
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..frameworks.deviations import Note, Runtime, notes_for
from ..frameworks.ncnn.deviations import NcnnRuntime
from ..frameworks.onnx.deviations import OnnxRuntime
from ..frameworks.openvino.deviations import OpenVINORuntime
from ..frameworks.tflite.deviations import TFLiteRuntime
from ..rules import infer
from .build import BUILD, build_stablehlo
from .forms import EQUAL_RANK, Form, Reshape, candidates, equal_rank_limit, forms, realizable
from .ops import OPS, RULE_OP, Op, source_op, tensors
from .recipe import TARGETS, Recipe, TranslationError

__all__ = ["OPS", "TARGETS", "Op", "Recipe", "TranslationError", "translate"]

#: Why ncnn cannot express an op kind (its BinaryOp is its one broadcasting layer).
_NCNN_CANNOT = {
    "where": "ncnn has no select layer and its BinaryOp takes 2 blobs: a 3-input op has no ncnn form",
    "prelu": "ncnn's PReLU takes its slope as a weight (one per channel), not as a broadcast blob",
    "gemm": "Gemm is a matrix product, not a BinaryOp: ncnn's broadcasting layer cannot express it",
    "broadcast": "ncnn has no broadcast-to op: its BinaryOp broadcasts between two blobs only",
}


Choice = tuple[Reshape | None, ...]

#: The layer / operator a TensorRT or TOSA recipe makes an op of where there is no same-named one.
_COMPOSED = {("tensorrt", "broadcast"): "ISliceLayer", ("tosa", "broadcast"): "TILE",
             ("tosa", "binary"): "RECIPROCAL+MUL", ("tensorrt", "gemm"): "Gemm", ("tosa", "gemm"): "Gemm",
             ("tosa", "prelu"): "PRelu"}


def _operands(plan: Plan, form: Form, choice: Choice) -> list[Any]:
    shapes = {i: (tuple(plan.inputs[i]) if r is None else r.shape) for i, r in zip(tensors(plan), choice)}
    return [shapes[o] if isinstance(o, int) else o for o in form.operands]


def _agrees(plan: Plan, form: Form, got: Plan) -> bool:
    """Whether the target's plan aligns every tensor input as the source's does
    (and, where the output is not made of the inputs' dims, has its shape)."""
    for pos, o in enumerate(form.operands):
        if isinstance(o, int) and got.aligned_shape(pos) != plan.aligned_shape(o):
            return False
    return RULE_OP.get(plan.rule) not in ("Expand", "Gemm") or tuple(got.shape) == tuple(plan.shape)


#: The runtimes whose deviations a target's recipe must avoid (OpenVINO: its CPU plugin).
_RUNTIMES: dict[str, tuple[Runtime, ...]] = {
    "numpy": (), "onnx": (OnnxRuntime.ONNXRUNTIME,),
    "openvino": (OpenVINORuntime.OPENVINO, OpenVINORuntime.CPU_PLUGIN), "ncnn": (NcnnRuntime.NCNN,),
    "tflite": (TFLiteRuntime.INTERPRETER,), "tensorrt": (), "tosa": (), "stablehlo": ()}


def _findings(target: str, got: Plan, op_name: str) -> list[Note]:
    return [f for f in notes_for(got, op=op_name, op_attrs={"element_type": "float32"})
            # a recipe writes every attribute out (the pdpd axis too): it avoids those of omitted attributes
            if f.deviation.runtime in _RUNTIMES[target] and not f.deviation.needs_omitted_attr]


def _search(plan: Plan, target: str, op: Op
            ) -> tuple[tuple[Form, Choice] | None, list[Note], list[str]]:
    """The best (form, reshapes) for the target: fewest reshapes, then the form's rank;
    with the deviations that ruled out better ones, and why nothing fit (if so)."""
    op_name = {"numpy": op.numpy, "onnx": op.onnx, "openvino": op.openvino, "ncnn": op.ncnn_name or op.name,
               "tflite": op.tflite or op.name, "tensorrt": op.tensorrt or _COMPOSED["tensorrt", op.kind],
               "tosa": op.tosa or _COMPOSED["tosa", op.kind],
               "stablehlo": op.stablehlo or op.name}[target]
    tried: list[tuple[tuple[int, int], list[Note]]] = []  # combinations ruled out by a deviation
    why: list[str] = []
    best: tuple[tuple[int, int], Form, Choice] | None = None
    for rank, form in enumerate(forms(target, op, plan)):
        per_input = [candidates(plan, i, form.reshape, target) for i in tensors(plan)]
        choices = sorted(itertools.product(*per_input), key=lambda c: sum(r is not None for r in c))
        for choice in choices:
            key = (sum(r is not None for r in choice), rank)
            if best is not None and key >= best[0]:
                break
            stuck = [r for r in choice if r is not None and not realizable(r, target)]
            if stuck:
                why += [f"{plan.names[r.i]} {format_shape(plan.inputs[r.i])} must be reshaped to "
                        f"{format_shape(r.shape)}, which needs static dims" for r in stuck]
                continue
            open_shapes = [o for o in form.operands if isinstance(o, tuple) and not all(map(is_static, o))]
            if open_shapes:
                why.append(f"{op_name} takes the shape {format_shape(open_shapes[0])} as values, and it has open dims")
                break
            try:
                got = infer(*_operands(plan, form, choice), rule=form.rule, **dict(form.attrs))
            except BroadcastError as e:
                why.append(e.reason)
                continue
            if not _agrees(plan, form, got):
                continue
            found = _findings(target, got, op_name)
            if found:
                tried.append((key, found))
                continue
            best = (key, form, choice)
    if best is None:
        return None, [f for _, fs in tried for f in fs], why
    avoided = [f for k, fs in tried if k < best[0] for f in fs]
    return (best[1], best[2]), avoided, why


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _no_recipe(plan: Plan, target: str, op: Op, avoided: list[Note], why: list[str]) -> TranslationError:
    if avoided:
        notes = "; ".join(_unique(f"{f.deviation.id}: {f.note}" for f in avoided))
        return TranslationError(plan, target, f"every form of {op.name} on {target} hits a runtime deviation ({notes})")
    if why:
        return TranslationError(plan, target, "; ".join(_unique(why)))
    return TranslationError(plan, target, f"no form of {op.name} on {target} aligns the inputs as {plan.rule} does")


#: Why TensorRT, TOSA or StableHLO has no form of an op kind.
_CANNOT = {
    ("tensorrt", "gemm"): "Gemm is a matrix product (IMatrixMultiplyLayer), not an element-wise layer: no recipe "
                          "is written for it",
    ("tosa", "gemm"): "Gemm is a matrix product (TOSA's MATMUL is batched rank 3), not an element-wise operator: "
                      "no recipe is written for it",
    ("tosa", "prelu"): "TOSA has no PReLU operator (a lowering composes GREATER_EQUAL, MUL and SELECT): no recipe "
                       "is written for it",
    ("stablehlo", "gemm"): "Gemm is a matrix product (stablehlo.dot_general), not an element-wise op: no recipe "
                           "is written for it",
    ("stablehlo", "prelu"): "StableHLO has no PReLU op (a lowering composes compare, multiply and select): no "
                            "recipe is written for it",
}


def _precheck(plan: Plan, target: str, op: Op) -> str | None:
    """Why the target cannot take these inputs at all, before any form is tried."""
    if (target, op.kind) in _CANNOT:
        return _CANNOT[target, op.kind]
    if target == "stablehlo":  # broadcast_in_dim takes every input, a transposing one too
        return None
    if target == "tosa" and any(d == 0 for shape in (*plan.inputs, plan.shape) for d in shape):
        return "TOSA 1.0 has no tensor with a 0-size dim"
    most = equal_rank_limit(target) if target in EQUAL_RANK else None
    if most is not None and len(plan.shape) > most:
        limit = (f"a TensorRT tensor has at most {most} dims (nvinfer1::Dims::MAX_DIMS)" if target == "tensorrt"
                 else f"TOSA's level 8K allows rank {most} at most")
        return f"the output has rank {len(plan.shape)}: {limit}"
    for i, name in enumerate(plan.names):
        if plan.transposition(i) is not None:
            return (f"{name}'s axes land on the output's out of order (a transposing broadcast: explicit with "
                    "transpose=1, StableHLO's broadcast_in_dim): the recipes only insert and stretch axes; transpose "
                    f"{name} first")
    if target == "tflite":
        if op.tflite is None:
            return (f"TFLite has no builtin that broadcasts as {op.name} does (its PRELU and FULLY_CONNECTED take "
                    "their alpha and bias by rules of their own)")
        if not all(is_static(d) for s in (*plan.inputs, plan.shape) for d in s):
            return "a TFLite recipe is written for static shapes (RESHAPE and BROADCAST_TO take them as constants)"
    if target == "ncnn":
        if op.kind in _NCNN_CANNOT:
            return _NCNN_CANNOT[op.kind]
        for name, s in zip(plan.names, plan.inputs):
            if not s:
                return (f"{name} is a scalar (rank 0): ncnn has no rank-0 blob; its with_scalar=1 form takes a "
                        "constant, not an input")
        if len(plan.shape) > 4:
            return (f"the output has rank {len(plan.shape)}: an ncnn blob has rank 1 to 4 "
                    "([w], [w,h], [w,h,c], [w,h,d,c])")
    return None


def translate(*source: Any, to: str, op: str | None = None, rule: str = "numpy", names: Any = None,
              policy: str = "permissive", **attrs: Any) -> Recipe:
    """The minimal explicit recipe that makes ``to`` compute what the source computes.

    Parameters
    ----------
    *source : a Plan, or shapes
        The source: one :class:`~bcast.core.plan.Plan` (``bcast.infer(*shapes, rule=..., **attrs)``),
        or the shapes themselves with ``rule``, ``names``, ``policy`` and the rule's
        attributes, as :func:`bcast.infer` takes them: ``translate((2, 3, 4), (3, 4), to="ncnn")``.
    to : {"numpy", "onnx", "openvino", "ncnn", "tflite", "tensorrt", "tosa", "stablehlo"}
        The target framework.
    op : str, optional
        The op, by bcast's, numpy's, ONNX's, OpenVINO's or ncnn's name (:data:`OPS`):
        ``Add`` (the default for two inputs), ``Sub``, ``Mul``, ``Div``, ``Max``,
        ``Min``, ``Pow``, ``Where`` (three inputs).  The op-specific rules fix it:
        ``openvino-select`` Where, ``openvino-prelu`` PRelu, ``onnx-gemm`` Gemm, and
        the broadcast-to rules (``bidirectional``, ``explicit``,
        ``openvino-broadcast-pdpd``) Expand: data broadcast to the target shape.

    Returns
    -------
    Recipe

    Raises
    ------
    TranslationError
        The target cannot compute it (ncnn's rank limit, an op ncnn lacks, a
        reshape of symbolic dims, every form hitting a runtime deviation...).
    InputError
        An unknown target or op, or an op that does not fit the rule.

    Examples
    --------
    >>> from bcast import infer
    >>> print(translate(infer((2, 3), (3, 1), rule="pdpd", axis=1), to="openvino").text())
    a = Parameter(f32, [2,3])
    b = Parameter(f32, [3,1])
    b_1 = Reshape(b, [3], special_zero=false)
    y = Add(a, b_1, auto_broadcast=numpy)
    >>> print(translate(infer((4, 3, 2), (3, 2)), to="ncnn").text())  # doctest: +NORMALIZE_WHITESPACE
    7767517
    4 4
    Input                    in0                      0 1 in0
    Input                    in1                      0 1 in1
    Reshape                  reshape_0                1 1 in1 2 0=2 1=3 2=1
    BinaryOp                 binaryop_0               2 1 in0 2 out0 0=0
    """
    if len(source) == 1 and isinstance(source[0], Plan):
        plan = source[0]
        given = [k for k, v in (("rule", rule != "numpy"), ("names", names is not None),
                                ("policy", policy != "permissive")) if v] + list(attrs)
        if given:
            raise InputError(f"translate: a Plan carries its rule and attributes; got {', '.join(given)} too")
    elif any(isinstance(s, Plan) for s in source):
        raise InputError("translate takes one Plan, or shapes: not a Plan among shapes")
    else:
        plan = infer(*source, rule=rule, names=names, policy=policy, **attrs)
    if to not in TARGETS:
        raise InputError(f"translate: unknown target {brief(to)}; the targets are: {', '.join(TARGETS)}")
    o = source_op(plan, op)
    reason = _precheck(plan, to, o)
    if reason:
        raise TranslationError(plan, to, reason)
    if to == "stablehlo":  # no implicit broadcasting: every input broadcast_in_dim to the result, no search
        return build_stablehlo(plan, o)
    found, avoided, why = _search(plan, to, o)
    if found is None:
        raise _no_recipe(plan, to, o, avoided, why)
    form, choice = found
    return BUILD[to](plan, o, form, [r for r in choice if r is not None], tuple(avoided))
