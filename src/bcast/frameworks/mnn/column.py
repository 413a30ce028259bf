"""MNN's conformance column: its BinaryOp ADD on the ``numpy`` rule's cases, every case in one child process,
values compared (:mod:`bcast.conformance.columns`)."""

from __future__ import annotations

from ...conformance.columns import Binding, Case, Column, arrays
from .deviations import MNNRuntime

__all__ = ["COLUMNS"]


def _bindings(column: str) -> dict:
    return {"numpy": Binding(column, "numpy", "ADD")}


class _Mnn:
    """bcast.mnn.run against the wheel (bcast.frameworks.mnn.oracle.run_many) on float32 small integers."""

    def __init__(self, column: str = "mnn"):
        self.column = column

    def inputs(self, case: Case, b: Binding):
        from .ops import MAX_RANK

        shapes = case.numpy_shapes
        if len(shapes) != 2 or any(len(s) > MAX_RANK for s in shapes):
            return None  # ADD takes two inputs; rank 10 kills MNN's process (mnn-rank-crash)
        if case.attrs.get("max_rank") not in (None, MAX_RANK):
            return None  # a case of another limit than MNN's
        return (arrays(case, 2),), {}

    def expected(self, b: Binding, inputs, attrs):
        from . import ops as mnn

        (given,) = inputs
        return mnn.run(b.op, *given)

    def run_all(self, b: Binding, jobs: list) -> list:
        from . import oracle

        return oracle.run_many([(b.op, given) for (given,), _ in jobs])


COLUMNS = (
    Column("mnn", "mnn", "MNN", "MNN BinaryOp", "values", (MNNRuntime.MNN,), _bindings, _Mnn),
)
