"""PaddlePaddle's broadcasting, op by op: the 2.x/3.x API (numpy's rule) and the legacy ``elementwise_*``
ops with ``axis`` (the ``paddle`` rule).

Sources (PaddlePaddle/Paddle): ``paddle/phi/infermeta/binary.cc`` (``ElementwiseRawInferMeta``: the
``axis`` form, :mod:`bcast.rules.paddle`; ``ElementwiseInferMeta`` is it with ``axis=-1``, numpy's right
alignment), ``paddle/phi/kernels/funcs/common_shape.h`` (``GetBroadcastDimsArrays``: each pair of dims
equal or one of them 1, 0 with 1 is 0), ``python/paddle/tensor/math.py`` (an in-place op checks
``broadcast_shape(x.shape, y.shape) == x.shape``: "The shape of broadcast output [2, 3] is different from
that of inplace tensor [2, 1] in the Inplace operation."), ``paddle/phi/infermeta/unary.cc``
(``ExpandInferMeta``: -1 keeps a dim).

=======================  ==================  ==============================================
ops                      rule                inputs (Paddle's names)
=======================  ==================  ==============================================
add ... logical_xor      ``numpy``           ``(x, y)``
add_ ... remainder_      ``unidirectional``  ``(x, y)``: ``y`` is broadcast to ``x``, never
                                             ``x`` to the result
where                    ``numpy``           ``(condition, x, y)``
expand, broadcast_to     ``unidirectional``  ``(x, shape)``: ``x`` broadcast to ``shape``;
                                             -1 keeps ``x``'s dim on that axis
broadcast_tensors        ``numpy``           any number of tensors
elementwise_add ...      ``paddle``          ``(X, Y)`` and ``axis`` (default -1): the
                                             legacy operators (Paddle 1.x's
                                             ``fluid.layers.elementwise_add(x, y, axis)``),
                                             which Paddle 3.x still runs as ops
=======================  ==================  ==============================================

Each kind of op plans and runs as :mod:`bcast.frameworks._eager` says; ``axis`` is taken by the
``elementwise_*`` ops only.

>>> plan("add", (2, 1, 3), (4, 1)).shape
(2, 4, 3)
>>> plan("elementwise_add", (2, 3, 4, 5), (3, 4), axis=1).shape
(2, 3, 4, 5)
>>> plan("add", (2, 3, 4, 5), (3, 4))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: numpy: cannot broadcast x (2,3,4,5) with y (3,4): axis -1 ...: 5 vs 4; ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core._format import brief
from ...core.errors import InputError
from ...core.plan import Plan
from .._eager import EagerOp, plan_op, run_op

__all__ = ["OPS", "Op", "op", "ops", "plan", "run"]


@dataclass(frozen=True)
class Op(EagerOp):
    """One op: its ``name`` (Paddle's), its ``kind`` (:mod:`bcast.frameworks._eager`) and, for the
    element-wise ones, the numpy ``ufunc`` that computes it as Paddle's CPU kernel does."""

    framework = "paddle"
    inputs = {
        "binary": ("x", "y"),
        "inplace": ("x", "y"),
        "where": ("condition", "x", "y"),
        "expand": ("x", "shape"),
        "tensors": ("input",),
        "axis": ("X", "Y"),
    }


_BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.true_divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum, "fmax": np.fmax, "fmin": np.fmin,
    "equal": np.equal, "not_equal": np.not_equal, "less_than": np.less, "less_equal": np.less_equal,
    "greater_than": np.greater, "greater_equal": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}
#: The in-place forms (``paddle.add_``...) that check their broadcast against ``x``.
_INPLACE = ("add", "subtract", "multiply", "divide", "floor_divide", "remainder")
#: The legacy operators with ``axis``: their op type -> the ufunc.
_LEGACY = {
    "elementwise_add": np.add, "elementwise_sub": np.subtract, "elementwise_mul": np.multiply,
    "elementwise_div": np.true_divide, "elementwise_max": np.maximum, "elementwise_min": np.minimum,
    "elementwise_pow": np.power, "elementwise_floordiv": np.floor_divide, "elementwise_mod": np.remainder,
}

