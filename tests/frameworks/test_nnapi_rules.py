"""bcast.nnapi against Android's NeuralNetworks.h.  Spec only: no NNAPI driver runs here; every row is read
from the header's comments."""

import numpy as np
import pytest

import bcast
from bcast import BroadcastError
from bcast.frameworks import framework

UP_TO_4 = ("ADD", "SUB", "MUL", "DIV")

#: (op, shapes, output shape or the BroadcastError's kind)
CASES = [
    ("ADD", ((4, 1, 2), (5, 4, 3, 1)), (5, 4, 3, 2)),  # ANEURALNETWORKS_ADD's example
    ("POW", ((4, 1, 2), (5, 4, 3, 1)), (5, 4, 3, 2)),  # ANEURALNETWORKS_POW's example
    ("PRELU", ((4, 1, 2), (5, 4, 3, 1)), (5, 4, 3, 2)),  # PRELU's: alpha broadcasts both ways
    ("ADD", ((2, 3), (4,)), "dims"),
    ("ADD", ((0, 3), (1, 3)), (0, 3)),  # "Zero dimension is only compatible with 0 or 1"
    ("ADD", ((0, 3), (2, 3)), "dims"),
    ("ADD", ((1, 2, 3, 4, 5), (5,)), "rank"),  # "Supported tensor rank: up to 4"
    ("MUL", ((2, 2, 2, 2), (2,)), (2, 2, 2, 2)),
    ("MAXIMUM", ((1, 2, 3, 4, 5), (5,)), (1, 2, 3, 4, 5)),  # "from 1": no upper limit
    ("MAXIMUM", ((), (3,)), "rank"),  # ... and no rank 0
    ("LESS_EQUAL", ((2, 1), (1, 3)), (2, 3)),
    # SELECT: "input1: ... the same shape as input0", "input2: ... the same shape and type as input1", "from 1"
    ("SELECT", ((2, 3), (2, 3), (2, 3)), (2, 3)),
    ("SELECT", ((1, 2, 3, 4, 5), (1, 2, 3, 4, 5), (1, 2, 3, 4, 5)), (1, 2, 3, 4, 5)),  # no upper limit
    ("SELECT", ((0, 3), (0, 3), (0, 3)), (0, 3)),
    ("SELECT", ((2, 3), (2, 3), (2, 1)), "dims"),  # no broadcasting, not even a 1
    ("SELECT", ((2, 1), (2, 3), (2, 3)), "dims"),  # ... of the condition either
    ("SELECT", ((2, 3), (3,), (3,)), "rank"),
    ("SELECT", ((), (), ()), "rank"),  # "Supported tensor rank: from 1"
]


@pytest.mark.parametrize("op, shapes, expected", CASES)
def test_nnapi_cases(op, shapes, expected):
    if isinstance(expected, str):
        with pytest.raises(BroadcastError) as e:
            bcast.nnapi.plan(op, *shapes)
        assert e.value.kind == expected, e.value
    else:
        assert bcast.nnapi.plan(op, *shapes).shape == expected


def test_rank_limits_per_op():
    fw = framework("nnapi")
    for op in fw.ops():
        if op == "SELECT":
            continue
        p = fw.plan(op, (2, 3), (3,))
        assert p.rule == "numpy"
        assert dict(p.attrs).get("max_rank") == (4 if op in UP_TO_4 else None), op
    assert fw.plan("SELECT", (2, 3), (2, 3), (2, 3)).rule == "none"


def test_run_computes_under_the_plan():
    a = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(bcast.nnapi.run("SUB", a, np.ones(3)), a - 1)
    assert bcast.nnapi.run("PRELU", np.array([-2.0, 3.0]), np.array([[0.5], [2.0]])).tolist() == [[-1, 3], [-4, 3]]
    with pytest.raises(BroadcastError):
        bcast.nnapi.run("ADD", np.ones((1, 1, 1, 1, 2)), np.ones(2))
    # DIV of TENSOR_INT32 is floor division ("//" in Python: -5 // 2 = -3), of floats division
    got = bcast.nnapi.run("DIV", np.int32([5, -5]), np.int32([2]))
    assert got.dtype == np.int32 and got.tolist() == [2, -3]
    assert bcast.nnapi.run("DIV", np.float32([5, -5]), np.float32([2])).tolist() == [2.5, -2.5]
    cond = np.array([[True, False, True]])
    assert bcast.nnapi.run("SELECT", cond, np.float32([[1, 2, 3]]), np.float32([[7, 8, 9]])).tolist() == [[1, 8, 3]]
