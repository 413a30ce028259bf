"""Differential tests: bcast.jax (its op table's plans and values) against jax itself, the CPU wheel,
eagerly (no jax.jit), on fixed cases (each a row below: what jax's shape rules in
jax/_src/lax/lax.py and jax/_src/numpy/util.py do, measured) and on random shapes from
bcast.strategies.  Zero unexplained disagreements: every case agrees, or its difference is the
record jax-where-ignores-rank-promotion (tests/frameworks/test_deviations_jax.py: jnp.where under
rank_promotion="raise", which bcast refuses as the setting says and jax computes).

Every case runs in this one process, through bcast.frameworks.jax.oracle."""

from __future__ import annotations

import numpy as np
import pytest

import bcast.jax as bjax
from bcast import BroadcastError
from bcast.strategies import broadcastable, examples, not_broadcastable

pytest.importorskip("jax")
from bcast.frameworks._oracle import RuntimeRefused  # noqa: E402
from bcast.frameworks.jax import oracle  # noqa: E402

#: ops whose float32 values jax's CPU kernels compute exactly as numpy (IEEE); the others within a few ulps
EXACT = {"add", "sub", "subtract", "mul", "multiply", "max", "maximum", "min", "minimum"}


def _array(shape, k: int = 0):
    """Distinct float32 values in [1, 2) (every op is defined on them): a misplaced element shows."""
    n = int(np.prod(shape))
    return (1 + (np.arange(n, dtype=np.float32) + 0.37 * k) / (n + 1)).astype(np.float32).reshape(shape)


def _inputs(op: str, shapes):
    if op in ("lax.broadcast_in_dim", "jnp.broadcast_to"):
        return [_array(shapes[0]), tuple(shapes[1])]
    if op in ("lax.select", "jnp.where"):
        pred = (np.arange(int(np.prod(shapes[0]))) % 3 == 0).reshape(shapes[0])
        return [pred, _array(shapes[1], 1), _array(shapes[2], 2)]
    return [_array(s, k) for k, s in enumerate(shapes)]


def agree(op: str, shapes, **attrs) -> str:
    """bcast's answer and jax's on one case must agree: both refuse, or both give the same array.
    Returns "ok" or "refused" (what both did)."""
    try:
        plan = bjax.plan(op, *shapes, **attrs)
    except BroadcastError as e:
        plan, ours = None, e
    inputs = _inputs(op, shapes)
    try:
        theirs = oracle.run(op, *inputs, **attrs)
    except RuntimeRefused as e:
        assert plan is None, f"{op} {shapes} {attrs}: bcast plans {plan.shape}, jax refuses: {e.message}"
        return "refused"
    assert plan is not None, f"{op} {shapes} {attrs}: bcast refuses ({ours}), jax gives {theirs.shape}"
    got = bjax.run(op, *inputs, **attrs)
    assert got.shape == theirs.shape == tuple(plan.shape), (op, shapes, got.shape, theirs.shape)
    assert got.dtype == theirs.dtype, (op, shapes, got.dtype, theirs.dtype)
    if op.split(".")[1] in EXACT or op in ("lax.select", "jnp.where", "lax.broadcast_in_dim", "jnp.broadcast_to"):
        np.testing.assert_array_equal(got, theirs, err_msg=f"{op} {shapes}")
    else:
        np.testing.assert_allclose(got, theirs, rtol=4e-7 * 8, err_msg=f"{op} {shapes}")
    return "ok"


#: lax binary ops (x, y, what jax does): equal ranks with each dim equal or 1; a rank-0 operand with
#: anything; different ranks refused ("arrays must have same number of dimensions")
LAX_CASES = [
    ((2, 3), (2, 3), "ok"),
    ((2, 1), (1, 3), "ok"),  # size-1 dims stretch, both ways
    ((1, 1), (4, 5), "ok"),
    ((), (2, 3), "ok"),  # rank 0: left out of the rank check
    ((2, 3), (), "ok"),
    ((), (), "ok"),
    ((0, 3), (1, 3), "ok"),
    ((2, 3), (3,), "refused"),  # different ranks
    ((1,), (2, 3), "refused"),
    ((2, 3), (3, 2), "refused"),
    ((2, 0), (2, 3), "refused"),
]


