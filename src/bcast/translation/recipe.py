"""What :func:`bcast.translate` returns: a :class:`Recipe` (inputs, steps, output), or the
:class:`TranslationError` that says why the target cannot compute the source."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core._format import format_shape
from ..core.dims import json_shape
from ..core.plan import Plan
from . import runtimes
from .step import Step
from .text import TEXT

__all__ = ["TARGETS", "Recipe", "TranslationError"]

#: The frameworks a plan translates to.
TARGETS = ("numpy", "onnx", "openvino", "ncnn", "tflite", "tensorrt", "tosa", "stablehlo")


class TranslationError(ValueError):
    """The source plan is valid, but the target cannot compute it.

    Attributes: ``target``, ``rule``, ``shapes``, ``names`` (the source
    plan's) and ``reason`` (what the target lacks).  The CLI exits 1 on it,
    as on a :class:`~bcast.core.errors.BroadcastError`.
    """

    def __init__(self, plan: Plan, target: str, reason: str) -> None:
        self.target, self.rule, self.reason = target, plan.rule, reason
        self.shapes, self.names = plan.inputs, plan.names
        ins = ", ".join(f"{n} {format_shape(s)}" for n, s in zip(plan.names, plan.inputs))
        super().__init__(f"cannot translate {plan.rule} {ins} to {target}: {reason}")

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any], str]]:
        return (_rebuild_error, (self.__dict__.copy(), str(self)))

    def to_dict(self) -> dict[str, Any]:
        """The ``error`` object of ``bcast translate --json``."""
        return {"kind": "untranslatable", "reason": self.reason, "message": str(self)}


def _rebuild_error(state: dict[str, Any], message: str) -> TranslationError:
    err = TranslationError.__new__(TranslationError)
    err.__dict__.update(state)
    ValueError.__init__(err, message)
    return err


@dataclass(frozen=True)
class Recipe:
    """What the target runs: its inputs (name, shape, element type), the steps,
    the output (``output``, of shape ``shape``).

    ``avoided`` holds the deviations (``Note``) that made bcast pass over a
    shorter form (e.g. OpenVINO's pdpd on its CPU plugin).
    """

    target: str
    plan: Plan
    op: str
    inputs: tuple[tuple[str, tuple, str], ...]
    steps: tuple[Step, ...]
    output: str
    shape: tuple
    avoided: tuple = field(default=(), compare=False)

    def text(self) -> str:
        """The target's own text: a numpy expression, ONNX's textual syntax, OpenVINO
        ops, an ncnn .param file, TFLite builtins, TensorRT's Python network definition, TOSA or
        StableHLO in MLIR.  It holds only where ``plan.constraints`` hold
        (symbolic dims: ``N == M or N == 1 or M == 1``)."""
        return TEXT[self.target]([(self, "")])

    def __str__(self) -> str:
        return self.text()

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``bcast translate --json``."""
        source = self.plan.to_dict()
        return {
            "target": self.target, "rule": self.plan.rule, "attrs": source["attrs"],
            "inputs": source["inputs"], "names": source["names"], "op": self.op, "ok": True,
            "feeds": [{"name": n, "shape": json_shape(s), "dtype": t} for n, s, t in self.inputs],
            "output": self.output, "shape": json_shape(self.shape), "constraints": source["constraints"],
            "steps": [s.to_dict() for s in self.steps], "text": self.text(),
            "avoided": [f.to_dict() for f in self.avoided], "error": None,
        }

    def model(self) -> Any:
        """The recipe as the target's model: an ``onnx.ModelProto``, an ``openvino.Model``,
        the ncnn ``.param`` text, for numpy the expression's code object, for TFLite a list holding
        the ``.tflite`` model's bytes, for TOSA and StableHLO the MLIR text, for TensorRT the same
        graph as an ONNX model."""
        return runtimes.model([self])

    def run(self, *arrays: Any) -> Any:
        """Run the recipe on the real target (numpy, onnxruntime, OpenVINO's CPU plugin,
        ncnn, TFLite's interpreter, XLA for StableHLO; for TensorRT and TOSA, which do not run here,
        bcast's step-by-step model of them) with ``arrays`` as its inputs, in order; returns the output array."""
        return runtimes.run_many([self], [arrays])[0]
