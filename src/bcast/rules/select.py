"""``openvino-select``: OpenVINO Select(cond, then, else) and its auto_broadcast.

Source: OpenVINO Select-1 and its shape inference (reference/openvino.md):

- ``numpy`` (default): a three-way numpy broadcast of cond, then and else.
- ``pdpd``: the output is ``then``'s shape; ``else`` and ``cond`` are each
  broadcast into ``then`` by the PDPD rule with the same ``axis`` (with -1, each
  gets its own ``rank(then) - rank(input)``).
- ``none``: the three shapes must be equal.

>>> from bcast import result_shape
>>> result_shape((1, 3), (2, 1), (3,), rule="openvino-select")
(2, 3)
>>> result_shape((5,), (2, 3, 4, 5), (3, 4, 5), rule="openvino-select", auto_broadcast="pdpd")
(2, 3, 4, 5)
"""

from __future__ import annotations

from . import none as _none
from . import numpy as _numpy
from .pdpd import place
from ._base import Attr, Ctx, register

MODE = Attr("auto_broadcast", "choice", "numpy", "numpy, pdpd or none", choices=("numpy", "pdpd", "none"))
AXIS = Attr("axis", "int", -1, "pdpd only: start axis of cond/else in then; -1 = per input")


@register(
    "openvino-select", operands=("cond", "then", "else"), min_inputs=3, max_inputs=3,
    attrs=(MODE, AXIS), framework="openvino",
    summary="Select(cond, then, else): numpy 3-way, pdpd into then, or none",
    source="OpenVINO Select-1 auto_broadcast",
)
def plan(ctx: Ctx):
    mode = ctx.attrs["auto_broadcast"]
    if mode == "numpy":
        return _numpy.plan(ctx)
    if mode == "none":
        return _none.plan(ctx)
    else_map, _, T = place(ctx, 1, 2, ctx.attrs["axis"])
    cond_map, _, T = place(ctx, 1, 0, ctx.attrs["axis"], T)
    return ctx.plan(T, [cond_map, tuple(range(len(T))), else_map])
