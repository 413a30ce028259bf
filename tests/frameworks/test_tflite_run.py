"""``bcast.tflite`` against LiteRT's interpreter (``ai-edge-litert``): one-op models, every case in child processes.

Each case runs twice: through ``bcast.tflite.run`` and through a one-op ``.tflite`` model written at run time
(:mod:`bcast.frameworks.tflite.oracle`: the builtin kernels alone, no delegate) resized to the case's shapes.
They agree when both refuse, or when both give the same shape and the same values (float32 small integers,
bools; exact in both).  Any other outcome must be one a deviation record explains (its check speaks on the
case), else the test fails.  The fixed cases hold each kernel's rank limit (at and above it), 0-size dims,
scalars, SELECT against SELECT_V2 and BROADCAST_TO; the random ones are drawn from ``bcast.strategies``
(fixed seeds).  ``pytest -s`` prints the counts.
"""

from __future__ import annotations

import numpy as np
import pytest

from bcast import BroadcastError, InputError
from bcast.frameworks.deviations import notes_for
from bcast.frameworks.tflite import ops as tflite
from bcast.strategies import broadcastable, examples, not_broadcastable

pytest.importorskip("ai_edge_litert")
from bcast.frameworks.tflite import oracle  # noqa: E402

SEED = 20261125
BINARY = tuple(name for name, o in tflite.OPS.items() if o.kind == "binary")
G8, H8 = (2, 1) * 4, (1, 2) * 4  # rank 8, each axis stretched one way or the other: the generic loop
G9, H9 = G8 + (2,), H8 + (1,)

#: (op, shapes, source): the kernels' limits and corners
FIXED = [
    *[(op, (G8, H8), "broadcast_loop.h kMaxRank = 8: at the limit") for op in BINARY],
    *[(op, ((2,) * 9, (2,) * 9), "HaveSameShapes: rank 9 without broadcasting") for op in BINARY],
    ("ADD", ((0, 3), (1, 3)), "a 0 with a 1"),
    ("MUL", ((2, 0, 1), (3,)), "a 0 kept, a 1 stretched to 3"),
    ("SUB", ((0,), (2,)), "0 with 2 does not broadcast"),
    ("DIV", ((), ()), "two scalars"),
    ("MAXIMUM", ((), (2, 3)), "a scalar"),
    ("EQUAL", ((2, 3, 1), (3, 4)), "comparisons"),
    ("LOGICAL_AND", ((1,), (0,)), "logical, empty"),
    ("SELECT", ((3,), (3, 4), (3, 4)), "rank-1 condition on the first axis"),
    ("SELECT", ((4,), (3, 4), (3, 4)), "rank-1 condition on the last axis: refused"),
    ("SELECT", ((1,), (3, 4), (3, 4)), "rank-1 condition of 1: no stretch"),
    ("SELECT", ((), (2, 3), (2, 3)), "scalar condition"),
    ("SELECT", ((2, 3), (2, 3), (2, 3)), "same shapes"),
    ("SELECT", ((2, 3), (2, 3), (3,)), "x and y differ"),
    ("SELECT", ((3, 1), (3, 4), (3, 4)), "rank-2 condition that is not x's shape"),
    ("SELECT", ((0,), (0, 2), (0, 2)), "empty"),
    ("SELECT_V2", ((4,), (3, 4), (3, 4)), "numpy: the last axis"),
    ("SELECT_V2", ((3, 1), (1, 4), ()), "numpy, three ways"),
    ("SELECT_V2", (G8, H8, ()), "rank 8: at the limit"),
    ("SELECT_V2", (G9, H9, ()), "rank 9: Prepare refuses (output_size->size <= 8)"),
    ("SELECT_V2", ((1, 1), (1,), ()), "one element each (deviation tflite-select-one-element)"),
    ("SELECT", ((1,), (1, 1), (1,)), "one element each (deviation tflite-select-one-element)"),
    ("SELECT", ((1,), (1,), (1,)), "one element each, one shape (deviation tflite-select-one-element)"),
    ("SUB", ((2,) * 9, (1,) * 9), "rank 9 broadcast: the loop aborts (deviation tflite-rank-abort)"),
    ("LESS", (G9, H9), "rank 9 broadcast: the loop aborts (deviation tflite-rank-abort)"),
    ("ADD", (G9, H9), "rank 9, generic: ADD's loop aborts too (deviation tflite-rank-abort)"),
    ("ADD", ((2,) * 9, ()), "rank 9, five-fold on float32 (deviation tflite-rank-fast-path)"),
    ("MUL", ((2,) * 10, (1,) * 9 + (2,)), "rank 10, five-fold on float32 (deviation tflite-rank-fast-path)"),
    ("BROADCAST_TO", ((3, 1), (2, 3, 4)), "to a higher rank"),
    ("BROADCAST_TO", ((1,), (0,)), "a 1 to 0"),
    ("BROADCAST_TO", ((2, 3), (3,)), "to a lower rank: refused"),
    ("BROADCAST_TO", ((3,), (2, 4)), "3 into 4: refused"),
    ("BROADCAST_TO", ((2, 3), (2, 1)), "3 into 1: refused"),
    ("BROADCAST_TO", ((2, 1) * 5, (2,) * 10), "rank 10"),
    ("BROADCAST_TO", ((), ()), "a scalar to a scalar"),
]


