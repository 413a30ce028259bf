"""How the threads of one call of a compiled loop (:mod:`bcast.run._loops`) share its tasks: atomic counts
in compiled code, with no lock, no Python and no GIL (numba; only :mod:`bcast.run._loops` imports this).

A call that several threads share has a plan (uint64): [next task, tasks finished, bell rung, the tasks' row
bounds...].  Its threads -- the calling thread (the lead) and the pool's (its parts) -- take tasks with one
atomic step each until none is left; no lock, no Python object, no GIL.  The lead then watches the finished
count; a part stays in its loop, awake, until the next call's parts are asked for (:func:`_linger`), so that
it needs the GIL only while the next call's lead runs without it.  bcast.run._pool.run_shared runs them.
"""

from __future__ import annotations

import platform
from typing import Any

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]  # llvmlite ships no type information
from numba import types
from numba.extending import intrinsic

__all__ = ["arrive", "claim", "depart", "halt", "settle", "unasked"]

_u = np.uint64


def _slot(context, builder, sig, args):
    """The address of element ``args[1]`` of the 1-D array ``args[0]`` (LLVM values)."""
    array = context.make_array(sig.args[0])(context, builder, args[0])
    return builder.gep(array.data, [args[1]])


def _words(arr) -> bool:
    return isinstance(arr, types.Array) and arr.dtype == types.uint64 and arr.ndim == 1


@intrinsic
def _add_ir(typingctx, arr, i, v):
    """``arr[i] += v`` as one atomic step (a uint64 array), returning the value before: threads that add
    at once each get a value of their own."""
    if not _words(arr):
        return None

    def codegen(context, builder, sig, args):
        return builder.atomic_rmw("add", _slot(context, builder, sig, args), args[2], "seq_cst")

    return types.uint64(arr, types.uint64, types.uint64), codegen


@intrinsic
def _read_ir(typingctx, arr, i):
    """``arr[i]`` read atomically, with acquire order: what the thread that counted it wrote before
    (a finished task's rows) is seen."""
    if not _words(arr):
        return None

    def codegen(context, builder, sig, args):
        return builder.load_atomic(_slot(context, builder, sig, args), "acquire", 8)

    return types.uint64(arr, types.uint64), codegen


#: Whether the processor has a cycle counter a program may read (x86's TSC; aarch64's PMCCNTR_EL0, what
#: LLVM's readcyclecounter reads there, traps unless the kernel lets programs read it).
_TSC = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")


@intrinsic
def _cycles_ir(typingctx):
    """The processor's cycle counter (LLVM's ``readcyclecounter``) where :data:`_TSC`, else 0."""

    def codegen(context, builder, sig, args):
        if not _TSC:
            return ir.Constant(ir.IntType(64), 0)
        fn = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=ir.FunctionType(ir.IntType(64), []))
        return builder.call(fn, [])

    return types.uint64(), codegen


_add: Any = _add_ir
_read: Any = _read_ir
_cycles: Any = _cycles_ir


#: Cycles (of the processor's counter, ~0.2 ms here) that a part which has run out of tasks stays awake for
#: the next call (:func:`_linger`), and that a lead watches the finished count before it sleeps between looks.
LINGER_CYCLES = 500_000
#: Looks at most (each a read of one or two words; where there is no cycle counter, ~0.1-0.3 ms of them).
LINGER_LOOKS = 1 << 20 if _TSC else 1 << 16
#: Added to a plan's next task by :func:`halt`: no task is left.
_STOP = np.uint64(1 << 62)


@numba.njit(nogil=True, cache=True)
def arrive(plan, bell, t0, t1):  # pragma: no cover - compiled
    """A loop's start: whether its call is shared (``plan`` not empty), and its tasks (1 if not).  A shared
    call's thread counts itself in: a lead (``t1`` 1) adds the ``t0`` parts it has asked the pool for (queued
    by now) to ``bell[0]``, from here, where it has let go of the GIL; a part adds itself to ``bell[1]``."""
    if plan.size == 0:
        return False, _u(1)
    if t1 != 0:
        _add(bell, _u(0), _u(t0))
        _add(plan, _u(2), _u(1))
    else:
        _add(bell, _u(1), _u(1))
    return True, _u(plan.size - 4)


@numba.njit(inline="always")
def claim(plan, n):  # pragma: no cover - compiled
    """The next task of a shared plan of ``n`` tasks, one atomic step: (True, its first row, its end), or
    (False, 0, 0) when none is left."""
    task = _add(plan, _u(0), _u(1))
    if task >= n:
        return False, _u(0), _u(0)
    return True, plan[3 + task], plan[4 + task]


@numba.njit(nogil=True, cache=True)
def depart(plan, bell, n, t1):  # pragma: no cover - compiled
    """A shared loop's end, its tasks all taken: a lead (``t1`` 1) watches the finished count (returns the
    tasks still running, :func:`_finished`); a part lingers (:func:`_linger`) and returns 0."""
    if t1 != 0:
        return _finished(plan, n)
    _linger(bell)
    return _u(0)


@numba.njit(nogil=True, cache=True)
def _finished(plan, n):  # pragma: no cover - compiled
    """Watch the plan's finished count until it is ``n`` or :data:`LINGER_CYCLES` have passed; the tasks
    still running then (0: none)."""
    end = _cycles() + _u(LINGER_CYCLES)
    for _ in range(LINGER_LOOKS):
        done = _read(plan, _u(1))
        if done >= n or _cycles() >= end:
            return n - min(done, n)
    return n - min(_read(plan, _u(1)), n)


@numba.njit(nogil=True, cache=True)
def _linger(bell):  # pragma: no cover - compiled
    """Stay awake until a part asked for has not started (``bell[0] != bell[1]``: a lead is in its loop,
    without the GIL, and its parts wait in the pool's queue) or :data:`LINGER_CYCLES` have passed.  A pool
    thread that went back to wait in the queue sleeps: this VM takes 0.03-0.1 ms to wake a sleeping core,
    and often wakes the thread on the lead's own core, where the two take turns."""
    end = _cycles() + _u(LINGER_CYCLES)
    for _ in range(LINGER_LOOKS):
        if _read(bell, _u(0)) != _read(bell, _u(1)) or _cycles() >= end:
            return


@numba.njit(nogil=True, cache=True)
def settle(plan):  # pragma: no cover - compiled
    """The plan's tasks still running after a look of up to :data:`LINGER_CYCLES` (0: all finished)."""
    return _finished(plan, _u(plan.size - 4))


@numba.njit(nogil=True, cache=True)
def halt(plan, bell, parts):  # pragma: no cover - compiled
    """Stop a plan (the lead's exception: Ctrl-C): no thread takes another task; wait for the tasks
    taken to finish.  Rings the bell for the ``parts`` asked if the lead had not (the counts stay even).
    Once a plan: a second halt would wait for tasks nobody took."""
    n = _u(plan.size - 4)
    taken = min(_add(plan, _u(0), _STOP), n)
    if _read(plan, _u(2)) == 0:
        _add(bell, _u(0), _u(parts))
    while _read(plan, _u(1)) < taken:
        pass


@numba.njit(nogil=True, cache=True)
def unasked(bell, parts):  # pragma: no cover - compiled
    """``parts`` asked for were cancelled before they started: counted as started (the counts stay even)."""
    _add(bell, _u(1), _u(parts))
