"""onnx's conformance columns: one ONNX node in onnxruntime, and in onnx's ReferenceEvaluator
(:mod:`bcast.conformance.columns`).  For each rule, the newest opset of the first op of
:data:`bcast.onnx.OPS` that broadcasts by it."""

from __future__ import annotations

from ...conformance.columns import Binding, Case, Column, arrays
from ...rules import RULES
from .deviations import OnnxRuntime

__all__ = ["COLUMNS"]


def _bindings(column: str) -> dict:
    from . import ops as onnx

    out: dict = {}
    for op in onnx.OPS.values():
        for version in reversed(op.versions):  # the newest opset with the rule
            if version.rule in RULES and version.rule not in out:
                out[version.rule] = Binding(column, version.rule, op.name, opset=version.since)
    return out


class _Onnx:
    """ONNX ops in onnxruntime or the ReferenceEvaluator."""

    def __init__(self, column: str):
        self.column = column

    def inputs(self, case: Case, b: Binding):
        import numpy as np

        from . import ops as onnx

        op = onnx.OPS[b.op]
        xs = arrays(case, len(case.shapes))
        if op.shape_input is not None:
            xs[op.shape_input] = np.array(case.numpy_shapes[op.shape_input], dtype=np.int64)
        names = {a.name for a in op.attributes(op.version(b.opset))}
        attrs = {k: int(v) for k, v in case.attrs.items() if k in names and v is not None}
        return xs, attrs

    def expected(self, b: Binding, xs, attrs):
        from . import ops as onnx

        return onnx.run(b.op, *xs, opset=b.opset, **attrs)

    def run_all(self, b: Binding, jobs: list) -> list:
        from .._oracle import RuntimeRefused
        from . import onnxruntime as ort
        from . import reference

        oracle = ort if self.column == "onnxruntime" else reference
        out = []
        for xs, attrs in jobs:
            try:
                out.append(oracle.run(b.op, xs, opset=b.opset, **attrs)[0])
            except RuntimeRefused as e:
                out.append(e)
        return out


COLUMNS = (
    Column("onnxruntime", "onnxruntime", "onnxruntime", "onnxruntime", "values", (OnnxRuntime.ONNXRUNTIME,),
           _bindings, _Onnx),
    Column("reference", "reference", "onnx", "onnx ReferenceEvaluator", "values", (OnnxRuntime.REFERENCE,),
           _bindings, _Onnx),
)
