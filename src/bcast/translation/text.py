"""The text of recipes in each target's own syntax: a numpy expression, ONNX's textual syntax,
OpenVINO ops, an ncnn ``.param`` file.

Each emitter takes ``(recipe, prefix)`` pairs: many recipes of one target go into one model,
each's value names prefixed (:func:`prefixed`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..core.dims import is_static
from .ops import OPS
from .step import Step

if TYPE_CHECKING:
    from .recipe import Recipe

__all__ = ["NCNN_MAGIC", "ONNX_IR", "ONNX_OPSET", "OV_CONST", "TEXT", "ncnn_text", "onnx_text", "prefixed", "renamed",
           "tflite_text"]

#: The ONNX opset of the recipes (Unsqueeze takes its axes as an input from 13 on) and its IR version.
ONNX_OPSET, ONNX_IR = 13, 7

#: The magic number that opens an ncnn .param file.
NCNN_MAGIC = 7767517

Items = Sequence[tuple["Recipe", str]]


def prefixed(recipes: Sequence[Recipe]) -> list[tuple[Recipe, str]]:
    """The recipes with their name prefixes: none for one recipe, else ``r0_``, ``r1_``..."""
    if len(recipes) == 1:
        return [(recipes[0], "")]
    return [(r, f"r{k}_") for k, r in enumerate(recipes)]


def renamed(recipe: Recipe, prefix: str) -> tuple[tuple, tuple[Step, ...], str]:
    """(inputs, steps, output) with every value name prefixed (to put many recipes in one model)."""
    if not prefix:
        return recipe.inputs, recipe.steps, recipe.output

    def p(name: str) -> str:
        return prefix + name

    inputs = tuple((p(n), s, t) for n, s, t in recipe.inputs)
    steps = tuple(Step(s.op, tuple(p(x) for x in s.inputs), p(s.output), s.attrs) for s in recipe.steps)
    return inputs, steps, p(recipe.output)


def _dims(shape: Iterable[Any], sep: str = ",") -> str:
    return sep.join(str(d) for d in shape)


# --------------------------------------------------------------------------- numpy


def _numpy_text(items: Items) -> str:
    (recipe, _), = items
    expr = {n: n for n, _, _ in recipe.inputs}
    for s in recipe.steps:
        expr[s.output] = _NUMPY_EXPR[s.op](s, *[expr[x] for x in s.inputs])
    return expr[recipe.output]


def _np_shape(shape: Sequence[Any]) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else f"({_dims(shape, ', ')})"


def _np_matmul(s: Step, a: str, b: str) -> str:
    return f"np.matmul({a}{'.T' if s.attr('transA') else ''}, {b}{'.T' if s.attr('transB') else ''})"


def _np_call(name: str) -> Callable[..., str]:
    return lambda s, x, y: f"np.{name}({x}, {y})"


_NUMPY_EXPR: dict[str, Callable[..., str]] = {
    "reshape": lambda s, x: f"{x}.reshape({_dims(s.attr('shape'), ', ')})",
    "expand_dims": lambda s, x: f"np.expand_dims({x}, {_np_shape(s.attr('axis'))})",
    "broadcast_to": lambda s, x: f"np.broadcast_to({x}, {_np_shape(s.attr('shape'))})",
    "where": lambda s, c, t, e: f"np.where({c}, {t}, {e})",
    "prelu": lambda s, d, k: f"np.where({d} < 0, {d} * {k}, {d})",
    "matmul": _np_matmul,
    **{o.numpy: _np_call(o.numpy) for o in OPS if o.kind == "binary"},
}


# --------------------------------------------------------------------------- ONNX

#: Step attributes that are constant inputs (initializers) of the ONNX node, in input order.
_ONNX_CONST = {"Unsqueeze": "axes", "Reshape": "shape", "Expand": "shape"}
_ONNX_TYPES = {"float32": "float", "bool": "bool"}


def onnx_text(items: Items) -> str:
    """The recipes as one model in ONNX's textual syntax."""
    ins, outs, inits, body = [], [], [], []
    for recipe, prefix in items:
        inputs, steps, output = renamed(recipe, prefix)
        ins += [f"{_ONNX_TYPES[t]}[{_dims(_onnx_dims(s))}] {n}" for n, s, t in inputs]
        outs.append(f"float[{_dims(_onnx_dims(recipe.shape))}] {output}")
        for s in steps:
            args = list(s.inputs)
            const = _ONNX_CONST.get(s.op)
            if const:
                values = s.attr(const)
                inits.append(f"int64[{len(values)}] {s.output}_{const} = {{{_dims(values)}}}")
                args.append(f"{s.output}_{const}")
            attrs = [f"{k} = {v}" for k, v in s.attrs if k != const]
            shown = f" <{', '.join(attrs)}>" if attrs else ""
            body.append(f"   {s.output} = {s.op}{shown} ({', '.join(args)})")
    head = f'<ir_version: {ONNX_IR}, opset_import: ["" : {ONNX_OPSET}]>\n'
    head += f"bcast_translate ({', '.join(ins)}) => ({', '.join(outs)})\n"
    if inits:
        head += f"<{', '.join(inits)}>\n"
    return head + "{\n" + "\n".join(body) + "\n}"


