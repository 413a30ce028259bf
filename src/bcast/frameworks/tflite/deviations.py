"""TFLite's deviation records: where LiteRT's interpreter does not do what TFLite's own ops say.  Each
record follows its ``check``; their proofs are in :mod:`bcast.frameworks.tflite.proofs`;
:mod:`bcast.frameworks.deviations` assembles the registry.

What is *not* recorded here, because nothing here can run it: the GPU delegate's binary ops, which
"assume the left operand is bigger" (tensorflow#60043) and give wrong values (tensorflow#61594).  Its
kernels need a GPU (OpenCL / OpenGL) that no machine of the test suite has, so no proof can run: it
is a report, not a proven deviation.
"""

from __future__ import annotations

import math

from ...core._format import format_shape
from .._deviation import Deviation, Outcome, Runtime

__all__ = ["BINARY", "DEVIATIONS", "RUNTIME", "TFLiteRuntime", "fivefold"]


class TFLiteRuntime(Runtime):
    """The TFLite runtimes whose deviations are recorded."""

    INTERPRETER = "ai-edge-litert"


#: The versions the records were proven on, oldest first (``bcast deviations --check`` reruns the proofs).
_LITERT = ("2.3.0",)

_SELECTS = ("SELECT", "SELECT_V2")


def _one_element(o: Outcome) -> str | None:
    """Every input holds one element (so the kernel takes its early path, before any shape check)."""
    shapes = o.shapes
    if o.op not in _SELECTS or len(shapes) != 3 or not all(math.prod(s) == 1 for s in shapes):
        return None
    if o.plan is not None:
        spec = "numpy's broadcast" if o.op == "SELECT_V2" else "x's shape"
        instead = f"not {spec} {format_shape(o.plan.shape)} (unless the model declares that very shape)"
    else:
        instead = "where SELECT refuses them"
    return (f"every input holds one element: TFLite's {o.op} gives the output the shape the model declares for it "
            f"(if that holds one element), {instead}")


SELECT_ONE_ELEMENT = Deviation(
    id="tflite-select-one-element",
    runtime=TFLiteRuntime.INTERPRETER,
    proven_on=_LITERT,
    rules=("tflite-select", "numpy"),
    ops="SELECT, SELECT_V2",
    condition="condition, x and y each hold one element, e.g. (1,1), (1,), () or (1,), (1,), (1,) -- and the output "
              "the model declares holds one element, e.g. ()",
    behaviour="the output keeps the shape the model declares for it (select.cc: 'Respect the original output shape "
              "when there are mixed shapes to represent a scalar data'), e.g. () for SELECT_V2 of (1,1), (1,), () and "
              "for SELECT of (1,), (1,), (1,); SELECT takes such inputs even where x and y differ",
    spec="SELECT_V2 broadcasts its three inputs (tf.where: numpy's rule, output (1,1) here); SELECT's output has x's "
         "shape, and x and y must have one shape",
    check=_one_element,
    only_ops=_SELECTS,
)


