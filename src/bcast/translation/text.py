"""The text of recipes in each target's own syntax: a numpy expression, ONNX's textual syntax,
OpenVINO ops, an ncnn ``.param`` file, TFLite builtins, TensorRT's Python network definition,
TOSA and StableHLO in MLIR.

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

__all__ = ["NCNN_MAGIC", "ONNX_IR", "ONNX_OPSET", "OV_CONST", "TEXT", "mlir_type", "ncnn_text", "onnx_text",
           "prefixed", "renamed", "stablehlo_text", "tensorrt_text", "tflite_text", "tosa_text"]

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
_ONNX_CONST = {"Unsqueeze": "axes", "Reshape": "shape", "Expand": "shape", "Tile": "repeats"}
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


# --------------------------------------------------------------------------- TensorRT

_TRT_TYPES = {"float32": "trt.float32", "bool": "trt.bool"}


def _py_tuple(shape: Sequence[Any]) -> str:
    """A Python tuple of dims (-1 for a dim that is not static, as TensorRT writes a dynamic one)."""
    dims = [str(d) if is_static(d) else "-1" for d in shape]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"


def tensorrt_text(items: Items) -> str:
    """The recipes as TensorRT Python network-definition calls (``network``: an ``INetworkDefinition``,
    ``trt``: the ``tensorrt`` module): ``add_input``, ``add_shuffle`` with ``reshape_dims``,
    ``add_elementwise``, ``add_select``, ``add_parametric_relu``, ``add_slice``, ``mark_output``."""
    lines: list[str] = []
    for recipe, prefix in items:
        inputs, steps, output = renamed(recipe, prefix)
        lines += [f'{n} = network.add_input("{n}", {_TRT_TYPES[t]}, {_py_tuple(s)})' for n, s, t in inputs]
        for s in steps:
            args = ", ".join(s.inputs)
            if s.op == "IShuffleLayer":
                lines += [f"{s.output}_layer = network.add_shuffle({args})",
                          f"{s.output}_layer.reshape_dims = {_py_tuple(s.attr('reshape_dims'))}"]
            elif s.op == "IElementWiseLayer":
                lines.append(f"{s.output}_layer = network.add_elementwise({args}, "
                             f"trt.ElementWiseOperation.{s.attr('op')})")
            elif s.op == "ISliceLayer":
                start, shape, stride = (_py_tuple(s.attr(k)) for k in ("start", "shape", "stride"))
                lines.append(f"{s.output}_layer = network.add_slice({args}, {start}, {shape}, {stride})")
            else:
                call = {"ISelectLayer": "add_select", "IParametricReLULayer": "add_parametric_relu"}[s.op]
                lines.append(f"{s.output}_layer = network.{call}({args})")
            lines.append(f"{s.output} = {s.output}_layer.get_output(0)")
        lines.append(f"network.mark_output({output})")
    return "\n".join(lines)


# --------------------------------------------------------------------------- MLIR: TOSA and StableHLO

_MLIR_TYPES = {"float32": "f32", "bool": "i1"}


def mlir_type(shape: Sequence[Any], dtype: str) -> str:
    """An MLIR ranked tensor type: ``tensor<2x3xf32>``, ``?`` for a dim that is not static, ``tensor<f32>``
    for rank 0."""
    dims = "".join(f"{d if is_static(d) else '?'}x" for d in shape)
    return f"tensor<{dims}{_MLIR_TYPES[dtype]}>"


def _mlir_func(items: Items, body: Callable[[Step, dict, list[str]], None]) -> str:
    """One ``func.func @main``: every recipe's inputs as arguments, its output among the results;
    ``body(step, types, lines)`` writes a step (``types``: value name -> its MLIR type, kept up to date)."""
    args: list[str] = []
    results: list[str] = []
    lines: list[str] = []
    outs: list[str] = []
    for recipe, prefix in items:
        inputs, steps, output = renamed(recipe, prefix)
        types = {n: mlir_type(s, t) for n, s, t in inputs}
        args += [f"%{n}: {types[n]}" for n, _, _ in inputs]
        for s in steps:
            body(s, types, lines)
        results.append(types[output])
        outs.append(f"%{output}")
    head = f"func.func @main({', '.join(args)}) -> "
    head += results[0] if len(results) == 1 else f"({', '.join(results)})"
    lines.append(f"return {', '.join(outs)} : {', '.join(results)}")
    return head + " {\n" + "\n".join(f"  {line}" for line in lines) + "\n}"


def _shape_of(mlir: str) -> list[str]:
    return mlir[len("tensor<"):-1].split("x")[:-1]


def _result_type(s: Step, types: dict) -> str:
    """The type of an element-wise step's result: each dim the one that is not 1 (equal rank), the element
    type the last input's (SELECT's pred is i1, its result the values')."""
    shapes = [_shape_of(types[x]) for x in s.inputs]
    dims = [next((d for d in col if d != "1"), "1") for col in zip(*shapes)]
    element = types[s.inputs[-1]].rsplit("x", 1)[-1].rstrip(">").split("<")[-1]
    return f"tensor<{''.join(d + 'x' for d in dims)}{element}>"


