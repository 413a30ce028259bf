"""OpenVINO's broadcasting ops on numpy arrays: OpenVINO's rules, element types and values.

:func:`run` computes one OpenVINO op -- the binary element-wise ops with
``auto_broadcast`` ``"none"``, ``"numpy"`` or ``"pdpd"`` (and ``axis``),
Select, PRelu, Broadcast-1/3 and FakeQuantize-1 -- as the op's specification and OpenVINO's
reference implementation define it:

- **Shapes** follow bcast's rules (``none``, ``numpy``, ``pdpd``,
  ``openvino-select``, ``openvino-prelu``, ``unidirectional``, ``explicit``,
  ``bidirectional``, ``openvino-broadcast-pdpd``), which implement the specs;
  where OpenVINO's own code deviates, :mod:`bcast.frameworks.deviations` says how.
- **Element types** are OpenVINO's: the inputs of an op share one element
  type (OpenVINO's ``validate_and_infer_types`` refuses mixed types; Select's
  cond is boolean, then and else share a type); the output keeps it, except
  the comparisons and logical ops, whose output is boolean.  Nothing is ever
  promoted: int8 + int8 is int8 and wraps.
- **Values** are those of OpenVINO's reference implementation
  (``src/core/reference``, what ``Model.evaluate`` runs):

  ============  ================================================================
  Divide        floats: x / y.  Integers: floor division with
                ``python_division=True`` (the default), else truncation.
  Power         floats: pow in the element type.  Integers: ``pow`` in double,
                truncated to the type (``2 ** -1`` is 0, ``(-1) ** -1`` is -1).
  FloorMod      signed integers and floats: ``x - y * floor(x / y)`` in double,
                then cast (the sign of y); unsigned: ``x % y``.
  Mod           integers: C's ``x % y`` (the sign of x); floats:
                ``x - trunc(x / y) * y`` in the element type.
  Maximum       ``std::max``: ``y if x < y else x`` (so a NaN in x is kept,
                a NaN in y is not); Minimum: ``y if y < x else x``.
  ============  ================================================================

  Integer Divide, FloorMod and Mod by zero are refused (:class:`InputError`):
  OpenVINO's reference throws "integer division by zero" for Divide, returns
  garbage for FloorMod and kills the process (SIGFPE) for Mod; its CPU plugin
  returns garbage for all three.

Inputs are numpy arrays (OpenVINO tensors have explicit element types, so
Python scalars and lists are refused as data); Broadcast's target_shape and
axes_mapping are integer sequences.  Broadcast inputs are never copied: each
input is a stride-0 view (:mod:`bcast.run.execute`), and the output is checked
against the memory budget before it is allocated.

>>> import numpy as np
>>> run("Add", np.ones((2, 3, 4, 5), np.int8), np.full((3, 4), 2, np.int8), auto_broadcast="pdpd", axis=1).dtype
dtype('int8')
>>> run("Divide", np.array([7, -7], np.int32), np.array(2, np.int32))
array([ 3, -4], dtype=int32)
>>> run("Divide", np.array([7, -7], np.int32), np.array(2, np.int32), python_division=False)
array([ 3, -3], dtype=int32)
>>> run("Broadcast", np.array([1, 2, 3]), [2, 3], materialize=False).strides
(0, 8)
>>> run("Add", np.ones(3, np.float32), np.ones(3, np.float64))
Traceback (most recent call last):
...
bcast.core.errors.InputError: openvino Add: inputs A and B must have the same element type; got float32 and float64
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast
from collections.abc import Callable, Collection, Container, Sequence

import numpy as np

from ...run import _fast, execute
from ...core._format import brief, format_shape
from ...core.errors import InputError
from ...core.plan import Plan
from ...core.validate import flag
from ...rules import infer
from ...run.kernel import natural_ufunc
from .._op import Op as _Op
from . import fake_quantize as FQ
from . import kernels as K

__all__ = ["AUTO_BROADCAST", "BROADCAST_MODES", "ELEMENT_TYPES", "FROM_ONNX_RULES", "Op", "OPS", "TYPE_CLASSES", "ops",
           "plan", "run"]

# --------------------------------------------------------------------------- element types

#: OpenVINO element types that numpy represents, by numpy name.
ELEMENT_TYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                 "float16", "float32", "float64")
_INTS = ELEMENT_TYPES[1:9]
_FLOATS = ELEMENT_TYPES[9:]

#: The element types each class of op takes (OpenVINO's validate_and_infer_types).
TYPE_CLASSES = {
    "numeric": _INTS + _FLOATS,  # arithmetic: "Arguments cannot have boolean element type"
    "any": ELEMENT_TYPES,  # comparisons, Select's then/else, Broadcast's data
    "boolean": ("bool",),  # logical ops
    "integral": ("bool",) + _INTS,  # bitwise ops
    "float": _FLOATS,  # PRelu (its spec: any floating-point type)
}


# --------------------------------------------------------------------------- the op table
#
# Each kernel is a factory of :mod:`bcast.frameworks.openvino.kernels`: (op name, attributes) -> f(*views, out=None).


@dataclass(frozen=True)
class Op(_Op):
    """One OpenVINO op: its ``name`` (and the checks of a call: :class:`bcast.frameworks._op.Op`),
    how its inputs are named and broadcast, the element types it takes, its output type, its own
    attributes (with defaults) and its kernel."""

    kind: str  # "eltwise", "select", "prelu", "broadcast" or "fake_quantize"
    types: str  # a key of TYPE_CLASSES
    kernel: Callable | None
    boolean_output: bool = False
    attrs: tuple = ()  # (name, default) pairs

    framework = "openvino"

    def input_names(self, n: int) -> tuple[str, ...]:
        return _NAMES[self.kind][:n]

    def arity_message(self, inputs: Sequence, allowed: Container[int]) -> str:
        names = _NAMES[self.kind]
        want = " or ".join(f"{n} ({', '.join(names[:n])})" for n in cast(tuple, allowed))
        return f"openvino {self.name}: takes {want} inputs; got {len(inputs)}"

    def dtype_message(self, named: Sequence, name: str, tv: str, dtype: Any, allowed: Collection[str],
                      context: Any) -> str:
        what, allowed = " and ".join(n for n, _, _ in named), ", ".join(allowed)
        return f"openvino {self.name}: {what} must be of a {self.types} element type ({allowed}); got {dtype}"

    def dtypes_differ_message(self, first: str, first_dtype: Any, name: str, dtype: Any, tv: str,
                              context: Any) -> str:
        return (f"openvino {self.name}: inputs {first} and {name} must have the same element type; "
                f"got {first_dtype} and {dtype}")


def _eltwise(name, types, kernel, **kw) -> Op:
    return Op(name, "eltwise", types, kernel, **kw)


def _compare(name, ufunc) -> Op:
    return _eltwise(name, "any", K.ufunc(ufunc), boolean_output=True)


def _logical(name, ufunc) -> Op:
    return _eltwise(name, "boolean", K.ufunc(ufunc), boolean_output=True)


#: The one table that knows OpenVINO's op names.
OPS: dict[str, Op] = {op.name: op for op in (
    _eltwise("Add", "numeric", K.ufunc(np.add)),
    _eltwise("Subtract", "numeric", K.ufunc(np.subtract)),
    _eltwise("Multiply", "numeric", K.ufunc(np.multiply)),
    _eltwise("Divide", "numeric", K.divide, attrs=(("python_division", True),)),
    _eltwise("Power", "numeric", K.power),
    _eltwise("Maximum", "numeric", K.maximum),  # std::max(x, y): y if x < y
    _eltwise("Minimum", "numeric", K.minimum),  # std::min(x, y): y if y < x
    _eltwise("SquaredDifference", "numeric", K.squared_difference),
    _eltwise("FloorMod", "numeric", K.floor_mod),
    _eltwise("Mod", "numeric", K.mod),
    _compare("Equal", np.equal),
    _compare("NotEqual", np.not_equal),
    _compare("Less", np.less),
    _compare("LessEqual", np.less_equal),
    _compare("Greater", np.greater),
    _compare("GreaterEqual", np.greater_equal),
    _logical("LogicalAnd", np.logical_and),
    _logical("LogicalOr", np.logical_or),
    _logical("LogicalXor", np.logical_xor),
    _eltwise("BitwiseAnd", "integral", K.ufunc(np.bitwise_and)),
    _eltwise("BitwiseOr", "integral", K.ufunc(np.bitwise_or)),
    _eltwise("BitwiseXor", "integral", K.ufunc(np.bitwise_xor)),
    Op("Select", "select", "any", K.select),
    Op("PRelu", "prelu", "float", K.prelu),
    Op("Broadcast", "broadcast", "any", None,
       attrs=(("mode", "numpy"), ("version", 3), ("materialize", True))),
    Op("FakeQuantize", "fake_quantize", "float", FQ.kernel, attrs=(("levels", None),)),  # fake_quantize.py
)}

#: ONNX ops that OpenVINO's ONNX frontend turns into an op broadcasting by another rule than
#: ONNX's (openvino#35958: PRelu's per-channel slope); the others keep ONNX's rule.
FROM_ONNX_RULES = {"PRelu": "openvino-prelu"}

for _op in OPS.values():  # sanity check of the table
    assert _op.types in TYPE_CLASSES and _op.kind in ("eltwise", "select", "prelu", "broadcast", "fake_quantize"), _op


def ops() -> tuple:
    """The names of the ops :func:`run` computes.

    >>> ops()[:4]
    ('Add', 'Subtract', 'Multiply', 'Divide')
    """
    return tuple(OPS)


# --------------------------------------------------------------------------- checking a request

#: auto_broadcast values and the rule each means; "explicit" is OpenVINO's alias of "none".
AUTO_BROADCAST = {"none": "none", "explicit": "none", "numpy": "numpy", "pdpd": "pdpd"}
#: Broadcast modes and the rule each means (with data and target in that rule's order).
BROADCAST_MODES = {"numpy": "unidirectional", "explicit": "explicit", "none": "explicit",
                    "bidirectional": "bidirectional", "pdpd": "openvino-broadcast-pdpd"}
_NAMES = {"eltwise": ("A", "B"), "select": ("cond", "then", "else"), "prelu": ("data", "slope"),
          "broadcast": ("data", "target_shape", "axes_mapping"), "fake_quantize": FQ.NAMES}


def _lookup(op: Any) -> Op:
    if isinstance(op, str) and op in OPS:
        return OPS[op]
    near = [name for name in OPS if isinstance(op, str) and name.lower() == op.lower()]
    hint = f" (did you mean {near[0]}?)" if near else ""
    raise InputError(f"openvino: unknown op {brief(op)}{hint}; the ops are {', '.join(OPS)}")


def _tensor(spec: Op, name: str, x: Any) -> np.ndarray:
    """A data input: a numpy array of an OpenVINO element type."""
    if not isinstance(x, (np.ndarray, np.generic)):
        raise InputError(f"openvino {spec.name}: input {name} must be a numpy array (it has an element type), "
                         f"got {type(x).__name__} {brief(x)}")
    if x.dtype.name not in ELEMENT_TYPES:
        raise InputError(f"openvino {spec.name}: input {name} has dtype {x.dtype}, which is not an OpenVINO "
                         f"element type ({', '.join(ELEMENT_TYPES)})")
    return np.asarray(x)


def _same_type(spec: Op, named: list) -> np.dtype:
    """The one element type of ``named`` ((name, array) pairs), checked against the op's class."""
    spec.check_dtypes([(n, "T", a.dtype) for n, a in named], {"T": TYPE_CLASSES[spec.types]}, same_first=True)
    return named[0][1].dtype


