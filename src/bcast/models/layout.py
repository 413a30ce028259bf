"""``bcast lint --layout NCHW:NHWC``: the broadcasts a layout change breaks.

A converter to a channels-last runtime (onnx2tf and the TensorFlow converters for TFLite, Core ML's
NHWC paths) transposes the activations, the tensors the graph computes, from ONNX's NCHW to NHWC.  A
constant operand of a broadcast (an initializer, a ``Constant`` node's output) keeps the layout it
was written in unless the converter transposes it too, and a tensor of another rank is not
transposed at all.  The broadcast then meets a transposed operand and an untransposed one: it no
longer broadcasts (onnx2tf's ``[1,15,20,1280] vs [1,1280,15,20]``, PINTO0309/onnx2tf#37, #698, #784),
or it does and computes something else (an untransposed ``(C,1,1)`` bias meets ``(N,H,W,C)`` where
``H == C``: no error, wrong values).

The model, node by node (each broadcasting node whose output has the layout's rank; not Expand, whose
second input is a shape, nor the opset 1-6 ``broadcast``/``axis`` forms):

- a **transposed** operand is one the graph computes (not a constant) of the layout's rank; it
  reaches the node as ``permute(shape)``;
- every other operand reaches it as it is.  It is safe when each of its axes that is not 1 (aligned
  at the output's rank, numpy's way) is one the permutation leaves in place: a scalar, a ``(1,1,1,1)``,
  a per-batch ``(N,1,1,1)`` under ``NCHW:NHWC``.  Otherwise the node is a finding:

  ``unsupported``  the operands no longer broadcast (numpy's rule, which the converted ops follow);
  ``differs``      they broadcast, to values the original node does not compute.

The fix names the permuted shape the operand needs: its shape aligned at the layout's rank, then
permuted, ``(C,1,1)`` -> ``(1,C,1,1)`` -> ``(1,1,1,C)`` (its data transposed the same way).

A layout is ``FROM:TO``, two orders of the same letters (``NCHW:NHWC``, ``NCDHW:NDHWC``,
``NCW:NWC``); several are separated by commas, each for its own rank; ``channels-last`` is the three
of them.

This is the converter that leaves every constant alone, the issue trackers' account.  onnx2tf 1.29.24,
run on the conversion corpus (tests/models/test_onnx2tf_corpus.py), transposes many constants itself
where the shapes tell it how (a conv bias, an SE scale, a PRelu slope): of 72 corpus models flagged
here it converts 51 right, and fails on or miscomputes the other 21 (Max/Min with a ``(C,1,1)``
constant, rank-5 tables, the ``differs`` nodes whose dims coincide, If branches).  What this module reports is
where a converter must transpose a constant; whether onnx2tf does is target ``onnx2tf``
(:mod:`bcast.frameworks.tflite.lint_onnx2tf`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core._format import format_shape
from ..core.errors import BroadcastError, InputError
from ..rules import infer
from .target import Row, Site

__all__ = ["CHANNELS_LAST", "Layout", "constant_names", "layout_rows", "parse_layout"]

#: ``--layout channels-last``: what a channels-last converter does to 1-D, 2-D and 3-D images.
CHANNELS_LAST = "NCW:NWC,NCHW:NHWC,NCDHW:NDHWC"


class Layout:
    """One layout change: ``perm`` (the target's axis ``j`` is the source's ``perm[j]``) of tensors of
    rank ``len(perm)``; ``text`` as the user wrote it."""

    __slots__ = ("perm", "text")

    def __init__(self, text: str, perm: tuple[int, ...]) -> None:
        self.text, self.perm = text, perm

    def permute(self, shape: Sequence) -> tuple:
        return tuple(shape[k] for k in self.perm)

    def __repr__(self) -> str:
        return f"Layout({self.text!r})"


def parse_layout(text: str) -> dict[int, Layout]:
    """The layout changes of ``text`` (``NCHW:NHWC``, several joined by commas, or ``channels-last``),
    by rank.  A malformed one is an :class:`InputError` that says what a layout is."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("--layout: give FROM:TO, two orders of the same letters (NCHW:NHWC), or channels-last")
    spec = CHANNELS_LAST if text.strip().lower() == "channels-last" else text
    out: dict[int, Layout] = {}
    for part in spec.split(","):
        part = part.strip()
        src, sep, dst = part.partition(":")
        src, dst = src.strip().upper(), dst.strip().upper()
        if (not sep or len(src) < 2 or not src.isalpha() or len(set(src)) != len(src)
                or sorted(src) != sorted(dst)):
            raise InputError(f"--layout: {part!r} is not FROM:TO, two orders of the same letters, each once "
                             "(NCHW:NHWC)")
        if len(src) in out:
            raise InputError(f"--layout: two layouts of rank {len(src)} ({out[len(src)].text}, {src}:{dst})")
        out[len(src)] = Layout(f"{src}:{dst}", tuple(src.index(c) for c in dst))
    return out


