"""``none``: no broadcasting at all; every input has the same shape.

Sources: OpenVINO auto_broadcast NONE (= EXPLICIT for element-wise ops):
"Input tensors dimensions must match. No implicit broadcast rule is applied.";
ONNX Max, Min, Sum and Mean before opset 8 ("All inputs must have the same
shape"), and Gemm's C with broadcast=0 before opset 7; Android NNAPI's SELECT
("An input tensor of the same shape as input0", NeuralNetworksTypes.h).  The rule does not know
which framework asked, so its reason names none.
Dims that are not static must be equal (a constraint); the output is their
common range, as OpenVINO's ``Dimension::merge``: ``?`` and 2 give 2.

>>> from bcast import result_shape
>>> result_shape((2, 3), (2, 3), rule="none")
(2, 3)
"""

from __future__ import annotations

from ..core.dims import equal_constraint, meet
from ._base import Ctx, register, right_aligned

REASON = "all shapes must be equal (no broadcasting)"


@register(
    "none", min_inputs=1, max_inputs=None, framework="openvino",
    summary="no broadcasting: all shapes must be equal",
    source="OpenVINO auto_broadcast none / explicit; ONNX Max/Min/Sum/Mean before opset 8; NNAPI SELECT",
)
def plan(ctx: Ctx):
    first = ctx.shapes[0]
    out_rank = max(len(s) for s in ctx.shapes)
    maps = [right_aligned(s, out_rank) for s in ctx.shapes]
    out = list(first)
    for i, s in enumerate(ctx.shapes[1:], 1):
        if len(s) != len(first):
            raise ctx.error(
                f"{REASON}; rank {len(first)} vs {len(s)}",
                kind="rank", operands=(0, i), alignment=tuple(maps), out_rank=out_rank,
            )
        for ax in range(len(s) - 1, -1, -1):
            merged = meet(out[ax], s[ax])
            found = equal_constraint((ctx.label(0, ax), first[ax]), (ctx.label(i, ax), s[ax]))
            found = None if merged is None else found
            out_ax = out_rank - len(s) + ax
            ctx.require(found, (0, ax), (i, ax), axis=out_ax, out_rank=out_rank, dims=(first[ax], s[ax]), reason=REASON,
                        maps=maps)
            out[ax] = merged
    return ctx.plan(out, maps)
