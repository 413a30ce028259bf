"""bcast's threads under real use: calls from inside calls, fork, shutdown, Ctrl-C, set_threads
mid-op, and the recycled output buffers.  Whatever could hang runs in a subprocess with a
timeout, so that a hang fails the test instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import bcast
from bcast.run import _pool, _recycle, parallel

SRC = os.path.dirname(os.path.dirname(os.path.abspath(bcast.__file__)))  # the bcast under test

#: (8,64,32,32) + (64,1,1): runs of 1024, so its tasks are blocked (a scratch tile per worker).
BIG, SMALL = (8, 64, 32, 32), (64, 1, 1)


def _run_script(body: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``body`` in a fresh interpreter (bcast from this tree); a hang is a failure, not a hang."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung (killed after {timeout} s): {e.stderr!r}")


@pytest.fixture
def threads():
    previous = parallel.set_threads(2)
    yield parallel.set_threads
    parallel.set_threads(previous)


# --------------------------------------------------------------------------- calls from inside calls


def test_a_kernel_that_calls_bcast_keeps_its_scratch(threads):
    """Item 3: a kernel (marked element-wise) that runs a large blocked bcast op before reading
    its operands, with one thread: the inner call must not use the outer call's scratch tile."""
    threads(1)
    rng = np.random.default_rng(3)
    x, s = rng.standard_normal(BIG).astype(np.float32), rng.standard_normal(SMALL).astype(np.float32)
    y, t = rng.standard_normal(BIG).astype(np.float32), rng.standard_normal(SMALL).astype(np.float32) + 100

    @parallel.elementwise
    def add_after_another_op(a, b, out=None):
        inner = bcast.apply(np.add, y, t)  # blocked too: fills a scratch tile with t
        assert inner[0, 0, 0, 0] == y[0, 0, 0, 0] + t[0, 0, 0]
        return np.add(a, b, out=out)

    got = bcast.apply(add_after_another_op, x, s, dtype=np.float32)
    assert np.array_equal(got, x + s)


@pytest.mark.parametrize("n", [1, 2])
def test_errstate_callback_that_calls_bcast(threads, n):
    """Items 3 and 5: numpy's errstate(call=...) callback runs in the thread that ran the task (a
    pool thread too); a large op there runs inline: the right values, and no deadlock."""
    script = f"""
        import numpy as np, bcast
        from bcast.run import parallel
        parallel.set_threads({n})
        parallel.MIN_ELEMENTS = 1 << 16
        x = np.arange(np.prod({BIG}), dtype=np.float32).reshape({BIG}) % 7
        s = np.arange(64, dtype=np.float32).reshape({SMALL}) % 3   # zeros: divide by zero in some tasks
        inner = []
        def callback(kind, flag):
            inner.append(bcast.apply(np.add, x, s + 10))
        with np.errstate(divide="call", invalid="call", call=callback):
            got = bcast.apply(np.divide, x, s)
        with np.errstate(all="ignore"):
            assert np.array_equal(got, x / s, equal_nan=True)
        assert inner and all(np.array_equal(r, x + (s + 10)) for r in inner)
        print("ok", len(inner))
    """
    done = _run_script(script)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr


def test_large_op_inside_a_pool_task_runs_inline():
    """Item 5: a kernel run by a pool thread that itself starts a large op: no deadlock."""
    script = """
        import threading, numpy as np, bcast
        from bcast.run import parallel
        parallel.set_threads(2)
        parallel.MIN_ELEMENTS = 1 << 16
        x, y = np.ones((512, 1024), np.float32), np.ones(1024, np.float32)
        where = set()

        @parallel.elementwise
        def nested(a, b, out=None):
            where.add(threading.current_thread().name.startswith("bcast"))
            assert bcast.apply(np.add, x, y)[0, 0] == 2  # large: split in threads, if not inline
            return np.add(a, b, out=out)

        assert np.array_equal(bcast.apply(nested, x, y, dtype=np.float32), x + y)
        assert True in where  # a pool thread ran a task that called bcast
        print("ok")
    """
    done = _run_script(script)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


# --------------------------------------------------------------------------- fork


