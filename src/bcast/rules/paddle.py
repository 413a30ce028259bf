"""``paddle``: PaddlePaddle's elementwise ``axis`` rule (elementwise_add & co.).

Source: paddle/phi ``ElementwiseRawInferMeta`` and ``GetBroadcastDimsArrays``
(reference/onnx_paddle_xla.md).  Equal shapes give that shape (axis is not
looked at).  Otherwise the LOWER-rank input (either one: X may be the smaller)
is placed at ``axis`` of the higher-rank one and padded with 1s before and
after; then, per axis, dims must be equal or one of them 1, and the output
takes the other (0 with 1 gives 0).  With equal ranks ``axis`` must be -1 or
0.  ``-R <= axis < R`` (R the larger rank); a negative axis means
``|rank(X) - rank(Y)| + axis + 1`` (so -1 is numpy's right alignment).
Trailing 1s of the smaller input that overhang the end are ignored, as the
Paddle kernel trims them; any other overhang is refused (Paddle's InferMeta
does not check it and writes past its buffer: deviation
``paddle-legacy-axis-overhang``, which may abort the process).  A trailing dim that may be 1
(``N``, ``?``) overhanging the end is ignored with the constraint that it is 1.
With equal ranks, shapes not definitely equal (``(N,)`` and ``(M,)``) need
axis -1 or 0, as unequal shapes do.  ``max_rank`` (unset by default): Paddle's
tensors have rank 9 at most (``bcast.paddle`` sets it).

Proven against paddlepaddle 3.3.1, whose legacy operators still run with their
``axis`` (``paddle._legacy_C_ops.elementwise_add(x, y, "axis", axis)``:
InferMeta, then the CPU kernel): the operators' documented examples and random
cases agree (tests/frameworks/test_paddle_run.py), but for an axis below -1,
which the CPU kernel refuses (deviation ``paddle-legacy-negative-axis``).
``bcast.paddle`` names the ops (``elementwise_add``... with ``axis``).

>>> from bcast import result_shape
>>> result_shape((2, 3, 4, 5), (3, 4), rule="paddle", axis=1)
(2, 3, 4, 5)
>>> result_shape((3, 4), (2, 3, 4, 5), rule="paddle", axis=1)   # X may be the smaller one
(2, 3, 4, 5)
"""

from __future__ import annotations

from ..core._format import format_shape
from ..core.dims import maybe_one, same, value_constraint
from ..core.plan import AxisMap
from ._base import MAX_RANK, Attr, Ctx, check_max_rank, merge_all, register

AXIS = Attr("axis", "int", -1, "where the lower-rank input starts in the other; -1 = right-aligned")

REASON = "dims must be equal or one of them 1"


@register(
    "paddle", operands=("A", "B"), attrs=(AXIS, MAX_RANK), framework="paddle",
    summary="lower-rank input placed at axis of the other (either side); dims equal or 1",
    source="PaddlePaddle elementwise ops, axis attribute (phi ElementwiseRawInferMeta)",
)
def plan(ctx: Ctx):
    X, Y = ctx.shapes
    rx, ry = len(X), len(Y)
    check_max_rank(ctx, max(rx, ry))
    axis = ctx.attrs["axis"]
    if rx == ry and all(same(x, y) for x, y in zip(X, Y)):
        m = tuple(range(rx))
        return ctx.plan(X, [m, m])
    R = max(rx, ry)
    if rx == ry and axis not in (-1, 0):
        raise ctx.error(
            f"axis {axis} is not allowed: with inputs of the same rank, axis must be -1 or 0",
            kind="attribute",
        )
    if not -R <= axis < R:
        raise ctx.error(f"axis {axis} is out of range: it must be in [{-R}, {R})", kind="attribute")
    start = abs(rx - ry) + axis + 1 if axis < 0 else axis
    if start < 0:
        raise ctx.error(
            f"axis {axis} resolves to {start} (|rank(A) - rank(B)| + axis + 1), which is negative",
            kind="attribute",
        )
    big, small = (0, 1) if ry < rx or rx == ry else (1, 0)
    S = ctx.shapes[small]
    kept = len(S)
    while kept and start + kept > R and maybe_one(S[kept - 1]):
        kept -= 1
    if start + kept > R:
        raise ctx.error(
            f"axis {start} does not fit: {ctx.names[small]} {format_shape(S)} placed at axis {start} of "
            f"{ctx.names[big]} needs rank {start + kept}, {ctx.names[big]} has rank {R}",
            kind="attribute",
        )
    for k in range(kept, len(S)):
        ctx.record(value_constraint((ctx.label(small, k), S[k]), "==", 1))
    maps: list[AxisMap] = [(), ()]
    maps[big] = tuple(range(R))
    maps[small] = tuple(start + k if k < kept else None for k in range(len(S)))
    return ctx.plan(merge_all(ctx, maps, R, REASON), maps, start_axis=start)
