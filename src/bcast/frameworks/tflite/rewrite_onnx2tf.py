"""Rewrite target ``onnx2tf``: every input of every broadcasting node at the rank of its output
(:mod:`bcast.models.equal_ranks`), the ONNX model's values unchanged.  onnx2tf transposes a constant of the
activation's rank itself (its ``get_constant_or_variable``, under ``before_op_output_shape_trans``), which
it does not do for a lower-rank one on the ops that do not reconcile layouts (Max, Min, Pow...): a
``(C,1,1)`` constant becomes ``(1,C,1,1)`` and converts right.  Measured with onnx2tf 1.29.24 (the
rewritten corpus models, converted and run in LiteRT: tests/models/test_onnx2tf_corpus.py); the nodes
``lint --target onnx2tf`` still flags after it are left as they are (the rewrite's ``blocked``)."""

from __future__ import annotations

from typing import Any

from ...models.equal_ranks import rewrite_equal_ranks
from ...models.lint import checker
from ...models.onnx_model import Shapes
from ...models.target import Site

__all__ = ["TARGET", "rewrite"]

TARGET = "onnx2tf"


def rewrite(model: Any) -> tuple[Any, list[str], list[Site]]:
    shapes = Shapes(model)
    return rewrite_equal_ranks(model, checker(TARGET, shapes, model.graph))
