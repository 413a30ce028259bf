"""The spec-only frameworks (TensorRT, TOSA, WebNN, NNAPI) on random shapes from bcast.strategies: each op
table says what its specification says of every case numpy accepts or refuses (no runtime of theirs runs
here: these check the tables against the specifications' rules, not against an implementation)."""

import pytest

pytest.importorskip("hypothesis")

import bcast  # noqa: E402
from bcast import BroadcastError  # noqa: E402
from bcast.frameworks import framework, part  # noqa: E402
from bcast.testing.strategies import broadcastable, examples, not_broadcastable  # noqa: E402

SPEC_ONLY = ("tensorrt", "tosa", "webnn", "nnapi")
ACCEPTED = examples(broadcastable("numpy", num_shapes=2, min_side=0), 150, seed=19)
REFUSED = examples(not_broadcastable("numpy", num_shapes=2), 100, seed=19)


def _outcome(fw: str, op: str, shapes) -> tuple | str:
    try:
        return framework(fw).plan(op, *shapes).shape
    except BroadcastError as e:
        return e.kind


def _expected(fw: str, op: str, shapes, numpy: tuple | None) -> tuple | str:
    """What the framework's specification says of a case, from numpy's answer and the spec's extra rules."""
    ranks = [len(s) for s in shapes]
    has_zero = any(0 in s for s in shapes)
    equal_rank = len(set(ranks)) == 1
    if fw == "tensorrt" and op == "SUM" or fw == "tosa":
        if fw == "tosa" and has_zero:
            return "unsupported"
        if not equal_rank or max(ranks) > (8 if fw == "tensorrt" else 6):
            return "rank"
        return numpy if numpy is not None else "dims"
    if fw == "webnn" and has_zero:
        return "unsupported"
    if fw == "nnapi" and op == "MAXIMUM" and min(ranks) == 0:
        return "rank"
    return numpy if numpy is not None else "dims"


OPS = [("tensorrt", "SUM"), ("tensorrt", "onnx:Add"), ("tosa", "ADD"), ("webnn", "add"), ("nnapi", "ADD"),
       ("nnapi", "MAXIMUM")]


@pytest.mark.parametrize("fw, op", OPS)
def test_accepted_by_numpy(fw, op):
    for case in ACCEPTED:
        assert _outcome(fw, op, case.shapes) == _expected(fw, op, case.shapes, case.result), case.shapes


@pytest.mark.parametrize("fw, op", OPS)
def test_refused_by_numpy(fw, op):
    for case in REFUSED:
        got = _outcome(fw, op, case.shapes)
        assert isinstance(got, str), (case.shapes, got)  # what numpy refuses, no specification accepts
        assert got == _expected(fw, op, case.shapes, None) or (got, case.kind) == ("rank", "rank"), case.shapes


@pytest.mark.parametrize("fw", SPEC_ONLY)
def test_spec_only_frameworks_record_no_deviation(fw):
    """No runtime of theirs runs here, so no record (it would need a proof that runs it): no deviations
    module, no record in the registry, and none shown for their ops."""
    from bcast.frameworks.deviations import DEVIATIONS
    from bcast.views.comparison import compare_ops

    assert part(fw, "deviations") is None and not [d for d in DEVIATIONS if d.framework == fw]
    assert compare_ops(fw, (8, 1, 6, 1), (7, 1, 5))["deviations"] == []


@pytest.mark.parametrize("fw", SPEC_ONLY)
def test_public_module_is_the_op_table(fw):
    assert getattr(bcast, fw).plan is framework(fw).plan
