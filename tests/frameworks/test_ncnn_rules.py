"""Differential tests: bcast's ``ncnn`` rule against ncnn's BinaryOp (the PyPI wheel).

Three parties take part:

- ``ncnn_model`` below, an independent transcription (in numpy order) of the
  expansion rules measured from the wheel and read in ncnn's src/layer/binaryop.cpp;
- bcast's ``ncnn`` rule;
- the ncnn wheel itself, run through a one-layer net built from an in-memory
  param (packing, fp16 and bf16 off, one thread).

The wheel runs through :mod:`bcast.frameworks.ncnn.oracle`.  Valid pairs run in this
process.  Pairs outside ncnn's rules run only in a child process
(``oracle.run_many``): ncnn reads past the end of a row when the innermost
axes mismatch (deviation ``ncnn-garbage``), and that must not take pytest down.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bcast
from bcast import BroadcastError
from bcast.frameworks.deviations import applicable
from support.arrays import through_plan

ncnn = pytest.importorskip("ncnn")
from bcast.frameworks.ncnn import oracle as oracle  # noqa: E402

# --- ncnn's BinaryOp op types (src/layer/binaryop.h) ------------------------
ADD, SUB, MUL, DIV, MAX, MIN, POW, RSUB, RDIV, RPOW, ATAN2, RATAN2 = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11

#: ops that the wheel computes bit-exactly (IEEE float32, as numpy does)
EXACT_OPS = {
    ADD: np.add,
    SUB: np.subtract,
    MUL: np.multiply,
    MAX: np.maximum,
    MIN: np.minimum,
    RSUB: lambda a, b: np.subtract(b, a),
}

#: ops built with -ffast-math / SIMD approximations: compared in float64,
#: within ULP_TOL units in the last place of the float32 result.  The
#: reference measured at most 3 ulp (DIV, RDIV) and 1-2 ulp (POW, ATAN2); the
#: reciprocal estimate differs between CPUs, hence the margin.  A broadcasting
#: error would be off by far more than this: every input element is distinct.
APPROX_OPS = {
    DIV: lambda a, b: a / b,
    RDIV: lambda a, b: b / a,
    POW: lambda a, b: np.power(a, b),
    RPOW: lambda a, b: np.power(b, a),
    ATAN2: lambda a, b: np.arctan2(a, b),
    RATAN2: lambda a, b: np.arctan2(b, a),
}
ULP_TOL = 8

OP_NAMES = {code: bcast.frameworks.ncnn.ops.op(code).name for code in range(12)}

SIZES = (1, 2, 3)
SHAPES = [s for r in range(1, 5) for s in itertools.product(SIZES, repeat=r)]
ALL_PAIRS = [(a, b) for a in SHAPES for b in SHAPES]


# --- the independent model of ncnn's shape logic ----------------------------


def ncnn_model(a: tuple, b: tuple):
    """What ncnn's BinaryOp does with two blob shapes (numpy order).

    Returns ``(a2, b2, out, valid)``: both shapes expanded to the output rank
    the way ncnn expands them, the output shape ncnn allocates (per-axis max),
    and whether the pair is one ncnn's broadcasting rules define.
    """
    rank = max(len(a), len(b))

    def expand(s, other):
        pad = rank - len(s)
        if pad == 0:
            return tuple(s)
        if len(s) == 1:
            n = s[0]
            # "inner axis" rule (checked first, so it wins a tie): n matches the
            # other's first numpy axis; otherwise the 1-D "outer axis"
            # compatibility rule: the last numpy axis, numpy-like.
            return (n,) + (1,) * pad if n == other[0] else (1,) * pad + (n,)
        # rank 2 and 3: always on the leading axes, 1s padded on the right
        return tuple(s) + (1,) * pad

    a2, b2 = expand(a, b), expand(b, a)
    out = tuple(max(x, y) for x, y in zip(a2, b2))
    valid = all(x == y or x == 1 or y == 1 for x, y in zip(a2, b2))
    return a2, b2, out, valid


def _infer(a, b, **attrs):
    try:
        return bcast.infer(a, b, rule="ncnn", **attrs)
    except BroadcastError as e:
        return e


# --- running the wheel (bcast.frameworks.ncnn.oracle) -----------------------------------


def run_binaryop(a: np.ndarray, b: np.ndarray, op: int):
    """``(ret, output, ncnn dims of the output)`` of one two-blob BinaryOp."""
    ret, mat = oracle.forward(op, a, b)
    if ret != 0:
        return ret, None, None
    return ret, np.array(mat).copy(), oracle.ncnn_dims(mat)


def _operands(op: int, sa, sb, rng):
    """Distinct float32 values suited to the op (no 0 divisors, positive bases)."""

    def signed(shape, lo, hi):
        mag = rng.uniform(lo, hi, size=shape)
        return (mag * rng.choice((-1.0, 1.0), size=shape)).astype(np.float32)

    if op in (DIV, RDIV, ATAN2, RATAN2):
        return signed(sa, 0.5, 4.0), signed(sb, 0.5, 4.0)
    if op == POW:
        return rng.uniform(0.5, 2.0, sa).astype(np.float32), rng.uniform(-2.0, 2.0, sb).astype(np.float32)
    if op == RPOW:
        return rng.uniform(-2.0, 2.0, sa).astype(np.float32), rng.uniform(0.5, 2.0, sb).astype(np.float32)
    return rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)


# --- bcast against the model: every pair --------------------------------------


def test_model_sanity():
    """The model reproduces the reference's worked examples (numpy order)."""
    assert ncnn_model((4, 3, 2), (4,))[1] == (4, 1, 1)  # inner axis
    assert ncnn_model((4, 3, 2), (2,))[1] == (1, 1, 2)  # outer-axis compatibility
    assert ncnn_model((2, 2), (2,))[1] == (2, 1)  # tie: inner axis wins
    assert ncnn_model((4, 3, 2), (4, 3))[1] == (4, 3, 1)  # leading axes
    assert ncnn_model((2, 3, 4), (3, 4))[2:] == ((3, 4, 4), False)  # garbage shape
    assert ncnn_model((1, 3), (2, 1))[2:] == ((2, 3), True)  # both sides stretch
    assert ncnn_model((4,), (4, 3, 2))[0] == (4, 1, 1)  # symmetric


