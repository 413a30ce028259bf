"""What a lint target is: the checks of one conversion path (:class:`Target`), the node they are
given (:class:`Site`), the verdict they return (:class:`Row`), and where targets are found.

A framework package declares its targets (its ``TARGETS``, read by
:func:`bcast.frameworks.targets`), each implemented by modules named for it: its
``bcast.frameworks.<framework>.lint_<name>`` is a lint target (its ``TARGET`` is the target's
name, its ``Checks`` a :class:`Target`), its ``rewrite_<name>`` a rewrite target (its
``TARGET``, and ``rewrite(model) -> (model, changes, blocked)``).  :func:`found` loads them:
``onnx`` first (the default target), then the others by name.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..core._format import format_shape
from ..core.plan import Plan
from ..frameworks import targets
from ..frameworks.deviations import Runtime, notes_for
from ..frameworks.onnx import ops as bonnx

if TYPE_CHECKING:
    from ..frameworks.deviations import Note
    from .onnx_model import Shapes

__all__ = ["Row", "Site", "Target", "align_fix", "found", "moved"]

_LEGACY_RULES = ("onnx-legacy", "gemm-legacy", "prelu-legacy")


@dataclass
class Site:
    """One node of a broadcasting op: its op row, opset version, inputs, shapes and attributes."""

    index: int
    node: Any
    op: bonnx.Op
    version: bonnx.Version
    opset: int
    inputs: tuple[str, ...]
    shapes: tuple
    attrs: dict[str, Any]
    spec: object = None  # the Plan, or the BroadcastError / InputError of the node's own rule
    label: str = ""  # its path, joined by "/" (bcast.models.graphs)
    path: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()  # inputs whose shape is not known
    key: tuple | None = None  # what its checks depend on (bcast.models.lint)

    @property
    def plan(self) -> Plan | None:
        return self.spec if isinstance(self.spec, Plan) else None

    @property
    def legacy(self) -> bool:
        return self.version.rule in _LEGACY_RULES


@dataclass(frozen=True)
class Row:
    """One verdict on a node: its ``kind`` (:data:`bcast.models.lint.KINDS`), the rule it is judged by
    (None: none), why, the fix, and the deviation notes that bear on it."""

    kind: str
    rule: str | None
    reason: str
    fix: str
    notes: tuple[Note, ...] = ()


class Target:
    """The checks of one target; ``visit`` sees every node, ``check`` the sites with a valid spec.

    ``runtimes`` / ``decisive_runtimes``: the runtimes of the deviation records that speak
    for the target, and of those that make a finding by themselves; each target's class declares
    them (members of its framework's Runtime enum), so adding a target touches its own module only."""

    name = ""
    runtimes: tuple[Runtime, ...] = ()
    decisive_runtimes: tuple[Runtime, ...] = ()

    def __init__(self, shapes: Shapes, graph: Any, parent: Target | None = None) -> None:
        """``graph``: the graph walked (a subgraph of ``parent``'s, or a function's body)."""
        self.shapes = shapes
        self.source: tuple[str, tuple[str, ...]] | None = None  # the model's file and its external data files

    def child(self, shapes: Shapes, graph: Any, nested: bool, call: Any = None) -> Target:
        """The checks of a graph inside node ``call``: a subgraph (``nested``: it sees this scope), or the
        body of the local function it calls (its inputs bound to the call's, :meth:`bind`)."""
        inner = type(self)(shapes, graph, self if nested else None)
        if not nested:
            inner.bind(self, {f.name: a for f, a in zip(graph.input, call.input) if a})
        return inner

    def visit(self, node: Any, site: Site | None) -> None:
        pass

    def bind(self, caller: Any, formals: dict[str, str]) -> None:
        """What the caller knows of the values a function's inputs (``formals``: formal -> actual) are."""

    def context(self, site: Site) -> tuple:
        """What the target's checks of a site depend on besides the site's shapes and attributes."""
        return ()

    def check(self, site: Site) -> list[Row]:
        return []

    def finish(self, model: Any) -> list:
        """Findings of nodes that are not broadcasting sites (after the walk)."""
        return []

    def route(self, site: Site) -> str | None:
        """The op the target's runtime runs the node as, as the deviation registry spells it (None: none
        that the registry's value records name)."""
        return None

    def notes(self, result: Any, op: str | None = None, op_attrs: dict[str, Any] | None = None
              ) -> tuple[Note, ...]:
        return tuple(f for f in notes_for(result, op, op_attrs) if f.deviation.runtime in self.runtimes)

    def decisive(self, notes: tuple[Note, ...]) -> tuple[Note, ...]:
        return tuple(f for f in notes if f.deviation.runtime in self.decisive_runtimes)


def moved(spec: Plan, other: Plan) -> list[tuple[int, tuple, tuple]]:
    """The inputs that ``other`` aligns differently from ``spec``: ``(i, spec's, other's)`` aligned shapes."""
    out = []
    for i in range(len(spec.inputs)):
        a, b = spec.aligned_shape(i), other.aligned_shape(i)
        if a != b:
            out.append((i, a, b))
    return out


def _unsqueezes(plan: Plan) -> str:
    """The Unsqueezes that give every input the output's rank, at the spec's alignment."""
    return ", ".join(f"Unsqueeze {plan.names[i]} to {format_shape(plan.aligned_shape(i))}"
                     for i in range(len(plan.inputs)) if len(plan.inputs[i]) != plan.ndim)


def align_fix(plan: Plan, target: str) -> str:
    """The fix of a node the target aligns otherwise: equal ranks, by Unsqueezes."""
    steps = _unsqueezes(plan)
    if not steps:
        return f"none that bcast knows: {target} cannot compute these shapes as the spec does"
    return steps + f" (equal ranks: {target} then aligns as the spec does)"


_FOUND: dict[str, dict[str, ModuleType]] = {}


def found(kind: str) -> dict[str, ModuleType]:
    """The ``kind`` (``lint`` or ``rewrite``) target modules of the registered frameworks, by target
    name (:func:`bcast.frameworks.targets`): ``onnx`` first, then by name."""
    if kind not in _FOUND:
        _FOUND[kind] = {name: importlib.import_module(module) for name, module in targets(kind).items()}
    return _FOUND[kind]
