"""The ``coreml`` column of ``bcast conformance``: the output shape coremltools' MIL builder gives ``add``
(the ``numpy`` rule) against bcast.coreml's plan.  Core ML's runtime runs only on macOS: shapes only."""

from __future__ import annotations

from typing import Any

__all__ = ["CoreML"]


class CoreML:
    """MIL's add, typed by coremltools (bcast.frameworks.coreml.oracle.infer_shape)."""

    def __init__(self, column: str = "coreml"):
        self.column = column

    def inputs(self, case: Any, b: Any):
        from ..frameworks.coreml.ops import MAX_RANK

        shapes = case.numpy_shapes
        if len(shapes) != 2 or any(len(s) > MAX_RANK for s in shapes):
            return None  # add takes two inputs; Core ML holds no tensor of rank 6 (coreml-mil-rank)
        if case.attrs.get("max_rank") not in (None, MAX_RANK):
            return None  # another limit than Core ML's
        return (shapes,), {}

    def expected(self, b: Any, inputs, attrs):
        from ..frameworks.coreml import ops as coreml

        (shapes,) = inputs
        return coreml.plan(b.op, *shapes)

    def run_all(self, b: Any, jobs: list) -> list:
        from ..frameworks.coreml import oracle

        return oracle.infer_shapes(b.op, [shapes for (shapes,), _ in jobs])
