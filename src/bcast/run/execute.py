"""Running a Plan on arrays: reshape by the axis map, a stride-0 view, the op.

Every broadcasting op in bcast runs the same way.  The rule gives a
:class:`~bcast.core.plan.Plan`; input ``i`` is reshaped to
:meth:`Plan.aligned_shape(i) <bcast.core.plan.Plan.aligned_shape>` (only size-1
axes are inserted or dropped, so this is always a view), then viewed at the
output shape with stride 0 along the stretched axes.  No broadcast input is
ever copied; the op writes the output once.

Arrays are numpy arrays, or arrays of any library that implements the array
API standard (through ``array-api-compat``, an optional dependency).  Dask
arrays stay lazy: nothing is computed until the caller asks, which is the
path for data larger than one machine's memory.

Before anything is allocated, the output's size is checked against a memory
budget (:func:`memory_budget`, in :mod:`bcast.run._budget`): by default half of the
memory available (the cgroup's limit included), or ``BCAST_MEMORY_BUDGET``
(bytes, ``8GiB``, ``500MB``, or ``25%`` of the available memory), or
:func:`set_memory_budget`, or a block's :func:`memory_budget_set`.  The budget
is shared by every thread: the outputs of the calls in progress count.
A ``BCAST_MEMORY_BUDGET`` that is none of these fails when this module loads
(an :class:`~bcast.core.errors.InputError`), whatever the size of the first op.

>>> import numpy as np
>>> a = np.arange(6.0).reshape(2, 3)
>>> apply("add", a, np.array([10.0, 20.0]), rule="pdpd", axis=0)
array([[10., 11., 12.],
       [23., 24., 25.]])
"""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable

import numpy as np

from . import _fast, parallel
from .out import check_out, is_numpy, overlaps
from ..core._format import brief, format_shape
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..core.shapes import static
from ..rules import infer

__all__ = [
    "MemoryBudgetError",
    "apply",
    "broadcast_arrays",
    "check_memory",
    "check_out",
    "materialize",
    "output",
    "memory_budget",
    "memory_budget_set",
    "memory_reserved",
    "namespace",
    "overlaps",
    "run_plan",
    "set_memory_budget",
    "view",
]

# the memory budget lives in _budget (one budget for every thread: reservations, cgroups, contexts)
from ._budget import (  # noqa: F401 - re-exported: the executor's public names for the budget
    AVAILABLE_TTL,
    DEFAULT_FRACTION,
    MemoryBudgetError,
    available_memory,
    check_memory,
    format_bytes,
    memory_budget,
    memory_budget_set,
    memory_reserved,
    parse_bytes,
    reserved_call,
    reserving,
    set_memory_budget,
)


# --------------------------------------------------------------------------- array namespaces


def namespace(*arrays: Any):
    """The array namespace of ``arrays``: numpy for numpy arrays and Python
    scalars, else the array API namespace (array-api-compat's wrapper where
    the library needs one: dask, torch, cupy...)."""
    if all(is_numpy(x) or isinstance(x, (int, float, bool, complex)) for x in arrays):
        return np
    others = [x for x in arrays if not is_numpy(x) and not isinstance(x, (int, float, bool, complex))]
    try:
        import array_api_compat
    except ImportError:
        own = {type(x).__array_namespace__(x) for x in others if hasattr(x, "__array_namespace__")}
        if len(own) == 1 and len(others) == len(arrays):
            return own.pop()
        raise InputError(
            f"cannot run on {type(others[0]).__module__}.{type(others[0]).__name__} arrays without "
            "array-api-compat: pip install 'bcast[array]'"
        ) from None
    try:
        return array_api_compat.array_namespace(*arrays)
    except TypeError as e:
        raise InputError(f"cannot run on these arrays together: {e}") from None


def _shape(x: Any) -> tuple:
    shape = getattr(x, "shape", None)
    if shape is None:
        if isinstance(x, (int, float, bool, complex)):
            return ()
        raise InputError(f"expected an array, got {type(x).__name__} {brief(x)}")
    try:
        return tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise InputError(
            f"an array of unknown shape {shape!r} (compute it first, e.g. dask's compute_chunk_sizes)") from None