#: Paddle's rank limits: a tensor has 9 dims at most (phi's DDim); expand and broadcast_to take 8 sizes
#: at most (ExpandInferMeta's MAX_RANK_SUPPORTED); broadcast_tensors broadcasts to rank 6 at most (its kernel).
TENSOR_RANK, EXPAND_RANK, BROADCAST_TENSORS_RANK = 9, 8, 6

#: Every op, in the table's order: the only place that knows op names.
OPS: dict[str, Op] = {
    **{name: Op(name, "binary", ufunc, max_rank=TENSOR_RANK) for name, ufunc in _BINARY.items()},
    **{f"{name}_": Op(f"{name}_", "inplace", _BINARY[name], max_rank=TENSOR_RANK) for name in _INPLACE},
    "where": Op("where", "where", max_rank=TENSOR_RANK),
    "expand": Op("expand", "expand", max_rank=EXPAND_RANK),
    "broadcast_to": Op("broadcast_to", "expand", max_rank=EXPAND_RANK),
    "broadcast_tensors": Op("broadcast_tensors", "tensors", max_rank=BROADCAST_TENSORS_RANK),
    **{name: Op(name, "axis", ufunc, axis_rule="paddle", max_rank=TENSOR_RANK) for name, ufunc in _LEGACY.items()},
}


def ops() -> tuple[str, ...]:
    """The op names, as Paddle spells them.

    >>> ops()[:4], ops()[-2:]
    (('add', 'subtract', 'multiply', 'divide'), ('elementwise_floordiv', 'elementwise_mod'))
    """
    return tuple(OPS)


def op(name: Any) -> Op:
    """The :class:`Op` called ``name`` (Paddle's spelling; ``paddle.`` / ``Tensor.`` in front is allowed).

    >>> op("paddle.add").rule, op("add_").rule, op("elementwise_add").rule
    ('numpy', 'unidirectional', 'paddle')
    """
    if isinstance(name, str):
        key = name.strip()
        for prefix in ("paddle.", "Tensor."):
            key = key.removeprefix(prefix)
        if key in OPS:
            return OPS[key]
    raise InputError(f"paddle: unknown op {brief(name)}; the ops are: {', '.join(OPS)}")


def _axis(o: Op, axis: Any) -> dict:
    if o.kind == "axis":
        return {"axis": -1 if axis is None else axis}
    if axis is not None:
        raise InputError(f"paddle {o.name}: takes no axis (Paddle 2.x dropped it; the legacy elementwise_* ops "
                         "have it)")
    return {}


def plan(op_name: str, *shapes: Any, axis: Any = None) -> Plan:
    """The :class:`~bcast.core.plan.Plan` of op ``op_name`` on inputs of ``shapes`` (for ``expand`` and
    ``broadcast_to``: ``x``'s shape and the sizes, -1 allowed where Paddle allows it); ``axis`` for the
    ``elementwise_*`` ops (default -1).

    >>> plan("elementwise_add", (3, 4), (2, 3, 4, 5), axis=1).shape  # X may be the smaller one
    (2, 3, 4, 5)
    >>> plan("expand", (3, 1), (2, -1, 4)).shape
    (2, 3, 4)
    """
    o = op(op_name)
    return plan_op(o, shapes, **_axis(o, axis))


def run(op_name: str, *arrays: Any, axis: Any = None, out: Any = None) -> Any:
    """Compute op ``op_name`` on numpy arrays as Paddle does, broadcast by :func:`plan`.

    Binary ops take two arrays (``y`` may be a number); ``where`` a boolean ``condition`` and two arrays;
    an in-place op (``add_``...) writes into ``x`` (a writable array, never broadcast) and returns it;
    ``expand`` and ``broadcast_to`` take an array and the sizes and return a read-only view;
    ``broadcast_tensors`` returns a list of views; the ``elementwise_*`` ops take ``axis``.

    >>> import numpy as np
    >>> run("elementwise_add", np.zeros((2, 3), np.float32), np.float32([1, 2]), axis=0)
    array([[1., 1., 1.],
           [2., 2., 2.]], dtype=float32)
    """
    o = op(op_name)
    return run_op(o, arrays, out, **_axis(o, axis))
