"""``pdpd``: OpenVINO's PaddlePaddle-style broadcast of B into A from ``axis``.

Source: OpenVINO "Broadcast Rules For Elementwise Operations", PDPD:

1. A is of any rank; B has rank smaller than or equal to A's.
2. B is a contiguous subsequence of A ...
3. ... placed from ``axis``, the start dimension index for broadcasting B onto A.
4. ``axis = -1`` (the default) means ``rank(A) - rank(B)``; no other negative
   value is allowed.
5. The trailing dims of size 1 of B are ignored for the consideration of
   subsequence: shape(B) = (3, 1) => (3).

Each placed B dim equals A's or is 1 (only B stretches: "only B to A broadcast
is supported for PDPD").  The output is A's shape.  OpenVINO's own shape
inference does not do rule 5 (see the deviation registry).

Dims that are not static: a trailing dim of B that may be 1 is ignored where it
must be, with the constraint that it is 1; each placed B dim must fit into A's
(one-way), so where OpenVINO's shape inference merges both ways (it checks "B
into A" only between two static dims) bcast keeps to the spec: with A's dim
``1..10`` and B's 5 the result is 5 with ``A[1] == 5``; A's ``1..3`` with B's 5 is an error.

>>> from bcast import result_shape
>>> result_shape((2, 3, 4, 5), (3, 1), rule="pdpd", axis=1)
(2, 3, 4, 5)
>>> result_shape((2, 3), (3, 1), rule="pdpd", axis=1)   # rule 5: B's trailing 1 is ignored
(2, 3)
"""

from __future__ import annotations

from ..core._format import format_shape
from ..core.dims import maybe_one, value_constraint
from ..core.plan import AxisMap
from ._base import Attr, Ctx, fit_into, register

AXIS = Attr("axis", "int", -1, "start axis of B in A; -1 = rank(A) - rank(B)")


def place(ctx: Ctx, a: int, b: int, axis: int, target=None) -> tuple:
    """The axis map of input ``b`` placed into input ``a`` by the PDPD rule
    (rules 1-5 above), checked one-way; its start axis; and the output shape
    (``target``, by default ``a``'s shape, narrowed by what fits into it).
    Shared with Select and Broadcast."""
    A, B = ctx.shapes[a], ctx.shapes[b]
    na, nb = ctx.names[a], ctx.names[b]
    ra, rb = len(A), len(B)
    pair = tuple(sorted((a, b)))
    if rb > ra:
        raise ctx.error(
            f"{nb} has rank {rb}, more than {na}'s rank {ra}; pdpd broadcasts {nb} into {na} only",
            kind="rank", operands=pair,
        )
    if axis < -1:
        raise ctx.error(
            f"axis {axis} is not allowed: pdpd takes -1 (the default, rank({na}) - rank({nb})) "
            f"or an axis from 0 to {ra - rb}",
            kind="attribute", operands=pair,
        )
    start = ra - rb if axis == -1 else axis
    kept = rb
    while kept and start + kept > ra and maybe_one(B[kept - 1]):
        kept -= 1  # rule 5: trailing 1s of B are ignored
    if start + kept > ra:
        core = f" (ignoring its trailing 1s: {format_shape(B[:kept])})" if kept < rb else ""
        raise ctx.error(
            f"axis {start} does not fit: {nb}{core} placed at axis {start} "
            f"of {na} needs rank {start + kept}, {na} has rank {ra}",
            kind="attribute", operands=pair,
        )
    for k in range(kept, rb):
        ctx.record(value_constraint((ctx.label(b, k), B[k]), "==", 1))
    mapping = tuple(start + k if start + k < ra else None for k in range(rb))
    maps: list[AxisMap] = [()] * len(ctx.shapes)
    maps[a], maps[b] = tuple(range(ra)), mapping
    shape = fit_into(
        ctx, maps, A if target is None else target, [(a, k) for k in range(ra)],
        f"{nb}'s dim must equal {na}'s or be 1 (pdpd broadcasts {nb} into {na} only)",
    )
    return mapping, start, shape


@register(
    "pdpd", operands=("A", "B"), attrs=(AXIS,), framework="openvino",
    summary="B a contiguous run of A from axis (trailing 1s of B ignored); output A",
    source="OpenVINO auto_broadcast pdpd (broadcast-rules)",
)
def plan(ctx: Ctx):
    mapping, start, shape = place(ctx, 0, 1, ctx.attrs["axis"])
    return ctx.plan(shape, [tuple(range(len(shape))), mapping], start_axis=start)
