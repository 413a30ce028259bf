"""Compiled loops (numba, optional) for the large two-input arithmetic ops.

numpy's loop for ``(16,256,56,56) + (256,1,1)`` into a given output runs at
~1.3x onnxruntime's with the same two threads, however it is blocked: its
loops read a stride-0 operand through a buffer and stop every few thousand
elements.  One compiled loop over the output, per thread, reaches the memory
floor that onnxruntime reaches (a plain loop copying the same bytes), and
below it for large outputs with streaming stores (:mod:`bcast.run._loops`).  numba
compiles it once per dtype (cached on disk) and releases the GIL; bcast's
thread pool runs it on ranges of output rows.

Only what gives the same bits as numpy's loop is compiled: ``add``,
``subtract``, ``multiply`` (and ``divide`` for floats) on float32/float64
(and int32/int64, except divide), every operand of the output's dtype, no
casting; for floats only with numpy's floating-point warnings off (numpy
would have warned or raised on overflow; onnx/openvino/ncnn.run turn them
off, as those runtimes do).  The views are collapsed to at most three axes
(rows of the two outer axes, a contiguous inner run) with element strides
that are 0 or positive; anything else -- negative strides, four axes that do
not merge, a non-contiguous output -- stays with numpy.

``BCAST_KERNELS=0`` turns the compiled loops off; without numba they are off.

>>> import numpy as np
>>> layout([(4, 1), (0, 1)], (3, 4))  # (3,4) + (4,): rows of 4, B's run restarts each row
((1, 3, 4), [(0, 4, 1), (0, 0, 1)])
>>> layout([(20, 4, 1), (0, 1, 0)], (2, 5, 4))  # (2,5,4) + (5,1): one value of B per row
((2, 5, 4), [(20, 4, 1), (0, 1, 0)])
>>> layout([(60, 20, 5, 1), (0, 0, 5, 1)], (2, 3, 4, 5))  # (2,3,4,5) + (4,5): two axes each
((1, 6, 20), [(0, 20, 1), (0, 0, 1)])
"""

from __future__ import annotations

import os
import threading

import numpy as np

from ..core import _env
from . import _pool
from .kernel import ufunc_of
from .out import overlaps

__all__ = ["Loop", "available", "layout", "prepare", "try_run"]

#: the ufuncs compiled (bcast.run._loops.CODES has each name)
_UFUNCS = (np.add, np.subtract, np.multiply, np.divide)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_INTS = (np.dtype(np.int32), np.dtype(np.int64))
#: Outputs of this many bytes or more, in rows of STREAM_ROW_BYTES or more, are written with streaming
#: stores (bcast.run._loops).  Short rows are not: a row's unaligned ends are plain stores to the cache lines
#: the next row's streamed vectors share, and each such mix costs a trip to memory (measured: rows of
#: 56 float32 streamed, 16x slower than plain stores).
STREAM_BYTES = 8 << 20
STREAM_ROW_BYTES = 4096

_kernel = None  # bcast.run._loops, or False once it is known to be unavailable
_lock = threading.Lock()


def _after_fork() -> None:  # the child: a lock a thread of the parent held (compiling) is free here
    global _lock
    _lock = threading.Lock()


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
                _kernel = _compile() if _env.switch("BCAST_KERNELS") else False
    return _kernel or None


def _compile():
    try:
        from . import _loops
    except Exception:  # no numba, or numba that cannot set up (no cache folder it can write, ...)
        return False
    return _loops


def _spec(func):
    """(ufunc, swapped, quiet) of what ``func`` computes, or None: a plain ufunc is quiet when
    numpy's floating-point warnings are off; a marked kernel turns them off itself."""
    if type(func) is np.ufunc:
        err = np.geterr()
        quiet = err["over"] == err["under"] == err["invalid"] == err["divide"] == "ignore"
        return (func, False, quiet)
    spec = ufunc_of(func)
    return None if spec is None else (*spec, True)


def layout(strides: list, shape: tuple):
    """Collapse a C-contiguous output of ``shape`` and its operands' element
    ``strides`` to three axes: ``((I, J, K), [(s0, s1, s2) per operand])``;
    None if they do not collapse to three (or a stride is negative)."""
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
    if len(axes) > 3:
        return None
    while len(axes) < 3:
        axes.insert(0, [1, [0] * len(strides)])
    return tuple(a[0] for a in axes), [tuple(a[1][i] for a in axes) for i in range(len(strides))]


def _flat(v: np.ndarray, steps) -> np.ndarray:
    """The memory ``v`` spans, as a 1-D array from its first element (strides >= 0)."""
    span = 1 + sum((d - 1) * s for d, s in zip(v.shape, steps))
    return np.lib.stride_tricks.as_strided(v, shape=(span,), strides=(v.itemsize,), writeable=False)


def try_run(func, views: list, out: np.ndarray, n: int) -> np.ndarray | None:
    """``func(*views, out=out)`` by the compiled loop in ``n`` threads, or None: numpy's turn.

    None leaves ``out`` as numpy will find it: either nothing was written (no loop for this
    op, or numba could not compile one: it is compiled on an empty range of rows before any
    row runs), or the loop failed part way and numpy then writes every element again (``out``
    shares no memory with the views, or the loop is not used, so what it wrote is never read)."""
    spec = _spec(func) if len(views) == 2 else None
    if spec is None:
        return None
    ufunc, swapped, quiet = spec
    dtype = out.dtype
    if ufunc not in _UFUNCS or not (out.flags.c_contiguous and out.flags.aligned) \
            or any(v.dtype != dtype for v in views):
        return None
    if overlaps(out, views):
        return None
    if not ((dtype in _FLOATS and quiet) or (dtype in _INTS and ufunc is not np.divide)):
        return None
    size = dtype.itemsize
    if any(s % size for v in views for s in v.strides) or not all(v.flags.aligned for v in views):
        return None
    steps = [tuple(s // size for s in v.strides) for v in views]
    found = layout(steps, out.shape)
    loops = _get() if found is not None else None
    if loops is None:
        return None
    (I, J, K), (sa, sb) = found  # noqa: E741 - the loop's three axes, named as in _loops.rows
    a, b = _flat(views[0], steps[0]), _flat(views[1], steps[1])
    if swapped:
        a, b, sa, sb = b, a, sb, sa
    args = (loops.CODES[ufunc.__name__], a, b, out.reshape(-1), J, K, *sa, *sb)
    stream = out.nbytes >= STREAM_BYTES and K * size >= STREAM_ROW_BYTES
    try:
        loops.rows(*args, 0, 0, stream)  # compiles the loop for these types; an empty range writes nothing
    except Exception:  # numba could not compile it: nothing was written
        return None
    try:
        _run(loops.rows, args, I * J, n, stream)
    except Exception:  # part of out may be written: numpy's turn writes all of it (it overlaps no view)
        return None
    return out


def _run(kernel, args, rows: int, n: int, stream: bool) -> None:
    """The kernel on ranges of rows, in the pool's threads and tasks."""
    tasks = max(1, min(rows, n * _pool.CHUNKS_PER_THREAD if n > 1 else 1))
    bounds = [rows * t // tasks for t in range(tasks + 1)]
    _pool.run_tasks(n, tasks, lambda t, _: kernel(*args, bounds[t], bounds[t + 1], stream))


class Loop:
    """A compiled loop made ready for one call signature (see :func:`prepare`)."""

    def run(self, arrays: list, out: np.ndarray, threads: int) -> bool:
        """Compute into ``out`` from ``arrays``; False when the loop cannot run now (nothing written)."""
        return False


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
    return None  # (the interface; the loops come with issue 18)
