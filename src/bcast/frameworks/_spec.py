"""The op tables of the frameworks bcast knows from their specifications only: no runtime of theirs
runs here (TensorRT needs an NVIDIA GPU; TOSA, WebNN and NNAPI are specifications whose
implementations live in compilers, browsers and Android drivers).

Each such framework's ``ops.py`` is a :class:`Table` of :class:`SpecOp` rows: the op's name in the
framework's spelling, its inputs' names, how it plans (a planner: the rule it broadcasts by, with the
attributes its specification fixes -- a rank limit is the rule's ``max_rank``) and the numpy kernel
that computes its values under that plan.  ``run()`` is the plan's views and that kernel: what the
specification says the op computes, not what any implementation was seen to compute (nothing was
run to prove it).  A runtime that departs from its own specification has no record here: a record
needs a proof, and a proof needs the runtime.

Refusals the specifications write outside their broadcasting rule -- a 0-size dim where a
specification admits none (TOSA 1.0, WebNN's "valid dimension"), a rank below the least an op takes
(NNAPI's "from 1") -- are the rule's :class:`~bcast.core.errors.BroadcastError` of kind
``unsupported`` or ``rank``, raised here by :func:`refuse_empty` and :func:`refuse_below_rank`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..core._format import brief
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..core.shapes import as_shape
from ..rules import infer
from ..run.execute import run_plan
from ._op import Op

__all__ = ["SpecOp", "Table", "by_rule", "fold", "mean", "prelu", "refuse_above_rank", "refuse_below_rank",
           "refuse_empty", "where"]

#: planner(op, shapes, names, attrs) -> Plan: the op's attributes (``attrs``, already checked) mapped
#: onto its rule's.
Planner = Callable[["SpecOp", tuple, tuple, dict], Plan]


def by_rule(rule: str, **rule_attrs: Any) -> Planner:
    """A planner that is ``rule`` with these attributes (``max_rank=4``); an attribute whose value is
    None is left out (the rule's default)."""
    fixed = {k: v for k, v in rule_attrs.items() if v is not None}

    def plan(op: SpecOp, shapes: tuple, names: tuple, attrs: dict) -> Plan:
        return infer(*shapes, rule=rule, names=names, **fixed)

    plan.__name__ = f"plan_{rule}"
    return plan


def refuse_empty(rule: str, shapes: Sequence[tuple], names: Sequence[str], why: str) -> None:
    """Raise ``rule``'s BroadcastError of kind ``unsupported`` naming the first input with a 0-size dim,
    for a specification that admits no such dim (``why``: which one, and where it says so)."""
    for i, shape in enumerate(shapes):
        if any(type(d) is int and d == 0 for d in shape):
            raise BroadcastError(rule, tuple(shapes), tuple(names), f"{names[i]} has a 0-size dim; {why}",
                                 kind="unsupported", operands=(i,))


def refuse_below_rank(rule: str, shapes: Sequence[tuple], names: Sequence[str], least: int, why: str) -> None:
    """Raise ``rule``'s BroadcastError of kind ``rank`` naming the first input of rank below ``least``."""
    for i, shape in enumerate(shapes):
        if len(shape) < least:
            raise BroadcastError(rule, tuple(shapes), tuple(names),
                                 f"{names[i]} has rank {len(shape)}; {why}", kind="rank", operands=(i,))


def refuse_above_rank(rule: str, shapes: Sequence[tuple], names: Sequence[str], most: int, why: str) -> None:
    """Raise ``rule``'s BroadcastError of kind ``rank`` naming the first input of rank above ``most``
    (for an op whose rule has no ``max_rank`` of its own)."""
    for i, shape in enumerate(shapes):
        if len(shape) > most:
            raise BroadcastError(rule, tuple(shapes), tuple(names),
                                 f"{names[i]} has rank {len(shape)}; {why}", kind="rank", operands=(i,))


@dataclass(frozen=True)
class SpecOp(Op):
    """One op of a spec-only framework: its ``name``, its inputs' names (``variadic``: one or more
    inputs, named after the first: ``data_0``, ``data_1``...), its ``planner`` and its ``kernel``
    (``kernel(*views, out=None)``, element-wise on the plan's views; None: values are not computed)."""

    inputs: tuple[str, ...] = ("A", "B")
    planner: Planner = by_rule("numpy")
    kernel: Callable | None = None
    variadic: bool = False

    framework: ClassVar[str] = ""

    def input_names(self, n: int) -> tuple[str, ...]:
        if self.variadic:
            return tuple(f"{self.inputs[0]}_{i}" for i in range(n))
        return self.inputs[:n]

    def arity(self) -> range:
        return range(1, 2**31) if self.variadic else range(len(self.inputs), len(self.inputs) + 1)

    def arity_message(self, inputs: Sequence, allowed: Any) -> str:
        if self.variadic:
            return f"{self.where}: takes 1 or more inputs ({self.inputs[0]}_0, ...), got {len(inputs)}"
        n = len(self.inputs)
        return f"{self.where}: takes {n} input{'s' * (n != 1)} ({', '.join(self.inputs)}), got {len(inputs)}"


class Table:
    """A spec-only framework's op table: its ops by name, planned and run alike.

    >>> from bcast.frameworks.webnn.ops import TABLE
    >>> TABLE.plan("add", ((2, 3), (3,)), {}).shape
    (2, 3)
    """

    def __init__(self, framework: str, rows: Sequence[SpecOp]) -> None:
        self.framework = framework
        self.rows = {r.name: r for r in rows}
        assert len(self.rows) == len(rows), "op names must be unique"

    def ops(self) -> tuple[str, ...]:
        return tuple(self.rows)

    def op(self, name: object) -> SpecOp:
        found = self.rows.get(name) if isinstance(name, str) else None
        if found is None:
            raise InputError(f"{self.framework}: unknown op {brief(name)}; the ops are: {', '.join(self.rows)}")
        return found

    def plan(self, name: object, shapes: Sequence[Any], attrs: dict) -> Plan:
        """The Plan of op ``name`` on ``shapes`` (each anything :func:`~bcast.core.shapes.as_shape` takes)."""
        op = self.op(name)
        op.check_arity(list(shapes), op.arity())
        checked = tuple(as_shape(s, what=f"{op.where}: shape of input {i}") for i, s in enumerate(shapes))
        return op.planner(op, checked, op.input_names(len(checked)), attrs)

    def run(self, name: object, arrays: Sequence[Any], attrs: dict, out: Any = None) -> Any:
        """Op ``name`` computed on numpy arrays under its plan, with its specification's element function."""
        op = self.op(name)
        op.check_arity(list(arrays), op.arity())
        xs = []
        for i, x in enumerate(arrays):
            if not isinstance(x, np.ndarray):
                raise InputError(f"{op.where}: input {op.input_names(len(arrays))[i]} must be a numpy array; "
                                 f"got {type(x).__name__} {brief(x)}")
            xs.append(x)
        if op.kernel is None:
            raise InputError(f"{op.where}: bcast computes no values for it (plan() gives its shape)")
        p = self.plan(op.name, [x.shape for x in xs], attrs)
        return run_plan(p, op.kernel, xs, out=out)


# --------------------------------------------------------------------------- kernels shared by the tables


def where(cond, a, b, out=None):
    """Select: ``a`` where ``cond`` is true, else ``b`` (numpy.where, with out=)."""
    result = np.where(cond.astype(bool, copy=False), a, b)
    if out is None:
        return result
    out[...] = result
    return out


def prelu(x, slope, out=None):
    """PReLU: ``x`` where ``x >= 0``, else ``slope * x``."""
    result = np.where(x < 0, x * slope, x)
    if out is None:
        return result
    out[...] = result
    return out


def fold(ufunc: Callable) -> Callable:
    """``ufunc`` folded over one or more inputs (ONNX Max, Min as the TensorRT parser builds them)."""

    def folded(*xs, out=None):
        result = np.array(xs[0], copy=True)
        for x in xs[1:]:
            result = ufunc(result, x)
        if out is None:
            return result
        out[...] = result
        return out

    folded.__name__ = getattr(ufunc, "__name__", "fold")
    return folded


def mean(*xs, out=None):
    """The mean of the inputs, element-wise (their sum, divided by how many)."""
    result = fold(np.add)(*xs) / len(xs)
    if out is None:
        return result
    out[...] = result
    return out
