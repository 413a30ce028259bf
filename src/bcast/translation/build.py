"""The steps of a recipe, one builder per target: the reshapes the search chose, then the op
(or the target's broadcast-to op) in the form it chose."""

from __future__ import annotations

import keyword
from collections.abc import Callable, Sequence

from ..core._format import format_shape
from ..core.dims import is_static
from ..core.plan import Plan
from .forms import Form, Reshape
from .ops import Op, tensors
from .recipe import Recipe, TranslationError
from .step import Step

__all__ = ["BUILD", "build_stablehlo"]

Make = Callable[[Reshape, str, str], Step]


def _names(plan: Plan, target: str) -> list[str]:
    """The recipe's input names: ncnn's blobs in0, in1...; else the plan's names, lower case,
    made valid Python names (``else`` is ``else_``), none the output's ``y`` (TFLite's SELECT has an input y)."""
    if target == "ncnn":
        return [f"in{i}" for i in range(len(tensors(plan)))]
    out = []
    for i in tensors(plan):
        name = "".join(ch if ch.isalnum() else "_" for ch in plan.names[i].lower()) or f"x{i}"
        clash = keyword.iskeyword(name) or name in ("np", "y") or name[0].isdigit()  # y: the recipe's output
        out.append(name + "_" if clash else name)
    return out


def _dtype(op: Op, i: int) -> str:
    return "bool" if op.kind == "where" and i == 0 else "float32"


def _recipe(plan: Plan, op: Op, target: str, op_name: str, names: list[str], steps: list[Step],
            avoided: tuple) -> Recipe:
    inputs = tuple((n, tuple(plan.inputs[i]), _dtype(op, i)) for n, i in zip(names, tensors(plan)))
    return Recipe(target, plan, op_name, inputs, tuple(steps), steps[-1].output, tuple(plan.shape), avoided)


def _reshape_steps(plan: Plan, target: str, names: list[str], reshapes: Sequence[Reshape],
                   make: Make) -> tuple[list[Step], list[str]]:
    """One step per reshaped input (``make(reshape, src, dst)``); the names the op reads."""
    values, steps = list(names), list[Step]()
    pos = {i: k for k, i in enumerate(tensors(plan))}
    for r in reshapes:
        k = pos[r.i]
        dst = str(len(names) + len(steps)) if target == "ncnn" else f"{names[k]}_1"  # ncnn: blobs numbered as pnnx does
        steps.append(make(r, names[k], dst))
        values[k] = dst
    return steps, values


def _build_numpy(plan: Plan, op: Op, form: Form, reshapes: Sequence[Reshape], avoided: tuple) -> Recipe:
    def make(r: Reshape, src: str, dst: str) -> Step:
        if all(is_static(d) for d in r.shape):
            return Step("reshape", (src,), dst, (("shape", r.shape),))
        return Step("expand_dims", (src,), dst, (("axis", r.axes),))

    names = _names(plan, "numpy")
    steps, values = _reshape_steps(plan, "numpy", names, reshapes, make)
    node = dict(form.node)
    if op.kind == "broadcast":
        steps.append(Step("broadcast_to", tuple(values), "y", (("shape", form.operands[0]),)))
    elif op.kind == "gemm":
        trans = (("transA", node["transA"]), ("transB", node["transB"]))
        steps.append(Step("matmul", tuple(values[:2]), "y" if len(values) == 2 else "ab", trans))
        if len(values) == 3:
            steps.append(Step("add", ("ab", values[2]), "y"))
    else:
        steps.append(Step(op.numpy, tuple(values), "y"))
    return _recipe(plan, op, "numpy", op.numpy, names, steps, avoided)


def _build_onnx(plan: Plan, op: Op, form: Form, reshapes: Sequence[Reshape], avoided: tuple) -> Recipe:
    def make(r: Reshape, src: str, dst: str) -> Step:
        if r.axes is not None:
            return Step("Unsqueeze", (src,), dst, (("axes", r.axes),))
        return Step("Reshape", (src,), dst, (("shape", r.shape),))

    names = _names(plan, "onnx")
    steps, values = _reshape_steps(plan, "onnx", names, reshapes, make)
    attrs: tuple = ()
    if op.kind == "broadcast":
        attrs = (("shape", form.operands[1]),)
    elif op.kind == "gemm":
        attrs = tuple((k, int(v)) for k, v in form.node if v)
    steps.append(Step(op.onnx, tuple(values), "y", attrs))
    return _recipe(plan, op, "onnx", op.onnx, names, steps, avoided)


