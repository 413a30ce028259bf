"""``explain``: the aligned table, the verdict, the reason, the deviations.

Every input gets a row; each of its dims sits in the column of the output axis
it lands on, so numpy's right alignment, ncnn's left alignment and an explicit
axes_mapping all read the same way.  A stretched dim is starred; a failing
column is marked with ``^``.  The constraints a plan needs of symbolic,
unknown and interval dims follow the verdict, one ``if`` line each.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core._format import format_shape, lookup_notation
from ..frameworks.deviations import Note, notes_for
from ..core.errors import BroadcastError
from ..core.plan import Plan, install_explainer
from ..rules import RULES, Rule

__all__ = ["explain", "explain_plan", "explain_error"]


def explain(*shapes, rule: str = "numpy", **attrs) -> str:
    """Explain ``shapes`` under ``rule``, whether or not they broadcast."""
    from ..rules import infer

    try:
        return explain_plan(infer(*shapes, rule=rule, **attrs))
    except BroadcastError as e:
        return explain_error(e)


def _attrs_text(attrs) -> str:
    shown = [f"{k}={list(v) if isinstance(v, tuple) else v}" for k, v in attrs
             if v is not None and v is not False and k != "alignment"]
    return f" [{', '.join(shown)}]" if shown else ""


def _table(names, shapes, maps, out_rank, out=None, stretched=None, mark=None) -> list[str]:
    rows = []
    for i, (name, shape, m) in enumerate(zip(names, shapes, maps)):
        cells = [""] * out_rank
        for k, ax in enumerate(m):
            if ax is not None:
                star = "*" if stretched is not None and k in stretched[i] else ""
                cells[ax] = f"{shape[k]}{star}"
        rows.append((name, cells))
    if out is not None:
        rows.append(("out", [str(d) for d in out]))
    head = [("axis", [str(ax) for ax in range(out_rank)]),
            ("from right", [str(ax - out_rank) for ax in range(out_rank)])]
    every = head + rows
    label_w = max(len(label) for label, _ in every)
    col_w = max([len(c.rstrip("*")) for _, cells in every for c in cells] + [1]) + 1

    def cell(c: str) -> str:
        # right-align on the digits; a star hangs to the right
        core, star = (c[:-1], "*") if c.endswith("*") else (c, " ")
        return core.rjust(col_w) + star

    lines = [(f"  {label.ljust(label_w)} " + "".join(cell(c) for c in cells)).rstrip() for label, cells in every]
    lines.insert(2, "")
    if mark is not None:
        pos = 2 + label_w + 1 + (mark + 1) * (col_w + 1) - 2
        lines.append(" " * pos + "^")
    return lines


def _notation_lines(notation: str, names, shapes, shape=None) -> list[str]:
    """The shapes in the notation the caller wrote them in (ncnn's [w,h,d,c]); none for numpy's."""
    n = lookup_notation(notation)
    if n is None:
        return []
    ins = ", ".join(f"{name} {n.shape(s)}" for name, s in zip(names, shapes))
    tail = f" -> {n.shape(shape)}" if shape is not None else ""
    return [f"  in {n.name}'s {n.order} order: {ins}{tail} (the table is in numpy order)"]


def _unplaced(rule: str, names, shapes, maps) -> list[str]:
    r = RULES.get(rule)  # a plan made by hand may name no registered rule
    what = r.unplaced if r else Rule.unplaced
    return [f"  {name} axis {k} (dim {shape[k]}) {what}"
            for name, shape, m in zip(names, shapes, maps) for k, ax in enumerate(m) if ax is None]


def _transposed(plan: Plan) -> list[str]:
    """A line per input whose axes land out of order (StableHLO's transposing broadcast_in_dim)."""
    out = []
    for i, name in enumerate(plan.names):
        if plan.transposition(i) is not None:
            lands = ", ".join(f"axis {k} on {ax}" for k, ax in enumerate(plan.axis_maps[i]) if ax is not None)
            out.append(f"  {name} is transposed: its {lands} (the table shows its dims where they land)")
    return out


def _path(rule: str) -> list[str]:
    path = RULES[rule].path if rule in RULES else ""
    return [f"  path: {path}"] if path else []


def _findings(found: list[Note]) -> list[str]:
    if not found:
        return []
    lines = ["", "runtimes that deviate from the spec here:"]
    for f in found:
        d = f.deviation
        lines.append(f"  - {d.label()} [{d.id}]: {f.note}")
    return lines


def explain_plan(plan: Plan, *, deviations: bool = True, keep: Callable[[Note], bool] | None = None,
                 op: str | None = None) -> str:
    """The aligned table of ``plan``, its verdict and the deviation records that bear on it (``keep``: only
    those it says yes to; ``bcast explain --framework F`` keeps F's runtimes'; ``op``: the op the plan is
    for, as its table spells it, which adds the records about that op alone, as
    :func:`bcast.frameworks.deviations.notes_for` says)."""
    ins = ", ".join(f"{n} {format_shape(s)}" for n, s in zip(plan.names, plan.inputs))
    lines = [f"{plan.rule}{_attrs_text(plan.attrs)}: {ins} -> {format_shape(plan.shape)}"]
    lines += _path(plan.rule)
    lines += _notation_lines(plan.notation, plan.names, plan.inputs, plan.shape)
    lines.append("")
    lines += _table(plan.names, plan.inputs, plan.axis_maps, len(plan.shape), plan.shape, plan.stretched)
    lines += _unplaced(plan.rule, plan.names, plan.inputs, plan.axis_maps)
    lines += _transposed(plan)
    if any(plan.stretched):
        lines.append("")
        lines.append("  * stretched: a dim of 1 repeated to the output size")
    case = plan.attr("alignment")
    if case:
        lines.append(f"  alignment: {case}")
    lines.append("")
    lines.append(f"ok: {format_shape(plan.shape)}")
    lines += [f"  if {c}" for c in plan.constraints]
    if deviations:
        lines += _findings([f for f in notes_for(plan, op) if keep is None or keep(f)])
    return "\n".join(lines)


def explain_error(err: BroadcastError, *, deviations: bool = True, keep: Callable[[Note], bool] | None = None,
                  op: str | None = None) -> str:
    """The aligned table of the shapes ``err`` refuses, where and why, and the deviation records that bear on
    it (``keep`` and ``op`` as in :func:`explain_plan`)."""
    ins = ", ".join(f"{n} {format_shape(s)}" for n, s in zip(err.names, err.shapes))
    lines = [f"{err.rule}{_attrs_text(err.attrs)}: {ins} -> not broadcastable"]
    lines += _path(err.rule)
    lines += _notation_lines(err.notation, err.names, err.shapes)
    lines.append("")
    if err.alignment is not None and err.out_rank is not None:
        mark = None if err.from_right is None else err.out_rank + err.from_right
        lines += _table(err.names, err.shapes, err.alignment, err.out_rank, mark=mark)
        lines += _unplaced(err.rule, err.names, err.shapes, err.alignment)
    else:
        w = max(len(n) for n in err.names)
        lines += [f"  {n.ljust(w)}  {format_shape(s)}" for n, s in zip(err.names, err.shapes)]
    lines.append("")
    where = err.where()
    if where:
        lines.append(f"not broadcastable: {where}")
    else:
        lines.append(f"not broadcastable ({err.kind}):")
    lines.append(f"  {err.reason}")
    if deviations:
        lines += _findings([f for f in notes_for(err, op) if keep is None or keep(f)])
    return "\n".join(lines)


install_explainer(explain_plan)  # Plan.explain(), without the core importing this layer
