"""``explicit``: a broadcast with an explicit map of the data's axes onto the target's.

Sources: OpenVINO Broadcast-3 (and -1), mode explicit; StableHLO ``broadcast_in_dim``
(openxla/stablehlo ``docs/spec.md``, broadcast_in_dim constraints C2-C5, checked by
``stablehlo/dialect/TypeInference.cpp``); ``jax.lax.broadcast_in_dim`` (jax
``jax/_src/lax/lax.py``, ``_broadcast_in_dim_shape_rule``).  ``axes_mapping[i]``
(StableHLO's ``broadcast_dimensions[i]``) is the output axis of data axis ``i``: one
entry per data axis (C2), each an axis of the target (C3), no axis twice (C4).  Each
data dim equals the target dim it is mapped to or is 1 (C5); unmapped target axes are
replicated.  The output is the target shape.

They differ in one thing only, the order of the entries: OpenVINO ("no
transposes") requires them strictly increasing (as older jax releases did);
StableHLO and jax 0.10 require them unique only, so a data axis may land after the
next one (a transposing broadcast: the spec's own example maps (1,3) to (2,3,2)
with ``[2, 1]``).  That is the one attribute ``transpose``: 0 (the default) is
OpenVINO's rule, 1 StableHLO's and jax's.
Duplicated entries are refused either way: they pass OpenVINO's ``is_sorted`` check
but give nonsense (the deviation registry has it).

>>> from bcast import infer, result_shape
>>> result_shape((16,), (1, 16, 50, 50), rule="explicit", axes_mapping=[1])
(1, 16, 50, 50)
>>> infer((1, 3), (2, 3, 2), rule="explicit", axes_mapping=[2, 1], transpose=1).axis_maps
((2, 1), (0, 1, 2))
"""

from __future__ import annotations

from ._base import Attr, Ctx, fit_into, register

AXES = Attr("axes_mapping", "axes", None, "output axis of each data axis, sorted, e.g. 1,2", required=True)
TRANSPOSE = Attr("transpose", "bool", False, "1: axes_mapping unique in any order, a transposing broadcast "
                 "(StableHLO and jax broadcast_in_dim); 0: strictly increasing (OpenVINO)")


@register(
    "explicit", operands=("data", "target"), attrs=(AXES, TRANSPOSE), framework="openvino / stablehlo / jax",
    summary="data axis i lands on target axis axes_mapping[i]; dims equal or 1; output target",
    source="OpenVINO Broadcast-1/3 explicit mode; StableHLO and jax.lax broadcast_in_dim (transpose=1)",
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
    if not ctx.attrs["transpose"]:
        for i in range(1, len(axes)):
            if axes[i] <= axes[i - 1]:
                what = "repeats" if axes[i] == axes[i - 1] else "is not sorted"
                raise ctx.error(
                    f"axes_mapping {list(axes)} {what}: it must be strictly increasing "
                    "(no transposes, one data axis per output axis)",
                    kind="attribute",
                )
    else:
        for i, a in enumerate(axes):
            if a in axes[:i]:
                raise ctx.error(
                    f"axes_mapping {list(axes)} repeats {a}: its entries must be unique (one data axis per "
                    "output axis; any order)",
                    kind="attribute",
                )
    maps = [axes, tuple(range(len(T)))]
    shape = fit_into(ctx, maps, T, [(1, k) for k in range(len(T))],
                     "data's dim must equal the target dim it is mapped to, or be 1")
    return ctx.plan(shape, maps)
