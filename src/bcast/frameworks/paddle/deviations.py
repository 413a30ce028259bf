"""PaddlePaddle's deviation records: where paddlepaddle does not do what its own InferMeta, documentation
or Python checks say.  Each record follows its ``check``; their proofs are in
:mod:`bcast.frameworks.paddle.proofs`; :mod:`bcast.frameworks.deviations` assembles the registry.

Everything else measured agrees with the rules (tests/frameworks/test_paddle_run.py): the 2.x/3.x ops
and ``where`` broadcast as numpy (0-d tensors and 0-size dims included), an in-place op refuses to
broadcast ``x``, ``expand`` keeps a dim for -1, and the legacy ``elementwise_*`` operators place the
lower-rank input (either one) at ``axis`` as ``ElementwiseRawInferMeta`` does, trailing 1s of it
overhanging the end included.
"""

from __future__ import annotations

from .._deviation import Deviation, Outcome, Runtime, attempt, verdict

__all__ = ["DEVIATIONS", "RUNTIME", "TRANSLATED_OPS", "PaddleRuntime", "overhang", "translated"]


class PaddleRuntime(Runtime):
    """The paddlepaddle builds whose deviations are recorded."""

    PADDLE = "paddlepaddle"
    CPU_KERNEL = "paddlepaddle (CPU kernels)"
    PIR_TRANSLATOR = "paddlepaddle (PIR program translator)"


#: The versions the records were proven on, oldest first (``bcast deviations --check`` reruns the proofs).
_PADDLE = ("3.3.1",)


#: The max_rank bcast.paddle's plans carry (its ops.TENSOR_RANK, ops.EXPAND_RANK): a query with another one (torch's
#: expand and where share these ops' names) is not Paddle's.
_TENSOR_RANK, _EXPAND_RANK = 9, 8


def _empty_shape(o: Outcome) -> str | None:
    e = o.error
    if o.rule == "unidirectional" and e is not None and e.kind == "rank" and len(o.shapes[0]) == 0 \
            and o.attrs.get("max_rank") == _EXPAND_RANK:
        from ...core._format import format_shape

        return (f"Paddle's {o.op or 'expand'} given an empty shape list returns x unchanged, of shape "
                f"{format_shape(o.shapes[1])}, instead of refusing")
    return None


PADDLE_EXPAND_EMPTY_SHAPE = Deviation(
    id="paddle-expand-empty-shape",
    runtime=PaddleRuntime.PADDLE,
    proven_on=_PADDLE,
    rules=("unidirectional",),
    ops="paddle.expand, paddle.broadcast_to",
    condition="shape is an empty list and x has rank >= 1, e.g. paddle.expand(ones([2, 3]), [])",
    behaviour="returns x unchanged (shape [2, 3]); the same empty shape given as a Tensor is refused ('The number "
              "(0) of elements of 'shape' for expand_v2 op must be greater than or equal to the rank (2) of the input "
              "'X'')",
    spec="ExpandInferMeta (paddle/phi/infermeta/unary.cc) requires as many sizes as x's rank at least, and the "
         "expand docs: 'the rank of shape must be greater than or equal to the rank of x'; a list of 1 size fewer "
         "is refused",
    check=_empty_shape,
    only_ops=("expand", "broadcast_to"),
)


def _negative_axis(o: Outcome) -> str | None:
    axis = o.attrs.get("axis", -1)
    if o.rule == "paddle" and o.plan is not None and isinstance(axis, int) and axis < -1 \
            and len(o.shapes[0]) != len(o.shapes[1]):
        return (f"Paddle's CPU kernel refuses axis {axis} ('Axis should be great than or equal to 0'), which its "
                f"InferMeta resolves to {o.plan.attr('start_axis')}; axis={o.plan.attr('start_axis')} runs")
    return None