def _op_attrs(spec: Op, attrs: dict) -> dict:
    """The op's own attributes, defaults filled in; unknown ones refused."""
    known = dict(spec.attrs)
    unknown = sorted(set(attrs) - set(known))
    if unknown:
        takes = f"takes {', '.join(known)}" if known else "takes no other attributes"
        raise InputError(f"openvino {spec.name}: unknown attribute {', '.join(unknown)} ({takes}; "
                         "auto_broadcast, axis and out= are keywords of run)")
    out = {k: (known[k] if attrs.get(k) is None else attrs[k]) for k in known}
    for k in ("python_division", "materialize"):
        if k in out:
            flag(out[k], f"openvino {spec.name}: attribute {k}", spelled="True or False")
    return out


def _auto_broadcast(spec: Op, mode: Any, axis: Any) -> tuple[str, dict]:
    """The rule and its attributes for auto_broadcast ``mode`` and ``axis``."""
    rule = AUTO_BROADCAST.get(mode.lower()) if isinstance(mode, str) else None
    if rule is None:
        raise InputError(f"openvino {spec.name}: auto_broadcast must be one of {', '.join(AUTO_BROADCAST)}; "
                         f"got {brief(mode)}")
    if rule == "pdpd":
        return rule, {"axis": axis}
    _no_axis(spec, axis, f"auto_broadcast={mode!r}")
    return rule, {}


