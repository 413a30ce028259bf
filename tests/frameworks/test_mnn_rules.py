"""``bcast.mnn`` (MNN's BinaryOp and Select) against the MNN wheel: shapes, refusals and values.

MNN broadcasts by numpy's rule, rank at most 9 (``computeBroadCastDims``; ``MNN_MAX_TENSOR_DIM``).
The differential tests run every case in one child process (``bcast.frameworks.mnn.oracle.run_many``):
fixed cases, then random ones from ``bcast.strategies``, through every op on small-integer and random
float32 values and int32 values.  Every disagreement is a recorded one: an empty output
(``mnn-empty-output``), the float32 comparisons that compare bit patterns (``mnn-compare-bits``,
``mnn-less-bits``); rank 10 kills the process (``mnn-rank-crash``, proven in a child by the proofs).
"""

from __future__ import annotations

import numpy as np
import pytest

from bcast import BroadcastError, InputError, mnn
from bcast.frameworks.mnn.deviations import both_stretched, select_y_unstretched

#: (shapes, bcast's shape or None where it refuses, the kind of refusal)
FIXED = [
    (((2, 3), (3,)), (2, 3), None),
    (((8, 1, 6, 1), (7, 1, 5)), (8, 7, 6, 5), None),
    (((), (2, 3)), (2, 3), None),
    (((), ()), (), None),
    (((2, 3, 4), (3, 4)), (2, 3, 4), None),  # ncnn's garbage pair: numpy in MNN
    (((4, 1), (1, 5)), (4, 5), None),
    (((1,), (3, 1, 2)), (3, 1, 2), None),
    (((1,) * 9, (2,)), (1,) * 8 + (2,), None),  # rank 9, MNN_MAX_TENSOR_DIM
    (((2, 3), (4,)), None, "dims"),  # "Broad cast error, dim1 = 4, dim2 = 3"
    (((3, 2), (4, 2)), None, "dims"),
    (((0,), (5,)), None, "dims"),
    (((1,) * 10, (2,)), None, "rank"),  # MNN dies: mnn-rank-crash
    (((0, 3), (1, 3)), (0, 3), None),  # MNN infers it, cannot read it: mnn-empty-output
]


@pytest.mark.parametrize("shapes, shape, kind", FIXED)
def test_plan(shapes, shape, kind):
    if shape is None:
        with pytest.raises(BroadcastError) as e:
            mnn.plan("ADD", *shapes)
        assert e.value.kind == kind
    else:
        assert mnn.plan("ADD", *shapes).shape == shape


def test_ops_and_bad_requests():
    assert mnn.ops()[:3] == ("ADD", "SUB", "MUL") and mnn.ops()[-1] == "SELECT"
    assert mnn.op(7).name == mnn.op("realdiv").name == "REALDIV"
    assert mnn.plan("SELECT", (2, 1), (3,), ()).shape == (2, 3)
    f, i = np.ones(3, np.float32), np.ones(3, np.int32)
    for call, says in [
        (lambda: mnn.plan("NOPE", (2,), (2,)), "unknown op 'NOPE'; the ops are ADD, SUB"),
        (lambda: mnn.plan("SELECT", (2,), (2,)), "takes 3 inputs (cond, x, y), got 2"),
        (lambda: mnn.run("ADD", f, i), "must have the same type"),
        (lambda: mnn.run("ADD", f.astype(np.float64), f), "must be float32 or int32"),
        (lambda: mnn.run("ATAN2", i, i), "float32 only"),
        (lambda: mnn.run("REALDIV", i, i - 1), "integer division by zero"),
        (lambda: mnn.run("ADD", [1.0], f), "must be a numpy array"),
    ]:
        with pytest.raises(InputError, match=says.replace("(", r"\(").replace(")", r"\)")):
            call()


def test_the_records_know_the_ops():
    from bcast.frameworks.mnn import deviations

    assert deviations.OPS == mnn.ops()


