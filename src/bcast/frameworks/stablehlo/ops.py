"""StableHLO's ops that meet shapes, on numpy arrays: ``broadcast_in_dim``, the element-wise
ops (no implicit broadcasting), ``select``, and CHLO's ``broadcast_*`` ops.

The spec is openxla/stablehlo ``docs/spec.md``; its verifier is
``stablehlo/dialect/TypeInference.cpp``.  The rules are the spec's.  Of the ops, only
``broadcast_in_dim`` runs here for real: jax lowers ``lax.broadcast_in_dim`` to it unchanged
(transposing dims too) and XLA runs it (tests/frameworks/test_jax_run.py); the rest is spec only.

- ``broadcast_in_dim`` (spec "broadcast_in_dim", C2-C5) is the ``explicit`` rule with
  ``transpose=1``: ``broadcast_dimensions`` holds one output axis per operand axis (C2), each an
  axis of the result (C3), unique (C4) but in any order -- a transposing broadcast -- and each
  operand dim is 1 or the result dim it lands on (C5).  Its "shapes" are the operand's and the
  result's (the result type); ``run`` transposes the operand first where the map is not increasing.
- The element-wise ops (``add`` ... ``xor``: spec "add" C1, and the same constraint on each) take
  operands of one type: no implicit broadcasting at all, the ``none`` rule.
- ``select`` (spec "select" C1-C2): ``on_true`` and ``on_false`` of one type, ``pred`` of their
  shape or rank 0 (a rank-0 ``pred`` picks one of the two whole tensors: numpy's rule then).
- CHLO's ``chlo.broadcast_*`` ops (stablehlo ``stablehlo/dialect/ChloOps.td``) broadcast
  implicitly: numpy's rule (the lower rank padded with leading 1s, "numpy-style prefix padding").
  Their ``broadcast_dimensions`` attribute (the XLA client's, for operands of different ranks)
  is not modelled: the ops here take none.

>>> plan("broadcast_in_dim", (1, 3), (2, 3, 2), broadcast_dimensions=[2, 1]).shape  # the spec's example
(2, 3, 2)
>>> import numpy as np
>>> run("broadcast_in_dim", np.int32([[1, 2, 3]]), (2, 3, 2), broadcast_dimensions=[2, 1])[0]
array([[1, 1],
       [2, 2],
       [3, 3]], dtype=int32)
>>> plan("add", (2, 3), (1, 3))
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: none: cannot broadcast lhs (2,3) with rhs (1,3): axis -2 (lhs axis 0, rhs axis 0): 2 vs 1; all shapes must be equal (no broadcasting)
"""  # noqa: E501 - a doctest's message is one line

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core._format import brief
from ...core.errors import InputError
from ...core.plan import Plan
from ...core.shapes import as_shape
from ...rules import infer
from ...run.execute import materialize, run_plan
from .._op import Op as _Op

__all__ = ["OPS", "Op", "op", "ops", "plan", "run"]

#: The element types bcast runs (numpy's names; StableHLO's i1 is bool, si32 int32, f32 float32 ...).
INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "float32", "float64")
ANY = ("bool", *INTEGERS, *FLOATS)
LOGICAL = ("bool", *INTEGERS)
ARITHMETIC = (*INTEGERS, *FLOATS)


@dataclass(frozen=True)
class Op(_Op):
    """One op: its ``name`` as the spec spells it, the rule its shapes meet by (``kind``:
    ``elementwise``, ``chlo``, ``select``, ``broadcast_in_dim``), the numpy function that
    computes it and the element types it takes (``types``; bcast runs these, the spec allows
    more: complex, the float8s, quantized types)."""

    kind: str = "elementwise"
    kernel: Callable | None = None
    types: tuple[str, ...] = ANY

    framework = "stablehlo"

    def input_names(self, n: int) -> tuple[str, ...]:
        if self.kernel is np.where:
            return ("pred", "on_true", "on_false")[:n]
        return (("operand", "result") if self.kind == "broadcast_in_dim" else ("lhs", "rhs"))[:n]

    def dtype_message(self, named: Sequence, name: str, tv: str, dtype: Any, allowed: Collection[str],
                      context: Any) -> str:
        return f"{self.where}: {name} must be one of {', '.join(allowed)} (as bcast runs it); got {dtype}"

    def dtypes_differ_message(self, first: str, first_dtype: Any, name: str, dtype: Any, tv: str,
                              context: Any) -> str:
        return (f"{self.where}: {first} and {name} must have one element type (spec C1: no implicit conversion); "
                f"got {first_dtype} and {dtype}")


def _binary(name: str, kernel: Callable, types: tuple[str, ...]) -> tuple[Op, Op]:
    """The op and its CHLO ``broadcast_`` form."""
    return Op(name, "elementwise", kernel, types), Op(f"chlo.broadcast_{name}", "chlo", kernel, types)


_BINARY = [
    _binary("add", np.add, ANY),  # i1: logical or (np.add of bools is)
    _binary("subtract", np.subtract, ARITHMETIC),
    _binary("multiply", np.multiply, ANY),  # i1: logical and
    _binary("divide", np.divide, FLOATS),  # integers: truncation, x/0 implementation-defined: not run here
    _binary("remainder", np.fmod, FLOATS),  # the sign of the dividend: C's fmod
    _binary("maximum", np.maximum, ANY),
    _binary("minimum", np.minimum, ANY),
    _binary("power", np.power, FLOATS),
    _binary("atan2", np.arctan2, FLOATS),
    _binary("and", np.bitwise_and, LOGICAL),
    _binary("or", np.bitwise_or, LOGICAL),
    _binary("xor", np.bitwise_xor, LOGICAL),
]

