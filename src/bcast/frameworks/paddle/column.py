"""PaddlePaddle's conformance column (:mod:`bcast.conformance.columns`): ``numpy`` through ``paddle.add``,
``unidirectional`` through ``Tensor.add_`` (``x`` is A, never broadcast), ``paddle`` through the legacy
operator ``elementwise_add`` with the case's ``axis`` (``paddle._legacy_C_ops``), values compared, every
case in this process (the cases a record says kill it are not run)."""

from __future__ import annotations

import warnings

from ...conformance.columns import Binding, Case, Column, arrays
from .deviations import PaddleRuntime

__all__ = ["COLUMNS"]

# paddle's import warns that no ccache is installed (for building C++ extensions): noise in a report, wherever
# the matrix imports it (its version, the oracle).
warnings.filterwarnings("ignore", message="No ccache found", category=UserWarning)


def _bindings(column: str) -> dict:
    from . import ops as paddle_ops

    found: dict = {}
    for o in paddle_ops.OPS.values():  # the first op of each rule that takes two tensors
        if o.kind in ("binary", "inplace", "axis"):
            found.setdefault(o.rule, Binding(column, o.rule, o.name))
    return found


class _Paddle:
    """One Paddle op on two float32 arrays of small integers (a case of another number of inputs: n/a)."""

    def __init__(self, column: str = "paddle"):
        self.column = column

    def inputs(self, case: Case, b: Binding):
        if len(case.shapes) != 2:
            return None
        attrs = {"axis": case.attrs["axis"]} if b.rule == "paddle" else {}
        return tuple(arrays(case, 2)), attrs

    def expected(self, b: Binding, inputs, attrs):
        from . import ops as paddle_ops

        return paddle_ops.run(b.op, *(x.copy() for x in inputs), **attrs)  # an in-place op writes into its first

    def run_all(self, b: Binding, jobs: list) -> list:
        from . import oracle

        return oracle.run_many(b.op, jobs)


COLUMNS = (
    Column("paddle", "paddle", "paddle", "PaddlePaddle (dynamic mode, CPU)", "values",
           (PaddleRuntime.PADDLE, PaddleRuntime.CPU_KERNEL), _bindings, _Paddle),
)
