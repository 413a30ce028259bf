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
        p = fw.plan(op, (2, 3), (3,))
        assert p.rule == "numpy"
        assert dict(p.attrs).get("max_rank") == (4 if op in UP_TO_4 else None), op


def test_run_computes_under_the_plan():
    a = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(bcast.nnapi.run("SUB", a, np.ones(3)), a - 1)
    assert bcast.nnapi.run("PRELU", np.array([-2.0, 3.0]), np.array([[0.5], [2.0]])).tolist() == [[-1, 3], [-4, 3]]
    with pytest.raises(BroadcastError):
        bcast.nnapi.run("ADD", np.ones((1, 1, 1, 1, 2)), np.ones(2))
