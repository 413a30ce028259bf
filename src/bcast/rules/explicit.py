"""``explicit``: OpenVINO Broadcast with an explicit ``axes_mapping``.

Source: OpenVINO Broadcast-3 (and -1), mode explicit.  ``axes_mapping[i]`` is
the output axis of data axis ``i``: one entry per data axis, sorted ("no
transposes"), each an axis of the target.  Each data dim equals the target dim
it is mapped to or is 1; unmapped target axes are replicated.  The output is
the target shape.  Duplicated entries are refused: they pass OpenVINO's
``is_sorted`` check but give nonsense (the deviation registry has it).

>>> from bcast import result_shape
>>> result_shape((16,), (1, 16, 50, 50), rule="explicit", axes_mapping=[1])
(1, 16, 50, 50)
"""

from __future__ import annotations

from ._base import Attr, Ctx, fit_into, register

AXES = Attr("axes_mapping", "axes", None, "output axis of each data axis, sorted, e.g. 1,2", required=True)


@register(
    "explicit", operands=("data", "target"), attrs=(AXES,), framework="openvino",
    summary="data axis i lands on target axis axes_mapping[i]; dims equal or 1; output target",
    source="OpenVINO Broadcast-1/3 explicit mode",
)
def plan(ctx: Ctx):
    D, T = ctx.shapes
    axes = ctx.attrs["axes_mapping"]
    if len(axes) != len(D):
        raise ctx.error(
            f"axes_mapping {list(axes)} has {len(axes)} entries but data has rank {len(D)}: "
            "one entry per data axis",
            kind="attribute",
        )
    for i, a in enumerate(axes):
        if not 0 <= a < len(T):
            raise ctx.error(
                f"axes_mapping[{i}] = {a} is not an axis of the target (rank {len(T)}: 0 to {len(T) - 1}; "
                "negative axes are not allowed)",
                kind="attribute",
            )
    for i in range(1, len(axes)):
        if axes[i] <= axes[i - 1]:
            what = "repeats" if axes[i] == axes[i - 1] else "is not sorted"
            raise ctx.error(
                f"axes_mapping {list(axes)} {what}: it must be strictly increasing "
                "(no transposes, one data axis per output axis)",
                kind="attribute",
            )
    maps = [axes, tuple(range(len(T)))]
    shape = fit_into(ctx, maps, T, [(1, k) for k in range(len(T))],
                     "data's dim must equal the target dim it is mapped to, or be 1")
    return ctx.plan(shape, maps)
