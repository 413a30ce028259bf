"""Compiled loops (numba, optional) for large element-wise ops: which calls take them, and how.

numpy's loops fall behind the runtimes' on broadcasts in three ways: a stride-0
operand over short runs is read through a buffer, stopping every few thousand
elements (``(16,256,56,56) + (256,1,1)`` float32: ~1.3x onnxruntime's time with
the same two threads); float16 is converted one element at a time (~16x
OpenVINO's, which computes it in float32 registers); and some integer loops
(int8 ``minimum`` against a scalar, integer division) are scalar.  One compiled
loop over the output (:mod:`bcast.run._loops`), per thread, runs at the memory
floor that onnxruntime reaches.

What is compiled gives numpy's bits (tests/run compare bytes): the ufuncs
``add subtract multiply divide maximum minimum greater greater_equal less
less_equal equal not_equal`` and the kernels marked with a loop of
:data:`bcast.run.kernel.LOOPS` (``where sum mean max min div``), on bool,
every integer type, float16, float32 and float64, every operand of one dtype
(``where``'s condition bool), two or three inputs.  A plain float ufunc that
numpy would warn about (overflow, division by zero) is compiled only while
numpy's floating-point warnings are off; a marked kernel turns them off itself.

The output is C-contiguous; the inputs are any views with strides >= 0: the axes
collapse to outer axes (any number) times one inner run, which each thread
takes in whole rows (a single long run is cut so that threads get rows); the
threads take the rows' tasks from an atomic count (:mod:`bcast.run._share`).
The loop runs where it beats numpy's own (:data:`BROADCAST_MIN` says where,
as measured).

**The first call does not wait for numba.**  A loop is compiled on its first
use in one background thread (numba's import and the compile take seconds on a
fresh cache; a loop loaded from numba's disk cache, ~0.1 s); until it is ready
:meth:`Loop.run` and :func:`try_run` say no and numpy's loops run.
:func:`wait` blocks until every requested loop is ready (benchmarks, tests).

``BCAST_KERNELS=0`` turns the compiled loops off; without numba they are off.

>>> layout([(4, 1), (0, 1)], (3, 4))  # (3,4) + (4,): rows of 4, B's run restarts each row
((3,), 4, [((4,), 1), ((0,), 1)])
>>> layout([(20, 4, 1), (0, 1, 0)], (2, 5, 4))  # (2,5,4) + (5,1): one value of B per row
((2, 5), 4, [((20, 4), 1), ((0, 1), 0)])
>>> layout([(60, 20, 5, 1), (0, 0, 5, 1)], (2, 3, 4, 5))  # (2,3,4,5) + (4,5): two axes each
((6,), 20, [((20,), 1), ((0,), 1)])
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import math
import os
import queue
import threading
import time
from typing import Any

import numpy as np

from ..core import _env
from . import _pool
from .kernel import loop_of, natural_ufunc, ufunc_of
from .out import overlaps

__all__ = ["Loop", "available", "layout", "prepare", "stretched_strides", "try_run", "wait"]

# op codes of bcast.run._loops (its module is not imported until a loop is compiled)
_BINARY = {"add": 0, "subtract": 1, "multiply": 2, "divide": 3, "maximum": 4, "minimum": 5, "greater": 6,
           "greater_equal": 7, "less": 8, "less_equal": 9, "equal": 10, "not_equal": 11}
_ARITH = (0, 1, 2, 3, 13)  # numpy warns on these for floats (overflow, invalid, division by zero); 13: power
_COMPARE = range(6, 12)
_IDIV, _POW, _IDIV53, _IPOW6, _WHERE, _SUM, _MEAN, _HALF = 12, 13, 14, 15, 20, 21, 22, 100
_I64 = np.dtype(np.int64)
_NEAR = 1 << 51
_MARKED = 1000  # added by _code for a marked kernel's loop; taken off before the code reaches the loop
_F16 = np.dtype(np.float16)
_SUPPORTED = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                             np.uint32, np.uint64, np.float16, np.float32, np.float64))
#: Where the compiled loop runs instead of numpy's own (output elements; measured in one thread, an Add,
#: a Greater and a Maximum on float16/32/64, int8, uint8, int32, int64, in same-shape, scalar, row, column,
#: outer and channel broadcasts, 2**12 to 2**22 elements; geomeans of the loop's time / numpy's):
#: float16 always (0.02-0.4: numpy converts each element); a broadcast (row, column, outer, channel:
#: an input with a stride-0 axis that is not a single value) from 2**14 (0.7-1.0 there, 0.15-0.4 from
#: 2**18; 1.4-1.7 at 2**12); same shapes and scalars (numpy's contiguous loops) from 2**16 (0.6-0.9;
#: 1.3-1.8 at 2**14); one-byte integers from 2**18 (numpy's int8 loops are as fast as LLVM's below:
#: 2.3 at 2**14, 1.25 at 2**16, 0.75 at 2**18); the kernels numpy computes in several passes (where,
#: sum, mean, max, min, three inputs, integer division) at every size (a call of the loop costs ~2 us,
#: the arguments of the compiled function; numpy's passes and their Python cost more: a two-input ONNX
#: Max of 2**10 float32 elements 7.5 us against onnxruntime's 4.5).  One-byte arrays whose rows are
#: short (fewer than :data:`SHORT_ROW` elements) with an input stretched along them (one value a row) take
#: the loop from :data:`BROADCAST_MIN`: numpy reads that input through its buffer row by row (measured, a
#: call into a given output, 2**14 elements, (8,1,16,1) and (8,1,16), numpy's path / the loop: int8 and
#: uint8 Add, Mul, Less, Equal, bool Equal 16.4-17.7 / 9.9-10.7 us; OpenVINO 12.5; the other one-byte
#: layouts at 2**14, rows of 16 to 512, 0.86-2.2: numpy's).
BROADCAST_MIN = 1 << 14
CONTIGUOUS_MIN = 1 << 16
ONE_BYTE_MIN = 1 << 18
SHORT_ROW = 32
PASSES_MIN = 0
#: The loop splits among threads from outputs (or inputs) of this many bytes, and from
#: bcast.run.parallel.MIN_ELEMENTS elements.  Measured, calls back to back into one output, two threads
#: against one (the pool's thread stays awake between calls: bcast.run._loops.rows2): uint8 Equal/Add
#: 0.97-1.0 at 1 MiB, 0.91-0.93 at 2 MiB, 0.77-0.90 at 4 MiB; float32 row/column Add/Mul 0.97-0.99 at 4 MiB,
#: 0.71-0.75 at 8 MiB, 0.59-0.60 at 16 MiB; float16 Add 0.84 at 2**20 elements; int64 Add 1.00 at 8 MiB.
#: (Before the pool's thread stayed awake: float32 1.8x slower at 4 MiB, int8 1.8x at 4 MiB.)
THREADS_BYTES = 4 << 20
#: A single run is cut into rows of at least this many elements when threads need rows to share.
MIN_ROW = 1024

_kernel: Any = None  # bcast.run._loops once imported; False when it cannot be (no numba, BCAST_KERNELS=0)
#: Compile in a background thread (the caller runs numpy's loop meanwhile); False: in the calling thread.
BACKGROUND = True


# --------------------------------------------------------------------------- which op, which loop


def _code(func, dtypes: tuple, dtype: np.dtype) -> tuple[int, bool] | None:
    """(op code of bcast.run._loops, swapped) of ``func`` on inputs of ``dtypes`` into ``dtype``,
    or None when no compiled loop computes it.  A kernel marked with a loop (``sum``, ``max``...)
    gets the code plus :data:`_MARKED`: its numpy form is more than one ufunc call."""
    if not all(d in _SUPPORTED for d in dtypes) or dtype not in _SUPPORTED:
        return None
    swapped, loop = False, None
    if type(func) is np.ufunc:
        name = func.__name__
    else:
        spec, loop = ufunc_of(func), loop_of(func)
        plain = natural_ufunc(func, dtypes) if spec is None else None
        if plain is not None:  # a marked loop that is one ufunc on these dtypes (float Div): compiled, and paid
            name, loop = plain.__name__, None  # for, as that ufunc
        elif spec is None and loop is None:
            return None
        else:
            name, swapped = (spec[0].__name__, spec[1]) if spec is not None else ("", False)
    n = len(dtypes)
    if loop == "where":
        ok = n == 3 and dtypes[0] == np.dtype(bool) and dtypes[1] == dtypes[2] == dtype
        return (_WHERE + _MARKED, False) if ok else None
    if n not in (2, 3) or any(d != dtypes[0] for d in dtypes[1:]):
        return None
    value = dtypes[0]
    half = _HALF if value == _F16 else 0
    if loop in ("sum", "mean", "max", "min"):
        if value != dtype or value.kind == "b" or (loop == "mean" and value.kind != "f"):
            return None
        code = {"sum": (_BINARY["add"], _SUM), "mean": (_MEAN, _MEAN), "max": (4, 4), "min": (5, 5)}[loop][n - 2]
        return code + half + _MARKED, False
    if n != 2:
        return None
    if loop == "div":  # (floats came as numpy's divide, above)
        code = _IDIV + _MARKED if value.kind in "iu" else -1
    elif loop == "pow" or name == "power":  # not float32/64: numpy's power there is its own SIMD loop
        # float16 (the ufunc too); integers for ONNX's kernel alone (numpy's power raises on a negative exponent)
        code = _POW + _MARKED if (half and dtype == _F16) or (loop == "pow" and value.kind in "iu"
                                                                and dtype == value) else -1
    else:
        code = _BINARY.get(name, -1)
    if code < 0:
        return None
    if code in _COMPARE:
        return (code + half, swapped) if dtype == np.dtype(bool) else None
    if value != dtype or value.kind == "b" or (code == 3 and value.kind != "f"):
        return None
    return code + half, swapped


def _storage(d: np.dtype) -> np.dtype:
    """The dtype numba sees: float16 as its bits."""
    return np.dtype(np.uint16) if d == _F16 else d


def _warns(func, code: int, dtypes: tuple) -> bool:
    """Whether numpy's own call might warn where the loop would not: a plain float ufunc of arithmetic."""
    return type(func) is np.ufunc and code % _HALF in _ARITH and dtypes[0].kind == "f"


