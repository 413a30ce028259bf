"""MNN's deviation records: where the MNN wheel does not do what MNN's own source says (its shape computer,
its tensor rank limit, its reference functors).  Each record follows its ``check``; their proofs are in
:mod:`bcast.frameworks.mnn.proofs`; :mod:`bcast.frameworks.deviations` assembles the registry.
"""

from __future__ import annotations

import math

from ...core._format import format_shape
from .._deviation import Deviation, Outcome, Runtime

__all__ = ["DEVIATIONS", "RUNTIME", "MNNRuntime", "both_stretched", "select_y_unstretched"]


class MNNRuntime(Runtime):
    """The MNN builds whose deviations are recorded."""

    MNN = "MNN (PyPI wheel, x86-64 CPU)"


#: The versions the records were proven on, oldest first.
_MNN = ("3.6.1",)


#: The ops of MNN's table (bcast.frameworks.mnn.ops, which a test holds to it): a numpy query about one of them
#: is an MNN query, as is one with MNN's max_rank.
OPS = ("ADD", "SUB", "MUL", "POW", "REALDIV", "MINIMUM", "MAXIMUM", "GREATER", "GREATER_EQUAL", "LESS", "FLOORDIV",
       "SquaredDifference", "EQUAL", "LESS_EQUAL", "FLOORMOD", "MOD", "ATAN2", "NOTEQUAL", "SELECT")


def _mnn_query(o: Outcome) -> bool:
    limit = o.attrs.get("max_rank")
    return o.rule == "numpy" and (limit == 9 or (limit is None and o.op in OPS))


def _rank_crash(o: Outcome) -> str | None:
    e = o.error
    if not _mnn_query(o) or e is None or e.kind != "rank":
        return None
    high = max(len(s) for s in o.shapes)
    return f"MNN's process dies (SIGSEGV) on a tensor of rank {high}, instead of refusing it"


MNN_RANK_CRASH = Deviation(
    id="mnn-rank-crash",
    runtime=MNNRuntime.MNN,
    proven_on=_MNN,
    rules=("numpy",),
    ops="every op (a constant of rank 10 is enough)",
    condition="an input of rank 10 or more, e.g. ADD of (1,1,1,1,1,1,1,1,1,1) and (2,)",
    behaviour="the process dies with SIGSEGV: no error is reported",
    spec="a tensor holds at most MNN_MAX_TENSOR_DIM = 9 dims (source/core/TensorUtils.hpp; source/core/Tensor.cpp "
         "asserts it, an assert the release build leaves out)",
    check=_rank_crash,
    kills_process=True,
)


def _empty_output(o: Outcome) -> str | None:
    if not _mnn_query(o) or o.plan is None or 0 not in o.plan.shape:
        return None
    return (f"MNN infers the output shape {format_shape(o.plan.shape)} but reading it fails "
            "(\"call to readMap meet a error\"): it computes no empty output")


MNN_EMPTY_OUTPUT = Deviation(
    id="mnn-empty-output",
    runtime=MNNRuntime.MNN,
    proven_on=_MNN,
    rules=("numpy",),
    ops="every op",
    condition="the output has a 0-size dim, e.g. ADD of (0,3) and (1,3)",
    behaviour="shape inference gives numpy's shape ((0,3)), but reading the output fails (\"call to readMap meet a "
              "error\"; the Python binding raises SystemError)",
    spec="computeBroadCastDims (source/shape/SizeComputer.cpp) gives a 0 dim where a 1 meets a 0: the output is "
         "defined, and empty",
    check=_empty_output,
)


def both_stretched(shapes, out) -> bool:
    """Whether MNN's geometry pass (GeometryBinary.cpp) stretches both inputs of a BinaryOp into copies: neither
    input has the output's number of elements, nor one element."""
    n = math.prod(out)
    return len(shapes) == 2 and all(math.prod(s) not in (n, 1) for s in shapes)


_ORDERED = ("GREATER", "GREATER_EQUAL", "LESS_EQUAL", "EQUAL", "NOTEQUAL")


