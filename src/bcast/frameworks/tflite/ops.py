"""TFLite's (LiteRT's) broadcasting builtin ops on numpy arrays: the kernels' rules, types and values.

:func:`run` computes one TFLite builtin op as the interpreter's kernels (tensorflow
``tensorflow/lite/kernels/*.cc``, LiteRT ``tflite/kernels/*.cc``) compute it:

- **Shapes.**  Every binary op (ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM, POW,
  SQUARED_DIFFERENCE, FLOOR_DIV, FLOOR_MOD, the comparisons, LOGICAL_AND/OR) and
  SELECT_V2 broadcast by numpy's rule: each kernel's ``Prepare`` calls
  ``CalculateShapeForBroadcast`` (``kernels/kernel_util.cc``: right-aligned, each dim
  equal or 1, 0 with 1 is 0) whenever the shapes differ (``HaveSameShapes``).  Inputs
  of one shape never broadcast, at any rank.  Inputs that differ go through
  ``BroadcastBinaryOpSimple`` (``kernels/internal/reference/broadcast_loop.h``) or
  ``BroadcastSelectSimple`` (``reference/select.h``), whose ``kMaxRank = 8`` is a
  ``TFLITE_CHECK``: past it the process aborts, and SELECT_V2's ``Prepare`` refuses an
  output of rank above 8 (``TF_LITE_ENSURE(context, output_size->size <= 8)``).  The
  rank limit of each op is :data:`KERNEL_MAX_RANK`, the ``max_rank`` attribute of rule
  ``numpy`` (given only when the shapes differ); :data:`CONVERTER_MAX_RANK` is the
  converter's, a different thing (see there).  Past rank 8 the interpreter aborts rather
  than refuse (deviation ``tflite-rank-abort``), except on the fast paths of ADD / MUL on
  float32 and POW by a one-element integer exponent, which compute at any rank
  (``tflite-rank-fast-path``).
- SELECT (version 1) does not broadcast: rule ``tflite-select``.
- BROADCAST_TO(input, shape) broadcasts input to the shape's values: rule
  ``unidirectional`` with A = the shape, B = the input (``kernels/broadcast_to.cc``:
  the input's rank may not exceed the shape's length, each input dim equals the
  target's or is 1; the output is the shape exactly).
- **Types.**  The inputs of a binary op share one type (``TF_LITE_ENSURE_TYPES_EQ``);
  the output keeps it, the comparisons' is bool.  The types here are those the
  kernels take among float32, int32 and bool (:data:`OPS`' ``types``).
- **Values** are the kernels' reference functions: DIV ``x / y``; POW ``std::pow``;
  SQUARED_DIFFERENCE ``(x - y) * (x - y)``; MAXIMUM / MINIMUM ``std::max`` /
  ``std::min``; FLOOR_DIV ``std::floor(double(x) / double(y))`` and, for every type,
  a zero divisor is refused ("Division by 0": :class:`InputError`); FLOOR_MOD
  ``fmod`` whose sign is moved to the divisor's; POW of int32 refuses a negative
  exponent.

>>> import numpy as np
>>> run("ADD", np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32))
array([[1., 2., 3.],
       [1., 2., 3.]], dtype=float32)
>>> run("SELECT", np.array([True, False]), np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32))
array([[1., 1.],
       [0., 0.]], dtype=float32)
>>> run("BROADCAST_TO", np.arange(3, dtype=np.int32), [2, 3])
array([[0, 1, 2],
       [0, 1, 2]], dtype=int32)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ...core._format import brief
from ...core.errors import InputError
from ...core.plan import Plan
from ...core.shapes import as_shape
from ...rules import infer
from ...run import execute
from ...run.kernel import elementwise, std_max, std_min, ufunc_kernel
from .._blocks import blocks
from .._op import Op as _Op
from .from_onnx import FROM_ONNX, KERNEL_MAX_RANK

__all__ = ["CONVERTER_MAX_RANK", "FROM_ONNX", "KERNEL_MAX_RANK", "OPS", "Op", "describe", "ops", "plan", "run"]


#: The TFLite converter's limits, per op: the rank up to which the converter leaves an implicit
#: broadcast to the kernel; past it (when the shapes differ) it legalizes the TF op with BROADCAST_TO
#: of each input to the output shape first (``ApplyExplicitBroadcasting``, tensorflow
#: ``compiler/mlir/lite/transforms/legalize_tf.cc``), and ``optimize_broadcast_like_pass.cc``
#: (``IsRankSupported``: ADD/SUB/MUL 6, DIV 5, the others 4) folds a BROADCAST_TO into the op only
#: within them.  From ``compiler/mlir/lite/ir/tfl_ops.td``
#: (``TFL_OperandsHaveSameShapesOrBroadcastableShape<[...], N>``) and ``tfl_ops.cc``
#: (``VerifyAddOpShapeConstraints`` ... : 6 for ADD/SUB/MUL).  LOGICAL_AND / LOGICAL_OR have no
#: limit there; SELECT_V2's is 5.  A statement of the converter's source, not measured here
#: (tensorflow's converter is not installed).
CONVERTER_MAX_RANK = {
    "ADD": 6, "SUB": 6, "MUL": 6, "DIV": 6, "MAXIMUM": 5, "MINIMUM": 5, "SELECT_V2": 5,
    "POW": 4, "SQUARED_DIFFERENCE": 4, "FLOOR_DIV": 4, "FLOOR_MOD": 4, "EQUAL": 4, "NOT_EQUAL": 4,
    "LESS": 4, "LESS_EQUAL": 4, "GREATER": 4, "GREATER_EQUAL": 4,
}


# --------------------------------------------------------------------------- the kernels


def _squared_difference(x, y, out=None):
    out = execute.output(np.broadcast_shapes(x.shape, y.shape), x.dtype, out)
    with np.errstate(all="ignore"):
        np.subtract(x, y, out=out)
        np.multiply(out, out, out=out)
    return out


def _floor_div(x, y, out=None):  # std::floor(double(x) / double(y)), cast to the type
    out = execute.output(np.broadcast_shapes(x.shape, y.shape), x.dtype, out)
    with np.errstate(all="ignore"):
        for at in blocks(out.shape, 8):
            np.copyto(out[at], np.floor(np.divide(x[at], y[at], dtype=np.float64)), casting="unsafe")
    return out


def _floor_mod(x, y, out=None):  # fmod (C's %), moved by y where its sign differs from y's
    out = execute.output(np.broadcast_shapes(x.shape, y.shape), x.dtype, out)
    with np.errstate(all="ignore"):
        for at in blocks(out.shape, 8):
            xb, yb = x[at], y[at]
            r = np.fmod(xb, yb)
            np.copyto(out[at], np.where((r != 0) & ((yb < 0) != (r < 0)), r + yb, r))
    return out


def _std(pick: Callable) -> Callable:
    def kernel(x, y, out=None):
        out = execute.output(np.broadcast_shapes(x.shape, y.shape), x.dtype, out)
        for at in blocks(out.shape, 1):
            pick(x[at], y[at], out[at])
        return out

    kernel.__name__ = pick.__name__
    return elementwise(kernel)


def _select(cond, x, y, out=None):
    out = execute.output(x.shape, x.dtype, out)
    np.copyto(out, y)
    np.copyto(out, x, where=cond)
    return out


_ADD, _SUB, _MUL, _DIV, _POW = (ufunc_kernel(f) for f in (np.add, np.subtract, np.multiply, np.divide, np.power))
_NUMERIC = ("float32", "int32")


@dataclass(frozen=True)
class Op(_Op):
    """One TFLite builtin: its ``name`` (schema.fbs ``BuiltinOperator``), its kernel file, its kind
    (``binary``, ``select``, ``select_v2``, ``broadcast_to``), the types it takes here, its kernel and
    whether its output is bool."""

    source: str = ""
    kind: str = "binary"
    types: tuple = _NUMERIC
    kernel: Callable | None = None
    boolean_output: bool = False
    zero_divisor: str = ""  # "all": every type refuses a 0 in B; "int": integer types do

    framework = "tflite"

    def input_names(self, n: int) -> tuple[str, ...]:
        return _NAMES[self.kind][:n]

    def arity_message(self, inputs: Sequence, allowed: Container[int]) -> str:
        n = max(cast(tuple, allowed))
        return f"tflite {self.name}: takes {n} inputs ({', '.join(_NAMES[self.kind][:n])}); got {len(inputs)}"

    def dtype_message(self, named: Sequence, name: str, tv: str, dtype: Any, allowed: Collection[str],
                      context: Any) -> str:
        return f"tflite {self.name}: input {name} must be {' or '.join(allowed)} (here); got {dtype}"

    def dtypes_differ_message(self, first: str, first_dtype: Any, name: str, dtype: Any, tv: str,
                              context: Any) -> str:
        return (f"tflite {self.name}: inputs {first} and {name} must have the same type "
                f"(TF_LITE_ENSURE_TYPES_EQ); got {first_dtype} and {dtype}")


_NAMES = {"binary": ("x", "y"), "select": ("condition", "x", "y"), "select_v2": ("condition", "x", "y"),
          "broadcast_to": ("input", "shape")}


def _cmp(name: str, ufunc: np.ufunc) -> Op:
    return Op(name, "comparisons.cc", kernel=ufunc_kernel(ufunc), boolean_output=True)


#: The one table of TFLite's broadcasting builtins, by schema name.
OPS: dict[str, Op] = {o.name: o for o in (
    Op("ADD", "add.cc", kernel=_ADD),
    Op("SUB", "sub.cc", kernel=_SUB),
    Op("MUL", "mul.cc", kernel=_MUL),
    Op("DIV", "div.cc", types=("float32",), kernel=_DIV),
    Op("MAXIMUM", "maximum_minimum.cc", kernel=_std(std_max)),
    Op("MINIMUM", "maximum_minimum.cc", kernel=_std(std_min)),
    Op("POW", "pow.cc", kernel=_POW),
    Op("SQUARED_DIFFERENCE", "squared_difference.cc", kernel=elementwise(_squared_difference)),
    Op("FLOOR_DIV", "floor_div.cc", kernel=_floor_div, zero_divisor="all"),
    Op("FLOOR_MOD", "floor_mod.cc", kernel=_floor_mod, zero_divisor="int"),
    _cmp("EQUAL", np.equal),
    _cmp("NOT_EQUAL", np.not_equal),
    _cmp("LESS", np.less),
    _cmp("LESS_EQUAL", np.less_equal),
    _cmp("GREATER", np.greater),
    _cmp("GREATER_EQUAL", np.greater_equal),
    Op("LOGICAL_AND", "logical.cc", types=("bool",), kernel=ufunc_kernel(np.logical_and)),
    Op("LOGICAL_OR", "logical.cc", types=("bool",), kernel=ufunc_kernel(np.logical_or)),
    Op("SELECT", "select.cc", kind="select", types=_NUMERIC + ("bool",), kernel=elementwise(_select)),
    Op("SELECT_V2", "select.cc", kind="select_v2", types=_NUMERIC + ("bool",), kernel=elementwise(_select)),
    Op("BROADCAST_TO", "broadcast_to.cc", kind="broadcast_to", types=_NUMERIC + ("bool",)),
)}


def ops() -> tuple:
    """The op names, as TFLite's schema spells them.

    >>> ops()[:4]
    ('ADD', 'SUB', 'MUL', 'DIV')
    """
    return tuple(OPS)


def _lookup(op: Any) -> Op:
    if isinstance(op, str) and op in OPS:
        return OPS[op]
    near = [name for name in OPS if isinstance(op, str) and name == op.strip().upper()]
    hint = f" (did you mean {near[0]}?)" if near else ""
    raise InputError(f"tflite: unknown op {brief(op)}{hint}; the ops are {', '.join(OPS)}")


def _arity(spec: Op) -> int:
    return len(_NAMES[spec.kind])


# --------------------------------------------------------------------------- plans


def _target(spec: Op, shape: Any) -> tuple:
    """BROADCAST_TO's shape input (its values): a 1-D sequence of ints >= 0."""
    try:
        arr = np.asarray(shape)
    except (ValueError, TypeError):
        arr = None
    if arr is None or arr.ndim != 1 or not (arr.dtype.kind in "iu" or arr.size == 0):
        raise InputError(f"tflite {spec.name}: shape must be a 1-D sequence of integers "
                         f"(TF_LITE_ENSURE_EQ(NumDimensions(shape), 1)); got {brief(shape)}")
    return as_shape(tuple(int(v) for v in arr), what="shape")


