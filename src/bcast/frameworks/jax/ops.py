"""JAX's ops that meet shapes, on numpy arrays: ``jax.lax``'s binary ops, ``select`` and
``broadcast_in_dim``, ``jax.numpy``'s binary ops, ``where`` and ``broadcast_to``.

Each plans by the rule jax's own code applies (jax ``jax/_src/lax/lax.py``,
``jax/_src/numpy/util.py``), proven against the jax CPU wheel
(``tests/frameworks/test_jax_run.py``):

- ``lax`` binary ops (``lax.add`` ...): ``_broadcasting_shape_rule`` in ``lax.py`` leaves
  rank-0 operands out, then requires equal ranks ("arrays must have same number of
  dimensions") with each dim equal or 1: the ``equal-rank`` rule, and numpy's where one
  operand is rank 0 (a rank-0 operand broadcasts to anything, as numpy's does).
- ``lax.select``: ``pred`` of ``on_true``'s shape or rank 0; ``on_true`` and ``on_false`` of
  one shape (``_select_shape_rule``): as StableHLO's ``select``.
- ``lax.broadcast_in_dim``: StableHLO's ``broadcast_in_dim``, the ``explicit`` rule with
  ``transpose=1``: ``_broadcast_in_dim_shape_rule`` asks ``broadcast_dimensions`` to be axes of the
  result, one per operand axis, without duplicates, in any order (older jax releases asked them
  strictly increasing; 0.10.2 lowers a transposing one to ``stablehlo.broadcast_in_dim`` as it is).
- ``jnp`` binary ops: numpy's rule, after ``promote_shapes`` in ``jax/_src/numpy/util.py``, which
  pads the lower ranks with leading 1s under ``jax_numpy_rank_promotion="allow"`` (the default),
  does so with a warning under ``"warn"``, and under ``"raise"`` refuses operands of different
  ranks unless they are rank 0: ``lax``'s rule then.  The ``rank_promotion`` attribute of these
  ops is that setting ("Control NumPy-style automatic rank promotion broadcasting",
  ``jax/_src/config.py``).  ``jnp.where`` takes it too, as the setting says; jax's own
  ``where`` (``util._where``) broadcasts by numpy's rule whatever the setting (record
  ``jax-where-ignores-rank-promotion``).
- ``jnp.broadcast_to(array, shape)``: numpy's ``broadcast_to``, the ``unidirectional`` rule
  (``shape`` is A, the array B); rank promotion does not apply to it.

``run`` computes an op on numpy arrays as jax does with ``jax_enable_x64`` off (its default):
inputs of one 32-bit (or narrower) dtype; a 64-bit array is refused, as jax would compute it in
32 bits.  Inputs of different dtypes are refused too: ``lax`` refuses them itself, and
``jnp``'s type promotion is jax's own lattice, not modelled here.

>>> plan("lax.add", (2, 3), (1, 3)).shape
(2, 3)
>>> plan("lax.add", (2, 3), (3,))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: equal-rank: cannot broadcast x (2,3) with y (3,)...
>>> plan("jnp.add", (2, 3), (3,)).shape, plan("jnp.add", (2, 3), (), rank_promotion="raise").shape
((2, 3), (2, 3))
"""

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
from ..stablehlo.ops import select_plan

__all__ = ["OPS", "Op", "RANK_PROMOTION", "lax_plan", "op", "ops", "plan", "run"]

#: The op that stands for jax in plain ``bcast compare``: the one users write.
COMPARE_OP = "jnp.add"

#: ``jax_numpy_rank_promotion``'s settings (jax ``jax/_src/config.py``); ``"allow"`` is jax's default.
RANK_PROMOTION = ("allow", "warn", "raise")

#: The dtypes ``run`` takes: jax's with ``jax_enable_x64`` off (no 64-bit arrays).
INTEGERS = ("int8", "int16", "int32", "uint8", "uint16", "uint32")
FLOATS = ("float16", "float32")
ARITHMETIC = (*INTEGERS, *FLOATS)
ANY = ("bool", *ARITHMETIC)


