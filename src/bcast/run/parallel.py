"""Threads and blocking for large element-wise ops: the output computed in tasks.

numpy's ufuncs release the GIL, so threads that each run the op on a block
of the output -- and the same blocks of the stride-0 input views -- run in
parallel.  The blocks are :mod:`bcast.run._blocked`'s tasks: tiles over which
every operand is contiguous (a short broadcast operand copied once into a
scratch tile held by one worker of the call), or plain chunks along one axis.  Every element is
computed by the same kernel, in the same order of steps, as in one call: the
result is the same, bit for bit (a variadic Sum adds its inputs into each
block in input order, as it does whole).  One thread runs the same tasks.

- :func:`threads` / :func:`set_threads`: how many threads (default: the cores
  this process may use, ``os.sched_getaffinity``; or ``BCAST_THREADS``).
- Only outputs of at least :data:`MIN_ELEMENTS` elements (float16:
  :data:`MIN_ELEMENTS_F16`, :func:`split_threads`) are split among threads:
  below, a thread costs more than it saves (the calling thread takes tasks too).
  Outputs of at least ``2 * bcast.run._blocked.TILE`` are blocked.
- Only kernels known to be element-wise are split: numpy ufuncs with one
  output, and callables marked with :func:`elementwise` (bcast's framework
  kernels).  An ``out=`` that shares memory with an input is never split
  (numpy would have buffered it).
- Each task runs in a copy of the caller's context, so ``np.errstate`` holds
  in the threads too; the first exception of any task is raised once every
  worker has stopped (an exception in the caller, Ctrl-C included, stops the
  workers first: nothing writes into ``out=`` after the call has ended).
- The threads live in one persistent pool, safe around what a program does: a
  call from inside a task runs inline (with scratch of its own: scratch belongs
  to one call's worker, never to a thread); a forked child starts with no pool;
  a larger pool replaces the old one for later calls while calls mid-op keep
  theirs; when the pool takes no more work (interpreter exit) the calling thread
  runs every task.

>>> import numpy as np
>>> previous = set_threads(2)
>>> threads()
2
>>> a = np.arange(2 * MIN_ELEMENTS, dtype=np.float32).reshape(2, -1)
>>> run_chunked(np.add, [a, np.broadcast_to(np.float32(1), a.shape)], np.empty_like(a))[0, :3]
array([1., 2., 3.], dtype=float32)
>>> _ = set_threads(previous)
"""

from __future__ import annotations

import math
import os
import time
from typing import Any
from collections.abc import Callable

import numpy as np

from . import _blocked, _budget, _kernels, _recycle
from ..core import _env
from ..core._format import brief
from ..core.errors import InputError
from ._blocked import split
from ._pool import CHUNKS_PER_THREAD, in_task, run_tasks
from .kernel import elementwise, is_elementwise

__all__ = ["CHUNKS_PER_THREAD", "MIN_ELEMENTS", "MIN_ELEMENTS_F16", "elementwise", "in_task", "is_elementwise",
           "run_chunked", "run_tasks", "set_threads", "split", "split_threads", "threads", "try_run"]

#: Outputs smaller than this (elements) run in one thread (measured: benchmarks/run.py --only threshold).
MIN_ELEMENTS = 1 << 21
#: float16 outputs of at least this many elements are split: numpy's float16 loops compute (they convert
#: each element to float32 and back), ~15x slower than its float32 ones, so a thread pays much sooner
#: (measured, an Add in 2 threads against numpy's one call, 6 broadcast patterns, 2 busy cores: 0.50-0.56x
#: from 2**20 elements, 0.55-0.65x at 2**18, 0.8x at 2**16 but 0.86-1.3x in another run, 1.1-1.5x at 2**14).
MIN_ELEMENTS_F16 = 1 << 18
_F16 = np.dtype(np.float16)

_threads: int | None = None  # set explicitly; None = BCAST_THREADS or the usable cores


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _check(n: Any, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"{what} must be a whole number of threads >= 1, got {brief(n)}")
    return int(n)


def threads() -> int:
    """How many threads a large op uses: :func:`set_threads`'s value, else the
    environment variable ``BCAST_THREADS``, else the cores this process may use."""
    if _threads is not None:
        return _threads
    env = os.environ.get("BCAST_THREADS")
    if env:
        return _env_threads(env)
    return _usable_cores()


