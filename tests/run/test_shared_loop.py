"""The compiled loop's threads share a call's tasks themselves (bcast.run._loops.rows2, run by
bcast.run._pool.run_shared): numpy's bits, the bell's counts even once the calls have ended, no array
kept alive by a pool thread that stays awake after its tasks, Ctrl-C, and fork."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import weakref

import numpy as np
import pytest

import bcast
from bcast.run import _kernels, _pool, _recycle, parallel

pytest.importorskip("numba")

SRC = os.path.dirname(os.path.dirname(os.path.abspath(bcast.__file__)))  # the bcast under test


@pytest.fixture
def shared(monkeypatch):
    """Two threads, and the compiled loop's threads from 4096 elements on (compiled in the calling thread)."""
    if not _kernels.available():
        pytest.skip("the compiled loops are off here")
    monkeypatch.setattr(_kernels, "BACKGROUND", False)
    monkeypatch.setattr(_kernels, "THREADS_BYTES", 1 << 12)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1 << 12)
    bcast.run.clear_caches()
    previous = parallel.set_threads(2)
    yield
    parallel.set_threads(previous)
    bcast.run.clear_caches()


def _even(timeout: float = 5.0) -> bool:
    """Whether every part asked for has started or been cancelled (within ``timeout`` seconds)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if _kernels.BELL[0] == _kernels.BELL[1]:
            return True
        time.sleep(1e-3)
    return False


def _ints(shape, dtype, rng):
    return rng.integers(-20, 20, shape).astype(dtype)


#: (ONNX op, numpy's form, input shapes): rows, columns, same shapes, a middle axis, three inputs
CASES = [
    ("Add", np.add, [(64, 256), (256,)]),
    ("Max", np.maximum, [(64, 256), (64, 1)]),
    ("Less", np.less, [(64, 256), (64, 256)]),
    ("Mul", np.multiply, [(4, 16, 128), (16, 1)]),
    ("Where", np.where, [(64, 1), (64, 256), (256,)]),  # (the condition: the first input > 0)
]


@pytest.mark.parametrize("dtype", ["int8", "int32", "float16", "float32"])
def test_threads_give_numpys_bits_and_leave_the_bell_even(shared, dtype):
    """Calls back to back (a pool thread stays awake between them) and with pauses (it has gone to sleep),
    into fresh outputs and into out=: numpy's bits every time; once they end, every part asked for has
    started or been cancelled."""
    rng = np.random.default_rng(5)
    asked = int(_kernels.BELL[0])
    for op, f, shapes in CASES:
        xs = [_ints(s, dtype, rng) for s in shapes]
        if op == "Where":
            xs[0] = xs[0] > 0
        want = f(*xs)
        out = np.empty_like(want)
        for i in range(12):
            if i % 4 == 3:
                time.sleep(2e-3)
            np.testing.assert_array_equal(bcast.onnx.run(op, *xs), want)
            assert bcast.onnx.run(op, *xs, out=out) is out
            np.testing.assert_array_equal(out, want)
    assert int(_kernels.BELL[0]) > asked  # the calls were shared among threads
    assert _even()


def test_a_part_that_stays_awake_keeps_no_array_alive(shared):
    """The output of a shared call is recycled by the next call while the pool's thread may still be
    waiting for it, and an input is freed when its caller drops it."""
    x, y = np.ones((512, 4096), np.float32), np.arange(4096, dtype=np.float32)  # 8 MiB: recycled outputs
    _recycle.release()  # (no buffer of an earlier test to take instead)
    first = bcast.onnx.run("Add", x, y)
    address = first.ctypes.data
    del first
    assert _even()
    again = bcast.onnx.run("Add", x, y)
    assert again.ctypes.data == address
    np.testing.assert_array_equal(again, x + y)
    mine = x.copy()
    gone = weakref.ref(mine)
    bcast.onnx.run("Add", mine, y, out=again)
    assert _even()
    del mine
    assert gone() is None


def test_ctrl_c_in_the_lead_halts_the_call_and_is_raised():
    """An exception in the calling thread (Ctrl-C) stops the call's tasks before it is raised, and the
    parts asked for are counted."""
    seen: list = []

    def lead(parts):
        seen.append(("lead", parts))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _pool.run_shared(2, lambda: seen.append("part"), lead, lambda parts: seen.append(("halt", parts)),
                         lambda parts: seen.append(("unasked", parts)))
    assert seen[0] == ("lead", 1) and ("halt", 1) in seen
    time.sleep(0.05)
    assert ("part" in seen) != (("unasked", 1) in seen)  # the part ran, or it was cancelled: not both


def test_halt_leaves_no_task_and_rings_for_a_lead_that_had_not():
    if not _kernels.available():
        pytest.skip("the compiled loops are off here")
    loops = _kernels._get()
    plan = np.zeros(8 + 4, np.uint64)
    plan[3:] = np.arange(9, dtype=np.uint64)
    plan[0] = plan[1] = 3  # three tasks taken and finished
    bell = np.zeros(2, np.uint64)
    loops.halt(plan, bell, 1)
    assert plan[0] >= 8 and plan[1] == 3 and bell[0] == 1
    plan[:3] = (5, 5, 1)  # a lead that had rung: the bell stays as it is
    loops.halt(plan, bell, 1)
    assert plan[0] >= 8 and bell[0] == 1


def test_fork_while_a_part_stays_awake():
    """os.fork() right after a shared call (the pool's thread still waiting in its loop): the child's shared
    calls run (a pool and a bell of its own), and the parent's too."""
    script = """
        import os, sys, numpy as np, bcast
        from bcast.run import _kernels, parallel
        if not _kernels.available():
            print("ok"); sys.exit(0)
        _kernels.BACKGROUND = False
        _kernels.THREADS_BYTES = parallel.MIN_ELEMENTS = 1 << 12
        parallel.set_threads(2)
        x, y = np.ones((256, 256), np.float32), np.arange(256, dtype=np.float32)
        for _ in range(3):
            assert (bcast.onnx.run("Add", x, y) == x + y).all()
        assert _kernels.BELL[0] > 0
        pid = os.fork()
        if pid == 0:
            ok = all((bcast.onnx.run("Add", x, y) == x + y).all() for _ in range(20))
            os._exit(0 if ok and _kernels.BELL[0] > 0 else 3)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0, status
        assert all((bcast.onnx.run("Add", x, y) == x + y).all() for _ in range(20))
        print("ok")
    """
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                              timeout=120, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung (killed after 120 s): {e.stderr!r}")
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
