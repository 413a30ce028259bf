"""One node of a recipe (:class:`Step`): the op as the target names it, its inputs, output and attributes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.dims import json_shape

__all__ = ["Step"]


@dataclass(frozen=True)
class Step:
    """One node: ``op`` as the target names it, the names of its inputs and output,
    and its attributes (constant inputs included: ``axes``, ``shape``...)."""

    op: str
    inputs: tuple[str, ...]
    output: str
    attrs: tuple[tuple[str, Any], ...] = ()

    def attr(self, name: str, default: Any = None) -> Any:
        return dict(self.attrs).get(name, default)

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "inputs": list(self.inputs), "output": self.output,
                "attrs": {k: _jsonable(v) for k, v in self.attrs}}


def _jsonable(v: Any) -> Any:
    return json_shape(v) if isinstance(v, tuple) else v
