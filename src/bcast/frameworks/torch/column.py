"""torch's conformance column (:mod:`bcast.conformance.columns`): ``numpy`` through ``torch.add``,
``unidirectional`` through ``Tensor.add_`` (``self`` is A, never broadcast), values compared, every case in
this process."""

from __future__ import annotations

from ...conformance.columns import Binding, Case, Column, arrays
from .deviations import TorchRuntime

__all__ = ["COLUMNS"]


def _bindings(column: str) -> dict:
    from . import ops as torch_ops

    found: dict = {}
    for o in torch_ops.OPS.values():  # the first op of each rule that takes two tensors: add, add_
        if o.kind in ("binary", "inplace"):
            found.setdefault(o.rule, Binding(column, o.rule, o.name))
    return found


class _Torch:
    """One torch op on two float32 arrays of small integers (a case of another number of inputs: n/a)."""

    def __init__(self, column: str = "torch"):
        self.column = column

    def inputs(self, case: Case, b: Binding):
        if len(case.shapes) != 2:
            return None
        return tuple(arrays(case, 2)), {}

    def expected(self, b: Binding, inputs, attrs):
        from . import ops as torch_ops

        return torch_ops.run(b.op, *(x.copy() for x in inputs))  # an in-place op writes into its first

    def run_all(self, b: Binding, jobs: list) -> list:
        from . import oracle

        return oracle.run_many(b.op, [inputs for inputs, _ in jobs])


COLUMNS = (
    Column("torch", "torch", "torch", "torch (eager, CPU)", "values", (TorchRuntime.TORCH,), _bindings, _Torch),
)