def _onnx_dims(shape: Iterable[Any]) -> tuple:
    """Dims as ONNX's textual syntax writes them: ints, symbols, ``?`` for what it cannot say."""
    return tuple(d if is_static(d) or str(d).isidentifier() else "?" for d in shape)


# --------------------------------------------------------------------------- OpenVINO

_OV_TYPES = {"float32": "f32", "bool": "boolean"}
#: Step attributes that are Constant inputs of the OpenVINO node, in input order.
OV_CONST = {"Unsqueeze": ("axes",), "Reshape": ("shape",), "Broadcast": ("target_shape", "axes_mapping")}


def _ov_value(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    return f"[{_dims(v)}]" if isinstance(v, tuple) else str(v)


def _openvino_text(items: Items) -> str:
    lines = []
    for recipe, prefix in items:
        inputs, steps, _ = renamed(recipe, prefix)
        lines += [f"{n} = Parameter({_OV_TYPES[t]}, [{_dims(s)}])" for n, s, t in inputs]
        for s in steps:
            consts = OV_CONST.get(s.op, ())
            args = list(s.inputs) + [_ov_value(s.attr(c)) for c in consts if s.attr(c) is not None]
            args += [f"{k}={_ov_value(v)}" for k, v in s.attrs if k not in consts]
            lines.append(f"{s.output} = {s.op}({', '.join(args)})")
    return "\n".join(lines)


# --------------------------------------------------------------------------- ncnn


def _ncnn_line(layer: str, name: str, ins: Iterable[str], outs: Iterable[str], params: Iterable = ()) -> str:
    ins, outs = tuple(ins), tuple(outs)
    text = f"{layer:<24} {name:<24} {len(ins)} {len(outs)}"
    for blob in (*ins, *outs):
        text += f" {blob}"
    for k, v in params:
        text += f" {k}={v}"
    return text


def ncnn_text(items: Items) -> str:
    """The recipes as one ncnn ``.param`` file, as pnnx writes it."""
    lines: list[str] = []
    blobs = 0
    count: dict[str, int] = {}
    for recipe, prefix in items:
        inputs, steps, _ = renamed(recipe, prefix)
        for n, _, _ in inputs:
            lines.append(_ncnn_line("Input", n, (), (n,)))
        for s in steps:
            k = count.get(s.op, 0)
            count[s.op] = k + 1
            lines.append(_ncnn_line(s.op, f"{prefix}{s.op.lower()}_{k}", s.inputs, (s.output,), s.attrs))
        blobs += len(inputs) + len(steps)
    return f"{NCNN_MAGIC}\n{len(lines)} {blobs}\n" + "\n".join(lines)


# --------------------------------------------------------------------------- TFLite


def tflite_text(items: Items) -> str:
    """The recipes as TFLite builtins, one per line: each input's type and shape, then ``out = OP(ins)``,
    the constant shape input of RESHAPE and BROADCAST_TO written as ``shape=[...]``."""
    lines = []
    for recipe, prefix in items:
        inputs, steps, _ = renamed(recipe, prefix)
        lines += [f"{n} = input({t}, [{_dims(s)}])" for n, s, t in inputs]
        for s in steps:
            args = list(s.inputs) + [f"{k}=[{_dims(v)}]" for k, v in s.attrs]
            lines.append(f"{s.output} = {s.op}({', '.join(args)})")
    return "\n".join(lines)


#: Target -> its text of (recipe, prefix) pairs.
TEXT: dict[str, Callable[[Items], str]] = {"numpy": _numpy_text, "onnx": onnx_text, "openvino": _openvino_text,
                                           "ncnn": ncnn_text, "tflite": tflite_text}
