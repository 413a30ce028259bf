"""``openvino-broadcast-pdpd``: OpenVINO Broadcast-1/3 with mode pdpd.

Source: OpenVINO Broadcast-1 / Broadcast-3, ``mode = pdpd``
("PaddlePaddle-style implicit broadcasting"; see AutoBroadcastType): the PDPD
rule with A = target_shape and B = data, from ``axis`` (-1 means
rank(target) - rank(data)); data's trailing 1s are ignored; each data dim
equals the target's or is 1.  The output is the target shape.  OpenVINO's own
shape inference differs in three ways, all in the deviation registry: a target
dim of 1 takes data's dim (so the output is not the target), data that ends
before the target does is refused, and data that runs past the target's end
is accepted (its extra dims ignored; the CPU plugin then aligns data with the
end of the output instead).

>>> from bcast import result_shape
>>> result_shape((3, 1), (2, 3, 6), rule="openvino-broadcast-pdpd", axis=1)
(2, 3, 6)
"""

from __future__ import annotations

from .pdpd import AXIS, place
from ._base import Ctx, register


@register(
    "openvino-broadcast-pdpd", operands=("data", "target"), attrs=(AXIS,), framework="openvino",
    summary="Broadcast op, pdpd mode: data placed into target from axis; output target",
    source="OpenVINO Broadcast-1/3 mode pdpd",
)
def plan(ctx: Ctx):
    mapping, start, T = place(ctx, 1, 0, ctx.attrs["axis"])
    return ctx.plan(T, [mapping, tuple(range(len(T)))], start_axis=start)
