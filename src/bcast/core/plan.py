"""The Plan: what a rule decided, and everything downstream reads.

A Plan is a frozen value: the output shape and, for every input, the output
axis each of its axes lands on (its *axis map*) and which of its axes are
stretched (a dim of 1 repeated to a different output size).  Running an op is
then mechanical: reshape each input by its axis map (:meth:`Plan.aligned_shape`),
take a stride-0 view of the output shape, apply the op.

With dims that are not static (symbols, ``?``, intervals) a plan also holds
the *constraints* the broadcast needs of the sizes the shapes leave open
(:class:`~bcast.core.dims.Constraint`): with them it holds for any sizes.

>>> from bcast import infer
>>> [str(c) for c in infer("N,3", "5,1").constraints]
['N ∈ {1, 5}']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ._format import format_shape, lookup_notation
from .dims import Constraint, Dim, is_one, json_shape
from .shapes import Shape

__all__ = ["AxisMap", "Plan", "install_explainer"]

#: Where each axis of an input lands in the output: an output axis, or None (the rule drops it).
AxisMap = tuple[int | None, ...]


class _Explainer(Protocol):
    def __call__(self, plan: Plan, *, deviations: bool = True) -> str: ...


#: What :meth:`Plan.explain` calls.  The core knows nothing of tables or of runtimes' deviations: the
#: views layer installs its explainer (:mod:`bcast.views.explain`, which the package imports), so that
#: the core never imports upward.
_explainer: _Explainer | None = None


def install_explainer(explainer: _Explainer) -> None:
    """Make ``explainer(plan, deviations=...)`` what :meth:`Plan.explain` returns (the views layer calls it)."""
    global _explainer
    _explainer = explainer


@dataclass(frozen=True, slots=True)
class Plan:
    """The result of a rule.  All shapes are in numpy order.

    Attributes
    ----------
    rule : str
        The public name of the rule that made the plan.
    inputs : tuple of shapes
        The input shapes, as given (numpy order; ncnn order is converted).
    shape : tuple of int
        The output shape.
    names : tuple of str
        The name of every input (``A``, ``B``; ``data``, ``target``...).
    axis_maps : tuple of tuples
        ``axis_maps[i][k]`` is the output axis that axis ``k`` of input ``i``
        lands on, or ``None`` for an axis that lands on none: a size-1 axis
        the rule drops (PDPD's and Paddle's trailing 1s) or an axis Gemm
        contracts.  Mapped axes are strictly increasing, except where a rule
        transposes (``explicit`` with ``transpose=1``, StableHLO's
        ``broadcast_in_dim``): :meth:`transposition` says how.
    stretched : tuple of tuples
        For every input, its axes whose dim (1) is stretched to another size.
    attrs : tuple of (name, value) pairs
        The attributes the rule used, normalized (e.g. PDPD's resolved axis).
    constraints : tuple of Constraint
        What the broadcast needs of dims the shapes leave open (``N ∈ {1, 5}``);
        empty when it holds whatever their sizes, always so for static shapes.
    notation : str
        The order the caller wrote the shapes in: ``"numpy"``, or the name of a notation the rule
        registered (:class:`~bcast.core._format.Notation`: ncnn's ``[w,h,d,c]`` with ``ncnn_order``).
    """

    rule: str
    inputs: tuple[Shape, ...]
    shape: Shape
    names: tuple[str, ...]
    axis_maps: tuple[AxisMap, ...]
    stretched: tuple[tuple[int, ...], ...]
    attrs: tuple[tuple[str, Any], ...] = ()
    constraints: tuple[Constraint, ...] = ()
    notation: str = "numpy"

    @classmethod
    def build(
        cls,
        rule: str,
        inputs: Iterable[Shape],
        shape: Iterable[Dim],
        names: Iterable[str],
        axis_maps: Iterable[Sequence[int | None]],
        attrs: Iterable[tuple[str, Any]] = (),
        constraints: Iterable[Constraint] = (),
        notation: str = "numpy",
    ) -> Plan:
        """Make a plan, deriving ``stretched`` from the maps (the one constructor rules use).

        A dim is stretched when it is 1 and its output dim is not (definitely)."""
        out = tuple(shape)
        ins = tuple(tuple(s) for s in inputs)
        maps = tuple(tuple(m) for m in axis_maps)
        stretched = tuple(
            tuple(k for k, ax in enumerate(m) if ax is not None and is_one(inp[k]) and not is_one(out[ax]))
            for inp, m in zip(ins, maps)
        )
        return cls(rule, ins, out, tuple(names), maps, stretched, tuple(attrs), tuple(constraints), notation)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def attr(self, name: str, default: Any = None) -> Any:
        """The value of one attribute the rule used."""
        for key, value in self.attrs:
            if key == name:
                return value
        return default

    def aligned_shape(self, i: int) -> Shape:
        """Input ``i`` reshaped to the output's rank: its dims at their mapped
        axes, 1 elsewhere.  ``np.broadcast_to(x.reshape(plan.aligned_shape(i)),
        plan.shape)`` is the zero-copy view of input ``i`` (``x`` transposed first where
        :meth:`transposition` is not None)."""
        out: list[Dim] = [1] * len(self.shape)
        for k, ax in enumerate(self.axis_maps[i]):
            if ax is not None:
                out[ax] = self.inputs[i][k]
        return tuple(out)

    def transposition(self, i: int) -> tuple[int, ...] | None:
        """None where input ``i``'s mapped axes land in increasing order (every rule but a
        transposing ``explicit``); else the order of its axes by the output axis they land on:
        ``x.transpose(plan.transposition(i))`` is the input whose axes line up, and that array
        (not ``x``) is what reshapes to :meth:`aligned_shape`.

        >>> from bcast import infer
        >>> infer((1, 3), (2, 3, 2), rule="explicit", axes_mapping=[2, 1], transpose=1).transposition(0)
        (1, 0)
        """
        m = self.axis_maps[i]
        mapped = [ax for ax in m if ax is not None]
        if all(a < b for a, b in zip(mapped, mapped[1:])):
            return None
        return tuple(sorted(range(len(m)), key=lambda k: (m[k] is None, m[k] if m[k] is not None else k)))

    def new_axes(self, i: int) -> tuple[int, ...]:
        """Output axes that input ``i`` has no axis on (it is repeated along them)."""
        mapped = {ax for ax in self.axis_maps[i] if ax is not None}
        return tuple(ax for ax in range(len(self.shape)) if ax not in mapped)

    def explain(self, *, deviations: bool = True) -> str:
        """The aligned table, the verdict, and the runtime deviations that apply
        (:func:`bcast.views.explain.explain_plan`, installed by the views layer)."""
        if _explainer is None:  # pragma: no cover - importing bcast installs it
            raise RuntimeError("no explainer installed: import bcast (bcast.views.explain installs it)")
        return _explainer(self, deviations=deviations)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--json`` of ``bcast shape``, plus the axis maps)."""
        d: dict[str, Any] = {
            "rule": self.rule,
            "attrs": {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.attrs},
            "inputs": [json_shape(s) for s in self.inputs],
            "names": list(self.names),
            "ok": True,
            "shape": json_shape(self.shape),
            "axis_maps": [list(m) for m in self.axis_maps],
            "stretched": [list(s) for s in self.stretched],
            "constraints": [str(c) for c in self.constraints],
            "error": None,
        }
        n = lookup_notation(self.notation)
        if n is not None:  # the shapes as the caller wrote them too
            d[n.name] = {
                "inputs": [json_shape(n.reorder(s)) for s in self.inputs],
                "shape": json_shape(n.reorder(self.shape)),
            }
        return d

    def __str__(self) -> str:
        ins = ", ".join(f"{n} {format_shape(s)}" for n, s in zip(self.names, self.inputs)) or "no input"
        text = f"{self.rule}: {ins} -> {format_shape(self.shape)}"
        if self.constraints:
            text += " if " + "; ".join(str(c) for c in self.constraints)
        return text