def _env_threads(env: str) -> int:
    try:
        return _check(int(env), "BCAST_THREADS")
    except (ValueError, InputError):
        raise InputError(f"BCAST_THREADS must be a whole number of threads >= 1, got {brief(env)}") from None


def set_threads(n: int | None) -> int | None:
    """Use ``n`` threads for large ops (1: never split); ``None`` restores the
    default.  Returns the previous explicit setting (None if there was none)."""
    global _threads
    previous = _threads
    _threads = None if n is None else _check(n, "set_threads")
    return previous


def split_threads(size: int, dtype: Any) -> int:
    """How many threads an element-wise op with an output of ``size`` elements of ``dtype`` uses:
    :func:`threads` from :data:`MIN_ELEMENTS` elements on (float16: :data:`MIN_ELEMENTS_F16`), else 1.
    :func:`set_threads` applies at once; ``BCAST_THREADS`` and the process's cores are read again after
    :data:`REREAD_S` (each read cost ~1 us, and ~7 us after a large op's arrays had gone through the caches:
    a fifth of what a call did before its loop, at 2**22 float32 elements)."""
    if size < (MIN_ELEMENTS_F16 if dtype == _F16 else MIN_ELEMENTS):
        return 1
    if _threads is not None:
        return _threads
    n, until = _read
    now = time.monotonic()
    if now >= until:
        n = threads()  # (a bad BCAST_THREADS raises here, and is not kept)
        _read[:] = n, now + REREAD_S
    return n


#: Seconds for which :func:`split_threads` keeps what it read of ``BCAST_THREADS`` and the cores.
REREAD_S = 0.1
_read: list = [1, 0.0]  # [threads, monotonic time until which they hold]


# --------------------------------------------------------------------------- running


def run_chunked(func: Callable, views: list, out, n: int | None = None):
    """``func(*views, out=out)`` computed by ``n`` threads (default :func:`threads`),
    each on tasks of :func:`bcast.run._blocked.schedule` (blocks of ``out`` and the same
    blocks of the views, all of ``out``'s shape); ``n = 1`` runs them in this thread."""
    n = threads() if n is None else n
    schedule = _blocked.schedule(views, out, n * CHUNKS_PER_THREAD)
    token = _budget.blocks_begin(out.shape)  # the kernel's intermediates are checked for the whole op
    try:
        run_tasks(n, len(schedule.tasks), lambda i, scratch: schedule.run(func, i, scratch))
    finally:
        _budget.blocks_end(token)
    return out


def try_run(func: Callable, views: list, out, dtype) -> Any:
    """The result of ``func(*views[, out=out])`` computed in threads, or None when this op
    is not for threads (small, one thread, not element-wise, an ``out=`` that overlaps
    an input, an output dtype that is not known); the caller then runs it in one call.

    ``out``: the caller's output (checked), or None: allocated here, of ``dtype``
    for a marked kernel, of numpy's result type for a ufunc."""
    shape = views[0].shape if views else ()
    size = math.prod(shape)
    if size < 2 * _blocked.TILE and size < min(MIN_ELEMENTS, MIN_ELEMENTS_F16) or not is_elementwise(func):
        return None
    if out is None:
        dtype = _ufunc_dtype(func, views) if type(func) is np.ufunc else dtype
        if dtype is None:
            return None
    n = split_threads(size, dtype if out is None else getattr(out, "dtype", None))
    if n < 2 and size < 2 * _blocked.TILE:
        return None
    if out is None:
        out = _recycle.empty(shape, dtype)
    elif not isinstance(out, np.ndarray) or any(np.may_share_memory(out, v) for v in views):
        return None
    done = _kernels.try_run(func, views, out, n)  # a compiled loop, where one gives numpy's bits
    return done if done is not None else run_chunked(func, views, out, n)


def _ufunc_dtype(f: np.ufunc, views: list):
    """The dtype ``f(*views)`` returns, or None if numpy has no loop for them (the caller's call raises)."""
    try:
        return f.resolve_dtypes(tuple(v.dtype for v in views) + (None,))[-1]
    except (TypeError, ValueError):
        return None


# A bad BCAST_THREADS, BCAST_RECYCLE or BCAST_KERNELS fails here, once, when bcast first loads what runs
# ops (as a bad BCAST_MEMORY_BUDGET does), and not only on the first op large enough to read it.
if os.environ.get("BCAST_THREADS"):
    _env_threads(os.environ["BCAST_THREADS"])
_env.switch("BCAST_RECYCLE")
_env.switch("BCAST_KERNELS")
