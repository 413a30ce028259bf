"""Core ML's conformance column: the output shape coremltools' MIL builder gives ``add`` on the ``numpy``
rule's cases, against bcast.coreml's plan (:mod:`bcast.conformance.columns`).  Core ML's runtime runs only
on macOS: shapes only."""

from __future__ import annotations

from ...conformance.columns import Binding, Case, Column
from .deviations import CoreMLRuntime

__all__ = ["COLUMNS"]


def _bindings(column: str) -> dict:
    return {"numpy": Binding(column, "numpy", "add")}


class _CoreML:
    """MIL's add, typed by coremltools (bcast.frameworks.coreml.oracle.infer_shapes)."""

    def __init__(self, column: str = "coreml"):
        self.column = column

    def inputs(self, case: Case, b: Binding):
        from .ops import MAX_RANK

        shapes = case.numpy_shapes
        if len(shapes) != 2 or any(len(s) > MAX_RANK for s in shapes):
            return None  # add takes two inputs; Core ML holds no tensor of rank 6 (coreml-mil-rank)
        if case.attrs.get("max_rank") not in (None, MAX_RANK):
            return None  # a case of another limit than Core ML's
        return (shapes,), {}

    def expected(self, b: Binding, inputs, attrs):
        from . import ops as coreml

        (shapes,) = inputs
        return coreml.plan(b.op, *shapes)

    def run_all(self, b: Binding, jobs: list) -> list:
        from . import oracle

        return oracle.infer_shapes(b.op, [shapes for (shapes,), _ in jobs])


COLUMNS = (
    Column("coreml", "coreml", "coremltools", "coremltools MIL type inference", "shape",
           (CoreMLRuntime.MIL_BUILDER,), _bindings, _CoreML),
)
