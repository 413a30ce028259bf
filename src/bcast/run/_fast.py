"""Fast paths for small ops on plain numpy arrays: what a call costs when nothing is big.

A call on tiny arrays is all overhead: rule lookup, checks, views.  Here a
call is reduced to a dict lookup on ``(rule, shapes)`` (or, in the framework
modules, ``(op, dtypes, shapes)``), which gives a :class:`Prepared`: the
plan, and for every input the shape it must be reshaped to (or None) so that
numpy's own broadcasting of the reshaped arrays is the plan's.  A ufunc then
runs on them directly: no stride-0 views are built, the result is the same
array (numpy broadcasts the same way, element for element).

Only small outputs take these paths (:data:`SMALL_ELEMENTS`): big ones go
through :func:`bcast.run.execute.run_plan`, where the memory budget is checked and
the work is split among threads.  Anything unusual (another array type,
attributes, a plan whose alignment numpy cannot express) falls back to the
full path, which also raises every error.

:func:`quiet` runs a function with numpy's floating-point warnings off, as
``np.errstate(all="ignore")`` does, at a seventh of its cost (through numpy's
own context variable where this numpy has one that works; else through
``np.errstate`` itself).

The op tables' fast paths share what is here: their caches come from
:func:`cache` (and :func:`clear_caches` empties them all), a call they do not
take is :data:`MISS`, :func:`key` is their cache key and :func:`runner` runs a
prepared call of a kernel.

>>> import numpy as np
>>> p = prepare("numpy", (np.ones((2, 3)), np.ones(3)))
>>> p.plan.shape, p.reshapes, p.small
((2, 3), (None, None), True)
>>> prepare("pdpd", (np.ones((2, 3)), np.ones(2)), axis=0).reshapes
(None, (2, 1))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any
from collections.abc import Callable

import numpy as np

from ..core.errors import InputError
from ..core.plan import Plan
from ..core.shapes import static
from ..rules import infer
from ..rules._cache import PLANS, BoundedCache
from .out import check_out, overlaps

__all__ = ["MISS", "Prepared", "SMALL_ELEMENTS", "SMALL_ITEMSIZE", "apply_small", "cache", "clear_caches", "key",
           "prepare", "prepared", "runner", "quiet", "quiet_enter", "quiet_exit", "ufunc"]

#: Outputs of up to this many elements take the fast paths, when no input's
#: itemsize exceeds :data:`SMALL_ITEMSIZE` (so no output exceeds 64 KiB, far
#: below what :func:`bcast.run.execute.check_memory` ever refuses).
SMALL_ELEMENTS = 4096
SMALL_ITEMSIZE = 16

def _private_quiet():
    """``(quiet_enter, quiet_exit, QUIET_SET, QUIET)`` by numpy's own context variable, which
    ``np.errstate`` sets (numpy >= 2: a seventh of np.errstate's cost); None when this numpy
    has no such variable or setting it does not do what ``np.errstate(all="ignore")`` does."""
    try:
        from numpy._core.umath import _extobj_contextvar, _make_extobj

        ignore = _make_extobj(all="ignore")
        before = np.geterr()
        token = _extobj_contextvar.set(ignore)
        try:
            works = all(v == "ignore" for v in np.geterr().values())
        finally:
            _extobj_contextvar.reset(token)
        works = works and np.geterr() == before
    except Exception:  # noqa: BLE001 - another numpy (renamed, removed, other signature): the public way
        return None
    if not works:
        return None
    return partial(_extobj_contextvar.set, ignore), _extobj_contextvar.reset, _extobj_contextvar.set, ignore


def _public_quiet():
    """The same four by ``np.errstate`` itself: the token is the entered errstate."""

    def enter(_: object = None) -> Any:
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def exit_(state: Any) -> None:
        state.__exit__(None, None, None)

    return enter, exit_, enter, None


#: ``token = quiet_enter()`` ... ``quiet_exit(token)``: :func:`quiet` spelled out, for hot loops;
#: ``token = QUIET_SET(QUIET)`` is the same without a call in between (the hottest loops).
quiet_enter, quiet_exit, QUIET_SET, QUIET = _private_quiet() or _public_quiet()


def quiet(f, *args, **kwargs):
    """``f(*args, **kwargs)`` under ``np.errstate(all="ignore")``.

    >>> quiet(np.divide, np.ones(1), np.zeros(1))
    array([inf])
    """
    token = QUIET_SET(QUIET)
    try:
        return f(*args, **kwargs)
    finally:
        quiet_exit(token)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A plan made ready for numpy arrays of given shapes.

    ``reshapes[i]``: the shape input ``i`` is reshaped to, None for none (its
    shape already lines up right-aligned, as numpy broadcasts); None for the
    whole tuple when numpy's broadcasting cannot express the plan.
    ``small``: the output is small enough for the fast paths; ``native``:
    no input needs a reshape.
    """

    plan: Plan
    reshapes: tuple | None
    small: bool
    native: bool  # no input needs a reshape: numpy broadcasts the arrays as they are

    def arrays(self, arrays):
        """``arrays`` reshaped as numpy must see them to broadcast as the plan says."""
        # (called only where numpy can express the plan: reshapes is a tuple; no check on this hot path)
        return [x if r is None else x.reshape(r) for x, r in zip(arrays, self.reshapes)]  # type: ignore[arg-type]


def _reshapes(plan: Plan) -> tuple | None:
    out = []
    for i, shape in enumerate(plan.inputs):
        aligned = plan.aligned_shape(i)
        out.append(None if aligned[len(aligned) - len(shape):] == shape and
                   all(d == 1 for d in aligned[:len(aligned) - len(shape)]) else aligned)
    try:
        if np.broadcast_shapes(*(static(plan.aligned_shape(i)) for i in range(len(plan.inputs)))) != plan.shape:
            return None
    except ValueError:  # pragma: no cover - a rule whose plan numpy would not broadcast
        return None
    return tuple(out)


def prepare(rule: str, arrays, **attrs) -> Prepared:
    """The :class:`Prepared` of ``arrays`` (numpy arrays) under ``rule``; raises as :func:`bcast.infer`."""
    return prepared(infer(*(x.shape for x in arrays), rule=rule, **attrs))


def prepared(plan: Plan) -> Prepared:
    """``plan`` made ready for numpy arrays."""
    reshapes = _reshapes(plan)
    native = reshapes is not None and reshapes.count(None) == len(reshapes)
    return Prepared(plan, reshapes, math.prod(static(plan.shape)) <= SMALL_ELEMENTS, native)


#: The one "not for the fast path" value: what :func:`apply_small` and the op tables' fast
#: paths return for a call they do not take, and what a cache of theirs holds for such a key
#: (a key that is absent reads as None).
MISS = object()

_CACHES: list[BoundedCache[tuple, Any]] = []


def cache() -> BoundedCache[tuple, Any]:
    """A new cache of a small-op fast path, emptied with the others by :func:`clear_caches`."""
    c: BoundedCache[tuple, Any] = BoundedCache()
    _CACHES.append(c)
    return c


def clear_caches() -> None:
    """Forget every prepared small call, the fast paths' and the op tables', and every cached plan
    (tests that change what a call does, e.g. the thread count, start from this)."""
    for c in _CACHES:
        c.clear()
    PLANS.clear()


#: Prepared calls of :func:`bcast.apply`, keyed on (rule, shape, shape, ...); MISS: not for the fast path.
APPLY = cache()
_APPLY_GET = APPLY.get


#: The ufunc of a small two-input call of :func:`bcast.apply` that numpy broadcasts as the
#: rule does (no reshape), without ``out=``: (func, rule, shape, shape) -> ufunc.  A hit is
#: the whole call: ``bcast.apply`` looks it up inline (a function call costs a third of np.add).
NATURAL = cache()
NATURAL_GET = NATURAL.get


def apply_small(func, arrays, rule, out, dtype):
    """:func:`bcast.apply` without names or attributes, for a ufunc on small plain
    numpy arrays: numpy broadcasts the (reshaped) arrays itself.  Returns
    :data:`MISS` for any other call (the full path then runs, and raises).

    >>> apply_small(np.add, (np.ones(3), np.ones((2, 1))), "numpy", None, None).shape
    (2, 3)
    >>> apply_small(np.add, (np.ones(3), [1, 2, 3]), "numpy", None, None) is MISS
    True
    """
    if len(arrays) == 2:  # the common case, spelled out: the checks are most of a small call's cost
        a, b = arrays
        if type(a) is not np.ndarray or type(b) is not np.ndarray or a.itemsize > SMALL_ITEMSIZE \
                or b.itemsize > SMALL_ITEMSIZE:
            return MISS
        key = (rule, a.shape, b.shape)
    else:
        for x in arrays:
            if type(x) is not np.ndarray or x.itemsize > SMALL_ITEMSIZE:
                return MISS
        key = (rule, *(x.shape for x in arrays))
    p = _APPLY_GET(key)
    if p is None:
        p = _prepare_small(rule, arrays)
        APPLY.put(key, p)
    f = func if type(func) is np.ufunc else ufunc(func)
    if p is MISS or f is None or f.nin != len(arrays):  # a wrong count: the full path says so
        return MISS
    xs = arrays if p.native else p.arrays(arrays)
    try:
        if out is None:
            result = f(*xs)
            if p.native and len(xs) == 2 and p.plan.shape and type(func) in (str, np.ufunc):
                NATURAL.put((func, *key), f)
            # rank 0: an array, not a scalar (a ufunc of two outputs gives a tuple, as on the full path)
            return result if type(result) is np.ndarray else rank0_arrays(result)
        check_out(out, p.plan.shape, dtype)
        return f(*xs, out=out)
    except InputError:  # a bad out=
        raise
    except (TypeError, ValueError) as e:  # numpy: a ufunc that does not take these dtypes (or values)
        raise InputError(f"{f.__name__}: {e}") from None
    except Exception as e:  # an object array's elements
        error = element_error(f, e, xs)
        if error is e:
            raise
        raise error from None


def rank0_arrays(result):
    """A ufunc's result with numpy scalars (rank 0) made 0-d arrays, each of a tuple's too (``np.divmod``).

    >>> rank0_arrays(np.divmod(np.array(7.0), np.array(2.0)))
    (array(3.), array(1.))
    """
    if isinstance(result, np.generic):
        return np.asarray(result)
    if type(result) is tuple:
        return tuple(np.asarray(r) if isinstance(r, np.generic) else r for r in result)
    return result


def element_error(f, e: Exception, arrays) -> Exception:
    """What to raise for ``e``, raised by ``f`` on ``arrays``: a numpy ufunc on object arrays
    calls each element's own method (``np.arctan2`` calls ``x.arctan2()``), which may raise
    anything (AttributeError, ZeroDivisionError...): an :class:`InputError` naming it.  Else
    ``e`` itself: a memory error, what ``np.errstate`` asked for (FloatingPointError, its
    ``call=``'s own), a caller's own function's errors.

    >>> a = np.ones(2, object)
    >>> element_error(np.arctan2, AttributeError("'int' object has no attribute 'arctan2'"), [a, a])
    InputError("arctan2: these values do not take it (AttributeError: 'int' object has no attribute 'arctan2')")
    """
    if type(f) is not np.ufunc or isinstance(e, MemoryError) \
            or not any(getattr(getattr(x, "dtype", None), "kind", None) == "O" for x in arrays):
        return e
    return InputError(f"{f.__name__}: these values do not take it ({type(e).__name__}: {e})")


def _prepare_small(rule, arrays) -> Any:
    """The Prepared of a small call, or MISS (not for the fast path; not broadcastable)."""
    if type(rule) is not str:
        return MISS
    try:
        p = prepare(rule, arrays)
    except (InputError, ValueError):  # BroadcastError is a ValueError: the full path raises it
        return MISS
    return p if p.small and p.reshapes is not None else MISS


_UFUNCS: dict = {}


def ufunc(func):
    """``func`` as a numpy ufunc: itself, or numpy's ufunc of that name; else None.

    >>> ufunc("add") is np.add, ufunc(np.maximum) is np.maximum, ufunc(len)
    (True, True, None)
    """
    if type(func) is np.ufunc:
        return func
    if not _UFUNCS:
        _UFUNCS.update((n, f) for n, f in vars(np).items() if type(f) is np.ufunc)
    return _UFUNCS.get(func) if type(func) is str else None


def key(op: Any, inputs: Any) -> tuple | None:
    """The small-op caches' key of a call of ``op`` on plain numpy arrays: ``(op, dtype, shape,
    dtype, shape...)``; None when an input is anything else."""
    if len(inputs) == 2:
        a, b = inputs
        if type(a) is np.ndarray and type(b) is np.ndarray:
            return op, a.dtype, a.shape, b.dtype, b.shape
        return None
    key = [op]
    for x in inputs:
        if type(x) is not np.ndarray:
            return None
        key += (x.dtype, x.shape)
    return tuple(key)


def runner(prepared: Prepared, kernel: Callable, dtype: Any, ufunc: np.ufunc | None, natural: bool, *,
           swapped: bool = False) -> Callable:
    """``run(inputs, out)`` of a small op of an op table made ready: ``out`` (None or an array)
    checked, ``kernel(views, out)`` writing into ``out`` from views of its shape, or ``ufunc``
    (None: none) called on the (reshaped) arrays, in reverse order when ``swapped``;
    ``natural``: the ufunc's own result type is the op's, so the ufunc may allocate."""
    shape, native, arrays = static(prepared.plan.shape), prepared.native, prepared.arrays
    reverse = swapped and ufunc is not None
    full = native and all(s == shape for s in prepared.plan.inputs)  # every input has the output's shape

    def views(xs):  # the kernel's views: of the output's shape
        return xs if full else [np.broadcast_to(x, shape) for x in xs]

    def run(inputs, out):
        xs = inputs if native else arrays(inputs)
        if reverse:
            xs = xs[::-1]
        if out is None:
            if natural:
                return quiet(ufunc, *xs)
            out = fresh = np.empty(shape, dtype)
        else:
            check_out(out, shape, dtype)
            fresh = None
        if ufunc is not None:  # numpy's ufuncs take an out= that overlaps an input
            quiet(ufunc, *xs, out=out)
        elif out is fresh or not overlaps(out, inputs):
            kernel(views(xs), out)
        else:  # a kernel of several steps would read what it has overwritten
            result = np.empty(shape, dtype)
            kernel(views(xs), result)
            np.copyto(out, result)
        return out

    if not (native and natural):
        return run
    assert ufunc is not None  # (natural: the ufunc's own result is the op's)
    quiet_set, quiet_value, reset = QUIET_SET, QUIET, quiet_exit

    def run_natural(inputs, out):  # the commonest: the ufunc on the arrays as they are
        if out is not None:
            return run(inputs, out)
        token = quiet_set(quiet_value)
        try:
            return ufunc(inputs[1], inputs[0]) if reverse else ufunc(*inputs)
        finally:
            reset(token)

    return run_natural
