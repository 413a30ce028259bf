"""Lint target ``openvino``: the model as OpenVINO's ONNX frontend converts it and its CPU plugin runs it.

The frontend keeps ONNX's rule but for the ops of :data:`~bcast.frameworks.openvino.ops.FROM_ONNX_RULES`
(PRelu's per-channel slope): a node that rule aligns otherwise than the spec is ``differs``
(fixed by equal ranks), one it refuses ``unsupported``; a node whose shapes hit a deviation of
OpenVINO's is ``differs``.  Each node runs as the op :data:`~bcast.frameworks.openvino.from_onnx.FROM_ONNX`
names (the value records of that op bear on it).
"""

from __future__ import annotations

from ...core._format import format_shape
from ...core.errors import BroadcastError
from ...models.target import Row, Site, Target, align_fix, moved
from ...rules import infer
from .from_onnx import FROM_ONNX
from .ops import FROM_ONNX_RULES
from .runtimes import OpenVINORuntime

__all__ = ["TARGET", "Checks"]

TARGET = "openvino"


class Checks(Target):
    """The checks of target ``openvino`` (see the module docstring)."""

    name = TARGET
    runtimes = decisive_runtimes = tuple(OpenVINORuntime)

    def route(self, site: Site) -> str | None:
        if site.op.name == "Mod":
            return "Mod" if site.attrs.get("fmod") else "FloorMod"
        return FROM_ONNX.get(site.op.name)

    def check(self, site: Site) -> list[Row]:
        plan = site.plan
        assert plan is not None  # (check sees sites with a valid spec)
        rule = FROM_ONNX_RULES.get(site.op.name)
        if rule is None:  # OpenVINO keeps ONNX's rule
            notes = self.notes(plan)
            decisive = self.decisive(notes)
            return [Row("differs", plan.rule, "; ".join(f.note for f in decisive),
                        "avoid these shapes on OpenVINO", notes)] if decisive else []
        try:
            ov = infer(*plan.inputs, rule=rule, names=plan.names)
        except BroadcastError as e:
            return [Row("unsupported", rule, f"OpenVINO's {rule} rule: {e.reason}", align_fix(plan, "OpenVINO"),
                        self.notes(e))]
        notes = self.notes(ov)
        found = moved(plan, ov)
        if found:
            how = "; ".join(f"{plan.names[i]} {format_shape(plan.inputs[i])} lands as {format_shape(b)}, the spec's "
                            f"{format_shape(a)}" for i, a, b in found)
            return [Row("differs", rule, f"OpenVINO's {rule} rule aligns the inputs differently: {how}",
                        align_fix(plan, "OpenVINO"), notes)]
        decisive = self.decisive(notes)
        if decisive:
            return [Row("differs", rule, "; ".join(f.note for f in decisive), "avoid these shapes on OpenVINO",
                        notes)]
        return []
