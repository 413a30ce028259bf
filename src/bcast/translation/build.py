"""The steps of a recipe, one builder per target: the reshapes the search chose, then the op
(or the target's broadcast-to op) in the form it chose."""

from __future__ import annotations

import keyword
from collections.abc import Callable, Sequence

from ..core.dims import is_static
from ..core.plan import Plan
from .forms import Form, Reshape
from .ops import Op, tensors
from .recipe import Recipe
from .step import Step

__all__ = ["BUILD"]

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


#: Target -> its builder ``(plan, op, form, reshapes, avoided) -> Recipe``.
BUILD: dict[str, Callable[[Plan, Op, Form, Sequence[Reshape], tuple], Recipe]] = {
    "numpy": _build_numpy, "onnx": _build_onnx, "openvino": _build_openvino, "ncnn": _build_ncnn,
    "tflite": _build_tflite}
