"""The memory budget: what bcast may allocate, shared by every thread of the process.

The budget (:func:`memory_budget`) is, in order: a block's own setting
(:func:`memory_budget_set`, local to the thread or asyncio task that runs the
block, a :mod:`contextvars` variable), the process's setting
(:func:`set_memory_budget`), ``BCAST_MEMORY_BUDGET`` (bytes, ``8GiB``,
``500MB``, or ``25%`` of the available memory), or half the memory available:
the system's ``MemAvailable``, or less where the process's cgroup (v2
``memory.max`` less ``memory.current``, v1 ``memory.limit_in_bytes`` less
``memory.usage_in_bytes``, reclaimable page cache not counted as used, the
tightest of the cgroup and its parents) leaves less.

Every allocation bcast checks (:func:`check_memory`: outputs and intermediates
of more than 1 MiB) is *reserved* for as long as the call that asked for it
runs: an op's check counts the bytes that every op in progress, in any thread,
has reserved, and the reservation is released when the call returns or fails
(:func:`reserving`).  Two threads that each need 1.9 GiB under a 2 GiB budget:
the second is refused while the first runs.  An output that a call has
returned is the caller's: it is no longer counted (the default budget, a
fraction of what is available, sees it as memory in use).  A kernel run on blocks
of its output, in threads, has each intermediate checked once, for the whole output.
A child of ``os.fork()`` starts with nothing reserved (the parent's other threads,
and their calls, are not there).
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any

import numpy as np

from ..core._format import brief, format_shape
from ..core.errors import InputError

#: The default budget, as a fraction of the memory available.
DEFAULT_FRACTION = 0.5
#: Checks of at most this many bytes never ask the system, nor reserve anything.
SMALL = 2**20
#: available_memory() re-reads the system's figures at most this often (seconds): reading /proc/meminfo
#: costs ~45 us, a tenth of a 12 MiB add
AVAILABLE_TTL = 0.1

_PROC_CGROUP = "/proc/self/cgroup"
_CGROUP_ROOT = "/sys/fs/cgroup"
#: a cgroup v1 limit of at least this is "no limit" (the kernel writes 2**63 - 4096)
_NO_LIMIT = 2**60

_UNSET, _DEFAULT = object(), object()
_budget: int | None = None  # set_memory_budget: the process's setting; None = the environment / available memory
_override: ContextVar = ContextVar("bcast_memory_budget", default=_UNSET)  # memory_budget_set: this context's
# the running call's reservations: a list [the fork generation it started in, bytes, bytes...]
_held: ContextVar = ContextVar("bcast_memory_held", default=None)
_blocks: ContextVar = ContextVar("bcast_memory_blocks", default=None)  # _Blocks: the call runs its kernel on blocks
_lock = threading.Lock()
_reserved = 0  # bytes reserved by the calls in progress, in every thread
_generation = 0  # os.fork() calls this process is a child of: a call's reservations count in its own generation


def _after_fork() -> None:
    """The child of os.fork(): of the parent's calls in progress, at most the forking thread's go
    on here (the other threads are not there, and their calls never end to release what they
    reserved): nothing reserved before the fork is counted, nor released, in the child."""
    global _lock, _reserved, _generation
    _lock, _reserved, _generation = threading.Lock(), 0, _generation + 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class MemoryBudgetError(InputError, MemoryError):
    """An op's output would not fit in the memory budget; nothing was allocated.

    Attributes: ``shape``, ``dtype``, ``nbytes`` (the size asked for),
    ``budget`` (the budget in bytes), ``what`` (what was to be allocated),
    ``reserved`` (the bytes that calls in progress held when it was refused).
    """

    def __init__(self, what: str, shape: tuple, dtype: Any, nbytes: int, budget: int, reserved: int = 0) -> None:
        self.what, self.shape, self.dtype, self.nbytes, self.budget = what, shape, dtype, nbytes, budget
        self.reserved = reserved
        held = f" with {format_bytes(reserved)} of it held by calls in progress" if reserved else ""
        super().__init__(
            f"{what} {format_shape(shape)} {np.dtype(dtype).name} needs {format_bytes(nbytes)}, "
            f"over the memory budget of {format_bytes(budget)}{held} "
            "(set BCAST_MEMORY_BUDGET or bcast.set_memory_budget to change it); nothing was allocated"
        )

    def __reduce__(self):
        return (type(self), (self.what, self.shape, self.dtype, self.nbytes, self.budget, self.reserved))


MemoryBudgetError.__module__ = "bcast.run.execute"  # where it has always been found


def format_bytes(n: int) -> str:
    """``1536`` -> ``1.5 KiB``; ``3 * 2**40`` -> ``3.0 TiB``."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value:.3g} ZiB"


_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3, "t": 1000**4, "tb": 1000**4,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}


