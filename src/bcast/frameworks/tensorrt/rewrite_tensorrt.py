"""Rewrite target ``tensorrt``: every input of every broadcasting node at the rank of its output
(:mod:`bcast.models.equal_ranks`), so that the model's elementwise ops need no rank equalisation of the
converter's (the rule ``equal-rank`` of TensorRT's IElementWiseLayer)."""

from __future__ import annotations

from typing import Any

from ...models.equal_ranks import rewrite_equal_ranks
from ...models.lint import checker
from ...models.onnx_model import Shapes
from ...models.target import Site

__all__ = ["TARGET", "rewrite"]

TARGET = "tensorrt"


def rewrite(model: Any) -> tuple[Any, list[str], list[Site]]:
    shapes = Shapes(model)
    return rewrite_equal_ranks(model, checker(TARGET, shapes, model.graph))