def _no_axis(spec: Op, axis: Any, why: str) -> None:
    if axis is not None and not (isinstance(axis, (int, np.integer)) and axis == -1):
        raise InputError(f"openvino {spec.name}: axis applies to pdpd broadcasting only, not with {why}; "
                         f"got axis={brief(axis)}")


def _no_auto_broadcast(spec: Op, mode: Any, instead: str) -> None:
    if mode != "numpy":
        raise InputError(f"openvino {spec.name}: has no auto_broadcast attribute ({instead}); "
                         f"got auto_broadcast={brief(mode)}")


# --------------------------------------------------------------------------- running


def run(op: str, *inputs, auto_broadcast: str = "numpy", axis: int = -1, out=None, **attrs):
    """Compute the OpenVINO op ``op`` on ``inputs``, broadcasting as OpenVINO's spec says.

    Parameters
    ----------
    op : str
        An OpenVINO op name, one of :func:`ops`: the binary element-wise ops
        (Add, Subtract, Multiply, Divide, Power, Maximum, Minimum,
        SquaredDifference, FloorMod, Mod, Equal, NotEqual, Less, LessEqual,
        Greater, GreaterEqual, LogicalAnd/Or/Xor, BitwiseAnd/Or/Xor), Select,
        PRelu, Broadcast, FakeQuantize (each range into X: :mod:`.fake_quantize`).
    *inputs : numpy arrays
        The op's inputs, in OpenVINO's order: ``A, B``; ``cond, then, else``;
        ``data, slope``; ``data, target_shape[, axes_mapping]`` (the last two
        integer sequences).
    auto_broadcast : {"numpy", "pdpd", "none"}
        The element-wise ops' and Select's broadcasting (``"explicit"`` is
        OpenVINO's alias of ``"none"``).
    axis : int
        pdpd only (auto_broadcast, or Broadcast mode): where B starts in A;
        -1 (the default) means rank(A) - rank(B).
    out : numpy array, optional
        Where to write the result: exactly the output's shape and dtype.
    **attrs
        Divide: ``python_division`` (default True: integers floor).
        FakeQuantize: ``levels`` (required, at least 2).
        Broadcast: ``mode`` (``"numpy"``, ``"explicit"``, ``"bidirectional"``,
        ``"pdpd"``), ``version`` (3, or 1: no bidirectional), ``materialize``
        (default True; False returns a read-only stride-0 view, allocating
        nothing).

    Returns
    -------
    numpy array of the inputs' element type (boolean for comparisons and
    logical ops).

    Raises
    ------
    BroadcastError
        The shapes do not broadcast under the op's rule.
    InputError
        An unknown op or attribute, a wrong number of inputs, element types
        the op does not take or that differ, an integer division by zero, an
        ``out=`` of the wrong shape or dtype.
    MemoryBudgetError
        The output would exceed the memory budget (nothing is allocated).
    """
    # prepared calls: a dict lookup.  ``is``: the defaults (and a literal "numpy", interned) take this
    # path in two pointer compares; an equal value built at run time takes the full path.
    if len(inputs) == 2 and not attrs and auto_broadcast is _NUMPY and axis is _LAST:
        a, b = inputs
        if type(a) is _ndarray and type(b) is _ndarray:
            try:
                fast = _FAST_GET((op, a.dtype, a.shape, b.dtype, b.shape))
            except TypeError:  # an unhashable op: the full path says what is wrong
                fast = _MISS
            if fast is None:
                fast = _fast_build(op, a, b)
            if type(fast) is tuple:  # (ufunc, runner): numpy broadcasts as OpenVINO does, small
                if out is None:  # the ufunc as it is (warnings off where it may warn on these types)
                    return fast[0](a, b)
                fast = fast[1]
            if fast is not _MISS:
                return fast(inputs, out)
    spec = _lookup(op)
    auto_broadcast = "numpy" if auto_broadcast is None else auto_broadcast  # None: the default, as for rules
    # the allocations' reservations last until it returns
    return execute.reserved_call(_RUNNERS[spec.kind], spec, inputs, auto_broadcast, axis, out, attrs)