def _quiet() -> bool:
    err = np.geterr()
    return err["over"] == err["under"] == err["invalid"] == err["divide"] == "ignore"


# --------------------------------------------------------------------------- layout


def layout(strides: list, shape: tuple):
    """Collapse a C-contiguous output of ``shape`` and its operands' element ``strides`` to
    outer axes and one inner run: ``(outer shape, K, [(outer strides, inner stride) per operand])``;
    None if a stride is negative."""
    axes: list[list] = []  # [size, [stride of each operand]]
    for d, *ss in zip(shape, *strides):
        if d == 1:
            continue
        if any(s < 0 for s in ss):
            return None
        if axes and all(p == s * d for p, s in zip(axes[-1][1], ss)):
            axes[-1][0] *= d
            axes[-1][1] = list(ss)
        else:
            axes.append([d, list(ss)])
    if not axes:
        return (), 1, [((), 0) for _ in strides]
    *outer, (k, inner) = axes
    return (tuple(a[0] for a in outer), k,
            [(tuple(a[1][i] for a in outer), inner[i]) for i in range(len(strides))])


def _cut(found, parts: int):
    """``found`` (a :func:`layout`) with its inner run cut into rows when it has fewer than ``parts``
    rows and a run long enough to share."""
    outer, k, ops = found
    if math.prod(outer) >= parts or k < 2 * MIN_ROW:
        return found
    for pieces in range(parts, 64 * parts):
        if k % pieces == 0 and k // pieces >= MIN_ROW:
            row = k // pieces
            return (*outer, pieces), row, [(s + (i * row,), i) for s, i in ops]
    return found


