"""Every example and counter-example of the seed documents (the table in bcast.testing.seeds)."""

import pytest

import bcast
from bcast.testing.seeds import NCNN, ONNX, OPENVINO


def _id(source, rule, shapes, attrs, expected):
    kw = "".join(f" {k}={v}" for k, v in attrs.items())
    return f"{source}: {rule} {' '.join(bcast.format_shape(s) for s in shapes)}{kw}"


ROWS = ONNX + OPENVINO


@pytest.mark.parametrize("source, rule, shapes, attrs, expected", ROWS, ids=[_id(*r) for r in ROWS])
def test_seed_example(source, rule, shapes, attrs, expected):
    if expected is None:
        with pytest.raises(bcast.BroadcastError) as info:
            bcast.infer(*shapes, rule=rule, **attrs)
        assert info.value.rule == rule
        assert info.value.shapes == tuple(shapes)
    else:
        assert bcast.result_shape(*shapes, rule=rule, **attrs) == expected
        assert bcast.infer(*shapes, rule=rule, **attrs).shape == expected


def test_multidirectional_examples_are_numpy():
    # "Multidirectional broadcasting is the same as Numpy's broadcasting"
    np = pytest.importorskip("numpy")
    for _source, rule, shapes, _attrs, expected in ONNX:
        if rule == "numpy":
            assert np.broadcast_shapes(*shapes) == expected


def test_openvino_leftmost_mismatch_is_reported_on_the_leftmost_axis():
    # "broadcast won't happen due to dimensions mismatch on the leftmost axis"
    with pytest.raises(bcast.BroadcastError) as info:
        bcast.infer((3, 1, 5), (4, 4, 5))
    assert info.value.from_right == -3
    assert info.value.dims == (3, 4)


def test_pdpd_only_b_to_a():
    # OpenVINO's doc: A(8,1,6,1), B(7,1,5), axis=1: "only B to A broadcast is supported for PDPD"
    with pytest.raises(bcast.BroadcastError) as info:
        bcast.infer((8, 1, 6, 1), (7, 1, 5), rule="pdpd", axis=1)
    assert info.value.dims == (1, 5)  # the rightmost conflict: A's 1 cannot stretch to B's 5
    assert "into A only" in info.value.reason


NCNN_IDS = [f"{src}: {a} {b}" for src, a, b, c in NCNN]


@pytest.mark.parametrize("source, a, b, c", NCNN, ids=NCNN_IDS)
def test_ncnn_table_in_ncnn_order(source, a, b, c):
    assert bcast.result_shape(a, b, rule="ncnn", ncnn_order=True) == tuple(c)
    # the rule is symmetric: B op A has the same shape
    assert bcast.result_shape(b, a, rule="ncnn", ncnn_order=True) == tuple(c)


@pytest.mark.parametrize("source, a, b, c", NCNN, ids=NCNN_IDS)
def test_ncnn_table_in_numpy_order(source, a, b, c):
    plan = bcast.infer(tuple(a[::-1]), tuple(b[::-1]), rule="ncnn")
    assert plan.shape == tuple(c[::-1])
    aligned = plan.aligned_shape(1)
    nb = tuple(b[::-1])
    if source == "ncnn implicit inner axis" or source == "ncnn tie":
        # B lands on A's leading numpy axes, padded with 1s on the right ("opposite of numpy")
        assert aligned == nb + (1,) * (len(a) - len(b))
    elif source == "ncnn implicit outer axis":
        # numpy-like right alignment
        assert aligned == (1,) * (len(a) - len(b)) + nb
    elif b:
        assert aligned == (1,) * (len(a) - len(b)) + nb or set(nb) == {1}


def test_ncnn_inner_axis_is_not_numpy():
    # "It broadcasts in the opposite direction of the numpy's implicit broadcasting behavior."
    with pytest.raises(bcast.BroadcastError):
        bcast.infer((4, 3, 2), (4, 3))  # numpy refuses what ncnn accepts
    assert bcast.result_shape((4, 3, 2), (4, 3), rule="ncnn") == (4, 3, 2)