#: The binary ops: each broadcasts in ``BroadcastBinaryOpSimple`` (kernels/internal/reference/broadcast_loop.h).
BINARY = ("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "POW", "SQUARED_DIFFERENCE", "FLOOR_DIV", "FLOOR_MOD",
          "EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "LOGICAL_AND", "LOGICAL_OR")
#: The ops whose optimized float32 kernel dispatches on ``ProcessBroadcastShapes`` before the broadcast loop.
_FIVEFOLD = ("ADD", "MUL")


def fivefold(a: tuple, b: tuple) -> bool:
    """Whether ``ProcessBroadcastShapes`` (kernels/internal/reference/process_broadcast_shapes.h) files the
    pair as no broadcast or a "fast" broadcast -- at most five runs of axes: equal, the first input's 1s,
    equal, the second input's 1s, equal (either input may be the first) -- rather than the generic one.

    >>> fivefold((2, 3, 4), (1, 1, 4)), fivefold((2, 1, 4), (1, 3, 1)), fivefold((1, 2, 2), (2, 2))
    (True, False, True)
    """
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    if a == b:
        return True
    i = max(k for k in range(n) if a[k] != b[k])
    if a[i] != 1 and b[i] != 1:
        return False
    x, y = (a, b) if a[i] == 1 else (b, a)  # x: the input with the 1 at the first difference from the right
    i = n - 1
    for stretched in (None, x, None, y, None):  # equal dims, x's 1s, equal, y's 1s, equal
        while i >= 0 and (x[i] == y[i] if stretched is None else stretched[i] == 1):
            i -= 1
    return i < 0


def _fast_path(o: Outcome) -> bool:
    """ADD / MUL on float32 inputs whose pair is a five-fold one (not the generic loop)."""
    element_type = o.op_attrs.get("element_type")
    return o.op in _FIVEFOLD and element_type == "float32" and fivefold(*o.shapes)


def _past_the_loop(o: Outcome) -> bool:
    e = o.error
    return o.rule == "numpy" and e is not None and e.kind == "rank" and len(o.shapes) == 2 and o.op in BINARY


def _rank_abort(o: Outcome) -> str | None:
    if not _past_the_loop(o) or _fast_path(o):
        return None
    assert o.error is not None
    rank = o.error.out_rank or max(len(s) for s in o.shapes)
    return (f"TFLite's {o.op} takes these shapes in Prepare and then aborts the process (SIGABRT) in its broadcast "
            f"loop, whose limit is rank 8 (here {rank}): no error status comes back"
            + (" -- unless a fast path computes them (tflite-rank-fast-path)" if o.op in ("ADD", "MUL", "POW") else ""))


RANK_ABORT = Deviation(
    id="tflite-rank-abort",
    runtime=TFLiteRuntime.INTERPRETER,
    proven_on=_LITERT,
    rules=("numpy",),
    ops=", ".join(BINARY),
    condition="two inputs of different shapes whose broadcast has rank 9 or more, e.g. SUB of (2,)*9 and (1,)*9",
    behaviour="Prepare accepts them (CalculateShapeForBroadcast has no rank limit); Eval's broadcast loop "
              "(BroadcastBinaryOpSimple, kMaxRank = 8) fails TFLITE_CHECK_LE, which kills the process (abort: SIGABRT)",
    spec="the kernels' limit, rank 8 for a broadcast (inputs of one shape have none); an error status is expected, "
         "as SELECT_V2's Prepare gives on the same shapes ('output_size->size <= 8')",
    check=_rank_abort,
    only_ops=BINARY,
    kills_process=True,
)


def _rank_fast_path(o: Outcome) -> str | None:
    if not _past_the_loop(o):
        return None
    if _fast_path(o):
        return (f"TFLite's {o.op} on float32 files this pair as a five-fold broadcast (ProcessBroadcastShapes) and "
                "computes it past rank 8, without the broadcast loop")
    if o.op in _FIVEFOLD and o.op_attrs.get("element_type") is None and fivefold(*o.shapes):
        return (f"on float32 inputs TFLite's {o.op} files this pair as a five-fold broadcast and computes it past "
                "rank 8 (other types abort: tflite-rank-abort)")
    if o.op == "POW" and math.prod(o.shapes[1]) == 1:
        return ("TFLite's POW computes this past rank 8 if the exponent (one element) is an integer >= 1: it "
                "multiplies, without the broadcast loop; any other exponent aborts (tflite-rank-abort)")
    return None


RANK_FAST_PATH = Deviation(
    id="tflite-rank-fast-path",
    runtime=TFLiteRuntime.INTERPRETER,
    proven_on=_LITERT,
    rules=("numpy",),
    ops="ADD, MUL (float32), POW",
    condition="a broadcast of rank 9 or more that never reaches the broadcast loop: ADD / MUL on float32 where "
              "ProcessBroadcastShapes finds no generic broadcast (e.g. (2,)*9 with (1,)*9, or with ()); POW whose "
              "exponent holds one element, an integer >= 1",
    behaviour="computed, at any rank (BinaryBroadcastFiveFold; POW's IntegerExponentPow), where the broadcast "
              "loop's limit is rank 8 and every other path aborts (tflite-rank-abort)",
    spec="the kernels' limit, rank 8 for a broadcast: bcast refuses past it, whatever the path",
    check=_rank_fast_path,
    only_ops=("ADD", "MUL", "POW"),
)


DEVIATIONS: tuple[Deviation, ...] = (
    SELECT_ONE_ELEMENT,
    RANK_ABORT,
    RANK_FAST_PATH,
)

#: The enum of this framework's runtimes: a record is this framework's when its runtime is a member
#: (``bcast compare --framework`` keeps those).
RUNTIME = TFLiteRuntime
