"""The threads that run the tasks of one large op: :func:`run_tasks` (Python tasks, numpy's loops, on an
executor), :func:`run_shared` (a compiled loop whose threads share the tasks themselves, on threads of its
own fed through a queue).

One executor, shared by every call, with scratch that belongs to one call's
worker (never to a thread), safe around what a program does: a call from inside
a task runs inline; a forked child starts with no pool; a larger pool replaces
the old one for later calls while calls mid-op keep theirs; Ctrl-C stops the
workers before it is raised.  :mod:`bcast.run.parallel` decides what is split
and how; :mod:`bcast.run._kernels` runs its compiled loops through :func:`run_shared`.
"""

from __future__ import annotations

import contextvars
import itertools
import os
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable

from . import _blocked

__all__ = ["CHUNKS_PER_THREAD", "in_task", "run_shared", "run_tasks"]

#: Chunks per thread: more than one evens out threads slowed by other processes.
CHUNKS_PER_THREAD = 4

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
    global _pool, _pool_lock, _scratch_lock, _parts, _part_threads_lock
    _pool, _pool_lock, _scratch_lock = None, threading.Lock(), threading.Lock()
    _scratch_free.clear()
    _parts, _part_threads_lock = queue.SimpleQueue(), threading.Lock()
    _part_threads.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


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
    stop: list[bool] = []  # not empty: take no more tasks
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
                job[0](i, scratch)
        except BaseException:
            stop.append(True)
            raise
        finally:
            _give_scratch(scratch)
            _local.depth -= 1

    counter = itertools.count()
    # The tasks' function, held here: a cancelled future stays in the executor's queue until a pool thread
    # wakes, and it must not keep the call's arrays (its output: the recycler would not reuse it) alive.
    job = [run]
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
    # A worker that has not started by now would find no task left (or stop): its future is cancelled (it
    # never runs), not waited for.  Waiting cost the wake-up of a sleeping thread, which this thread's own
    # tasks had not needed: measured, two threads and 8 no-op tasks, 49 us a call; so, 10 us.
    futures = [f for f in futures if not f.cancel()]
    try:
        first = _wait(futures)  # nothing of this call may write after the caller sees its end
        if mine is not None:  # Ctrl-C may have come between a submit and its future being kept: a worker
            _wait_ended(ended, running)  # the call has no future of runs, or sees stop and runs nothing
    finally:
        job.clear()  # every future left has ended: no worker of this call reads it again
        _release(pool)
    if mine is not None:
        raise mine
    if first is not None:
        raise first


def run_shared(n: int, part: Callable[[], object], lead: Callable[[int], None], halt: Callable[[int], None],
               unasked: Callable[[int], None]) -> None:
    """A call whose threads share its tasks themselves (a compiled loop of :mod:`bcast.run._loops`, which
    takes its tasks from an atomic count): ``part()`` asked of ``n - 1`` threads of shared calls, ``lead(k)``
    run in this one (``k``: the parts asked for), which returns once every task has finished.  ``n = 1`` or
    a call from inside a task: ``lead(0)`` alone.

    A part that has run out of tasks may still be running after this returns: it writes nothing, but waits,
    awake, for the next call's parts (so that its thread needs the GIL only while the next lead runs without
    it); a part that starts after its lead has finished finds no task.  The parts not started by then are
    cancelled (``unasked(k)``).  An exception in this thread (Ctrl-C) calls ``halt(k)``, which stops the
    tasks and waits for the running ones to finish, and is raised: nothing of the call writes after this
    returns or raises."""
    if n == 1 or in_task():
        lead(0)
        return
    if len(_part_threads) < n - 1:
        try:
            _start_part_threads(n - 1)
        except RuntimeError:  # no new thread at interpreter exit (Python 3.12 on): those there take the parts
            pass
    cells = [[part] for _ in range(min(n - 1, len(_part_threads)))]
    try:
        for cell in cells:
            _parts.put(cell)
        lead(len(cells))
    except BaseException:
        halt(len(cells))
        raise
    finally:
        cancelled = 0
        for cell in cells:  # a part no thread has taken yet is cancelled: whoever pops a cell first owns it
            if cell:
                try:
                    cell.pop()
                except IndexError:  # taken by a thread meanwhile
                    continue
                cancelled += 1
        if cancelled:
            unasked(cancelled)


# --------------------------------------------------------------------------- the threads of shared calls
#
# run_shared's parts go to threads of their own through a queue of cells: a put and a get in C, no future.
# Through the executor, a part cost ~9 us between its lead's start and its own (the future's condition, the
# executor's semaphore), and its lead ~7 us before its loop, measured at 2**22 float32 elements, where each
# call's arrays have pushed the interpreter's own data out of the caches.  A cell is [part] until a thread
# or the part's lead pops it: list.pop is one step, so exactly one of them runs or cancels the part.  The
# threads are daemons, blocked in the queue's get when idle (nothing to join at exit); after os.fork() the
# child starts with none and a new queue.

_parts: queue.SimpleQueue = queue.SimpleQueue()
_part_threads: list[threading.Thread] = []
_part_threads_lock = threading.Lock()


def _start_part_threads(n: int) -> None:
    with _part_threads_lock:
        while len(_part_threads) < n:
            thread = threading.Thread(target=_serve_parts, args=(_parts,), daemon=True,
                                      name=f"bcast-part_{len(_part_threads)}")
            thread.start()
            _part_threads.append(thread)


def _serve_parts(parts: queue.SimpleQueue) -> None:
    while True:
        cell = parts.get()
        try:
            part = cell.pop()
        except IndexError:  # cancelled by its lead
            continue
        del cell
        part()
        del part  # nothing of a call held while this thread waits for the next


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
