"""bcast.tosa against the TOSA specification and MLIR's TOSA dialect (TosaOps.td, TargetEnv.h).  Spec only:
no TOSA implementation runs here; every row is read from the cited source."""

import numpy as np
import pytest

import bcast
from bcast import BroadcastError, InputError
from bcast.frameworks import framework

#: (op, shapes, attrs, output shape or the BroadcastError's kind)
CASES = [
    ("ADD", ((12, 6), (12, 6)), {}, (12, 6)),  # TosaOps.td's examples
    ("ADD", ((12, 6), (1, 1)), {}, (12, 6)),
    ("ADD", ((2, 3), (3,)), {}, "rank"),  # "Rank of input tensors must match"
    ("MUL", ((2, 1, 4), (1, 3, 1)), {}, (2, 3, 4)),
    ("SUB", ((2, 3), (2, 4)), {}, "dims"),
    ("ADD", ((), ()), {}, ()),
    ("SELECT", ((1, 3), (2, 1), (2, 3)), {}, (2, 3)),
    ("SELECT", ((3,), (2, 3), (2, 3)), {}, "rank"),
    ("GREATER_EQUAL", ((4, 1), (1, 5)), {}, (4, 5)),
    # levels: 8K allows rank <= 6 (MAX_RANK); none sets no level limit
    ("ADD", ((1,) * 6, (2,) * 6), {}, (2,) * 6),
    ("ADD", ((1,) * 7, (1,) * 7), {}, "rank"),
    ("ADD", ((1,) * 7, (1,) * 7), {"level": "none"}, (1,) * 7),
    # TOSA 1.0: no tensor with a 0-size dim
    ("ADD", ((0, 3), (1, 3)), {}, "unsupported"),
    ("SELECT", ((1,), (1,), (0,)), {}, "unsupported"),
]


@pytest.mark.parametrize("op, shapes, attrs, expected", CASES)
def test_tosa_cases(op, shapes, attrs, expected):
    if isinstance(expected, str):
        with pytest.raises(BroadcastError) as e:
            bcast.tosa.plan(op, *shapes, **attrs)
        assert e.value.kind == expected, e.value
    else:
        assert bcast.tosa.plan(op, *shapes, **attrs).shape == expected


def test_every_op_plans_by_equal_rank():
    fw = framework("tosa")
    for op in fw.ops():
        shapes = ((2, 3),) * (3 if op == "SELECT" else 2)
        assert fw.plan(op, *shapes).rule == "equal-rank", op


def test_level_is_checked():
    with pytest.raises(InputError, match="tosa: level must be one of 8K, none; got '16K'"):
        bcast.tosa.plan("ADD", (1,), (1,), level="16K")


def test_run_computes_under_the_plan():
    a, b = np.arange(6).reshape(2, 3), np.array([[2, -4, 5]])
    assert np.array_equal(bcast.tosa.run("ADD", a, b), a + b)
    assert bcast.tosa.run("INTDIV", np.array([[7, -7]]), np.array([[2], [-2]])).tolist() == [[3, -3], [-3, 3]]
    assert bcast.tosa.run("SELECT", np.array([[True], [False]]), a, b).tolist() == [[0, 1, 2], [2, -4, 5]]
    with pytest.raises(BroadcastError):
        bcast.tosa.run("ADD", a, b[0])
    with pytest.raises(InputError, match="bcast computes no values for it"):
        bcast.tosa.run("LOGICAL_RIGHT_SHIFT", a, b)