PADDLE_LEGACY_NEGATIVE_AXIS = Deviation(
    id="paddle-legacy-negative-axis",
    runtime=PaddleRuntime.CPU_KERNEL,
    proven_on=_PADDLE,
    rules=("paddle",),
    ops="elementwise_add, elementwise_sub, elementwise_mul, elementwise_div, elementwise_max, elementwise_min, "
        "elementwise_pow, elementwise_floordiv, elementwise_mod (paddle._legacy_C_ops)",
    condition="axis < -1 and the ranks differ, where the shapes fit at the axis InferMeta resolves it to, e.g. "
              "X (2,3,4,5), Y (3,4), axis -2",
    behaviour="the op fails in its CPU kernel: 'Axis should be great than or equal to 0, but received axis is -2' "
              "(the kernel resolves only -1; the other negative axes reach GetBroadcastDimsArrays as they are)",
    spec="ElementwiseRawInferMeta (paddle/phi/infermeta/binary.cc) takes axis in [-R, R) and resolves a negative one "
         "to |rank(X) - rank(Y)| + axis + 1 (here 1): the output (2,3,4,5)",
    check=_negative_axis,
)


def overhang(shapes: tuple, axis: object) -> int:
    """How many axes the lower-rank input, placed at ``axis`` (resolved as InferMeta resolves it), reaches past
    the end of the other; 0 where it fits (or the shapes are equal, or the axis is out of range)."""
    x, y = shapes
    if tuple(x) == tuple(y) or not isinstance(axis, int) or isinstance(axis, bool):
        return 0
    big, small = max(len(x), len(y)), min(len(x), len(y))
    if not -big <= axis < big:
        return 0
    start = abs(len(x) - len(y)) + axis + 1 if axis < 0 else axis
    return max(0, start + small - big)


def _overhang(o: Outcome) -> str | None:
    if o.rule != "paddle" or len(o.shapes) != 2 or not overhang(o.shapes, o.attrs.get("axis", -1)):
        return None
    return ("Paddle's ElementwiseRawInferMeta copies the lower-rank input's dims past the end of its buffer here "
            "(it does not check that they fit): the process may abort ('free(): invalid pointer', SIGABRT) or "
            "go on with a corrupted heap")


PADDLE_LEGACY_AXIS_OVERHANG = Deviation(
    id="paddle-legacy-axis-overhang",
    runtime=PaddleRuntime.PADDLE,
    proven_on=_PADDLE,
    rules=("paddle",),
    ops="the legacy elementwise_* operators (paddle._legacy_C_ops)",
    condition="the lower-rank input placed at axis reaches past the end of the other: axis + rank(small) > "
              "rank(big), e.g. X (1,1,3), Y (5,1), axis 2",
    behaviour="GetBroadcastDimsArrays writes the overhanging dims past the end of a vector, which kills the process "
              "(free(): invalid pointer, SIGABRT) on X (1,1,3), Y (5,1), axis 2 run alone; in another heap layout "
              "the process survives and InferMeta compares the placement it never refused ('Received [3] in X is not "
              "equal to [5] in Y at i:2'); X (2,3,4,5), Y (4,5,1), axis 2 returns the right values",
    spec="the operators' documentation: Y's trailing 1s are ignored ('shape(Y) = (2, 1) => (2)'), any other "
         "placement must fit; an error, never a crash. bcast ignores the trailing 1s and refuses the rest",
    check=_overhang,
    kills_process=True,
)


def _where_rank(o: Outcome) -> str | None:
    p = o.plan
    if o.rule != "numpy" or p is None or o.attrs.get("max_rank") != _TENSOR_RANK or len(p.shape) <= _EXPAND_RANK \
            or all(tuple(s) == tuple(p.shape) for s in o.shapes):
        return None
    return (f"Paddle's where broadcasts each input with expand, which takes 8 sizes at most: it refuses the output "
            f"rank {len(p.shape)} ('The number of elements (9) of 'shape' for must not be greater than 8')")


PADDLE_WHERE_RANK_9 = Deviation(
    id="paddle-where-rank-9",
    runtime=PaddleRuntime.PADDLE,
    proven_on=_PADDLE,
    rules=("numpy",),
    ops="paddle.where",
    condition="an output of rank 9 (a tensor's most) where an input's shape is not the output's, e.g. condition "
              "(1,)*8, x and y (1,)*9",
    behaviour="refused: 'The number of elements (9) of 'shape' for must not be greater than 8' (python/paddle/tensor/"
              "search.py broadcasts each input with paddle.broadcast_to, whose limit is 8); three equal rank-9 shapes "
              "are taken",
    spec="paddle.where broadcasts its inputs as the element-wise ops do, and those take rank 9 (paddle.add of "
         "(2,)*9 and (1,)*9 runs)",
    check=_where_rank,
    only_ops=("where",),
)


