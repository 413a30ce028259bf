"""The differential tests of the eager frameworks' op tables (torch, paddle: bcast.frameworks._eager)
against their runtimes: inputs of small integers, random shape cases from bcast.strategies, and the
comparison of bcast's run (or refusal) with the runtime's (or its RuntimeRefused)."""

from __future__ import annotations

import numpy as np

from bcast import BroadcastError, InputError
from bcast.frameworks._oracle import RuntimeRefused

DIVIDING = ("div", "remainder", "fmod", "floor_divide", "elementwise_div", "elementwise_mod",
            "elementwise_floordiv")
POWERS = ("pow", "elementwise_pow")


def inputs(o, shapes, rng) -> list:
    """float32 small integers of ``shapes`` for op ``o`` (an EagerOp): ``where``'s condition boolean,
    an ``expand``'s sizes as they are, no zero divisor, exponents 0-2."""
    out: list = []
    for i, s in enumerate(shapes):
        if o.kind == "expand" and i == 1:
            out.append(tuple(s))
        elif o.kind == "where" and i == 0:
            out.append(rng.integers(0, 2, size=s).astype(bool))
        else:
            v = rng.integers(-4, 5, size=s).astype(np.float32)
            if o.name.startswith(DIVIDING) and i == 1:
                v[v == 0] = 3
            if o.name.startswith(POWERS) and i == 1:
                v = np.asarray(np.abs(v) % 3, np.float32)
            out.append(v)
    return out


def ours(run, name: str, arrays, **attrs):
    """bcast's result on copies of ``arrays`` (an in-place op writes into its first), or its refusal."""
    try:
        return run(name, *[a.copy() if isinstance(a, np.ndarray) else a for a in arrays], **attrs)
    except (BroadcastError, InputError) as e:
        return e


def agree(ours, theirs, where) -> None:
    """Both refuse, or both give the same shapes and values (lists of arrays pairwise)."""
    if isinstance(ours, Exception) or isinstance(theirs, RuntimeRefused):
        assert isinstance(ours, Exception) and isinstance(theirs, RuntimeRefused), (where, ours, theirs)
        return
    ours, theirs = (x if isinstance(x, list) else [x] for x in (ours, theirs))
    assert len(ours) == len(theirs), where
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape, (where, a.shape, b.shape)
        np.testing.assert_array_equal(np.asarray(a, np.float64), np.asarray(b, np.float64), err_msg=str(where))


def random_cases(rule: str, n: int, seed: int, num_shapes: int | None = None, **attrs) -> list:
    """``n`` broadcastable and ``n`` refused cases of ``rule`` (``(shapes, attrs)``), twice: sides 1-5 up to
    rank 4, then sides 0-5 (0-size dims) up to rank 3."""
    from bcast.testing.strategies import broadcastable, examples, not_broadcastable

    drawn = []
    for k, (min_side, max_dims) in enumerate(((1, 4), (0, 3))):
        kw = dict(min_side=min_side, max_dims=max_dims, **attrs)
        if num_shapes:
            kw["num_shapes"] = num_shapes
        drawn += examples(broadcastable(rule, **kw), n, seed=seed + k)
        drawn += examples(not_broadcastable(rule, **kw), n, seed=seed + k)
    return [(c.shapes, c.attrs) for c in drawn]