# --------------------------------------------------------------------------- running


class Loop:
    """A compiled loop made ready for one call signature (see :func:`prepare`)."""

    __slots__ = ("code", "key", "found", "cuts", "fn", "warns", "half", "swapped", "nbytes", "variant")

    def __init__(self, code: int, key: tuple, found, warns: bool, half: bool, swapped: bool, nbytes: int) -> None:
        self.code, self.key, self.found, self.warns, self.half = code, key, found, warns, half
        self.swapped, self.nbytes = swapped, nbytes
        self.cuts: dict = {}
        self.fn: Any = None
        # a faster loop for some values, tried first: (its key, the check of the values, the least size)
        found = _variant(code, np.dtype(key[3][0]))
        self.variant = None if found is None else ((key[0], found[0], *key[2:]), found[1], found[2])

    def run(self, arrays: list, out: np.ndarray, threads: int) -> bool:
        """Compute into ``out`` from ``arrays``; False when the loop cannot run now (nothing written)."""
        fn = self.fn
        if fn is None:
            fn = self.fn = _ready(self.key)
            if fn is None:
                return False
        if self.warns and not _quiet():
            return False
        for a in arrays:
            if not a.flags.aligned:
                return False
        if self.swapped:
            arrays = arrays[::-1]
        flat = [_flat1(a, self.half) for a in arrays]
        n = threads if self.nbytes >= THREADS_BYTES else 1
        code = self.code
        if self.variant is not None and out.size >= self.variant[2]:
            faster = _ready(self.variant[0])  # (asked for on the first call; checked once it is ready)
            if faster is not None and self.variant[1](flat):
                fn, code = faster, self.variant[0][1]
        _go(fn, code, self.key[2], out, flat, self._layout(n), n)
        return True

    def _layout(self, threads: int):
        found = self.cuts.get(threads)
        if found is None:
            found = self.cuts[threads] = _arrays(_cut(self.found, threads * _pool.CHUNKS_PER_THREAD
                                                      if threads > 1 else 1), threads)
        return found


