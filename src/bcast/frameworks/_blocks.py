"""Blocks of an output for the kernels that need a temporary: none grows with the output.

A kernel of several numpy steps (Pow of integers, integer Div, PRelu's mask,
std::max's pick, C's remainderf) writes what it can straight into ``out``;
what needs a temporary runs block by block, on slices of the views and of
``out`` (views of stride 0 stay views), so each temporary holds one block.

A block has at most :data:`BLOCK_BYTES` of the widest temporary's type and
never more than 2^16 elements: a kernel with three float64 temporaries holds
384 KiB however large its output (the executor's tasks of up to 2^20 elements
would otherwise carry 8 MiB each).  Blocks of 2^14-2^16 elements are also the
size at which numpy's passes over a block stay in a core's L2 (measured for
:data:`bcast.run._blocked.TILE`), so blocking costs no speed: a block is a few
microseconds of Python against tens of microseconds of work.

>>> [b for b in blocks((3, 5), 8, limit=10)]
[(slice(0, 2, None),), (slice(2, 3, None),)]
>>> [b for b in blocks((2, 3, 4), 8, limit=12)]
[(slice(0, 1, None),), (slice(1, 2, None),)]
>>> [b for b in blocks((10,), 8, limit=4)]
[(slice(0, 4, None),), (slice(4, 8, None),), (slice(8, 10, None),)]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

__all__ = ["BLOCK_BYTES", "MAX_ELEMENTS", "block_elements", "blocks"]

#: Bytes of one temporary of a block at most.
BLOCK_BYTES = 128 << 10
#: Elements of a block at most.
MAX_ELEMENTS = 1 << 16


def block_elements(itemsize: int) -> int:
    """Elements in a block whose widest temporary has ``itemsize`` bytes an element."""
    return max(1, min(MAX_ELEMENTS, BLOCK_BYTES // max(1, itemsize)))


def blocks(shape: tuple, itemsize: int, limit: int | None = None) -> Iterator[tuple]:
    """Index tuples that cut an array of ``shape`` into C-ordered blocks of at most ``limit``
    elements (default: :func:`block_elements` of ``itemsize``):
    whole trailing axes and a range of the axis before them, or ranges of the last axis
    (``(...,)``: the whole array, when it fits in one block; nothing for an empty one)."""
    if limit is None:
        limit = block_elements(itemsize)
    if math.prod(shape) <= limit:
        if math.prod(shape):
            yield (...,)  # a view at every rank (``a[()]`` of rank 0 is a scalar)
        return
    inner, axis = 1, len(shape) - 1
    while inner * shape[axis] <= limit:  # the trailing axes that fit whole (not all of them: checked above)
        inner *= shape[axis]
        axis -= 1
    step = max(1, limit // inner)
    for at in itertools.product(*(range(d) for d in shape[:axis])):
        for lo in range(0, shape[axis], step):
            yield (*at, slice(lo, min(lo + step, shape[axis])))
