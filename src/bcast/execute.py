"""Running a Plan on arrays: reshape by the axis map, a stride-0 view, the op.

Every broadcasting op in bcast runs the same way.  The rule gives a
:class:`~bcast.plan.Plan`; input ``i`` is reshaped to
:meth:`Plan.aligned_shape(i) <bcast.plan.Plan.aligned_shape>` (only size-1
axes are inserted or dropped, so this is always a view), then viewed at the
output shape with stride 0 along the stretched axes.  No broadcast input is
ever copied; the op writes the output once.

Arrays are numpy arrays, or arrays of any library that implements the array
API standard (through ``array-api-compat``, an optional dependency).  Dask
arrays stay lazy: nothing is computed until the caller asks, which is the
path for data larger than one machine's memory.

Before anything is allocated, the output's size is checked against a memory
budget (:func:`memory_budget`): by default half of the memory available when
the budget is first needed, or ``BCAST_MEMORY_BUDGET`` (bytes, ``8GiB``,
``500MB``, or ``25%`` of the available memory), or :func:`set_memory_budget`.

>>> import numpy as np
>>> a = np.arange(6.0).reshape(2, 3)
>>> apply("add", a, np.array([10.0, 20.0]), rule="pdpd", axis=0)
array([[10., 11., 12.],
       [23., 24., 25.]])
"""

from __future__ import annotations

import math
import os
import re
import time
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np

from . import _fast, parallel
from ._format import brief, format_shape
from .errors import BroadcastError, InputError
from .plan import Plan
from .rules import infer

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
    "namespace",
    "overlaps",
    "run_plan",
    "set_memory_budget",
    "view",
]

#: The default budget, as a fraction of the memory available.
DEFAULT_FRACTION = 0.5


class MemoryBudgetError(InputError, MemoryError):
    """An op's output would not fit in the memory budget; nothing was allocated.

    Attributes: ``shape``, ``dtype``, ``nbytes`` (the size asked for),
    ``budget`` (the budget in bytes), ``what`` (what was to be allocated).
    """

    def __init__(self, what: str, shape: tuple, dtype: Any, nbytes: int, budget: int) -> None:
        self.what, self.shape, self.dtype, self.nbytes, self.budget = what, shape, dtype, nbytes, budget
        super().__init__(
            f"{what} {format_shape(shape)} {np.dtype(dtype).name} needs {format_bytes(nbytes)}, "
            f"over the memory budget of {format_bytes(budget)} "
            "(set BCAST_MEMORY_BUDGET or bcast.set_memory_budget to change it); nothing was allocated"
        )

    def __reduce__(self):
        return (type(self), (self.what, self.shape, self.dtype, self.nbytes, self.budget))


# --------------------------------------------------------------------------- memory budget

_budget: int | None = None  # set explicitly; None = from the environment / available memory