@pytest.mark.parametrize("op", [o for o in bjax.ops() if o.startswith("lax.") and o not in
                                ("lax.select", "lax.broadcast_in_dim")])
def test_lax_binary_ops(op):
    for x, y, expected in LAX_CASES:
        assert agree(op, (x, y)) == expected, (op, x, y)


#: jnp binary ops under jax_numpy_rank_promotion: (x1, x2, allow, raise)
JNP_CASES = [
    ((2, 3), (3,), "ok", "refused"),  # rank promotion: refused under raise
    ((4, 1, 3), (2, 1), "ok", "refused"),
    ((2, 3), (), "ok", "ok"),  # a rank-0 operand is no rank promotion
    ((2, 1), (1, 3), "ok", "ok"),
    ((2, 3), (4,), "refused", "refused"),
    ((2, 3), (3, 2), "refused", "refused"),
]


@pytest.mark.parametrize("op", [o for o in bjax.ops() if o.startswith("jnp.") and o not in
                                ("jnp.where", "jnp.broadcast_to")])
def test_jnp_binary_ops_under_rank_promotion(op):
    for x1, x2, allow, raise_ in JNP_CASES:
        assert agree(op, (x1, x2)) == allow, (op, x1, x2)
        assert agree(op, (x1, x2), rank_promotion="allow") == allow
        assert agree(op, (x1, x2), rank_promotion="warn") == allow  # computes as allow, with a warning
        assert agree(op, (x1, x2), rank_promotion="raise") == raise_, (op, x1, x2)


def test_rank_promotion_warn_warns_where_raise_refuses():
    for x1, x2, allow, raise_ in JNP_CASES:
        if allow != "ok":
            continue
        text = oracle.warns("jnp.add", _array(x1), _array(x2), rank_promotion="warn")
        assert (text is not None) == (raise_ == "refused"), (x1, x2, text)


#: where / select (three operands) and the two broadcast-to ops
THREE = [
    ("jnp.where", ((2, 1), (3,), ()), {}, "ok"),
    ("jnp.where", ((2, 1), (3,), ()), {"rank_promotion": "warn"}, "ok"),
    ("jnp.where", ((2, 3), (1, 3), ()), {"rank_promotion": "raise"}, "ok"),
    ("jnp.where", ((2, 3), (4, 3), ()), {}, "refused"),
    ("lax.select", ((), (2, 3), (2, 3)), {}, "ok"),  # a rank-0 predicate
    ("lax.select", ((2, 3), (2, 3), (2, 3)), {}, "ok"),
    ("lax.select", ((1, 3), (2, 3), (2, 3)), {}, "refused"),  # no broadcasting of the predicate's 1s
    ("lax.select", ((2, 3), (2, 3), (1, 3)), {}, "refused"),
    ("lax.broadcast_in_dim", ((3,), (2, 3)), {"broadcast_dimensions": [1]}, "ok"),
    ("lax.broadcast_in_dim", ((1, 3), (2, 3, 4)), {"broadcast_dimensions": [0, 1]}, "ok"),
    ("lax.broadcast_in_dim", ((), (2,)), {"broadcast_dimensions": []}, "ok"),
    ("lax.broadcast_in_dim", ((3,), (2, 4)), {"broadcast_dimensions": [1]}, "refused"),
    ("lax.broadcast_in_dim", ((3, 3), (3, 3)), {"broadcast_dimensions": [1, 1]}, "refused"),
    ("lax.broadcast_in_dim", ((1, 3), (2, 3, 2)), {"broadcast_dimensions": [2, 1]}, "ok"),  # StableHLO's example
    ("lax.broadcast_in_dim", ((2, 3), (3, 2)), {"broadcast_dimensions": [1, 0]}, "ok"),  # a transposition
    ("lax.broadcast_in_dim", ((2, 3), (2, 3)), {"broadcast_dimensions": [1, 0]}, "refused"),
    ("jnp.broadcast_to", ((3,), (2, 3)), {}, "ok"),
    ("jnp.broadcast_to", ((2, 1), (2, 5)), {}, "ok"),
    ("jnp.broadcast_to", ((3,), (4,)), {}, "refused"),
    ("jnp.broadcast_to", ((2, 3), (3,)), {}, "refused"),
    ("jnp.broadcast_to", ((2, 3), (1, 3)), {}, "refused"),
]


