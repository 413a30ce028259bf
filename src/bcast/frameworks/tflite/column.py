"""TFLite's conformance column: one builtin op of LiteRT's interpreter (builtin kernels, no delegate) per rule
-- ADD for ``numpy``, SELECT for ``tflite-select``, BROADCAST_TO for ``unidirectional`` -- every case in one
child process (:mod:`bcast.conformance.columns`)."""

from __future__ import annotations

from ...conformance.columns import Binding, Case, Column, arrays
from .deviations import TFLiteRuntime

__all__ = ["COLUMNS"]

#: The rules the interpreter's ops check, and the op of each (the first op of the table with that rule).
RULE_OPS = {"numpy": "ADD", "tflite-select": "SELECT", "unidirectional": "BROADCAST_TO"}


def _bindings(column: str) -> dict:
    return {rule: Binding(column, rule, op) for rule, op in RULE_OPS.items()}


class _TFLite:
    """One TFLite builtin in a one-op model: float32 small integers, SELECT's condition bool, BROADCAST_TO's shape
    (the rule's A) as int32 values."""

    def __init__(self, column: str = "tflite"):
        self.column = column

    def inputs(self, case: Case, b: Binding):
        import numpy as np

        shapes = case.numpy_shapes
        if b.op == "BROADCAST_TO":  # unidirectional (A, B): B, the input, broadcast to A, the shape
            (data,) = arrays(Case(case.id, case.rule, "", (shapes[1],), {}), 1)
            return (data, np.array(shapes[0], np.int32)), {}
        if b.op == "ADD" and len(shapes) != 2:
            return None  # a binary op: two inputs
        return tuple(arrays(case, len(shapes), ["bool", "float32", "float32"] if b.op == "SELECT" else None)), {}

    def expected(self, b: Binding, inputs, attrs):
        from . import ops as tflite

        return tflite.run(b.op, *inputs)

    def run_all(self, b: Binding, jobs: list) -> list:
        from . import oracle

        return oracle.run_many([(b.op, *inputs) for inputs, _ in jobs])


COLUMNS = (
    Column("tflite", "tflite", "ai_edge_litert", "TFLite interpreter (LiteRT)", "values", (TFLiteRuntime.INTERPRETER,),
           _bindings, _TFLite),
)
