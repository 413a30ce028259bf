"""Rewrite target ``onnx``: the opset 1-6 ``broadcast``/``axis`` forms upgraded to opset 7's numpy
broadcasting (see :mod:`bcast.models.rewrite`), then ``onnx.version_converter`` for the other ops."""

from __future__ import annotations

from typing import Any

import onnx

from ...core.errors import InputError
from ...models.edit import Editor, describe, drop_attrs, walk
from ...models.onnx_model import Shapes
from ...models.target import Site, Target

__all__ = ["TARGET", "UPGRADE_OPSET", "rewrite"]

TARGET = "onnx"
#: The opset the legacy forms are upgraded to (the first with numpy broadcasting).
UPGRADE_OPSET = 7


def _edit(site: Site, node: Any, editor: Editor, changes: list[str], blocked: list[Site],
          checker: Target | None) -> None:
    if site.version.rule == "onnx-legacy":
        if site.plan is None:
            blocked.append(site)
        else:
            _upgrade_legacy(site, node, editor, changes)


def rewrite(model: Any) -> tuple[Any, list[str], list[Site]]:
    """The legacy broadcast/axis forms upgraded, then opset 7 by onnx's converter."""
    shapes = Shapes(model)
    if shapes.opset >= UPGRADE_OPSET:
        return model, [], []
    changes, blocked = walk(model, shapes, _edit)
    if blocked:
        return model, changes, blocked
    outputs = {v.name for v in model.graph.output}
    model.graph.value_info.extend(v for v in shapes.value_infos() if v.name not in outputs)  # the converter needs them
    try:
        model = onnx.version_converter.convert_version(model, UPGRADE_OPSET)
    except Exception as e:  # the converter refuses some other op
        raise InputError(f"onnx's version converter cannot take the model to opset {UPGRADE_OPSET}: "
                         f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    changes.append(f"opset {shapes.opset} -> {UPGRADE_OPSET} (onnx.version_converter, for the other ops)")
    return model, changes, []


def _upgrade_legacy(site: Site, node: Any, editor: Editor, changes: list[str]) -> None:
    """B placed at axis gets the trailing 1s numpy's right alignment needs; broadcast/axis go."""
    plan = site.plan
    assert plan is not None
    a, b = plan.inputs
    if site.attrs.get("broadcast") and not all(d == 1 for d in b):
        placed = plan.axis_maps[1][0] if b else len(a)
        assert placed is not None  # the legacy rule places every axis of B
        start = placed
        trailing = len(a) - start - len(b)
        if trailing > 0:
            axes = tuple(range(len(b), len(b) + trailing))
            node.input[1] = editor.unsqueeze(site.inputs[1], axes)
            changes.append(describe(site, 1, plan, tuple(b) + (1,) * trailing))
    drop_attrs(node, ("broadcast", "axis"))
    changes.append(f"{site.label}: {site.op.name}-{site.version.since} broadcast/axis -> numpy broadcasting")