def _build_openvino(plan: Plan, op: Op, form: Form, reshapes: Sequence[Reshape], avoided: tuple) -> Recipe:
    def make(r: Reshape, src: str, dst: str) -> Step:
        if r.axes is not None:
            return Step("Unsqueeze", (src,), dst, (("axes", r.axes),))
        return Step("Reshape", (src,), dst, (("shape", r.shape), ("special_zero", False)))

    names = _names(plan, "openvino")
    steps, values = _reshape_steps(plan, "openvino", names, reshapes, make)
    node = dict(form.node)
    if op.kind == "broadcast":
        target = form.operands[0] if isinstance(form.operands[0], tuple) else form.operands[1]
        attrs = (("target_shape", target), *form.node)
        steps.append(Step("Broadcast", tuple(values), "y", attrs))
    elif op.kind == "gemm":
        trans = (("transpose_a", node["transA"]), ("transpose_b", node["transB"]))
        steps.append(Step("MatMul", tuple(values[:2]), "y" if len(values) == 2 else "ab", trans))
        if len(values) == 3:
            steps.append(Step("Add", ("ab", values[2]), "y", (("auto_broadcast", "numpy"),)))
    else:
        steps.append(Step(op.openvino, tuple(values), "y", form.node))
    return _recipe(plan, op, "openvino", op.openvino, names, steps, avoided)


#: ncnn's Reshape params of a shape in numpy order, by rank: w, h, d, c.
_NCNN_RESHAPE = {1: ("0",), 2: ("1", "0"), 3: ("2", "1", "0"), 4: ("2", "11", "1", "0")}
_NCNN_ORDER = ("0", "1", "11", "2")


def _build_ncnn(plan: Plan, op: Op, form: Form, reshapes: Sequence[Reshape], avoided: tuple) -> Recipe:
    def make(r: Reshape, src: str, dst: str) -> Step:
        keys = _NCNN_RESHAPE[len(r.shape)]
        params = tuple(sorted(zip(keys, r.shape), key=lambda kv: _NCNN_ORDER.index(kv[0])))
        return Step("Reshape", (src,), dst, params)

    names = _names(plan, "ncnn")
    steps, values = _reshape_steps(plan, "ncnn", names, reshapes, make)
    steps.append(Step("BinaryOp", tuple(values), "out0", (("0", op.ncnn),)))
    return _recipe(plan, op, "ncnn", op.ncnn_name or op.name, names, steps, avoided)


def _build_tflite(plan: Plan, op: Op, form: Form, reshapes: Sequence[Reshape], avoided: tuple) -> Recipe:
    def make(r: Reshape, src: str, dst: str) -> Step:
        return Step("RESHAPE", (src,), dst, (("shape", r.shape),))

    names = _names(plan, "tflite")
    steps, values = _reshape_steps(plan, "tflite", names, reshapes, make)
    assert op.tflite is not None  # (the precheck refuses the others)
    attrs = (("shape", form.operands[0]),) if op.kind == "broadcast" else ()
    steps.append(Step(op.tflite, tuple(values), "y", attrs))
    return _recipe(plan, op, "tflite", op.tflite, names, steps, avoided)


def _build_tensorrt(plan: Plan, op: Op, form: Form, reshapes: Sequence[Reshape], avoided: tuple) -> Recipe:
    """IShuffleLayer reshapes (``reshape_dims``: the input with 1s prepended or put where it has no axis), then
    IElementWiseLayer (its ElementWiseOperation), ISelectLayer or IParametricReLULayer; Expand: an ISliceLayer
    of the output's shape with stride 0 along the stretched axes (onnx-tensorrt's Expand importer does so)."""
    def make(r: Reshape, src: str, dst: str) -> Step:
        return Step("IShuffleLayer", (src,), dst, (("reshape_dims", r.shape),))

    names = _names(plan, "tensorrt")
    steps, values = _reshape_steps(plan, "tensorrt", names, reshapes, make)
    if op.kind == "broadcast":
        given = _given_shape(plan, reshapes)
        out = tuple(plan.shape)
        stride = tuple(0 if d == 1 and o != 1 else 1 for d, o in zip(given, out))
        steps.append(Step("ISliceLayer", tuple(values), "y", (("start", (0,) * len(out)), ("shape", out),
                                                               ("stride", stride))))
        return _recipe(plan, op, "tensorrt", "Slice", names, steps, avoided)
    assert op.tensorrt is not None  # (the precheck refuses Gemm)
    layer = {"where": "ISelectLayer", "prelu": "IParametricReLULayer"}.get(op.kind, "IElementWiseLayer")
    attrs = (("op", op.tensorrt),) if layer == "IElementWiseLayer" else ()
    steps.append(Step(layer, tuple(values), "y", attrs))
    return _recipe(plan, op, "tensorrt", op.tensorrt, names, steps, avoided)


def _given_shape(plan: Plan, reshapes: Sequence[Reshape]) -> tuple:
    """Data's shape as the broadcast op takes it: reshaped, or as it is."""
    for r in reshapes:
        if r.i == 0:
            return tuple(r.shape)
    return tuple(plan.inputs[0])


