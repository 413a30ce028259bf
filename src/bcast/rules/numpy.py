"""``numpy``: multidirectional broadcasting, any number of inputs.

Source: ONNX Broadcasting.md ("multidirectional"), OpenVINO auto_broadcast
NUMPY, the array API, numpy.  Shapes are right-aligned, missing leading dims
count as 1, and in every column the dims must be equal or 1; a 1 stretches to
the other size (0 included: 0 with 1 is 0, 0 with 5 does not broadcast).
``max_rank`` (unset by default) is a framework's limit on the rank of every
input: a higher rank is an error of kind ``rank`` (TFLite's per-op limits,
Core ML's 5, NNAPI's 4 are this rule with the attribute).

>>> from bcast import result_shape
>>> result_shape((8, 1, 6, 1), (7, 1, 5))
(8, 7, 6, 5)
>>> result_shape((2, 3), (4,))
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: numpy: cannot broadcast A (2,3) with B (4,): axis -1 (A axis 1, B axis 0): 3 vs 4; dims must be equal or one of them 1
>>> result_shape((1, 2, 3, 4, 5), (5,), max_rank=4)
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: numpy: cannot broadcast A (1,2,3,4,5) with B (5,); A has rank 5, more than max_rank 4 (the most dims allowed here)
"""  # noqa: E501 - a doctest's message is one line

from __future__ import annotations

from ._base import MAX_RANK, Ctx, check_max_rank, merge_all, register, right_aligned

REASON = "dims must be equal or one of them 1"


@register(
    "numpy", min_inputs=0, max_inputs=None, framework="numpy / onnx / openvino", attrs=(MAX_RANK,),
    summary="right-aligned; each dim equal or 1 (any number of inputs)",
    source="ONNX multidirectional broadcasting; OpenVINO auto_broadcast numpy; numpy",
)
def plan(ctx: Ctx):
    out_rank = max((len(s) for s in ctx.shapes), default=0)
    check_max_rank(ctx, out_rank)
    maps = [right_aligned(s, out_rank) for s in ctx.shapes]
    return ctx.plan(merge_all(ctx, maps, out_rank, REASON), maps)