def test_fork_after_the_pool_started():
    """Item 4: after os.fork(), the child's large ops run (the child starts with a pool of its own)."""
    script = """
        import os, sys, numpy as np, bcast
        from bcast.run import parallel
        parallel.set_threads(2)
        parallel.MIN_ELEMENTS = 1 << 16
        x, s = np.ones((8, 64, 32, 32), np.float32), np.ones((64, 1, 1), np.float32)
        assert bcast.apply(np.add, x, s)[0, 0, 0, 0] == 2  # the pool has started
        pid = os.fork()
        if pid == 0:  # the child runs large ops, then exits as any program does (its interpreter shuts down)
            ok = bcast.apply(np.add, x, s).sum() == 2 * x.size and bcast.onnx.run("Sum", x, s, x).sum() == 3 * x.size
            sys.exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0, status
        print("ok")
    """
    done = _run_script(script, timeout=60)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


def test_multiprocessing_fork_after_the_pool_started():
    """Item 4: multiprocessing's fork start method (Linux's default before Python 3.14)."""
    script = """
        import multiprocessing as mp, numpy as np, bcast
        from bcast.run import parallel

        def job(k):
            x = np.full((8, 64, 32, 32), k, np.float32)
            return float(bcast.apply(np.multiply, x, np.ones((64, 1, 1), np.float32)).sum())

        if __name__ == "__main__":
            parallel.set_threads(2)
            parallel.MIN_ELEMENTS = 1 << 16
            job(1)  # the pool has started
            with mp.get_context("fork").Pool(2) as p:
                print(p.map(job, [1, 2, 3]) == [job(1), job(2), job(3)])
    """
    done = _run_script(script, timeout=90)
    assert done.returncode == 0 and done.stdout == "True\n", done.stderr


# --------------------------------------------------------------------------- set_threads, shutdown


def test_set_threads_while_another_thread_is_mid_op(threads, monkeypatch):
    """Item 6: another thread grows the pool (and the old one would be shut down) between this
    call taking the pool and giving it work: the call keeps the pool it took."""
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1 << 16)
    x, y = np.ones((512, 1024), np.float32), np.arange(1024, dtype=np.float32)
    real = _pool.contextvars.copy_context
    hooked = []

    def copy_context():
        if not hooked:  # once: another thread, more threads, a large op, before this call submits
            hooked.append(1)

            def other():
                parallel.set_threads(4)
                bcast.apply(np.subtract, x, y)

            t = threading.Thread(target=other)
            t.start()
            t.join()
        return real()

    monkeypatch.setattr(_pool.contextvars, "copy_context", copy_context)
    assert np.array_equal(bcast.apply(np.add, x, y), x + y)
    assert hooked


def test_set_threads_from_many_threads_mid_op(threads, monkeypatch):
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1 << 14)
    x, y = np.ones((256, 512), np.float32), np.arange(512, dtype=np.float32)
    errors, stop = [], threading.Event()

    def user():
        try:
            while not stop.is_set():
                assert np.array_equal(bcast.apply(np.add, x, y), x + y)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    users = [threading.Thread(target=user) for _ in range(3)]
    for t in users:
        t.start()
    for n in [2, 3, 5, 8, 2, 9, 12, 1, 16]:
        parallel.set_threads(n)
        time.sleep(0.02)
    stop.set()
    for t in users:
        t.join()
    assert not errors, errors


def test_large_op_in_an_atexit_handler():
    """Item 6: at interpreter exit the pool takes no more work: the op runs in the calling thread."""
    script = """
        import atexit, numpy as np, bcast
        from bcast.run import parallel
        parallel.set_threads(2)
        parallel.MIN_ELEMENTS = 1 << 16
        x, s = np.ones((8, 64, 32, 32), np.float32), np.ones((64, 1, 1), np.float32)

        def at_exit():
            print("exit", bcast.apply(np.add, x, s).sum() == 2 * x.size,
                  bcast.onnx.run("Add", x, s).sum() == 2 * x.size)

        atexit.register(at_exit)
        bcast.apply(np.add, x, s)  # the pool has started
        print("main")
    """
    done = _run_script(script)
    assert done.returncode == 0 and done.stdout == "main\nexit True True\n", done.stderr
    assert "Error" not in done.stderr, done.stderr


