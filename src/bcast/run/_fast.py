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
``np.errstate(all="ignore")`` does, at a seventh of its cost.

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

import numpy as np

from ..core.errors import InputError
from ..core.plan import Plan
from ..rules import infer
from ..rules._cache import PlanCache

__all__ = ["Prepared", "prepare", "prepared", "quiet", "quiet_enter", "quiet_exit", "apply_small", "ufunc", "MISS", "SMALL_ELEMENTS", "SMALL_ITEMSIZE"]

#: Outputs of up to this many elements take the fast paths, when no input's
#: itemsize exceeds :data:`SMALL_ITEMSIZE` (so no output exceeds 64 KiB, far
#: below what :func:`bcast.run.execute.check_memory` ever refuses).
SMALL_ELEMENTS = 4096
SMALL_ITEMSIZE = 16

try:  # numpy >= 2: np.errstate sets this context variable; setting it directly costs far less
    from numpy._core.umath import _extobj_contextvar, _make_extobj

    _IGNORE = _make_extobj(all="ignore")
    #: ``token = quiet_enter()`` ... ``quiet_exit(token)``: :func:`quiet` spelled out, for hot loops;
    #: ``token = QUIET_SET(QUIET)`` is the same without a call in between (the hottest loops).
    quiet_enter = partial(_extobj_contextvar.set, _IGNORE)
    quiet_exit = _extobj_contextvar.reset
    QUIET_SET, QUIET = _extobj_contextvar.set, _IGNORE

    def quiet(f, *args, **kwargs):
        """``f(*args, **kwargs)`` under ``np.errstate(all="ignore")``.

        >>> quiet(np.divide, np.ones(1), np.zeros(1))
        array([inf])
        """
        token = _extobj_contextvar.set(_IGNORE)
        try:
            return f(*args, **kwargs)
        finally:
            _extobj_contextvar.reset(token)

except ImportError:  # pragma: no cover - another numpy: the public way

    def quiet_enter():
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def quiet_exit(state):
        state.__exit__(None, None, None)

    QUIET_SET, QUIET = (lambda _: quiet_enter()), None

    def quiet(f, *args, **kwargs):
        """``f(*args, **kwargs)`` under ``np.errstate(all="ignore")``."""
        with np.errstate(all="ignore"):
            return f(*args, **kwargs)


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
        return [x if r is None else x.reshape(r) for x, r in zip(arrays, self.reshapes)]


def _reshapes(plan: Plan) -> tuple | None:
    out = []
    for i, shape in enumerate(plan.inputs):
        aligned = plan.aligned_shape(i)
        out.append(None if aligned[len(aligned) - len(shape):] == shape and
                   all(d == 1 for d in aligned[:len(aligned) - len(shape)]) else aligned)
    try:
        if np.broadcast_shapes(*(plan.aligned_shape(i) for i in range(len(plan.inputs)))) != plan.shape:
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
    return Prepared(plan, reshapes, math.prod(plan.shape) <= SMALL_ELEMENTS, native)


#: Prepared calls of :func:`bcast.apply`, keyed on (rule, shape, shape, ...); False: not for the fast path.
APPLY = PlanCache()
_APPLY_GET = APPLY.get


#: The ufunc of a small two-input call of :func:`bcast.apply` that numpy broadcasts as the
#: rule does (no reshape), without ``out=``: (func, rule, shape, shape) -> ufunc.  A hit is
#: the whole call: ``bcast.apply`` looks it up inline (a function call costs a third of np.add).
NATURAL = PlanCache()
NATURAL_GET = NATURAL.get

#: What :func:`apply_small` returns when the call is not for the fast path.
MISS = object()


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
    if not p or f is None or f.nin != len(arrays):  # a wrong count: the full path says so
        return MISS
    xs = arrays if p.native else p.arrays(arrays)
    try:
        if out is None:
            result = f(*xs)
            if p.native and len(xs) == 2 and p.plan.shape and type(func) in (str, np.ufunc):
                NATURAL.put((func, *key), f)
            # rank 0: an array, not a scalar (a ufunc of two outputs gives a tuple, as on the full path)
            return result if type(result) is np.ndarray else rank0_arrays(result)
        from .execute import check_out

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
            or not any(getattr(x, "dtype", None) == object for x in arrays):
        return e
    return InputError(f"{f.__name__}: these values do not take it ({type(e).__name__}: {e})")


def _prepare_small(rule, arrays) -> Prepared | bool:
    """The Prepared of a small call, or False (not for the fast path; not broadcastable)."""
    if type(rule) is not str:
        return False
    try:
        p = prepare(rule, arrays)
    except (InputError, ValueError):  # BroadcastError is a ValueError: the full path raises it
        return False
    return p if p.small and p.reshapes is not None else False


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
