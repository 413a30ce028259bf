"""The jax CPU wheel as an oracle: one op of :mod:`bcast.frameworks.jax.ops` run by jax itself,
through its public API only (``jax.lax``, ``jax.numpy``, ``jax.numpy_rank_promotion``).

``run(op, *arrays, **attrs)`` takes what ``bcast.jax.run`` takes and returns a numpy array;
jax's refusal (a ``TypeError`` or ``ValueError`` from its shape rules, a warning raised as an error
under ``rank_promotion="warn"`` is not one) is a :class:`RuntimeRefused` with jax's message.
``warns(...)`` says whether the call warns (``jax_numpy_rank_promotion="warn"``).  jax is imported
on first use; it runs eagerly (op by op, no ``jax.jit``), on the CPU.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from .._oracle import RuntimeRefused, last_line
from .ops import op as _op

__all__ = ["RuntimeRefused", "run", "run_many", "version", "warns"]



def _jax():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # the CPU wheel: no probing for accelerators
    import jax

    return jax


def version() -> str:
    return str(_jax().__version__)


def _call(name: str, arrays: tuple, attrs: dict) -> Any:
    jax = _jax()
    o = _op(name)
    attrs = dict(attrs)
    promotion = attrs.pop("rank_promotion", None) or "allow"
    dims = attrs.pop("broadcast_dimensions", None)
    if attrs:
        raise TypeError(f"jax oracle: unknown attributes {sorted(attrs)}")
    module, _, fn = o.name.partition(".")
    if o.kind == "broadcast_in_dim":
        x, shape = arrays
        return jax.lax.broadcast_in_dim(x, tuple(shape), tuple(dims))
    if o.kind == "broadcast_to":
        x, shape = arrays
        return jax.numpy.broadcast_to(x, tuple(shape))
    if module == "lax":
        return getattr(jax.lax, fn)(*arrays)
    with jax.numpy_rank_promotion(promotion):
        return getattr(jax.numpy, fn)(*arrays)


def run(name: str, *arrays: Any, **attrs: Any) -> np.ndarray:
    """``name`` computed by jax on ``arrays`` (numpy arrays; for ``lax.broadcast_in_dim`` and
    ``jnp.broadcast_to`` the array and the result shape), as a numpy array."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(_call(name, arrays, attrs))
    except (TypeError, ValueError) as e:
        raise RuntimeRefused("jax", last_line(e)) from None


def warns(name: str, *arrays: Any, **attrs: Any) -> str | None:
    """The text of the warning jax gives on this call (``rank_promotion="warn"``), or None.  jax warns
    when it traces a ``jnp`` function (they are jitted), once per signature: its caches are cleared first."""
    _jax().clear_caches()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            _call(name, arrays, attrs)
        except (TypeError, ValueError) as e:
            raise RuntimeRefused("jax", last_line(e)) from None
    texts = [str(w.message) for w in seen if "rank" in str(w.message).lower()]
    return texts[0] if texts else None


def run_many(jobs: list) -> list:
    """``run(*job[0], **job[1])`` for each ``(args, attrs)`` job: its array, or the RuntimeRefused."""
    out: list = []
    for args, attrs in jobs:
        try:
            out.append(run(*args, **attrs))
        except RuntimeRefused as e:
            out.append(e)
    return out