def _near(flat: list) -> bool:
    """Whether every element of the int64 arrays ``flat`` is within +-2**51 (:data:`_NEAR`): one compiled pass
    an input (:func:`bcast.run._loops.within`, ready with the loop that needs it), else numpy's min and max."""
    within = _within
    if within is not None:
        return all(within(x, _NEAR64) for x in flat)
    return all(x.size == 0 or (int(x.min()) >= -_NEAR and int(x.max()) <= _NEAR) for x in flat)


_NEAR64 = np.int64(_NEAR)
_within: Any = None  # the compiled check of _near, once the int64 Div loop of _IDIV53 has been compiled


def _small_exponents(flat: list) -> bool:
    """Whether every exponent (the second of ``flat``) is from 0 to 63."""
    y = flat[1]
    return y.size == 0 or (int(y.min()) >= 0 and int(y.max()) < 64)


def _variant(code: int, value: np.dtype):
    """The loop that computes op ``code`` on ``value`` inputs faster where the inputs' values allow, the
    check of those values (a pass over the inputs: the stretched ones are small), and the least output size
    (elements) at which the check pays; or None.

    - int64 Div: :data:`_IDIV53` (float64, truncated: exact there; it vectorizes, on AVX2 too) when every input
      is within +-2**51, else C's division (measured, 2**18 elements, one thread, AVX-512: sdiv 0.36 ms, the
      float64 loop 0.11 ms, OpenVINO 0.09-0.15; AVX2 alone, into ``out=``: 0.68-1.18 -> 0.20-0.29 ms, OpenVINO
      at two threads 0.19-0.28); from 2**12 elements: below, the check (then two numpy reductions an input, ~3 us) cost
      about what it saved (2**10 elements: 8.2 us with it, onnxruntime 5.7 us).  The check is one compiled
      pass an input (:func:`_near`): 2**22 elements, same shapes, 3.9 -> 1.5 ms, the Div 6.0 -> 3.8 ms
      (onnxruntime at two threads ~5 ms).
    - integer Pow: :data:`_IPOW6` (the squares a, a**2 ... a**32 picked by the exponent's bits: no loop per
      element, it vectorizes) when every exponent is from 0 to 63, else the squaring loop."""
    if code == _IDIV and value == _I64:
        return _IDIV53, _near, 1 << 12
    if code == _POW and value.kind in "iu":
        return _IPOW6, _small_exponents, 0
    return None


def _flat1(a: np.ndarray, half: bool) -> np.ndarray:
    """``a`` as the loop reads it: 1-D, float16 as its bits.  Writeable or not: the loop is compiled
    for read-only inputs (:func:`_compile`) and called through its entry point, which takes either
    (one data model; numba's type check is what the entry point skips), and it writes no input.
    Setting the flag on each call cost 0.3 us an input."""
    v = a.reshape(-1)
    if half and v.dtype == _F16:
        v = v.view(np.uint16)
    return v


def _arrays(found, threads: int):
    """A :func:`layout` as the loop takes it in ``threads`` threads: uint64 arrays, its row count, and the
    plan of a call shared among the threads (:func:`_go` copies it), or None (one thread or one row)."""
    outer, k, ops = found
    if not outer:  # one run: one row (the loop takes one outer axis at least)
        outer, ops = (1,), [((0,), i) for _, i in ops]
    shape = np.array(outer, np.uint64)
    operands = [(np.array(s, np.uint64), i) for s, i in ops]
    rows = int(math.prod(outer))
    plan = None
    if threads > 1 and rows > 1:
        tasks = min(rows, threads * _pool.CHUNKS_PER_THREAD)
        plan = np.zeros(tasks + 4, np.uint64)  # [next task, tasks finished, bell rung, the tasks' row bounds]
        plan[3:] = np.arange(tasks + 1, dtype=np.uint64) * np.uint64(rows) // np.uint64(tasks)
    return shape, k, operands, rows, plan


