"""``bcast lint model.xml``: every broadcasting node of an OpenVINO IR, checked under its own rule.

An IR node carries its broadcasting: ``auto_broadcast`` ``none``/``numpy``/``pdpd`` (with its axis, 0
where the IR leaves it out, as OpenVINO's reader takes it) on the element-wise ops and Select,
PRelu's per-channel slope, Broadcast-1/3's ``mode``.  Each node of an op of OpenVINO's op table, in
the main graph and in the bodies of If, Loop and TensorIterator (:mod:`bcast.models.ir_model` reads
them, with their shapes; a finding's ``node`` is its path, ``if_6/then_body/t``), gets the plan of its
own rule (:func:`bcast.frameworks.openvino.ops.plan`; FakeQuantize's four ranges each into X, its spec's
rule: :mod:`bcast.frameworks.openvino.fake_quantize`), and is reported, in lint's kinds, when:

=========== ==================================================================
unknown     an input's rank is not known (or Broadcast's axes_mapping is not a constant)
invalid     the shapes do not broadcast under the node's own rule (OpenVINO's reader refuses such an
            IR: the shapes are then the port dims the IR holds), or its attributes are not OpenVINO's
unproven    they broadcast only if dynamic dims meet constraints
differs     OpenVINO (its shape inference, its CPU plugin) departs from the op's spec on these shapes:
            a deviation record of the registry that bears on the node (its op, element type)
values      OpenVINO runs the node's op through a kernel that computes other values than the spec on
            some inputs (a value record: int8 arithmetic, Maximum/Minimum and NaN...); advisory, as for
            ONNX models: such findings alone leave the IR ok
=========== ==================================================================

Every finding carries the records of OpenVINO's runtimes that bear on it (Model.evaluate's too, which
alone make no finding: an IR runs on a device plugin).  The only target is ``openvino``; the report
says whose shapes were checked (``reader``).  tests/models/test_lint_ir.py holds the proof: IRs made
by OpenVINO's converter, and edited ones, each verdict against what OpenVINO's CPU plugin computes.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from ..core.dims import UNKNOWN
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..frameworks._deviation import Outcome
from ..frameworks.deviations import DEVIATIONS, Note, notes_for
from ..frameworks.openvino.ops import plan as ov_plan
from ..frameworks.openvino.runtimes import OpenVINORuntime
from .findings import Finding, Report
from .ir_model import IR, Node, read

__all__ = ["lint_ir", "lint_ir_report", "IRReport", "TARGET"]

TARGET = "openvino"
#: The runtimes whose records make a finding by themselves: what runs an IR (its reader, a device plugin).
DECISIVE = (OpenVINORuntime.OPENVINO, OpenVINORuntime.CPU_PLUGIN)


@dataclass
class IRReport(Report):
    """A :class:`~bcast.models.findings.Report` of an IR: ``opset`` holds the IR's version; ``reader`` says
    whose shapes were checked (OpenVINO's reader, or the ``.xml``'s port dims and why)."""

    reader: str = ""

    def describe(self) -> str:
        return f"OpenVINO IR v{self.opset}, shapes from {self.reader}"

    def to_dict(self, model: str | None = None) -> dict:
        return {"model": model, "format": "openvino-ir", "ir_version": self.opset, "reader": self.reader,
                **{k: v for k, v in super().to_dict(model).items() if k != "model"}}


def _plan(node: Node) -> Plan | BroadcastError | InputError | str:
    """The node's plan under its own rule, its error, or (a str) why it cannot be checked."""
    a = node.attrs
    shapes = list(node.shapes)
    try:
        if node.op == "Broadcast":
            mode = a.get("mode", "numpy")
            for i in range(1, len(shapes)):
                value = node.constants.get(i)
                if value is not None:
                    shapes[i] = value
                elif i == 2 and mode == "explicit":
                    return "axes_mapping is not a constant"
                elif shapes[i] is not None and len(shapes[i]) == 1 and type(shapes[i][0]) is int:
                    shapes[i] = (UNKNOWN,) * shapes[i][0]  # target_shape computed: its length known
                else:
                    return "target_shape is neither a constant nor of a known length"
            axis = a.get("axis", 0) if mode == "pdpd" else None
            return ov_plan("Broadcast", *shapes, mode=mode, version=node.version,
                           **({"axis": axis} if axis is not None else {}))
        if node.op == "PRelu":
            return ov_plan("PRelu", *shapes)
        mode = a.get("auto_broadcast", "numpy")
        kw = {"axis": a.get("axis", 0)} if mode == "pdpd" else {}  # an IR's pdpd axis: 0 where absent
        if node.op == "FakeQuantize" and "levels" in a:
            kw["levels"] = a["levels"]
        return ov_plan(node.op, *shapes, auto_broadcast=mode, **kw)
    except (BroadcastError, InputError) as e:
        return e.with_traceback(None)