def test_values_by_mnn_functors():
    i = np.int32
    assert mnn.run("REALDIV", np.array([7, -7], i), np.array([2], i)).tolist() == [3, -3]  # C's truncation
    assert mnn.run("FLOORDIV", np.array([7, -7], i), np.array([2], i)).tolist() == [3, -4]
    assert mnn.run("FLOORMOD", np.array([7, -7], i), np.array([2], i)).tolist() == [1, -1]  # x's sign for int32
    assert mnn.run("FLOORMOD", np.float32([7, -7]), np.float32([2])).tolist() == [1, 1]
    assert mnn.run("MOD", np.array([7, -7], i), np.array([-2], i)).tolist() == [-1, -1]  # the divisor's sign
    assert mnn.run("MOD", np.float32([7, -7]), np.float32([-2])).tolist() == [1, -1]  # fmodf
    assert mnn.run("SELECT", np.array([[1], [0]], i), np.float32([1, 2]), np.float32(9)).tolist() == [[1, 2], [9, 9]]
    assert mnn.run("GREATER", np.float32([1, 3]), np.float32(2)).dtype == np.int32


# --------------------------------------------------------------------------- against the MNN wheel


def _ulps(a, b):
    ia, ib = (np.asarray(v, np.float32).view(np.int32).astype(np.int64) for v in (a, b))
    ia, ib = (np.where(v < 0, -(v & 0x7FFFFFFF), v) for v in (ia, ib))
    return np.abs(ia - ib)


def _bits(name, x, y):
    x, y = (np.ascontiguousarray(v).view(np.int32) for v in np.broadcast_arrays(x, y))
    f = {"GREATER": np.greater, "GREATER_EQUAL": np.greater_equal, "LESS": np.less, "LESS_EQUAL": np.less_equal,
         "EQUAL": np.equal, "NOTEQUAL": np.not_equal}[name]
    return f(x, y).astype(np.int32)


def _operands(name, shapes, dtype, rng):
    o = mnn.op(name)
    if o.nary == 3:
        return [rng.integers(0, 2, shapes[0]).astype(np.int32),
                *(rng.integers(-4, 5, s).astype(dtype) for s in shapes[1:])]
    if dtype == np.int32 or rng.random() < 0.5:  # small integers: exact, ties, zeros, negatives
        x, y = (rng.integers(-6, 7, s).astype(dtype) for s in shapes)
    else:
        x, y = (rng.uniform(-9, 9, s).astype(dtype) for s in shapes)
    if name == "POW":
        x, y = np.abs(x) + dtype(1), (np.abs(y) % 4).astype(dtype)
    if name in ("REALDIV", "FLOORDIV", "FLOORMOD", "MOD"):
        y = np.where(y == 0, dtype(3), y).astype(dtype)
    return [np.asarray(x, dtype), np.asarray(y, dtype)]


def _expected(name, arrays):
    try:
        return mnn.run(name, *arrays)
    except BroadcastError as e:
        return e


def _check(name, arrays, theirs, tally):
    """bcast's answer against MNN's: the same, or a recorded departure of the kind its record says."""
    from bcast.frameworks._oracle import RuntimeRefused

    ours = _expected(name, arrays)
    shapes = [a.shape for a in arrays]
    if isinstance(ours, BroadcastError):
        assert ours.kind == "dims" and isinstance(theirs, RuntimeRefused), (name, shapes, theirs)
        tally["both refuse"] += 1
        return
    if isinstance(theirs, RuntimeRefused):  # an empty output: mnn-empty-output
        assert 0 in ours.shape and "reading the output" in theirs.message, (name, shapes, theirs.message)
        tally["empty output (mnn-empty-output)"] += 1
        return
    assert theirs.shape == ours.shape and theirs.dtype == ours.dtype, (name, shapes, theirs.dtype)
    o = mnn.op(name)
    floats = arrays[-1].dtype == np.float32
    if floats and (name == "LESS" or (o.boolean and name != "LESS" and both_stretched(shapes, ours.shape))):
        np.testing.assert_array_equal(theirs, _bits(name, *arrays), err_msg=f"{name} {shapes}")
        tally["bit patterns compared (mnn-less-bits, mnn-compare-bits)"] += 1
        return
    if name == "SELECT" and select_y_unstretched(shapes, ours.shape):  # mnn-select-y: y read in memory order
        cond, x = (np.broadcast_to(a, ours.shape).ravel() for a in arrays[:2])
        y = arrays[2].ravel()
        k = np.arange(ours.size)
        read = np.where(cond != 0, x, np.where(k < y.size, y[np.minimum(k, y.size - 1)], np.nan))
        seen = theirs.ravel()
        defined = ~np.isnan(read)
        np.testing.assert_array_equal(seen[defined], read[defined], err_msg=f"{name} {shapes}")
        tally["y read unstretched (mnn-select-y)"] += 1
        return
    if o.ulps and floats:
        assert _ulps(ours, theirs).max(initial=0) <= o.ulps, (name, shapes)
    else:
        np.testing.assert_array_equal(theirs, ours, err_msg=f"{name} {shapes}")
    tally["same"] += 1


