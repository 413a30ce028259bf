"""Prepared calls on plain numpy arrays: what depends only on (op, dtypes, shapes) done once.

A call on tiny arrays is all overhead: rule lookup, checks, views.  Here a
call is reduced to a dict lookup on ``(rule, shapes)`` (or, in the framework
modules, ``(op, dtypes, shapes)``), which gives a :class:`Prepared`: the
plan, and for every input the shape it must be reshaped to (or None) so that
numpy's own broadcasting of the reshaped arrays is the plan's.  A ufunc then
runs on them directly: no stride-0 views are built, the result is the same
array (numpy broadcasts the same way, element for element).

Small outputs (:data:`SMALL_ELEMENTS`) need nothing else: :func:`runner`'s
small form, :func:`apply_small`.  A larger one is prepared too (:func:`large`,
:func:`apply_large`): per call only what must be -- ``out=`` checked, the memory
budget asked and the output reserved while the call runs (as
:func:`bcast.run.execute.run_plan` does), the overlap of ``out=`` with the
inputs -- then a compiled loop, numpy's own loop, or threads, as measured
(:func:`large` says where each wins).  Anything unusual (another array type,
attributes) falls back to the full path, which also raises every error.

:func:`quiet` runs a function with numpy's floating-point warnings off, by
``np.errstate(all="ignore")`` (public API only); a prepared call skips it where
numpy cannot warn (:func:`silent`).

The op tables' prepared calls share what is here: their caches come from
:func:`cache` (and :func:`clear_caches` empties them all), a call they do not
take is :data:`MISS`, :func:`key` is their cache key and :func:`runner` runs a
prepared call of a kernel.  The thread count and the memory budget are read
on every call: a change takes effect on a cached key.

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

from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..core.shapes import static
from ..rules import infer
from ..rules._cache import PLANS, BoundedCache
from . import _budget, _kernels, _recycle, parallel
from ._budget import check_memory, reserving
from .out import check_out, overlaps

__all__ = ["MISS", "Prepared", "SMALL_ELEMENTS", "SMALL_ITEMSIZE", "apply_large", "apply_small", "cache",
           "clear_caches", "key", "large", "prepare", "prepared", "runner", "quiet", "quieted", "silent",
           "ufunc", "viewer"]

#: Outputs of up to this many elements take the small form of a prepared call (no memory check), when
#: no input's itemsize exceeds :data:`SMALL_ITEMSIZE` (so no output exceeds 64 KiB, far below what
#: :func:`bcast.run.execute.check_memory` ever refuses); larger ones take :func:`large`.
SMALL_ELEMENTS = 4096
SMALL_ITEMSIZE = 16

_errstate = np.errstate
#: numpy 2's ``np.errstate`` decorator keeps each call's state apart (numpy 1's, a ContextDecorator,
#: keeps it on the one errstate object: not safe across threads)
_SAFE_DECORATOR = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def quiet(f, *args, **kwargs):
    """``f(*args, **kwargs)`` under ``np.errstate(all="ignore")``.

    >>> quiet(np.divide, np.ones(1), np.zeros(1))
    array([inf])
    """
    with _errstate(all="ignore"):
        return f(*args, **kwargs)


def quieted(f: Any) -> Any:
    """``f`` with numpy's floating-point warnings off on every call: numpy 2's
    ``np.errstate(all="ignore")`` decorator, else :func:`quiet` (measured, numpy 2.4: the
    decorator adds 0.44 us to a call, a with-block 0.88 us; np.add on 3 elements is 0.25 us).
    A prepared call skips both where numpy cannot warn (:func:`silent`).

    >>> quieted(np.divide)(np.ones(1), np.zeros(1))
    array([inf])
    """
    return _errstate(all="ignore")(f) if _SAFE_DECORATOR else partial(quiet, f)


#: ufuncs that set no floating-point flag on integers and booleans: numpy checks no integer overflow in
#: array loops (add, subtract, multiply wrap), comparisons and max/min compare.  Not division (an integer
#: division by zero warns), nor power (a negative exponent raises), nor anything on floats (overflow,
#: NaN).  tests/run/test_prepared_calls.py checks each on every integer type at their extremes.
_SILENT = frozenset((np.add, np.subtract, np.multiply, np.maximum, np.minimum, np.equal, np.not_equal, np.less,
                     np.less_equal, np.greater, np.greater_equal, np.bitwise_and, np.bitwise_or, np.bitwise_xor,
                     np.logical_and, np.logical_or, np.logical_xor))


def silent(ufunc: Any, dtypes) -> bool:
    """Whether ``ufunc`` on inputs of ``dtypes`` can raise no floating-point warning: then a call
    needs no ``np.errstate`` around it (:data:`_SILENT`).

    >>> silent(np.add, [np.dtype(np.int8)] * 2), silent(np.add, [np.dtype(np.float32)] * 2)
    (True, False)
    """
    return ufunc in _SILENT and all(np.dtype(d).kind in "biu" for d in dtypes)


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
    """``plan`` made ready for numpy arrays; an InputError for a transposing plan (the prepared calls
    only reshape: :func:`bcast.run.execute.view` transposes, on the full path)."""
    if any(plan.transposition(i) is not None for i in range(len(plan.inputs))):
        raise InputError(f"{plan.rule}: a transposing plan has no prepared call")
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
           swapped: bool = False, func: Callable | None = None, dtypes: tuple = ()) -> Any:
    """``run(inputs, out)`` of an op of an op table made ready: ``out`` (None or an array)
    checked, ``kernel(views, out)`` writing into ``out`` from views of its shape, or ``ufunc``
    (None: none) called on the (reshaped) arrays, in reverse order when ``swapped``;
    ``natural``: the ufunc's own result type is the op's, so the ufunc may allocate.
    A large output (not ``prepared.small``) runs as :func:`large` runs ``func`` (the kernel as
    :func:`bcast.run.execute.run_plan` applies it to the views); without ``func``: MISS.
    ``dtypes``: the inputs' (the ufunc runs without ``np.errstate`` where it cannot warn: :func:`silent`)."""
    if not prepared.small:
        return MISS if func is None else large(prepared, func, dtype, ufunc, dtypes, swapped=swapped)
    if func is not None:
        loop = _small_loop(prepared, func, dtype, dtypes)
        if loop is not None:
            return large(prepared, func, dtype, ufunc, dtypes, swapped=swapped, loop=loop)
    shape, native, arrays = static(prepared.plan.shape), prepared.native, prepared.arrays
    reverse = swapped and ufunc is not None
    # the ufunc as called: as it is where it cannot warn on these types, else with warnings off
    f: Any = None if ufunc is None else ufunc if dtypes and silent(ufunc, dtypes) else quieted(ufunc)

    views = viewer(shape, [static(prepared.plan.aligned_shape(i)) for i in range(len(prepared.plan.inputs))])

    def run(inputs, out):
        xs = inputs if native else arrays(inputs)
        if reverse:
            xs = xs[::-1]
        if out is None:
            if natural:
                return f(*xs)
            out = fresh = np.empty(shape, dtype)
        else:
            check_out(out, shape, dtype)
            fresh = None
        if ufunc is not None:  # numpy's ufuncs take an out= that overlaps an input
            f(*xs, out=out)
        elif out is fresh or not overlaps(out, inputs):
            kernel(views(xs), out)
        else:  # a kernel of several steps would read what it has overwritten
            result = np.empty(shape, dtype)
            kernel(views(xs), result)
            np.copyto(out, result)
        return out

    return run


