"""``openvino-prelu``: OpenVINO PRelu's slope rule.

Source: OpenVINO PRelu-1: "If slope input rank is 1 and its dimension is equal
to the second dimension of data input, then per channel broadcast is applied.
Otherwise slope input is broadcasted with numpy rules."  The output is data's
shape, so the numpy case is one-way (slope into data).  ONNX PRelu differs: it
is plain ``unidirectional`` (a 1-D slope of length data[1] lands on the LAST
axis), which is openvino#35958.  When a 1-D slope's length and data[1] may or
may not be equal (``N`` and ``3``), the alignment depends on the sizes: an
``undecidable`` error.

>>> from bcast import infer
>>> infer((1, 3, 2, 3), (3,), rule="openvino-prelu").aligned_shape(1)   # per channel
(1, 3, 1, 1)
>>> infer((1, 3, 2, 3), (3,), rule="unidirectional").aligned_shape(1)   # ONNX
(1, 1, 1, 3)
"""

from __future__ import annotations

from ..core.dims import equals
from .unidirectional import into
from ._base import Ctx, register


@register(
    "openvino-prelu", operands=("data", "slope"), framework="openvino",
    summary="1-D slope of length data[1]: per channel; else slope numpy-broadcast into data",
    source="OpenVINO PRelu-1",
)
def plan(ctx: Ctx):
    D, S = ctx.shapes
    per_channel = len(S) == 1 and len(D) >= 2 and equals(S[0], D[1])
    if per_channel is None:
        raise ctx.undecidable(
            f"whether the 1-D slope ({S[0]}) is per channel depends on whether it equals data[1] ({D[1]})"
        )
    if per_channel:
        return ctx.plan(D, [tuple(range(len(D))), (1,)], alignment="per channel")
    maps, shape = into(
        ctx, 0, 1,
        "slope is neither per channel (1-D of length data[1]) nor numpy-broadcastable into data: "
        "its dim must equal data's or be 1",
    )
    return ctx.plan(shape, maps, alignment="numpy")
