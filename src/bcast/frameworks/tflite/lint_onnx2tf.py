"""Lint target ``onnx2tf``: the model as onnx2tf 1.29.24 converts it to TFLite, channels-last.

Target ``tflite`` checks the builtins the converter emits; onnx2tf also changes the layout: it
transposes the activations to channels-last (NCW->NWC, NCHW->NHWC, NCDHW->NDHWC: ``--layout
channels-last``, :mod:`bcast.models.layout`) and then decides, op by op and from the shapes alone,
whether and how to transpose the other operand of a broadcast.  This target is the ``tflite`` checks
plus a model of those decisions, read from onnx2tf's source (``onnx2tf/ops/*.py``,
``onnx2tf/utils/common_functions.py``) and checked against what its conversions of the conversion
corpus compute in LiteRT (tests/models/test_onnx2tf_corpus.py: no finding on any model it converts
right, one on every broadcast it gets wrong).  It starts from ``--layout``'s verdict (the converter
that leaves every constant alone) and applies these rules:

1. **Ops that do not reconcile layouts.**  Only Add, Sub, Mul, Div, Mod and PRelu run their operands
   through ``pre_explicit_broadcast``, ``explicit_broadcast`` and
   ``shape_unmatched_special_avoidance_workaround`` (common_functions.py), which transpose or reshape
   a constant until it broadcasts against the transposed activation.  Max, Min, Mean, Sum, Pow
   (ops/Max.py, Min.py, Mean.py, Sum.py, Pow.py) and the other broadcasting ops hand their operands to
   TensorFlow as converted: ``--layout``'s finding stands (``[1,4,4,3] vs [3,1,1]`` in tf.math.maximum).
   The fix: the constant at the activation's rank, ONNX layout kept (``(1,3,1,1)``): onnx2tf transposes
   a constant of rank 3 to 5 with that rank's channels-last permutation (``get_constant_or_variable``).
2. **Reconciling ops, where the sizes tell.**  Where the transposed operands no longer broadcast, or
   broadcast to another shape, those functions find the transposition that makes them broadcast: no
   finding.  Two exceptions:

   a. the operands still broadcast to the output's shape after the layout change (dims that coincide:
      a ``(C,1,1)`` scale on ``H == C``, a ``(T,T)`` table): nothing tells onnx2tf the layout is wrong,
      the constant keeps its axes, and the node computes other values (``differs``).  A 1-D constant
      of the last dim's size is the exception that ``explicit_broadcast`` makes: it is put on the last
      axis, as the ONNX node has it.
   b. rank 5: a constant of rank 3 to 5 is transposed with the channels-last permutation of its *own*
      rank (``get_constant_or_variable`` with ``before_op_output_shape_trans``), so a ``(2,3,4)`` table
      on NCDHW becomes ``(2,4,3)``, then ``[1,2,4,3,1]`` against ``[1,2,3,4,2]``; a 5-D constant whose
      shape is not the activation's is transposed twice (``[1,3,3,2,2]`` against ``[2,2,3,3,2]``).  A
      rank-5 constant with more than one axis that is not 1 is ``unsupported`` unless it has the
      activation's own shape.
3. **Variadic ops after a reconciled node.**  Where a reconciling op met a constant of lower rank that
   does not broadcast channels-last, onnx2tf computes it in the ONNX layout (its output stays
   channels-first: ``[1,3,4,4]`` beside ``[1,4,4,3]``); a following binary op reconciles the two, a
   Max / Min / Mean / Sum does not (Mean.py stacks its inputs with ``tf.stack``): ``unsupported``.
4. **Two activations whose spatial sizes coincide.**  Two computed operands of the layout's rank, of
   different shapes, where an axis of one that is not 1 is spatial and another spatial axis of the output
   has the same size (a ``(B,1,1,T)`` mask on ``(B,C,T,T)`` scores): ``shape_unmatched_special_avoidance
   _workaround`` picks the transposition by how many sizes match, and with ``H == W`` it puts the mask on
   the wrong axis: ``differs``.

Not modelled: control flow.  onnx2tf fails on an If whose branch reads an outer initializer (a KeyError
of its own) and on Loop, whatever the broadcasts: no finding here.
"""