# --------------------------------------------------------------------------- prepared calls
#
# A two-input element-wise call with the default broadcasting and no attributes is checked once per
# (op, dtypes, shapes): its runner is kept (bcast.run._fast.runner), for every size, with or without out=.


_FAST = _fast.cache()  # (op, dtype, shape, dtype, shape) -> (ufunc, runner), a runner, or MISS (the full path)
_NUMPY, _LAST = "numpy", -1  # run()'s defaults, compared by identity
_FAST_GET = _FAST.get
_MISS, _ndarray = _fast.MISS, np.ndarray


def _fast_build(op, a, b):
    """The runner of a call (remembered), or MISS (remembered too); the full path raises."""
    runner: Any
    try:
        spec = _lookup(op)
        if spec.kind != "eltwise":
            runner = _MISS
        else:
            rule, _ = _auto_broadcast(spec, "numpy", -1)
            dtype = _same_type(spec, [("A", _tensor(spec, "A", a)), ("B", _tensor(spec, "B", b))])
            prepared = _fast.prepared(infer(a.shape, b.shape, rule=rule, names=_NAMES["eltwise"]))
            assert spec.kernel is not None  # (every eltwise op has one)
            out_dtype = np.dtype(bool) if spec.boolean_output else dtype
            runner = _fast_runner(prepared, spec.kernel(spec.name, _op_attrs(spec, {})), out_dtype, (a.dtype, b.dtype))
    except (InputError, ValueError):  # BroadcastError is a ValueError
        runner = _MISS
    _FAST.put((op, a.dtype, a.shape, b.dtype, b.shape), runner)
    return runner


