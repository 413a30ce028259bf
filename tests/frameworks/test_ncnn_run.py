"""``bcast.frameworks.ncnn.ops.run`` against ncnn's BinaryOp (the PyPI wheel, through ``bcast.frameworks.ncnn.oracle``).

Differential tests on random shapes (ranks 1-4, dims from small sets so that
1s, ties and mismatches occur) and random values, fixed seeds, every op type
0-18 and the with_scalar form: where ncnn's rules define the pair, bcast's
result equals the wheel's (bit for bit, or within the op's ``ulps`` for the
ops the wheel approximates); where they do not, bcast refuses, and a sample
run in a child process shows the wheel returning 0 and an output of the shape
bcast's error names (deviation ``ncnn-garbage``).

bcast computes ncnn's reference functors (src/layer/binaryop.cpp) in IEEE
float32.  The wheel, built with -ffast-math, departs from them in its vector
bodies on a few inputs, listed exactly by ``ncnn_wheel.wheel_departs``
(deviation ``ncnn-fast-math``, proven by bcast.frameworks.ncnn.proofs): there each
departure must be of the recorded kind; no tolerance absorbs them.
``pytest -s`` prints the counts.
"""

from __future__ import annotations

import numpy as np
import pytest

import bcast
from bcast import BroadcastError, InputError
from bcast.run.execute import MemoryBudgetError, memory_budget_set
from bcast.frameworks.ncnn.ops import OPS, op, ops, run
from bcast.rules.ncnn import garbage_shape
from support.shapes import ncnn_shape, ncnn_shape_pairs

pytest.importorskip("ncnn")
from bcast.frameworks.ncnn import oracle as oracle  # noqa: E402
from bcast.frameworks.ncnn.proofs_wheel import departure_documented, same_bits, same_bits_mask, wheel_departs  # noqa: E402

SEED = 20261122
#: ncnn's enum BinaryOp::OperationType (src/layer/binaryop.h), in order.
NCNN_ENUM = ("ADD", "SUB", "MUL", "DIV", "MAX", "MIN", "POW", "RSUB", "RDIV", "RPOW", "ATAN2", "RATAN2",
             "FMOD", "RFMOD", "LOGADDEXP", "FLOOR_DIVIDE", "RFLOOR_DIVIDE", "REMAINDER", "RREMAINDER")
DIVIDING = {"DIV", "RDIV", "FLOOR_DIVIDE", "RFLOOR_DIVIDE", "FMOD", "RFMOD", "REMAINDER", "RREMAINDER"}
# Tallies over the module, per op, printed by the last test (pytest -s):
WORST = {name: 0 for name in NCNN_ENUM}  # the largest ulp distance seen
COUNTS = {name: 0 for name in NCNN_ENUM}  # differential runs (one bcast run, one wheel run)
ELEMENTS = {name: 0 for name in NCNN_ENUM}  # output elements compared within the op's ulps
DEPARTURES = {name: 0 for name in NCNN_ENUM}  # elements where wheel_departs() allows a departure
DIFFERED = {name: 0 for name in NCNN_ENUM}  # ... and where the wheel did depart


# --- cases ----------------------------------------------------------------------


def _try(a_shape, b_shape):
    try:
        return bcast.infer(a_shape, b_shape, rule="ncnn")
    except BroadcastError as e:
        return e


def operands(name: str, a_shape, b_shape, rng):
    """float32 values suited to the op: negatives everywhere, zeros where the
    wheel keeps ncnn's functor (not as divisors, not as POW bases), integers
    for the dividing ops so that exact quotients and remainder ties occur."""
    x = _values(rng, a_shape, name, "x")
    y = _values(rng, b_shape, name, "y")
    return x, y


