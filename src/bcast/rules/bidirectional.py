"""``bidirectional``: broadcast data to a target shape, numpy-style both ways.

Source: OpenVINO Broadcast-3 mode bidirectional; ONNX Expand.  The rule is
``numpy.array(data) * numpy.ones(target)``: right-aligned, dims equal or one
of them 1.  The output can differ from the target: when the target has 1s, or
a smaller rank than data.

>>> from bcast import result_shape
>>> result_shape((3, 1), (2, 1, 6), rule="bidirectional")
(2, 3, 6)
"""

from __future__ import annotations

from ._base import Ctx, merge_all, register, right_aligned

REASON = "data and target dims must be equal or one of them 1 (numpy.array(data) * numpy.ones(target))"


@register(
    "bidirectional", operands=("data", "target"), framework="openvino / onnx",
    summary="data broadcast with target both ways (output may differ from target)",
    source="OpenVINO Broadcast-3 bidirectional; ONNX Expand",
)
def plan(ctx: Ctx):
    out_rank = max(len(s) for s in ctx.shapes)
    maps = [right_aligned(s, out_rank) for s in ctx.shapes]
    return ctx.plan(merge_all(ctx, maps, out_rank, REASON), maps)