@pytest.mark.parametrize("before", [True, False])
def test_shared_compiled_call_in_an_atexit_handler(before):
    """The compiled loop's threads at interpreter exit: a call shared among threads started before, or the
    first shared call of the process (Python 3.12 on starts no thread there: the caller takes every task)."""
    script = f"""
        import atexit, numpy as np, bcast
        from bcast.run import _kernels, parallel
        _kernels.BACKGROUND = False
        parallel.set_threads(2)
        x, s = np.ones((8, 128, 64, 64), np.float32), np.ones((128, 1, 1), np.float32)  # 16 MiB: threads

        def at_exit():
            print("exit", bool((bcast.onnx.run("Add", x, s) == 2).all()))

        atexit.register(at_exit)
        if {before}:
            bcast.onnx.run("Add", x, s)
        print("main")
    """
    done = _run_script(script)
    assert done.returncode == 0 and done.stdout == "main\nexit True\n", done.stderr
    assert "Error" not in done.stderr, done.stderr


# --------------------------------------------------------------------------- Ctrl-C


def test_ctrl_c_leaves_out_alone_once_raised(threads, monkeypatch):
    """Item 7: a KeyboardInterrupt in the caller mid-op stops the workers, and is raised only
    once none of them can write into out= any more."""
    import _thread

    threads(4)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 8)
    x, y = np.ones((64, 1024), np.float32), np.ones((64, 1024), np.float32)

    @parallel.elementwise
    def slow_add(a, b, out=None):
        time.sleep(0.04)
        return np.add(a, b, out=out)

    for _ in range(3):
        out = np.zeros_like(x)
        timer = threading.Timer(0.03, _thread.interrupt_main)
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            bcast.apply(slow_add, x, y, out=out)
            time.sleep(5)  # the op ended before the interrupt: it lands here
        timer.join()
        snapshot = out.copy()
        time.sleep(0.3)  # more than the rest of the op would take
        assert np.array_equal(out, snapshot), "a worker wrote into out= after the KeyboardInterrupt"
        assert np.count_nonzero(out) < out.size  # it was stopped mid-op (16 tasks of 40 ms in 4 threads)


def test_ctrl_c_in_a_subprocess():
    """Item 7 with a real SIGINT: the process's out= is unchanged after the KeyboardInterrupt."""
    script = """
        import os, signal, threading, time, numpy as np, bcast
        from bcast.run import parallel
        parallel.set_threads(4)
        parallel.MIN_ELEMENTS = 8

        @parallel.elementwise
        def slow_add(a, b, out=None):
            time.sleep(0.04)
            return np.add(a, b, out=out)

        x = np.ones((64, 1024), np.float32)
        out = np.zeros_like(x)
        threading.Timer(0.03, os.kill, (os.getpid(), signal.SIGINT)).start()
        try:
            bcast.apply(slow_add, x, x, out=out)
            time.sleep(5)
        except KeyboardInterrupt:
            pass
        snapshot = out.copy()
        time.sleep(0.25)
        print(np.array_equal(out, snapshot), np.count_nonzero(out) < out.size)
    """
    done = _run_script(script)
    assert done.returncode == 0 and done.stdout == "True True\n", done.stderr


def test_an_error_in_one_task_stops_the_others(threads, monkeypatch):
    threads(2)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 8)
    ran = []

    @parallel.elementwise
    def failing(a, b, out=None):
        ran.append(1)
        raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError):
        bcast.apply(failing, np.ones((64, 64)), np.ones(64), dtype=np.float64)
    assert len(ran) <= 2  # each worker stops at its first error; not all 8 tasks ran


# --------------------------------------------------------------------------- recycled buffers


def test_recycler_does_not_rest_on_reference_counts(monkeypatch):
    """Item 11: CPython 3.14 can count a live result's buffer one lower than 3.13 does (borrowed
    references).  With counts that read low, a live result must still never be handed out again."""
    monkeypatch.setattr(_recycle, "MIN_BYTES", 64)
    _recycle.release()
    real = sys.getrefcount
    monkeypatch.setattr(sys, "getrefcount", lambda x: real(x) - 2)  # - 1 for this lambda's own reference
    a = _recycle.empty((64, 8), np.float64)
    b = _recycle.empty((64, 8), np.float64)
    c = _recycle.empty((64, 8), np.float64)
    assert not np.shares_memory(a, b) and not np.shares_memory(a, c) and not np.shares_memory(b, c)
    _recycle.release()