def _build_tosa(plan: Plan, op: Op, form: Form, reshapes: Sequence[Reshape], avoided: tuple) -> Recipe:
    """TOSA RESHAPE (``new_shape``: a ``tosa.const_shape``), then the operator (MUL with its ``shift`` 0); Div of
    floats: RECIPROCAL of the divisor, then MUL (TOSA's INTDIV is for integers); Expand: TILE, the data
    reshaped to the output's rank, ``multiples`` the output's dim where the data's is 1 and differs."""
    def make(r: Reshape, src: str, dst: str) -> Step:
        return Step("RESHAPE", (src,), dst, (("new_shape", r.shape),))

    names = _names(plan, "tosa")
    steps, values = _reshape_steps(plan, "tosa", names, reshapes, make)
    if op.kind == "broadcast":
        given = _given_shape(plan, reshapes)
        multiples = tuple(o if d == 1 else 1 for d, o in zip(given, plan.shape))
        steps.append(Step("TILE", tuple(values), "y", (("multiples", multiples),)))
        return _recipe(plan, op, "tosa", "TILE", names, steps, avoided)
    if op.name == "Div":
        steps.append(Step("RECIPROCAL", (values[1],), f"{values[1]}_inv"))
        steps.append(Step("MUL", (values[0], f"{values[1]}_inv"), "y", (("shift", 0),)))
        return _recipe(plan, op, "tosa", "RECIPROCAL+MUL", names, steps, avoided)
    assert op.tosa is not None  # (the precheck refuses PRelu and Gemm)
    steps.append(Step(op.tosa, tuple(values), "y", (("shift", 0),) if op.tosa == "MUL" else ()))
    return _recipe(plan, op, "tosa", op.tosa, names, steps, avoided)


def _static(shape: Sequence) -> bool:
    return all(is_static(d) for d in shape)


def _as_is(plan: Plan, op: Op, i: int) -> bool:
    """Whether StableHLO's op takes input ``i`` as it is: of the result's shape, axes in place (or select's
    rank-0 ``pred``, spec "select" C1)."""
    if op.kind == "where" and i == 0 and not plan.inputs[0]:
        return True
    return op.kind != "broadcast" and plan.axis_maps[i] == tuple(range(len(plan.shape))) and (
        tuple(plan.inputs[i]) == tuple(plan.shape))


def build_stablehlo(plan: Plan, op: Op) -> Recipe:
    """StableHLO has no implicit broadcasting (spec "add" C1): each input not already of the result's shape is
    ``broadcast_in_dim`` to it (``broadcast_dimensions``: the output axis of each of its axes, in any order: a
    transposing source plan too), after a ``reshape`` that drops the size-1 axes landing on none (PDPD's
    trailing 1s); then the op.  Expand is ``broadcast_in_dim`` itself.  The result type of both is static."""
    names = _names(plan, "stablehlo")
    steps: list[Step] = []
    values = list(names)
    for k, i in enumerate(tensors(plan)):
        if _as_is(plan, op, i):
            continue
        amap = plan.axis_maps[i]
        src = names[k]
        if None in amap:
            kept = tuple(d for d, ax in zip(plan.inputs[i], amap) if ax is not None)
            if not _static(kept):
                raise TranslationError(plan, "stablehlo", f"{plan.names[i]} {format_shape(plan.inputs[i])} must be "
                                       f"reshaped to {format_shape(kept)} (stablehlo.reshape), which needs static dims")
            steps.append(Step("reshape", (src,), f"{src}_0", (("shape", kept),)))
            src = f"{src}_0"
        if not _static(plan.shape):
            raise TranslationError(plan, "stablehlo", f"{plan.names[i]} {format_shape(plan.inputs[i])} must be "
                                   f"broadcast to {format_shape(plan.shape)}: broadcast_in_dim's result type is static "
                                   "(the recipe does not write dynamic_broadcast_in_dim)")
        dims = tuple(ax for ax in amap if ax is not None)
        dst = "y" if op.kind == "broadcast" else f"{names[k]}_1"
        steps.append(Step("broadcast_in_dim", (src,), dst, (("broadcast_dimensions", dims),
                                                           ("shape", tuple(plan.shape)))))
        values[k] = dst
    if op.kind != "broadcast":
        assert op.stablehlo is not None  # (the precheck refuses PRelu and Gemm)
        steps.append(Step(op.stablehlo, tuple(values), "y"))
    return _recipe(plan, op, "stablehlo", op.stablehlo or op.name, names, steps, ())


#: Target -> its builder ``(plan, op, form, reshapes, avoided) -> Recipe``.
BUILD: dict[str, Callable[[Plan, Op, Form, Sequence[Reshape], tuple], Recipe]] = {
    "numpy": _build_numpy, "onnx": _build_onnx, "openvino": _build_openvino, "ncnn": _build_ncnn,
    "tflite": _build_tflite, "tensorrt": _build_tensorrt, "tosa": _build_tosa}