def viewer(shape: tuple, aligned: list) -> Callable:
    """``views(xs)``: the arrays ``xs``, of the ``aligned`` shapes (the output's rank, 1 where an
    input is stretched) or those without their leading 1s, as views of the output's ``shape``
    (stride 0 where stretched), for a kernel.

    A C-contiguous array's view is made by numpy's array constructor with the strides worked out
    here once: 0.25 us, against 2.1 us for ``np.broadcast_to`` (which builds an iterator each
    call; it makes the others).  The views are writeable where the arrays are: they go to the op
    tables' kernels, which never write an input.

    >>> views = viewer((2, 3), [(1, 3), (2, 3)])
    >>> x, y = np.arange(3.0).reshape(1, 3), np.ones((2, 3))
    >>> a, b = views([x, y])
    >>> a.shape, a.strides, a.tolist(), b is y
    ((2, 3), (0, 8), [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]], True)
    """
    plans = [None if tuple(a) == tuple(shape) else _kernels.stretched_strides(tuple(a), tuple(shape))
             for a in aligned]
    if 0 in shape:
        return lambda xs: [np.broadcast_to(x, shape) for x in xs]
    ndarray, broadcast_to = np.ndarray, np.broadcast_to
    in_bytes: dict = {}  # (element strides, itemsize) -> byte strides, worked out on the first call

    def views(xs):
        found = []
        for x, steps in zip(xs, plans):
            if steps is None:  # (an array as given may lack the leading 1s of its aligned shape)
                found.append(x if x.shape == shape else x.reshape(shape))
            elif x.flags.c_contiguous:
                strides = in_bytes.get((steps, x.itemsize))
                if strides is None:
                    strides = in_bytes[steps, x.itemsize] = tuple(x.itemsize * s for s in steps)
                found.append(ndarray(shape, x.dtype, x, 0, strides))
            else:
                found.append(broadcast_to(x, shape))
        return found

    return views