def _notes(result: Any, node: Node) -> tuple[Note, ...]:
    elem = node.types[1] if node.op == "Select" and len(node.types) > 1 else (node.types[0] if node.types else None)
    attrs = {"element_type": elem} if elem else None
    if node.op == "FakeQuantize":  # its plans have five inputs: the records about FakeQuantize alone read them
        outcome = Outcome.of(result, node.op, attrs)
        return tuple(Note(d, n) for d in DEVIATIONS if node.op in d.only_ops and d.check is not None
                     and outcome.rule in d.rules and (n := d.check(outcome)))
    # a record of a builder's default (needs_omitted_attr) is not about an IR: lint reads an omitted attribute
    # as OpenVINO's reader does
    return tuple(n for n in notes_for(result, node.op, attrs)
                 if isinstance(n.deviation.runtime, OpenVINORuntime) and not n.deviation.needs_omitted_attr)


def _explain(e: BroadcastError) -> str:
    if e.rule not in ("numpy", "none", "pdpd", "unidirectional", "bidirectional") or (
            len(e.shapes) > 2 and e.rule not in ("numpy", "none")):  # FakeQuantize's five: `bcast explain` takes two
        return ""
    args = ["bcast", "explain", *(",".join(map(str, s)) + ("," if len(s) == 1 else "") if s else "[]"
                                  for s in e.shapes), "--rule", e.rule]
    args += [x for k, v in e.attrs if k == "axis" and v is not None for x in ("--axis", str(v))]
    return f"; `{' '.join(shlex.quote(x) for x in args)}` shows the alignment"


def _rows(node: Node) -> list[tuple]:
    """``(kind, rule, reason, fix, notes, output shape)`` of each finding on the node."""
    unknown = [f"{n!r}" for n, s in zip(node.inputs, node.shapes) if s is None]
    if unknown:
        return [("unknown", None, "the rank of " + ", ".join(unknown) + " is not known: the node cannot be checked",
                 "give the model's inputs static ranks (ov.convert_model(..., input=...), or reshape the model)", (),
                 None)]
    result = _plan(node)
    if isinstance(result, str):
        return [("unknown", None, f"{result}: the node cannot be checked", "make it a constant", (), None)]
    if isinstance(result, InputError):
        return [("invalid", None, str(result), "fix the node's attributes", (), None)]
    if isinstance(result, BroadcastError):
        return [("invalid", result.rule, str(result), "change the shapes (or the node's auto_broadcast, axis or mode) "
                 "so that they broadcast under its rule" + _explain(result), _notes(result, node), None)]
    notes = _notes(result, node)
    rows = []
    if result.constraints:
        need = "; ".join(str(c) for c in result.constraints)
        rows.append(("unproven", result.rule, f"the shapes broadcast only if {need} (OpenVINO's shape inference "
                     "assumes so at run time)", "make sure the sizes meet it, or give those dims static sizes", notes,
                     result.shape))
    decisive = [n for n in notes if n.deviation.runtime in DECISIVE]
    if decisive:
        rows.append(("differs", result.rule, "; ".join(n.note for n in decisive), "avoid these shapes on OpenVINO "
                     "(`bcast translate ... --to openvino` gives a form it computes as specified)", notes,
                     result.shape))
    return rows + _value_rows(node, result.shape)