def _fast_runner(prepared, kernel, dtype, dtypes):
    if prepared.small and prepared.reshapes is None:
        return _MISS
    ufunc = natural_ufunc(kernel)
    # not at rank 0: a ufunc gives a numpy scalar there, not an array
    natural = ufunc is not None and prepared.plan.shape != ()
    runner = _fast.runner(prepared, lambda views, out: kernel(*views, out=out), dtype, ufunc, natural, dtypes=dtypes,
                          func=kernel)  # run() calls the ufunc on the arrays when it can
    if prepared.native and natural and prepared.small:
        return ufunc if _fast.silent(ufunc, dtypes) else _fast.quieted(ufunc), runner
    return runner


def _run_plan(spec: Op, arrays: list, rule: str, rule_attrs: dict, out, attrs: dict, dtype) -> Any:
    plan = infer(*(a.shape for a in arrays), rule=rule, names=_NAMES[spec.kind][:len(arrays)], **rule_attrs)
    out_dtype = np.dtype(bool) if spec.boolean_output else dtype
    assert spec.kernel is not None  # Broadcast, the one op without a kernel, runs no plan here
    return execute.run_plan(plan, spec.kernel(spec.name, attrs), arrays, out=out, dtype=out_dtype)


def _run_eltwise(spec, inputs, mode, axis, out, attrs):
    spec.check_arity(inputs, (2,))
    rule, rule_attrs = _auto_broadcast(spec, mode, axis)
    arrays = [_tensor(spec, n, x) for n, x in zip(_NAMES["eltwise"], inputs)]
    dtype = _same_type(spec, list(zip(_NAMES["eltwise"], arrays)))
    return _run_plan(spec, arrays, rule, rule_attrs, out, _op_attrs(spec, attrs), dtype)


