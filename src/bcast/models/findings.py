"""What ``bcast lint`` reports: a :class:`Finding` per node and kind, and the :class:`Report` of a run
(see :mod:`bcast.models.lint`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core._format import format_shape
from ..core.dims import json_shape

if TYPE_CHECKING:
    from ..frameworks.deviations import Note

__all__ = ["Finding", "Report", "format_finding"]


@dataclass(frozen=True)
class Finding:
    """One node the target cannot be trusted with, and why (see the module docstring)."""

    node: str
    op_type: str
    opset: int
    inputs: tuple
    input_shapes: tuple
    output: str
    output_shape: tuple | None
    kind: str
    target: str
    rule: str | None
    reason: str
    fix: str
    deviations: tuple[Note, ...] = ()  # the deviation records that bear on the node, with their notes
    path: tuple = ()  # where the node is: the labels and attributes that lead to it (bcast.models.graphs)

    def to_dict(self) -> dict:
        """A JSON-ready dict (shapes as lists, dims as int or str; an unknown shape is null)."""
        return {
            "node": self.node, "op_type": self.op_type, "opset": self.opset, "inputs": list(self.inputs),
            "input_shapes": [None if s is None else json_shape(s) for s in self.input_shapes],
            "output": self.output, "output_shape": None if self.output_shape is None else json_shape(self.output_shape),
            "kind": self.kind, "target": self.target, "rule": self.rule, "reason": self.reason, "fix": self.fix,
            "deviations": [d.to_dict() for d in self.deviations], "path": list(self.path or (self.node,)),
        }

    def __str__(self) -> str:
        return format_finding(self)


def _shape_text(shape) -> str:
    return "?" if shape is None else format_shape(shape)


def format_finding(f: Finding) -> str:
    """One readable block: the node, its inputs, the verdict, the fix, the runtime notes."""
    ins = ", ".join(f"{n or '(none)'} {_shape_text(s)}" for n, s in zip(f.inputs, f.input_shapes))
    lines = [f"{f.node}: {f.op_type}-{f.opset}({ins}) -> {f.output} {_shape_text(f.output_shape)}",
             f"  {f.kind} ({f.target}{', ' + f.rule if f.rule else ''}): {f.reason}",
             f"  fix: {f.fix}"]
    lines += [f"  note: {d.deviation.label()} [{d.deviation.id}]: {d.note}"
              for d in f.deviations]
    return "\n".join(lines)



#: Finding kinds that do not make a model fail lint: reported, not judged.
ADVISORY = ("values",)


def blocking(findings) -> list:
    """The findings that say a node is wrong or cannot be converted (every kind but :data:`ADVISORY`)."""
    return [f for f in findings if f.kind not in ADVISORY]


@dataclass
class Report:
    """What one lint run found: the findings, and how many nodes it looked at."""

    target: str
    opset: int
    nodes: int
    checked: int
    findings: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No finding that says the node is wrong: ``values`` findings (:data:`ADVISORY`) only say where a
        kernel computes other values on some inputs, so they alone leave a model ok (exit status 0)."""
        return blocking(self.findings) == []

    def describe(self) -> str:
        """What was read, for the command line's first line."""
        return f"opset {self.opset}"

    def to_dict(self, model: str | None = None) -> dict:
        return {"model": model, "target": self.target, "opset": self.opset, "nodes": self.nodes,
                "checked": self.checked, "ok": self.ok,
                "findings": [f.to_dict() for f in self.findings]}