#: Every op, the spec's element-wise binary ops first, then select and broadcast_in_dim, then CHLO's.
OPS: tuple[Op, ...] = (
    *(o for o, _ in _BINARY),
    Op("select", "select", np.where, ANY),
    Op("broadcast_in_dim", "broadcast_in_dim"),
    *(c for _, c in _BINARY),
    Op("chlo.broadcast_select", "chlo", np.where, ANY),
)
_BY_NAME = {o.name: o for o in OPS}
assert len(_BY_NAME) == len(OPS), "op names must be unique"


def ops() -> tuple[str, ...]:
    """The op names, as the spec spells them (CHLO's with their dialect).

    >>> ops()[:3], "broadcast_in_dim" in ops()
    (('add', 'subtract', 'multiply'), True)
    """
    return tuple(o.name for o in OPS)


def op(name: Any) -> Op:
    """The :class:`Op` called ``name`` (``stablehlo.add`` is ``add``)."""
    if isinstance(name, str):
        key = name.strip()
        key = key[len("stablehlo."):] if key.startswith("stablehlo.") else key
        if key in _BY_NAME:
            return _BY_NAME[key]
    raise InputError(f"stablehlo: unknown op {brief(name)}; the ops are: {', '.join(ops())}")


def _arity(o: Op, shapes: tuple, n: int) -> None:
    if len(shapes) != n:
        raise InputError(f"{o.where}: takes {n} shapes ({', '.join(_names(o))}), got {len(shapes)}")


def _names(o: Op) -> tuple[str, ...]:
    return o.input_names(3)


def select_plan(shapes: tuple, names: tuple[str, ...]) -> Plan:
    """``select``'s plan (StableHLO's, and ``jax.lax.select``'s): ``on_true`` and ``on_false`` of one
    shape (the ``none`` rule), ``pred`` of that shape too or of rank 0 (numpy's rule broadcasts it
    then: it picks one whole tensor)."""
    pred, on_true, on_false = (as_shape(s, what=f"shape of {n}") for s, n in zip(shapes, names))
    if len(pred) == 0:
        infer(on_true, on_false, rule="none", names=names[1:])
        return infer(pred, on_true, on_false, rule="numpy", names=names)
    return infer(pred, on_true, on_false, rule="none", names=names)


def plan(op_name: str, *shapes: Any, broadcast_dimensions: Any = None) -> Plan:
    """The Plan of ``op_name`` on operands of ``shapes`` (``broadcast_in_dim``: the operand's
    shape and the result's, with ``broadcast_dimensions``; an attribute no other op takes).

    >>> plan("broadcast_in_dim", (3,), (2, 3), broadcast_dimensions=[1]).aligned_shape(0)
    (1, 3)
    >>> plan("chlo.broadcast_add", (2, 3), (3,)).shape
    (2, 3)
    """
    o = op(op_name)
    names = _names(o)
    _arity(o, shapes, len(names))
    if o.kind == "broadcast_in_dim":
        if broadcast_dimensions is None:
            raise InputError(f"{o.where}: broadcast_dimensions is required (the result axis of each operand axis)")
        return infer(*shapes, rule="explicit", names=names, axes_mapping=broadcast_dimensions, transpose=True)
    if broadcast_dimensions is not None:
        raise InputError(f"{o.where}: no attribute broadcast_dimensions (broadcast_in_dim's)")
    if o.kind == "select":
        return select_plan(shapes, names)
    return infer(*shapes, rule="numpy" if o.kind == "chlo" else "none", names=names)


def run(op_name: str, *arrays: Any, broadcast_dimensions: Any = None, out: Any = None) -> Any:
    """Compute ``op_name`` on numpy arrays as the spec defines it.

    ``broadcast_in_dim``: ``run("broadcast_in_dim", operand, result_shape, broadcast_dimensions=...)``
    returns a new array of the result shape (the operand transposed where the map is not
    increasing, then broadcast).  The other ops take their operands, of one element type (spec
    C1: StableHLO converts nothing implicitly), and compute it element-wise as numpy does; bcast runs
    ``divide``, ``remainder`` (the dividend's sign), ``power`` and ``atan2`` on floats only.

    >>> run("select", np.array(True), np.float32([1, 2]), np.float32([3, 4]))
    array([1., 2.], dtype=float32)
    """
    o = op(op_name)
    if o.kind == "broadcast_in_dim":
        if len(arrays) != 2:
            raise InputError(f"{o.where}: takes the operand and the result shape, got {len(arrays)} arguments")
        operand, result = arrays
        if not isinstance(operand, np.ndarray):
            raise InputError(f"{o.where}: operand must be a numpy array, got {type(operand).__name__}")
        p = plan(o.name, operand.shape, result, broadcast_dimensions=broadcast_dimensions)
        return materialize(operand, p, 0, out=out)
    names = _names(o)
    o.check_arity(arrays, (len(names),))
    for name, x in zip(names, arrays):
        if not isinstance(x, np.ndarray):
            raise InputError(f"{o.where}: {name} must be a numpy array, got {type(x).__name__} {brief(x)}")
    if o.kernel is np.where:
        o.check_dtypes([("pred", "P", arrays[0].dtype)], {"P": ("bool",)})
        o.check_dtypes([(n, "T", x.dtype) for n, x in zip(names[1:], arrays[1:])], {"T": o.types})
    else:
        o.check_dtypes([(n, "T", x.dtype) for n, x in zip(names, arrays)], {"T": o.types})
    p = plan(o.name, *(x.shape for x in arrays))
    assert o.kernel is not None
    with np.errstate(all="ignore"):  # IEEE values (inf, NaN), no warnings
        return run_plan(p, o.kernel, list(arrays), out=out, dtype=arrays[-1].dtype)
