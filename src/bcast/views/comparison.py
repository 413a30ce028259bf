"""``bcast.compare``: every rule on the same shapes, with the deviations that apply."""

from __future__ import annotations

from typing import Any

from ..frameworks import framework, names as framework_names, op_name, part, plan as plan_op
from ..frameworks.deviations import Runtime, notes_for
from ..core.dims import json_shape
from ..core._format import brief
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..rules import RULES, infer
from ..core.shapes import as_shape

__all__ = ["compare", "compare_ops", "framework_op", "short_reason"]


def short_reason(err: BroadcastError) -> str:
    """The error without its "rule: cannot broadcast ..." head: where, dims, why."""
    where = err.where()
    return f"{where}; {err.reason}" if where else err.reason


def compare(*shapes: object, **attrs: Any) -> dict[str, Any]:
    """Every rule on the same shapes, side by side: the data behind ``bcast compare``.

    Each attribute goes to the rules that take it; ``onnx-legacy`` gets
    ``broadcast=1`` unless told otherwise; ``ncnn_order=True`` reads every shape
    in ncnn's [w,h,d,c] order.  Returns ``{"inputs", "rules", "deviations",
    "frameworks"}``: one row per rule (``ok`` is None where the rule does not
    apply: wrong number of shapes, or a required attribute missing), the runtime
    deviations that bear on the rows, and one row per registered framework: its
    element-wise op (:func:`framework_op`) on the shapes, as :func:`compare_ops`
    gives it (``bcast compare --framework NAME`` shows every op).  A rule's row
    knows no op, so its deviations are the records about the rule; a framework's
    row adds its own runtimes' records about its op (each with ``framework`` and
    ``ops``), where a rule's row has not said the same.

    >>> rows = compare((2, 3, 4, 5), (3, 4), axis=1)["rules"]
    >>> [r["rule"] for r in rows if r["ok"]]
    ['pdpd', 'onnx-legacy', 'paddle']
    """
    given = _checked(attrs)
    checked = [as_shape(s, what=f"shape of input {i}") for i, s in enumerate(shapes)]
    if given.pop("ncnn_order", False):
        checked = [s[::-1] for s in checked]
    rows: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    for name, rule in RULES.items():
        names = [a.name for a in rule.attrs]
        use = {k: v for k, v in given.items() if k in names}
        for k, v in rule.compare_attrs:  # said in the row: e.g. what the ncnn row assumes of a batch axis
            use.setdefault(k, v)
        row: dict[str, Any] = {"rule": name, "attrs": {k: _json(v) for k, v in use.items()}}
        n = len(checked)
        if n < rule.min_inputs or (rule.max_inputs is not None and n > rule.max_inputs):
            row.update(ok=None, shape=None, error=None, note=f"n/a: takes {rule.arity_text()}")
        elif any(a.required and a.name not in use for a in rule.attrs):
            missing = [a.flag for a in rule.attrs if a.required and a.name not in use]
            row.update(ok=None, shape=None, error=None, note=f"n/a: needs {', '.join(missing)}")
        else:
            result: Plan | BroadcastError
            try:
                result = infer(*checked, rule=name, **use)
            except BroadcastError as err:
                result = err
                row.update(ok=False, shape=None, error=err.to_dict(), note=short_reason(err))
            else:
                row.update(ok=True, shape=json_shape(result.shape), error=None, note=_note(result))
            hint = rule.compare_hint(tuple(checked), use) if rule.compare_hint else ""
            if hint:
                row["note"] = f"{row['note']}; {hint}" if row["note"] else hint
            for f in notes_for(result):
                findings.append({"rule": name, **f.to_dict()})
        rows.append(row)
    ops = []
    for fw in framework_names():
        got = compare_ops(fw, *checked, op=framework_op(fw), catch=True)
        ops.append(got["rules"][0])
        findings += [{"framework": fw, **f} for f in got["deviations"]
                     if not any((g["id"], g["note"]) == (f["id"], f["note"]) for g in findings)]
    return {"inputs": [json_shape(s) for s in checked], "rules": rows, "deviations": findings, "frameworks": ops}


