"""ncnn's conformance column: its BinaryOp (ADD), every case in one child process
(:mod:`bcast.conformance.columns`)."""

from __future__ import annotations

from ...conformance.columns import Binding, Case, Column, arrays
from .deviations import NcnnRuntime

__all__ = ["COLUMNS"]


def _bindings(column: str) -> dict:
    from . import ops as ncnn

    return {"ncnn": Binding(column, "ncnn", ncnn.OPS[0].name)}


class _Ncnn:
    """ncnn's BinaryOp (a rank-0 input is the with_scalar form), every case in one child process."""

    def __init__(self, column: str = "ncnn"):
        self.column = column

    def inputs(self, case: Case, b: Binding):
        shapes = case.numpy_shapes
        if all(len(s) == 0 for s in shapes) or any(len(s) > 4 or 0 in s for s in shapes):
            return None  # no ncnn blob holds it: the rule refuses it as unsupported
        a, c = arrays(case, 2)
        if c.ndim == 0:
            return (a, None, True, float(c)), {}
        if a.ndim == 0:
            return (c, None, True, float(a)), {}  # ADD commutes
        return (a, c, False, 0.0), {}

    def expected(self, b: Binding, inputs, attrs):
        from . import ops as ncnn

        a, c, with_scalar, scalar = inputs
        return ncnn.run(b.op, a, c, with_scalar=with_scalar, scalar=scalar)

    def run_all(self, b: Binding, jobs: list) -> list:
        from . import oracle as ncnn

        return ncnn.run_many([(b.op, *inputs) for inputs, _ in jobs])


COLUMNS = (
    Column("ncnn", "ncnn", "ncnn", "ncnn BinaryOp", "values", (NcnnRuntime.NCNN, NcnnRuntime.PYPI_WHEEL),
           _bindings, _Ncnn),
)
