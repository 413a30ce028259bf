"""Android NNAPI's broadcasting, as ``NeuralNetworks.h`` documents each operation (spec only: no NNAPI
driver runs here; nothing in this table was proven against one).

Every NNAPI operation that broadcasts uses numpy's rule ("Two dimensions are compatible when: 1. they
are equal, or 2. one of them is 1 ... It starts with the trailing dimensions, and works its way
forward", the ``ANEURALNETWORKS_ADD`` comment), bcast's ``numpy``; what differs is the rank each
takes ("Supported tensor rank"):

- ``ADD``, ``SUB``, ``MUL``, ``DIV``: "up to 4" -- ``numpy`` with ``max_rank=4`` (the limit the
  TFLite NNAPI delegate checks before it delegates them, tensorflow PR#58978).  Since feature level 3 (API level 29) a
  0-size dim is allowed: "Zero dimension is only compatible with 0 or 1" (numpy's rule for 0).
- ``MAXIMUM``, ``MINIMUM``, ``POW``, ``PRELU``, the comparisons (``EQUAL``, ``NOT_EQUAL``,
  ``GREATER``, ``GREATER_EQUAL``, ``LESS``, ``LESS_EQUAL``) and ``LOGICAL_AND``, ``LOGICAL_OR``:
  "from 1" -- no upper limit, but no rank-0 tensor: a BroadcastError of kind ``rank``.  ``PRELU``
  broadcasts its alpha both ways (its comment's example: input {4, 1, 2} with alpha {5, 4, 3, 1}
  gives {5, 4, 3, 2}).

``SELECT`` (feature level 3) does not broadcast: "input1: An input tensor of the same shape as
input0", "input2: An input tensor of the same shape and type as input1", rank "from 1" -- bcast's
``none`` rule, rank 1 or more (the CPU reference, ``common/cpu_operations/Select.cpp``, checks the
same in ``prepare``: "Condition and input tensor dimensions are not equal", ``SameShape(input1,
input2)``).  No feature level added broadcasting to it (through 8, the header's last).

``DIV`` of ``TENSOR_INT32`` (feature level 4) is floor division ("``//`` in Python": -5 // 2 = -3);
of floats, division.  Since 2021 the operations' comments live in ``NeuralNetworksTypes.h``, which
``NeuralNetworks.h`` includes (AOSP ``packages/modules/NeuralNetworks``, ``runtime/include``).

>>> plan("ADD", (4, 1, 2), (5, 4, 3, 1)).shape  # the ADD comment's example
(5, 4, 3, 2)
>>> plan("ADD", (1, 2, 3, 4, 5), (5,))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: numpy: cannot broadcast input0 (1,2,3,4,5)...
>>> plan("SELECT", (2, 3), (2, 3), (2, 1))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: none: cannot broadcast input0 (2,3) with input2 (2,1): ...
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ...core.plan import Plan
from ...rules import infer
from .._spec import SpecOp, Table, by_rule, prelu, refuse_below_rank, where

__all__ = ["MAX_RANK", "OPS", "TABLE", "ops", "plan", "run"]

#: "Supported tensor rank: up to 4" (ADD, SUB, MUL, DIV).
MAX_RANK = 4


class NNAPIOp(SpecOp):
    framework: ClassVar[str] = "nnapi"


_UP_TO_4 = by_rule("numpy", max_rank=MAX_RANK)


def _from_1(op: SpecOp, shapes: tuple, names: tuple, attrs: dict, rule: str = "numpy") -> Plan:
    refuse_below_rank(rule, shapes, names, 1,
                      f"NNAPI {op.name} takes tensors of rank 1 or more (NeuralNetworks.h: \"Supported tensor "
                      "rank: from 1\")")
    return infer(*shapes, rule=rule, names=names)


def _same_shape_from_1(op: SpecOp, shapes: tuple, names: tuple, attrs: dict) -> Plan:
    """SELECT: every input of one shape (``none``), rank 1 or more."""
    return _from_1(op, shapes, names, attrs, rule="none")


def _div(x, y, out=None):
    """DIV: floor division of TENSOR_INT32 ("//" in Python), else division."""
    f = np.floor_divide if np.issubdtype(x.dtype, np.integer) and np.issubdtype(y.dtype, np.integer) else np.divide
    return f(x, y, out=out)


def _op(name: str, kernel: Any, planner: Any = _from_1, inputs: tuple[str, ...] = ("input0", "input1")) -> NNAPIOp:
    return NNAPIOp(name, inputs, planner, kernel)


#: Every operation that broadcasts, by its ``ANEURALNETWORKS_`` name (without the prefix).
OPS = (
    _op("ADD", np.add, _UP_TO_4),
    _op("SUB", np.subtract, _UP_TO_4),
    _op("MUL", np.multiply, _UP_TO_4),
    _op("DIV", _div, _UP_TO_4),
    _op("MAXIMUM", np.maximum),
    _op("MINIMUM", np.minimum),
    _op("POW", np.power, inputs=("base", "exponent")),
    _op("PRELU", prelu, inputs=("input", "alpha")),
    _op("EQUAL", np.equal),
    _op("NOT_EQUAL", np.not_equal),
    _op("GREATER", np.greater),
    _op("GREATER_EQUAL", np.greater_equal),
    _op("LESS", np.less),
    _op("LESS_EQUAL", np.less_equal),
    _op("LOGICAL_AND", np.logical_and),
    _op("LOGICAL_OR", np.logical_or),
    _op("SELECT", where, _same_shape_from_1, inputs=("input0", "input1", "input2")),
)

TABLE = Table("nnapi", OPS)


def ops() -> tuple[str, ...]:
    """The operation names (``ANEURALNETWORKS_ADD`` is ``ADD``).

    >>> ops()[:4]
    ('ADD', 'SUB', 'MUL', 'DIV')
    """
    return TABLE.ops()


def plan(op: str, *shapes: Any) -> Plan:
    """The Plan of ``op`` on operands of these shapes.

    >>> plan("MAXIMUM", (1, 2, 3, 4, 5), (5,)).shape  # "from 1": no upper limit
    (1, 2, 3, 4, 5)
    """
    return TABLE.plan(op, shapes, {})


def run(op: str, *arrays: Any, out: Any = None) -> Any:
    """``op`` on numpy arrays: the plan's views and numpy's element function (no NNAPI driver runs
    here; ADD's fused activation is not modelled).

    >>> run("MUL", np.ones((2, 1)), np.arange(3.0))
    array([[0., 1., 2.],
           [0., 1., 2.]])
    """
    return TABLE.run(op, arrays, {}, out=out)
