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
- Only outputs of at least :data:`MIN_ELEMENTS` elements are split among
  threads: below, a thread costs more than it saves (the calling thread takes
  tasks too).  Outputs of at least ``2 * bcast.run._blocked.TILE`` are blocked.
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

import contextvars
import itertools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np

from . import _blocked, _budget, _kernels, _recycle
from ..core import _env
from ._blocked import split
from ..core._format import brief
from ..core.errors import InputError

__all__ = ["MIN_ELEMENTS", "elementwise", "in_task", "is_elementwise", "run_chunked", "run_tasks", "set_threads", "split",
           "threads", "try_run"]

#: Outputs smaller than this (elements) run in one thread (measured: benchmarks/run.py --only threshold).
MIN_ELEMENTS = 1 << 21
#: Chunks per thread: more than one evens out threads slowed by other processes.
CHUNKS_PER_THREAD = 4

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


def elementwise(func: Callable) -> Callable:
    """Mark ``func(*views, out=out)`` as element-wise: computing slices of ``out`` from the same
    slices of the views gives the same values, and it raises nothing that depends on the values."""
    func._bcast_elementwise = True
    return func


def is_elementwise(func: Callable) -> bool:
    """A ufunc with one output, or a callable marked by :func:`elementwise`."""
    if type(func) is np.ufunc:
        return func.nout == 1
    return getattr(func, "_bcast_elementwise", False) is True


# --------------------------------------------------------------------------- the pool
#
# One executor, shared by every call.  Each call counts itself in as a user of the executor it
# submits to; a larger one (set_threads, BCAST_THREADS) replaces it for later calls, and the old
# one is shut down by its last user (a call mid-op keeps the executor it started with).  After
# os.fork() the child starts with no pool (its copy of the parent's would wait on threads that
# do not exist in the child) and fresh locks.


class _Pool:
    __slots__ = ("executor", "size", "users", "retired")

    def __init__(self, size: int) -> None:
        self.executor = ThreadPoolExecutor(size, thread_name_prefix="bcast")
        self.size, self.users, self.retired = size, 0, False


_pool: _Pool | None = None
_pool_lock = threading.Lock()