def test_bcast_matches_model_on_every_pair():
    """All 14400 pairs of ranks 1-4 over {1,2,3}: bcast accepts exactly ncnn's
    pairs, with the model's output shape and placement; every refusal is a
    dims error whose attempted placement is ncnn's (so its garbage shape is
    ncnn's) and carries the ncnn-garbage deviation."""
    n_valid = 0
    for a, b in ALL_PAIRS:
        a2, b2, out, valid = ncnn_model(a, b)
        res = _infer(a, b)
        if valid:
            n_valid += 1
            assert not isinstance(res, BroadcastError), (a, b, str(res))
            assert res.shape == out, (a, b)
            assert res.aligned_shape(0) == a2 and res.aligned_shape(1) == b2, (a, b)
        else:
            assert isinstance(res, BroadcastError), (a, b, res)
            assert res.kind == "dims", (a, b, res.kind)
            garbage = [1] * res.out_rank
            for s, m in zip(res.shapes, res.alignment):
                for k, ax in enumerate(m):
                    garbage[ax] = max(garbage[ax], s[k])
            assert tuple(garbage) == out, (a, b, res.alignment)
    # the reference counted 6632 valid and 7768 invalid pairs over the same grid
    assert n_valid == 6632
    assert len(ALL_PAIRS) - n_valid == 7768


def test_deviation_registered_for_refusals():
    rng = np.random.default_rng(7)
    invalid = [p for p in ALL_PAIRS if not ncnn_model(*p)[3]]
    for i in rng.choice(len(invalid), 200, replace=False):
        a, b = invalid[i]
        ids = [f.deviation.id for f in applicable(a, b, rule="ncnn")]
        assert "ncnn-garbage" in ids, (a, b, ids)
    valid = [p for p in ALL_PAIRS if ncnn_model(*p)[3]]
    for i in rng.choice(len(valid), 200, replace=False):
        a, b = valid[i]
        assert not applicable(a, b, rule="ncnn"), (a, b)


def test_ncnn_order_is_the_same_rule_reversed():
    """``ncnn_order=True`` with reversed shapes: the same decision; the plan is
    kept in numpy order, ``result_shape`` answers in ncnn order."""
    for a, b in ALL_PAIRS:
        num = _infer(a, b)
        nc = _infer(a[::-1], b[::-1], ncnn_order=True)
        assert isinstance(num, BroadcastError) == isinstance(nc, BroadcastError), (a, b)
        if isinstance(num, BroadcastError):
            assert nc.kind == num.kind and nc.shapes == num.shapes, (a, b)
            continue
        assert nc.shape == num.shape, (a, b)
        assert nc.inputs == num.inputs and nc.axis_maps == num.axis_maps, (a, b)
        assert nc.to_dict()["ncnn"]["shape"] == list(num.shape[::-1]), (a, b)
        assert bcast.result_shape(a[::-1], b[::-1], rule="ncnn", ncnn_order=True) == num.shape[::-1]


# --- bcast against the wheel: valid pairs -------------------------------------