def plan(op: str, *shapes) -> Plan:
    """The :class:`~bcast.core.plan.Plan` of ``op`` on inputs of ``shapes`` (no arrays): the rule its
    kernel broadcasts by.  For BROADCAST_TO the "shapes" are the input's shape and the shape input's
    values.

    >>> plan("ADD", (2, 1, 3), (4, 1)).shape
    (2, 4, 3)
    >>> plan("BROADCAST_TO", (3, 1), (2, 3, 4)).shape
    (2, 3, 4)
    >>> plan("SELECT", (2,), (2, 5), (2, 5)).aligned_shape(0)
    (2, 1)
    """
    spec = _lookup(op)
    spec.check_arity(shapes, (_arity(spec),))
    names = _NAMES[spec.kind]
    if spec.kind == "broadcast_to":
        return infer(_target(spec, shapes[1]), shapes[0], rule="unidirectional", names=names[::-1])
    if spec.kind == "select":
        return infer(*shapes, rule="tflite-select", names=names)
    normalized = [as_shape(s, what=f"shape of input {i}") for i, s in enumerate(shapes)]
    if all(s == normalized[0] for s in normalized):  # HaveSameShapes: no broadcast, no rank limit
        return infer(*normalized, rule="numpy", names=names)
    return infer(*normalized, rule="numpy", names=names, max_rank=KERNEL_MAX_RANK)


