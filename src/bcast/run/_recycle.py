"""Recycled memory for large outputs: a fresh array costs more than the op.

A new 49 MiB output costs ~5 ms before the op writes a byte (the kernel maps
and zeroes its pages: measured, a copy into a fresh array 9.4 ms, into a
reused one 4.4 ms, with transparent huge pages on); onnxruntime avoids it with
its arena.  Here the buffers of the last :data:`MAX_BUFFERS` large outputs
(from :data:`MIN_BYTES` to :data:`MAX_BYTES`: bcast never sits on more than
``MAX_BUFFERS * MAX_BYTES`` of freed memory) are kept, and a new output in
that range takes one that is free and no more than twice its size.

A buffer is lent, never shared: an output is an array over a *lease*, a small
object that exports the buffer's memory (a ctypes array over it), and every
array made from the output -- a view, a reshape, a memoryview, an array of it
-- keeps the lease alive, as any numpy array keeps alive the object its memory
comes from.  The buffer is free again only once the lease is gone (a weak
reference's callback says so): that rests on object lifetime, which every
Python keeps, not on reference counts (CPython 3.14 borrows references, so a
count can read low while a result is alive).  An interpreter that collects
late (PyPy) only reuses buffers later.

:func:`release` frees the kept buffers; ``BCAST_RECYCLE=0`` turns recycling off.

>>> import numpy as np
>>> a = empty((1 << 21,), np.float32)
>>> b = empty((1 << 21,), np.float32)
>>> np.shares_memory(a, b)  # a is alive: b has a buffer of its own
False
>>> address = a.ctypes.data
>>> view = a[10:20]
>>> del a
>>> del view  # the last array over a's buffer
>>> empty((1 << 21,), np.float32).ctypes.data == address  # a's buffer, reused
True
>>> release()
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import weakref
from typing import Any, cast

import numpy as np

from ..core import _env

__all__ = ["MAX_BUFFERS", "MAX_BYTES", "MIN_BYTES", "empty", "release"]

#: Outputs of at least this many bytes are recycled (below, the system's allocator reuses memory itself).
MIN_BYTES = 8 << 20
#: Larger outputs are not recycled (holding one would keep that much freed memory from the rest of the process).
#: Measured (2 cores, transparent huge pages on madvise): a 2**26 float64 Mul (512 MiB out) 41 ms into a fresh
#: array and 35 into a recycled one, numpy's own 53, onnxruntime's 36-40 (its arena); in a process whose memory
#: is fragmented (the benchmark matrix, after many cases) the fresh array's faults cost up to 78 ms.
MAX_BYTES = 512 << 20
#: Buffers kept at most (the newest).
MAX_BUFFERS = 2


class _Buffer:
    """One kept buffer: its memory, whether it is free, and the weak reference to its lease."""

    __slots__ = ("memory", "free", "lease", "__weakref__")

    def __init__(self, nbytes: int) -> None:
        self.memory = np.empty(nbytes, np.uint8)
        self.free = False
        self.lease: weakref.ref | None = None

    def lend(self, nbytes: int, dtype: np.dtype, shape: tuple) -> np.ndarray:
        """An array of ``shape`` x ``dtype`` over the first ``nbytes``, through a new lease."""
        lease = (ctypes.c_ubyte * nbytes).from_buffer(cast(Any, self.memory))  # numpy's stubs: not a Buffer
        self.free = False
        # the callback only sets a flag (no lock): it may run in any thread, inside empty() too
        self.lease = weakref.ref(lease, _freed(weakref.ref(self)))
        return np.frombuffer(cast(Any, lease), dtype, math.prod(shape)).reshape(shape)


def _freed(buffer_ref):
    def callback(_):
        buffer = buffer_ref()
        if buffer is not None:
            buffer.free = True
    return callback


_buffers: list = []  # _Buffer, oldest first
_lock = threading.Lock()


def _after_fork() -> None:  # the child: a lock another thread of the parent held is free here
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _enabled() -> bool:
    return _env.switch("BCAST_RECYCLE")


def empty(shape: tuple, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)``, in a recycled buffer when it is large (the caller checked the budget)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if not MIN_BYTES <= nbytes <= MAX_BYTES or dtype.hasobject or not _enabled():
        return np.empty(shape, dtype)
    with _lock:  # a free buffer is marked lent before another thread looks
        for i, buf in enumerate(_buffers):
            if buf.free and nbytes <= buf.memory.size <= 2 * nbytes:
                _buffers.append(_buffers.pop(i))  # the newest
                return buf.lend(nbytes, dtype, shape)
        buf = _Buffer(nbytes)
        _buffers.append(buf)
        del _buffers[:-MAX_BUFFERS]
        return buf.lend(nbytes, dtype, shape)


def release() -> None:
    """Forget every kept buffer (those the caller still uses live on with their arrays)."""
    with _lock:
        _buffers.clear()