def _values(rng, shape, name: str, side: str):
    base, divisor = _roles(name)
    if side == base:  # POW's base: positive
        return rng.uniform(0.25, 3.0, shape).astype(np.float32)
    if base is not None:  # POW's exponent: |y ln x| <= 4, integers and 0 among them
        v = rng.uniform(-2.8, 2.8, shape).astype(np.float32)
        return np.where(rng.random(shape) < 0.3, np.round(v), v).astype(np.float32)
    if name in DIVIDING:  # a quarter of them multiples of 1, 0.5 or 1.37: exact quotients and ties
        v = rng.integers(-9, 10, shape).astype(np.float32) * rng.choice((1.0, 0.5, 1.37), shape).astype(np.float32)
        v = np.where(rng.random(shape) < 0.25, v, rng.uniform(-9, 9, shape)).astype(np.float32)
        if side == divisor:
            v[v == 0] = 2.0
        return v
    v = (rng.standard_normal(shape) * 3).astype(np.float32)
    v[rng.random(shape) < 0.15] = 0.0
    return v


def _roles(name: str):
    """(which side is POW's base, which side divides) for an op: 'x' is a, 'y' is b."""
    reverse = op(name).swap
    base = ("y" if reverse else "x") if name in ("POW", "RPOW") else None
    divisor = ("x" if reverse else "y") if name in DIVIDING else None
    return base, divisor


def _ulps(name: str, got, want, x, y) -> np.ndarray:
    """Distance in ulps, counted where the op says (``ulps_at``: the result, or the largest operand)."""
    d = oracle.ulp_distance(got, want)
    if op(name).ulps_at == "operands":
        size = np.maximum.reduce([np.abs(want), np.abs(x), np.abs(y)])
        finite = np.isfinite(got) & np.isfinite(want)
        d = np.where(finite, np.ceil(np.abs(got.astype(np.float64) - want) / np.spacing(size)), d).astype(np.int64)
    return d


def check_close(name: str, got: np.ndarray, want: np.ndarray, x, y, where) -> int:
    """``got`` (bcast) equals ``want`` (the wheel) within the op's ulps (0: bit-exact,
    NaN == NaN, -0 and +0 told apart), except where the wheel's vector body
    departs from ncnn's functor (``wheel_departs``, deviation ncnn-fast-math),
    where the departure must be of the recorded kind.  ``x``, ``y``: the
    operands at the output shape.  Returns the number of departures seen."""
    assert got.shape == want.shape and got.dtype == want.dtype == np.float32, (where, got.shape, want.shape)
    x, y = (np.broadcast_to(v, want.shape) for v in (x, y))
    departs = wheel_departs(name, x, y)
    assert departure_documented(name, got[departs], want[departs], x[departs], y[departs]).all(), where
    DIFFERED[name] += int((got[departs].view(np.int32) != want[departs].view(np.int32)).sum())
    keep = ~departs
    d = _ulps(name, got[keep], want[keep], x[keep], y[keep])
    worst = int(d.max()) if d.size else 0
    WORST[name] = max(WORST[name], worst)
    COUNTS[name] += 1
    DEPARTURES[name] += int(departs.sum())
    ELEMENTS[name] += int(keep.sum())
    if op(name).ulps == 0:
        g, w = got[keep], want[keep]
        same = same_bits_mask(g, w)
        assert same.all(), (where, x[keep][~same], y[keep][~same], g[~same], w[~same])
    else:
        assert worst <= op(name).ulps, (where, worst, got, want)
    return int(departs.sum())


def compare(name: str, x, y=None, *, scalar=None, where=()) -> int:
    """bcast.frameworks.ncnn.ops.run against the wheel on the same inputs (two blobs, or the with_scalar form)."""
    if scalar is None:
        got, want = run(name, x, y), oracle.run(name, x, y)
        xv, yv = bcast.broadcast_arrays(x, y, rule="ncnn")
    else:
        got = run(name, x, with_scalar=True, scalar=scalar)
        want = oracle.run(name, x, with_scalar=True, scalar=scalar)
        xv, yv = x, np.float32(scalar)
    return check_close(name, got, want, xv, yv, (name, *where))


# --- the table ------------------------------------------------------------------


def test_op_table_is_ncnns_enum():
    assert ops() == NCNN_ENUM
    for code, name in enumerate(NCNN_ENUM):
        assert op(code) is op(name) is op(name.lower()) is OPS[code]
        assert op(code).swap == (name.startswith("R") and name != "REMAINDER")


