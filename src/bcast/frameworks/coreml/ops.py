"""Core ML's MIL element-wise binary ops and select: numpy broadcasting, rank at most 5.

Every MIL element-wise binary op (``coremltools/converters/mil/mil/ops/defs/iOS15/elementwise_binary.py``:
add, sub, mul, real_div, floor_div, mod, pow, maximum, minimum, the comparisons and the logical ops)
types its output by ``infer_type_with_broadcast``, which calls ``broadcast_shapes``
(``coremltools/converters/mil/mil/ops/defs/_utils.py``): shapes right-aligned, missing dims 1, per
axis equal dims kept, a 1 stretched, anything else "Incompatible dim"; a scalar takes the other's
shape.  That is the ``numpy`` rule (:mod:`bcast.rules.numpy`).  ``select`` documents that ``cond``,
``a`` and ``b`` broadcast together (``iOS15/control_flow.py``): ``numpy`` over the three.

Core ML holds tensors of rank at most 5: the converter refuses a program with a larger one ("Core ML
only supports tensors with rank <= 5", ``Program._check_invalid_tensor_rank`` in
``coremltools/converters/mil/mil/program.py``), so the rule's ``max_rank`` is 5.  The MIL builder's
own type inference does not check it, nor does select's look at ``cond`` (records
``coreml-mil-rank``, ``coreml-select-cond``).

Values are not computed here: the Core ML runtime runs only on macOS (``MLModel.predict``), so
nothing could prove them on this machine; :func:`run` says so.  :func:`plan` is proven against
coremltools' MIL type inference (``tests/frameworks/test_coreml_rules.py``).

>>> plan("add", (8, 1, 6, 1), (7, 1, 5)).shape
(8, 7, 6, 5)
>>> plan("add", (1, 1, 1, 1, 1, 2), (2,))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: numpy: cannot broadcast A (1,1,1,1,1,2) with B (2,); A has rank 6, more than max_rank 5 ...
"""  # noqa: E501 - a doctest's message is one line

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core._format import brief
from ...core.errors import InputError
from ...core.plan import Plan
from ...rules import infer
from .._op import Op as _Op

__all__ = ["MAX_RANK", "OPS", "Op", "op", "ops", "plan", "run"]

#: The largest rank Core ML holds (program.py, ``_check_invalid_tensor_rank``).
MAX_RANK = 5


@dataclass(frozen=True)
class Op(_Op):
    """One MIL op: its name (MIL's, as ``mb.<name>``), its input names, and the types it takes
    (``types``: MIL's type domain ``T``) and gives (``out``: ``"T"`` or ``"bool"``)."""

    inputs: tuple[str, ...] = ("x", "y")
    types: tuple[str, ...] = ("fp16", "fp32", "int32")
    out: str = "T"

    framework = "coreml"

    def input_names(self, n: int) -> tuple[str, ...]:
        return self.inputs[:n]


_NUMERIC = ("add", "sub", "mul", "real_div", "floor_div", "mod", "pow", "maximum", "minimum")
_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
_LOGICAL = ("logical_and", "logical_or", "logical_xor")

#: Every op: MIL's element-wise binary ops (iOS15/elementwise_binary.py), then select.
OPS = (
    *(Op(name) for name in _NUMERIC),
    *(Op(name, out="bool") for name in _COMPARE),
    *(Op(name, types=("bool",)) for name in _LOGICAL),
    Op("select", inputs=("cond", "a", "b"), types=("fp16", "fp32", "bool", "int32")),
)
_BY_NAME = {o.name: o for o in OPS}


def ops() -> tuple[str, ...]:
    """The op names, as MIL spells them (``mb.add``).

    >>> ops()[:4], ops()[-1]
    (('add', 'sub', 'mul', 'real_div'), 'select')
    """
    return tuple(_BY_NAME)


def op(name: Any) -> Op:
    """The :class:`Op` of a MIL op name.

    >>> op("real_div").inputs
    ('x', 'y')
    """
    if isinstance(name, str) and name in _BY_NAME:
        return _BY_NAME[name]
    near = [n for n in _BY_NAME if isinstance(name, str) and n == name.strip().lower()]
    hint = f" (did you mean {near[0]}?)" if near else ""
    raise InputError(f"coreml: unknown op {brief(name)}{hint}; the ops are {', '.join(_BY_NAME)}")


_lookup = op


def plan(op_name: Any, *shapes: Any) -> Plan:
    """The Plan of MIL op ``op_name`` on inputs of ``shapes``: numpy broadcasting, rank at most 5.

    >>> plan("select", (2, 1), (3,), ()).shape
    (2, 3)
    """
    o = op(op_name)
    o.check_arity(shapes, (len(o.inputs),))
    return infer(*shapes, rule="numpy", max_rank=MAX_RANK)


def run(op: Any, *arrays: Any, **attrs: Any) -> Any:
    """Not available: Core ML computes values only on macOS (``MLModel.predict``), so bcast cannot prove
    any here.  Raises an InputError that says so; :func:`plan` gives the output shape.

    >>> run("add", 1, 2)
    Traceback (most recent call last):
    ...
    bcast.core.errors.InputError: coreml add: bcast does not compute Core ML's values (its runtime runs only on macOS: no value could be proven here); plan() gives the shape
    """  # noqa: E501 - a doctest's message is one line
    o = _lookup(op)
    raise InputError(f"{o.where}: bcast does not compute Core ML's values (its runtime runs only on macOS: "
                     "no value could be proven here); plan() gives the shape")