#: value record -> whether it concerns a node whose input element types are ``t`` (numpy names, None where not
#: known: then it does), as :data:`bcast.models.values.ELEMENT_TYPES` says for ONNX's codes.
_VALUE_TYPES = {
    "openvino-cpu-integer-values": lambda t: not t or t[0] is None or t[0].startswith(("int", "uint")),
    "openvino-cpu-minmax-nan": lambda t: not t or t[0] is None or t[0].startswith("float"),
    "openvino-prelu-element-types": lambda t: (len(t) > 1 and t[0] is not None and t[1] is not None
                                               and (t[0] != t[1] or not t[0].startswith("float"))),
}


#: value records that bear on the values of constant inputs, which lint does not read (FakeQuantize's ranges: those
#: with input_low >= input_high, a binarization); the records are in the registry (``bcast deviations``), lint makes
#: no finding of them.
_UNSEEN = ("openvino-cpu-fake-quantize-values", "openvino-cpu-fake-quantize-binarization")


def _value_rows(node: Node, shape: tuple) -> list[tuple]:
    """``values`` findings: the node's op runs through a kernel of OpenVINO's that computes other values than
    the spec on some inputs (a value record of the registry: no shape predicts it), as for ONNX models
    (:mod:`bcast.models.values`)."""
    rows = []
    for dev in DEVIATIONS:
        if dev.check is not None or dev.runtime not in DECISIVE or node.op not in dev.only_ops or dev.id in _UNSEEN:
            continue
        concerns = _VALUE_TYPES.get(dev.id)
        if concerns is not None and not concerns(node.types):
            continue
        note = Note(dev, f"{dev.runtime} runs {node.op}: {dev.behaviour}")
        rows.append(("values", None, f"{dev.runtime} runs {node.op}, whose kernel computes other values than the spec "
                     f"on some inputs ({dev.id}; see the note)", "make sure the inputs avoid what the record's "
                     "condition says: " + dev.condition, (note,), shape))
    return rows


def lint_ir_report(model: Any, target: str = TARGET, *, bin: Any = None, reader: str = "auto") -> IRReport:
    """Lint the IR at ``model`` (its weights at ``bin``, default beside it); ``reader`` as for
    :func:`bcast.models.ir_model.read`."""
    if target != TARGET:
        raise InputError(f"an OpenVINO IR is linted for target {TARGET} only (it is already OpenVINO's model); got "
                         f"target {target!r}")
    ir: IR = read(model, bin, reader)
    report = IRReport(TARGET, ir.version, ir.layers, 0, reader=ir.reader)
    known: dict[tuple, list[tuple]] = {}  # what a node's rows depend on -> its rows (a model repeats few shapes)
    for node in ir.nodes:
        report.checked += 1
        key = (node.op, node.version, node.shapes, node.types, tuple(sorted(node.attrs.items())),
               tuple(sorted(node.constants.items())))
        rows = known.get(key) if None not in node.shapes else None
        if rows is None:
            rows = known[key] = _rows(node)
        for kind, rule, reason, fix, notes, out in rows:
            report.findings.append(Finding(node.label, node.op, node.version, node.inputs, node.shapes, node.name,
                                           out if out is not None else node.output, kind, TARGET, rule, reason, fix,
                                           notes, node.path))
    if ir.refused and not report.findings:
        raise InputError(f"{ir.path}: OpenVINO refuses the IR ({ir.refused}), and no broadcasting node explains it")
    return report


def lint_ir(model: Any, target: str = TARGET, *, bin: Any = None, reader: str = "auto") -> list[Finding]:
    """The findings of :func:`lint_ir_report`: empty when every broadcasting node is fine."""
    return lint_ir_report(model, target, bin=bin, reader=reader).findings