def _go(fn, code: int, lanes: int, out: np.ndarray, flat: list, arranged, threads: int) -> None:
    """The loop ``fn`` into ``out`` (C-contiguous; float16 as its bits) from the 1-D ``flat`` inputs,
    in rows shared among ``threads``."""
    shape, k, operands, rows, shared = arranged
    o = out.reshape(-1)
    o = o.view(np.uint16) if o.dtype == _F16 else o
    args = _loop_args(code, lanes, o, k, shape, flat, operands)
    if shared is None:  # (a call from inside a task: run_shared runs it in this thread alone)
        fn(*args, 0, rows, _SOLO, BELL)
        return
    plan = shared.copy()  # the layout's, made once: 4 numpy calls, ~8 us with the caches cold (2**22 float32)
    loops = _kernel
    box = [(o, flat)]  # emptied once every task has finished: a part that starts later finds nothing

    def part() -> None:
        try:
            found = box[0] if box else None
            # the part's arrays own nothing: a part lingers after its tasks (_loops.rows2), and its arrays must
            # not keep the call's output alive meanwhile (a recycled output would not be reused by the next call,
            # and two outputs taking turns cost the cache: float32 2**22 row Add 0.52 ms into one output, 0.73
            # into two).  The lead holds the arrays until every task has finished; a part finds no task after.
            mine = None if found is None else \
                _loop_args(code, lanes, _unowned(found[0]), k, shape, [_unowned(x) for x in found[1]], operands)
            del found
        except Exception:  # noqa: BLE001 - the lead takes every task a part leaves
            mine = None
        if mine is None:  # the call has ended (or no memory for the views): counted as started, it ends here
            loops.unasked(BELL, 1)
            return
        fn(*mine, 0, 0, plan, BELL)

    def lead(parts: int) -> None:
        if fn(*args, parts, 1, plan, BELL):  # tasks still running (a part's thread was preempted): wait
            while loops.settle(plan):
                time.sleep(1e-4)

    try:
        _pool.run_shared(threads, part, lead, lambda parts: loops.halt(plan, BELL, parts),
                         lambda parts: loops.unasked(BELL, parts))
    finally:
        box.clear()


def _loop_args(code: int, lanes: int, out: np.ndarray, k: int, shape, flat: list, operands) -> list:
    """The arguments of a loop's call (:func:`bcast.run._loops.rows2`) but its range and plan."""
    args: list = [code, lanes, out, k, shape]
    for x, (s, i) in zip(flat, operands):
        args += (x, s, i)
    return args


def _unowned(a: np.ndarray) -> np.ndarray:
    """The 1-D array ``a``'s memory as an array that does not keep ``a`` alive (``a`` itself where it is
    not contiguous: every array of a loop's call is)."""
    if not a.flags.c_contiguous:
        return a
    memory = (ctypes.c_char * a.nbytes).from_address(a.ctypes.data)
    return np.frombuffer(memory, a.dtype)  # type: ignore[call-overload]  # (a ctypes array exports a buffer)


def _pays(code: int, value: np.dtype, found, size: int, marked: bool) -> bool:
    """Whether the compiled loop beats numpy's own here (:data:`BROADCAST_MIN` and the others);
    ``marked``: a kernel marked with a loop, whose numpy form is more than one ufunc call."""
    if value == _F16:
        return True
    if marked or code % _HALF >= _IDIV or len(found[2]) == 3:
        return size >= PASSES_MIN
    if value.itemsize == 1:
        return size >= ONE_BYTE_MIN or (size >= BROADCAST_MIN and 1 < found[1] < SHORT_ROW
                                         and any(inner == 0 for _, inner in found[2]))
    broadcast = any(0 in outer + (inner,) and any(outer + (inner,)) for outer, inner in found[2])
    return size >= (BROADCAST_MIN if broadcast else CONTIGUOUS_MIN)


#: How many times an Add's work an element of power is, as the thread threshold counts it: float16 power in
#: threads from 2**18 elements (measured in one thread: 3.4-4.8 ns an element against 0.1-0.3 for an Add; at
#: 2**18, same/row/column, one thread 0.89-0.95 ms, two 0.55-0.62, onnxruntime's two 0.47-0.53); integer
#: power from bcast.run.parallel.MIN_ELEMENTS (2**21), below which no op of its dtypes splits.
HEAVY = 32


