"""Core ML's deviation records: where coremltools' MIL builder types a program otherwise than Core ML's
own rules say.  Each record follows its ``check``; their proofs are in :mod:`bcast.frameworks.coreml.proofs`.
"""

from __future__ import annotations

from ...core._format import format_shape
from ...core.plan import Plan
from .._deviation import Deviation, Outcome, Runtime, attempt, verdict

__all__ = ["DEVIATIONS", "RUNTIME", "CoreMLRuntime"]


class CoreMLRuntime(Runtime):
    """The Core ML programs whose deviations are recorded (the runtime itself runs only on macOS)."""

    MIL_BUILDER = "coremltools MIL builder"


#: The versions the records were proven on, oldest first.
_COREMLTOOLS = ("9.0",)


def _mil_rank(o: Outcome) -> str | None:
    e = o.error
    if o.rule != "numpy" or e is None or e.kind != "rank" or o.attrs.get("max_rank") != 5:
        return None
    shapes = o.shapes[1:] if o.op == "select" else o.shapes  # select's type inference reads a and b only
    typed = attempt("numpy", *shapes)
    if not isinstance(typed, Plan):
        return None
    return (f"its type inference gives {format_shape(typed.shape)} (rank {len(typed.shape)}) anyway; "
            "only ct.convert refuses the program: \"Core ML only supports tensors with rank <= 5\"")


COREML_MIL_RANK = Deviation(
    id="coreml-mil-rank",
    runtime=CoreMLRuntime.MIL_BUILDER,
    proven_on=_COREMLTOOLS,
    rules=("numpy",),
    ops="every element-wise binary op and select",
    condition="an input or the output has rank 6 or more, e.g. add of (1,1,1,1,1,2) and (2,)",
    behaviour="the MIL builder's type inference gives the numpy broadcast of any rank; only the converter's "
              "check (Program._check_invalid_tensor_rank, run by ct.convert) refuses the program",
    spec="Core ML holds tensors of rank <= 5 (coremltools/converters/mil/mil/program.py: \"Core ML only supports "
         "tensors with rank <= 5\")",
    check=_mil_rank,
)


def _select_cond(o: Outcome) -> str | None:
    if o.rule != "numpy" or len(o.shapes) != 3 or o.attrs.get("max_rank") != 5:
        return None
    typed = attempt("numpy", *o.shapes[1:])  # a and b: what select's type_inference broadcasts
    if o.plan is not None and isinstance(typed, Plan) and typed.shape == o.plan.shape:
        return None
    if o.error is not None and o.error.kind == "rank":
        return None  # coreml-mil-rank speaks for it
    return (f"coremltools' MIL builder types select by a and b alone, leaving out cond "
            f"{format_shape(o.shapes[0])}: it gives {verdict(typed)}")


COREML_SELECT_COND = Deviation(
    id="coreml-select-cond",
    runtime=CoreMLRuntime.MIL_BUILDER,
    proven_on=_COREMLTOOLS,
    rules=("numpy",),
    ops="select",
    condition="cond has a dim that a and b do not (cond (2,3) with a (3,) and b (3,)), or a dim that does not "
              "broadcast with theirs (cond (4,) with a (3,))",
    behaviour="select's type_inference broadcasts a with b and never reads cond's shape: the output is typed (3,) "
              "for cond (2,3), and a cond of (4,) with a (3,) is accepted",
    spec="select's documentation (iOS15/control_flow.py): the shapes of cond, a and b must be broadcastable; the "
         "return shape is based on broadcast rules from cond, a, b",
    check=_select_cond,
    only_ops=("select",),
)


DEVIATIONS: tuple[Deviation, ...] = (
    COREML_MIL_RANK,
    COREML_SELECT_COND,
)

#: The enum of this framework's runtimes: a record is this framework's when its runtime is a member.
RUNTIME = CoreMLRuntime