# --- differential: random shapes, every op --------------------------------------


def test_random_pairs_against_ncnn():
    """Per op, 70 random shape pairs: valid ones agree with the wheel, invalid ones are refused."""
    rng = np.random.default_rng(SEED)
    refused = 0
    for name in NCNN_ENUM:
        for a_shape, b_shape in ncnn_shape_pairs(rng, 70):
            x, y = operands(name, a_shape, b_shape, rng)
            res = _try(a_shape, b_shape)
            if isinstance(res, BroadcastError):
                with pytest.raises(BroadcastError) as ei:
                    run(name, x, y)
                assert ei.value.kind == "dims" and ei.value.shapes == (a_shape, b_shape)
                refused += 1
                continue
            compare(name, x, y, where=(a_shape, b_shape))
    assert refused > 300  # about a third of 19 x 70
    assert min(COUNTS.values()) >= 25


def test_larger_blobs_against_ncnn():
    """Outputs past the SIMD widths and past one block of the blocked kernels (2**16 elements)."""
    rng = np.random.default_rng(SEED + 1)
    cases = [((70, 40, 30), (70, 40)), ((3, 300), (300,)), ((2, 9, 1, 17), (1, 9, 33, 1)), ((257,), (1, 257))]
    for name in NCNN_ENUM:
        for a_shape, b_shape in cases:
            x, y = operands(name, a_shape, b_shape, rng)
            compare(name, x, y, where=(a_shape, b_shape))


def test_with_scalar_against_ncnn():
    """The one-input form (param 1=1, 2=b), every op, scalars of both signs, 0 where meaningful."""
    rng = np.random.default_rng(SEED + 2)
    for name in NCNN_ENUM:
        base, divisor = _roles(name)
        for k in range(12):
            shape = ncnn_shape(rng) if k < 10 else (5, 7, 33)
            x = _values(rng, shape, name, "x")
            s = np.float32(_values(rng, (1,), name, "y")[0])
            if k == 0 and divisor != "y" and base != "y":
                s = np.float32(0.0)
            compare(name, x, scalar=s, where=(shape, float(s)))


def test_special_values_where_the_wheel_keeps_the_functor():
    """inf, -inf, NaN, -0 through the ops whose vector bodies are plain IEEE
    instructions (ADD, SUB, MUL, RSUB, MAX), on both the vector body (a long
    blob) and the scalar path (one-element blobs); the finite specials (-0,
    zeros, negatives) through every op (departures: ``wheel_departs``)."""
    IEEE_VECTOR_OPS = ("ADD", "SUB", "MUL", "RSUB", "MAX")
    values = np.float32([-np.inf, -3, -2, -1.5, -1, -0.0, 0.0, 0.5, 1, 1.5, 2, 3, np.inf, np.nan])
    x, y = (v.ravel() for v in np.meshgrid(values, values, indexing="ij"))
    for name in NCNN_ENUM:
        keep = np.ones(x.shape, bool) if name in IEEE_VECTOR_OPS else np.isfinite(x) & np.isfinite(y)
        xs, ys = x[keep], y[keep]
        compare(name, xs, ys, where=("vector",))
        for i in range(0, len(xs), 7):  # the scalar path, on a sample
            one = slice(i, i + 1)
            compare(name, xs[one], ys[one], where=(xs[i], ys[i]))


def test_remainder_is_ieee_not_python_mod():
    """REMAINDER is C's remainderf: round-to-nearest, ties to even; its sign follows no operand."""
    x = np.float32([5, -5, 3, -3, 1.5, 2.5, -2, 7])
    y = np.float32([3, 3, 2, 2, 1, 1, 2, -4])
    want = np.float32([-1, 1, -1, 1, -0.5, 0.5, -0.0, -1])
    got = run("REMAINDER", x, y)
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))
    # the wheel's scalar path calls remainderf (its vector body rounds ties its own way: wheel_departs)
    scalar_path = np.concatenate([oracle.run("REMAINDER", x[i : i + 1], y[i : i + 1]) for i in range(len(x))])
    assert np.array_equal(scalar_path, want) and np.array_equal(np.signbit(scalar_path), np.signbit(want))
    assert np.array_equal(run("RREMAINDER", y, x), want)