@dataclass(frozen=True)
class Op(_Op):
    """One op: its ``name`` as jax spells it (``lax.add``, ``jnp.add``), its ``kind`` (``lax``,
    ``jnp``, ``select``, ``where``, ``broadcast_in_dim``, ``broadcast_to``), the numpy function that
    computes it on jax's types and the dtypes bcast runs it on."""

    kind: str = "lax"
    kernel: Callable | None = None
    types: tuple[str, ...] = ARITHMETIC

    framework = "jax"

    @property
    def where(self) -> str:
        return self.name

    def input_names(self, n: int) -> tuple[str, ...]:
        if self.kind in ("select", "where"):
            return (("pred", "on_true", "on_false") if self.kind == "select" else ("condition", "x", "y"))[:n]
        if self.kind in ("broadcast_in_dim", "broadcast_to"):
            return (("operand", "shape") if self.kind == "broadcast_in_dim" else ("array", "shape"))[:n]
        return (("x", "y") if self.kind == "lax" else ("x1", "x2"))[:n]

    def dtype_message(self, named: Sequence, name: str, tv: str, dtype: Any, allowed: Collection[str],
                      context: Any) -> str:
        x64 = " (jax computes 64-bit arrays in 32 bits unless jax_enable_x64 is set)" if "64" in str(dtype) else ""
        return f"{self.where}: {name} must be one of {', '.join(allowed)}; got {dtype}{x64}"

    def dtypes_differ_message(self, first: str, first_dtype: Any, name: str, dtype: Any, tv: str,
                              context: Any) -> str:
        why = ("lax ops require arguments of the same dtype" if self.name.startswith("lax.")
               else "bcast runs jnp ops on one dtype: jax's type promotion is not modelled")
        return f"{self.where}: {first} and {name} must have one dtype ({why}); got {first_dtype} and {dtype}"


def _pair(name: str, jnp_name: str, kernel: Callable, types: tuple[str, ...]) -> tuple[Op, Op]:
    return Op(f"lax.{name}", "lax", kernel, types), Op(f"jnp.{jnp_name}", "jnp", kernel, types)


_BINARY = [
    _pair("add", "add", np.add, ARITHMETIC),
    _pair("sub", "subtract", np.subtract, ARITHMETIC),
    _pair("mul", "multiply", np.multiply, ARITHMETIC),
    _pair("div", "divide", np.divide, FLOATS),  # integers: lax truncates, jnp gives floats; not run here
    _pair("max", "maximum", np.maximum, ARITHMETIC),
    _pair("min", "minimum", np.minimum, ARITHMETIC),
    _pair("pow", "power", np.power, FLOATS),
    _pair("atan2", "arctan2", np.arctan2, FLOATS),
]

#: Every op: lax's binary ops, select and broadcast_in_dim, then jnp's.
OPS: tuple[Op, ...] = (
    *(o for o, _ in _BINARY),
    Op("lax.select", "select", np.where, ANY),
    Op("lax.broadcast_in_dim", "broadcast_in_dim", None, ANY),
    *(o for _, o in _BINARY),
    Op("jnp.where", "where", np.where, ANY),
    Op("jnp.broadcast_to", "broadcast_to", None, ANY),
)
_BY_NAME = {o.name: o for o in OPS}
assert len(_BY_NAME) == len(OPS), "op names must be unique"


def ops() -> tuple[str, ...]:
    """The op names, as jax spells them (``jax.lax.add`` is ``lax.add``, ``jax.numpy.add`` ``jnp.add``).

    >>> ops()[:2], "jnp.where" in ops()
    (('lax.add', 'lax.sub'), True)
    """
    return tuple(o.name for o in OPS)


def op(name: Any) -> Op:
    """The :class:`Op` called ``name`` (``jax.lax.add`` and ``jax.numpy.add`` too)."""
    if isinstance(name, str):
        key = name.strip()
        key = key.replace("jax.numpy.", "jnp.", 1).replace("jax.lax.", "lax.", 1)
        if key in _BY_NAME:
            return _BY_NAME[key]
    raise InputError(f"jax: unknown op {brief(name)}; the ops are: {', '.join(ops())}")


def lax_plan(*shapes: Any, names: Sequence[str]) -> Plan:
    """The plan of a ``lax`` binary op (``lax.py``'s ``_broadcasting_shape_rule``): rank-0 operands
    left out, the others of one rank, each dim equal or 1 (``equal-rank``); numpy's rule where an
    operand is rank 0, which broadcasts it to the others.

    >>> lax_plan((), (2, 3), names=("x", "y")).rule, lax_plan((1, 3), (2, 1), names=("x", "y")).rule
    ('numpy', 'equal-rank')
    """
    checked = [as_shape(s, what=f"shape of {n}") for s, n in zip(shapes, names)]
    ranked = [(s, n) for s, n in zip(checked, names) if len(s)]
    if len(ranked) == len(checked):
        return infer(*checked, rule="equal-rank", names=names)
    if len({len(s) for s, _ in ranked}) > 1:  # the error among the operands of a rank
        infer(*(s for s, _ in ranked), rule="equal-rank", names=[n for _, n in ranked])
    return infer(*checked, rule="numpy", names=names)


def _promotion(o: Op, value: Any) -> str:
    if isinstance(value, str) and value.strip().lower() in RANK_PROMOTION:
        return value.strip().lower()
    raise InputError(f"{o.where}: rank_promotion must be one of {', '.join(RANK_PROMOTION)} "
                     f"(jax_numpy_rank_promotion); got {brief(value)}")


