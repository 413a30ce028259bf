"""ONNX's broadcasting ops, run on numpy arrays exactly as ONNX defines them.

One table, :data:`OPS`, is the only place that knows the op names: for every
op its inputs and their type variables, its attributes, and one row per opset
version where ONNX changed it (the allowed types, the broadcasting rule), plus
the numpy kernel.  :func:`run` looks the op up, resolves the opset (``None``:
the newest version bcast knows, :data:`LATEST_OPSET`), checks the attributes
and ONNX's type rules, asks the rule for a :class:`~bcast.core.plan.Plan` and runs
the kernel on stride-0 views through :func:`bcast.run.execute.run_plan`.

Type rules, as ONNX states them (``onnx.defs.get_schema(op, opset)``):

- every input's type must be allowed for its type variable at that opset, and
  inputs that share a type variable must have the same dtype (Pow's exponent,
  ``T1``, may differ from its base);
- the output has ONNX's type: the type of ``T`` (so Add of int8 stays int8 and
  wraps around), or bool for the comparisons and And/Or/Xor.  numpy's
  promotion never leaks into a result;
- integer Div truncates toward zero (C, as onnxruntime); Mod with ``fmod=0`` is
  Python's ``%`` (the sign of the divisor), ``fmod=1`` is C's ``fmod``; before
  opset 28 floats need ``fmod=1``; BitShift takes unsigned types only before
  opset 28.

Inputs are numpy arrays (a numpy scalar counts as an array of shape ``()``).
ONNX has no Python scalars, so bcast does not guess a type for one: a Python
``int``/``float``/``bool``, a list, or anything else is refused with an
:class:`~bcast.core.errors.InputError` -- write ``np.array(2, np.float32)``.
Strings are numpy arrays of dtype ``object`` (as onnx's ``numpy_helper``
gives them) or of a numpy string dtype.

Opsets 1-6 are run with their own rules: Add, Sub, Mul, Div, Pow, And, Or,
Xor, Equal, Greater and Less take ``broadcast``/``axis`` (rule
``onnx-legacy``); Max, Min, Mean and Sum before opset 8 need equal shapes
(rule ``none``); Gemm before opset 7 takes ``broadcast`` (0: C must be
(M, N)); PRelu before opset 7 takes a slope of one element or of X's shape.

>>> import numpy as np
>>> run("Add", np.array([[1, 2, 3]], np.int8), np.array([127], np.int8))
array([[-128, -127, -126]], dtype=int8)
>>> run("Div", np.array([-7, 7], np.int32), np.array([2, 2], np.int32))
array([-3,  3], dtype=int32)
>>> run("Add", np.ones(3, np.float32), np.ones(3, np.float64))
Traceback (most recent call last):
...
bcast.core.errors.InputError: onnx Add: inputs A and B must have the same type (T); got float32 and float64
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial
from typing import Any
from collections.abc import Callable, Collection, Container, Sequence

import numpy as np

from ...core._format import brief
from ...core.errors import InputError
from ...core.plan import Plan
from ...core.validate import flag, integer, number
from ...rules import infer
from ...run import _fast
from ...run.execute import reserved_call, run_plan, view
from ...run.kernel import elementwise, loop_of, natural_ufunc, ufunc_of
from ...run.out import check_out, overlaps
from .._op import Op as _Op
from . import kernels as K
from .dtypes import ALL, BF16, BOOL, FLOATS, INT32_64, INTS, UINTS, onnx_type

#: The newest opset bcast's table knows (onnx 1.23's).
LATEST_OPSET = 28

__all__ = ["LATEST_OPSET", "OPS", "Op", "Version", "ops", "plan", "run", "type_constraints", "onnx_type"]

# --------------------------------------------------------------------------- the table's types


@dataclass(frozen=True)
class Version:
    """One opset version of an op: where ONNX changed it.

    ``since``: the opset it appears in; ``rule``: the broadcasting rule, a
    name of :mod:`bcast.rules`, or ``gemm-legacy`` / ``prelu-legacy``, which
    :func:`_plan` composes from them; ``types``: the allowed ONNX type names
    of each type variable.
    """

    since: int
    rule: str
    types: dict


def _v(since: int, rule: str, **types) -> Version:
    return Version(since, rule, {k: frozenset(v) for k, v in types.items()})


@dataclass(frozen=True)
class Attr:
    """An attribute of an op: ``kind`` is ``flag`` (0/1), ``float``, ``int`` or a
    tuple of the allowed strings; ``default`` None and ``required`` False means
    the attribute is optional with no value."""

    name: str
    kind: Any
    default: Any = None
    required: bool = False

    def check(self, op: str, value: Any) -> Any:
        where = f"onnx {op}: attribute {self.name}"
        if value is None:
            if self.required:
                raise InputError(f"{where} is required (one of {', '.join(self.kind)})")
            return self.default
        if isinstance(self.kind, tuple):
            if isinstance(value, str) and value in self.kind:
                return value
            raise InputError(f"{where} must be one of {', '.join(map(repr, self.kind))}, got {brief(value)}")
        if self.kind == "flag":
            return flag(value, where)
        if self.kind == "int":
            return integer(value, where)
        if self.kind == "float":
            return number(value, where)
        raise AssertionError(self.kind)  # pragma: no cover


#: The attributes each rule adds (the legacy ``broadcast``/``axis``).
_RULE_ATTRS = {
    "onnx-legacy": (Attr("broadcast", "flag", 0), Attr("axis", "int")),
    "gemm-legacy": (Attr("broadcast", "flag", 0),),
}


@dataclass(frozen=True)
class Op(_Op):
    """One row of :data:`OPS` (its ``name``, and the checks of a call: :class:`bcast.frameworks._op.Op`).

    ``inputs``: (name, type variable) pairs (or a fixed type, ``tensor(int64)``);
    a variadic op has one pair and takes 1 or more inputs named ``data_0``,
    ``data_1``...; ``output``: the type variable of the output.

    ``kernel(views, out, **attrs)`` writes an element-wise result into ``out``
    (of the output shape and dtype); ``runner(plan, arrays, out, dtype, attrs)``
    replaces the element-wise path (Gemm's product, Expand's copy or view).

    ``optional``: how many trailing inputs may be left out from opset
    ``optional_since`` (Gemm's C, 11); ``shape_input``: the input whose values
    are a shape (Expand's); ``check(version, arrays, attrs)``: a rule the spec
    states in prose (Mod's fmod); ``views``: ``materialize=False`` may return a
    read-only view.
    """

    inputs: tuple
    output: str
    versions: tuple
    kernel: Callable | None = None
    attrs: tuple = ()
    variadic: bool = False
    optional: int = 0
    optional_since: int = 0
    runner: Callable | None = None
    shape_input: int | None = None
    check: Callable | None = None
    views: bool = False

    framework = "onnx"

    def version(self, opset: int | None) -> Version:
        if opset is None:
            return self.versions[-1]
        opset = integer(opset, f"onnx {self.name}: opset")
        if opset > LATEST_OPSET:
            raise InputError(f"onnx {self.name}: opset {opset} is newer than any bcast knows (1 to {LATEST_OPSET})")
        found = [v for v in self.versions if v.since <= opset]
        if not found:
            raise InputError(f"onnx {self.name}: opset {opset} has no {self.name} (it exists from opset "
                             f"{self.versions[0].since})")
        return found[-1]

    def attributes(self, version: Version) -> tuple:
        """The attributes of the op at ``version`` (the legacy ones included)."""
        return self.attrs + _RULE_ATTRS.get(version.rule, ())

    def input_names(self, n: int) -> tuple:
        if self.variadic:
            return tuple(f"data_{i}" for i in range(n))
        return tuple(name for name, _ in self.inputs[:n])

    def type_vars(self, n: int) -> tuple:
        if self.variadic:
            return (self.inputs[0][1],) * n
        return tuple(tv for _, tv in self.inputs[:n])

    def arity(self, version: Version) -> range:
        """How many inputs the op takes at ``version``."""
        if self.variadic:
            return range(1, sys.maxsize)
        most = len(self.inputs)
        return range(most - self.optional if version.since >= self.optional_since else most, most + 1)

    def arity_message(self, inputs: Sequence, allowed: Container[int]) -> str:
        if self.variadic:
            return f"onnx {self.name}: takes 1 or more inputs, got {len(inputs)}"
        return super().arity_message(inputs, allowed)

    def dtype_message(self, named: Sequence, name: str, tv: str, dtype: Any, allowed: Collection[str],
                      context: Any) -> str:
        return (f"onnx {self.name}-{context.since}: input {name} must be one of {', '.join(sorted(allowed))} "
                f"({tv}); got {onnx_type(dtype)}")


# --------------------------------------------------------------------------- THE table

_LEGACY, _NUMPY, _NONE = "onnx-legacy", "numpy", "none"
_AB = (("A", "T"), ("B", "T"))
_DIRECTION = Attr("direction", ("LEFT", "RIGHT"), required=True)
_GEMM_ATTRS = (Attr("alpha", "float", 1.0), Attr("beta", "float", 1.0),
               Attr("transA", "flag", 0), Attr("transB", "flag", 0))


def _arith(name, kernel):
    """Add, Sub, Mul, Div: the same versions."""
    return Op(name, _AB, "T", (
        _v(1, _LEGACY, T=FLOATS),
        _v(6, _LEGACY, T=FLOATS | INT32_64),
        _v(7, _NUMPY, T=FLOATS | INT32_64),
        _v(13, _NUMPY, T=FLOATS | INT32_64 | BF16),
        _v(14, _NUMPY, T=FLOATS | INTS | BF16),
    ), kernel)


def _bitwise(name, ufunc):
    return Op(name, _AB, "T", (_v(18, _NUMPY, T=INTS),), K.ufunc(ufunc))


def _logical(name, ufunc):
    return Op(name, _AB, "T1", (_v(1, _LEGACY, T=BOOL, T1=BOOL), _v(7, _NUMPY, T=BOOL, T1=BOOL)),
              K.ufunc(ufunc))


def _order(name, ufunc):
    """Greater, Less."""
    return Op(name, _AB, "T1", (
        _v(1, _LEGACY, T=FLOATS, T1=BOOL),
        _v(7, _NUMPY, T=FLOATS, T1=BOOL),
        _v(9, _NUMPY, T=FLOATS | INTS, T1=BOOL),
        _v(13, _NUMPY, T=FLOATS | INTS | BF16, T1=BOOL),
    ), K.ufunc(ufunc))


def _order_eq(name, ufunc):
    """GreaterOrEqual, LessOrEqual."""
    return Op(name, _AB, "T1", (
        _v(12, _NUMPY, T=FLOATS | INTS, T1=BOOL),
        _v(16, _NUMPY, T=FLOATS | INTS | BF16, T1=BOOL),
    ), K.ufunc(ufunc))


def _extremum(name, kernel):
    """Max, Min: variadic."""
    return Op(name, (("data_0", "T"),), "T", (
        _v(1, _NONE, T=FLOATS), _v(6, _NONE, T=FLOATS), _v(8, _NUMPY, T=FLOATS),
        _v(12, _NUMPY, T=FLOATS | INTS), _v(13, _NUMPY, T=FLOATS | INTS | BF16),
    ), kernel, variadic=True)


def _accumulate(name, kernel):
    """Sum, Mean: variadic, floats only."""
    return Op(name, (("data_0", "T"),), "T", (
        _v(1, _NONE, T=FLOATS), _v(6, _NONE, T=FLOATS), _v(8, _NUMPY, T=FLOATS),
        _v(13, _NUMPY, T=FLOATS | BF16),
    ), kernel, variadic=True)


_OP_LIST = (
    _arith("Add", K.ufunc(np.add)),
    _arith("Sub", K.ufunc(np.subtract)),
    _arith("Mul", K.ufunc(np.multiply)),
    _arith("Div", K.div),
    Op("Pow", (("X", "T"), ("Y", "T1")), "T", (
        _v(1, _LEGACY, T=FLOATS),  # before opset 12 X and Y share T
        _v(7, _NUMPY, T=FLOATS),
        _v(12, _NUMPY, T=FLOATS | {"int32", "int64"}, T1=FLOATS | INTS),
        _v(13, _NUMPY, T=FLOATS | {"int32", "int64"} | BF16, T1=FLOATS | INTS),
        _v(15, _NUMPY, T=FLOATS | {"int32", "int64"} | BF16, T1=FLOATS | INTS | BF16),
    ), K.power),
    Op("Mod", _AB, "T", (
        _v(10, _NUMPY, T=FLOATS | INTS),
        _v(13, _NUMPY, T=FLOATS | INTS | BF16),
        _v(28, _NUMPY, T=FLOATS | INTS | BF16),  # floats with fmod=0 from here
    ), K.mod, attrs=(Attr("fmod", "flag", 0),), check=K.check_mod),
    Op("BitShift", (("X", "T"), ("Y", "T")), "T", (
        _v(11, _NUMPY, T=UINTS),
        _v(28, _NUMPY, T=INTS),
    ), K.bitshift, attrs=(_DIRECTION,)),
    _bitwise("BitwiseAnd", np.bitwise_and),
    _bitwise("BitwiseOr", np.bitwise_or),
    _bitwise("BitwiseXor", np.bitwise_xor),
    _logical("And", np.logical_and),
    _logical("Or", np.logical_or),
    _logical("Xor", np.logical_xor),
    Op("Equal", _AB, "T1", (
        _v(1, _LEGACY, T=BOOL | {"int32", "int64"}, T1=BOOL),
        _v(7, _NUMPY, T=BOOL | {"int32", "int64"}, T1=BOOL),
        _v(11, _NUMPY, T=BOOL | FLOATS | INTS, T1=BOOL),
        _v(13, _NUMPY, T=BOOL | FLOATS | INTS | BF16, T1=BOOL),
        _v(19, _NUMPY, T=BOOL | FLOATS | INTS | BF16 | {"string"}, T1=BOOL),
    ), K.ufunc(np.equal)),
    _order("Greater", np.greater),
    _order_eq("GreaterOrEqual", np.greater_equal),
    _order("Less", np.less),
    _order_eq("LessOrEqual", np.less_equal),
    _extremum("Max", K.maximum),
    _extremum("Min", K.minimum),
    _accumulate("Mean", K.mean),
    _accumulate("Sum", K.sum_),
    Op("Where", (("condition", "B"), ("X", "T"), ("Y", "T")), "T", (
        _v(9, _NUMPY, B=BOOL, T=ALL),
        _v(16, _NUMPY, B=BOOL, T=ALL | BF16),
    ), K.where),
    Op("Gemm", (("A", "T"), ("B", "T"), ("C", "T")), "T", (
        _v(1, "gemm-legacy", T=FLOATS),
        _v(6, "gemm-legacy", T=FLOATS),
        _v(7, "onnx-gemm", T=FLOATS),
        _v(9, "onnx-gemm", T=FLOATS | INT32_64),
        _v(11, "onnx-gemm", T=FLOATS | INT32_64),  # C optional from here
        _v(13, "onnx-gemm", T=FLOATS | INT32_64 | BF16),
    ), attrs=_GEMM_ATTRS, optional=1, optional_since=11, runner=K.gemm),
    Op("PRelu", (("X", "T"), ("slope", "T")), "T", (
        _v(1, "prelu-legacy", T=FLOATS),
        _v(6, "prelu-legacy", T=FLOATS),
        _v(7, "unidirectional", T=FLOATS),
        _v(9, "unidirectional", T=FLOATS | INT32_64),
        _v(16, "unidirectional", T=FLOATS | INT32_64 | BF16),
    ), K.prelu),
    Op("Expand", (("input", "T"), ("shape", "tensor(int64)")), "T", (
        _v(8, "bidirectional", T=ALL),
        _v(13, "bidirectional", T=ALL | BF16),
    ), runner=K.expand, shape_input=1, views=True),
)

#: Every op bcast runs, by ONNX name.
OPS: dict[str, Op] = {op.name: op for op in _OP_LIST}
assert len(OPS) == len(_OP_LIST), "op names must be unique"
for _op in _OP_LIST:  # sanity: versions ascend, every input's type variable is constrained
    assert [v.since for v in _op.versions] == sorted({v.since for v in _op.versions}), _op.name
    assert all(tv in v.types or tv.startswith("tensor(") or "T" in v.types
               for v in _op.versions for _, tv in _op.inputs), _op.name


def ops() -> tuple:
    """The names of the ops :func:`run` takes.

    >>> "Gemm" in ops() and "Expand" in ops()
    True
    """
    return tuple(OPS)


def _get(op: Any) -> Op:
    if not isinstance(op, str) or op not in OPS:
        raise InputError(f"onnx: unknown op {brief(op)}; the ops are: {', '.join(OPS)}")
    return OPS[op]


def type_constraints(op: str, opset: int | None = None) -> dict:
    """The allowed ONNX type names of each type variable of ``op`` at ``opset``
    (the table's row; ``onnx.defs.get_schema(op, opset).type_constraints`` in onnx).

    >>> sorted(type_constraints("BitShift", 11)["T"])
    ['uint16', 'uint32', 'uint64', 'uint8']
    """
    return dict(_get(op).version(opset).types)


# --------------------------------------------------------------------------- checks


def _check_attrs(op: Op, version: Version, attrs: dict) -> dict:
    known = {a.name: a for a in op.attributes(version)}
    for key in attrs:
        if key not in known:
            allowed = ", ".join(known) or "none"
            raise InputError(f"onnx {op.name}-{version.since}: no attribute {key!r} (its attributes: {allowed})")
    return {name: a.check(op.name, attrs.get(name)) for name, a in known.items()}


def _as_array(op: Op, name: str, x: Any) -> np.ndarray:
    if isinstance(x, np.generic):
        return np.asarray(x)
    if not isinstance(x, np.ndarray):
        raise InputError(
            f"onnx {op.name}: input {name} must be a numpy array, got {type(x).__name__} {brief(x)} "
            "(ONNX has no Python scalars: a scalar is an array of shape (), e.g. np.array(2, np.float32))"
        )
    return x


def _type_var(version: Version, tv: str) -> tuple:
    """The allowed types of type variable ``tv`` (or of a fixed type such as
    ``tensor(int64)``), and the variable it resolves to: Pow before opset 12
    has only ``T``, so its ``T1`` is ``T``."""
    if tv.startswith("tensor("):
        return tv, frozenset({tv[len("tensor("):-1]})
    tv = tv if tv in version.types else "T"
    return tv, version.types[tv]


def _check_types(op: Op, version: Version, arrays: list, attrs: dict) -> np.dtype:
    """ONNX's type rules; returns the output dtype."""
    n = len(arrays)
    named, allowed = [], {}
    for name, tv, x in zip(op.input_names(n), op.type_vars(n), arrays):
        tv, allowed[tv] = _type_var(version, tv)
        named.append((name, tv, x.dtype))
    # type variable -> (input name, dtype) of its first input; object for ONNX's string of two numpy lengths
    first = op.check_dtypes(named, allowed, type_name=onnx_type, key=onnx_type, context=version)
    if op.check is not None:
        op.check(version, arrays, attrs)
    if op.output not in first:  # a bool-only output type variable (comparisons, And/Or/Xor)
        return np.dtype(bool)
    return first[op.output][1]


# --------------------------------------------------------------------------- plans


def _shapes(op: Op, arrays: list) -> tuple:
    """The shapes the rule sees: each input's shape, but the values of a shape input (Expand's)."""
    shapes = [x.shape for x in arrays]
    if op.shape_input is not None:
        target = arrays[op.shape_input]
        if target.ndim != 1:
            raise InputError(f"onnx {op.name}: input {op.input_names(len(arrays))[op.shape_input]} must be a 1-D "
                             f"int64 array, got one of shape {target.shape}")
        dims = tuple(int(d) for d in target)
        if any(d < 0 for d in dims):
            raise InputError(f"onnx {op.name}: input {op.input_names(len(arrays))[op.shape_input]} must not have "
                             f"negative dims; got {list(dims)}")
        shapes[op.shape_input] = dims
    return tuple(shapes)


def _plan(op: Op, version: Version, shapes: tuple, attrs: dict) -> Plan:
    names = op.input_names(len(shapes))
    rule = version.rule
    if rule == "onnx-legacy":
        return infer(*shapes, rule=rule, names=names, broadcast=attrs["broadcast"], axis=attrs["axis"])
    if rule in ("onnx-gemm", "gemm-legacy"):
        plan = infer(*shapes, rule="onnx-gemm", names=names, transA=attrs["transA"], transB=attrs["transB"])
        if rule == "gemm-legacy" and len(shapes) == 3 and not attrs["broadcast"]:  # broadcast=0: C is (M, N)
            infer(plan.shape, shapes[2], rule="none", names=("A*B", "C"))
        return plan
    if rule == "prelu-legacy":  # PRelu-1/6: a one-element slope is shared; else the shapes are equal
        one = all(d == 1 for d in shapes[1]) and len(shapes[1]) <= len(shapes[0])
        return infer(*shapes, rule="unidirectional" if one else "none", names=names)
    return infer(*shapes, rule=rule, names=names)


def plan(op: str, *shapes, opset: int | None = None, **attrs) -> Plan:
    """The :class:`~bcast.core.plan.Plan` of ``op`` on inputs of ``shapes`` (no arrays).

    For Expand the second "shape" is the shape input's values (the target).

    >>> print(plan("Add", (2, 3, 4, 5), (3, 4), opset=6, broadcast=1, axis=1))
    onnx-legacy: A (2,3,4,5), B (3,4) -> (2,3,4,5)
    >>> plan("Gemm", (3, 4), (5, 4), (5,), transB=1).shape
    (3, 5)
    """
    o = _get(op)
    version = o.version(opset)
    checked = _check_attrs(o, version, attrs)
    o.check_arity(shapes, o.arity(version))
    return _plan(o, version, shapes, checked)


# --------------------------------------------------------------------------- running


def run(op: str, *inputs, opset: int | None = None, out=None, materialize: bool = True, **attrs):
    """Run the ONNX op ``op`` on numpy arrays, with ONNX's broadcasting and types.

    Parameters
    ----------
    op : str
        One of :func:`ops`.
    *inputs : numpy.ndarray
        The op's inputs, in ONNX's order (Sum, Max, Min, Mean: one or more).
    opset : int, optional
        The opset version (default: the newest, :data:`LATEST_OPSET`).  Below 7
        the legacy forms run: ``broadcast``/``axis`` for the binary ops.
    out : numpy.ndarray, optional
        Where to write the result: exactly the output's shape and dtype.
    materialize : bool
        Expand only: ``False`` returns a read-only stride-0 view of the input
        instead of a new array (nothing is allocated, whatever the size).
    **attrs
        The op's attributes (``fmod``, ``direction``, ``alpha``, ``beta``,
        ``transA``, ``transB``, legacy ``broadcast`` and ``axis``).

    Returns
    -------
    numpy.ndarray
        The output, of ONNX's output type.

    Raises
    ------
    BroadcastError
        The shapes do not broadcast under the op's rule at that opset.
    InputError
        Unknown op, wrong number of inputs, a bad attribute, a type the op does
        not take, inputs that must share a type and do not, a non-array input,
        an ``out=`` of the wrong shape or dtype.
    MemoryBudgetError
        The output would not fit the memory budget (nothing is allocated).

    Examples
    --------
    >>> import numpy as np
    >>> run("Mod", np.array([-7, 7], np.int64), np.array([3, -3], np.int64))
    array([ 2, -2])
    >>> run("Where", np.array([True, False]), np.array([1.0], np.float32), np.array([[5.0], [6.0]], np.float32))
    array([[1., 5.],
           [1., 6.]], dtype=float32)
    """
    if len(inputs) == 2 and opset is None and not attrs and materialize is True:
        a, b = inputs  # the commonest call, looked up inline: one dict lookup, then the ufunc (or the runner)
        if type(a) is _ndarray and type(b) is _ndarray:
            try:
                key = (op, a.dtype, a.shape, b.dtype, b.shape)
                f = _NATURAL_GET(key) if out is None else _FAST_GET(key)
            except TypeError:  # an unhashable op: the full path says what is wrong
                f = None
            if out is not None:
                if f is not None and f is not _fast.MISS:
                    return f(inputs, out)
            elif f is not None:
                return f(a, b)
    if opset is None and not attrs and materialize is True:  # prepared calls: one dict lookup, then the kernel
        result = _fast_run(op, inputs, out)
        if result is not _fast.MISS:
            return result
    o = _get(op)
    version = o.version(opset)
    _check_materialize(o, materialize, out)
    checked = _check_attrs(o, version, attrs)
    o.check_arity(inputs, o.arity(version))
    arrays = _as_arrays(o, inputs)
    dtype = _check_types(o, version, arrays, checked)
    p = _plan(o, version, _shapes(o, arrays), checked)
    if not materialize:
        return view(arrays[0], p, 0)
    if o.runner is not None:
        if out is not None and isinstance(out, np.ndarray) and overlaps(out, arrays):  # Gemm reads C after A @ B
            check_out(out, p.shape, dtype)
            np.copyto(out, reserved_call(o.runner, p, arrays, None, dtype, checked))
            return out
        return reserved_call(o.runner, p, arrays, out, dtype, checked)  # its allocations' reservations end here
    return run_plan(p, _views_kernel(o, p.shape, dtype, _kernel_attrs(o, checked)), arrays, out=out, dtype=dtype)


# run() has no comprehension nor closure of its own: in it they would make cells on every call
def _as_arrays(o: Op, inputs) -> list:
    return [_as_array(o, name, x) for name, x in zip(o.input_names(len(inputs)), inputs)]


def _kernel_attrs(o: Op, checked: dict) -> dict:
    return {a.name: checked[a.name] for a in o.attrs}


def _views_kernel(o: Op, shape: tuple, dtype, kernel_attrs: dict) -> Callable:
    """``o``'s kernel as run_plan calls it: ``f(*views, out=None)``."""
    kernel = o.kernel
    assert kernel is not None  # (only ops with a kernel run through here)

    def func(*views, out=None):
        if out is None:
            out = np.empty(shape, dtype)
        kernel(list(views), out, **kernel_attrs)
        return out

    # every kernel computes each element from the same elements of the inputs; some are a ufunc (or a compiled
    # loop's function, bcast.run.kernel.LOOPS): the kernel's own marks, for bcast.run._kernels
    spec = ufunc_of(kernel)
    return elementwise(func, None if spec is None else spec[0], swapped=spec is not None and spec[1],
                       loop=loop_of(kernel))


def _check_materialize(op: Op, materialize: Any, out) -> None:
    if not isinstance(materialize, (bool, np.bool_)):
        raise InputError(f"onnx {op.name}: materialize must be True or False, got {brief(materialize)}")
    if not materialize and not op.views:
        raise InputError(f"onnx {op.name}: materialize=False is for Expand only (the other ops compute values)")
    if not materialize and out is not None:
        raise InputError(f"onnx {op.name}: out= and materialize=False do not go together (a view writes nothing)")


# --------------------------------------------------------------------------- prepared calls
#
# Every check run() makes depends only on the op, the dtypes and the shapes
# when there are no attributes and no opset: it is done once per such key and
# the outcome kept (a runner, bcast.run._fast.runner).  A small op then costs a
# dict lookup and its kernel; a large one the checks of out= and of the memory
# budget, and its kernel.


_FAST = _fast.cache()  # (op, dtype, shape, dtype, shape...) -> runner, or MISS
_FAST_GET = _FAST.get
_ndarray = np.ndarray
# two small inputs that numpy broadcasts as ONNX does, no out=: (op, dtype, shape, dtype, shape) -> the ufunc
# whose own result is ONNX's (with warnings off where it may warn on them: run._fast.quieted); run() looks it up
# inline: the whole call is this lookup and the ufunc.  Two large inputs: their runner, called f(a, b)
_NATURAL = _fast.cache()
_NATURAL_GET = _NATURAL.get


def _fast_run(op, inputs, out):
    """Run a call without attributes or opset through its runner; :data:`bcast.run._fast.MISS`
    when it has none (then the full path runs, and raises what is wrong)."""
    fast = _fast_prepare(op, inputs)
    return _fast.MISS if fast is _fast.MISS else fast(inputs, out)


def _fast_prepare(op, inputs):
    """The runner (:func:`bcast.run._fast.runner`) of a call without attributes or opset, or MISS
    (then the full path runs, and raises what is wrong); remembered for its key."""
    key = _fast.key(op, inputs)
    if key is None or type(op) is not str:
        return _fast.MISS
    fast = _FAST_GET(key)
    if fast is not None:
        return fast
    try:
        fast = _fast_build(op, inputs, key)
    except (InputError, ValueError):  # BroadcastError is a ValueError
        fast = _fast.MISS
    _FAST.put(key, fast)
    return fast


def _fast_build(op, inputs, key):
    o = _get(op)
    version = o.version(None)
    if o.runner is not None or o.shape_input is not None or o.kernel is None:
        return _fast.MISS
    checked = _check_attrs(o, version, {})
    o.check_arity(inputs, o.arity(version))
    dtype = _check_types(o, version, list(inputs), checked)
    prepared = _fast.prepared(_plan(o, version, tuple(x.shape for x in inputs), checked))
    if prepared.small and prepared.reshapes is None:
        return _fast.MISS
    dtypes = tuple(x.dtype for x in inputs)
    f = natural_ufunc(o.kernel, dtypes)
    # natural: the ufunc's own result is ONNX's; not at rank 0, where a ufunc gives a numpy scalar, not an array
    natural = f is not None and prepared.plan.shape != () \
        and _fast.quiet(f, *(np.zeros(1, x.dtype) for x in inputs)).dtype == dtype
    # (not float16: its small calls take the compiled loop, where numpy converts each element)
    if natural and prepared.native and prepared.small and len(inputs) == 2 and dtype != np.float16:
        _NATURAL.put(key, f if _fast.silent(f, dtypes) else _fast.quieted(f))
    kernel_attrs = _kernel_attrs(o, checked)
    runner = _fast.runner(prepared, partial(o.kernel, **kernel_attrs), dtype, f, natural, dtypes=dtypes,
                          func=_views_kernel(o, prepared.plan.shape, dtype, kernel_attrs))
    if not prepared.small and len(inputs) == 2 and runner is not _fast.MISS:  # run() looks it up inline too
        _NATURAL.put(key, lambda a, b: runner((a, b), None))
    return runner