def _shapes_of(case) -> tuple:
    return tuple(tuple(s) for s in case.shapes)


def _random() -> list:
    """(op, shapes) drawn from bcast.strategies: accepted and refused cases of each op's rule."""
    out = []
    for k, op in enumerate(BINARY):
        for c in examples(broadcastable("numpy", max_dims=6, min_side=0, max_side=3), 20, seed=SEED + k):
            out.append((op, _shapes_of(c)))
        for c in examples(not_broadcastable("numpy", max_dims=6), 6, seed=SEED + k):
            out.append((op, _shapes_of(c)))
    for rule, op in (("tflite-select", "SELECT"), ("numpy", "SELECT_V2")):
        extra = {"num_shapes": 3} if rule == "numpy" else {}
        for c in examples(broadcastable(rule, max_dims=6, max_side=3, **extra), 40, seed=SEED):
            out.append((op, _shapes_of(c)))
        for c in examples(not_broadcastable(rule, max_dims=6, **extra), 15, seed=SEED):
            out.append((op, _shapes_of(c)))
    for c in examples(broadcastable("unidirectional", max_dims=6, min_side=0, max_side=3), 40, seed=SEED):
        out.append(("BROADCAST_TO", _shapes_of(c)[::-1]))  # (input, target)
    for c in examples(not_broadcastable("unidirectional", max_dims=6), 15, seed=SEED):
        out.append(("BROADCAST_TO", _shapes_of(c)[::-1]))
    return out


def _inputs(op: str, shapes, rng, dtype: str = "float32") -> list:
    """Arrays for one case: bools for LOGICAL_* and the condition, small integers of ``dtype`` otherwise (no 0
    divisor for FLOOR_DIV / FLOOR_MOD / DIV, positive POW bases, exponents >= 0); BROADCAST_TO's shape as int32."""
    spec = tflite.OPS[op]
    if spec.kind == "broadcast_to":
        return [rng.integers(-4, 5, size=shapes[0]).astype(dtype), np.array(shapes[1], np.int32)]
    out = []
    for i, s in enumerate(shapes):
        if spec.types == ("bool",) or (spec.kind in ("select", "select_v2") and i == 0):
            out.append(rng.integers(0, 2, size=s).astype(bool))
        elif op in ("FLOOR_DIV", "FLOOR_MOD", "DIV") and i == 1:
            out.append((rng.integers(1, 4, size=s) * rng.choice([-1, 1], size=s)).astype(dtype))
        elif op == "POW":
            out.append(rng.integers(1 - i, 4, size=s).astype(dtype))
        else:
            out.append(rng.integers(-4, 5, size=s).astype(dtype))
    return out