# --------------------------------------------------------------------------- running


def _tensor(spec: Op, name: str, x: Any) -> np.ndarray:
    if not isinstance(x, (np.ndarray, np.generic)):
        raise InputError(f"tflite {spec.name}: input {name} must be a numpy array (a tensor has a type), "
                         f"got {type(x).__name__} {brief(x)}")
    return np.asarray(x)


def run(op: str, *inputs, out=None):
    """Compute TFLite's builtin ``op`` on numpy arrays as its kernel does.

    Parameters
    ----------
    op : str
        One of :func:`ops`.
    *inputs : numpy arrays
        ``x, y`` for the binary ops; ``condition, x, y`` for SELECT and SELECT_V2
        (condition bool); ``input, shape`` for BROADCAST_TO (shape: a 1-D sequence of ints).
    out : numpy array, optional
        Where to write the result: exactly its shape and dtype.

    Raises
    ------
    BroadcastError
        The shapes are not ones the kernel takes (its ``Prepare`` refuses them, or it aborts).
    InputError
        An unknown op, a wrong number of inputs, types the kernel does not take (here) or that
        differ, a zero divisor where the kernel refuses one, a bad ``out=``.
    """
    spec = _lookup(op)
    spec.check_arity(inputs, (_arity(spec),))
    names = _NAMES[spec.kind]
    if spec.kind == "broadcast_to":
        data = _tensor(spec, "input", inputs[0])
        spec.check_dtypes([("input", "T", data.dtype)], {"T": spec.types})
        p = plan(spec.name, data.shape, inputs[1])
        return execute.materialize(data, p, 1, out)
    arrays = [_tensor(spec, n, x) for n, x in zip(names, inputs)]
    named = list(zip(names, arrays))
    if spec.kind in ("select", "select_v2"):
        if arrays[0].dtype != np.bool_:
            raise InputError(f"tflite {spec.name}: condition must be bool; got {arrays[0].dtype}")
        named = named[1:]
    found = spec.check_dtypes([(n, "T", a.dtype) for n, a in named], {"T": spec.types})
    dtype = np.dtype(bool) if spec.boolean_output else found["T"][1]
    y = arrays[1]
    if spec.zero_divisor == "all" or (spec.zero_divisor == "int" and y.dtype.kind in "iu"):
        if not np.all(y):
            raise InputError(f"tflite {spec.name}: y has a 0; the kernel refuses it (\"Division by 0\")")
    if spec.name == "POW" and y.dtype.kind == "i" and np.any(y < 0):
        raise InputError(f"tflite {spec.name}: a negative int32 exponent; the kernel refuses it "
                         "(\"POW does not support negative value for int32.\")")
    p = plan(spec.name, *(a.shape for a in arrays))
    assert spec.kernel is not None  # BROADCAST_TO, the one op without one, returned above
    try:
        return execute.run_plan(p, spec.kernel, arrays, out=out, dtype=dtype)
    except InputError as e:  # a bad out=
        if str(e).startswith("tflite"):
            raise
        raise InputError(f"tflite {spec.name}: {e}") from None


def describe(op: str) -> str:
    """One line: the op, its kernel file and rule.

    >>> describe("SELECT")
    'SELECT: tensorflow/lite/kernels/select.cc, rule tflite-select'
    """
    spec = _lookup(op)
    rule = {"select": "tflite-select", "broadcast_to": "unidirectional"}.get(spec.kind, "numpy")
    return f"{spec.name}: tensorflow/lite/kernels/{spec.source}, rule {rule}"

