"""StableHLO's op table (bcast.stablehlo), against its spec (openxla/stablehlo docs/spec.md): nothing
runs StableHLO here, so every constraint and example the table relies on is a row below, and
``broadcast_in_dim``'s values are checked against the spec's own definition, index by index.  jax
(which lowers to StableHLO, broadcast_in_dim as it is, and runs it through XLA) is the runtime:
tests/frameworks/test_jax_run.py."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bcast
import bcast.stablehlo as shlo
from bcast import BroadcastError, InputError
from bcast.frameworks.deviations import applicable
from bcast.strategies import broadcastable, examples

#: broadcast_in_dim: (operand, result, broadcast_dimensions, expected shape or the error's kind); spec C2-C5
BROADCAST_IN_DIM = [
    ((1, 3), (2, 3, 2), [2, 1], (2, 3, 2)),  # the spec's example: transposing, allowed (C4 asks unique only)
    ((3,), (2, 3), [1], (2, 3)),
    ((2, 3), (3, 2), [1, 0], (3, 2)),  # a pure transposition
    ((2, 1), (4, 5, 2), [2, 0], (4, 5, 2)),  # data axis 1 (size 1) lands before axis 0
    ((), (2, 3), [], (2, 3)),
    ((1,), (0, 4), [0], (0, 4)),
    ((2, 3), (2, 3), [0], "attribute"),  # C2: one entry per operand axis
    ((3,), (2, 3), [2], "attribute"),  # C3: an axis of the result
    ((3,), (2, 3), [-1], "attribute"),  # C3: 0 <= broadcast_dimensions
    ((3, 3), (3, 3), [1, 1], "attribute"),  # C4: unique
    ((3,), (2, 4), [1], "dims"),  # C5: 1 or the result's dim
    ((2, 3), (2, 3), [1, 0], "dims"),  # C5, through the transposition: 2 lands on 3
]


@pytest.mark.parametrize("operand, result, dims, expected", BROADCAST_IN_DIM)
def test_broadcast_in_dim_follows_the_spec(operand, result, dims, expected):
    if isinstance(expected, str):
        with pytest.raises(BroadcastError) as e:
            shlo.plan("broadcast_in_dim", operand, result, broadcast_dimensions=dims)
        assert e.value.kind == expected
        return
    p = shlo.plan("broadcast_in_dim", operand, result, broadcast_dimensions=dims)
    assert p.shape == expected and p.rule == "explicit" and p.names == ("operand", "result")
    assert p.axis_maps[0] == tuple(dims)


def spec_broadcast_in_dim(x, result, dims):
    """The spec's semantics, index by index: result[i] = operand[j], j[d] = 0 where dim(operand, d) = 1,
    else i[broadcast_dimensions[d]]."""
    out = np.empty(result, x.dtype)
    for i in itertools.product(*(range(n) for n in result)):
        out[i] = x[tuple(0 if x.shape[d] == 1 else i[dims[d]] for d in range(x.ndim))]
    return out


def test_the_specs_example_values():
    x = np.int32([[1, 2, 3]])
    got = shlo.run("broadcast_in_dim", x, (2, 3, 2), broadcast_dimensions=[2, 1])
    assert got.tolist() == [[[1, 1], [2, 2], [3, 3]], [[1, 1], [2, 2], [3, 3]]]  # spec.md's %result


def _transposed_cases(n: int, seed: int):
    """Valid explicit cases from bcast.strategies, their data axes permuted: unique, unsorted maps."""
    rng = np.random.default_rng(seed)
    for case in examples(broadcastable("explicit", max_dims=4), n, seed=seed):
        data, target = case.shapes
        dims = list(case.attrs["axes_mapping"])
        perm = rng.permutation(len(data))
        yield tuple(data[k] for k in perm), target, [dims[k] for k in perm]


def test_broadcast_in_dim_values_match_the_spec_on_random_transposing_maps():
    checked = 0
    for operand, result, dims in _transposed_cases(60, seed=3):
        x = np.arange(1, 1 + int(np.prod(operand)), dtype=np.float32).reshape(operand)
        got = shlo.run("broadcast_in_dim", x, result, broadcast_dimensions=dims)
        np.testing.assert_array_equal(got, spec_broadcast_in_dim(x, result, dims))
        # the same through bcast.apply and the executor's views: a transposing plan is transposed, never reshaped
        plan = bcast.infer(operand, result, rule="explicit", axes_mapping=dims, transpose=1)
        np.testing.assert_array_equal(bcast.apply(lambda a, b: a + 0 * b, x, np.zeros(result, np.float32),
                                                  rule="explicit", axes_mapping=dims, transpose=1), got)
        assert plan.shape == result
        checked += 1
    assert checked >= 30


def test_a_transposing_plan_has_no_translation_and_no_prepared_call():
    from bcast.run import _fast
    from bcast.translation import TranslationError, translate

    plan = bcast.infer((2, 3), (3, 2), rule="explicit", axes_mapping=[1, 0], transpose=1)
    assert plan.transposition(0) == (1, 0) and plan.transposition(1) is None
    with pytest.raises(TranslationError, match="out of order"):
        translate(plan, to="onnx")
    with pytest.raises(InputError, match="transposing"):
        _fast.prepared(plan)


def test_explicit_sorted_is_openvinos_and_jaxs_rule():
    with pytest.raises(BroadcastError, match="is not sorted"):
        bcast.infer((1, 3), (2, 3, 2), rule="explicit", axes_mapping=[2, 1])
    with pytest.raises(BroadcastError, match="repeats 1"):
        bcast.infer((3, 3), (3, 3), rule="explicit", axes_mapping=[1, 1], transpose=1)


#: element-wise ops (spec "add" C1 and the same on every element-wise op): (lhs, rhs, expected or None)
ELEMENTWISE = [
    ((2, 3), (2, 3), (2, 3)),
    ((), (), ()),
    ((2, 3), (1, 3), None),  # no implicit broadcasting, even of a 1
    ((2, 3), (3,), None),
    ((2, 3), (), None),  # nor of a scalar
]


@pytest.mark.parametrize("op", [o for o in shlo.ops() if not o.startswith("chlo.") and o not in
                                ("select", "broadcast_in_dim")])
@pytest.mark.parametrize("lhs, rhs, expected", ELEMENTWISE)
def test_elementwise_ops_never_broadcast(op, lhs, rhs, expected):
    if expected is None:
        with pytest.raises(BroadcastError):
            shlo.plan(op, lhs, rhs)
    else:
        assert shlo.plan(op, lhs, rhs).rule == "none" and shlo.plan(op, lhs, rhs).shape == expected


#: select (spec "select" C1-C2): (pred, on_true, on_false, expected or None)
SELECT = [
    ((2, 3), (2, 3), (2, 3), (2, 3)),
    ((), (2, 3), (2, 3), (2, 3)),  # C1: rank(pred) = 0
    ((1, 3), (2, 3), (2, 3), None),  # C1: else shape(pred) = shape(on_true)
    ((), (2, 3), (1, 3), None),  # C2: on_true and on_false of one type
]


@pytest.mark.parametrize("pred, on_true, on_false, expected", SELECT)
def test_select(pred, on_true, on_false, expected):
    if expected is None:
        with pytest.raises(BroadcastError):
            shlo.plan("select", pred, on_true, on_false)
    else:
        assert shlo.plan("select", pred, on_true, on_false).shape == expected


def test_chlo_broadcast_ops_pad_with_leading_ones():
    # IREE's e2e test of chlo.broadcast_add (tests/e2e/stablehlo_ops/broadcast_add.mlir): (4,) with (3,4)
    got = shlo.run("chlo.broadcast_add", np.float32([1, 2, 3, 4]), np.full((3, 4), 2, np.float32))
    assert got.tolist() == [[3.0, 4.0, 5.0, 6.0]] * 3
    assert shlo.plan("chlo.broadcast_add", (4, 1, 3), (2, 1)).shape == (4, 2, 3)
    assert shlo.plan("chlo.broadcast_select", (), (2, 1), (3,)).shape == (2, 3)
    with pytest.raises(InputError, match="no attribute broadcast_dimensions"):
        shlo.plan("chlo.broadcast_add", (2, 3), (3,), broadcast_dimensions=[1])


def test_run_values_and_refusals():
    a, b = np.float32([[1, 2], [3, 4]]), np.float32([[10, 20], [30, 40]])
    np.testing.assert_array_equal(shlo.run("add", a, b), a + b)
    np.testing.assert_array_equal(shlo.run("remainder", np.float32([-5, 5]), np.float32([3, 3])), [-2, 2])
    np.testing.assert_array_equal(shlo.run("chlo.broadcast_multiply", a, np.float32([1, 10])), a * [1, 10])
    with pytest.raises(BroadcastError):
        shlo.run("add", a, np.float32([1, 2]))
    with pytest.raises(InputError, match="one element type"):
        shlo.run("add", a, b.astype(np.float64))
    with pytest.raises(InputError, match="must be one of"):
        shlo.run("divide", np.int32([1]), np.int32([2]))
    with pytest.raises(InputError, match="unknown op"):
        shlo.plan("Add", (2,), (2,))
    with pytest.raises(InputError, match="broadcast_dimensions is required"):
        shlo.plan("broadcast_in_dim", (2,), (2,))


def test_no_record_bears_on_a_transposing_broadcast_in_dim():
    """jax 0.10.2 lowers it to stablehlo.broadcast_in_dim as it is and XLA runs it (test_jax_run.py)."""
    assert applicable((1, 3), (2, 3, 2), rule="explicit", axes_mapping=[2, 1], transpose=1) == []