def _run_select(spec, inputs, mode, axis, out, attrs):
    spec.check_arity(inputs, (3,))
    rule, rule_attrs = _auto_broadcast(spec, mode, axis)
    cond, then, else_ = (_tensor(spec, n, x) for n, x in zip(_NAMES["select"], inputs))
    if cond.dtype != np.bool_:
        raise InputError(f"openvino {spec.name}: cond must be boolean; got {cond.dtype}")
    dtype = _same_type(spec, [("then", then), ("else", else_)])
    rule_attrs["auto_broadcast"] = rule
    return _run_plan(spec, [cond, then, else_], "openvino-select", rule_attrs, out, _op_attrs(spec, attrs), dtype)


def _run_prelu(spec, inputs, mode, axis, out, attrs):
    spec.check_arity(inputs, (2,))
    _no_auto_broadcast(spec, mode, "a 1-D slope of length data[1] is per channel, else numpy into data")
    _no_axis(spec, axis, spec.name)
    arrays = [_tensor(spec, n, x) for n, x in zip(_NAMES["prelu"], inputs)]
    dtype = _same_type(spec, list(zip(_NAMES["prelu"], arrays)))
    return _run_plan(spec, arrays, "openvino-prelu", {}, out, _op_attrs(spec, attrs), dtype)


# --------------------------------------------------------------------------- Broadcast


