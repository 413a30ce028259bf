"""``unidirectional``: B is broadcast to A, never the other way.

Source: ONNX Broadcasting.md ("unidirectional": Gemm's C, PRelu's slope);
OpenVINO Broadcast in numpy mode (with A = target_shape, B = data); TFLite's
BROADCAST_TO (tensorflow ``tensorflow/lite/kernels/broadcast_to.cc``, with A = the
shape, B = the input: "Output shape must be broadcastable from input shape"); PyTorch's
in-place ops (A = self: "in-place operations do not allow the in-place tensor
to change shape as a result of the broadcast", docs/source/notes/broadcasting.rst;
TensorIterator's compute_shape) and ``expand`` / ``broadcast_to`` (A = the
sizes, B = self: ATen ``inferExpandGeometry``, aten/src/ATen/ExpandUtils.cpp).  B is
right-aligned under A, its rank may not exceed A's, and each of its dims must
equal A's or be 1.  The output is A's shape.  ``max_rank`` (unset by default)
is a framework's limit on the rank (Paddle's in-place ops 9, its expand 8).

>>> from bcast import result_shape
>>> result_shape((2, 3, 4, 5), (1, 3, 1, 5), rule="unidirectional")
(2, 3, 4, 5)
>>> result_shape((2, 1), (2, 3), rule="unidirectional")
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: unidirectional: cannot broadcast A (2,1) with B (2,3): axis -1 (A axis 1, B axis 1): 1 vs 3; B's dim must equal A's or be 1 (B is broadcast to A, never A to B)
"""  # noqa: E501 - a doctest's message is one line

from __future__ import annotations

from ..core.plan import AxisMap
from ._base import MAX_RANK, Ctx, check_max_rank, fit_into, register, right_aligned


def into(ctx: Ctx, a: int, b: int, reason: str):
    """Right-align input ``b`` under input ``a`` and check it fits one-way.
    Returns the axis maps of (a, b) and the output shape (``a``'s, narrowed by
    what fits into it); shared with PRelu."""
    A, B = ctx.shapes[a], ctx.shapes[b]
    na, nb = ctx.names[a], ctx.names[b]
    out_rank = max(len(A), len(B))
    maps: list[AxisMap | None] = [None] * len(ctx.shapes)
    maps[a], maps[b] = right_aligned(A, out_rank), right_aligned(B, out_rank)
    if len(B) > len(A):
        raise ctx.error(
            f"{nb} has rank {len(B)}, more than {na}'s rank {len(A)}: {nb} is broadcast to {na}, "
            f"so its rank may not exceed {na}'s",
            kind="rank", operands=tuple(sorted((a, b))), alignment=tuple(m or () for m in maps), out_rank=out_rank,
        )
    shape = fit_into(ctx, [m or () for m in maps], A, [(a, k) for k in range(len(A))], reason)
    return maps, shape


@register(
    "unidirectional", operands=("A", "B"), framework="onnx / openvino / tflite / torch", attrs=(MAX_RANK,),
    summary="B is broadcast to A (right-aligned, B's dims equal A's or 1); output A",
    source="ONNX unidirectional broadcasting (Gemm C, PRelu); OpenVINO Broadcast numpy mode; TFLite BROADCAST_TO; "
           "PyTorch in-place ops (self) and expand",
)
def plan(ctx: Ctx):
    check_max_rank(ctx, max(len(s) for s in ctx.shapes))
    maps, shape = into(ctx, 0, 1, "B's dim must equal A's or be 1 (B is broadcast to A, never A to B)")
    return ctx.plan(shape, maps)
