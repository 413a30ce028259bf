"""Lint target ``onnx``: the spec, and onnxruntime's deviations.

A node of an opset 1-6 broadcast/axis form is ``legacy`` (onnxruntime has no kernel for it;
``bcast rewrite --target onnx`` upgrades it); a node whose shapes hit a deviation of
onnxruntime's is ``differs``.
"""

from __future__ import annotations

from ...models.target import Row, Site, Target
from .deviations import OnnxRuntime

__all__ = ["TARGET", "Checks"]

TARGET = "onnx"


class Checks(Target):
    """The checks of target ``onnx`` (see the module docstring)."""

    name = TARGET
    runtimes = tuple(OnnxRuntime)
    decisive_runtimes = (OnnxRuntime.ONNXRUNTIME,)  # the others are the spec's tools: a note, not a finding

    def route(self, site: Site) -> str | None:
        return site.op.name

    def check(self, site: Site) -> list[Row]:
        plan = site.plan
        assert plan is not None  # (check sees sites with a valid spec)
        notes = self.notes(plan, site.op.name, site.attrs)
        if site.legacy:
            converter = any(f.deviation.runtime is OnnxRuntime.VERSION_CONVERTER for f in notes)
            return [Row("legacy", plan.rule,
                        f"{site.op.name}-{site.version.since} is the opset 1-6 form (broadcast/axis): onnxruntime "
                        "has no kernel for it",
                        "bcast rewrite MODEL --target onnx -o OUT.onnx (upgrades it to opset 7 with the right "
                        "Unsqueeze" + ("; onnx's version converter gets this axis wrong)" if converter else ")"),
                        notes)]
        decisive = self.decisive(notes)
        if decisive:
            return [Row("differs", plan.rule, "; ".join(f.note for f in decisive),
                        "give the inputs equal ranks and the shapes the spec's alignment", notes)]
        return []
