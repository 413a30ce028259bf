"""TOSA's broadcasting, as its specification and MLIR's TOSA dialect define it (spec only: no TOSA
implementation runs here; nothing in this table was proven against one).

TOSA's element-wise ops take operands of **equal rank**; a dim of size 1 broadcasts ("Axis of size
1 will be broadcast, as necessary. Rank of input tensors must match", llvm-project
``mlir/include/mlir/Dialect/Tosa/IR/TosaOps.td``; every ``Tosa_ElementwiseOp`` carries the traits
``ResultsBroadcastableShape`` and ``SameOperandsAndResultRank``, ``TosaOpBase.td``; the
specification's ``broadcast_shape`` helper requires equal ranks).  That is the rule ``equal-rank``,
for the binary ops (``ADD``, ``SUB``, ``MUL``, ``POW``, ``MAXIMUM``, ``MINIMUM``, ``INTDIV``, the
shifts, the bitwise and logical ops, the comparisons ``EQUAL``, ``GREATER``, ``GREATER_EQUAL``) and
for ``SELECT(pred, on_true, on_false)``.  Every front end carries its own rank equalisation before
it emits TOSA (llvm-project PR#104501, onnx-mlir PR#2269, ``TosaMakeBroadcastable``): a numpy-style
model does not lower as it is.

Two more limits, each from the specification:

- **Levels** (``level``): level ``"8K"`` allows tensors of rank up to 6 (``MAX_RANK``; MLIR's
  ``TOSA_LEVEL_EIGHTK`` in ``mlir/Dialect/Tosa/IR/TargetEnv.h``); level ``"none"`` sets no level
  limit here (MLIR's validation still caps it at 32).
- **No 0-size dim**: TOSA 1.0 disallows tensors with a 0-size dim (the TOSA 1.0 design review, as
  discourse.llvm.org's "[RFC] Re-enable zero-sized dim tensors for some TOSA operators" records): a
  BroadcastError of kind ``unsupported``.

>>> plan("ADD", (12, 6), (1, 1)).shape  # TosaOps.td's example
(12, 6)
>>> plan("ADD", (2, 3), (3,))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: equal-rank: cannot broadcast input1 (2,3)...
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ...core._format import brief
from ...core.errors import InputError
from ...core.plan import Plan
from ...rules import infer
from .._spec import SpecOp, Table, refuse_empty, where

__all__ = ["LEVELS", "OPS", "TABLE", "ops", "plan", "run"]

#: TOSA levels: level name -> the most dims a tensor may have (None: no level limit).
LEVELS: dict[str, int | None] = {"8K": 6, "none": None}

_EMPTY = "TOSA 1.0 has no tensor with a 0-size dim"


class TosaOp(SpecOp):
    framework: ClassVar[str] = "tosa"


def _equal_rank(op: SpecOp, shapes: tuple, names: tuple, attrs: dict) -> Plan:
    refuse_empty("equal-rank", shapes, names, _EMPTY)
    most = LEVELS[attrs["level"]]
    extra: dict[str, Any] = {} if most is None else {"max_rank": most}
    return infer(*shapes, rule="equal-rank", names=names, **extra)


def _binary(name: str, kernel: Any) -> TosaOp:
    return TosaOp(name, ("input1", "input2"), _equal_rank, kernel)


def _shift_left(a, b, out=None):
    return np.left_shift(a, b, out=out)


def _shift_right(a, b, out=None):  # arithmetic for signed integers, as numpy's
    return np.right_shift(a, b, out=out)


def _intdiv(a, b, out=None):
    """INTDIV: integer division truncated toward zero (numpy's // rounds toward -inf)."""
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, b)
        result = np.where((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)), q + 1, q)
    if out is None:
        return result
    out[...] = result
    return out


#: Every op that broadcasts, by the specification's names.
OPS = (
    _binary("ADD", np.add),
    _binary("ARITHMETIC_RIGHT_SHIFT", _shift_right),
    _binary("BITWISE_AND", np.bitwise_and),
    _binary("BITWISE_OR", np.bitwise_or),
    _binary("BITWISE_XOR", np.bitwise_xor),
    _binary("INTDIV", _intdiv),
    _binary("LOGICAL_AND", np.logical_and),
    _binary("LOGICAL_LEFT_SHIFT", _shift_left),
    _binary("LOGICAL_RIGHT_SHIFT", None),
    _binary("LOGICAL_OR", np.logical_or),
    _binary("LOGICAL_XOR", np.logical_xor),
    _binary("MAXIMUM", np.maximum),
    _binary("MINIMUM", np.minimum),
    _binary("MUL", np.multiply),
    _binary("POW", np.power),
    _binary("SUB", np.subtract),
    _binary("EQUAL", np.equal),
    _binary("GREATER", np.greater),
    _binary("GREATER_EQUAL", np.greater_equal),
    TosaOp("SELECT", ("input1", "input2", "input3"), _equal_rank, where),
)

TABLE = Table("tosa", OPS)


def _level(level: object) -> dict:
    if not isinstance(level, str) or level not in LEVELS:
        raise InputError(f"tosa: level must be one of {', '.join(LEVELS)}; got {brief(level)}")
    return {"level": level}


def ops() -> tuple[str, ...]:
    """The op names, as the TOSA specification writes them.

    >>> ops()[:2], ops()[-1]
    (('ADD', 'ARITHMETIC_RIGHT_SHIFT'), 'SELECT')
    """
    return TABLE.ops()


def plan(op: str, *shapes: Any, level: str = "8K") -> Plan:
    """The Plan of ``op`` on operands of these shapes, at TOSA level ``level`` (``"8K"``: rank <= 6).

    >>> plan("SELECT", (1, 3), (2, 1), (2, 3)).shape
    (2, 3)
    >>> plan("ADD", (1,) * 7, (1,) * 7, level="none").shape
    (1, 1, 1, 1, 1, 1, 1)
    """
    return TABLE.plan(op, shapes, _level(level))


def run(op: str, *arrays: Any, level: str = "8K", out: Any = None) -> Any:
    """``op`` on numpy arrays: the plan's views and numpy's element function (no TOSA implementation
    runs here; ``LOGICAL_RIGHT_SHIFT`` is planned, not computed).

    >>> run("ADD", np.ones((2, 1)), np.arange(3.0).reshape(1, 3))
    array([[1., 2., 3.],
           [1., 2., 3.]])
    """
    return TABLE.run(op, arrays, _level(level), out=out)