def _ours(op: str, arrays):
    try:
        return tflite.run(op, *arrays)
    except (BroadcastError, InputError) as e:
        return e


def _plan_or_error(op: str, shapes):
    try:
        return tflite.plan(op, *shapes)
    except BroadcastError as e:
        return e


def _agree(ours, theirs) -> bool:
    if isinstance(theirs, oracle.RuntimeCrashed):  # a crash is no refusal: a record must say so
        return False
    if isinstance(ours, Exception) or isinstance(theirs, Exception):
        return isinstance(ours, Exception) and isinstance(theirs, oracle.RuntimeRefused)
    return ours.shape == theirs.shape and ours.dtype == theirs.dtype and np.array_equal(ours, theirs)


COUNTS: dict = {"cases": 0, "fixed": 0, "random": 0, "int32": 0, "agree": 0, "explained": 0, "both refuse": 0}
EXPLAINED: set = set()  # the records that explained a disagreement


def _check_all(cases: list, dtype: str = "float32") -> list:
    """Run ``cases`` ((op, shapes, label)) on ``dtype`` inputs through bcast and the interpreter; the unexplained
    disagreements."""
    rng = np.random.default_rng(SEED)
    inputs = [_inputs(op, shapes, rng, dtype) for op, shapes, _ in cases]
    theirs_all = oracle.run_many([(op, *arrays) for (op, _, _), arrays in zip(cases, inputs)])
    bad = []
    for (op, shapes, label), arrays, theirs in zip(cases, inputs, theirs_all):
        ours = _ours(op, arrays)
        COUNTS["cases"] += 1
        if _agree(ours, theirs):
            COUNTS["agree"] += 1
            COUNTS["both refuse"] += isinstance(ours, Exception)
            continue
        element_type = arrays[1 if tflite.OPS[op].kind in ("select", "select_v2") else 0].dtype.name
        notes = notes_for(_plan_or_error(op, shapes), op=op, op_attrs={"element_type": element_type})
        if isinstance(theirs, oracle.RuntimeCrashed):
            notes = [n for n in notes if n.deviation.kills_process]
        if notes:
            COUNTS["explained"] += 1
            EXPLAINED.update(n.deviation.id for n in notes)
            continue
        shown = theirs.shape if isinstance(theirs, np.ndarray) else theirs
        bad.append(f"{op} {shapes} ({label}): bcast {getattr(ours, 'shape', ours)!r}, tflite {shown!r}")
    return bad


def test_fixed_cases_against_the_interpreter():
    COUNTS["fixed"] = len(FIXED)
    assert _check_all([(op, shapes, source) for op, shapes, source in FIXED]) == []


def test_random_cases_against_the_interpreter():
    cases = _random()
    COUNTS["random"] = len(cases)
    assert _check_all([(op, shapes, "random") for op, shapes in cases]) == []


def test_int32_cases_against_the_interpreter():
    """The ops that take int32 here, on int32 inputs: FLOOR_DIV / FLOOR_MOD's integer paths, POW's, the comparisons."""
    ops = [op for op, o in tflite.OPS.items() if "int32" in o.types]
    cases = [(op, shapes, "int32") for op, shapes in _random() if op in ops][::3]
    COUNTS["int32"] = len(cases)
    assert _check_all(cases, "int32") == []


def test_counts():
    """The three differential tests together: every case counted, and which records explained a disagreement.
    Under pytest-xdist they may run in other processes than this one: then there is nothing here to add up."""
    if not (COUNTS["fixed"] and COUNTS["random"] and COUNTS["int32"]):
        pytest.skip("the differential tests ran in another process (pytest-xdist)")
    print(f"\ntflite differential: {COUNTS}, explained by {sorted(EXPLAINED)}")
    assert COUNTS["cases"] == COUNTS["fixed"] + COUNTS["random"] + COUNTS["int32"] > 0
    assert EXPLAINED == {"tflite-select-one-element", "tflite-rank-abort", "tflite-rank-fast-path"}
