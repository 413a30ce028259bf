"""``out=``: the checks of an array a caller gives bcast to write a result into.

:func:`check_out` refuses an ``out=`` of the wrong kind, shape or dtype, or a
read-only one; :func:`overlaps` says whether it may share memory with an input
(a kernel of several steps would then read what it has overwritten).  Every
executor path and op table asks these two.

>>> import numpy as np
>>> check_out(np.empty((2, 3)), (2, 3), np.float64)
>>> check_out(np.empty(3), (2, 3))
Traceback (most recent call last):
...
bcast.core.errors.InputError: out= has shape (3,); the result has shape (2,3)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._format import format_shape
from ..core.errors import InputError
from ._budget import _dtype

__all__ = ["check_out", "is_numpy", "overlaps"]


def is_numpy(x: Any) -> bool:
    """A numpy array or numpy scalar."""
    return isinstance(x, (np.ndarray, np.generic))


def check_out(out: Any, shape: tuple, dtype: Any = None) -> None:
    """Refuse (:class:`InputError`) an ``out=`` that is not a writable array of ``shape`` (and ``dtype``)."""
    if type(out) is np.ndarray and out.shape == shape and (dtype is None or out.dtype == dtype) \
            and out.flags.writeable:  # the common case, in one test (a prepared call's out= costs this)
        return
    if not hasattr(out, "shape") or not isinstance(out.shape, tuple):
        raise InputError(f"out= must be an array, got {type(out).__name__}")
    if tuple(out.shape) != tuple(shape):
        raise InputError(f"out= has shape {format_shape(tuple(out.shape))}; the result has shape {format_shape(shape)}")
    if dtype is not None and is_numpy(out) and out.dtype != _dtype(dtype):
        raise InputError(f"out= has dtype {out.dtype}; the result has dtype {np.dtype(dtype)}")
    if is_numpy(out) and not out.flags.writeable:
        raise InputError("out= is read-only")


def overlaps(out: Any, arrays: Any) -> bool:
    """Whether the numpy array ``out`` may share memory with one of ``arrays``: numpy's bounds
    check, a few hundred nanoseconds (never a false no; a false yes costs one copy).

    >>> a = np.zeros(4)
    >>> overlaps(a[1:], [np.ones(3), a[:2]]), overlaps(a, [np.ones(4), 1.0])
    (True, False)
    """
    for x in arrays:
        if isinstance(x, np.ndarray) and np.may_share_memory(out, x):
            return True
    return False
