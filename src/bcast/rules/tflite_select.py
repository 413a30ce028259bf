"""``tflite-select``: TFLite's SELECT (version 1, TF's ``tf.where`` v1) -- no numpy broadcasting.

Source: tensorflow ``tensorflow/lite/kernels/select.cc`` (LiteRT ``tflite/kernels/select.cc``),
``SelectPrepare<kVersionOne>`` and the comment above ``Register_SELECT``: "Either the same shape (in
which case the select is elementwise), or condition must be Rank 1 and match over the first
dimension, or condition is scalar".  x and y must have the same shape (``HaveSameShapes``), which is
the output's; the condition is

- a scalar (rank 0): it picks x or y whole;
- rank 1 whose one dim equals x's *first* dim (``SizeOfDimension(cond, 0) == SizeOfDimension(x, 0)``):
  it picks x's or y's rows -- the condition lands on the *leading* axis, where numpy would put it
  last, and a 1 there does not stretch;
- otherwise x's shape exactly.

SELECT_V2 broadcasts the three by numpy's rule (``numpy``).  The kernel's one other case -- every
input and the output of one element keep the output's declared shape -- is a deviation of the
runtime (``tflite-select-one-element``), not the rule.

>>> from bcast import result_shape
>>> result_shape((3,), (3, 4), (3, 4), rule="tflite-select")
(3, 4)
>>> result_shape((4,), (3, 4), (3, 4), rule="tflite-select")
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: tflite-select: cannot broadcast condition (4,) with x (3,4): axis -2 (condition axis 0, x axis 0): 4 vs 3; a rank-1 condition must match x's first dim (it picks x's or y's rows)
"""  # noqa: E501 - a doctest's message is one line

from __future__ import annotations

from ..core.dims import equal_constraint, meet
from ._base import Ctx, register

SAME = "x and y must have the same shape (SELECT does not broadcast; SELECT_V2 does)"
FIRST = "a rank-1 condition must match x's first dim (it picks x's or y's rows)"
WHOLE = "a condition of rank 2 or more must have x's shape (SELECT does not broadcast; SELECT_V2 does)"


def _equal(ctx: Ctx, out: list, a: int, b: int, pairs, maps, reason: str) -> None:
    """Each ``(k, m, ax)`` of ``pairs``: axis k of input a equals axis m of input b (output axis ax)."""
    for k, m, ax in pairs:
        da, db = ctx.shapes[a][k], ctx.shapes[b][m]
        merged = meet(da, db)
        found = None if merged is None else equal_constraint((ctx.label(a, k), da), (ctx.label(b, m), db))
        ctx.require(found, (a, k), (b, m), axis=ax, out_rank=len(out), dims=(da, db), reason=reason, maps=maps)
        out[ax] = merged


@register(
    "tflite-select", operands=("condition", "x", "y"), min_inputs=3, max_inputs=3, framework="tflite",
    summary="SELECT(condition, x, y): x, y equal; condition scalar, rank 1 on x's first axis, or x's shape",
    source="tensorflow/lite/kernels/select.cc (SelectPrepare<kVersionOne>)",
)
def plan(ctx: Ctx):
    cond, x, y = ctx.shapes
    rank = len(x)
    cond_map = () if len(cond) == 0 else (0,) if len(cond) == 1 else tuple(range(len(cond)))
    maps = [cond_map, tuple(range(rank)), tuple(range(len(y)))]
    out = list(x)
    if len(cond) == 1 and rank == 0:
        raise ctx.error("x is a scalar: a rank-1 condition has no first dim of x to match (the kernel reads "
                        "past x's dims)", kind="unsupported", operands=(0, 1))
    if len(cond) >= 2 and len(cond) != rank:
        raise ctx.error(f"{WHOLE}; rank {len(cond)} vs {rank}", kind="rank", operands=(0, 1),
                        alignment=((), maps[1], ()), out_rank=rank)
    if len(y) != rank:
        raise ctx.error(f"{SAME}; rank {rank} vs {len(y)}", kind="rank", operands=(1, 2),
                        alignment=((), maps[1], maps[2]), out_rank=max(rank, len(y)))
    if len(cond) == 1:
        _equal(ctx, out, 0, 1, [(0, 0, 0)], maps, FIRST)
    elif len(cond) >= 2:
        _equal(ctx, out, 0, 1, [(k, k, k) for k in range(rank - 1, -1, -1)], maps, WHOLE)
    _equal(ctx, out, 1, 2, [(k, k, k) for k in range(rank - 1, -1, -1)], maps, SAME)
    return ctx.plan(out, maps)
