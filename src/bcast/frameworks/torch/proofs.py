"""Proofs of the torch records: ``Tensor.expand`` and ``torch.broadcast_to`` with a negative size."""

from __future__ import annotations

from ...core.errors import InputError
from ..deviations import BY_ID
from . import ops as torch_ops
from .._proof import CASES, _expect, _fixed, _need, _raises, proof


@proof("torch-expand-negative-size", cases=[])
def torch_expand_takes_a_negative_size(dev):
    """No shape case: bcast refuses a negative size as bad input (an InputError), before any rule."""
    torch = _need("torch")
    _expect(BY_ID[dev].check is None and not CASES[dev])
    # self's shape, the sizes: each holds a negative size that keeps no existing dim, and a 0
    cases: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
        ((1,), (-2, 0)),  # a -2 on a new leading axis
        ((1,), (0, -2)),  # a -2 on self's own axis (of size 1)
        ((), (-1, 0)),  # a -1 on a new leading axis of a 0-d tensor
    ]
    accepted = []
    for shape, size in cases:
        for name in ("expand", "broadcast_to"):
            with _raises(InputError, match="negative size|not allowed at axis"):
                torch_ops.plan(name, shape, size)  # bcast: bad input
            x = torch.ones(shape)
            try:
                got = x.expand(*size) if name == "expand" else torch.broadcast_to(x, size)
            except RuntimeError:
                continue
            _expect(tuple(got.shape) == size and got.numel() == 0, (name, shape, size, tuple(got.shape)))
            accepted.append((name, shape, size))
    if not accepted:
        _fixed(dev, torch, "expand and broadcast_to refuse every negative size")
    _expect(len(accepted) == 2 * len(cases), accepted)
    # Without a 0 among the sizes the refusal is the element count's overflow, not the documented check
    # (a 1-D tensor's -1 on a new leading axis gets the documented message).
    overflowing: list[tuple[tuple[int, ...], tuple[int, ...]]] = [((), (-1,)), ((3,), (-2, 3))]
    for shape, size in overflowing:
        with _raises(RuntimeError, match="numel: integer multiplication overflow"):
            torch.ones(shape).expand(*size)
    with _raises(RuntimeError, match="isn't allowed in a leading, non-existing dimension 0"):
        torch.ones(3).expand(-1, 3)
