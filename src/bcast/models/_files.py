"""Opening a model's file safely: one way for every format bcast reads."""

from __future__ import annotations

import os
import stat

from ..core.errors import InputError

__all__ = ["open_regular"]


def open_regular(path: str, missing: str = "") -> tuple[int, os.stat_result]:
    """``path`` opened for reading without blocking (a FIFO with no writer), and its status taken on the
    open file (no race between the check and the read): ``(fd, status)``, the caller's to close.  Refused
    in one line: a NUL in the name, no such file (``missing`` added to the message), a file the process
    cannot open, not a regular file (a FIFO, a device, a folder)."""
    if "\0" in path:
        raise InputError(f"{path!r}: not a file name (it has a NUL character)")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file{missing}") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read it ({e.strerror or e})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise InputError(f"{path}: not a regular file")
    return fd, info
