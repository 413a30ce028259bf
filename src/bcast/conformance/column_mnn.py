"""The ``mnn`` column of ``bcast conformance``: MNN's BinaryOp ADD (the ``numpy`` rule), every case in one
child process, compared by values."""

from __future__ import annotations

from typing import Any

__all__ = ["Mnn"]


class Mnn:
    """MNN's ADD on float32 inputs: bcast.mnn.run against the wheel (bcast.frameworks.mnn.oracle.run_many)."""

    def __init__(self, column: str = "mnn"):
        self.column = column

    def inputs(self, case: Any, b: Any):
        import numpy as np

        from ..frameworks.mnn.ops import MAX_RANK

        shapes = case.numpy_shapes
        if len(shapes) != 2 or any(len(s) > MAX_RANK for s in shapes):
            return None  # ADD takes two inputs; rank 10 kills MNN's process (mnn-rank-crash)
        if case.attrs.get("max_rank") not in (None, MAX_RANK):
            return None  # another limit than MNN's
        rng = np.random.default_rng(sum(map(ord, case.id)))  # float32 small integers, as every column's
        return ([rng.integers(-4, 5, size=s).astype(np.float32) for s in shapes],), {}

    def expected(self, b: Any, inputs, attrs):
        from ..frameworks.mnn import ops as mnn

        (arrays,) = inputs
        return mnn.run(b.op, *arrays)

    def run_all(self, b: Any, jobs: list) -> list:
        from ..frameworks.mnn import oracle

        return oracle.run_many([(b.op, arrays) for (arrays,), _ in jobs])