#: The same for any other float16 op (converted to float32 and back): threads from 2**20 elements (measured,
#: two threads against one, an Add of rows: 0.84 at 2**20, 0.73 at 2**21, 0.65 at 2**22; 1.06 at 2**19).
HALF_WEIGHT = 2


def _nbytes(size: int, dtypes: tuple, dtype: np.dtype, code: int) -> int:
    """What a call moves, as the thread threshold counts it: its largest array's bytes (times
    :data:`HEAVY` for power, :data:`HALF_WEIGHT` for float16, whose time is more their computing)."""
    weight = HEAVY if code % _HALF == _POW else HALF_WEIGHT if code >= _HALF else 1
    return size * max(d.itemsize for d in (*dtypes, dtype)) * weight


def prepare(func, dtypes: tuple, shapes: tuple, shape: tuple, dtype) -> Loop | None:
    """The compiled loop of ``func`` (a numpy ufunc or a kernel marked by
    :func:`bcast.run.kernel.elementwise`) for inputs of ``dtypes`` whose aligned shapes
    (the output's rank, 1 where an input is stretched) are ``shapes``, into an output of
    ``shape`` and ``dtype``; None when no compiled loop computes it.

    ``loop.run(arrays, out, threads)`` then computes it: ``arrays`` C-contiguous, of those
    dtypes and of as many elements as the aligned shapes; ``out`` C-contiguous, of ``shape``
    and ``dtype``, sharing no memory with them (the caller checks all of this); ``threads``
    threads.  It returns False when the loop is not ready (being compiled in the background,
    or numba failed): nothing was written, numpy's path runs instead."""
    if _kernel is False or not _env.switch("BCAST_KERNELS") or not _numba_installed():
        return None
    dtypes, dtype = tuple(np.dtype(d) for d in dtypes), np.dtype(dtype)
    spec = _code(func, dtypes, dtype)
    if spec is None or math.prod(shape) == 0:
        return None
    code, swapped = spec
    marked, code = code >= _MARKED, code % _MARKED
    strides = [stretched_strides(s, shape) for s in shapes]
    if swapped:
        strides, dtypes = strides[::-1], dtypes[::-1]
    found = layout(strides, shape)
    size = math.prod(shape)
    if found is None or not _pays(code, dtypes[-1], found, size, marked):
        return None
    return Loop(code, _key(code, dtypes, dtype, found[1]), found, _warns(func, code, dtypes), dtypes[-1] == _F16,
                swapped, _nbytes(size, dtypes, dtype, code))


@functools.cache
def _numba_installed() -> bool:
    """Whether numba can be imported (asked once: a search of the import path; it is imported only
    when a loop is first compiled)."""
    return importlib.util.find_spec("numba") is not None


def stretched_strides(aligned: tuple, shape: tuple) -> tuple:
    """Element strides of a C-contiguous array of ``aligned`` seen at ``shape`` (0 where stretched)."""
    out, step = [], 1
    for a, d in zip(reversed(aligned), reversed(shape)):
        out.append(step if a == d and d != 1 else 0)
        step *= a
    return tuple(reversed(out))


def _key(code: int, dtypes: tuple, dtype: np.dtype, k: int) -> tuple:
    """The key of the compiled loop of op ``code`` on ``dtypes`` into ``dtype`` for rows of ``k`` elements:
    (input count, the op code, the width of its remainder (:func:`lanes`), the inputs' and the output's
    dtypes as the loop stores them)."""
    stored = tuple(_storage(d) for d in dtypes)
    out = _storage(dtype)
    return len(dtypes), code, lanes(k, (*stored, out)), tuple(d.str for d in stored), out.str


#: LLVM's vector width for the remainder of a loop (its epilogue) while bcast's loops compile.  LLVM's
#: main vector loop takes VF x 4 elements a step (float16 computed in float32: 128), so a shorter row runs
#: in the epilogue, at 8 lanes by default.  Measured, one thread, 2**18 output elements (rows of 32 /
#: 64 / 4096, microseconds; LLVM's default, then this): float16 Mean of three inputs 62 / 61 / 35 -> 40 /
#: 39 / 34, float16 Add 26 / 21 / 14 -> 17 / 14 / 14, int8 Add 14 / 9 / 4.7 -> 13 / 9 / 4.4, float32 and
#: float64 unchanged; 32 lanes skipped the epilogue of float32 loops (rows of 32: 30 -> 78), 8 is the
#: default; forcing one interleave instead (``-force-vector-interleave=1``) gave the short rows the same
#: and the long ones 10% less.
EPILOGUE_VF = 16
#: the epilogue's width for loops whose arrays are all of 1-byte elements (int8, uint8, bool): LLVM's main
#: step there is 256 elements, and 16 lanes (an SSE register) took a row of 32 in two steps.  Measured, one
#: thread, 2**18 output elements, rows of 32 (microseconds; 16 lanes, then 32, both with numba's noalias):
#: int8 Max of three (16,1,32,1)(16,1,32)(16,1,32) 22.6 / 19.8, (16,16,32,32)(16,1,1,32)(16,1,1,32) 18.6 /
#: 17.4, int8 Where 21.8 / 20.0; rows of 4096 and same-shape unchanged (float16 at 32: no better, so 16).
EPILOGUE_VF_BYTES = 32