def _small_loop(prepared: Prepared, func: Callable, dtype: Any, dtypes: tuple) -> Any:
    """The compiled loop of a small call where it is faster than numpy (float16, the marked kernels:
    :func:`bcast.run._kernels.prepare` says), else None; with one, the call runs as a large one does."""
    plan = prepared.plan
    if not dtypes or len(dtypes) != len(plan.inputs):
        return None
    aligned = tuple(static(plan.aligned_shape(i)) for i in range(len(plan.inputs)))
    return _kernels.prepare(func, dtypes, aligned, static(plan.shape), dtype)


_SAME = object()


def large(prepared: Prepared, func: Callable, dtype: Any, ufunc: np.ufunc | None, dtypes: tuple, *,
          swapped: bool = False, out_dtype: Any = _SAME, budget_dtype: Any = _SAME, warn: bool = False,
          loop: Any = _SAME) -> Callable:
    """``run(inputs, out)`` of a prepared call of any size: what :func:`bcast.run.execute.run_plan`
    does with ``func`` (the kernel it applies to the views, ``func(*views, out=out)``), the same
    values and errors, less what depends only on the key (op, dtypes, shapes), done here once.

    Per call: ``out`` checked (against ``out_dtype``, default ``dtype``; None: any dtype numpy
    casts into), or the memory budget asked for an output of ``budget_dtype`` (default ``dtype``)
    and reserved while the call runs (:func:`bcast.run._budget.reserving`, as run_plan); then, in
    order: (a) the compiled loop of the key (``loop``; default :func:`bcast.run._kernels.prepare`'s),
    where the arrays and ``out`` are C-contiguous and share no memory; (b) numpy's own
    ``ufunc`` on the arrays (reshaped where numpy would not align them as the plan does), where
    ``func`` computes a ufunc and numpy can broadcast as the plan does, when the op runs in one thread
    (:func:`bcast.run.parallel.split_threads`), or in several but with an input stretched along the
    output's last axis (not float16); (c) :func:`bcast.run.parallel.try_run` on stride-0 views,
    else ``func`` on them in one call.  An ``out=`` that overlaps an input: numpy's ufunc handles it;
    any other kernel writes a temporary (checked against the budget), then copies it, as run_plan.
    ``ufunc`` runs with numpy's floating-point warnings off (a kernel's, as ``func`` computes it),
    or as the caller has them (``warn``: :func:`bcast.apply`'s, numpy's own call).  A call whose
    output is at most :data:`bcast.run._budget.SMALL` bytes, run by ``ufunc`` or a compiled loop, asks
    the budget nothing (:func:`bcast.run._budget.check_memory` would neither refuse it nor reserve it).

    Measured (an Add into a given output, one process, 2 busy cores; int8, uint8, float16, float32,
    float64, int64; channel, row, column, outer, scalar, same-shape broadcasts; 2**14 to 2**24
    elements): in one thread, numpy's own call is faster than the blocked tasks in almost every case
    (the tasks cost 1.4-15x it up to 2**18 elements; 1.0-7x beyond) but rows of float32, float64 and
    int64 from 2**20 elements (0.82-0.95x), too little to keep a second path for; in two threads, a
    broadcast along the last axis (column, outer: the blocked tasks copy the stretched operand into
    scratch, element by element) costs 1.2-8.8x numpy's single call, but float16 (0.55x: numpy's
    float16 loop computes, threads pay)."""
    plan = prepared.plan
    shape = static(plan.shape)
    size = math.prod(shape)
    dtype = np.dtype(dtype)
    out_dtype = dtype if out_dtype is _SAME else out_dtype
    budget_dtype = dtype if budget_dtype is _SAME else budget_dtype
    aligned = [static(plan.aligned_shape(i)) for i in range(len(plan.inputs))]
    # the arrays as numpy (and a compiled loop) sees them: as they are where numpy aligns them as the plan does
    # (numpy's call on an input given extra leading 1s is slower: 2.1 us against 1.5 us for a 2**14 uint8 Greater)
    reshape = [r is not None for r in prepared.reshapes] if prepared.reshapes is not None \
        else [tuple(s) != a for s, a in zip(plan.inputs, aligned)]
    nbytes = size * dtype.itemsize
    last = max((k for k, d in enumerate(shape) if d != 1), default=None)
    inner = last is not None and any(a[last] == 1 and math.prod(a) > 1 for a in aligned)
    direct = ufunc if prepared.reshapes is not None else None
    spread = dtype == _F16 or not inner  # (b) or (c) in several threads
    call_direct: Any = direct if direct is None or warn or silent(direct, dtypes) else quieted(direct)
    make_views = viewer(shape, aligned)
    ready = _kernels.prepare(func, dtypes, tuple(aligned), shape, dtype) if loop is _SAME else loop
    # run by numpy's ufunc or the compiled loop (neither allocates), a small output asks the budget nothing
    light = (direct is not None or ready is not None) and size * np.dtype(budget_dtype).itemsize <= _budget.SMALL

    def compute(xs, out, n):
        if direct is not None and (n < 2 or not spread):  # (b) numpy's own loop
            call_direct(*(xs[::-1] if swapped else xs), out=out)
            return
        views = make_views(xs)
        if parallel.try_run(func, views, out, dtype) is None:  # (c)
            func(*views, out=out)

    def call(inputs, out):
        if out is None:
            if not light:
                check_memory(shape, budget_dtype)
            out = np.empty(shape, dtype) if nbytes < _recycle.MIN_BYTES else _recycle.empty(shape, dtype)
            given = False
        else:
            check_out(out, shape, out_dtype)
            given = True
        xs = [x.reshape(a) if r else x for x, r, a in zip(inputs, reshape, aligned)]
        n = parallel.split_threads(size, dtype)
        # (a) the compiled loop writes only outputs of the op's own dtype
        if ready is not None and type(out) is np.ndarray and out.dtype == dtype and out.flags.c_contiguous \
                and all(x.flags.c_contiguous for x in xs) and not (given and overlaps(out, xs)) \
                and ready.run(xs, out, n):  # (a)
            return out
        if given and direct is None and overlaps(out, inputs):  # a kernel of several steps: a temporary
            check_memory(shape, out.dtype, what="a temporary for an out= that overlaps an input")
            result = np.empty(shape, out.dtype)
            compute(xs, result, n)
            np.copyto(out, result)
            return out
        compute(xs, out, n)
        return out

    reserved = call if light else reserving(call)
    name = getattr(func, "__name__", func)

    def run(inputs, out):
        try:
            return reserved(inputs, out)
        except (BroadcastError, InputError):  # a kernel's own refusal, a bad out=, the budget's
            raise
        except (TypeError, ValueError) as e:  # as run_plan says it
            raise InputError(f"{name}: {e}") from None

    return run


