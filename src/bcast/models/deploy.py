"""Lint targets of the deployment stacks bcast knows by their specification and their converter's source
(TensorRT, TFLite, Core ML, TOSA, WebNN, NNAPI): each broadcasting ONNX node is sent to the target's op
that computes it (a :class:`Route`), its shapes changed as the converter changes them (rank equalisation:
leading 1s), and planned by that framework's plug-in (``bcast.frameworks.<name>.ops.plan``).

- the target refuses the shapes (a rank limit, equal ranks, equal shapes, a 0-size dim...): ``unsupported``,
  with the plug-in's reason and the deviation records of the target's runtimes that bear on it;
- it computes another shape, or aligns an input elsewhere than the spec: ``differs``;
- the target (its converter) has no op for the node: ``unsupported``, with the route's one-line reason;
- a deviation record of a decisive runtime bears on the target's plan: ``differs``.

A target module (``bcast.frameworks.<name>.lint_<name>``) subclasses :class:`DeployChecks` with its
``routes`` and ``equalise``; see each for the converter it models and the source it cites.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..core._format import format_shape
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..frameworks import plan as framework_plan
from .target import Row, Site, Target, moved

__all__ = ["DeployChecks", "Route", "pad"]


@dataclass(frozen=True)
class Route:
    """The target's op for an ONNX node: ``op`` as the framework's table spells it (None: the target computes the
    node without a broadcasting op, e.g. NNAPI's TILE), the ``operands`` it sees (``"inputs"``: the node's;
    ``"output"``: the node's output shape with each input in turn -- a variadic op folded into binary ones;
    ``"gemm"``: Gemm's A*B (the output's shape) with C, if any; ``"expand"``: the input with the shape input's
    values; ``"into"``: the first input with the output's shape), and ``swap`` (the operands reversed: TOSA's
    LESS as GREATER)."""

    op: str | None
    operands: str = "inputs"
    swap: bool = False
    via: str = ""  # how the converter gets there, when not by the op itself (one line)


def pad(shapes: tuple, rank: int | None = None) -> tuple:
    """Each shape with leading 1s to ``rank`` (default: the highest rank among them), as the converters that
    equalise ranks reshape them."""
    n = max((len(s) for s in shapes), default=0) if rank is None else rank
    return tuple((1,) * (n - len(s)) + tuple(s) for s in shapes)


class DeployChecks(Target):
    """The checks of a deployment target (see the module docstring): subclasses set the class attributes."""

    framework: ClassVar[str] = ""  # the plug-in whose plan judges (bcast.frameworks.<framework>.ops)
    label: ClassVar[str] = ""  # how findings name the target ("TensorRT's ONNX parser")
    equalise: ClassVar[bool] = False  # the converter reshapes lower-rank inputs to the highest rank (leading 1s)
    routes: ClassVar[dict[str, Route | str]] = {}  # ONNX op -> its route, or why the target has none
    plan_attrs: ClassVar[dict[str, Any]] = {}  # attributes of the framework's plan (TOSA's level)
    computing: ClassVar[tuple[str, ...]] = ()  # deviation records that say the runtime computes refused shapes

    def op_attrs(self, site: Site) -> dict[str, Any] | None:
        """What the deviation records of the target's op read besides the shapes (an element type)."""
        return None

    def route_of(self, site: Site) -> Route | str:
        return self.routes.get(site.op.name, f"{self.label} has no equivalent of ONNX {site.op.name}")

    def route(self, site: Site) -> str | None:
        found = self.route_of(site)
        return found.op if isinstance(found, Route) else None

    def refused(self, site: Site) -> str | None:
        """A reason the converter refuses the node before any shape is looked at (None: none)."""
        return None

    def fix(self, site: Site, route: Route, error: BroadcastError | InputError) -> str:
        if isinstance(error, BroadcastError) and error.kind == "rank":
            return (f"Reshape around the node to a rank {self.label} {route.op} takes (fold leading 1s, or "
                    "neighbouring axes that broadcast alike, into one)")
        return f"none that bcast knows: change the shapes so that {self.label} {route.op} takes them"

    def operand_shapes(self, site: Site, route: Route) -> list[tuple]:
        """The shape tuples the target's op is planned on (one tuple per op the node becomes)."""
        plan = site.plan
        assert plan is not None
        shapes = tuple(plan.inputs)
        if route.operands == "output":
            return [(plan.shape, s) for s in shapes if s != plan.shape] or [(plan.shape, plan.shape)]
        if route.operands == "gemm":
            return [(plan.shape, shapes[2])] if len(shapes) > 2 else []
        if route.operands == "into":
            return [(shapes[0], plan.shape)]
        if route.operands == "expand":
            return [(shapes[0], shapes[1])]
        return [shapes]

    def check(self, site: Site) -> list[Row]:
        plan = site.plan
        assert plan is not None  # (check sees sites with a valid spec)
        why = self.refused(site)
        if why is not None:
            return [Row("unsupported", None, why, "none that bcast knows: the converter refuses the node")]
        if site.legacy and len({len(s) for s in plan.inputs}) > 1:  # equal ranks align as numpy's
            return [Row("unsupported", site.version.rule, f"{self.label} is checked for numpy broadcasting (opset 7 "
                        "and later); this node has the opset 1-6 broadcast/axis form, with inputs of different ranks",
                        "bcast rewrite MODEL --target onnx -o OUT.onnx (upgrades it to opset 7), then lint OUT")]
        route = self.route_of(site)
        if isinstance(route, str):
            return [Row("unsupported", None, route, f"none that bcast knows: express the node with ops {self.label} "
                        "converts")]
        if route.op is None:
            return []
        rows: list[Row] = []
        for shapes in self.operand_shapes(site, route):
            if self.equalise:
                shapes = pad(shapes)
            if route.swap:
                shapes = shapes[::-1]
            try:
                got = framework_plan(self.framework, route.op, *shapes, **self.plan_attrs)
            except (BroadcastError, InputError) as e:
                reason = e.reason if isinstance(e, BroadcastError) else str(e)
                notes = self.notes(e, route.op, self.op_attrs(site)) if isinstance(e, BroadcastError) else ()
                if any(n.deviation.id in self.computing for n in notes):
                    continue  # the runtime computes them all the same (a proven record says so)
                rows.append(Row("unsupported", getattr(e, "rule", None), f"{self.label} {route.op}"
                                f"{' (' + route.via + ')' if route.via else ''}: {reason}", self.fix(site, route, e),
                                notes))
                break
            rows += self._compare(site, route, shapes, got)
            if rows:
                break
        return rows

    def _compare(self, site: Site, route: Route, shapes: tuple, got: Plan) -> list[Row]:
        plan = site.plan
        assert plan is not None
        notes = self.notes(got, route.op, self.op_attrs(site))
        if route.operands == "inputs" and tuple(shapes) == tuple(plan.inputs):
            found = moved(plan, got)
            if found:
                how = "; ".join(f"{plan.names[i]} {format_shape(plan.inputs[i])} lands as {format_shape(b)}, the "
                                f"spec's {format_shape(a)}" for i, a, b in found)
                return [Row("differs", got.rule, f"{self.label} {route.op} aligns the inputs differently: {how}",
                            "equal ranks (Unsqueeze the lower-rank inputs)", notes)]
        decisive = self.decisive(notes)
        if decisive:
            return [Row("differs", got.rule, "; ".join(f.note for f in decisive),
                        f"avoid these shapes on {self.label}", notes)]
        return []
