"""PyTorch's broadcasting, op by op: eager binary ops, in-place ops, ``where``, ``expand``.

Sources (pytorch/pytorch): ``aten/src/ATen/ExpandUtils.cpp`` (``infer_size``: two shapes
right-aligned, each pair of dims equal or one of them 1, "The size of tensor a (3) must match
the size of tensor b (4) at non-singleton dimension 1"; ``inferExpandGeometry``: ``expand``),
``aten/src/ATen/TensorIterator.cpp`` (``compute_shape``: every input of an op broadcast
together; an output given or written in place is not resized: "output with shape [2, 1]
doesn't match the broadcast shape [2, 3]") and ``docs/source/notes/broadcasting.rst`` ("In-place
semantics": an in-place op may not change the shape of ``self``).

===================  ==================  ====================================================
ops                  rule                inputs (torch's names)
===================  ==================  ====================================================
add ... logical_xor  ``numpy``           ``(input, other)``; 0-d tensors and 0-size dims as numpy
add_ ... atan2_      ``unidirectional``  ``(self, other)``: ``other`` is broadcast to ``self``,
                                         never ``self`` to the result
where                ``numpy``           ``(condition, input, other)``
expand               ``unidirectional``  ``(self, size)``: ``self`` broadcast to ``size``; a
                                         -1 in ``size`` keeps ``self``'s dim there
broadcast_to         ``unidirectional``  ``(input, shape)``, as ``expand``
broadcast_tensors    ``numpy``           any number of tensors
===================  ==================  ====================================================

``plan("expand", self, size)`` plans ``unidirectional`` on ``(size, self)`` (the target first,
as the rule takes it), with -1 in ``size`` replaced by ``self``'s dim on the same axis counted
from the right; a -1 on a new leading axis is refused, as torch refuses it ("The expanded size
of the tensor (-1) isn't allowed in a leading, non-existing dimension 0"), and so is any other
negative size (torch 2.13 takes one where the target holds a 0: deviation
``torch-expand-negative-size``).  Sizes are the values of ``size``, as for ONNX's Expand.

Each kind of op plans and runs as :mod:`bcast.frameworks._eager` says.
``run(op, *arrays)`` computes the op on numpy arrays with numpy's kernels (``div`` is
``true_divide``, ``remainder`` Python's ``%``, ``floor_divide`` ``floor``, ``maximum`` propagates
NaN: as torch's CPU kernels), broadcast by the op's plan: an in-place op writes into ``self`` and
returns it; ``expand``, ``broadcast_to`` and ``broadcast_tensors`` return read-only stride-0 views
(torch's are views too).  Types follow numpy's promotion (torch's differs for 0-d tensors and
integer ``div``; it never changes a shape).  ``out=`` must have the result's shape: torch resizes
an ``out`` of another shape (with a warning unless it is empty); a numpy array cannot be resized.

>>> import numpy as np
>>> plan("add", (2, 1, 3), (4, 1)).shape
(2, 4, 3)
>>> plan("expand", (3, 1), (2, -1, 4)).shape
(2, 3, 4)
>>> run("add_", np.zeros((2, 3), np.float32), np.float32([1, 2, 3]))
array([[1., 2., 3.],
       [1., 2., 3.]], dtype=float32)
>>> plan("add_", (2, 1), (2, 3))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bcast.core.errors.BroadcastError: unidirectional: cannot broadcast self (2,1) with other (2,3): ... 1 vs 3; ...
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
    """One op: its ``name`` (torch's), its ``kind`` (:mod:`bcast.frameworks._eager`: ``binary``,
    ``inplace``, ``where``, ``expand``, ``tensors``) and, for the element-wise ones, the numpy ``ufunc``
    that computes it as torch's CPU kernel does."""

    framework = "torch"
    inputs = {
        "binary": ("input", "other"),
        "inplace": ("self", "other"),
        "where": ("condition", "input", "other"),
        "expand": ("self", "size"),
        "tensors": ("tensors",),
    }


_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "fmod": np.fmod, "pow": np.power,
    "atan2": np.arctan2, "maximum": np.maximum, "minimum": np.minimum, "fmax": np.fmax, "fmin": np.fmin,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}
#: The in-place forms (``Tensor.add_``...): the arithmetic ops torch has one of.
_INPLACE = ("add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "atan2")

#: Every op, in the table's order: the only place that knows op names.
OPS: dict[str, Op] = {
    **{name: Op(name, "binary", ufunc) for name, ufunc in _BINARY.items()},
    **{f"{name}_": Op(f"{name}_", "inplace", _BINARY[name]) for name in _INPLACE},
    "where": Op("where", "where"),
    "expand": Op("expand", "expand"),
    "broadcast_to": Op("broadcast_to", "expand", names=("input", "shape")),
    "broadcast_tensors": Op("broadcast_tensors", "tensors"),
}


def ops() -> tuple[str, ...]:
    """The op names, as torch spells them.

    >>> ops()[:4], ops()[-4:]
    (('add', 'sub', 'mul', 'div'), ('where', 'expand', 'broadcast_to', 'broadcast_tensors'))
    """
    return tuple(OPS)


def op(name: Any) -> Op:
    """The :class:`Op` called ``name`` (torch's spelling; ``torch.`` / ``Tensor.`` in front is allowed).

    >>> op("torch.add").rule, op("Tensor.add_").rule
    ('numpy', 'unidirectional')
    """
    if isinstance(name, str):
        key = name.strip()
        for prefix in ("torch.", "Tensor."):
            key = key.removeprefix(prefix)
        if key in OPS:
            return OPS[key]
    raise InputError(f"torch: unknown op {brief(name)}; the ops are: {', '.join(OPS)}")


def plan(op_name: str, *shapes: Any) -> Plan:
    """The :class:`~bcast.core.plan.Plan` of op ``op_name`` on inputs of ``shapes`` (for ``expand`` and
    ``broadcast_to``: ``self``'s shape and the sizes, -1 allowed where torch allows it).

    >>> plan("where", (2, 1), (3,), (4, 1, 1)).shape
    (4, 2, 3)
    >>> plan("broadcast_to", (3,), (2, -1)).inputs
    ((2, 3), (3,))
    """
    return plan_op(op(op_name), shapes)


def run(op_name: str, *arrays: Any, out: Any = None) -> Any:
    """Compute op ``op_name`` on numpy arrays as torch does, broadcast by :func:`plan`.

    Binary ops take two arrays (``other`` may be a number); ``where`` a boolean ``condition`` and two
    arrays; an in-place op (``add_``...) writes into ``self`` (a writable array, never broadcast) and
    returns it; ``expand`` and ``broadcast_to`` take an array and the sizes and return a read-only view;
    ``broadcast_tensors`` returns a list of views.  ``out=`` (binary ops and ``where``): an array of the
    result's shape and dtype to write into.

    >>> import numpy as np
    >>> run("expand", np.float32([[1], [2]]), (-1, 3))
    array([[1., 1., 1.],
           [2., 2., 2.]], dtype=float32)
    >>> run("where", np.array([True, False]), np.float32([1, 2]), np.float32([[10], [20]]))
    array([[ 1., 10.],
           [ 1., 20.]], dtype=float32)
    """
    return run_op(op(op_name), arrays, out)
