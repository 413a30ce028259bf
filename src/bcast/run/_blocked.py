"""Blocking: one large element-wise call cut in tasks whose every operand is contiguous.

numpy runs a ufunc on a stride-0 operand in one of two ways.  When the
coalesced inner run (the trailing axes over which every operand has one
stride) is at least numpy's buffer size (8192 elements), its loops read the
operand in place.  When it is shorter -- ``(16,256,56,56) + (256,1,1)``: runs
of 3136; ``(4096,4096) + (4096,)``: 4096; Paddle's ``(256,56)`` at axis 1:
56 -- numpy copies the operand into a buffer, element by element, for every
8192 elements of the output: the add then costs ~1.8x a copy of the output.

Here such a call is cut in tasks.  The output is viewed as outer axes times a
*tile* -- ``t`` entries of one axis and all axes after it, about
:data:`TILE` elements, C-contiguous -- and an operand that is not contiguous
over the tile (a *short* operand) is copied once into a tile-sized scratch
buffer, which then stands for it, with stride 0, on every outer axis where
it does not vary (the *repeat* axes).  A task is one call of the function on
the repeat axes times the tile; the outer axes where a short operand varies
are looped over (one task per index).  Every call then runs numpy's
contiguous loops, on the same values as the single call: the result is the
same, bit for bit (numpy's single call also reads the short operand from a
contiguous copy, its buffer).

Calls whose runs are long already, outputs that are not C-contiguous, and
small outputs are cut in plain chunks of the output along one axis instead.

>>> import numpy as np
>>> a, b = np.ones((64, 4096), np.float32), np.arange(4096, dtype=np.float32)
>>> s = schedule([a, np.broadcast_to(b, a.shape)], np.empty_like(a), parts=4)
>>> s.blocked, s.tile, len(s.tasks)
(True, (16, 4096), 4)
>>> out = s.out
>>> for i in range(len(s.tasks)):
...     s.run(np.add, i, Scratch())
>>> bool((out == a + b).all())
True
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = ["TILE", "SCRATCH_ALIGN", "Scratch", "Schedule", "schedule", "inner_run", "split"]

#: Elements in a tile: the output, the direct operands' and the scratch buffers' share of one
#: call stay in a core's L2 (2 MiB here; 2**14 to 2**17 measured, 2**16 best).
TILE = 1 << 16
#: Elements in one task at most: the passes of a variadic kernel (Sum) over it stay in cache.
TASK = 1 << 20
#: An operand that is contiguous over runs of at least this many elements is read in place
#: (numpy is told to use buffers no larger than its runs); shorter runs are copied into scratch.
RUN = 1024
#: Bytes between two scratch buffers of one thread.
SCRATCH_ALIGN = 64


def _bufsize() -> int:
    return np.getbufsize()


def inner_run(arrays, shape) -> int:
    """Elements in the coalesced inner run of ``arrays`` (all of ``shape``): the
    product of the trailing axes over which every array has one stride.

    >>> import numpy as np
    >>> x = np.ones((4, 3, 5))
    >>> inner_run([x, np.broadcast_to(np.ones((3, 1)), x.shape)], x.shape)
    5
    >>> inner_run([x, np.broadcast_to(np.ones(()), x.shape)], x.shape)
    60
    """
    axes = [k for k in range(len(shape)) if shape[k] != 1]
    if not axes:
        return 1
    run = shape[axes[-1]]
    for inner, outer in zip(reversed(axes), reversed(axes[:-1])):
        if any(a.strides[outer] != a.strides[inner] * shape[inner] for a in arrays):
            break
        run *= shape[outer]
    return run


def split(shape: tuple, parts: int) -> tuple[int, list]:
    """The axis to split ``shape`` along and the (start, stop) of each chunk: the
    outermost axis with at least ``parts`` entries, else the longest.

    >>> split((16, 256, 56, 56), 8)
    (0, [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, 12), (12, 14), (14, 16)])
    >>> split((1, 3, 1000), 4)
    (2, [(0, 250), (250, 500), (500, 750), (750, 1000)])
    """
    axis = next((k for k, d in enumerate(shape) if d >= parts), None)
    if axis is None:
        axis = max(range(len(shape)), key=lambda k: shape[k])
    n = min(parts, shape[axis])
    bounds = [shape[axis] * i // n for i in range(n + 1)]
    return axis, [(bounds[i], bounds[i + 1]) for i in range(n)]


class Scratch:
    """One worker's scratch memory for one call: a byte buffer, grown when a tile needs more, reused by
    every task of the call (and, given back, by later calls: never by two at once)."""

    __slots__ = ("buffer", "filled")

    def __init__(self) -> None:
        self.buffer = np.empty(0, np.uint8)
        self.filled: dict = {}  # scratch slot -> what it holds: (schedule, region, operand, tile index)

    def arrays(self, specs) -> list:
        """Arrays of the given (shape, dtype), each starting on a :data:`SCRATCH_ALIGN` boundary."""
        offsets, total = [], 0
        for shape, dtype in specs:
            offsets.append(total)
            total += -(-math.prod(shape) * dtype.itemsize // SCRATCH_ALIGN) * SCRATCH_ALIGN
        if self.buffer.size < total:
            self.buffer = np.empty(total, np.uint8)
            self.filled.clear()
        return [self.buffer[o:o + math.prod(s) * d.itemsize].view(d).reshape(s)
                for o, (s, d) in zip(offsets, specs)]


def _c_strides(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def _contiguous(strides: tuple, shape: tuple, itemsize: int) -> bool:
    return all(s == c for s, c, d in zip(strides, _c_strides(shape, itemsize), shape) if d != 1)


@dataclass
class _Region:
    """Part of the output whose tile axis is cut in groups of ``t``: every array viewed at
    ``outer + tile`` (the tile axis split in two), the short operands and the loop axes."""

    out: np.ndarray
    views: list
    short: list  # indices of the operands copied into scratch
    varies: dict  # short operand -> outer axes where it varies
    loop: tuple  # outer axes looped over (some short operand varies there)
    tile: tuple
    bufsize: int | None  # numpy's buffer size for the calls (None: its own)


_tokens = itertools.count()


@dataclass(eq=False)
class Schedule:
    """The tasks of one call: ``run(func, i, scratch)`` computes task ``i``."""

    out: np.ndarray
    blocked: bool
    tile: tuple | None = None
    tasks: list = field(default_factory=list)
    regions: list = field(default_factory=list)
    views: list = field(default_factory=list)  # plain chunks: the operands, and the chunk axis
    axis: int = 0
    token: int = field(default_factory=_tokens.__next__)  # names this schedule in scratch.filled

    def run(self, func, i: int, scratch: Scratch) -> None:
        if not self.blocked:
            lo, hi = self.tasks[i]
            sl = (slice(None),) * self.axis + (slice(lo, hi),)
            func(*[v[sl] for v in self.views], out=self.out[sl])
            return
        r, index, fixed = self.tasks[i]
        region = self.regions[r]
        args = [v[index] for v in region.views]
        if region.short:
            bufs = scratch.arrays([(region.tile, region.views[k].dtype) for k in region.short])
            target = region.out[index].shape
            outer = len(region.out.shape) - len(region.tile)
            for slot, (k, buf) in enumerate(zip(region.short, bufs)):
                held = (self.token, r, k, tuple(fixed[a] for a in region.varies[k]))
                if scratch.filled.get(slot) != held:  # the tile this operand has at this index
                    np.copyto(buf, region.views[k][tuple(fixed.get(a, 0) for a in range(outer))])
                    scratch.filled[slot] = held
                args[k] = np.broadcast_to(buf, target)
        if region.bufsize is None:
            func(*args, out=region.out[index])
            return
        previous = np.setbufsize(region.bufsize)  # runs shorter than numpy's buffers: read in place
        try:
            func(*args, out=region.out[index])
        finally:
            np.setbufsize(previous)


def schedule(views: list, out: np.ndarray, parts: int) -> Schedule:
    """The tasks of ``func(*views, out=out)`` (views of ``out``'s shape) for ``parts``
    workers' worth of chunks: blocked where a short operand makes numpy buffer, else
    plain chunks along one axis."""
    shape = out.shape
    size = math.prod(shape)
    if (size >= TILE * 2 and out.flags.c_contiguous and views
            and inner_run([out, *views], shape) < _bufsize()):
        blocked = _blocked(views, out, parts)
        if blocked is not None:
            return blocked
    if not shape:  # rank 0: one task, on a view with one axis
        return Schedule(out[np.newaxis], False, tasks=[(0, 1)], views=[v[np.newaxis] for v in views])
    axis, chunks = split(shape, parts)
    return Schedule(out, False, tasks=chunks, views=views, axis=axis)


def _tile_axis(shape: tuple) -> tuple[int, int]:
    """The axis ``j`` the tile starts in and ``t``, its entries in the tile: the tile is
    ``(t,) + shape[j+1:]``, about :data:`TILE` elements (a divisor of ``shape[j]`` when one
    is near)."""
    inner = 1
    for j in range(len(shape) - 1, -1, -1):
        if inner * shape[j] >= TILE:
            break
        inner *= shape[j]
    t = max(1, TILE // inner)
    near = [d for d in range(max(1, t // 2), t + 1) if shape[j] % d == 0]
    return j, (near[-1] if near else t)


def _blocked(views, out, parts) -> Schedule | None:
    shape = out.shape
    j, t = _tile_axis(shape)
    cuts = [(0, shape[j] - shape[j] % t, t), (shape[j] - shape[j] % t, shape[j], shape[j] % t)]
    regions = [_region(views, out, j, lo, hi, t) for lo, hi, t in cuts if hi > lo]
    if not any(r.short or r.bufsize for r in regions):
        return None
    tasks = []
    for r, region in enumerate(regions):
        tasks += _tasks(r, region, parts)
    return Schedule(out, True, tile=regions[0].tile, tasks=tasks, regions=regions)


def _split_axis(a: np.ndarray, j: int, lo: int, hi: int, t: int) -> np.ndarray:
    """``a[..., lo:hi, ...]`` (axis ``j``) with that axis split in ``((hi - lo) // t, t)``: a view."""
    part = a[(slice(None),) * j + (slice(lo, hi),)]
    shape = part.shape[:j] + ((hi - lo) // t, t) + part.shape[j + 1:]
    strides = part.strides[:j] + (part.strides[j] * t, part.strides[j]) + part.strides[j + 1:]
    return as_strided(part, shape, strides, writeable=a.flags.writeable)


def _region(views, out, j, lo, hi, t) -> _Region:
    o = _split_axis(out, j, lo, hi, t)
    vs = [_split_axis(v, j, lo, hi, t) for v in views]
    outer, tile = o.shape[:j + 1], o.shape[j + 1:]
    short, varies, runs = [], {}, [math.prod(tile), _bufsize()]
    for k, v in enumerate(vs):
        if _contiguous(v.strides[j + 1:], tile, v.itemsize):
            continue
        run = _run(v.strides[j + 1:], tile, v.itemsize)
        if run >= RUN:
            runs.append(run)
            continue
        short.append(k)
        varies[k] = tuple(a for a in range(len(outer)) if outer[a] > 1 and v.strides[a] != 0)
    loop = tuple(sorted({a for axes in varies.values() for a in axes}))
    bufsize = max(16, min(runs) // 16 * 16) if min(runs) < _bufsize() else None  # numpy: a multiple of 16
    return _Region(o, vs, short, varies, loop, tile, bufsize)


def _run(strides: tuple, shape: tuple, itemsize: int) -> int:
    """Elements in the contiguous inner run of one array (0 when its inner stride is not its itemsize)."""
    axes = [k for k in range(len(shape)) if shape[k] != 1]
    if not axes or strides[axes[-1]] != itemsize:
        return 0
    run = shape[axes[-1]]
    for inner, outer in zip(reversed(axes), reversed(axes[:-1])):
        if strides[outer] != strides[inner] * shape[inner]:
            break
        run *= shape[outer]
    return run


def _tasks(r: int, region: _Region, parts: int) -> list:
    """(region, index of the call's output, index of each short operand's tile) of every task:
    one per index of the loop axes, times pieces of the longest repeat axis (enough pieces for
    ``parts`` tasks in all, and none over :data:`TASK` elements)."""
    outer = region.out.shape[:len(region.out.shape) - len(region.tile)]
    repeat = [a for a in range(len(outer)) if a not in region.loop]
    loops = math.prod(outer[a] for a in region.loop)
    cut = max(repeat, key=lambda a: outer[a]) if repeat else None
    pieces = [(None, None)]  # the whole of every repeat axis
    if cut is not None:
        per_entry = math.prod(outer[a] for a in repeat) // outer[cut] * math.prod(region.tile)
        n = max(-(-parts // loops), -(-outer[cut] * per_entry // TASK))
        if n > 1:
            pieces = split((outer[cut],), n)[1]
    tasks = []
    for at in itertools.product(*(range(outer[a]) for a in region.loop)):
        fixed = dict(zip(region.loop, at))
        for lo, hi in pieces:
            index = tuple(fixed[a] if a in fixed else slice(lo, hi) if a == cut else slice(None)
                          for a in range(len(outer)))
            tasks.append((r, index, fixed))
    return tasks