def test_valid_pairs_against_ncnn():
    """Every valid pair (6632), under every op: ncnn returns 0, its output has
    Plan.shape (and, in ncnn notation, result_shape(..., ncnn_order=True)), and
    its values are numpy's through the Plan."""
    rng = np.random.default_rng(20261020)
    ops = list(EXACT_OPS) + list(APPROX_OPS)
    worst = {op: 0 for op in APPROX_OPS}
    checked = 0
    for a_shape, b_shape in ALL_PAIRS:
        if not ncnn_model(a_shape, b_shape)[3]:
            continue
        plan = bcast.infer(a_shape, b_shape, rule="ncnn")
        ncnn_shape = list(bcast.result_shape(a_shape[::-1], b_shape[::-1], rule="ncnn", ncnn_order=True))
        for op in ops:
            a, b = _operands(op, a_shape, b_shape, rng)
            ret, out, dims = run_binaryop(a, b, op)
            where = (a_shape, b_shape, OP_NAMES[op])
            assert ret == 0, where
            assert out.shape == plan.shape, (where, out.shape, plan.shape)
            assert dims == ncnn_shape, (where, dims, ncnn_shape)
            x, y = through_plan(plan, a, b)
            if op in EXACT_OPS:
                want = EXACT_OPS[op](x, y)
                assert np.array_equal(out, want), (where, out, want)
            else:
                want = APPROX_OPS[op](x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
                err = int(oracle.ulp_distance(out, want).max())
                worst[op] = max(worst[op], err)
                assert err <= ULP_TOL, (where, err, out, want)
            checked += 1
    assert checked == 6632 * len(ops)
    print(f"ncnn: {checked} op runs on 6632 valid pairs; worst ulp " +
          ", ".join(f"{OP_NAMES[op]} {e}" for op, e in worst.items()))


def test_values_with_larger_sizes():
    """A random sample over sizes {1,4,5,8}: lengths above the SIMD width, so
    the wheel's vector bodies and tails both run."""
    rng = np.random.default_rng(5)
    sizes = (1, 4, 5, 8)
    shapes = [s for r in range(1, 5) for s in itertools.product(sizes, repeat=r)]
    done = 0
    while done < 400:
        a_shape = shapes[rng.integers(len(shapes))]
        b_shape = shapes[rng.integers(len(shapes))]
        a2, b2, out, valid = ncnn_model(a_shape, b_shape)
        res = _infer(a_shape, b_shape)
        assert isinstance(res, BroadcastError) != valid, (a_shape, b_shape)
        if not valid:
            continue
        assert res.shape == out
        for op in (ADD, RSUB, DIV):
            a, b = _operands(op, a_shape, b_shape, rng)
            ret, got, _ = run_binaryop(a, b, op)
            assert ret == 0 and got.shape == res.shape, (a_shape, b_shape, op)
            x, y = through_plan(res, a, b)
            if op in EXACT_OPS:
                assert np.array_equal(got, EXACT_OPS[op](x, y)), (a_shape, b_shape, op)
            else:
                want = APPROX_OPS[op](x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
                assert int(oracle.ulp_distance(got, want).max()) <= ULP_TOL, (a_shape, b_shape, op)
        done += 1


def test_tie_rule_lands_on_first_axis():
    """numpy A (2,2) with B (2,): ncnn (and bcast) put B on axis 0, not axis 1."""
    a = np.array([[0, 1], [2, 3]], np.float32)
    b = np.array([100, 200], np.float32)
    plan = bcast.infer((2, 2), (2,), rule="ncnn")
    assert plan.shape == (2, 2)
    assert plan.aligned_shape(1) == (2, 1)
    assert plan.axis_maps[1] == (0,)
    x, y = through_plan(plan, a, b)
    want = x + y
    assert np.array_equal(want, [[100, 101], [202, 203]])
    ret, out, _ = run_binaryop(a, b, ADD)
    assert ret == 0 and np.array_equal(out, want)
    assert not np.array_equal(out, a + b)  # numpy's own answer differs
    # the same tie with the roles swapped, and in higher ranks
    for a_shape, b_shape in (((2,), (2, 2)), ((2, 3, 2), (2,)), ((2,), (2, 1, 3, 2))):
        plan = bcast.infer(a_shape, b_shape, rule="ncnn")
        lo = 0 if len(a_shape) == 1 else 1
        assert plan.axis_maps[lo] == (0,), (a_shape, b_shape)
        rng = np.random.default_rng(1)
        a, b = rng.standard_normal(a_shape).astype(np.float32), rng.standard_normal(b_shape).astype(np.float32)
        for op in (SUB, RSUB):
            ret, out, _ = run_binaryop(a, b, op)
            x, y = through_plan(plan, a, b)
            assert ret == 0 and np.array_equal(out, EXACT_OPS[op](x, y)), (a_shape, b_shape, op)


def test_reference_examples():
    """The worked examples of reference/ncnn.md section 5, through bcast."""
    a = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    b = np.array([100, 200, 300, 400], np.float32)
    plan = bcast.infer(a.shape, b.shape, rule="ncnn")
    x, y = through_plan(plan, a, b)
    assert np.array_equal((x + y)[:, :, 0], [[100, 102, 104], [206, 208, 210], [312, 314, 316], [418, 420, 422]])
    assert np.array_equal(run_binaryop(a, b, ADD)[1], x + y)
    a = np.array([[0, 1], [2, 3], [4, 5]], np.float32)
    for b, want in (([100, 200], [[100, 201], [102, 203], [104, 205]]),
                    ([100, 200, 300], [[100, 101], [202, 203], [304, 305]])):
        b = np.array(b, np.float32)
        plan = bcast.infer(a.shape, b.shape, rule="ncnn")
        x, y = through_plan(plan, a, b)
        assert np.array_equal(x + y, want)
        assert np.array_equal(run_binaryop(a, b, ADD)[1], want)


def test_scalar_operand_is_the_with_scalar_form():
    """A rank-0 operand is ncnn's with_scalar=1 form: the output is the blob's shape."""
    rng = np.random.default_rng(3)
    for a_shape in ((3,), (2, 3), (3, 1, 2), (2, 1, 3, 2)):
        for op in (ADD, SUB, RSUB, MUL, MAX):
            plan = bcast.infer(a_shape, (), rule="ncnn")
            assert plan.shape == a_shape
            a = rng.standard_normal(a_shape).astype(np.float32)
            b = np.float32(0.5)
            out = oracle.run(op, a, with_scalar=True, scalar=b)
            x, y = through_plan(plan, a, np.asarray(b))
            assert np.array_equal(out, EXACT_OPS[op](x, y)), (a_shape, op)
        # the scalar on the left: the output is still the blob's shape
        assert bcast.infer((), a_shape, rule="ncnn").shape == a_shape


def test_refusals_outside_ncnn_blobs():
    """What no ncnn blob can be: rank 5, a 0-size dim (the wheel dies with
    SIGFPE: deviation ncnn-empty-blob, not run here), two scalars."""
    with pytest.raises(RuntimeError):  # the binding itself refuses a 5-D array ("only dims <=4")
        ncnn.Mat(np.zeros((1, 1, 1, 1, 2), np.float32))
    for a, b in (((1, 1, 1, 1, 2), (2,)), ((2,), (2, 1, 1, 1, 1))):
        with pytest.raises(BroadcastError) as ei:
            bcast.infer(a, b, rule="ncnn")
        assert ei.value.kind == "unsupported"
    for a, b in (((0,), (1,)), ((2, 0), (2,)), ((3,), (0, 3))):
        with pytest.raises(BroadcastError) as ei:
            bcast.infer(a, b, rule="ncnn")
        assert ei.value.kind == "unsupported"
        assert "ncnn-empty-blob" in [f.deviation.id for f in applicable(a, b, rule="ncnn")]
    with pytest.raises(BroadcastError) as ei:
        bcast.infer((), (), rule="ncnn")
    assert ei.value.kind == "unsupported"


# --- bcast against the wheel: invalid pairs (in a child process) --------------

def test_invalid_pairs_ncnn_returns_0_with_max_shape():
    """A sample of the 7768 pairs bcast refuses: ncnn reports nothing (ret 0)
    and allocates the per-axis max of the expanded shapes (deviation
    ncnn-garbage; the values are not looked at here)."""
    rng = np.random.default_rng(11)
    invalid = [p for p in ALL_PAIRS if not ncnn_model(*p)[3]]
    inner = [p for p in invalid if (lambda m: m[0][-1] not in (1, m[1][-1]) and m[1][-1] != 1)(ncnn_model(*p))]
    inner_set = set(inner)
    outer = [p for p in invalid if p not in inner_set]
    sample = [inner[i] for i in rng.choice(len(inner), 150, replace=False)]
    sample += [outer[i] for i in rng.choice(len(outer), 150, replace=False)]
    for a, b in sample:  # bcast refuses them all (already shown for every pair above)
        assert isinstance(_infer(a, b), BroadcastError)
    results = oracle.run_many([(ADD, np.ones(a, np.float32), np.ones(b, np.float32)) for a, b in sample])
    for out, (a, b) in zip(results, sample):
        assert isinstance(out, np.ndarray), (a, b, out)  # ret 0, no crash
        assert out.shape == ncnn_model(a, b)[2], (a, b, out.shape)