def framework_op(name: str) -> str:
    """The op that stands for framework ``name`` in :func:`compare`: its table's ``COMPARE_OP`` (its
    element-wise Add), else its first op.

    >>> framework_op("ncnn")
    'ADD'
    """
    table = framework(name)
    return str(getattr(table, "COMPARE_OP", None) or table.ops()[0])


def _json(value: Any) -> Any:
    return list(value) if isinstance(value, (tuple, list)) else value


def compare_ops(name: str, *shapes: object, op: str | None = None, catch: bool = False,
                **attrs: Any) -> dict[str, Any]:
    """One framework's ops side by side on the same shapes (or only ``op``): the data behind
    ``bcast compare --framework``.  The same keys as :func:`compare`; each row also names its
    ``framework`` and ``op`` (``rule`` is the rule the op broadcasts by; None, like ``ok``, where the op
    does not apply: another arity, an attribute it does not take), and each deviation the ``ops`` it
    bears on: the records of this framework's runtimes (members of its deviations' ``RUNTIME`` enum: onnx's
    for onnx, onnxruntime's, its reference evaluator's...), those about one op included where they bear
    on that op (``op`` as the framework takes it: mnn's ``"Greater"`` is the ``GREATER`` of its records,
    :func:`bcast.frameworks.op_name`).  ``op`` that does not take the shapes is an
    InputError, unless ``catch`` (then its row says why, as for every op).

    >>> rows = compare_ops("onnx", (2, 3), (3,))["rules"]
    >>> [(r["op"], r["rule"], r["shape"]) for r in rows][:2], [r["op"] for r in rows if r["ok"] is None][:3]
    ([('Add', 'numpy', [2, 3]), ('Sub', 'numpy', [2, 3])], ['BitShift', 'Where'])
    """
    checked = tuple(as_shape(s, what=f"shape of input {i}") for i, s in enumerate(shapes))
    ops = framework(name).ops() if op is None else (op,)
    records = part(name, "deviations")
    runtime: type[Runtime] | None = None if records is None else records.RUNTIME
    rows: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    for o in ops:
        row: dict[str, Any] = {"rule": None, "framework": name, "op": o, "attrs": {}}
        result: Plan | BroadcastError
        try:
            result = plan_op(name, o, *checked, **attrs)
        except InputError as err:
            if op is not None and not catch:  # the one op asked for: a bad request
                raise
            row.update(ok=None, shape=None, error=None, note=f"n/a: {err}")
            rows.append(row)
            continue
        except BroadcastError as err:
            result = err
            row.update(ok=False, shape=None, error=err.to_dict(), note=short_reason(err))
        else:
            row.update(ok=True, shape=json_shape(result.shape), error=None, note=_note(result))
        row["rule"] = result.rule
        row["attrs"] = {k: _json(v) for k, v in result.attrs if k != "alignment"}
        for f in notes_for(result, op_name(name, o)):
            if runtime is None or not isinstance(f.deviation.runtime, runtime):
                continue  # another framework's runtime (onnx's, on openvino's op)
            found = {"rule": result.rule, "ops": [o], **f.to_dict()}
            same = [g for g in findings if {**g, "ops": [o]} == found]  # said once, naming every op it is about
            if same:
                same[0]["ops"].append(o)
            else:
                findings.append(found)
        rows.append(row)
    return {"inputs": [json_shape(s) for s in checked], "rules": rows, "deviations": findings}


def _checked(attrs: dict[str, Any]) -> dict[str, Any]:
    """The attributes, each checked and normalized once by the first rule that takes it
    (None: not given); one that no rule takes is an InputError.

    >>> _checked({"axis": "1"})
    Traceback (most recent call last):
    ...
    bcast.core.errors.InputError: compare: attribute axis must be an integer, got '1'
    """
    every = {a.name: a for r in reversed(RULES.values()) for a in r.attrs}  # the first rule's wins
    out = {}
    for key, value in attrs.items():
        if key not in every:
            raise InputError(f"compare: no rule has an attribute {brief(key)} (the attributes: {', '.join(every)})")
        if value is not None:
            out[key] = every[key].normalize("compare", value)
    return out


def _note(plan: Plan) -> str:
    """The alignment a rule chose, and the constraints the plan needs."""
    parts = [plan.attr("alignment") or ""] + [f"if {c}" for c in plan.constraints]
    return "; ".join(p for p in parts if p)