def lanes(k: int, dtypes: tuple) -> int:
    """The epilogue width for rows of ``k`` elements of a loop over arrays of ``dtypes`` (as stored): the
    default (:data:`EPILOGUE_VF_BYTES` where every element is of 1 byte, else :data:`EPILOGUE_VF`), or 16 or 8
    where the row is shorter than the default and at least that long, so that the row is computed in vectors,
    not one element at a time (each width is a loop of its own: a compile and a cache entry).  Measured, one
    call into a given output, 2**14 / 2**10 elements (microseconds, the default width, then this): int8 Max
    of three (8,1,16,1)(8,1,16)(8,1,16) 16.5 -> 7.9, int8 Div (8,8,16,16)(8,1,1,16) 17.5 -> 5.6, int8 Where
    15.2 -> 7.7, float16 Div (4,4,8,8)(4,1,1,8) 9.7 -> 5.2; a narrower width for longer rows was slower (rows
    of 32: int8 Max of three 25.2 -> 28.7 at 16 lanes; float16 Mean of three 49 -> 72 at 8), hence a loop of
    its own for the short rows alone.

    >>> int8 = np.dtype(np.int8)
    >>> lanes(16, (int8, int8)), lanes(32, (int8, int8)), lanes(8, (np.dtype(np.uint16),) * 2), lanes(4, (int8,))
    (16, 32, 8, 32)
    """
    widest = EPILOGUE_VF_BYTES if all(d.itemsize == 1 for d in dtypes) else EPILOGUE_VF
    width = widest // 2
    while width >= 8:
        if width <= k < 2 * width:
            return width
        width //= 2
    return widest