# --- refusals -------------------------------------------------------------------


def test_refused_pairs_compute_garbage_in_ncnn():
    """A sample of pairs bcast refuses, in a child process: ncnn returns 0 and
    an output of exactly the shape bcast's error names (deviation ncnn-garbage)."""
    rng = np.random.default_rng(SEED + 3)
    refused = [(a, b) for a, b in ncnn_shape_pairs(rng, 300) if isinstance(_try(a, b), BroadcastError)][:60]
    cases = []
    for i, (a_shape, b_shape) in enumerate(refused):
        name = NCNN_ENUM[i % len(NCNN_ENUM)]
        x, y = operands(name, a_shape, b_shape, rng)
        with pytest.raises(BroadcastError) as ei:
            run(name, x, y)
        e = ei.value
        cases.append((name, x, y, garbage_shape(e.shapes, e.alignment, e.out_rank)))
        assert bcast.format_shape(cases[-1][3]) in str(e)
    results = oracle.run_many([c[:3] for c in cases])
    for (name, x, y, shape), out in zip(cases, results):
        assert isinstance(out, np.ndarray), (name, x.shape, y.shape, out)  # ret 0: no error reported
        assert out.shape == shape, (name, x.shape, y.shape, out.shape, shape)
    assert len(cases) == 60


def test_empty_blob_is_refused_and_crashes_ncnn():
    with pytest.raises(BroadcastError) as ei:
        run("ADD", np.zeros((0, 3), np.float32), np.ones((1, 3), np.float32))
    assert ei.value.kind == "unsupported"
    with pytest.raises(oracle.RuntimeCrashed) as ci:
        oracle.run_isolated("ADD", np.zeros((0, 3), np.float32), np.ones((1, 3), np.float32))
    assert ci.value.runtime == "ncnn" and "SIGFPE" in ci.value.message


# --- ncnn_order, out=, memory ---------------------------------------------------


def test_ncnn_order_names_shapes_as_ncnn_does():
    a = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    b = np.float32([1, 2, 3, 4])
    assert np.array_equal(run("ADD", a, b, ncnn_order=True), run("ADD", a, b))
    with pytest.raises(BroadcastError) as ei:
        run("ADD", np.ones((2, 3, 4), np.float32), np.ones((3, 4), np.float32), ncnn_order=True)
    assert "A [4,3,2] with B [4,3]" in str(ei.value) and ei.value.notation == "ncnn"


def test_out():
    rng = np.random.default_rng(SEED + 4)
    a = rng.standard_normal((4, 3, 2)).astype(np.float32)
    b = rng.uniform(1, 2, (4, 3)).astype(np.float32)
    for name in NCNN_ENUM:
        want = run(name, a, b)
        out = np.full(a.shape, 7, np.float32)
        assert run(name, a, b, out=out) is out
        assert same_bits(out, want), name
        inplace = a.copy()  # out= aliasing A: A op= B
        run(name, inplace, b, out=inplace)
        assert same_bits(inplace, want), name
    out = np.empty(3, np.float32)
    assert run("RSUB", np.float32([1, 2, 3]), with_scalar=True, scalar=1, out=out) is out
    assert np.array_equal(out, [0, -1, -2])
    for bad in (np.empty((4, 3), np.float32), np.empty(a.shape, np.float64), np.empty((4, 3, 2, 1), np.float32),
                [[0.0]]):
        with pytest.raises(InputError):
            run("ADD", a, b, out=bad)
    ro = np.empty(a.shape, np.float32)
    ro.flags.writeable = False
    with pytest.raises(InputError, match="read-only"):
        run("ADD", a, b, out=ro)