def plan(op_name: str, *shapes: Any, broadcast_dimensions: Any = None, rank_promotion: Any = None) -> Plan:
    """The Plan of ``op_name`` on operands of ``shapes``.

    ``broadcast_dimensions``: ``lax.broadcast_in_dim``'s (required there; its shapes are the
    operand's and the result's).  ``rank_promotion``: ``jax_numpy_rank_promotion`` for the ``jnp``
    binary ops and ``jnp.where`` (``"allow"``, jax's default; ``"warn"``; ``"raise"``).

    >>> plan("jnp.add", (2, 3), (3,), rank_promotion="raise")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bcast.core.errors.BroadcastError: equal-rank: cannot broadcast x1 (2,3) with x2 (3,)...
    >>> plan("lax.broadcast_in_dim", (3,), (2, 3), broadcast_dimensions=[1]).shape
    (2, 3)
    """
    o = op(op_name)
    n = 3 if o.kind in ("select", "where") else 2
    if len(shapes) != n:
        raise InputError(f"{o.where}: takes {n} shapes ({', '.join(o.input_names(n))}), got {len(shapes)}")
    names = o.input_names(n)
    if broadcast_dimensions is not None and o.kind != "broadcast_in_dim":
        raise InputError(f"{o.where}: no attribute broadcast_dimensions (lax.broadcast_in_dim's)")
    if rank_promotion is not None and o.kind not in ("jnp", "where"):
        raise InputError(f"{o.where}: no attribute rank_promotion (the jnp binary ops' and jnp.where's)")
    if o.kind == "broadcast_in_dim":
        if broadcast_dimensions is None:
            raise InputError(f"{o.where}: broadcast_dimensions is required (the output axis of each operand axis)")
        return infer(*shapes, rule="explicit", names=("operand", "result"), axes_mapping=broadcast_dimensions,
                     transpose=True)
    if o.kind == "broadcast_to":
        array, shape = shapes
        return infer(shape, array, rule="unidirectional", names=("shape", "array"))
    if o.kind == "select":
        return select_plan(shapes, names)
    if o.kind == "lax":
        return lax_plan(*shapes, names=names)
    if _promotion(o, rank_promotion or "allow") == "raise":
        return lax_plan(*shapes, names=names)
    return infer(*shapes, rule="numpy", names=names)


def run(op_name: str, *arrays: Any, broadcast_dimensions: Any = None, rank_promotion: Any = None,
        out: Any = None) -> Any:
    """Compute ``op_name`` on numpy arrays as jax does (``jax_enable_x64`` off).

    ``lax.broadcast_in_dim``: ``run("lax.broadcast_in_dim", operand, shape, broadcast_dimensions=...)``;
    ``jnp.broadcast_to``: ``run("jnp.broadcast_to", array, shape)``: a new array of the shape.  The
    other ops take their operands: numpy arrays of one dtype (``bool``, ints and floats of 32 bits
    or fewer; ``div``/``divide``, ``pow``/``power`` and ``atan2``/``arctan2`` on floats only).

    >>> run("lax.add", np.float32([[1], [2]]), np.float32([[10, 20]]))
    array([[11., 21.],
           [12., 22.]], dtype=float32)
    """
    o = op(op_name)
    if o.kind in ("broadcast_in_dim", "broadcast_to"):
        if len(arrays) != 2:
            raise InputError(f"{o.where}: takes the array and the shape, got {len(arrays)} arguments")
        x, shape = arrays
        if not isinstance(x, np.ndarray):
            raise InputError(f"{o.where}: {o.input_names(1)[0]} must be a numpy array, got {type(x).__name__}")
        p = plan(o.name, x.shape, shape, broadcast_dimensions=broadcast_dimensions, rank_promotion=rank_promotion)
        return materialize(x, p, 0 if o.kind == "broadcast_in_dim" else 1, out=out)
    names = o.input_names(3)
    o.check_arity(arrays, (3,) if o.kind in ("select", "where") else (2,))
    for name, x in zip(names, arrays):
        if not isinstance(x, np.ndarray):
            raise InputError(f"{o.where}: {name} must be a numpy array, got {type(x).__name__} {brief(x)}")
    if o.kernel is np.where:
        o.check_dtypes([(names[0], "P", arrays[0].dtype)], {"P": ("bool",)})
        o.check_dtypes([(n, "T", x.dtype) for n, x in zip(names[1:], arrays[1:])], {"T": o.types})
    else:
        o.check_dtypes([(n, "T", x.dtype) for n, x in zip(names, arrays)], {"T": o.types})
    p = plan(o.name, *(x.shape for x in arrays), rank_promotion=rank_promotion)
    assert o.kernel is not None
    with np.errstate(all="ignore"):  # IEEE values (inf, NaN), no warnings, as XLA computes them
        return run_plan(p, o.kernel, list(arrays), out=out, dtype=arrays[-1].dtype)
