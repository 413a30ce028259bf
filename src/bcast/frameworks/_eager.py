"""What the op tables of the eager array frameworks share (PyTorch, PaddlePaddle 2.x/3.x): ops of a few
kinds, each kind with its rule and its run on numpy arrays.

==============  ==================  ==========================================================
kind            rule                inputs, and what :func:`run` does
==============  ==================  ==========================================================
``binary``      ``numpy``           two tensors (the second may be a number): a numpy ufunc
``inplace``     ``unidirectional``  ``self`` and ``other``: the ufunc written into ``self``
                                    (never broadcast), which is returned
``where``       ``numpy``           a boolean condition and two tensors: ``numpy.where``
``expand``      ``unidirectional``  a tensor and the sizes (-1 keeps the tensor's dim on that
                                    axis): a read-only stride-0 view; planned on ``(sizes,
                                    tensor)``, the target first, as the rule takes it
``tensors``     ``numpy``           any number of tensors: a list of views
``axis``        a table's own       two tensors and ``axis`` (PaddlePaddle's legacy
                                    ``elementwise_*`` ops): the ufunc
==============  ==================  ==========================================================

Each table subclasses :class:`EagerOp` (its ``framework``, the names of each kind's inputs) and lists
its ops; :func:`plan_op` and :func:`run_op` do the rest.  Types follow numpy's promotion (the
frameworks' differ for 0-d tensors and integer division; that never changes a shape); ``out=`` must
have the result's shape (a numpy array cannot be resized, as torch resizes an ``out``).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..core._format import brief, format_shape
from ..core.errors import InputError
from ..core.plan import Plan
from ..core.shapes import as_shape, parse_shape
from ..rules import infer
from ..run.execute import MemoryBudgetError, run_plan, view
from ..run.kernel import ufunc_kernel
from ._op import Op

__all__ = ["EagerOp", "plan_op", "run_op"]

_RULES = {"binary": "numpy", "inplace": "unidirectional", "where": "numpy", "expand": "unidirectional",
          "tensors": "numpy"}


@dataclass(frozen=True)
class EagerOp(Op):
    """One op: its ``name``, its ``kind`` (above) and, for the element-wise kinds, the numpy ``ufunc``
    that computes it as the framework's CPU kernel does; ``axis_rule``: the ``axis`` kind's rule;
    ``names``: its inputs' names where they are not its kind's; ``max_rank``: the framework's limit on its
    rank (the rule's attribute)."""

    kind: str = "binary"
    ufunc: Any = None
    axis_rule: str = ""
    names: tuple[str, ...] = ()
    max_rank: int | None = None

    #: The names of each kind's inputs, in the framework's words (``tensors``: the list's name).
    inputs: ClassVar[dict[str, tuple[str, ...]]] = {}

    def input_names(self, n: int) -> tuple[str, ...]:
        if self.names:
            return self.names[:n]
        if self.kind == "tensors":
            name = self.inputs["tensors"][0]
            return tuple(f"{name}[{i}]" for i in range(n))
        return self.inputs[self.kind][:n]

    @property
    def arity(self) -> tuple[int, ...] | range:
        return range(1, 65) if self.kind == "tensors" else (len(self.inputs[self.kind]),)

    @property
    def rule(self) -> str:
        return self.axis_rule if self.kind == "axis" else _RULES[self.kind]


def _sizes(o: EagerOp, self_shape: tuple, size: Any) -> tuple:
    """``size`` (the sizes of an ``expand``) with each -1 replaced by the tensor's dim on the same axis
    counted from the right (ATen's ``inferExpandGeometry``, Paddle's ``ExpandInferMeta``); a -1 on a
    new leading axis, or any other negative size, is an InputError."""
    tensor, what = o.input_names(2)
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        size = (size,)
    if isinstance(size, str):  # the shape syntax ("2,-1"), a -1 kept
        size = parse_shape(size, minus_one=True)
    if not isinstance(size, (list, tuple)):  # what as_shape refuses
        return as_shape(size, what=f"{o.where} {what}")
    lead = len(size) - len(self_shape)
    out = []
    for i, d in enumerate(size):
        if isinstance(d, numbers.Integral) and not isinstance(d, bool) and int(d) < 0:
            if int(d) != -1:
                raise InputError(f"{o.where}: {what} {_show(size)} has a negative size {int(d)} at axis {i}: "
                                 f"only -1 (keep {tensor}'s size) may be negative")
            if i < lead:
                raise InputError(f"{o.where}: {what} {_show(size)}: -1 is not allowed at axis {i}, a leading, "
                                 f"non-existing dimension of {tensor} {format_shape(self_shape)} "
                                 "(-1 keeps an existing size)")
            d = self_shape[i - lead]
        out.append(d)
    return as_shape(tuple(out), what=f"{o.where} {what}")


def _show(size: Sequence) -> str:
    return "(" + ",".join(str(d) for d in size) + ("," if len(size) == 1 else "") + ")"


def plan_op(o: EagerOp, shapes: Sequence, **rule_attrs: Any) -> Plan:
    """The plan of op ``o`` on ``shapes`` (``expand``: the tensor's shape, then the sizes)."""
    o.check_arity(shapes, o.arity)
    names = o.input_names(len(shapes))
    if o.max_rank is not None:
        rule_attrs["max_rank"] = o.max_rank
    if o.kind == "expand":
        self_shape = as_shape(shapes[0], what=f"{o.where} {names[0]}")
        return infer(_sizes(o, self_shape, shapes[1]), self_shape, rule="unidirectional", names=names[::-1],
                     **rule_attrs)
    return infer(*shapes, rule=o.rule, names=names, **rule_attrs)


def _array(o: EagerOp, name: str, x: Any, *, scalar_ok: bool) -> Any:
    if isinstance(x, np.ndarray):
        return x
    if scalar_ok and isinstance(x, (bool, int, float, complex, np.generic)):
        return x
    raise InputError(f"{o.where}: {name} must be a numpy array (a tensor){' or a number' * scalar_ok}; "
                     f"got {type(x).__name__} {brief(x)}")


def _named(o: EagerOp, e: InputError) -> InputError:
    return e if str(e).startswith(o.where) else InputError(f"{o.where}: {e}")


def run_op(o: EagerOp, arrays: Sequence, out: Any = None, **rule_attrs: Any) -> Any:
    """Op ``o`` on numpy ``arrays`` (``expand``: an array and the sizes), broadcast by :func:`plan_op`."""
    o.check_arity(arrays, o.arity)
    names = o.input_names(len(arrays))
    if out is not None and o.kind not in ("binary", "where", "axis"):
        gives = f"it writes into {names[0]}" if o.kind == "inplace" else "it gives a view"
        raise InputError(f"{o.where}: takes no out= ({gives})")
    try:
        if o.kind == "expand":
            x = _array(o, names[0], arrays[0], scalar_ok=False)
            return view(x, plan_op(o, (x.shape, arrays[1])), 1)
        if o.kind == "tensors":
            xs = [_array(o, n, x, scalar_ok=False) for n, x in zip(names, arrays)]
            p = plan_op(o, [x.shape for x in xs])
            return [view(x, p, i) for i, x in enumerate(xs)]
        if o.kind == "where":
            cond, x, y = (_array(o, n, a, scalar_ok=k > 0) for k, (n, a) in enumerate(zip(names, arrays)))
            if cond.dtype != np.bool_:
                raise InputError(f"{o.where}: {names[0]} must be a boolean array; got {cond.dtype}")
            return run_plan(plan_op(o, [np.shape(a) for a in (cond, x, y)]), np.where, [cond, x, y], out=out)
        a = _array(o, names[0], arrays[0], scalar_ok=False)
        b = _array(o, names[1], arrays[1], scalar_ok=True)
        p = plan_op(o, (a.shape, np.shape(b)), **rule_attrs)
        if o.kind == "inplace":
            if not a.flags.writeable:
                raise InputError(f"{o.where}: {names[0]} is read-only (an in-place op writes into it)")
            return run_plan(p, ufunc_kernel(o.ufunc), [a, b], out=a, dtype=a.dtype)
        return run_plan(p, ufunc_kernel(o.ufunc), [a, b], out=out)
    except MemoryBudgetError:
        raise
    except InputError as e:
        raise _named(o, e) from None