def test_recycled_buffer_is_lent_while_any_array_uses_it(monkeypatch):
    monkeypatch.setattr(_recycle, "MIN_BYTES", 64)
    _recycle.release()
    for keep in (lambda r: r[2:5], lambda r: memoryview(r), lambda r: np.asarray(memoryview(r)),
                 lambda r: r.reshape(-1).view(np.uint8), lambda r: np.frombuffer(r, np.uint8)):
        r = _recycle.empty((64, 8), np.float64)
        r[...] = 7
        kept = keep(r)
        del r
        for _ in range(4):  # every new output: a buffer other than the one kept alive
            other = _recycle.empty((64, 8), np.float64)
            other[...] = 0
        raw = np.asarray(kept).reshape(-1).view(np.uint8)
        assert np.array_equal(raw, np.full(raw.size // 8, 7.0).view(np.uint8)), keep
        del kept, other
    r = _recycle.empty((64, 8), np.float64)
    assert r.flags.writeable and r.flags.c_contiguous and r.flags.aligned
    _recycle.release()


def test_ctrl_c_right_after_a_task_was_queued_waits_for_that_worker_too(monkeypatch):
    # Ctrl-C can arrive after the pool queued a worker and before the call has its future (1 of
    # 50 interrupt_main runs): the call raised while that worker still wrote into out=
    started, lock, running = threading.Event(), threading.Lock(), [0]

    @parallel.elementwise
    def slow(x, y, out=None):
        with lock:
            running[0] += 1
        started.set()
        time.sleep(0.05)
        np.add(x, y, out=out)
        with lock:
            running[0] -= 1

    class Interrupted:  # the pool's submit, and Ctrl-C once the worker it queued is running a task
        def __init__(self, real):
            self.real = real

        def submit(self, *args):
            self.real.submit(*args)
            assert started.wait(10)
            raise KeyboardInterrupt

        def shutdown(self, wait=True):
            self.real.shutdown(wait)

    pool = _pool._Pool(1)
    pool.executor = Interrupted(pool.executor)
    monkeypatch.setattr(_pool, "_acquire", lambda n: pool)
    a = np.ones((16, 1000))
    out = np.zeros_like(a)
    try:
        with pytest.raises(KeyboardInterrupt):
            parallel.run_chunked(slow, [a, a], out, 2)
        assert running[0] == 0  # no worker of the call is still running
        snapshot = out.copy()
        time.sleep(0.2)
        assert np.array_equal(out, snapshot)
    finally:
        pool.executor.shutdown(wait=True)


def test_ctrl_c_while_the_pool_starts_a_thread_does_not_hang_the_exit():
    # a real SIGINT hung 2 of 60 processes at exit: Ctrl-C inside the pool's submit, in Thread.start(),
    # after the thread runs and before CPython's ThreadPoolExecutor registers it; at exit nothing
    # wakes that thread and the interpreter joins it for ever.  Here start() raises at that point.
    script = """
        import threading, numpy as np, bcast
        from bcast.run import parallel
        parallel.set_threads(2)
        start, raised = threading.Thread.start, []

        def interrupted_start(self):
            start(self)
            if self.name.startswith("bcast") and not raised:
                raised.append(True)
                raise KeyboardInterrupt

        threading.Thread.start = interrupted_start
        x = np.ones((1024, 4096), np.float32)
        try:
            bcast.apply(np.add, x, x)
        except KeyboardInterrupt:
            print("interrupted")
        threading.Thread.start = start
        print(bcast.apply(np.add, x, x)[0, 0])  # a later call works (a pool of its own)
    """
    done = _run_script(script, timeout=30)
    assert done.returncode == 0 and done.stdout == "interrupted\n2.0\n", done.stderr


def test_a_worker_that_never_started_neither_runs_nor_holds_the_call():
    """The calling thread takes every task before a pool thread wakes: that worker's future is cancelled
    (the call does not wait for the wake-up), it runs nothing afterwards, and its queued item does not keep
    what the tasks used alive."""
    import gc
    import weakref

    class Held:
        pass

    calls = []
    for _ in range(20):
        held, ran = Held(), []
        ref = weakref.ref(held)
        _pool.run_tasks(2, 4, lambda i, _, h=held, ran=ran: ran.append(i))
        assert sorted(ran) == [0, 1, 2, 3]
        calls.append(ran)
        del held
        gc.collect()
        assert ref() is None  # nothing of the call is held once it returned
    time.sleep(0.05)  # the pool threads wake and drop the cancelled items: none runs a task of a call that ended
    assert all(sorted(ran) == [0, 1, 2, 3] for ran in calls)
