"""``none``: no broadcasting at all; every input has the same shape.

Source: OpenVINO auto_broadcast NONE (= EXPLICIT for element-wise ops):
"Input tensors dimensions must match. No implicit broadcast rule is applied."

>>> from bcast import result_shape
>>> result_shape((2, 3), (2, 3), rule="none")
(2, 3)
"""

from __future__ import annotations

from ..dims import same
from ._base import Ctx, register, right_aligned

REASON = "auto_broadcast none: every input must have the same shape (no broadcasting)"


@register(
    "none", min_inputs=1, max_inputs=None, framework="openvino",
    summary="no broadcasting: all shapes must be equal",
    source="OpenVINO auto_broadcast none / explicit",
)
def plan(ctx: Ctx):
    first = ctx.shapes[0]
    out_rank = max(len(s) for s in ctx.shapes)
    maps = [right_aligned(s, out_rank) for s in ctx.shapes]
    for i, s in enumerate(ctx.shapes[1:], 1):
        if len(s) != len(first):
            raise ctx.error(
                f"{REASON}; rank {len(first)} vs {len(s)}",
                kind="rank", operands=(0, i), alignment=tuple(maps), out_rank=out_rank,
            )
        for ax in range(len(s) - 1, -1, -1):
            if not same(s[ax], first[ax]):
                out_ax = out_rank - len(s) + ax
                raise ctx.dims_error((0, ax), (i, ax), out_ax, out_rank, first[ax], s[ax], REASON, maps)
    return ctx.plan(first, maps)