def _int_vector(spec: Op, name: str, value: Any) -> tuple:
    """target_shape / axes_mapping: a 1-D sequence of integers (OpenVINO: "must be an integral number",
    "rank must be 1")."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        arr = None
    if arr is None or arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and arr.size == 0):
        raise InputError(f"openvino {spec.name}: {name} must be a 1-D sequence of integers, got {brief(value)}")
    if arr.ndim != 1:
        raise InputError(f"openvino {spec.name}: {name} must be 1-D (OpenVINO: its rank must be 1); "
                         f"got an array of shape {format_shape(arr.shape)}")
    return tuple(int(v) for v in arr)


def _broadcast_plan(spec: Op, data: tuple, target: tuple, axes, mode: str, axis: Any):
    """The plan (``data``: data's shape), and the index of data among its inputs."""
    names = ("data", "target_shape")
    if mode == "numpy":
        _no_axis(spec, axis, "mode 'numpy'")
        return infer(target, data, rule="unidirectional", names=names[::-1]), 1
    if mode == "explicit":
        _no_axis(spec, axis, "mode 'explicit'")
        return infer(data, target, rule="explicit", names=names, axes_mapping=axes), 0
    if mode == "bidirectional":
        _no_axis(spec, axis, "mode 'bidirectional'")
        return infer(data, target, rule="bidirectional", names=names), 0
    return infer(data, target, rule="openvino-broadcast-pdpd", names=names, axis=axis), 0


def _check_broadcast_mode(spec: Op, mode: Any, version: Any) -> str:
    if isinstance(version, bool) or version not in (1, 3):
        raise InputError(f"openvino {spec.name}: version must be 1 or 3; got {brief(version)}")
    rule = BROADCAST_MODES.get(mode.lower()) if isinstance(mode, str) else None
    if rule is None:
        raise InputError(f"openvino {spec.name}: mode must be one of {', '.join(BROADCAST_MODES)}; "
                         f"got {brief(mode)}")
    mode = "explicit" if mode.lower() == "none" else mode.lower()
    if mode == "bidirectional" and version == 1:
        raise InputError(f"openvino {spec.name}: Broadcast-1 has no mode bidirectional (Broadcast-3 added it); "
                         "use version=3")
    return mode


def _run_broadcast(spec, inputs, auto_broadcast, axis, out, attrs):
    _no_auto_broadcast(spec, auto_broadcast, "it has mode")
    a = _op_attrs(spec, attrs)
    mode = _check_broadcast_mode(spec, a["mode"], a["version"])
    spec.check_arity(inputs, (3,) if mode == "explicit" else (2,))
    data = _tensor(spec, "data", inputs[0])
    _same_type(spec, [("data", data)])
    target = _int_vector(spec, "target_shape", inputs[1])
    if any(d < 0 for d in target):
        raise InputError(f"openvino {spec.name}: target_shape must not have negative dims; got {list(target)}")
    axes = _int_vector(spec, "axes_mapping", inputs[2]) if mode == "explicit" else None
    plan, i = _broadcast_plan(spec, data.shape, target, axes, mode, axis)
    if not a["materialize"]:
        if out is not None:
            raise InputError(f"openvino {spec.name}: out= and materialize=False exclude each other")
        return execute.view(data, plan, i)
    return execute.materialize(data, plan, i, out)


def _fq_rule(spec: Op, mode: Any, axis: Any) -> tuple[str, Any]:
    """The rule each range of FakeQuantize broadcasts into X by (:mod:`.fake_quantize`), and its axis."""
    rule, rule_attrs = _auto_broadcast(spec, mode, axis)
    return FQ.RULES[rule], rule_attrs.get("axis")


def _run_fake_quantize(spec, inputs, mode, axis, out, attrs):
    spec.check_arity(inputs, (5,))
    a = _op_attrs(spec, attrs)
    if a["levels"] is None:
        raise InputError("openvino FakeQuantize: levels is required (the number of quantization levels: 256 for "
                         "int8, 2 binarizes)")
    FQ.check_levels(a["levels"])
    rule, ax = _fq_rule(spec, mode, axis)
    arrays = [_tensor(spec, n, x) for n, x in zip(FQ.NAMES, inputs)]
    dtype = _same_type(spec, list(zip(FQ.NAMES, arrays)))
    plan = FQ.plan(tuple(x.shape for x in arrays), rule, ax)
    return execute.run_plan(plan, FQ.kernel(spec.name, a), arrays, out=out, dtype=dtype)


_RUNNERS = {"eltwise": _run_eltwise, "select": _run_select, "prelu": _run_prelu, "broadcast": _run_broadcast,
            "fake_quantize": _run_fake_quantize}


# --------------------------------------------------------------------------- plans


def plan(op: str, *shapes, auto_broadcast: str = "numpy", axis: int = -1, **attrs) -> Plan:
    """The :class:`~bcast.core.plan.Plan` of ``op`` on inputs of ``shapes`` (no arrays): the rule
    :func:`run` broadcasts by, with the same keywords and checks.

    For Broadcast the "shapes" are data's shape, target_shape (its values) and, for mode
    explicit, axes_mapping (its values).

    >>> print(plan("Add", (2, 3, 4, 5), (3, 4), auto_broadcast="pdpd", axis=1))
    pdpd: A (2,3,4,5), B (3,4) -> (2,3,4,5)
    >>> plan("Broadcast", (3, 1), (2, 3, 4)).shape
    (2, 3, 4)
    """
    spec = _lookup(op)
    rule_attrs: dict = {}
    if spec.kind == "broadcast":
        _no_auto_broadcast(spec, auto_broadcast, "it has mode")
        a = _op_attrs(spec, attrs)
        mode = _check_broadcast_mode(spec, a["mode"], a["version"])
        spec.check_arity(shapes, (3,) if mode == "explicit" else (2,))
        data, target = tuple(shapes[0]), tuple(shapes[1])
        return _broadcast_plan(spec, data, target, tuple(shapes[2]) if mode == "explicit" else None, mode, axis)[0]
    a = _op_attrs(spec, attrs)
    if spec.kind == "fake_quantize":
        spec.check_arity(shapes, (5,))
        if a["levels"] is not None:
            FQ.check_levels(a["levels"])
        rule, ax = _fq_rule(spec, auto_broadcast, axis)
        return FQ.plan(shapes, rule, ax)
    if spec.kind == "prelu":
        spec.check_arity(shapes, (2,))
        _no_auto_broadcast(spec, auto_broadcast, "a 1-D slope of length data[1] is per channel, else numpy into data")
        _no_axis(spec, axis, spec.name)
        rule = "openvino-prelu"
    else:
        spec.check_arity(shapes, (3,) if spec.kind == "select" else (2,))
        rule, rule_attrs = _auto_broadcast(spec, auto_broadcast, axis)
        if spec.kind == "select":
            rule, rule_attrs["auto_broadcast"] = "openvino-select", rule
    return infer(*shapes, rule=rule, names=_NAMES[spec.kind][:len(shapes)], **rule_attrs)