def parse_bytes(text: str) -> int:
    """A budget as written by a person: ``1000000``, ``8GiB``, ``500 MB``, ``25%`` (of available).

    >>> parse_bytes("8GiB"), parse_bytes("1.5k")
    (8589934592, 1500)
    """
    s = str(text).strip().lower()
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)\s*(%|[a-z]*)", s)
    if not m or (m.group(2) not in _UNITS and m.group(2) != "%"):
        raise InputError(
            f"bad memory budget {brief(text)}: give bytes, e.g. 8GiB, 500MB, 1000000, or a percentage, 25%")
    number = float(m.group(1))
    if m.group(2) == "%":
        if not 0 < number <= 100:
            raise InputError(f"bad memory budget {brief(text)}: a percentage must be in (0, 100]")
        return int(available_memory() * number / 100)
    return int(number * _UNITS[m.group(2)])


_available = (-1.0, 0)  # (time.monotonic() when read, bytes)


def available_memory() -> int:
    """Bytes of memory available now (Linux: MemAvailable, or what the process's cgroup leaves
    when that is less; elsewhere: free physical pages), as read at most :data:`AVAILABLE_TTL`
    seconds ago."""
    global _available
    now = time.monotonic()
    if now - _available[0] < AVAILABLE_TTL:
        return _available[1]
    found = _read_available()
    limit = cgroup_available()
    if limit is not None:
        found = min(found, limit)
    _available = (now, found)
    return found


def _read_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30  # no way to ask: assume a small machine


# v2 and v1: (limit file, usage file, the memory.stat key of page cache that can be reclaimed)
_V2 = ("memory.max", "memory.current", "inactive_file")
_V1 = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")


def cgroup_available() -> int | None:
    """Bytes the process's memory cgroup still allows: its limit less its usage (page cache that
    the kernel reclaims first, ``inactive_file``, not counted as used), the least over the cgroup
    and its parents; None where no cgroup limits memory (or none can be read).

    cgroup v2 (``0::/path`` in ``/proc/self/cgroup``) and v1 (the ``memory`` controller's line);
    in a container the path may not exist under the mount (a cgroup namespace shows the
    container's own cgroup at the mount's root): the walk starts from the deepest folder found.
    """
    try:
        with open(_PROC_CGROUP) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    found = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            for root in (_CGROUP_ROOT, os.path.join(_CGROUP_ROOT, "unified")):
                found.append(_walk(root, parts[2], _V2))
        elif "memory" in parts[1].split(","):
            found.append(_walk(os.path.join(_CGROUP_ROOT, "memory"), parts[2], _V1))
    limits = [f for f in found if f is not None]
    return min(limits) if limits else None


def _walk(root: str, path: str, files: tuple) -> int | None:
    """The least ``limit - usage`` over the cgroup folder ``root/path`` and its parents up to ``root``."""
    limit_file, usage_file, cache_key = files
    rel = [p for p in path.split("/") if p and p not in (".", "..")]
    while rel and not os.path.isdir(os.path.join(root, *rel)):
        rel.pop()
    best = None
    while True:
        folder = os.path.join(root, *rel)
        limit = _read_int(os.path.join(folder, limit_file))
        if limit is not None and limit < _NO_LIMIT:
            usage = _read_int(os.path.join(folder, usage_file)) or 0
            usage -= min(usage, _stat(os.path.join(folder, "memory.stat"), cache_key))
            left = max(0, limit - usage)
            best = left if best is None else min(best, left)
        if not rel:
            return best
        rel.pop()


def _read_int(path: str) -> int | None:
    """The integer in a cgroup file; None for ``max``, a missing or unreadable file, or garbage."""
    try:
        with open(path) as f:
            text = f.read(64).strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _stat(path: str, key: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value) if value.strip().isdigit() else 0
    except OSError:
        pass
    return 0


def memory_budget() -> int:
    """The budget, in bytes, of what bcast may allocate at once (every thread's calls in progress).

    In order: the value given to :func:`memory_budget_set` in this thread (or task); the
    value given to :func:`set_memory_budget`; the environment variable
    ``BCAST_MEMORY_BUDGET``; half the memory available now (the cgroup's limit included).
    """
    budget = _override.get()
    if budget is _UNSET:
        budget = _budget
    if budget is not None and budget is not _DEFAULT:
        return budget
    env = os.environ.get("BCAST_MEMORY_BUDGET")
    if env:
        return _env_budget(env)
    return int(available_memory() * DEFAULT_FRACTION)


def _env_budget(env: str) -> int:
    try:
        return parse_bytes(env)
    except InputError as e:
        raise InputError(f"BCAST_MEMORY_BUDGET={brief(env)}: {e}") from None


def _parse_budget(budget) -> int | None:
    if budget is None:
        return None
    if isinstance(budget, str):
        return parse_bytes(budget)
    if isinstance(budget, (int, np.integer)) and not isinstance(budget, bool) and budget >= 0:
        return int(budget)
    raise InputError(f"bad memory budget {brief(budget)}: give a number of bytes >= 0 or a string such as 2GiB")