# --------------------------------------------------------------------------- the executor


_MAX_ELEMENTS = np.iinfo(np.intp).max


def view(x: Any, plan: Plan, i: int, xp=None):
    """Input ``i`` of ``plan`` (the array ``x``) as a read-only view of the output shape.

    ``x`` is reshaped to ``plan.aligned_shape(i)`` -- size-1 axes inserted
    where it has none, dropped where the rule drops them -- then broadcast
    (stride 0) to ``plan.shape``; a transposing plan (StableHLO's broadcast_in_dim:
    :meth:`Plan.transposition <bcast.core.plan.Plan.transposition>`) transposes it
    first.  Never a copy for numpy arrays.
    """
    xp = np if xp is None else xp
    aligned = plan.aligned_shape(i)
    order = plan.transposition(i)
    if order is not None:
        x = np.asarray(x).transpose(order) if xp is np else xp.permute_dims(x, order)
    shape = static(plan.shape)
    if xp is np:
        if math.prod(shape) > _MAX_ELEMENTS:
            raise InputError(
                f"{plan.rule}: the output {format_shape(shape)} has {math.prod(shape):.3g} elements, "
                "more than a numpy array can have, even as a view (2**63 - 1)"
            )
        x = np.asarray(x)
        if x.shape != aligned:
            x = x.reshape(aligned)
        return np.broadcast_to(x, shape)
    if tuple(x.shape) != aligned:
        x = xp.reshape(x, aligned)
    return xp.broadcast_to(x, plan.shape)


def output(shape: tuple, dtype: Any, out=None):
    """``out`` checked against ``shape`` and ``dtype``, or a new empty numpy
    array, allocated only after the memory check."""
    if out is not None:
        check_out(out, shape, dtype)
        return out
    check_memory(shape, dtype)
    return np.empty(shape, dtype)


def materialize(x: Any, plan: Plan, i: int, out=None):
    """Input ``i`` of ``plan`` copied out at the output shape (into ``out``, or
    a new array after the memory check).  :func:`view` is the copy-free form."""
    x = np.asarray(x)
    result = output(plan.shape, x.dtype, out)
    np.copyto(result, view(x, plan, i))
    return result


@reserving  # its outputs' reservations last until it returns
def run_plan(plan: Plan, func: Callable | str, arrays, *, out=None, dtype=None):
    """Apply ``func`` to the views of ``arrays`` (one per plan input).

    ``func`` is a callable taking the views (and ``out=`` when given) -- a
    numpy ufunc, say -- or the name of an array API function (``"add"``).
    ``dtype`` is the output dtype, used for the memory check and to check
    ``out=`` (default: numpy's result type of the inputs).  Large outputs are
    computed by threads (:mod:`bcast.run.parallel`) when ``func`` is element-wise.
    """
    arrays = list(arrays)
    if len(arrays) != len(plan.inputs):
        raise InputError(f"{plan.rule}: the plan has {len(plan.inputs)} inputs, got {len(arrays)} arrays")
    xp = namespace(*arrays)
    lazy = _is_lazy(arrays)
    f = _function(xp, func)
    if type(f) is np.ufunc and f.nin != len(arrays):  # numpy would take the extra arrays as outputs
        raise InputError(f"{f.__name__} takes {f.nin} input{'s' * (f.nin != 1)}, got {len(arrays)} arrays")
    if xp is np:
        arrays = _weak_scalars(f, arrays)
    if out is not None:
        if lazy:
            raise InputError("out= cannot be used with lazy (dask) arrays: the result is itself lazy")
        check_out(out, plan.shape, dtype)
    elif not lazy:
        check_memory(plan.shape, _result_dtype(arrays, dtype))
    if isinstance(out, np.ndarray) and xp is np and type(f) is not np.ufunc and overlaps(out, arrays):
        # a kernel of several steps would read an input it has already overwritten: computed into a
        # temporary, then copied, as numpy does for a ufunc's overlapping out= (numpy's own ufuncs do it)
        check_memory(plan.shape, out.dtype, what="a temporary for an out= that overlaps an input")
        np.copyto(out, run_plan(plan, f, arrays, out=np.empty(static(plan.shape), out.dtype), dtype=dtype))
        return out
    views = [view(x, plan, i, xp) for i, x in enumerate(arrays)]
    try:
        if xp is np and not lazy:  # large element-wise ops: chunks of the output in threads
            result = parallel.try_run(f, views, out, dtype)
            if result is not None:
                return result
        if out is not None:
            return f(*views, out=out)
        result = f(*views)
        return _fast.rank0_arrays(result)  # rank 0: an array, not a scalar (each of a tuple's too)
    except (BroadcastError, InputError):  # a kernel's own refusal (openvino's integer division by zero...)
        raise
    except (TypeError, ValueError) as e:  # numpy: a ufunc that does not take these dtypes (or values: integers
        raise InputError(f"{getattr(f, '__name__', f)}: {e}") from None  # to negative powers), an out= it cannot take
    except Exception as e:  # a ufunc's object loop calls the elements' own methods: they raise anything
        error = _fast.element_error(f, e, views)
        if error is e:
            raise
        raise error from None