_F16 = np.dtype(np.float16)


#: Prepared large calls of :func:`bcast.apply` of a ufunc: (func, rule, dtype, dtype, shape, dtype, shape...)
#: -> runner, or MISS (the full path).
LARGE = cache()
_LARGE_GET = LARGE.get


def apply_large(func, arrays, rule, out, dtype):
    """:func:`bcast.apply` of a ufunc (or its name) on plain numpy arrays of any size, without names
    or attributes, through a prepared runner (:func:`large`); MISS for any other call.

    >>> apply_large(np.add, (np.ones((2, 1)), np.ones(3)), "numpy", None, None)
    array([[2., 2., 2.],
           [2., 2., 2.]])
    """
    try:
        k = (func, rule, dtype, *key_of(arrays))
        run = _LARGE_GET(k)
    except TypeError:  # an unhashable func, rule or dtype; an input that is not a numpy array
        return MISS
    if run is None:
        run = _large_apply(func, arrays, rule, dtype)
        LARGE.put(k, run)
    return MISS if run is MISS else run(arrays, out)


def key_of(arrays) -> tuple:
    """(dtype, shape, dtype, shape...) of numpy arrays; TypeError for anything else."""
    found: list = []
    for x in arrays:
        if type(x) is not np.ndarray:
            raise TypeError
        found += (x.dtype, x.shape)
    return tuple(found)


def _large_apply(func, arrays, rule, dtype):
    f = ufunc(func)
    if f is None or type(rule) is not str or f.nin != len(arrays) or f.nout != 1 \
            or any(x.dtype.kind == "O" for x in arrays):
        return MISS
    try:
        p = prepare(rule, arrays)
        out_type = f.resolve_dtypes(tuple(x.dtype for x in arrays) + (None,))[-1]
        budget = np.result_type(*(x.dtype for x in arrays)) if dtype is None else np.dtype(dtype)
    except (InputError, ValueError, TypeError):  # the full path raises what is wrong
        return MISS
    return large(p, f, out_type, f, tuple(x.dtype for x in arrays), out_dtype=dtype, budget_dtype=budget, warn=True)