def set_memory_budget(budget: int | str | None) -> int | None:
    """Set the process's budget (bytes, or a string such as ``"2GiB"`` or ``"10%"``);
    ``None`` restores the default.  Returns the previous setting.  A block of
    :func:`memory_budget_set` keeps its own budget."""
    global _budget
    previous, _budget = _budget, _parse_budget(budget)
    return previous


@contextmanager
def memory_budget_set(budget: int | str | None):
    """``with memory_budget_set("1GiB"): ...`` -- a budget for one block, in this thread (or
    asyncio task) only: other threads keep theirs, and leaving the block restores this
    thread's previous one whatever other threads do.  ``None``: the default budget."""
    value = _parse_budget(budget)
    token = _override.set(_DEFAULT if value is None else value)
    try:
        yield memory_budget()
    finally:
        _override.reset(token)


def memory_reserved() -> int:
    """Bytes reserved now by the bcast calls in progress, in every thread."""
    return _reserved


def _dtype(dtype: Any) -> np.dtype:
    """``np.dtype(dtype)``, or an InputError naming what was given."""
    try:
        return np.dtype(dtype)
    except (TypeError, ValueError):
        raise InputError(f"dtype= must be a numpy dtype (e.g. np.float32 or 'int8'), got {brief(dtype)}") from None


def check_memory(shape: tuple, dtype: Any, *, what: str = "output") -> int:
    """Refuse (:class:`MemoryBudgetError`) an allocation of ``shape`` x ``dtype`` that, with what
    the calls in progress have reserved, would pass the budget; return its size in bytes.
    Inside a call (:func:`reserving`) the bytes stay reserved until the call ends.  Nothing
    is allocated here."""
    nbytes = math.prod(shape) * _dtype(dtype).itemsize
    blocks = _blocks.get()
    if blocks is not None:  # a kernel's intermediate for one block of an op: checked for the whole op
        blocks.check(dtype, what)
        return nbytes
    if nbytes > SMALL:  # small outputs never need to ask the system
        global _reserved
        budget = memory_budget()
        held = _held.get()
        with _lock:
            reserved = _reserved
            if nbytes > budget - reserved:
                raise MemoryBudgetError(what, tuple(shape), np.dtype(dtype), nbytes, budget, reserved)
            if held is not None and held[0] == _generation:  # (a call begun before a fork: not counted)
                _reserved = reserved + nbytes
                held.append(nbytes)
    return nbytes


class _Blocks:
    """A call whose kernel runs on blocks of its output (:mod:`bcast.run.parallel`), in any number of
    threads.  A kernel's intermediate is one per element of its block; checked block by block, an
    op would be refused or not by how its output happened to be cut (blocks under :data:`SMALL`
    are never counted), and refused half-way, its earlier blocks' intermediates allocated.  So the
    first check of each (what, dtype) is made, and reserved, for the whole output, once per call:
    the answer one unblocked call gives, before any block has allocated one."""

    __slots__ = ("shape", "answers", "lock")

    def __init__(self, shape: tuple) -> None:
        self.shape, self.lock = tuple(shape), threading.Lock()
        self.answers: dict = {}

    def check(self, dtype: Any, what: str) -> None:
        key = (what, _dtype(dtype))
        with self.lock:
            if key not in self.answers:
                token = _blocks.set(None)
                try:
                    check_memory(self.shape, dtype, what=what)
                    self.answers[key] = None
                except MemoryBudgetError as e:
                    self.answers[key] = e.__reduce__()[1]
                finally:
                    _blocks.reset(token)
            refused = self.answers[key]
        if refused is not None:
            raise MemoryBudgetError(*refused)


def blocks_begin(shape: tuple):
    """From here on (until :func:`blocks_end` with the token returned), this context's
    :func:`check_memory` calls are a blocked kernel's, for an output of ``shape`` (:class:`_Blocks`)."""
    return _blocks.set(_Blocks(shape))


def blocks_end(token) -> None:
    _blocks.reset(token)


def _release(nbytes: int) -> None:
    global _reserved
    with _lock:
        _reserved -= nbytes


def reserving(func):
    """``func`` made a call whose :func:`check_memory` reservations last until it returns or raises."""

    @wraps(func)
    def call(*args, **kwargs):
        held = [_generation]
        token = _held.set(held)
        outer = _blocks.set(None)  # a call from inside a blocked kernel's task checks its own allocations
        try:
            return func(*args, **kwargs)
        finally:
            _blocks.reset(outer)
            _held.reset(token)
            if len(held) > 1 and held[0] == _generation:
                _release(sum(held) - held[0])

    return call


def reserved_call(func, *args):
    """``func(*args)`` with its reservations released when it returns (:func:`reserving`)."""
    return _RESERVED_CALL(func, *args)


_RESERVED_CALL = reserving(lambda func, *args: func(*args))


# A bad BCAST_MEMORY_BUDGET fails here, once, when bcast first loads what runs ops (bcast.apply,
# bcast.onnx...), and not only on the first output large enough to ask for the budget.
if os.environ.get("BCAST_MEMORY_BUDGET"):
    _env_budget(os.environ["BCAST_MEMORY_BUDGET"])