def _acquire(n: int) -> _Pool:
    """The pool, with at least ``n`` threads, counted as used by one more call."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool.size < n:
            old, _pool = _pool, _Pool(n)
            if old is not None:
                old.retired = True
                if old.users == 0:
                    old.executor.shutdown(wait=False)
        _pool.users += 1
        return _pool


def _retire(pool: _Pool) -> None:
    """Later calls get a new pool; ``pool`` is shut down by its last user."""
    global _pool
    with _pool_lock:
        if _pool is pool:
            _pool = None
        pool.retired = True


def _release(pool: _Pool) -> None:
    with _pool_lock:
        pool.users -= 1
        if pool.retired and pool.users == 0:
            pool.executor.shutdown(wait=False)


# Scratch belongs to one call: a worker of a call takes one from this free list and gives it back
# when the call's tasks are done, so a bcast call made from inside a task (a kernel that calls
# bcast, numpy's errstate(call=...) callback) never shares the scratch its caller is using.
_scratch_free: list = []
_scratch_lock = threading.Lock()
#: Scratch buffers kept for reuse at most (the rest are dropped when given back).
MAX_SCRATCH = 64


def _take_scratch() -> _blocked.Scratch:
    with _scratch_lock:
        if _scratch_free:
            return _scratch_free.pop()
    return _blocked.Scratch()


def _give_scratch(scratch: _blocked.Scratch) -> None:
    with _scratch_lock:
        if len(_scratch_free) < MAX_SCRATCH:
            _scratch_free.append(scratch)


_local = threading.local()  # .depth: how many bcast tasks this thread is running (nested calls: > 1)


def _after_fork() -> None:  # in the child: no threads of the parent's pool exist here
    global _pool, _pool_lock, _scratch_lock
    _pool, _pool_lock, _scratch_lock = None, threading.Lock(), threading.Lock()
    _scratch_free.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


# --------------------------------------------------------------------------- running


def run_chunked(func: Callable, views: list, out, n: int | None = None):
    """``func(*views, out=out)`` computed by ``n`` threads (default :func:`threads`),
    each on tasks of :func:`bcast.run._blocked.schedule` (blocks of ``out`` and the same
    blocks of the views, all of ``out``'s shape); ``n = 1`` runs them in this thread."""
    n = threads() if n is None else n
    plan = _blocked.schedule(views, out, n * CHUNKS_PER_THREAD)
    token = _budget.blocks_begin(out.shape)  # the kernel's intermediates are checked for the whole op
    try:
        run_tasks(n, len(plan.tasks), lambda i, scratch: plan.run(func, i, scratch))
    finally:
        _budget.blocks_end(token)
    return out


def in_task() -> bool:
    """Whether this thread is running a task of a bcast call (a call from inside it runs inline)."""
    return getattr(_local, "depth", 0) > 0


def run_tasks(n: int, total: int, run: Callable) -> None:
    """``run(i, scratch)`` for every task ``0 <= i < total``, by ``n`` threads taking tasks in
    turn (``scratch``: a :class:`bcast.run._blocked.Scratch` that the running worker holds for this
    call alone); ``n = 1``, one task, or a call from inside a task: all in this thread.

    The first exception of any task is raised once every worker has stopped; an exception in
    this thread (KeyboardInterrupt included) stops the workers taking tasks and is raised once
    they have stopped: nothing of this call runs after it returns or raises.  When the pool
    cannot take work (interpreter shutdown, an ``atexit`` handler) this thread runs every task."""
    stop = []  # not empty: take no more tasks
    running = [0]  # this call's pool workers running now (counted before they look at stop; not the
    ended = threading.Condition()  # calling thread's: Ctrl-C could land between its count and its try)

    def pooled():
        with ended:
            running[0] += 1
        try:
            worker()
        finally:
            with ended:
                running[0] -= 1
                ended.notify_all()

    def worker():
        _local.depth = getattr(_local, "depth", 0) + 1
        scratch = _take_scratch()
        try:
            while not stop:
                i = next(counter)  # next() of a count is atomic: threads take tasks in turn
                if i >= total:
                    return
                run(i, scratch)
        except BaseException:
            stop.append(True)
            raise
        finally:
            _give_scratch(scratch)
            _local.depth -= 1

    counter = itertools.count()
    if n == 1 or total == 1 or in_task():
        worker()
        return
    pool = _acquire(n - 1)
    futures: list = []
    mine = None
    try:
        try:
            for _ in range(n - 1):
                futures.append(pool.executor.submit(contextvars.copy_context().run, pooled))
        except RuntimeError:  # shut down (interpreter exit, atexit handlers): this thread takes every task
            pass
        except BaseException:  # Ctrl-C inside submit, maybe in Thread.start(): CPython's executor registers a
            _retire(pool)  # thread after starting it, and at exit nothing would wake one it never registered
            raise  # (the interpreter joins it for ever); a pool shut down wakes every thread of its queue
        worker()  # this thread takes tasks too: work starts before a pool thread has woken up (~0.1 ms here)
    except BaseException as e:  # Ctrl-C included: the workers stop, and it is raised once they have
        stop.append(True)
        mine = e
    try:
        first = _wait(futures)  # nothing of this call may write after the caller sees its end
        if mine is not None:  # Ctrl-C may have come between a submit and its future being kept: a worker
            _wait_ended(ended, running)  # the call has no future of runs, or sees stop and runs nothing
    finally:
        _release(pool)
    if mine is not None:
        raise mine
    if first is not None:
        raise first


def _wait_ended(ended: threading.Condition, running: list) -> None:
    """Until no worker of the call runs (a worker counts itself in before it looks at ``stop``);
    a KeyboardInterrupt meanwhile waits too (the caller raises its own)."""
    while True:
        try:
            with ended:
                while running[0]:
                    ended.wait()
            return
        except BaseException:  # noqa: BLE001 - Ctrl-C again: keep waiting
            pass


def _wait(futures: list) -> BaseException | None:
    """Wait for every future; the first exception of one (or a KeyboardInterrupt that arrived while
    waiting: it is raised once all have ended, not while a worker may still write)."""
    first = None
    for f in futures:
        while True:
            try:
                e = f.exception()
                break
            except BaseException as interrupt:  # Ctrl-C while waiting: keep waiting, raise it after
                first = first or interrupt
        first = first or e
    return first


def try_run(func: Callable, views: list, out, dtype) -> Any:
    """The result of ``func(*views[, out=out])`` computed in threads, or None when this op
    is not for threads (small, one thread, not element-wise, an ``out=`` that overlaps
    an input, an output dtype that is not known); the caller then runs it in one call.

    ``out``: the caller's output (checked), or None: allocated here, of ``dtype``
    for a marked kernel, of numpy's result type for a ufunc."""
    shape = views[0].shape if views else ()
    size = math.prod(shape)
    n = threads() if size >= MIN_ELEMENTS else 1
    if (n < 2 and size < 2 * _blocked.TILE) or not is_elementwise(func):
        return None
    if out is None:
        dtype = _ufunc_dtype(func, views) if type(func) is np.ufunc else dtype
        if dtype is None:
            return None
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