def try_run(func, views: list, out: np.ndarray, n: int) -> np.ndarray | None:
    """``func(*views, out=out)`` by the compiled loop in ``n`` threads, or None: numpy's turn.

    None leaves ``out`` as numpy will find it: either nothing was written (no loop for this op,
    not compiled yet, a layout the loop does not take), or the loop failed part way and numpy
    then writes every element again (``out`` shares no memory with the views)."""
    if not (out.flags.c_contiguous and out.flags.aligned) or len(views) not in (2, 3) or out.size == 0:
        return None
    dtypes = tuple(v.dtype for v in views)
    spec = _code(func, dtypes, out.dtype)
    if spec is None or overlaps(out, views):
        return None
    code, swapped = spec
    marked, code = code >= _MARKED, code % _MARKED
    if _warns(func, code, dtypes) and not _quiet():
        return None
    if any(s % v.itemsize for v in views for s in v.strides) or not all(v.flags.aligned for v in views):
        return None
    if swapped:
        views, dtypes = views[::-1], dtypes[::-1]
    steps = [tuple(s // v.itemsize for s in v.strides) for v in views]
    found = layout(steps, out.shape)
    if found is None or not _pays(code, dtypes[-1], found, out.size, marked):
        return None
    # (the rows' length picks the loop; threads cut only rows of 2 * MIN_ROW or more: the same loop)
    key = _key(code, dtypes, out.dtype, found[1])
    fn = _ready(key)
    if fn is None:
        return None
    flat = [_span(v, st) for v, st in zip(views, steps)]
    variant = _variant(code, dtypes[0])
    if variant is not None and out.size >= variant[2]:
        faster_key = _key(variant[0], dtypes, out.dtype, found[1])
        faster = _ready(faster_key)
        if faster is not None and variant[1](flat):
            fn, key = faster, faster_key
    n = n if _nbytes(out.size, dtypes, out.dtype, key[1]) >= THREADS_BYTES else 1
    parts = n * _pool.CHUNKS_PER_THREAD if n > 1 else 1
    try:
        _go(fn, key[1], key[2], out, flat, _arrays(_cut(found, parts), n), n)
    except Exception:  # part of out may be written: numpy's turn writes all of it (it overlaps no view)
        return None
    return out


def _span(v: np.ndarray, steps) -> np.ndarray:
    """The memory ``v`` spans, as a read-only 1-D array from its first element (strides >= 0)."""
    span = 1 + sum((d - 1) * s for d, s in zip(v.shape, steps)) if v.size else 0
    flat = np.lib.stride_tricks.as_strided(v, shape=(span,), strides=(v.itemsize,), writeable=False)
    return flat.view(np.uint16) if flat.dtype == _F16 else flat


# --------------------------------------------------------------------------- compiling


#: [parts of shared calls asked for, parts started or cancelled] (:mod:`bcast.run._loops`: a pool thread that
#: has run out of tasks stays awake until a part waits in the queue); counted atomically by compiled code.
BELL = np.zeros(2, np.uint64)
_SOLO = np.zeros(0, np.uint64)  # the plan of a call in one thread
_compiled: dict = {}  # key -> the compiled loop's entry point (no type dispatch: its arguments' types are the key's)
_failed: set = set()  # keys numba could not compile
_requested: set = set()  # keys queued or compiled
_lock = threading.Lock()
_jobs: queue.Queue = queue.Queue()
_worker: threading.Thread | None = None


def _after_fork() -> None:
    """In a child: a compile in progress in the parent's thread never ends here, and numba's own
    lock may be held by that thread: no more compiles in this process (ready loops still run).  The
    parent's pool threads do not exist here: the bell's counts start again."""
    global _lock, _jobs, _worker, _kernel
    BELL[:] = 0
    _lock, _jobs = threading.Lock(), queue.Queue()
    if _worker is not None and _requested - set(_compiled) - _failed:
        _kernel = False
    _worker = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def available() -> bool:
    """Whether the compiled loops run: numba importable and ``BCAST_KERNELS`` not 0."""
    return _get() is not None


def _get():
    global _kernel
    if _kernel is None:
        with _lock:
            if _kernel is None:
                _kernel = _import() if _env.switch("BCAST_KERNELS") else False
    return _kernel or None


def _import():
    try:
        from . import _loops
    except Exception:  # no numba, or numba that cannot set up (no cache folder it can write, ...)
        return False
    return _loops


def _ready(key: tuple):
    """The compiled loop of ``key`` if it is ready; else None, its compile requested."""
    if _kernel is False:  # turned off (BCAST_KERNELS=0, no numba, a child forked mid-compile)
        return None
    fn = _compiled.get(key)
    if fn is not None:
        return fn
    if key in _failed:
        return None
    if not BACKGROUND:
        _compile(key)
        return _compiled.get(key)
    global _worker
    with _lock:
        if key not in _requested:
            _requested.add(key)
            _jobs.put(key)
            if _worker is None or not _worker.is_alive():
                _worker = threading.Thread(target=_work, name="bcast-compile", daemon=True)
                _worker.start()
    return None


def _work() -> None:
    while True:
        try:
            key = _jobs.get(timeout=1.0)
        except queue.Empty:
            return
        try:
            _compile(key)
        finally:
            _jobs.task_done()


def _compile(key: tuple) -> None:
    """Compile (or load from numba's cache) the loop of ``key``: run it on an empty range."""
    loops = _get()
    if loops is None:
        _failed.add(key)
        return
    nin, code, width, ins, out = key
    empty = [np.empty(0, np.dtype(d)) for d in ins]
    for e in empty:
        e.flags.writeable = False
    strides = np.zeros(1, np.uint64)
    args: list = [np.empty(0, np.dtype(out)), 1, np.ones(1, np.uint64)]
    for e in empty:
        args += (e, strides, 0)
    try:
        if code == _IDIV53:  # its check, compiled first: the loop is used once both are ready
            global _within
            _within = loops.within()
        _compiled[key] = loops.entry(nin, code, width, *args, 0, 0, _SOLO, BELL)
    except Exception:  # numba could not compile it: numpy's loops run
        _failed.add(key)


def wait(timeout: float | None = None) -> bool:
    """Block until every loop requested so far is compiled (or has failed); False on timeout."""
    if not _jobs.unfinished_tasks:
        return True
    done = threading.Event()

    def joined() -> None:
        _jobs.join()
        done.set()

    threading.Thread(target=joined, daemon=True).start()
    return done.wait(timeout)
