"""Rewrite target ``onnx2ncnn``: the nodes lint flags for the legacy converter
(:mod:`bcast.frameworks.ncnn.lint_onnx2ncnn`), with their operands reshaped to their aligned
shapes: an initializer into a new initializer, a computed operand by a Reshape with a constant
shape (not Unsqueeze: onnx2ncnn makes it an ExpandDims that breaks)."""

from __future__ import annotations

from typing import Any

from ...core._format import format_shape
from ...models.edit import Editor, walk
from ...models.lint import checker
from ...models.onnx_model import Shapes
from ...models.target import Site, Target
from .lint_onnx2ncnn import Onnx2ncnn

__all__ = ["TARGET", "rewrite"]

TARGET = "onnx2ncnn"


def _edit(site: Site, node: Any, editor: Editor, changes: list[str], blocked: list[Site],
          checks: Target | None) -> None:
    """A node lint flags for onnx2ncnn, that a reshape makes right: its initializers reshaped to their aligned
    shapes (new initializers), its computed inputs Reshaped; nothing else is touched."""
    plan = site.plan
    assert isinstance(checks, Onnx2ncnn)
    if plan is None or not any(row.kind in ("differs", "unsupported") for row in checks.check(site)):
        return
    steps = checks.steps(site)
    if steps is None:
        return
    arrays = {}  # the initializers whose elements fill the new shape (a Constant's value: a Reshape, folded too)
    for i, shape, how in steps:
        array = checks.shapes.constant(site.inputs[i]) if how == "initializer" else None
        if array is not None and array.size == _size(shape):
            arrays[i] = array
    for i, shape, _ in steps:
        name = site.inputs[i]
        if i in arrays:
            node.input[i] = editor.reshaped(name, arrays[i], shape)
            what = "initializer"
        else:
            node.input[i] = editor.reshape(name, shape)
            what = "Reshape"
        changes.append(f"{site.label}: {what} {plan.names[i]} {name} {format_shape(plan.inputs[i])} "
                       f"-> {format_shape(shape)}")


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def rewrite(model: Any) -> tuple[Any, list[str], list[Site]]:
    """The nodes lint flags for onnx2ncnn, with reshaped initializers and Reshapes."""
    shapes = Shapes(model)
    changes, _ = walk(model, shapes, _edit, checker(TARGET, shapes, model.graph), functions=True)
    return model, changes, []
