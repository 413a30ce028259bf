"""``bcast conformance``: bcast's rules against every installed runtime, case by case.

The case matrix, per rule: the seed documents' examples and counter-examples
(:mod:`bcast.testing.seeds`), then ``cases`` random ones drawn from
:mod:`bcast.strategies` with a fixed seed (half broadcastable, half not), so a
report is the same from run to run.  Every case runs through bcast and through
each *column* that can check its rule:

==============  ===================================================  ==========
column          what runs                                            compared
==============  ===================================================  ==========
onnxruntime     one ONNX node in onnxruntime (CPU)                   values
reference       the same node in onnx's ReferenceEvaluator            values
openvino        OpenVINO's shape inference of one op                 shape
openvino-cpu    the op compiled on OpenVINO's CPU plugin (batched)   values
ncnn            ncnn's BinaryOp, in a child process (batched)        values
tflite          a one-op model in LiteRT's interpreter (child)        values
torch           torch's add / Tensor.add_ (eager, CPU)               values
paddle          paddle.add, Tensor.add_, elementwise_add with axis   values
mnn             MNN's ADD (expression API), one child per rule        values
coreml          coremltools' MIL type inference of add                shape
jax             jnp.add, lax.add, lax.broadcast_in_dim...             values
==============  ===================================================  ==========

The columns are plug-ins: each framework's package declares its own
(``bcast.frameworks.<name>.column``, :mod:`bcast.conformance.columns`).
Which op checks which rule comes from the op tables: for ONNX the first op of
:data:`bcast.onnx.OPS` whose opset versions use the rule (Add for numpy, Add-6
for onnx-legacy, Max-6 for none, PRelu, Gemm, Expand), for OpenVINO the first
element-wise op with each ``auto_broadcast`` mode, Select, PRelu and each
Broadcast mode, for ncnn and MNN their first BinaryOp type (ADD), for torch and
paddle the first two-input op of each rule (add, add_, Paddle's elementwise_add),
for jax jnp.add (numpy), lax.add (equal-rank), lax.broadcast_in_dim (explicit).
Rules no installed runtime runs are reported as not applicable; runtimes not
installed as skipped.  Inputs are float32 arrays of small integers (exact in every
runtime), Select's condition boolean.

A check *agrees* when bcast and the runtime give the same shape (and values),
or both refuse.  A disagreement is *explained* when a record of the deviation
registry (:mod:`bcast.frameworks.deviations`) for that runtime bears on the case, else
*unexplained*.  Cases a registry record says would kill the process (OpenVINO's
CPU plugin on a Broadcast of a scalar to ``[]``...) are not run; they count as
explained.

A run that checks nothing (no runtime installed, or none that runs the rules),
or where a runtime named in ``runtimes`` is not installed, is not ``ok``: its
``failures`` say why, unless ``allow_missing`` (then missing runtimes are only
skipped):

>>> r = run(rules=["numpy"], runtimes=[], cases=2)   # no runtime: every column skipped
>>> r["summary"]["unexplained"], [c["status"] for c in r["columns"]][:2], r["ok"]
(0, ['skipped', 'skipped'], False)
>>> r["failures"]
['nothing checked: no runtime selected']
>>> run(rules=["numpy"], runtimes=[], cases=2, allow_missing=True)["ok"]
True
"""

from __future__ import annotations

import importlib.util
from typing import Any

from ..frameworks.deviations import BY_ID, installed_version, notes_for
from ..core._format import format_shape
from ..core.dims import json_shape
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..rules import RULES, get_rule, infer
from .columns import Binding, Case, Column, columns, runtimes

__all__ = ["COLUMNS", "RUNTIMES", "bindings", "run"]

#: Every column, from the frameworks' ``column`` modules (:mod:`bcast.conformance.columns`).
COLUMNS: dict[str, Column] = columns()

#: The runtimes ``--runtimes`` names: runtime -> (its Python module, its column ids).
RUNTIMES = runtimes()


# --------------------------------------------------------------------------- which op checks which rule


