"""``onnx-legacy``: ONNX opset 1-6 ``broadcast``/``axis`` (Add, Sub, Mul, Div, Pow,
And, Or, Xor, Equal, Greater, Less).

Source: ONNX Changelog (Add-1, Add-6): "the right-hand-side argument will be
broadcasted to match the shape of left-hand-side argument ... the second tensor
can either be of element size 1 (including a scalar tensor and any tensor with
rank equal to or smaller than the first tensor), or having its shape as a
contiguous subset of the first tensor's shape.  The starting of the mutually
equal shape is specified by the argument "axis", and if it is not set, suffix
matching is assumed.  1-dim expansion doesn't work yet."  The executable form
is Caffe2's ``ComputeLegacyBroadcastSizes`` (reference/onnx_paddle_xla.md):

- ``broadcast=0`` (the default): the shapes must be identical.
- ``broadcast=1``: rank(B) <= rank(A); a B of one element is a scalar and
  fits whatever ``axis`` says (Caffe2 checks the element count first);
  otherwise ``axis`` unset or -1 means rank(A) - rank(B), else
  ``0 <= axis <= rank(A) - rank(B)``, and B's leading and trailing 1s are ignored and its
  remaining dims must EQUAL A's from ``axis`` (a 1 in the middle does not
  stretch).  The output is A's shape.

Dims that are not static: dims that must be equal get a constraint (``N ==
3``); a B dim that may be 1 where being 1 would change the rule (the scalar
test, B's leading and trailing 1s) is an ``undecidable`` error.

>>> from bcast import result_shape
>>> result_shape((2, 3, 4, 5), (3, 4), rule="onnx-legacy", broadcast=1, axis=1)
(2, 3, 4, 5)
"""

from __future__ import annotations

from ..core.dims import equal_constraint, is_one, is_static, maybe_one, meet
from ._base import Attr, Ctx, register, right_aligned

BROADCAST = Attr("broadcast", "int", 0, "1 enables broadcasting B to A (ONNX default 0)", choices=(0, 1))
AXIS = Attr("axis", "int", None, "start axis of B in A; unset or -1 = suffix matching")


@register(
    "onnx-legacy", operands=("A", "B"), attrs=(BROADCAST, AXIS), framework="onnx (opset 1-6)",
    compare_attrs=(("broadcast", 1),),  # compare shows what the legacy broadcast does, not its broadcast=0
    summary="opset<7 broadcast=1: B's dims (leading/trailing 1s aside) EQUAL A's from axis; output A",
    source="ONNX Add-1/Add-6 broadcast/axis (Caffe2 rule)",
)
def plan(ctx: Ctx):
    A, B = ctx.shapes
    ra, rb = len(A), len(B)
    if not ctx.attrs["broadcast"]:
        out_rank = max(ra, rb)
        maps = [right_aligned(A, out_rank), right_aligned(B, out_rank)]
        identical = "broadcast=0: the shapes must be identical (set broadcast=1 to broadcast B to A)"
        if ra != rb:
            raise ctx.error(f"{identical}; rank {ra} vs {rb}", kind="rank", alignment=tuple(maps), out_rank=out_rank)
        _require_equal(ctx, [(ax, ax) for ax in range(ra)], maps, identical)
        return ctx.plan(tuple(meet(a, b) for a, b in zip(A, B)), maps)
    if rb > ra:
        raise ctx.error(
            f"B has rank {rb}, more than A's rank {ra}: the legacy rule broadcasts B to A only",
            kind="rank", alignment=(right_aligned(A, rb), tuple(range(rb))), out_rank=rb,
        )
    if all(is_one(d) for d in B):  # one element: a scalar wherever it goes, axis is not looked at
        maps = [tuple(range(ra)), right_aligned(B, ra)]
        return ctx.plan(A, maps, start_axis=ra - rb)
    axis = ctx.attrs["axis"]
    start = ra - rb if axis is None or axis == -1 else axis
    if not 0 <= start <= ra - rb:
        raise ctx.error(
            f"axis {axis} is out of range: B of rank {rb} fits A of rank {ra} from axis 0 to {ra - rb} "
            "(or -1 / unset for suffix matching)",
            kind="attribute",
        )
    maps = [tuple(range(ra)), tuple(range(start, start + rb))]
    lo, hi = 0, rb
    while is_one(B[lo]):
        lo += 1
    while is_one(B[hi - 1]):
        hi -= 1
    for k in {lo, hi - 1}:
        if not is_static(B[k]) and maybe_one(B[k]):
            raise ctx.undecidable(
                f"whether B's dim {B[k]} (axis {k}) is one of its ignored leading or trailing 1s depends on its size"
            )
    def why(k):
        return (
            f"B's dims must EQUAL A's from axis {start} (only B's leading and trailing 1s are ignored"
            + ("; a 1 inside B does not stretch: \"1-dim expansion doesn't work yet\")" if is_one(B[k]) else ")")
        )

    _require_equal(ctx, [(start + k, k) for k in range(hi - 1, lo - 1, -1)], maps, why)
    out = list(A)
    for k in range(lo, hi):
        out[start + k] = meet(A[start + k], B[k])
    return ctx.plan(out, maps, start_axis=start)


def _require_equal(ctx: Ctx, pairs, maps, why) -> None:
    """A's axis ``ax`` must equal B's axis ``k``, for each ``(ax, k)`` (right to left);
    ``why`` is the reason, or a callable ``(k) -> reason``."""
    A, B = ctx.shapes
    for ax, k in pairs:
        found = equal_constraint((ctx.label(0, ax), A[ax]), (ctx.label(1, k), B[k]))
        reason = why(k) if callable(why) else why
        ctx.require(found, (0, ax), (1, k), ax, len(A), A[ax], B[k], reason, maps)