@pytest.mark.parametrize("op, shapes, attrs, expected", THREE)
def test_where_select_and_broadcasts(op, shapes, attrs, expected):
    assert agree(op, shapes, **attrs) == expected


def test_stablehlo_broadcast_in_dim_runs_as_jax_lowers_it():
    """Transposing maps (StableHLO's C4: unique, any order): jax lowers lax.broadcast_in_dim to
    stablehlo.broadcast_in_dim with the same dims, XLA runs it; bcast.stablehlo and bcast.jax give
    its values."""
    import jax

    from bcast import stablehlo

    x = _array((2, 3))
    text = jax.jit(lambda a: jax.lax.broadcast_in_dim(a, (3, 4, 2), (2, 0))).lower(x).as_text()
    assert "stablehlo.broadcast_in_dim %arg0, dims = [2, 0]" in text
    rng = np.random.default_rng(9)
    n = 0
    for case in examples(broadcastable("explicit", max_dims=4, max_side=4), 40, seed=9):
        data, target = case.shapes
        perm = rng.permutation(len(data))
        operand = tuple(data[k] for k in perm)
        dims = [case.attrs["axes_mapping"][k] for k in perm]
        assert agree("lax.broadcast_in_dim", (operand, target), broadcast_dimensions=dims) == "ok"
        np.testing.assert_array_equal(
            stablehlo.run("broadcast_in_dim", _array(operand), target, broadcast_dimensions=dims),
            oracle.run("lax.broadcast_in_dim", _array(operand), target, broadcast_dimensions=dims))
        n += 1
    assert n == 40


def test_random_shapes():
    """Random cases of the rules the ops plan by, from bcast.strategies, each run by bcast and by jax."""
    seen = {"ok": 0, "refused": 0}
    for case in examples(broadcastable("numpy", max_dims=4, max_side=4), 40, seed=5):
        for op, attrs in (("jnp.add", {}), ("jnp.multiply", {"rank_promotion": "raise"}), ("lax.max", {})):
            seen[agree(op, case.shapes, **attrs)] += 1
    for case in examples(not_broadcastable("numpy", max_dims=4, max_side=4), 20, seed=6):
        seen[agree("jnp.add", case.shapes)] += 1
    for case in examples(broadcastable("explicit", max_dims=4, max_side=4), 30, seed=7):
        seen[agree("lax.broadcast_in_dim", case.shapes,
                   broadcast_dimensions=list(case.attrs["axes_mapping"]))] += 1
    for case in examples(broadcastable("unidirectional", max_dims=4, max_side=4), 20, seed=8):
        shape, array = case.shapes
        seen[agree("jnp.broadcast_to", (array, shape))] += 1
    assert seen["ok"] > 100 and seen["refused"] > 20, seen


def test_run_refuses_what_it_does_not_model():
    from bcast import InputError

    with pytest.raises(InputError, match="jax_enable_x64"):
        bjax.run("lax.add", np.ones(2), np.ones(2))
    with pytest.raises(InputError, match="same dtype"):
        bjax.run("lax.add", np.ones(2, np.float32), np.ones(2, np.int32))
    with pytest.raises(InputError, match="rank_promotion must be one of"):
        bjax.plan("jnp.add", (2,), (2,), rank_promotion="sometimes")
    with pytest.raises(InputError, match="no attribute rank_promotion"):
        bjax.plan("lax.add", (2,), (2,), rank_promotion="raise")