def bindings() -> dict:
    """``{column: {rule: Binding}}`` for every column, from the op tables.

    >>> b = bindings()
    >>> b["onnxruntime"]["onnx-legacy"].op, b["onnxruntime"]["onnx-legacy"].opset, b["openvino"]["pdpd"].op
    ('Add', 6, 'Add')
    """
    return {c: col.bind(c) for c, col in COLUMNS.items()}


# --------------------------------------------------------------------------- the cases


def _matrix(rules, cases: int, seed: int) -> list:
    from ..testing import seeds

    if cases:  # the random cases need hypothesis; --cases 0 (the seed examples only) does not
        from ..testing.strategies import broadcastable, examples, not_broadcastable
    out = []
    for rule in rules:
        rows = [(src, shapes, attrs) for src, r, shapes, attrs, _ in seeds.rows() if r == rule]
        if cases:
            valid = examples(broadcastable(rule), cases - cases // 2, seed=seed)
            invalid = examples(not_broadcastable(rule), cases // 2, seed=seed) if cases // 2 else []
            rows += [("random", c.shapes, c.attrs) for c in valid + invalid]
        defaults = {a.name: a.default for a in get_rule(rule).attrs if not a.required}
        for k, (src, shapes, attrs) in enumerate(rows):
            case = Case(f"{rule}#{k}", rule, f"seed: {src}" if src != "random" else src,
                        tuple(tuple(s) for s in shapes), {**defaults, **attrs})
            try:
                case.result = infer(*case.shapes, rule=rule, **case.attrs)
            except BroadcastError as e:
                case.result = e
            out.append(case)
    return out


# --------------------------------------------------------------------------- comparing


def _outcome(value) -> dict:
    """A runtime's or bcast's answer as JSON: ok and shape, or the error."""
    from ..frameworks._oracle import RuntimeCrashed, RuntimeRefused

    if isinstance(value, BroadcastError):
        return {"ok": False, "shape": None, "error": value.reason, "crashed": False}
    if isinstance(value, RuntimeRefused):
        return {"ok": False, "shape": None, "error": value.message, "crashed": isinstance(value, RuntimeCrashed)}
    if isinstance(value, Exception):
        return {"ok": False, "shape": None, "error": f"{type(value).__name__}: {value}", "crashed": False}
    if isinstance(value, tuple):  # a shape (shape inference)
        return {"ok": True, "shape": json_shape(value), "error": None, "crashed": False}
    return {"ok": True, "shape": list(value.shape), "error": None, "crashed": False}


def _same(ours, theirs, compares: str) -> tuple[bool, str]:
    """Whether two answers agree, and in what they differ."""
    import numpy as np

    a, b = _outcome(ours), _outcome(theirs)
    if b["crashed"]:
        return False, "the runtime crashed"
    if not a["ok"] or not b["ok"]:
        if a["ok"] == b["ok"]:
            return True, "both refuse"
        return False, "bcast refuses, the runtime does not" if b["ok"] else "the runtime refuses, bcast does not"
    if a["shape"] != b["shape"]:
        return False, "shapes differ"
    if compares == "values":
        x, y = np.asarray(ours), np.asarray(theirs)
        if not np.array_equal(x.astype(np.float64), y.astype(np.float64), equal_nan=True):
            return False, "values differ"
    return True, "same shape" + (" and values" if compares == "values" else "")


def _findings(case: Case, column: Column, b: Binding) -> list:
    found = notes_for(case.result, op=b.op, op_attrs={"element_type": "float32"})
    return [f for f in found if f.deviation.runtime in column.deviation_runtimes]


def _run_column(column: Column, b: Binding, cases: list) -> None:
    """Every case of one rule through one column; fills ``case.checks[column.id]``."""
    adapter = column.adapter(column.id)
    jobs, todo = [], []
    for case in cases:
        prepared = adapter.inputs(case, b)
        found = _findings(case, column, b)
        check: dict[str, Any] = {"column": column.id, "op": b.op, "deviations": [
            {"id": f.deviation.id, "runtime": str(f.deviation.runtime), "note": f.note,
             "proven_on": list(f.deviation.proven_on), "installed": f.deviation.installed} for f in found]}
        case.checks[column.id] = check
        if prepared is None:
            check.update(verdict="not-applicable", why="the runtime cannot express these inputs", runtime=None)
            continue
        if any(f.deviation.kills_process for f in found):
            check.update(verdict="explained", why="not run: the registry says this kills the process", runtime=None)
            continue
        try:
            ours = adapter.expected(b, *prepared)
        except BroadcastError as e:
            ours = e
        except InputError as e:  # pragma: no cover - bcast refusing its own inputs is a bug
            ours = e
        if column.compares == "shape" and not isinstance(ours, Exception):
            ours = ours.shape if hasattr(ours, "shape") else ours
            ours = tuple(ours)
        check["bcast"] = ours
        jobs.append(prepared)
        todo.append(case)
    for case, theirs in zip(todo, adapter.run_all(b, jobs) if jobs else []):
        check = case.checks[column.id]
        ours = check.pop("bcast")
        agree, why = _same(ours, theirs, column.compares)
        check["runtime"] = _outcome(theirs)
        check["bcast_run"] = _outcome(ours)
        check["why"] = why
        check["verdict"] = "agree" if agree else "explained" if check["deviations"] else "unexplained"


# --------------------------------------------------------------------------- the report


def _versions() -> dict:
    out = {}
    for name, (module, _) in RUNTIMES.items():
        if importlib.util.find_spec(module) is None:
            continue
        if module in ("MNN", "coremltools"):  # from their metadata: importing them prints (MNN on the C stdout)
            out[name] = installed_version(module) or "?"
            continue
        mod = importlib.import_module(module)
        out[name] = getattr(mod, "__version__", "?").split("-")[0]  # openvino: 2026.4.1-22982-e213a...
    return out


def _select_runtimes(runtimes) -> list:
    names = list(RUNTIMES) if runtimes is None else list(runtimes)
    for n in names:
        if n not in RUNTIMES and n not in COLUMNS:
            raise InputError(f"unknown runtime {n!r}; the runtimes are: {', '.join(RUNTIMES)}")
    cols = []
    for n in names:
        for c in RUNTIMES[n][1] if n in RUNTIMES else (n,):
            if c not in cols:
                cols.append(c)
    return cols


def run(*, rules=None, runtimes=None, cases: int = 24, seed: int = 0, allow_missing: bool = False) -> dict:
    """Run the matrix; return the report (the ``--json`` object, documented in the README).

    ``rules``: rule names (default every rule); ``runtimes``: names of
    :data:`RUNTIMES` or column ids (default all; not installed: skipped);
    ``cases``: random cases per rule (besides the seed examples); ``seed``:
    the random cases' seed.  The report is ``ok`` when every disagreement is
    explained, something was checked, and every runtime named in ``runtimes``
    is installed (``allow_missing``: only the first).
    """
    rules = list(RULES) if rules is None else list(rules)
    for r in rules:
        get_rule(r)
    if isinstance(cases, bool) or not isinstance(cases, int) or not 0 <= cases <= 10000:
        raise InputError(f"cases must be an integer from 0 to 10000, got {cases!r}")
    wanted = _select_runtimes(runtimes)
    versions = _versions()
    matrix = _matrix(rules, cases, seed)
    binds = bindings()
    columns = []
    for cid, col in COLUMNS.items():
        status = "ok" if cid in wanted and col.runtime in versions else "skipped"
        why = None if status == "ok" else ("not selected" if cid not in wanted else "not installed")
        columns.append({"id": cid, "runtime": col.runtime, "title": col.title, "compares": col.compares,
                        "version": versions.get(col.runtime), "status": status, "reason": why,
                        "rules": sorted(binds[cid], key=list(RULES).index)})
        if status != "ok":
            continue
        for rule in rules:
            if rule in binds[cid]:
                _run_column(col, binds[cid][rule], [c for c in matrix if c.rule == rule])
    report = _report(rules, columns, binds, matrix, cases, seed)
    if not allow_missing:
        report["failures"] = _failures(report, runtimes, versions)
        report["ok"] = report["ok"] and not report["failures"]
    return report


def _pip(module: str) -> str:
    """What ``pip install`` takes to bring a runtime's module: the smallest install that
    :data:`bcast.core._require.INSTALL` names (``paddle`` comes with ``'bcast[paddle]'``, its distribution
    being paddlepaddle), else the module's name."""
    from ..core._require import INSTALL

    return INSTALL.get(module, f"pip install {module}").removeprefix("pip install ")


def _failures(report: dict, runtimes, versions: dict) -> list:
    """Why a run that explained every disagreement is still no pass: a runtime it was asked for is not
    installed, or it checked nothing (what a CI job must not take for a green run)."""
    out = []
    for n in runtimes or ():
        runtime = n if n in RUNTIMES else COLUMNS[n].runtime
        if runtime not in versions:
            out.append(f"{n} is not installed (pip install {_pip(RUNTIMES[runtime][0])})")
    if report["summary"]["checks"] == 0:
        if runtimes is not None and not list(runtimes):
            out.append("nothing checked: no runtime selected")
        elif not any(c["status"] == "ok" for c in report["columns"]):
            missing = dict.fromkeys(_pip(RUNTIMES[c["runtime"]][0]) for c in report["columns"]
                                    if c["reason"] == "not installed")
            out.append(f"nothing checked: no selected runtime is installed (pip install {' '.join(missing)})")
        else:
            out.append(f"nothing checked: no selected runtime runs the rules {', '.join(report['rules'])}")
    return list(dict.fromkeys(out))


def _case_json(case: Case) -> dict:
    res = case.result
    return {
        "id": case.id, "rule": case.rule, "source": case.source,
        "shapes": [json_shape(s) for s in case.shapes],
        "attrs": {k: (list(v) if isinstance(v, tuple) else v) for k, v in case.attrs.items()},
        "bcast": ({"ok": True, "shape": json_shape(_result_shape(res)), "error": None, "kind": None}
                  if isinstance(res, Plan) else {"ok": False, "shape": None, "error": res.reason, "kind": res.kind}),
        "checks": {cid: {k: v for k, v in chk.items() if k != "column"} for cid, chk in case.checks.items()},
    }


def _result_shape(plan: Plan) -> tuple:
    return plan.shape[::-1] if plan.attr("ncnn_order") else plan.shape


def _report(rules, columns, binds, matrix, cases, seed) -> dict:
    cells, disagreements = [], []
    for rule in rules:
        mine = [c for c in matrix if c.rule == rule]
        for col in columns:
            b = binds[col["id"]].get(rule)
            counts = {"agree": 0, "explained": 0, "unexplained": 0, "not-applicable": 0}
            for case in mine:
                chk = case.checks.get(col["id"])
                if chk:
                    counts[chk["verdict"]] += 1
                    if chk["verdict"] in ("explained", "unexplained"):
                        disagreements.append({"case": case.id, "rule": rule, "column": col["id"], "op": chk["op"],
                                              "explained": chk["verdict"] == "explained", "why": chk["why"],
                                              "deviations": [d["id"] for d in chk["deviations"]]})
            if b is None:
                status = "not-applicable"
            elif col["status"] != "ok":
                status = "skipped"
            else:
                status = ("unexplained" if counts["unexplained"] else "explained" if counts["explained"]
                          else "agree")
            cells.append({"rule": rule, "column": col["id"], "op": None if b is None else b.op,
                          "opset": None if b is None else b.opset, "op_attrs": {} if b is None else b.op_attrs,
                          "status": status, "cases": sum(counts.values()) if b and col["status"] == "ok" else 0,
                          **{k.replace("-", "_"): v for k, v in counts.items()}})
    checks = [chk for c in matrix for chk in c.checks.values()]
    summary = {"cases": len(matrix), "checks": len(checks),
               **{v.replace("-", "_"): sum(chk["verdict"] == v for chk in checks)
                  for v in ("agree", "explained", "unexplained", "not-applicable")}}
    return {"seed": seed, "random_cases_per_rule": cases, "rules": rules, "columns": columns, "cells": cells,
            "cases": [_case_json(c) for c in matrix], "disagreements": disagreements, "summary": summary,
            "ok": summary["unexplained"] == 0, "failures": []}


# --------------------------------------------------------------------------- text


def _cell_text(cell: dict) -> str:
    if cell["status"] in ("not-applicable", "skipped"):
        return "-" if cell["status"] == "not-applicable" else "skipped"
    text = f"{cell['agree']}/{cell['cases']}"
    if cell["explained"]:
        text += f" +{cell['explained']} dev"
    if cell["unexplained"]:
        text += f" !{cell['unexplained']}"
    return text


def format_text(report: dict) -> str:
    """The report as the command prints it: the matrix, then every unexplained disagreement
    and the explained ones counted by deviation record."""
    s = report["summary"]
    cols = report["columns"]
    lines = [f"bcast conformance: {s['cases']} cases ({report['random_cases_per_rule']} random per rule, seed "
             f"{report['seed']}, plus the seed examples), {s['checks']} checks: {s['agree']} agree, "
             f"{s['explained']} explained by the deviation registry, {s['unexplained']} unexplained"]
    shown = [f"{c['id']} {c['version']}" if c["status"] == "ok" else f"{c['id']} ({c['reason']})" for c in cols]
    lines += ["runtimes: " + ", ".join(shown), ""]
    cells = {(c["rule"], c["column"]): c for c in report["cells"]}
    table = [["rule"] + [c["id"] for c in cols]]
    table += [[r] + [_cell_text(cells[r, c["id"]]) for c in cols] for r in report["rules"]]
    widths = [max(len(row[k]) for row in table) for k in range(len(table[0]))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in table]
    lines.append("\nagreed/checked; +N dev: disagreements the deviation registry explains; !N: unexplained; "
                 "-: no op of that runtime uses the rule")
    cases = {c["id"]: c for c in report["cases"]}
    unexplained = [d for d in report["disagreements"] if not d["explained"]]
    if unexplained:
        lines.append(f"\nUNEXPLAINED ({len(unexplained)}):")
        for d in unexplained:
            lines.append("  " + _disagreement_line(cases[d["case"]], d))
    counts: dict = {}
    for d in report["disagreements"]:
        if d["explained"]:
            for dev in d["deviations"]:
                counts.setdefault((dev, d["column"]), []).append(d["case"])
    if counts:
        lines.append("\nexplained:")
        for (dev, col), ids in sorted(counts.items()):
            drift = BY_ID[dev].drift() if dev in BY_ID else ""
            lines.append(f"  {dev} ({col}{'; ' + drift if drift else ''}): {len(ids)} case{'s' * (len(ids) != 1)}, "
                         "e.g. " + _disagreement_line(cases[ids[0]], {"column": col}))
    for f in report.get("failures", ()):
        lines.append(f"\nFAILED: {f}")
    return "\n".join(lines)


def _answer(d: dict | None) -> str:
    if not d:
        return "not run"
    if d["ok"]:
        return format_shape(d["shape"])
    return "crashed" if d.get("crashed") else "refuses"


def _disagreement_line(case: dict, d: dict) -> str:
    chk = case["checks"][d["column"]]
    shapes = " ".join(format_shape(s) for s in case["shapes"])
    attrs = "".join(f" {k}={v}" for k, v in case["attrs"].items() if v is not None)
    return (f"{case['id']} {chk['op']} {shapes}{attrs}: bcast {_answer(chk.get('bcast_run') or case['bcast'])}, "
            f"{d['column']} {_answer(chk.get('runtime'))} ({chk['why']})")
