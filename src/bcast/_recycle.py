"""Recycled memory for large outputs: a fresh array costs more than the op.

A new 49 MiB output costs ~5 ms before the op writes a byte (the kernel maps
and zeroes its pages: measured, a copy into a fresh array 9.4 ms, into a
reused one 4.4 ms, with transparent huge pages on); onnxruntime avoids it with
its arena.  Here the buffers of the last :data:`MAX_BUFFERS` large outputs
(from :data:`MIN_BYTES` to :data:`MAX_BYTES`: bcast never sits on more than
``MAX_BUFFERS * MAX_BYTES`` of freed memory) are kept, and a new output in
that range takes one that
nothing references any more (the caller dropped the array and every view of
it) and that is no more than twice its size.  An array that is still
referenced is never handed out again: the output is a view of its buffer, so
every view of it keeps the buffer's reference count up.

:func:`release` frees the kept buffers; ``BCAST_RECYCLE=0`` turns recycling off.

>>> import numpy as np
>>> a = empty((1 << 21,), np.float32)
>>> b = empty((1 << 21,), np.float32)
>>> np.shares_memory(a, b)  # a is alive: b has a buffer of its own
False
>>> address = a.ctypes.data
>>> del a
>>> empty((1 << 21,), np.float32).ctypes.data == address  # a's buffer, reused
True
>>> release()
"""

from __future__ import annotations

import math
import os
import sys
import threading

import numpy as np

__all__ = ["MAX_BUFFERS", "MAX_BYTES", "MIN_BYTES", "empty", "release"]

#: Outputs of at least this many bytes are recycled (below, the system's allocator reuses memory itself).
MIN_BYTES = 8 << 20
#: Larger outputs are not recycled (their page faults are a small part of their op, and holding one would keep
#: that much freed memory from the rest of the process).
MAX_BYTES = 256 << 20
#: Buffers kept at most (the newest).
MAX_BUFFERS = 2

_buffers: list = []  # 1-D uint8 arrays, oldest first
_lock = threading.Lock()


def _enabled() -> bool:
    return os.environ.get("BCAST_RECYCLE", "1") != "0"


def empty(shape: tuple, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)``, in a recycled buffer when it is large (the caller checked the budget)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if not MIN_BYTES <= nbytes <= MAX_BYTES or dtype.hasobject or not _enabled():
        return np.empty(shape, dtype)
    with _lock:  # a buffer is claimed (referenced by the new view) before another thread looks
        for i in range(len(_buffers)):
            buf = _buffers[i]
            # free: referenced by the list, this variable and getrefcount's argument only
            if nbytes <= buf.size <= 2 * nbytes and sys.getrefcount(buf) <= 3:
                _buffers.append(_buffers.pop(i))  # the newest
                return buf[:nbytes].view(dtype).reshape(shape)
        buf = None
        buf = np.empty(nbytes, np.uint8)
        _buffers.append(buf)
        del _buffers[:-MAX_BUFFERS]
        return buf.view(dtype).reshape(shape)


def release() -> None:
    """Forget every kept buffer (those the caller still uses live on with their arrays)."""
    with _lock:
        _buffers.clear()
