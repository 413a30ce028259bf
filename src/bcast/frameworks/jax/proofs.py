"""Proofs of the jax records: ``jnp.where`` under ``jax_numpy_rank_promotion``."""

from __future__ import annotations

import numpy as np

from ...core.errors import BroadcastError
from .._proof import _case, _expect, _findings, _fixed, _need, _raises, proof
from . import ops as jax_ops


@proof("jax-where-ignores-rank-promotion", cases=[
    (((2, 1), (3,), ()), dict(rule="equal-rank", names=("condition", "x", "y"))),
    (((4, 1, 3), (2, 3), (2, 1)), dict(rule="equal-rank", names=("condition", "x", "y"))),
])
def jax_where_promotes_ranks_under_raise(dev):
    jax = _need("jax")
    from . import oracle

    for i in range(2):
        shapes, _ = _case(dev, i)
        with _raises(BroadcastError):  # the setting, as jax documents it, refuses the rank promotion
            jax_ops.plan("jnp.where", *shapes, rank_promotion="raise")
        expected = jax_ops.plan("jnp.where", *shapes)  # numpy's rule
        (note,) = _findings(dev, i)
        _expect("rank promotion" in note.note)
        cond = (np.arange(int(np.prod(shapes[0]))) % 2 == 0).reshape(shapes[0])
        x = np.arange(int(np.prod(shapes[1])), dtype=np.float32).reshape(shapes[1])
        y = np.full(shapes[2], -1, np.float32)
        for mode in ("raise", "warn"):
            try:
                got = oracle.run("jnp.where", cond, x, y, rank_promotion=mode)
                warned = oracle.warns("jnp.where", cond, x, y, rank_promotion=mode)
            except oracle.RuntimeRefused as e:
                _fixed(dev, jax, f"jnp.where of {shapes} under {mode!r} now refuses: {e.message}")
            if warned is not None:
                _fixed(dev, jax, f"jnp.where of {shapes} under {mode!r} now warns: {warned}")
            _expect(got.shape == expected.shape, got.shape)
            np.testing.assert_array_equal(got, jax_ops.run("jnp.where", cond, x, y))
        # the binary ops do refuse the same ranks under 'raise'
        a, b = x, np.ones(shapes[0], np.float32)
        refused = None
        try:
            oracle.run("jnp.add", a, b, rank_promotion="raise")
        except oracle.RuntimeRefused as e:
            refused = e.message
        _expect(refused is not None and "rank_promotion" in refused, refused)