def test_memory_guard():
    """Terabytes of output are refused before anything is allocated, with the size in the message."""
    a = np.ones((1_000_000, 1, 1, 1), np.float32)
    b = np.ones((1, 1, 1, 1_000_000), np.float32)
    with pytest.raises(MemoryBudgetError, match=r"\(1000000,1,1,1000000\) float32 needs 3\.6 TiB"):
        run("MUL", a, b)
    with memory_budget_set("1MiB"):
        with pytest.raises(MemoryBudgetError):
            run("REMAINDER", np.ones((1024, 1), np.float32), np.ones((1, 1024), np.float32))
        assert run("ADD", np.ones((256, 1), np.float32), np.ones((1, 256), np.float32)).shape == (256, 256)


def test_non_contiguous_inputs():
    rng = np.random.default_rng(SEED + 5)
    a = rng.standard_normal((6, 8)).astype(np.float32).T[::2]  # (4, 6), strided
    b = rng.uniform(1, 2, (12,)).astype(np.float32)[::3]  # (4,): a's first axis
    for name in ("SUB", "DIV", "MIN", "REMAINDER"):
        compare(name, a, b)


# --- bad input ------------------------------------------------------------------

F = np.ones((2, 3), np.float32)
BAD = [
    pytest.param(("ADD", np.float32(1.0), F), {}, id="A rank 0"),
    pytest.param(("ADD", F, np.array(2.0, np.float32)), {}, id="B rank 0"),
    pytest.param(("ADD", np.ones((1, 1, 1, 1, 2), np.float32), F), {}, id="A rank 5"),
    pytest.param(("ADD", F, np.ones((2, 1, 1, 1, 3), np.float32)), {}, id="B rank 5"),
    pytest.param(("ADD", F.astype(np.float64), F), {}, id="float64"),
    pytest.param(("ADD", F, F.astype(np.int32)), {}, id="int32"),
    pytest.param(("ADD", F, F.astype(np.float16)), {}, id="float16"),
    pytest.param(("ADD", [[1.0, 2.0]], F), {}, id="list"),
    pytest.param(("ADD", None, F), {}, id="None"),
    pytest.param(("ADD", "2,3", F), {}, id="string"),
    pytest.param((19, F, F), {}, id="op 19"),
    pytest.param((-1, F, F), {}, id="op -1"),
    pytest.param(("FOO", F, F), {}, id="op FOO"),
    pytest.param((True, F, F), {}, id="op True"),
    pytest.param((3.0, F, F), {}, id="op 3.0"),
    pytest.param((None, F, F), {}, id="op None"),
    pytest.param(("ADD", F), {}, id="B missing"),
    pytest.param(("ADD", F, F), dict(with_scalar=True), id="B with with_scalar"),
    pytest.param(("ADD", F), dict(with_scalar=True, scalar="x"), id="scalar str"),
    pytest.param(("ADD", F), dict(with_scalar=True, scalar=None), id="scalar None"),
    pytest.param(("ADD", F), dict(with_scalar=True, scalar=[1.0]), id="scalar list"),
    pytest.param(("ADD", F), dict(with_scalar=True, scalar=True), id="scalar bool"),
    pytest.param(("ADD", F, F), dict(out="x"), id="out str"),
]


@pytest.mark.parametrize("args, kwargs", BAD)
def test_bad_input(args, kwargs):
    with pytest.raises(InputError) as ei:
        run(*args, **kwargs)
    message = str(ei.value)
    assert "\n" not in message and message.startswith("ncnn BinaryOp")


def test_counts_and_worst_ulps():
    """Runs last: the per-op counts and the worst ulps seen (pytest -s prints them)."""
    seen = {k: v for k, v in COUNTS.items() if v}
    if len(seen) == len(NCNN_ENUM):
        print("\nncnn differential runs per op:", seen)
        print("ncnn worst ulps per op:", {k: WORST[k] for k in NCNN_ENUM})
        print("ncnn elements compared per op:", ELEMENTS)
        print("ncnn elements where the wheel may depart (ncnn-fast-math) per op:", DEPARTURES)
        print("ncnn elements where it did:", DIFFERED)
    for name in NCNN_ENUM:
        assert WORST[name] <= op(name).ulps