_WEAK = (int, float, complex)


def _weak_scalars(f: Callable, arrays: list) -> list:
    """Python scalars as 0-d arrays of the type numpy gives them in the ufunc ``f`` (NEP 50:
    ``int8_array + 1`` is int8), so that their views promote as the scalars do.

    >>> [x.dtype for x in _weak_scalars(np.add, [np.ones(2, np.int8), 1])]
    [dtype('int8'), dtype('int8')]
    """
    if type(f) is not np.ufunc or f.nin != len(arrays) or not any(type(x) in _WEAK for x in arrays):
        return arrays
    try:
        loop = f.resolve_dtypes(tuple(type(x) if type(x) in _WEAK else np.asarray(x).dtype for x in arrays)
                                + (None,) * f.nout)
    except (TypeError, ValueError):  # no loop: the call raises, and says why
        return arrays
    try:
        return [np.asarray(x, loop[i]) if type(x) in _WEAK else x for i, x in enumerate(arrays)]
    except OverflowError as e:  # numpy: "Python integer 1000 out of bounds for int8"
        raise InputError(f"{f.__name__}: {e}") from None


def _function(xp, func: Callable | str) -> Callable:
    if not isinstance(func, str):
        if not callable(func):
            raise InputError(f"func must be callable or the name of an array API function, got {brief(func)}")
        return func
    f = getattr(xp, func, None)
    if not callable(f):
        raise InputError(f"{xp.__name__} has no function {func!r} (give an array API name such as 'add' or 'multiply')")
    return f


def _is_lazy(arrays) -> bool:
    return any(type(x).__module__.startswith("dask.") for x in arrays)


def _result_dtype(arrays, dtype):
    if dtype is not None:
        return dtype
    try:
        # another library's dtype: numpy's of the same name (torch.float32 -> float32)
        return np.result_type(*[x if is_numpy(x) or isinstance(x, (int, float, bool, complex))
                                else np.dtype(str(x.dtype).rsplit(".", 1)[-1]) for x in arrays])
    except TypeError:
        return np.float64  # a dtype numpy does not know: size the check for 8 bytes an element


def _as_arrays(arrays: tuple) -> tuple:
    """``arrays`` with every array-like that is not an array (a list, a tuple, an object with
    ``__array__``) made a numpy array, as numpy's functions take them; arrays and Python scalars stay."""
    if all(hasattr(x, "shape") or isinstance(x, (int, float, bool, complex)) for x in arrays):
        return arrays
    out = []
    for x in arrays:
        if not (hasattr(x, "shape") or isinstance(x, (int, float, bool, complex))):
            if isinstance(x, (str, bytes, dict, set)) or x is None:
                raise InputError(f"expected an array or an array-like, got {type(x).__name__} {brief(x)}")
            try:
                x = np.asarray(x)
            except (ValueError, TypeError) as e:  # a ragged list
                raise InputError(f"expected an array or an array-like, got {type(x).__name__} {brief(x)}: "
                                 f"{str(e).splitlines()[0]}") from None
        out.append(x)
    return tuple(out)