#: The legacy operators whose ``axis`` the PIR translator rewrites (op_translator.cc's ElementwiseTranscriber).
TRANSLATED_OPS = ("elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div", "elementwise_max",
                  "elementwise_min", "elementwise_mod", "elementwise_floordiv")


def translated(x: tuple, y: tuple, axis: int) -> tuple:
    """Y's shape as Paddle 3.x's program translator leaves it for a numpy-aligned ``pd_op`` (its
    ``ElementwiseTranscriber``): axis -1 leaves it; another negative axis becomes ``axis + rank(X)``; where
    ``rank(X) - axis - rank(Y)`` (``append``) is positive, Y is reshaped to ``[1] * axis + Y + [1] * append``,
    else left as it is."""
    if axis == -1:
        return tuple(y)
    if axis < 0:
        axis += len(x)
    append = len(x) - axis - len(y)
    return (1,) * axis + tuple(y) + (1,) * append if append > 0 else tuple(y)


def _translator(o: Outcome) -> str | None:
    axis = o.attrs.get("axis", -1)
    if o.rule != "paddle" or len(o.shapes) != 2 or not isinstance(axis, int) or isinstance(axis, bool):
        return None
    x, y = o.shapes
    if tuple(x) == tuple(y):
        return None
    theirs = attempt("numpy", x, translated(x, y, axis))
    ours = o.plan if o.plan is not None else o.error
    if ours is not None and verdict(theirs) == verdict(ours):
        return None
    from ...core._format import format_shape

    y2 = translated(x, y, axis)
    becomes = f"Y reshaped to {format_shape(y2)}, then" if y2 != tuple(y) else "X and Y aligned by"
    return (f"in a Paddle 1.x/2.x program run by Paddle 3.x (translated to PIR) this op becomes {becomes} numpy "
            f"broadcasting: {verdict(theirs)}")


PADDLE_PIR_TRANSLATOR_AXIS = Deviation(
    id="paddle-pir-translator-axis",
    runtime=PaddleRuntime.PIR_TRANSLATOR,
    proven_on=_PADDLE,
    rules=("paddle",),
    ops="elementwise_add, _sub, _mul, _div, _max, _min, _mod, _floordiv in an old-IR program (a .pdmodel of Paddle "
        "1.x/2.x) that Paddle 3.x translates to PIR (paddle.pir.translate_to_pir, the default executor's path)",
    condition="the translator's own reading of axis (-1: numpy alignment; axis + rank(X) for another negative one; Y "
              "reshaped to "
              "[1]*axis + Y + [1]*(rank(X) - axis - rank(Y)) when that is positive, else numpy alignment) differs "
              "from InferMeta's: X the lower-rank input (X (3,4), Y (2,3,4,5), axis 1), Y's trailing 1s past X's end "
              "(X (2,3,4,5), Y (4,5,1), axis 2), a negative axis other than -1",
    behaviour="the translated program refuses ('Broadcast dimension mismatch') what the operator itself computes, "
              "or computes another placement",
    spec="the operators' own InferMeta (ElementwiseRawInferMeta), which the same program runs under the old IR "
         "executor: X may be the smaller input, Y's trailing 1s are ignored, a negative axis is |rank(X) - rank(Y)| "
         "+ axis + 1",
    check=_translator,
    only_ops=TRANSLATED_OPS,
)


DEVIATIONS: tuple[Deviation, ...] = (
    PADDLE_EXPAND_EMPTY_SHAPE,
    PADDLE_LEGACY_NEGATIVE_AXIS,
    PADDLE_LEGACY_AXIS_OVERHANG,
    PADDLE_PIR_TRANSLATOR_AXIS,
    PADDLE_WHERE_RANK_9,
)

#: The enum of this framework's runtimes: a record is this framework's when its runtime is a member
#: (``bcast compare --framework`` keeps those).
RUNTIME = PaddleRuntime