def _compare_bits(o: Outcome) -> str | None:
    if not _mnn_query(o) or o.plan is None or o.op not in _ORDERED or not both_stretched(o.shapes, o.plan.shape):
        return None
    return (f"MNN stretches both inputs into int32 copies (the comparison's output type) and compares the float32 "
            f"bit patterns as int32: {o.op} is wrong where both operands are negative (the order reverses) and for -0 "
            f"against +0")


MNN_COMPARE_BITS = Deviation(
    id="mnn-compare-bits",
    runtime=MNNRuntime.MNN,
    proven_on=_MNN,
    rules=("numpy",),
    ops="BinaryOp GREATER, GREATER_EQUAL, LESS_EQUAL, EQUAL, NOTEQUAL on float32",
    condition="both inputs are stretched: neither has the output's number of elements nor one element, e.g. "
              "(4,1) with (1,8)",
    behaviour="the float32 inputs are broadcast into tensors of the output's type (int32) and compared as int32 "
              "bit patterns: wrong where both operands are negative (GREATER of -1 and -3 gives 0) and for -0 against "
              "+0 (EQUAL gives 0)",
    spec="MNN's functors (source/backend/cpu/BinaryUtils.hpp) compare the values: x > y, x == y",
    check=_compare_bits,
    only_ops=_ORDERED,
)


def _less_bits(o: Outcome) -> str | None:
    if not _mnn_query(o) or o.plan is None or o.op != "LESS":
        return None
    return ("MNN's LESS compares float32 operands as int32 bit patterns, whatever the shapes: wrong where both "
            "are negative (LESS of -1 and -3 gives 1) and for -0 against +0")


MNN_LESS_BITS = Deviation(
    id="mnn-less-bits",
    runtime=MNNRuntime.MNN,
    proven_on=_MNN,
    rules=("numpy",),
    ops="BinaryOp LESS on float32",
    condition="any shapes: two negative float32 operands, or -0 against +0",
    behaviour="LESS compares the float32 bit patterns as int32, broadcast or not: LESS of -1 and -3 gives 1, of "
              "-3 and -1 gives 0, of -0 and +0 gives 1",
    spec="MNN's functor BinaryLess (source/backend/cpu/BinaryUtils.hpp): x < y",
    check=_less_bits,
    only_ops=("LESS",),
)


def select_y_unstretched(shapes, out) -> bool:
    """Whether MNN's Select reads y without stretching it (GeometrySelect.cpp takes x's size for y's): x has the
    output's number of elements and y fewer, but more than one."""
    n = math.prod(out)
    return len(shapes) == 3 and math.prod(shapes[1]) == n and math.prod(shapes[2]) not in (n, 1)


def _select_y(o: Outcome) -> str | None:
    if not _mnn_query(o) or o.plan is None or o.op != "SELECT" or not select_y_unstretched(o.shapes, o.plan.shape):
        return None
    return (f"MNN does not stretch y {format_shape(o.shapes[2])} (it checks x's size twice): where cond is 0, output "
            f"element k (in memory order) is y's element k, and past y's {math.prod(o.shapes[2])} elements garbage")


MNN_SELECT_Y = Deviation(
    id="mnn-select-y",
    runtime=MNNRuntime.MNN,
    proven_on=_MNN,
    rules=("numpy",),
    ops="Select",
    condition="x has the output's number of elements and y fewer, but more than one: cond (2,3), x (2,3), y (2,1)",
    behaviour="y is not broadcast: where cond is 0, output element k (in memory order) is y's element k, and past "
              "y's end whatever memory holds (e.g. 4.2e-38)",
    spec="ShapeSelect.cpp broadcasts cond, x and y by computeBroadCastDims; GeometrySelect.cpp means to stretch each "
         "input whose size is not the output's, but takes y's size from x (inputL2 = input1->elementSize())",
    check=_select_y,
    only_ops=("SELECT",),
)


DEVIATIONS: tuple[Deviation, ...] = (
    MNN_RANK_CRASH,
    MNN_EMPTY_OUTPUT,
    MNN_COMPARE_BITS,
    MNN_LESS_BITS,
    MNN_SELECT_Y,
)

#: The enum of this framework's runtimes: a record is this framework's when its runtime is a member.
RUNTIME = MNNRuntime