from __future__ import annotations

from typing import Any

from ...core._format import format_shape
from ...models.layout import CHANNELS_LAST, layout_rows, parse_layout
from ...models.target import Row, Site, Target
from .lint_tflite import Checks as TFLiteChecks

__all__ = ["TARGET", "Checks"]

TARGET = "onnx2tf"

#: The ops whose onnx2tf converter reconciles a constant with the transposed activation (rule 2).
RECONCILING = frozenset({"Add", "Sub", "Mul", "Div", "Mod", "PRelu"})
#: The variadic ops that take their inputs as converted, layouts unreconciled (rule 3).
VARIADIC = frozenset({"Max", "Min", "Mean", "Sum"})

_LAYOUTS = parse_layout(CHANNELS_LAST)
_FIX = "none that bcast knows for onnx2tf: "


def _graph_constants(graph: Any) -> set[str]:
    names = {t.name for t in getattr(graph, "initializer", ())}
    names.update(sp.values.name for sp in getattr(graph, "sparse_initializer", ()))
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            names.update(node.output)
    return names


def _aligned(shape: tuple, rank: int) -> tuple:
    return (1,) * (rank - len(shape)) + tuple(shape)


class Checks(TFLiteChecks):
    """The checks of target ``onnx2tf`` (see the module docstring)."""

    name = TARGET
    label = "onnx2tf"

    def __init__(self, shapes: Any, graph: Any, parent: Target | None = None) -> None:
        super().__init__(shapes, graph, parent)
        inherited = parent.constants if isinstance(parent, Checks) else set()
        self.constants: set[str] = inherited | _graph_constants(graph)
        self.first_layout: set[str] = set(parent.first_layout) if isinstance(parent, Checks) else set()

    def visit(self, node: Any, site: Site | None) -> None:
        """Rule 3's bookkeeping: the outputs a reconciling op leaves in the ONNX layout."""
        if site is None or site.plan is None or site.op.name not in RECONCILING:
            return
        rank = site.plan.ndim
        low = [n for n, s in zip(site.inputs, site.plan.inputs) if n in self.constants and len(s) < rank]
        rows = layout_rows(site, _LAYOUTS, self.constants)
        if low and rows and rows[0].kind == "unsupported":
            self.first_layout.update(node.output)

    def context(self, site: Site) -> tuple:
        return (*super().context(site), tuple(n in self.constants for n in site.inputs),
                tuple(n in self.first_layout for n in site.inputs))

    def check(self, site: Site) -> list[Row]:
        return super().check(site) + self.onnx2tf_rows(site)

    def onnx2tf_rows(self, site: Site) -> list[Row]:
        """The findings of onnx2tf's layout handling on one node (rules 1 to 4)."""
        plan = site.plan
        if plan is None or site.legacy or site.op.shape_input is not None or plan.ndim not in _LAYOUTS:
            return []
        op, layout = site.op.name, _LAYOUTS[plan.ndim]
        rows = layout_rows(site, _LAYOUTS, self.constants)
        if rows and op not in RECONCILING:  # rule 1
            row = rows[0]
            return [Row(row.kind, row.rule, f"onnx2tf converts {op} without reconciling layouts (ops/{op}.py "
                        f"calls no explicit_broadcast): {row.reason}", self._same_rank_fix(site))]
        if rows and op in RECONCILING:
            return self._reconciled(site, rows[0])
        if op in VARIADIC:  # rule 3
            first = [n for n in site.inputs if n in self.first_layout]
            last = [n for n, s in zip(site.inputs, plan.inputs)
                    if n not in self.first_layout and n not in self.constants and len(s) == plan.ndim]
            if first and last:
                return [Row("unsupported", "numpy", f"onnx2tf left {', '.join(first)} in the ONNX layout (the "
                            f"{layout.text.split(':')[0]} result of an op that met a lower-rank constant) and "
                            f"{', '.join(last)} {layout.text.split(':')[1]}; {op} (ops/{op}.py) takes its inputs "
                            "as converted: they do not line up", _FIX + "give the constant the activation's rank "
                            f"and layout before {', '.join(first)} is computed")]
        return self._coinciding(site)

    def _same_rank_fix(self, site: Site) -> str:
        """Rule 1's fix: each constant at the activation's rank, in the ONNX layout: onnx2tf transposes a
        constant of rank 3 to 5 with that rank's channels-last permutation itself (get_constant_or_variable)."""
        plan = site.plan
        assert plan is not None
        low = [(n, s) for n, s in zip(site.inputs, plan.inputs) if n in self.constants and len(s) < plan.ndim]
        if not low:
            return _FIX + "the constant already has the activation's rank"
        return "; ".join(f"give {n} the shape {format_shape(_aligned(s, plan.ndim))} (leading 1s, the ONNX layout "
                         "kept): onnx2tf transposes a constant of the activation's rank with it" for n, s in low)

    def _reconciled(self, site: Site, row: Row) -> list[Row]:
        plan = site.plan
        assert plan is not None
        rank, layout = plan.ndim, _LAYOUTS[plan.ndim]
        consts = [(n, s) for n, s in zip(site.inputs, plan.inputs) if n in self.constants]
        acts = [s for n, s in zip(site.inputs, plan.inputs) if n not in self.constants and len(s) == rank]
        if rank == 5:  # rule 2b
            for name, shape in consts:
                if sum(d != 1 for d in shape) > 1 and _aligned(shape, rank) not in acts:
                    kept = layout.permute(_aligned(shape, rank))
                    return [Row("unsupported", "numpy", f"onnx2tf transposes the constant {name} "
                                f"{format_shape(shape)} with the channels-last permutation of its own rank "
                                "(get_constant_or_variable), not the activation's: it no longer meets "
                                f"{format_shape(layout.permute(acts[0]) if acts else plan.shape)} as "
                                f"{format_shape(kept)} would", _FIX + f"give {name} the shape "
                                f"{format_shape(kept)} and convert with the activation's layout kept (-kat)")]
        if row.kind != "differs" or "the output's shape" not in row.reason:
            return []  # the sizes tell explicit_broadcast how to transpose the constant
        bad = [(n, s) for n, s in consts
               if not (len(s) == 1 and s[0] == plan.shape[-1]) and any(d != 1 for d in s)]
        if not bad:
            return []  # a 1-D constant of the last dim's size: put on the last axis (explicit_broadcast)
        return [Row("differs", "numpy", "the operands still broadcast to the output's shape once the activation "
                    f"is {layout.text.split(':')[1]}, so onnx2tf keeps {bad[0][0]} {format_shape(bad[0][1])} as it "
                    f"is: {row.reason}", row.fix)]

    def _coinciding(self, site: Site) -> list[Row]:
        """Rule 4: two activations of the layout's rank whose spatial sizes coincide."""
        plan = site.plan
        assert plan is not None
        rank, layout = plan.ndim, _LAYOUTS[plan.ndim]
        acts = [(n, s) for n, s in zip(site.inputs, plan.inputs) if n not in self.constants and len(s) == rank]
        if len(acts) < 2 or len({s for _, s in acts}) < 2:
            return []
        spatial = range(2, rank)
        for name, shape in acts:
            if shape == plan.shape:
                continue
            for j in spatial:
                others = [k for k in spatial if k != j and shape[k] == 1 and plan.shape[k] == shape[j]]
                if shape[j] != 1 and others:
                    return [Row("differs", "numpy", f"{name} {format_shape(shape)} varies along axis {j} of "
                                f"{format_shape(plan.shape)}, whose axis {others[0]} has the same size "
                                f"{shape[j]}: after {layout.text} onnx2tf chooses the transposition by matching "
                                "sizes (shape_unmatched_special_avoidance_workaround) and puts it on the wrong "
                                "axis: wrong values, no error", _FIX + f"make the sizes of axes {j} and "
                                f"{others[0]} differ, or convert with -kat {name}")]
        return []
