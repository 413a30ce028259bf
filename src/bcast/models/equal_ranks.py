"""The rewrite of the equal-rank targets (``bcast rewrite --target tensorrt|tosa``): every input of every
broadcasting node gets the rank of the node's output, at the place the spec aligns it -- an initializer
by a new initializer of the aligned dims (the old one is never changed: other nodes may read it; it is
dropped when nothing reads it any more), any other value by an Unsqueeze (axes an input from opset 13,
an attribute before).  Left alone: Expand's shape input (a shape, not a tensor that broadcasts), Gemm's
A and B (2-D by the spec), nodes of the opset 1-6 broadcast/axis forms (their alignment is not numpy's:
``--target onnx`` upgrades them), and nodes whose spec refuses them.  Nothing else changes, so
onnxruntime computes the new model's outputs bit for bit as the old one's
(``tests/models/test_rewrite_equal_ranks.py`` checks it on every corpus model).
"""

from __future__ import annotations

from typing import Any

from .edit import Editor, describe, walk  # first: without onnx, its one-line InputError

from ..core._format import format_shape  # noqa: E402
from .graphs import subgraphs  # noqa: E402
from .target import Site, Target  # noqa: E402

__all__ = ["rewrite_equal_ranks"]


def _inputs(site: Site) -> list[int]:
    """The inputs whose rank the rewrite may raise."""
    skip = {site.op.shape_input} if site.op.shape_input is not None else set()
    if site.op.name == "Gemm":
        skip |= {0, 1}
    return [i for i, name in enumerate(site.inputs) if name and i not in skip]


def rewrite_equal_ranks(model: Any, checks: Target) -> tuple[Any, list[str], list[Site]]:
    """``model`` (changed in place) with every broadcasting node's inputs of equal rank: (model, changes, [])."""
    overridable = {v.name for v in model.graph.input}  # an initializer listed as a graph input may be fed
    replaced: set[str] = set()

    def edit(site: Site, node: Any, editor: Editor, changes: list[str], blocked: list[Site],
             checker: Target | None) -> None:
        plan = site.plan
        if plan is None or site.legacy:
            return
        shapes = checker.shapes if checker is not None else None
        for i in _inputs(site):
            if len(plan.inputs[i]) >= plan.ndim:
                continue
            name = site.inputs[i]
            aligned = plan.aligned_shape(i)
            array = None if shapes is None or name in overridable else shapes.constant(name)
            if array is not None and not editor.constants and array.shape == tuple(plan.inputs[i]):
                node.input[i] = editor.reshaped(name, array, aligned)
                replaced.add(name)
                changes.append(f"{site.label}: initializer {plan.names[i]} {name} {format_shape(plan.inputs[i])} "
                               f"-> {format_shape(aligned)}")
            else:
                node.input[i] = editor.unsqueeze(name, plan.new_axes(i))
                changes.append(describe(site, i, plan, aligned))

    changes, blocked = walk(model, checks.shapes, edit, checks, functions=True)
    _drop_unread(model, replaced)
    return model, changes, blocked


def _drop_unread(model: Any, names: set[str]) -> None:
    """Drop the main graph's initializers among ``names`` that no node of any graph reads any more."""
    if not names:
        return
    read: set[str] = {v.name for v in model.graph.output}
    stack = [model.graph, *(f for f in model.functions)]
    while stack:
        g = stack.pop()
        for n in g.node:
            read.update(n.input)
            stack += [sub for _, sub in subgraphs(n)]
    keep = [t for t in model.graph.initializer if t.name not in names or t.name in read]
    if len(keep) != len(model.graph.initializer):
        del model.graph.initializer[:]
        model.graph.initializer.extend(keep)