def format_bytes(n: int) -> str:
    """``1536`` -> ``1.5 KiB``; ``3 * 2**40`` -> ``3.0 TiB``."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value:.3g} ZiB"


_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3, "t": 1000**4, "tb": 1000**4,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}


def parse_bytes(text: str) -> int:
    """A budget as written by a person: ``1000000``, ``8GiB``, ``500 MB``, ``25%`` (of available).

    >>> parse_bytes("8GiB"), parse_bytes("1.5k")
    (8589934592, 1500)
    """
    s = str(text).strip().lower()
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)\s*(%|[a-z]*)", s)
    if not m or (m.group(2) not in _UNITS and m.group(2) != "%"):
        raise InputError(f"bad memory budget {brief(text)}: give bytes, e.g. 8GiB, 500MB, 1000000, or a percentage, 25%")
    number = float(m.group(1))
    if m.group(2) == "%":
        if not 0 < number <= 100:
            raise InputError(f"bad memory budget {brief(text)}: a percentage must be in (0, 100]")
        return int(available_memory() * number / 100)
    return int(number * _UNITS[m.group(2)])


#: available_memory() re-reads the system's figure at most this often (seconds): reading /proc/meminfo
#: costs ~45 us, a tenth of a 12 MiB add
AVAILABLE_TTL = 0.1
_available = (-1.0, 0)  # (time.monotonic() when read, bytes)


def available_memory() -> int:
    """Bytes of memory available now (Linux: MemAvailable; elsewhere: free physical pages), as
    read at most :data:`AVAILABLE_TTL` seconds ago."""
    global _available
    now = time.monotonic()
    if now - _available[0] < AVAILABLE_TTL:
        return _available[1]
    found = _read_available()
    _available = (now, found)
    return found


def _read_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30  # no way to ask: assume a small machine


def memory_budget() -> int:
    """The budget, in bytes, that one output may take.

    In order: the value given to :func:`set_memory_budget`; the environment
    variable ``BCAST_MEMORY_BUDGET``; half the memory available now.
    """
    if _budget is not None:
        return _budget
    env = os.environ.get("BCAST_MEMORY_BUDGET")
    if env:
        return parse_bytes(env)
    return int(available_memory() * DEFAULT_FRACTION)


def set_memory_budget(budget: int | str | None) -> int | None:
    """Set the budget (bytes, or a string such as ``"2GiB"`` or ``"10%"``);
    ``None`` restores the default.  Returns the previous explicit setting."""
    global _budget
    previous = _budget
    if budget is None:
        _budget = None
    elif isinstance(budget, str):
        _budget = parse_bytes(budget)
    elif isinstance(budget, (int, np.integer)) and not isinstance(budget, bool) and budget >= 0:
        _budget = int(budget)
    else:
        raise InputError(f"bad memory budget {brief(budget)}: give a number of bytes >= 0 or a string such as 2GiB")
    return previous


@contextmanager
def memory_budget_set(budget: int | str | None):
    """``with memory_budget_set("1GiB"): ...`` -- a budget for one block."""
    previous = set_memory_budget(budget)
    try:
        yield memory_budget()
    finally:
        global _budget
        _budget = previous


def _dtype(dtype: Any) -> np.dtype:
    """``np.dtype(dtype)``, or an InputError naming what was given."""
    try:
        return np.dtype(dtype)
    except (TypeError, ValueError):
        raise InputError(f"dtype= must be a numpy dtype (e.g. np.float32 or 'int8'), got {brief(dtype)}") from None


def check_memory(shape: tuple, dtype: Any, *, what: str = "output") -> int:
    """Refuse (:class:`MemoryBudgetError`) an allocation of ``shape`` x ``dtype``
    over the budget; return its size in bytes.  Nothing is allocated here."""
    nbytes = math.prod(shape) * _dtype(dtype).itemsize
    if nbytes > 2**20:  # small outputs never need to ask the system
        budget = memory_budget()
        if nbytes > budget:
            raise MemoryBudgetError(what, tuple(shape), np.dtype(dtype), nbytes, budget)
    return nbytes


# --------------------------------------------------------------------------- array namespaces


def is_numpy(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic))


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
            "array-api-compat: pip install array-api-compat"
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
        raise InputError(f"an array of unknown shape {shape!r} (compute it first, e.g. dask's compute_chunk_sizes)") from None


# --------------------------------------------------------------------------- the executor


_MAX_ELEMENTS = np.iinfo(np.intp).max


def view(x: Any, plan: Plan, i: int, xp=None):
    """Input ``i`` of ``plan`` (the array ``x``) as a read-only view of the output shape.

    ``x`` is reshaped to ``plan.aligned_shape(i)`` -- size-1 axes inserted
    where it has none, dropped where the rule drops them -- then broadcast
    (stride 0) to ``plan.shape``.  Never a copy for numpy arrays.
    """
    xp = np if xp is None else xp
    aligned = plan.aligned_shape(i)
    if xp is np:
        if math.prod(plan.shape) > _MAX_ELEMENTS:
            raise InputError(
                f"{plan.rule}: the output {format_shape(plan.shape)} has {math.prod(plan.shape):.3g} elements, "
                "more than a numpy array can have, even as a view (2**63 - 1)"
            )
        x = np.asarray(x)
        if x.shape != aligned:
            x = x.reshape(aligned)
        return np.broadcast_to(x, plan.shape)
    if tuple(x.shape) != aligned:
        x = xp.reshape(x, aligned)
    return xp.broadcast_to(x, plan.shape)


def check_out(out: Any, shape: tuple, dtype: Any = None) -> None:
    """Refuse (:class:`InputError`) an ``out=`` that is not a writable array of ``shape`` (and ``dtype``)."""
    if not hasattr(out, "shape") or not isinstance(out.shape, tuple):
        raise InputError(f"out= must be an array, got {type(out).__name__}")
    if tuple(out.shape) != tuple(shape):
        raise InputError(f"out= has shape {format_shape(tuple(out.shape))}; the result has shape {format_shape(shape)}")
    if dtype is not None and is_numpy(out) and out.dtype != _dtype(dtype):
        raise InputError(f"out= has dtype {out.dtype}; the result has dtype {np.dtype(dtype)}")
    if is_numpy(out) and not out.flags.writeable:
        raise InputError("out= is read-only")


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


def run_plan(plan: Plan, func: Callable | str, arrays, *, out=None, dtype=None):
    """Apply ``func`` to the views of ``arrays`` (one per plan input).

    ``func`` is a callable taking the views (and ``out=`` when given) -- a
    numpy ufunc, say -- or the name of an array API function (``"add"``).
    ``dtype`` is the output dtype, used for the memory check and to check
    ``out=`` (default: numpy's result type of the inputs).  Large outputs are
    computed by threads (:mod:`bcast.parallel`) when ``func`` is element-wise.
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
        np.copyto(out, run_plan(plan, f, arrays, out=np.empty(plan.shape, out.dtype), dtype=dtype))
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
        return np.asarray(result) if isinstance(result, np.generic) else result  # rank 0: an array, not a scalar
    except (BroadcastError, InputError):  # a kernel's own refusal (openvino's integer division by zero...)
        raise
    except (TypeError, ValueError) as e:  # numpy: a ufunc that does not take these dtypes (or values: integers
        raise InputError(f"{getattr(f, '__name__', f)}: {e}") from None  # to negative powers), an out= it cannot take


def overlaps(out: Any, arrays) -> bool:
    """Whether the numpy array ``out`` may share memory with one of ``arrays``: numpy's bounds
    check, a few hundred nanoseconds (never a false no; a false yes costs one copy).

    >>> a = np.zeros(4)
    >>> overlaps(a[1:], [np.ones(3), a[:2]]), overlaps(a, [np.ones(4), 1.0])
    (True, False)
    """
    for x in arrays:
        if isinstance(x, np.ndarray) and np.may_share_memory(out, x):
            return True
    return False


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
        return np.result_type(*[x if is_numpy(x) or isinstance(x, (int, float, bool, complex)) else np.dtype(str(x.dtype).rsplit(".", 1)[-1]) for x in arrays])
    except TypeError:
        return np.float64  # a dtype numpy does not know: size the check for 8 bytes an element


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
    plan = _plan(arrays, rule, names, attrs)
    xp = namespace(*arrays)
    return [view(x, plan, i, xp) for i, x in enumerate(arrays)]


_NATURAL_GET = _fast.NATURAL_GET


def apply(func: Callable | str, *arrays, rule: str = "numpy", out=None, dtype=None, names=None, **attrs):
    """Broadcast ``arrays`` under ``rule`` and apply ``func`` element-wise.

    Parameters
    ----------
    func : callable or str
        A numpy ufunc (or any callable on same-shape arrays that takes
        ``out=``), or the name of an array API function such as ``"add"``,
        ``"multiply"``, ``"maximum"``, looked up in the arrays' namespace.
    *arrays
        numpy arrays, or arrays of one array-API library (dask stays lazy).
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
                    return _NATURAL_GET((func, rule, a.shape, b.shape))(a, b)
                except (TypeError, ValueError):  # no entry (None is not callable), an unhashable func, dtypes
                    # or values the ufunc refuses (the full path says so)
                    pass
        result = _fast.apply_small(func, arrays, rule, out, dtype)
        if result is not _fast.MISS:
            return result
    plan = _plan(arrays, rule, names, attrs)
    return run_plan(plan, func, arrays, out=out, dtype=dtype)