def constant_names(model: Any) -> frozenset[str]:
    """The names of the model's constants, in every graph (subgraphs and local functions too): its
    initializers (sparse ones included) and the outputs of its ``Constant`` nodes."""
    names: set[str] = set()
    todo = [model.graph, *(f for f in model.functions)]
    while todo:
        g = todo.pop()
        names.update(t.name for t in getattr(g, "initializer", ()))
        names.update(sp.values.name for sp in getattr(g, "sparse_initializer", ()))
        for node in g.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                names.update(node.output)
            for a in node.attribute:
                if a.HasField("g"):
                    todo.append(a.g)
                todo.extend(a.graphs)
    return frozenset(names)


def _aligned(shape: tuple, rank: int) -> tuple:
    return (1,) * (rank - len(shape)) + tuple(shape)


def _how(shape: tuple, rank: int) -> str:
    return "" if len(shape) == rank else f"aligned at rank {rank}, {format_shape(_aligned(shape, rank))}, then "


def layout_rows(site: Site, layouts: dict[int, Layout], constants: Any) -> list[Row]:
    """The finding of one broadcasting node under the layout changes (empty: it survives them).
    ``constants``: the names whose values are constants (they keep their layout)."""
    plan = site.plan
    if plan is None or site.legacy or site.op.shape_input is not None:
        return []  # (an opset 1-6 broadcast/axis form; Expand, whose second input is a shape, not data)
    layout = layouts.get(plan.ndim)
    if layout is None or len(plan.inputs) < 2 or len(plan.inputs) != len(site.inputs):
        return []  # (Gemm: its rule's inputs are not the node's)
    rank, perm = plan.ndim, layout.perm
    moved = [len(s) == rank and name not in constants for name, s in zip(site.inputs, plan.inputs)]
    if not any(moved):
        return []  # no activation of that rank: nothing here is transposed
    stays = [i for i, m in enumerate(moved) if not m]
    bad = [i for i in stays
           if any(d != 1 and perm[j] != j for j, d in enumerate(layout.permute(_aligned(plan.inputs[i], rank))))]
    if not bad:
        return []
    after = tuple(layout.permute(s) if m else s for s, m in zip(plan.inputs, moved))
    names = tuple(site.inputs)
    what = "; ".join(f"{names[i]} {format_shape(plan.inputs[i])} keeps its layout" for i in bad)
    fix = "; ".join(f"give {names[i]} the shape {format_shape(layout.permute(_aligned(plan.inputs[i], rank)))} "
                    f"({_how(plan.inputs[i], rank)}permuted {layout.text}), its data transposed the same way, or "
                    "make the converter transpose it" for i in bad)
    seen = ", ".join(f"{names[i]} {format_shape(s)}" for i, s in enumerate(after))
    try:
        got = infer(*after, rule="numpy").shape
    except BroadcastError:
        return [Row("unsupported", "numpy", f"after {layout.text} the operands are {seen} ({what}): they do not "
                    "broadcast; a converter that leaves the constant as it is fails on the node", fix)]
    want = layout.permute(plan.shape)
    result = (f"they broadcast to {format_shape(got)}, not the {format_shape(want)} the node's output becomes"
              if got != want else f"they broadcast to {format_shape(got)}, the output's shape, but pair other "
              "elements than the original node does: wrong values, no error")
    return [Row("differs", "numpy", f"after {layout.text} the operands are {seen} ({what}): {result}", fix)]
