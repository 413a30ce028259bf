"""Oracle: PyTorch itself (``torch``, eager mode on the CPU), on numpy arrays.

:func:`run` calls the op the way :mod:`bcast.frameworks.torch.ops` names it: ``torch.<op>(*tensors)``
for the binary ops and ``where``, ``Tensor.<op>_`` on a copy of ``self`` for the in-place ops,
``Tensor.expand(*size)``, ``torch.broadcast_to(input, shape)``, ``torch.broadcast_tensors``; the
tensors come from the arrays with ``torch.from_numpy`` (copies: torch never writes into them) and
the result goes back with ``.numpy()`` (a list for ``broadcast_tensors``; for a tensor with a negative
size, which no array can have, its shape as a tuple: deviation ``torch-expand-negative-size``).  A ``RuntimeError`` (or
any other error torch raises) is a :class:`RuntimeRefused` with torch's message.

torch is imported on first use: ``pip install 'bcast[torch]'`` (for the CPU wheel alone, add
``--extra-index-url https://download.pytorch.org/whl/cpu``).

>>> import numpy as np
>>> run("add_", np.zeros((2, 1), np.float32), np.ones(3, np.float32))  # doctest: +SKIP
Traceback (most recent call last):
...
bcast.frameworks._oracle.RuntimeRefused: torch refused: output with shape [2, 1] doesn't match the broadcast shape ...
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._oracle import RuntimeRefused
from .ops import op as _op

__all__ = ["RuntimeRefused", "run", "run_many", "version"]

RUNTIME = "torch"


def _torch() -> Any:
    from ...core._require import require

    return require("torch", "the torch oracle")


def version() -> str:
    """The installed torch's version, e.g. ``2.13.0+cpu``."""
    return str(_torch().__version__)


def _tensor(torch: Any, x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return torch.from_numpy(np.array(x, copy=True))
    return x  # a Python number (other of a binary op)


def _numpy(t: Any) -> Any:
    if isinstance(t, (tuple, list)):
        return [_numpy(x) for x in t]
    if any(d < 0 for d in t.shape):  # deviation torch-expand-negative-size: no array has that shape
        return tuple(int(d) for d in t.shape)
    return t.detach().numpy().copy()


def _call(torch: Any, name: str, arrays: tuple) -> Any:
    o = _op(name)
    if o.kind in ("expand", "broadcast_to"):
        x, size = _tensor(torch, arrays[0]), [int(d) for d in arrays[1]]
        return x.expand(size) if o.kind == "expand" else torch.broadcast_to(x, size)
    tensors = [_tensor(torch, x) for x in arrays]
    if o.kind == "inplace":
        self, other = tensors
        return getattr(self, o.name)(other)
    if o.kind == "tensors":
        return torch.broadcast_tensors(*tensors)
    return getattr(torch, o.name)(*tensors)


def run(name: str, *arrays: Any) -> Any:
    """Op ``name`` (:func:`bcast.frameworks.torch.ops.ops`) on ``arrays`` in torch: the result as numpy
    (a list of arrays for ``broadcast_tensors``, a shape tuple for a tensor with a negative size), or
    :class:`RuntimeRefused` raised with torch's message."""
    torch = _torch()
    try:
        result = _call(torch, name, arrays)
    except Exception as e:  # torch's RuntimeError, and its TypeError/ValueError on bad arguments
        raise RuntimeRefused(RUNTIME, str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__) \
            from None
    return _numpy(result)


def run_many(name: str, jobs: list) -> list:
    """:func:`run` on each tuple of arrays in ``jobs``, in this process; each result is the output or the
    :class:`RuntimeRefused` (returned, not raised)."""
    out: list = []
    for arrays in jobs:
        try:
            out.append(run(name, *arrays))
        except RuntimeRefused as e:
            out.append(e)
    return out
