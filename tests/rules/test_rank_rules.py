"""The ``equal-rank`` rule and the ``max_rank`` attribute (a framework's rank limit on ``numpy`` and
``equal-rank``): a data table of cases, then what the attribute changes and what it does not."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bcast import BroadcastError, InputError, infer, result_shape

# rule, shapes, attrs, the output shape or the error's kind
CASES = [
    ("equal-rank", ((8, 1, 6), (1, 7, 6)), {}, (8, 7, 6)),
    ("equal-rank", ((2, 3), (2, 3), (1, 3)), {}, (2, 3)),
    ("equal-rank", ((5,),), {}, (5,)),
    ("equal-rank", ((), ()), {}, ()),
    ("equal-rank", ((0, 1), (1, 4)), {}, (0, 4)),
    ("equal-rank", ((8, 1, 6), (7, 6)), {}, "rank"),  # numpy would broadcast: no rank broadcasting here
    ("equal-rank", ((3,), ()), {}, "rank"),  # not even a scalar
    ("equal-rank", ((2, 3), (2, 4)), {}, "dims"),
    ("equal-rank", ((0, 3), (2, 3)), {}, "dims"),
    ("equal-rank", ((1,) * 8, (1,) * 8), {"max_rank": 8}, (1,) * 8),  # TensorRT's Dims::MAX_DIMS
    ("equal-rank", ((1,) * 7, (1,) * 7), {"max_rank": 6}, "rank"),
    ("numpy", ((1, 2, 3, 4, 5, 6), (6,)), {"max_rank": 6}, (1, 2, 3, 4, 5, 6)),
    ("numpy", ((1, 2, 3, 4, 5, 6), (6,)), {"max_rank": 5}, "rank"),
    ("numpy", ((6,), (1, 2, 3, 4, 5, 6)), {"max_rank": 5}, "rank"),  # whichever input is too long
    ("numpy", ((2, 3), (4,)), {"max_rank": 2}, "dims"),
    ("numpy", ((), ()), {"max_rank": 0}, ()),
]


@pytest.mark.parametrize("rule, shapes, attrs, expected", CASES)
def test_case(rule, shapes, attrs, expected):
    if isinstance(expected, tuple):
        assert result_shape(*shapes, rule=rule, **attrs) == expected
        assert np.broadcast_shapes(*shapes) == expected  # both rules agree with numpy where they accept
    else:
        with pytest.raises(BroadcastError) as e:
            infer(*shapes, rule=rule, **attrs)
        assert e.value.kind == expected


def test_rank_messages_name_the_input_and_the_limit():
    with pytest.raises(BroadcastError, match=r"B has rank 3, more than max_rank 2 \(the most dims allowed here\)"):
        infer((2, 3), (1, 2, 3), max_rank=2)
    with pytest.raises(BroadcastError, match=r"A has rank 3, B rank 2"):
        infer((8, 1, 6), (7, 6), rule="equal-rank")


def test_max_rank_unset_leaves_numpy_plans_as_they_were():
    plan = infer((2, 3), (3,))
    assert plan.attrs == () and json.loads(json.dumps(plan.to_dict()))["attrs"] == {}
    assert infer((2, 3), (3,), max_rank=4).attr("max_rank") == 4


@pytest.mark.parametrize("value", [-1, "x", 1.5, True])
def test_bad_max_rank_is_an_input_error(value):
    with pytest.raises(InputError, match="max_rank"):
        infer((2, 3), (3,), max_rank=value)


def test_strategies_draw_within_max_rank():
    hypothesis = pytest.importorskip("hypothesis")
    from bcast.strategies import broadcastable, not_broadcastable

    @hypothesis.settings(max_examples=40, deadline=None, database=None)
    @hypothesis.given(broadcastable("numpy", max_rank=3), broadcastable("equal-rank"), not_broadcastable("equal-rank"))
    def check(ok, same_rank, bad):
        assert all(len(s) <= 3 for s in ok.shapes)
        assert len({len(s) for s in same_rank.shapes}) == 1
        with pytest.raises(BroadcastError):
            infer(*bad.shapes, rule="equal-rank", **bad.attrs)

    check()
