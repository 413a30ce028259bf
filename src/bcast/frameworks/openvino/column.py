"""OpenVINO's conformance columns: shape inference of one op, and the op compiled on the CPU plugin
(:mod:`bcast.conformance.columns`).  For each rule, the first element-wise op with each ``auto_broadcast``
mode, Select, PRelu and each Broadcast mode."""

from __future__ import annotations

from ...conformance.columns import Binding, Case, Column, arrays
from ...rules import get_rule
from .deviations import OpenVINORuntime

__all__ = ["COLUMNS"]


def _bindings(column: str) -> dict:
    from . import ops as openvino

    out: dict = {}
    kind_rules = {"select": "openvino-select", "prelu": "openvino-prelu"}
    for op in openvino.OPS.values():
        if op.kind == "eltwise" and op.types == "numeric":
            for mode, rule in openvino.AUTO_BROADCAST.items():
                out.setdefault(rule, Binding(column, rule, op.name, {"auto_broadcast": mode}))
        elif op.kind == "broadcast":
            for mode, rule in openvino.BROADCAST_MODES.items():
                out.setdefault(rule, Binding(column, rule, op.name, {"mode": mode}))
        elif op.kind in kind_rules:
            out.setdefault(kind_rules[op.kind], Binding(column, kind_rules[op.kind], op.name))
    return out


class _OpenVINO:
    """One OpenVINO op: shape inference, or the CPU plugin (all cases of a rule in one model)."""

    def __init__(self, column: str):
        self.column = column

    def inputs(self, case: Case, b: Binding):
        from . import ops as openvino

        spec = openvino.OPS[b.op]
        attrs = dict(b.op_attrs)
        if spec.kind == "broadcast":
            operands = get_rule(case.rule).operands
            data = operands.index("data") if "data" in operands else 1  # numpy mode: (target, data)
            (arr,) = arrays(Case(case.id, case.rule, "", (case.shapes[data],), {}), 1)
            inputs = [arr, list(case.shapes[1 - data])]
            if attrs["mode"] == "explicit":
                inputs.append(list(case.attrs["axes_mapping"]))
            if attrs["mode"] == "pdpd":
                attrs["axis"] = case.attrs["axis"]
            return inputs, attrs
        for k in ("auto_broadcast", "axis"):
            mode = case.attrs.get("auto_broadcast", attrs.get("auto_broadcast"))
            if k in case.attrs and (k != "axis" or mode == "pdpd"):
                attrs[k] = case.attrs[k]
        dtypes = ["bool", "float32", "float32"] if spec.kind == "select" else None
        return arrays(case, len(case.shapes), dtypes), attrs

    def expected(self, b: Binding, inputs, attrs):
        from . import ops as openvino

        return openvino.run(b.op, *inputs, **attrs)

    def run_all(self, b: Binding, jobs: list) -> list:
        from .._oracle import RuntimeRefused
        from . import oracle as ov

        if self.column == "openvino-cpu":
            return ov.run_many(b.op, [(inputs, attrs) for inputs, attrs in jobs])
        out: list[tuple | RuntimeRefused] = []
        for inputs, attrs in jobs:
            shapes = [getattr(x, "shape", x) for x in inputs]
            try:
                out.append(ov.infer_shape(b.op, shapes, **attrs))
            except RuntimeRefused as e:
                out.append(e)
        return out


COLUMNS = (
    Column("openvino", "openvino", "openvino", "OpenVINO shape inference", "shape", (OpenVINORuntime.OPENVINO,),
           _bindings, _OpenVINO),
    Column("openvino-cpu", "openvino", "openvino", "OpenVINO CPU plugin", "values",
           (OpenVINORuntime.OPENVINO, OpenVINORuntime.CPU_PLUGIN), _bindings, _OpenVINO),
)
