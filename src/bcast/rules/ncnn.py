"""``ncnn``: ncnn's BinaryOp, in numpy order (``ncnn_order=True`` for [w,h,d,c]).

Source: ncnn docs/developer-guide/binaryop-broadcasting.md and
src/layer/binaryop.cpp (reference/ncnn.md).  Blobs have rank 1 to 4; a rank-0
shape stands for the scalar of the ``with_scalar=1`` form.  The lower-rank input
is expanded to the higher rank, then each axis must be equal or 1 (on either
side):

- rank 1, length n: if n equals the other input's *first* numpy axis, it lands
  there (ncnn's "inner axis" rule, which wins a tie); otherwise on the last
  axis (the "outer axis" compatibility rule, numpy-like);
- rank 2 or 3: always on the *leading* axes, padded with 1s on the right --
  the opposite of numpy.

ncnn never reports an error: for any other pair it returns 0 and writes
garbage (and crashes, or misbehaves, on empty blobs).  This rule refuses every such pair and
says so.

Dims that are not static: a dim that may be 0 gets the constraint that it is
not (``N != 0``); a 1-D input whose length may or may not equal the other's
first axis (``N`` against 3) is an ``undecidable`` error, since where ncnn puts
it depends on the sizes.  Constraints name axes in numpy order.

>>> from bcast import result_shape
>>> result_shape((4, 3, 2), (4, 3), rule="ncnn")       # numpy refuses this pair
(4, 3, 2)
>>> result_shape([2, 3, 4], [3, 4], rule="ncnn", ncnn_order=True)
(2, 3, 4)
"""

from __future__ import annotations

from dataclasses import replace

from ..core._format import Notation, format_shape, register_notation
from ..core.dims import UNKNOWN, Dim, equals, is_static, value_constraint
from ..core.plan import AxisMap
from ..core.errors import InputError
from ._base import Attr, Ctx, merge_all, register

ORDER = Attr("ncnn_order", "bool", False, "shapes are written in ncnn's [w,h,d,c] order")
BATCH = Attr("ncnn_batch", "choice", "keep",
             "keep: every axis is an ncnn axis (the shapes are ncnn's blobs); drop: axis 0 of the "
             "highest-rank inputs is the batch axis a converter drops (a batch of 1)", choices=("keep", "drop"))
MAX_RANK = 4
#: ncnn's [w,h,d,c]: how ``ncnn_order`` shapes are written back in messages, tables and ``--json``.
NCNN = register_notation(Notation("ncnn", "[w,h,d,c]", ("w", "hw", "chw", "cdhw")))


#: What the rule describes, said wherever it is shown (which conversion path computes it).
PATH = ("ncnn's BinaryOp on these shapes as its blobs, as a raw BinaryOp computes them "
        "(onnx2ncnn's output, a hand-written .param); pnnx inserts the reshapes numpy's alignment needs, so "
        "a model converted by pnnx computes numpy's answer here (bcast lint --target ncnn checks the rest)")


def _compare_hint(shapes: tuple, attrs: dict) -> str:
    """compare's note where the highest-rank shapes (rank 2 or more) all start with a 1 (NCHW with a
    batch of 1) and the row reads axis 0 as an ncnn axis."""
    top = max((len(s) for s in shapes), default=0)
    if attrs.get("ncnn_batch") == "keep" and top >= 2 and all(s[0] == 1 for s in shapes if len(s) == top):
        return "axis 0 read as an ncnn axis; --ncnn-batch drop if it is a batch a converter drops"
    return ""


def garbage_shape(shapes, maps, out_rank) -> tuple:
    """What ncnn outputs for a pair it cannot do: the per-axis max of the expanded shapes.
    Shared with the deviation registry (``ncnn-garbage``)."""
    out: list[Dim] = [1] * out_rank
    for s, m in zip(shapes, maps):
        for k, ax in enumerate(m):
            out[ax] = max(out[ax], s[k]) if is_static(out[ax]) and is_static(s[k]) else UNKNOWN
    return tuple(out)


def _show(ctx: Ctx, shape) -> str:
    return NCNN.shape(shape) if ctx.notation == NCNN.name else format_shape(shape)