def _oracle():
    pytest.importorskip("MNN")
    from bcast.frameworks.mnn import oracle

    return oracle


def _run_all(jobs):
    oracle = _oracle()
    tally: dict = {k: 0 for k in ("same", "both refuse", "empty output (mnn-empty-output)",
                                  "bit patterns compared (mnn-less-bits, mnn-compare-bits)",
                                  "y read unstretched (mnn-select-y)")}
    for (name, arrays), theirs in zip(jobs, oracle.run_many(jobs)):
        _check(name, arrays, theirs, tally)
    return tally


def test_fixed_cases_every_op_against_mnn():
    rng = np.random.default_rng(19)
    jobs = []
    for shapes, _, kind in FIXED:
        if kind == "rank":
            continue  # kills the process: the proof of mnn-rank-crash runs it in a child
        for name in mnn.ops():
            for dtype in (np.float32, np.int32):
                if name == "ATAN2" and dtype == np.int32:
                    continue
                given = shapes if name != "SELECT" else ((1,) + shapes[0][1:], *shapes)
                jobs.append((name, _operands(name, given, dtype, rng)))
    tally = _run_all(jobs)
    assert tally["same"] > len(jobs) // 2 and sum(tally.values()) == len(jobs), tally


def test_random_cases_against_mnn():
    """Random numpy cases (ranks 0-9, 0-size dims among them), 2 and 3 inputs, through every op."""
    from bcast.strategies import broadcastable, examples, not_broadcastable

    rng = np.random.default_rng(20261125)
    two = examples(broadcastable("numpy", max_dims=6, min_side=0, max_side=4), 120, seed=7)
    two += examples(not_broadcastable("numpy", max_dims=6, max_side=4), 60, seed=7)
    two += examples(broadcastable("numpy", min_dims=7, max_dims=9, max_side=2), 20, seed=7)  # up to the limit
    three = examples(broadcastable("numpy", num_shapes=3, max_dims=4, max_side=3), 20, seed=7)
    binary = [n for n in mnn.ops() if n != "SELECT"]
    jobs = []
    for k, case in enumerate(two):
        name = binary[k % len(binary)]
        dtype = np.int32 if k % 3 == 0 and name != "ATAN2" else np.float32
        jobs.append((name, _operands(name, case.shapes, dtype, rng)))
    jobs += [("SELECT", _operands("SELECT", c.shapes, np.float32, rng)) for c in three]
    tally = _run_all(jobs)
    assert tally["same"] > len(jobs) // 2 and tally["both refuse"] >= 20, tally


def test_float_comparisons_against_mnn():
    """The comparisons on float32 halves in [-3, 3] (negatives, -0 and ties) over random numpy pairs: MNN
    compares the values, except exactly where mnn-less-bits and mnn-compare-bits say it compares the bits."""
    from bcast.strategies import broadcastable, examples

    rng = np.random.default_rng(5)
    pairs = [c.shapes for c in examples(broadcastable("numpy", max_dims=4, max_side=4), 60, seed=5)]
    pairs += [((4, 1), (1, 8)), ((3, 1, 5), (4, 1)), ((2, 1), (1, 2)), ((1, 4), (3, 1))]
    names = [n for n in mnn.ops() if mnn.op(n).boolean]
    jobs = [(name, [(rng.integers(-6, 7, s) * 0.5).astype(np.float32) for s in shapes])
            for name in names for shapes in pairs]
    tally = _run_all(jobs)
    assert tally["bit patterns compared (mnn-less-bits, mnn-compare-bits)"] >= 60 + 4 * 5, tally
