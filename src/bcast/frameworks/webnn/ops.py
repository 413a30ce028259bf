"""WebNN's broadcasting, as the W3C specification defines it per op (spec only: no WebNN
implementation runs here; web-platform-tests' WebNN conformance cases are kept as data in the tests).

The specification (webmachinelearning/webnn ``index.bs``, "Broadcasting") defines two algorithms:

- **bidirectionally broadcast the shapes** A and B: pad the shorter with leading 1s, then each pair
  of dims must be equal or one of them 1; the output takes the larger -- numpy's rule, bcast's
  ``numpy``.  The element-wise binary ops (``add``, ``sub``, ``mul``, ``div``, ``max``, ``min``,
  ``pow``), the comparisons (``equal``, ``notEqual``, ``greater``, ``greaterOrEqual``, ``lesser``,
  ``lesserOrEqual``), the logical ops (``logicalAnd``, ``logicalOr``, ``logicalXor``), ``prelu``
  (slope with input, both ways: the output may be larger than the input; the specification made
  prelu bidirectional, webnn PR#743) and ``where`` (trueValue with falseValue, then condition with
  that: the three-way numpy broadcast) plan by it.
- **unidirectionally broadcast the shapes** from and to: from's rank may not exceed to's, each of
  from's dims (right-aligned) must equal to's or be 1, and the output is ``to`` -- bcast's
  ``unidirectional`` with A = to.  ``expand(input, newShape)`` plans by it.  ONNX's Expand is
  *bidirectional* instead (the output may be larger than the new shape; onnxruntime PR#21163 is the
  WebNN execution provider working around it): ``bcast.webnn.plan("expand", (2, 3), (1, 3))``
  refuses what ``bcast.onnx.plan("Expand", (2, 3), (1, 3))`` accepts.

Shapes are lists of "valid dimensions", integers greater than zero (``index.bs``, "valid
dimension"): a 0-size dim is a BroadcastError of kind ``unsupported``.  The specification sets no
rank limit of its own: the allowed ranks are "N", every implementation must support ranks 0 to 5 (the
"required ranks" of each op's tensor limits) and reports its own ``rankRange`` in ``opSupportLimits()``.

>>> plan("add", (5, 1), (1, 6)).shape  # the specification's example
(5, 6)
>>> plan("expand", (4,), (5, 4)).shape
(5, 4)
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ...core._format import brief
from ...core.errors import InputError
from ...core.plan import Plan
from ...core.shapes import static
from ...rules import infer
from ...run.execute import check_memory, check_out
from .._spec import SpecOp, Table, prelu, refuse_empty, where

__all__ = ["OPS", "TABLE", "ops", "plan", "run"]

_EMPTY = "WebNN's dims are valid dimensions, integers greater than zero"


class WebNNOp(SpecOp):
    framework: ClassVar[str] = "webnn"


def _bidirectional(op: SpecOp, shapes: tuple, names: tuple, attrs: dict) -> Plan:
    refuse_empty("numpy", shapes, names, _EMPTY)
    return infer(*shapes, rule="numpy", names=names)


def _expand(op: SpecOp, shapes: tuple, names: tuple, attrs: dict) -> Plan:
    """expand(input, newShape): input unidirectionally broadcast to newShape (the rule's A is newShape)."""
    refuse_empty("unidirectional", shapes[::-1], names[::-1], _EMPTY)
    return infer(shapes[1], shapes[0], rule="unidirectional", names=names[::-1])


def _binary(name: str, kernel: Any) -> WebNNOp:
    return WebNNOp(name, ("a", "b"), _bidirectional, kernel)


#: Every op that broadcasts, by the specification's method names.
OPS = (
    _binary("add", np.add),
    _binary("sub", np.subtract),
    _binary("mul", np.multiply),
    _binary("div", np.divide),
    _binary("max", np.maximum),
    _binary("min", np.minimum),
    _binary("pow", np.power),
    _binary("equal", np.equal),
    _binary("notEqual", np.not_equal),
    _binary("greater", np.greater),
    _binary("greaterOrEqual", np.greater_equal),
    _binary("lesser", np.less),
    _binary("lesserOrEqual", np.less_equal),
    _binary("logicalAnd", np.logical_and),
    _binary("logicalOr", np.logical_or),
    _binary("logicalXor", np.logical_xor),
    WebNNOp("prelu", ("input", "slope"), _bidirectional, prelu),
    WebNNOp("where", ("condition", "trueValue", "falseValue"), _bidirectional, where),
    WebNNOp("expand", ("input", "newShape"), _expand, None),
)

TABLE = Table("webnn", OPS)


def ops() -> tuple[str, ...]:
    """The op names, as ``MLGraphBuilder``'s methods.

    >>> ops()[:3], ops()[-1]
    (('add', 'sub', 'mul'), 'expand')
    """
    return TABLE.ops()


def plan(op: str, *shapes: Any) -> Plan:
    """The Plan of ``op`` on operands of these shapes; for ``expand`` the second "shape" is newShape.

    >>> plan("where", (2, 1), (3,), (1, 1, 3)).shape
    (1, 2, 3)
    >>> plan("prelu", (4, 1, 2), (5, 4, 3, 1)).shape  # bidirectional: larger than the input
    (5, 4, 3, 2)
    """
    return TABLE.plan(op, shapes, {})


def run(op: str, *arrays: Any, out: Any = None) -> Any:
    """``op`` on numpy arrays: the plan's views and numpy's element function (no WebNN implementation
    runs here).  ``expand`` takes the input array and newShape (a sequence of ints).

    >>> run("expand", np.array([1, 2, 3]), (2, 3))
    array([[1, 2, 3],
           [1, 2, 3]])
    """
    if op == "expand":  # the input, and newShape: a shape, not an array
        return _run_expand(arrays, out)
    return TABLE.run(op, arrays, {}, out=out)


def _run_expand(arrays: tuple, out: Any) -> Any:
    spec = TABLE.op("expand")
    spec.check_arity(list(arrays), spec.arity())
    x, new_shape = arrays
    if not isinstance(x, np.ndarray):
        raise InputError(f"{spec.where}: input input must be a numpy array; got {type(x).__name__} {brief(x)}")
    shape = static(TABLE.plan("expand", (x.shape, new_shape), {}).shape)
    check_memory(shape, x.dtype)
    if out is None:
        return np.array(np.broadcast_to(x, shape))
    check_out(out, shape, x.dtype)
    out[...] = x
    return out
