"""Rewrite target ``openvino``: the inputs OpenVINO aligns differently from the spec (PRelu's
per-channel slope heuristic) get the output's rank, and OpenVINO then aligns as the spec does."""

from __future__ import annotations

from typing import Any

from ...models.edit import Editor, align_inputs, walk
from ...models.lint import checker
from ...models.onnx_model import Shapes
from ...models.target import Site, Target

__all__ = ["TARGET", "rewrite"]

TARGET = "openvino"


def _edit(site: Site, node: Any, editor: Editor, changes: list[str], blocked: list[Site],
          checks: Target | None) -> None:
    """A node OpenVINO aligns differently from the spec: its inputs get the output's rank."""
    if site.plan is not None and checks is not None and any(
            row.kind == "differs" and "aligns the inputs" in row.reason for row in checks.check(site)):
        align_inputs(site, node, editor, changes)


def rewrite(model: Any) -> tuple[Any, list[str], list[Site]]:
    shapes = Shapes(model)
    changes, _ = walk(model, shapes, _edit, checker(TARGET, shapes, model.graph), functions=True)
    return model, changes, []