def _const_shape(name: str, values: Sequence[int]) -> str:
    return (f"%{name} = tosa.const_shape {{values = dense<[{_dims(values, ', ')}]> : tensor<{len(values)}xindex>}} "
            f": () -> !tosa.shape<{len(values)}>")


def _tosa_step(s: Step, types: dict, lines: list[str]) -> None:
    args = [f"%{x}" for x in s.inputs]
    arg_types = [types[x] for x in s.inputs]
    if s.op == "RESHAPE":
        new = s.attr("new_shape")
        lines.append(_const_shape(f"{s.output}_shape", new))
        types[s.output] = mlir_type(new, "bool" if types[s.inputs[0]].endswith("i1>") else "float32")
        args.append(f"%{s.output}_shape")
        arg_types.append(f"!tosa.shape<{len(new)}>")
    elif s.op == "TILE":
        multiples = s.attr("multiples")
        lines.append(_const_shape(f"{s.output}_multiples", multiples))
        shape = [str(int(d) * m) for d, m in zip(_shape_of(types[s.inputs[0]]), multiples)]
        types[s.output] = f"tensor<{''.join(d + 'x' for d in shape)}f32>"
        args.append(f"%{s.output}_multiples")
        arg_types.append(f"!tosa.shape<{len(multiples)}>")
    else:
        types[s.output] = _result_type(s, types)
        if s.op == "MUL":  # its shift operand (TOSA 1.0): 0 for floats
            lines.append(f'%{s.output}_shift = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> '
                         "tensor<1xi8>")
            args.append(f"%{s.output}_shift")
            arg_types.append("tensor<1xi8>")
    lines.append(f"%{s.output} = tosa.{s.op.lower()} {', '.join(args)} : ({', '.join(arg_types)}) -> "
                 f"{types[s.output]}")


def tosa_text(items: Items) -> str:
    """The recipes as TOSA 1.0 in MLIR's TOSA dialect (llvm-project ``mlir/include/mlir/Dialect/Tosa/IR/
    TosaOps.td``: ``tosa.reshape`` and ``tosa.tile`` take a ``!tosa.shape`` from ``tosa.const_shape``,
    ``tosa.mul`` its ``shift``), one ``func.func @main``."""
    return _mlir_func(items, _tosa_step)


def _stablehlo_step(s: Step, types: dict, lines: list[str]) -> None:
    x = types[s.inputs[0]]
    if s.op in ("reshape", "broadcast_in_dim"):
        element = "bool" if x.endswith("i1>") else "float32"
        types[s.output] = mlir_type(s.attr("shape"), element)
        dims = f", dims = [{_dims(s.attr('broadcast_dimensions'), ', ')}]" if s.op == "broadcast_in_dim" else ""
        lines.append(f"%{s.output} = stablehlo.{s.op} %{s.inputs[0]}{dims} : ({x}) -> {types[s.output]}")
        return
    types[s.output] = types[s.inputs[-1]]
    args = ", ".join(f"%{v}" for v in s.inputs)
    shown = f"{x}, {types[s.output]}" if s.op == "select" else types[s.output]  # select: pred's type, then the result's
    lines.append(f"%{s.output} = stablehlo.{s.op} {args} : {shown}")


def stablehlo_text(items: Items) -> str:
    """The recipes in StableHLO's MLIR dialect (openxla/stablehlo ``docs/spec.md``'s pretty syntax), one
    ``func.func @main``."""
    return _mlir_func(items, _stablehlo_step)


#: Target -> its text of (recipe, prefix) pairs.
TEXT: dict[str, Callable[[Items], str]] = {"numpy": _numpy_text, "onnx": onnx_text, "openvino": _openvino_text,
                                           "ncnn": ncnn_text, "tflite": tflite_text, "tensorrt": tensorrt_text,
                                           "tosa": tosa_text, "stablehlo": stablehlo_text}
