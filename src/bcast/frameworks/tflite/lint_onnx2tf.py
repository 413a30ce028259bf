"""Lint target ``onnx2tf``: the model as onnx2tf 1.29.24 converts it to TFLite, channels-last.

Target ``tflite`` checks the builtins the converter emits; onnx2tf also changes the layout: it
transposes the activations to channels-last (NCW->NWC, NCHW->NHWC, NCDHW->NDHWC: ``--layout
channels-last``, :mod:`bcast.models.layout`) and then decides, op by op and from the shapes alone,
whether and how to transpose the other operand of a broadcast.  This target is the ``tflite`` checks
plus a model of those decisions, read from onnx2tf's source (``onnx2tf/ops/*.py``,
``onnx2tf/utils/common_functions.py``) and checked against what its conversions of the conversion
corpus compute in LiteRT (tests/models/test_onnx2tf_corpus.py: no finding on any model it converts
right, one on every broadcast it gets wrong).

Which operands are channels-last: a 3-D to 5-D graph input, the result of a Conv, a pool, a
normalisation (onnx2tf's kernels are NHWC), and what an op computes from one at the same rank, but
MatMul's and Gemm's (a MatMul's result comes out in the ONNX layout, observed on attention_qk and
linear_stem; Reshape, Transpose and the like onnx2tf follows with logic of its own, not modelled:
their results count as channels-last); and a constant of the node's rank, which
``get_constant_or_variable`` transposes with the permutation of its own rank (``tensor_rank > 2``)
when every activation of the node has ``before_op_output_shape_trans``: set
(``inverted_operation_enable_disable``) where TensorFlow's shape is not ONNX's, or where the dims
after the first are all one size and the op is not a MatMul.  Every other operand keeps its layout.
On that,
``--layout``'s check (:func:`~bcast.models.layout.layout_rows`) says which nodes the transpositions
break, and these rules say what onnx2tf makes of them:

1. **Ops that do not reconcile layouts.**  Only Add, Sub, Mul, Div, Mod and PRelu run their operands
   through ``pre_explicit_broadcast``, ``explicit_broadcast`` and
   ``shape_unmatched_special_avoidance_workaround`` (common_functions.py), which transpose or reshape
   an operand until the two broadcast.  Max, Min, Mean, Sum, Pow (ops/Max.py, Min.py, Mean.py, Sum.py,
   Pow.py) and the other broadcasting ops hand their operands to TensorFlow as converted: the finding
   stands (``[1,4,4,3] vs [3,1,1]`` in tf.math.maximum).  The comparisons and logical ops
   (Equal.py, Less.py, And.py, ...) call ``shape_unmatched_special_avoidance_workaround`` alone:
   operands of equal rank that do not broadcast are rotated into place (no finding), the rest stands.
   The fix: the constant at the activation's rank, ONNX layout kept (``(1,3,1,1)``), which onnx2tf
   then transposes itself (a converted Max and Pow with such a constant compute onnxruntime's values).
2. **Reconciling ops, where the sizes tell.**  Where the operands no longer broadcast, or broadcast to
   another shape, those functions find the transposition that makes them broadcast: no finding, but

   a. where they still broadcast to the output's shape (dims that coincide: a ``(C,1,1)`` scale on
      ``H == C``, a ``(1,T,T)`` table on a square result), nothing tells onnx2tf that one is laid
      out otherwise: other values (``differs``).  A 1-D constant of the last dim's size is put on the
      last axis (``explicit_broadcast``): no finding.
   b. rank 5: a constant with more than one axis that is not 1 and not the activation's own shape is
      transposed with the permutation of its own rank, then again (``get_constant_or_variable``: a
      ``(2,3,4)`` table on NCDHW becomes ``[1,2,4,3,1]`` against ``[1,2,3,4,2]``; a ``(1,2,2,3,3)`` one
      ``[1,3,3,2,2]`` against ``[2,2,3,3,2]``): ``unsupported``.
3. **Variadic ops after a channels-first result.**  Where a reconciling op met a lower-rank constant
   that does not broadcast channels-last, its result stays in the ONNX layout (``[1,3,4,4]`` beside
   ``[1,4,4,3]`` in mean_heads's log); a following binary op reconciles the two, a Max / Min / Mean /
   Sum does not (Mean.py stacks its inputs with ``tf.stack``): ``unsupported``.
4. **Two activations whose spatial sizes coincide.**  Two channels-last operands of different shapes,
   where an axis of one that is not 1 is spatial and another spatial axis of the output has its size
   (a ``(B,1,1,T)`` mask on ``(B,C,T,T)`` scores): ``shape_unmatched_special_avoidance_workaround``
   picks the transposition by matching sizes and puts the mask on H (a converted Add of the two alone
   does so when ``H == W``, and is right when they differ): ``differs``.

Probes of these rules, each converted by onnx2tf and run in LiteRT, are pinned in
tests/models/test_onnx2tf_corpus.py (``PROBE_OUTCOMES``), one of them a known false alarm: a
square ``(1,T,T)`` product of a MatMul's result and a ``(1,T,T)`` constant added to it, which onnx2tf
converts right where attention_qk's (a scaled product of two MatMul results) goes wrong.

Not modelled: control flow.  onnx2tf fails on an If whose branch reads an outer initializer (a KeyError
of its own) and on Loop, whatever the broadcasts: no finding here.  Nor the 3-D inputs onnx2tf keeps
as they are (linear_stem's ``(1,8,8)``): all are taken channels-last.
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
#: The ops that only try the two rotations on operands of equal rank that do not broadcast
#: (shape_unmatched_special_avoidance_workaround, no explicit_broadcast: ops/Equal.py, And.py, ...).
ROTATING = frozenset({"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor"})
#: The variadic ops that take their inputs as converted, layouts unreconciled (rule 3).
VARIADIC = frozenset({"Max", "Min", "Mean", "Sum"})
#: The ops whose result onnx2tf does not compute channels-last, whatever their inputs (observed: a MatMul's
#: result comes out in the ONNX layout).  onnx2tf follows Reshape, Transpose and the like with logic of its
#: own (a channel shuffle stays channels-last): not modelled, their results count as channels-last.
LAYOUT_FREE = frozenset({"MatMul", "Gemm"})
#: The ops onnx2tf computes channels-last whatever their inputs (its TensorFlow kernels are NHWC).
CHANNELS_LAST_OPS = frozenset({"Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
                               "BatchNormalization", "InstanceNormalization", "LRN", "Resize", "Upsample",
                               "DepthToSpace", "SpaceToDepth"})

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
        inherited = parent if isinstance(parent, Checks) else None
        self.constants: set[str] = (inherited.constants if inherited else set()) | _graph_constants(graph)
        self.first_layout: set[str] = set(inherited.first_layout) if inherited else set()
        self.channels_last: set[str] = set(inherited.channels_last) if inherited else set()
        self.trans: set[str] = set(inherited.trans) if inherited else set()  # before_op_output_shape_trans
        for i in getattr(graph, "input", ()):  # onnx2tf takes a 3-D to 5-D input channels-last
            name = getattr(i, "name", i)
            shape = shapes.get(name)
            if name not in self.constants and shape is not None and len(shape) in _LAYOUTS:
                self.channels_last.add(name)
                self.trans.add(name)

    def visit(self, node: Any, site: Site | None) -> None:
        """Which outputs onnx2tf computes channels-last, and rule 3's bookkeeping: the outputs a reconciling op
        leaves in the ONNX layout."""
        if node.op_type not in LAYOUT_FREE:
            for out in node.output:
                shape = self.shapes.get(out)
                if shape is not None and (
                        (node.op_type in CHANNELS_LAST_OPS and len(shape) in _LAYOUTS)
                        or any(i in self.channels_last and len(self.shapes.get(i) or ()) == len(shape)
                               for i in node.input)):
                    self.channels_last.add(out)
        for out in node.output:  # inverted_operation_enable_disable: TF's shape is not ONNX's, or its dims
            shape = self.shapes.get(out)  # after the first are all one size and the op is not MatMul
            if out in self.channels_last or (shape is not None and len(shape) >= 3 and len(set(shape[1:])) == 1
                                             and node.op_type != "MatMul"):
                self.trans.add(out)
        if site is None or site.plan is None or site.op.name not in RECONCILING or site.plan.ndim not in _LAYOUTS:
            return
        rank = site.plan.ndim
        low = [n for n, s in zip(site.inputs, site.plan.inputs) if n in self.constants and len(s) < rank]
        rows = layout_rows(site, _LAYOUTS, self._kept(site))
        if low and rows and rows[0].kind == "unsupported":
            self.first_layout.update(node.output)

    def _kept(self, site: Site) -> frozenset[str]:
        """The operands onnx2tf leaves in the ONNX layout: an activation it does not compute channels-last (a
        MatMul's result); a constant of another rank than the node's; one of its rank unless every activation
        of the node has ``before_op_output_shape_trans`` (then ``get_constant_or_variable`` transposes it)."""
        plan = site.plan
        assert plan is not None
        moves = all(n in self.trans for n in site.inputs if n not in self.constants)
        return frozenset(n for n, s in zip(site.inputs, plan.inputs)
                         if (len(s) != plan.ndim or not moves if n in self.constants else n not in self.channels_last))

    def context(self, site: Site) -> tuple:
        kept = self._kept(site) if site.plan is not None else frozenset()
        return (*super().context(site), tuple(n in self.constants for n in site.inputs),
                tuple(n in kept for n in site.inputs), tuple(n in self.first_layout for n in site.inputs),
                tuple(n in self.channels_last for n in site.inputs), tuple(n in self.trans for n in site.inputs))

    def check(self, site: Site) -> list[Row]:
        return super().check(site) + self.onnx2tf_rows(site)

    def onnx2tf_rows(self, site: Site) -> list[Row]:
        """The findings of onnx2tf's layout handling on one node (rules 1 to 4)."""
        plan = site.plan
        if plan is None or site.legacy or site.op.shape_input is not None or plan.ndim not in _LAYOUTS:
            return []
        op, layout = site.op.name, _LAYOUTS[plan.ndim]
        rows = layout_rows(site, _LAYOUTS, self._kept(site))
        if op in RECONCILING and plan.ndim == 5:
            found = self._rank5(site)
            if found:
                return found
        if rows and op in ROTATING and rows[0].kind == "unsupported" and all(
                len(s) == plan.ndim for n, s in zip(site.inputs, plan.inputs) if n in self._kept(site)):
            return []  # rule 1's exception: equal ranks that do not broadcast, rotated into place
        if rows and op not in RECONCILING:  # rule 1
            row = rows[0]
            return [Row(row.kind, row.rule, f"onnx2tf converts {op} without reconciling layouts (ops/{op}.py "
                        f"calls no explicit_broadcast): {row.reason}", self._same_rank_fix(site))]
        if rows and op in RECONCILING:
            return self._reconciled(site, rows[0])
        if op in VARIADIC:  # rule 3
            first = [n for n in site.inputs if n in self.first_layout]
            last = [n for n, s in zip(site.inputs, plan.inputs)
                    if n not in self.first_layout and n in self.channels_last and len(s) == plan.ndim]
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

    def _rank5(self, site: Site) -> list[Row]:
        """Rule 2b: a rank-5 constant table that onnx2tf transposes with its own rank's permutation."""
        plan = site.plan
        assert plan is not None
        rank, layout = plan.ndim, _LAYOUTS[plan.ndim]
        acts = [s for n, s in zip(site.inputs, plan.inputs) if n in self.channels_last and len(s) == rank]
        for name, shape in zip(site.inputs, plan.inputs):
            if name in self.constants and sum(d != 1 for d in shape) > 1 and _aligned(shape, rank) not in acts:
                kept = layout.permute(_aligned(shape, rank))
                return [Row("unsupported", "numpy", f"onnx2tf transposes the constant {name} {format_shape(shape)} "
                            "with the channels-last permutation of its own rank (get_constant_or_variable), not "
                            f"the activation's: it no longer meets "
                            f"{format_shape(layout.permute(acts[0]) if acts else plan.shape)} as "
                            f"{format_shape(kept)} would", _FIX + f"give {name} the activation's own shape "
                            "(a Expand or Tile of it, then folded), or convert with the activation's layout kept "
                            "(-kat)")]
        return []

    def _reconciled(self, site: Site, row: Row) -> list[Row]:
        """Rule 2a: a reconciling op whose operands still broadcast to the output's shape."""
        plan = site.plan
        assert plan is not None
        if row.kind != "differs" or "the output's shape" not in row.reason:
            return []  # the sizes tell explicit_broadcast how to transpose the constant
        kept = self._kept(site)
        bad = [(n, s) for n, s in zip(site.inputs, plan.inputs)
               if n in kept and not (len(s) == 1 and s[0] == plan.shape[-1]) and any(d != 1 for d in s)]
        if not bad:
            return []  # a 1-D constant of the last dim's size: put on the last axis (explicit_broadcast)
        return [Row("differs", "numpy", "after onnx2tf's transpositions the operands still broadcast to the "
                    "output's shape, so its shape checks (explicit_broadcast, shape_unmatched_special_avoidance"
                    f"_workaround) see nothing to correct: {row.reason}", row.fix)]

    def _coinciding(self, site: Site) -> list[Row]:
        """Rule 4: two activations of the layout's rank whose spatial sizes coincide."""
        plan = site.plan
        assert plan is not None
        rank, layout = plan.ndim, _LAYOUTS[plan.ndim]
        acts = [(n, s) for n, s in zip(site.inputs, plan.inputs) if n in self.channels_last and len(s) == rank]
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