@register(
    "ncnn", operands=("A", "B"), attrs=(ORDER, BATCH), framework="ncnn", path=PATH,
    compare_attrs=(("ncnn_batch", "keep"),), compare_hint=_compare_hint,  # the row says what it assumes of a batch
    summary="ncnn BinaryOp: rank 1-4; lower rank aligned to the LEADING axes (1-D: first axis, else last)",
    source="ncnn binaryop-broadcasting.md; src/layer/binaryop.cpp",
)
def plan(given: Ctx):
    """The rule.  It changes nothing in ``given``: it reads the shapes in numpy order (``ncnn_order``)
    through a copy, and the blobs ncnn sees (the batch axis dropped) through another."""
    ctx = given
    if ctx.attrs["ncnn_order"]:
        if ctx.attrs["ncnn_batch"] == "drop":
            raise InputError("ncnn: ncnn_batch=drop reads numpy-order shapes with a batch axis; shapes in ncnn's "
                             "[w,h,d,c] order (ncnn_order) are blobs, which have none")
        ctx = replace(ctx, shapes=tuple(NCNN.reorder(s) for s in ctx.shapes), notation=NCNN.name)
    full, dropped = ctx, _batch_inputs(ctx)
    if dropped:  # the blobs ncnn sees; constraints name each input's own axes, errors show the shapes as given
        ctx = replace(ctx, shapes=tuple(s[1:] if i in dropped else s for i, s in enumerate(full.shapes)),
                      axis_offset=tuple(int(i in dropped) for i in range(len(full.shapes))), given=full.shapes)
    A, B = ctx.shapes
    for i, s in enumerate(ctx.shapes):
        if len(s) > MAX_RANK:
            raise ctx.error(
                f"{ctx.names[i]} has rank {len(s)}{_without_batch(ctx, i)}: an ncnn blob has rank 1 to 4 "
                "([w], [w,h], [w,h,c], "
                "[w,h,d,c]); pnnx would have to fold axes first",
                kind="unsupported", operands=(i,),
            )
        if any(value_constraint(("", d), "!=", 0) is None for d in s):
            raise ctx.error(
                f"{ctx.names[i]} has a 0-size dim{_without_batch(ctx, i)}: ncnn's BinaryOp mishandles an empty blob "
                "(a SIGFPE, or a wrong non-empty output for 1-D blobs)",
                kind="unsupported", operands=(i,),
            )
    for i, s in enumerate(ctx.shapes):
        for k, d in enumerate(s):
            if not is_static(d):
                ctx.record(value_constraint((ctx.label(i, k), d), "!=", 0))
    if not A and not B:
        raise ctx.error(
            "both inputs are scalars: ncnn's BinaryOp takes at least one blob (rank 1 to 4); "
            "a scalar operand is the with_scalar=1 form",
            kind="unsupported",
        )
    hi, lo = (0, 1) if len(A) >= len(B) else (1, 0)
    H, L = ctx.shapes[hi], ctx.shapes[lo]
    out_rank = len(H)
    case = "same rank"
    lmap: AxisMap
    if not L:
        case, lmap = "scalar", ()
    elif len(L) == out_rank:
        lmap = tuple(range(out_rank))
    elif len(L) == 1:
        inner = equals(L[0], H[0])
        if inner is None:
            raise ctx.undecidable(
                f"where ncnn puts the 1-D {ctx.names[lo]} ({L[0]}) depends on whether it equals "
                f"{ctx.names[hi]}'s first numpy axis ({H[0]}): there (inner axis) or on the last axis"
            )
        if inner:
            case, lmap = "inner axis", (0,)
        else:
            case, lmap = "outer axis", (out_rank - 1,)
    else:
        case, lmap = "inner axes", tuple(range(len(L)))
    maps: list[AxisMap] = [(), ()]
    maps[hi], maps[lo] = tuple(range(out_rank)), lmap
    nh, nl = ctx.names[hi], ctx.names[lo]

    def reason(ax):
        if case == "outer axis":
            why = (
                f"a 1-D {nl} of length {L[0]} must match {nh}'s first numpy axis ({H[0]}, ncnn's inner-axis "
                f"rule) or its last ({H[-1]}, the outer-axis compatibility rule), or be 1"
            )
        elif case == "inner axes":
            aligned = L + (1,) * (len(H) - len(L))
            why = (
                f"ncnn aligns the lower-rank {nl} to the LEADING axes of {nh} (1s padded on the right, the "
                f"opposite of numpy), reading {nl} {_show(ctx, L)} as {_show(ctx, aligned)}; then dims must be "
                "equal or one of them 1"
            )
        else:
            why = "dims must be equal or one of them 1"
        garbage = garbage_shape(blobs, blob_maps, len(H))
        if dropped:
            why += f" (on the blobs {nh} {_show(ctx, H)} and {nl} {_show(ctx, L)}, the batch axis dropped)"
            garbage = (1, *garbage)
        return (
            f"{why}. ncnn would not report this: BinaryOp returns 0 and computes garbage of shape "
            f"{_show(ctx, garbage)}"
        )

    blobs, blob_maps, alignment = ctx.shapes, tuple(maps), case
    if dropped:  # the batch axis is output axis 0, and only the dropped inputs have it
        ctx = full
        out_rank, alignment = out_rank + 1, f"{case}, batch axis dropped"
        maps = [_after_batch(m, i in dropped) for i, m in enumerate(maps)]
    shape = merge_all(ctx, maps, out_rank, reason)
    return ctx.plan(shape, maps, alignment=alignment)


def _after_batch(m: AxisMap, has_batch: bool) -> AxisMap:
    """A blob's axis map in the output that has the batch axis first (on it, for an input that has it)."""
    shifted = tuple(None if a is None else a + 1 for a in m)
    return (0, *shifted) if has_batch else shifted


def _without_batch(ctx: Ctx, i: int) -> str:
    return " without its batch axis" if ctx.axis_offset and ctx.axis_offset[i] else ""


def _batch_inputs(ctx: Ctx) -> frozenset:
    """With ``ncnn_batch="drop"``: the inputs whose axis 0 is the batch a converter drops (those of
    the highest rank, when it is 2 or more; onnx2ncnn and pnnx drop only a batch of 1)."""
    if ctx.attrs["ncnn_batch"] != "drop":
        return frozenset()
    top = max(len(s) for s in ctx.shapes)
    if top < 2:
        return frozenset()
    out = frozenset(i for i, s in enumerate(ctx.shapes) if len(s) == top)
    for i in sorted(out):
        d = ctx.shapes[i][0]
        found = value_constraint((ctx.label(i, 0), d), "==", 1)
        if found is None:
            raise ctx.error(
                f"{ctx.names[i]}'s batch axis is {d}: a converter (onnx2ncnn, pnnx) drops only a batch of 1, "
                "and an ncnn blob has no batch axis", kind="unsupported", operands=(i,))
        ctx.record(found)
    return out
