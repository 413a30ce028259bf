"""``equal-rank``: inputs of one rank; in every axis the dims are equal or 1.

numpy's rule without its rank broadcasting: no input gains leading 1s, so a
rank difference is an error (kind ``rank``) even where numpy would broadcast.
The stacks that lower to it make their front ends insert the reshapes (the
ONNX-TensorRT parser, TOSA's legalizations, Arm NN's optimizer).  ``max_rank``
(unset by default) is the stack's limit on the rank.

Sources (the frameworks that add their own cite theirs in their op tables):
TensorRT's ``IElementWiseLayer`` and ``ISelectLayer`` (NVIDIA/TensorRT
``include/NvInfer.h``: "The input tensors must have the same rank. For each
dimension, their lengths must match, or one of them must be one"; ``addSelect``
likewise for three inputs), TOSA's element-wise ops and SELECT (llvm-project
``mlir/include/mlir/Dialect/Tosa/IR/TosaOps.td``: "Axis of size 1 will be
broadcast, as necessary. Rank of input tensors must match"; the traits
``ResultsBroadcastableShape`` and ``SameOperandsAndResultRank``), Arm NN's
backends (ARM-software/armnn ``src/armnn/optimizations/AddBroadcastReshapeLayer.hpp``
reshapes the input of lower rank before Addition, Division, Maximum, Minimum,
Multiplication, Prelu, Subtraction and ElementwiseBinary layers reach them).

>>> from bcast import result_shape
>>> result_shape((8, 1, 6), (1, 7, 6), rule="equal-rank")
(8, 7, 6)
>>> result_shape((8, 1, 6), (7, 6), rule="equal-rank")
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: equal-rank: cannot broadcast A (8,1,6) with B (7,6); all inputs must have the same rank (no rank broadcasting); A has rank 3, B rank 2
"""  # noqa: E501 - a doctest's message is one line

from __future__ import annotations

from ._base import MAX_RANK, Ctx, check_max_rank, merge_all, register

REASON = "dims must be equal or one of them 1"


@register(
    "equal-rank", min_inputs=1, max_inputs=None, attrs=(MAX_RANK,), framework="tensorrt / tosa",
    summary="equal ranks (no rank broadcasting); each dim equal or 1",
    source="TensorRT IElementWiseLayer; TOSA element-wise ops; Arm NN",
)
def plan(ctx: Ctx):
    first = ctx.shapes[0]
    rank = len(first)
    for i, s in enumerate(ctx.shapes[1:], 1):
        if len(s) != rank:
            raise ctx.error(
                f"all inputs must have the same rank (no rank broadcasting); {ctx.names[0]} has rank {rank}, "
                f"{ctx.names[i]} rank {len(s)}",
                kind="rank", operands=(0, i),
            )
    check_max_rank(ctx, rank)
    maps = [tuple(range(rank)) for _ in ctx.shapes]
    return ctx.plan(merge_all(ctx, maps, rank, REASON), maps)
