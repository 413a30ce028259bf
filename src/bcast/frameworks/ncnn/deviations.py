"""ncnn's deviation records: where ncnn's BinaryOp (and the PyPI wheel's build of it) does not do what
ncnn's documentation and reference functors say.  Each record follows its ``check``; their proofs are in
:mod:`bcast.frameworks.ncnn.proofs`; :mod:`bcast.frameworks.deviations` assembles the registry.
"""

from __future__ import annotations

from ...core._format import format_shape as _fmt
from .._deviation import Deviation, Outcome, Runtime

__all__ = ["DEVIATIONS", "RUNTIME", "NcnnRuntime"]


class NcnnRuntime(Runtime):
    """The ncnn builds whose deviations are recorded."""

    NCNN = "ncnn"
    PYPI_WHEEL = "ncnn (PyPI wheel, x86-64)"


#: The versions the records were proven on, oldest first (``bcast deviations --check`` reruns the proofs;
#: a record that stops holding gets ``fixed_in`` or its own tuple).
_NCNN = ("1.0.20261020",)


def _ncnn_garbage(o: Outcome) -> str | None:
    e = o.error
    if o.rule != "ncnn" or e is None or e.kind != "dims":
        return None
    from ...rules.ncnn import NCNN, garbage_shape

    shape = garbage_shape(e.shapes, e.alignment, e.out_rank)
    shown = NCNN.shape(shape) + " in ncnn order" if e.notation == NCNN.name else _fmt(shape)
    return (f"ncnn's BinaryOp returns 0 (success) and an output of shape {shown}: rows past the end of "
            "the smaller input are clamped, a mismatch on the innermost axis reads out of bounds")


NCNN_GARBAGE = Deviation(
    id="ncnn-garbage",
    runtime=NcnnRuntime.NCNN,
    proven_on=_NCNN,
    rules=("ncnn",),
    ops="BinaryOp with two blobs",
    condition="a pair outside ncnn's broadcasting rules, e.g. A (2,3,4) with B (3,4)",
    behaviour="returns 0 (success) and an output of the per-axis max shape, filled with clamped or out-of-bounds "
              "values; no error is ever reported",
    spec="binaryop-broadcasting.md lists the supported pairs; nothing else is defined",
    check=_ncnn_garbage,
)


def _ncnn_empty(o: Outcome) -> str | None:
    e = o.error
    if o.rule == "ncnn" and e is not None and e.kind == "unsupported" and any(0 in s for s in e.shapes):
        if any(0 in s and len(s) >= 2 for s in e.shapes):
            return "ncnn's BinaryOp kills the process (SIGFPE) on an empty blob instead of reporting an error"
        return ("ncnn's BinaryOp returns 0 (success) and a non-empty output for an empty 1-D blob "
                "(e.g. (0,) with (1,) gives (1,))")
    return None


NCNN_EMPTY_BLOB = Deviation(
    id="ncnn-empty-blob",
    runtime=NcnnRuntime.NCNN,
    proven_on=_NCNN,
    rules=("ncnn",),
    ops="BinaryOp",
    condition="an input has a 0-size dim",
    behaviour="the process dies with SIGFPE (e.g. (0,3) with (1,3)); with 1-D blobs it returns 0 and a wrong, "
              "non-empty output ((0,) with (1,) gives (1,))",
    spec="not defined by the spec; any error would be expected, not a crash",
    check=_ncnn_empty,
    kills_process=True,
)


NCNN_FAST_MATH = Deviation(
    id="ncnn-fast-math",
    runtime=NcnnRuntime.PYPI_WHEEL,
    proven_on=_NCNN,
    rules=("ncnn",),
    ops="BinaryOp DIV, FLOOR_DIVIDE, POW, ATAN2, FMOD, REMAINDER and their R- forms; MIN",
    condition="any shapes; these values (finite ones, and NaN for MIN): a zero divisor; a POW base <= 0; ATAN2(-0, x) "
              "with x < 0 or x = -0; x/y within a few ulps of an integer (for REMAINDER of a half-integer; which "
              "such quotients depends on the vector body the processor gets, AVX-512 or AVX2); MIN of -0 "
              "and +0, or of x and NaN, on the one-element path",
    behaviour="the wheel's vector code (built with -ffast-math; MIN: its one-element path) computes something else: "
              "DIV and FLOOR_DIVIDE by zero give NaN, not +-inf; POW with a base <= 0 gives garbage (2.4e38); "
              "ATAN2(-0, x) gives +pi, not -pi; FMOD, REMAINDER and FLOOR_DIVIDE are off by one divisor (by 1), "
              "and a -0 result comes back +0 (REMAINDER(1.37, -2.74) gives -1.37, not 1.37); MIN(-0, +0) gives +0 and "
              "MIN(x, NaN) gives NaN",
    spec="ncnn's reference functors (src/layer/binaryop.cpp) in IEEE float32: x / y, floorf(x / y), powf, "
         "atan2f, fmodf, remainderf, std::min; the wheel's other path computes them",
    only_ops=("DIV", "RDIV", "FLOOR_DIVIDE", "RFLOOR_DIVIDE", "POW", "RPOW", "ATAN2", "RATAN2", "FMOD", "RFMOD",
             "REMAINDER", "RREMAINDER", "MIN"),
)


DEVIATIONS: tuple[Deviation, ...] = (
    NCNN_GARBAGE,
    NCNN_EMPTY_BLOB,
    NCNN_FAST_MATH,
)

#: The enum of this framework's runtimes: a record is this framework's when its runtime is a member
#: (``bcast compare --framework`` keeps those).
RUNTIME = NcnnRuntime