def _plan(arrays, rule, names, attrs) -> Plan:
    if attrs.get("ncnn_order"):
        raise InputError("ncnn_order applies to shapes written in ncnn's order; arrays are always in numpy order")
    return infer(*(_shape(x) for x in arrays), rule=rule, names=names, **attrs)


def broadcast_arrays(*arrays, rule: str = "numpy", names=None, **attrs) -> list:
    """Views of ``arrays`` at the output shape of ``rule`` (read-only, stride 0).

    >>> import numpy as np
    >>> [v.shape for v in broadcast_arrays(np.ones((4, 3, 2)), np.ones(4), rule="ncnn")]
    [(4, 3, 2), (4, 3, 2)]
    """
    arrays = _as_arrays(arrays)
    plan = _plan(arrays, rule, names, attrs)
    xp = namespace(*arrays)
    return [view(x, plan, i, xp) for i, x in enumerate(arrays)]


_NATURAL_GET: Callable[[Any], Any] = _fast.NATURAL_GET  # a miss is None
_LARGE_GET: Callable[[Any], Any] = _fast.LARGE.get  # (func, rule, dtype, dtype, shape, dtype, shape) -> runner


def apply(func: Callable | str, *arrays, rule: str = "numpy", out=None, dtype=None, names=None, **attrs):
    """Broadcast ``arrays`` under ``rule`` and apply ``func`` element-wise.

    Parameters
    ----------
    func : callable or str
        A numpy ufunc (or any callable on same-shape arrays that takes
        ``out=``), or the name of an array API function such as ``"add"``,
        ``"multiply"``, ``"maximum"``, looked up in the arrays' namespace.
    *arrays
        numpy arrays, or arrays of one array-API library (dask stays lazy), or
        array-likes (lists, tuples, Python scalars: made numpy arrays, as numpy does).
    rule, names, **attrs
        As for :func:`bcast.infer`.
    out : array, optional
        Where to write the result; must have the output shape.
    dtype : optional
        The output dtype, for the memory check (default: numpy's result type).

    Raises
    ------
    BroadcastError
        The shapes do not broadcast under the rule.
    MemoryBudgetError
        The output would exceed the memory budget (nothing is allocated).
    """
    if names is None and not attrs:  # small ufunc calls on numpy arrays: almost as fast as the ufunc
        if out is None and len(arrays) == 2:  # the commonest call, looked up inline
            a, b = arrays
            if type(a) is np.ndarray and type(b) is np.ndarray and a.itemsize <= 16 and b.itemsize <= 16:
                try:
                    f = _NATURAL_GET((func, rule, a.shape, b.shape))
                    if f is not None:
                        return f(a, b)
                except (TypeError, ValueError):  # an unhashable func, dtypes or values the ufunc refuses (the
                    pass  # full path says so)
                except Exception as e:  # the entry is by shapes: object arrays whose elements fail reach it too
                    error = _fast.element_error(_fast.ufunc(func), e, arrays)
                    if error is e:
                        raise
                    raise error from None
        if len(arrays) == 2 and type(arrays[0]) is np.ndarray and type(arrays[1]) is np.ndarray:
            a, b = arrays  # a prepared call of any size, looked up inline
            try:
                run = _LARGE_GET((func, rule, dtype, a.dtype, a.shape, b.dtype, b.shape))
            except TypeError:  # an unhashable func, rule or dtype: the full path
                run = None
            if run is not None and run is not _fast.MISS:
                return run(arrays, out)
        arrays = _as_arrays(arrays)
        result = _fast.apply_small(func, arrays, rule, out, dtype)
        if result is not _fast.MISS:
            return result
        result = _fast.apply_large(func, arrays, rule, out, dtype)  # a ufunc at any size, prepared
        if result is not _fast.MISS:
            return result
    else:
        arrays = _as_arrays(arrays)
    plan = _plan(arrays, rule, names, attrs)
    return run_plan(plan, func, arrays, out=out, dtype=dtype)
