"""Each rule on a table of cases: corner cases from reference/*.md, with the
error fields checked, not just the exception type."""

import re

import numpy as np
import pytest

import bcast
from bcast import BroadcastError, InputError

OK, ERR = "ok", "err"


def e(rule, *shapes, **attrs):
    kw = "".join(f" {k}={v}" for k, v in attrs.items())
    return f"{rule}: {' '.join(bcast.format_shape(s) for s in shapes)}{kw}"


# (rule, shapes, attrs, expected shape | (error kind, from_right, dims) )
CASES = [
    # numpy: 0-size dims and rank 0 (numpy's own edge cases)
    ("numpy", [(0,), (1,)], {}, (0,)),
    ("numpy", [(0, 3), (1, 3)], {}, (0, 3)),
    ("numpy", [(2, 0), (1, 1)], {}, (2, 0)),
    ("numpy", [(0, 3), (2, 3)], {}, ("dims", -2, (0, 2))),
    ("numpy", [(0,), (5,)], {}, ("dims", -1, (0, 5))),
    ("numpy", [()], {}, ()),
    ("numpy", [(), ()], {}, ()),
    ("numpy", [(1, 3), (2, 1), (3,)], {}, (2, 3)),
    ("numpy", [(3, 1), (1, 4), (2, 1, 1)], {}, (2, 3, 4)),
    ("numpy", [(3, 1), (1, 4), (2, 1, 5)], {}, ("dims", -1, (4, 5))),
    ("numpy", [(2, 3), (3, 2)], {}, ("dims", -1, (3, 2))),
    # unidirectional
    ("unidirectional", [(0,), (1,)], {}, (0,)),
    ("unidirectional", [(1,), (0,)], {}, ("dims", -1, (1, 0))),
    ("unidirectional", [(3,), (1, 3)], {}, ("rank", None, None)),
    ("unidirectional", [(3, 1), (1, 4)], {}, ("dims", -1, (1, 4))),
    ("unidirectional", [(), ()], {}, ()),
    # none
    ("none", [(2, 3), (2, 3), (2, 3)], {}, (2, 3)),
    ("none", [(2, 3), (1, 3)], {}, ("dims", -2, (2, 1))),
    ("none", [(2, 3), (3,)], {}, ("rank", None, None)),
    # pdpd
    ("pdpd", [(2, 3, 4, 5), (3, 4, 1, 1)], {"axis": 1}, (2, 3, 4, 5)),
    ("pdpd", [(2, 3), (3, 1)], {"axis": 1}, (2, 3)),
    ("pdpd", [(2, 3), (3, 2)], {"axis": 1}, ("attribute", None, None)),
    ("pdpd", [(2, 3), (3,)], {"axis": -2}, ("attribute", None, None)),
    ("pdpd", [(2, 3), (2, 3, 4)], {}, ("rank", None, None)),
    ("pdpd", [(2, 1), (2, 3)], {}, ("dims", -1, (1, 3))),  # only B stretches
    ("pdpd", [(0, 3), (1, 3)], {}, (0, 3)),
    ("pdpd", [(2, 3), (1,)], {"axis": 2}, (2, 3)),  # B is all trailing 1s: fits at the end
    ("pdpd", [(2, 3), (1,)], {"axis": 3}, ("attribute", None, None)),
    # bidirectional (Expand): the output may exceed the target
    ("bidirectional", [(4,), (1,)], {}, (4,)),
    ("bidirectional", [(3, 4), ()], {}, (3, 4)),
    ("bidirectional", [(0,), (2, 1)], {}, (2, 0)),
    ("bidirectional", [(3,), (4,)], {}, ("dims", -1, (3, 4))),
    # explicit
    ("explicit", [(1,), (1, 16, 5, 5)], {"axes_mapping": [1]}, (1, 16, 5, 5)),
    ("explicit", [(1, 1), (3, 4)], {"axes_mapping": [0, 1]}, (3, 4)),
    ("explicit", [(), (3, 4)], {"axes_mapping": []}, (3, 4)),
    ("explicit", [(16,), (1, 16, 5, 5)], {"axes_mapping": [2]}, ("dims", -2, (16, 5))),
    ("explicit", [(3, 4), (2, 3, 4)], {"axes_mapping": [2, 1]}, ("attribute", None, None)),
    ("explicit", [(3, 3), (2, 3, 4)], {"axes_mapping": [1, 1]}, ("attribute", None, None)),
    ("explicit", [(3,), (2, 3)], {"axes_mapping": [2]}, ("attribute", None, None)),
    ("explicit", [(3,), (2, 3)], {"axes_mapping": [-1]}, ("attribute", None, None)),
    ("explicit", [(3,), (2, 3)], {"axes_mapping": [0, 1]}, ("attribute", None, None)),
    # ncnn
    ("ncnn", [(2, 2), (2,)], {}, (2, 2)),  # the tie goes to the inner-axis rule
    ("ncnn", [(2, 3, 4), (3,)], {}, ("dims", -1, (4, 3))),  # a 1-D B never lands on a middle axis
    ("ncnn", [(1, 3), (2, 1)], {}, (2, 3)),  # both sides stretch
    ("ncnn", [(4,), (4, 3, 2)], {}, (4, 3, 2)),  # A may be the lower-rank one
    ("ncnn", [(197, 768), (1, 197, 768)], {}, ("dims", -2, (768, 197))),  # ncnn#5673
    ("ncnn", [(1, 2, 3, 4, 5), (5,)], {}, ("unsupported", None, None)),
    ("ncnn", [(0, 3), (1, 3)], {}, ("unsupported", None, None)),
    ("ncnn", [(), ()], {}, ("unsupported", None, None)),
    ("ncnn", [(3, 2), ()], {}, (3, 2)),
    # onnx-legacy
    ("onnx-legacy", [(2, 3), (2, 3)], {}, (2, 3)),
    ("onnx-legacy", [(2, 3), (3,)], {}, ("rank", None, None)),  # broadcast=0 needs identical shapes
    ("onnx-legacy", [(2, 3, 4, 5), ()], {"broadcast": 1}, (2, 3, 4, 5)),
    ("onnx-legacy", [(2, 3, 4, 5), (1, 1)], {"broadcast": 1}, (2, 3, 4, 5)),
    ("onnx-legacy", [(2, 3, 4, 5), (5,)], {"broadcast": 1}, (2, 3, 4, 5)),
    ("onnx-legacy", [(2, 3, 4, 5), (4, 5)], {"broadcast": 1}, (2, 3, 4, 5)),
    ("onnx-legacy", [(2, 3, 4, 5), (3, 4)], {"broadcast": 1, "axis": 1}, (2, 3, 4, 5)),
    ("onnx-legacy", [(2, 3, 4, 5), (2,)], {"broadcast": 1, "axis": 0}, (2, 3, 4, 5)),
    ("onnx-legacy", [(2, 3, 4, 5), (1, 3, 4, 1)], {"broadcast": 1, "axis": 0}, (2, 3, 4, 5)),
    ("onnx-legacy", [(2, 3, 4, 5), (3, 1, 5)], {"broadcast": 1, "axis": 1}, ("dims", -2, (4, 1))),
    ("onnx-legacy", [(2, 3, 4, 5), (1, 5)], {"broadcast": 1}, (2, 3, 4, 5)),  # leading 1 ignored
    ("onnx-legacy", [(2, 3, 4, 5), (3, 4)], {"broadcast": 1, "axis": 3}, ("attribute", None, None)),
    ("onnx-legacy", [(5,), (2, 5)], {"broadcast": 1}, ("rank", None, None)),
    # paddle
    ("paddle", [(2, 3, 4, 5), (3, 4)], {"axis": 1}, (2, 3, 4, 5)),
    ("paddle", [(3, 4), (2, 3, 4, 5)], {"axis": 1}, (2, 3, 4, 5)),
    ("paddle", [(2, 3, 4, 5), (4, 5, 1)], {"axis": 2}, (2, 3, 4, 5)),  # trailing 1 overhangs: trimmed
    ("paddle", [(2, 3, 4, 5), (4, 5, 2)], {"axis": 2}, ("attribute", None, None)),
    ("paddle", [(2, 1), (1, 3)], {"axis": 0}, (2, 3)),
    ("paddle", [(2, 1), (1, 3)], {"axis": 1}, ("attribute", None, None)),
    ("paddle", [(2, 3), (2, 3)], {"axis": 7}, (2, 3)),  # equal shapes: axis is not looked at
    ("paddle", [(10, 20), (4, 10, 20)], {"axis": 1}, (4, 10, 20)),  # CINN PR #489's example works
    ("paddle", [(0, 3), (1, 3)], {}, (0, 3)),
    ("paddle", [(0, 3), (5, 3)], {}, ("dims", -2, (0, 5))),
    # openvino-select
    ("openvino-select", [(1, 3), (2, 1), (3,)], {}, (2, 3)),
    ("openvino-select", [(5,), (2, 3, 4, 5), (3, 4, 5)], {"auto_broadcast": "pdpd"}, (2, 3, 4, 5)),
    ("openvino-select", [(2, 3), (2, 3), (2, 3)], {"auto_broadcast": "none"}, (2, 3)),
    ("openvino-select", [(2, 3), (2, 3), (3,)], {"auto_broadcast": "none"}, ("rank", None, None)),
    ("openvino-select", [(2, 3), (1, 3), (2, 3)], {"auto_broadcast": "pdpd"}, ("dims", -2, (1, 2))),
    # openvino-prelu
    ("openvino-prelu", [(2, 3, 4, 5), (3,)], {}, (2, 3, 4, 5)),
    ("openvino-prelu", [(2, 3, 4, 5), (5,)], {}, (2, 3, 4, 5)),
    ("openvino-prelu", [(2, 3, 4, 5), (3, 1, 1)], {}, (2, 3, 4, 5)),
    ("openvino-prelu", [(2, 3, 4, 5), (2,)], {}, ("dims", -1, (5, 2))),
    # onnx-gemm
    ("onnx-gemm", [(3, 4), (4, 5)], {}, (3, 5)),
    ("onnx-gemm", [(4, 3), (5, 4)], {"transA": 1, "transB": 1}, (3, 5)),
    ("onnx-gemm", [(3, 4), (4, 5), (3, 1)], {}, (3, 5)),
    ("onnx-gemm", [(3, 4), (4, 5), ()], {}, (3, 5)),
    ("onnx-gemm", [(3, 4), (4, 5), (3,)], {}, ("dims", -1, (5, 3))),
    ("onnx-gemm", [(3, 4), (4, 5), (1, 1, 5)], {}, ("rank", None, None)),
    ("onnx-gemm", [(3, 4), (3, 5)], {}, ("dims", None, (4, 3))),
    ("onnx-gemm", [(4,), (4, 5)], {}, ("rank", None, None)),
    # openvino-broadcast-pdpd
    ("openvino-broadcast-pdpd", [(3, 1), (2, 3, 6)], {"axis": 1}, (2, 3, 6)),
    ("openvino-broadcast-pdpd", [(3,), (2, 3, 6)], {"axis": 1}, (2, 3, 6)),
    ("openvino-broadcast-pdpd", [(3, 1), (2, 1, 6)], {"axis": 1}, ("dims", -2, (3, 1))),
]


@pytest.mark.parametrize("rule, shapes, attrs, expected", CASES, ids=[e(r, *s, **a) for r, s, a, _ in CASES])
def test_case(rule, shapes, attrs, expected):
    if isinstance(expected, tuple) and expected and isinstance(expected[0], str):
        kind, from_right, dims = expected
        with pytest.raises(BroadcastError) as info:
            bcast.infer(*shapes, rule=rule, **attrs)
        err = info.value
        assert err.kind == kind, str(err)
        assert err.rule == rule
        assert err.shapes == tuple(tuple(s) for s in shapes)
        if kind == "dims":
            assert err.dims == dims, str(err)
            assert err.from_right == from_right, str(err)
        assert err.reason and err.reason in str(err)
    else:
        plan = bcast.infer(*shapes, rule=rule, **attrs)
        assert plan.shape == expected
        assert bcast.result_shape(*shapes, rule=rule, **attrs) == expected


def test_pdpd_default_axis_is_suffix():
    plan = bcast.infer((2, 3, 4, 5), (4, 5), rule="pdpd")
    assert plan.attr("axis") == -1 and plan.attr("start_axis") == 2
    assert plan.axis_maps[1] == (2, 3)


def test_pdpd_trailing_ones_are_dropped_not_placed():
    plan = bcast.infer((2, 3), (3, 1), rule="pdpd", axis=1)
    assert plan.axis_maps[1] == (1, None)
    assert plan.aligned_shape(1) == (1, 3)


def test_ncnn_alignment_cases():
    assert bcast.infer((4, 3, 2), (4,), rule="ncnn").aligned_shape(1) == (4, 1, 1)
    assert bcast.infer((4, 3, 2), (2,), rule="ncnn").aligned_shape(1) == (1, 1, 2)
    assert bcast.infer((4, 3, 2), (4, 3), rule="ncnn").aligned_shape(1) == (4, 3, 1)
    assert bcast.infer((4,), (4, 3, 2), rule="ncnn").aligned_shape(0) == (4, 1, 1)
    assert bcast.infer((2, 2), (2,), rule="ncnn").attr("alignment") == "inner axis"


def test_ncnn_refusal_says_ncnn_would_compute_garbage():
    with pytest.raises(BroadcastError) as info:
        bcast.infer((2, 3, 4), (3, 4), rule="ncnn")
    assert "garbage of shape (3,4,4)" in info.value.reason
    with pytest.raises(BroadcastError) as info:
        bcast.infer([4, 3, 2], [4, 3], rule="ncnn", ncnn_order=True)
    assert "[4,4,3]" in info.value.reason  # shown in the notation the user wrote


def test_prelu_per_channel_vs_onnx():
    ov = bcast.infer((1, 3, 2, 3), (3,), rule="openvino-prelu")
    onnx = bcast.infer((1, 3, 2, 3), (3,), rule="unidirectional")
    assert ov.aligned_shape(1) == (1, 3, 1, 1)
    assert onnx.aligned_shape(1) == (1, 1, 1, 3)


def test_gemm_maps_m_and_n():
    plan = bcast.infer((4, 3), (4, 5), (5,), rule="onnx-gemm", transA=True)
    assert plan.axis_maps == ((None, 0), (None, 1), (1,))


def test_stretched_axes():
    plan = bcast.infer((8, 1, 6, 1), (7, 1, 5))
    assert plan.stretched == ((1, 3), (1,))
    assert plan.new_axes(1) == (0,)


def test_plan_is_frozen_and_hashable():
    plan = bcast.infer((2, 3), (3,))
    assert hash(plan) == hash(bcast.infer((2, 3), (3,)))
    with pytest.raises(AttributeError):
        plan.shape = (1,)


def test_to_dict_is_json_ready():
    import json

    d = bcast.infer((2, 3), (3,)).to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["ok"] is True and d["shape"] == [2, 3] and d["error"] is None


def test_names_in_messages():
    with pytest.raises(BroadcastError) as info:
        bcast.infer((2, 3), (4,), names=["x", "bias"])
    assert str(info.value).startswith(
        "numpy: cannot broadcast x (2,3) with bias (4,): axis -1 (x axis 1, bias axis 0): 3 vs 4")


def test_design_message_format():
    with pytest.raises(BroadcastError) as info:
        bcast.infer((2, 3), (4,))
    assert str(info.value) == (
        "numpy: cannot broadcast A (2,3) with B (4,): axis -1 (A axis 1, B axis 0): 3 vs 4; "
        "dims must be equal or one of them 1"
    )
    assert isinstance(info.value, ValueError)


def test_error_pickles():
    import pickle

    with pytest.raises(BroadcastError) as info:
        bcast.infer((2, 3), (4,))
    again = pickle.loads(pickle.dumps(info.value))
    assert str(again) == str(info.value) and again.dims == (3, 4)


BAD = [
    ("numpy", [(2, -1)], {}),
    ("numpy", [(2, 2.0)], {}),
    ("numpy", [(2, True)], {}),
    ("numpy", [(2, "x y")], {}),
    ("numpy", [(1,) * 65], {}),
    ("numpy", [(2**63,)], {}),
    ("numpy", [None], {}),
    ("numpy", [{"a": 1}], {}),
    ("numpy", [(2, 3)], {"axis": 1}),
    ("nope", [(2, 3)], {}),
    (None, [(2, 3)], {}),
    ("pdpd", [(2, 3)], {}),
    ("pdpd", [(2, 3), (3,), (3,)], {}),
    ("pdpd", [(2, 3), (3,)], {"axis": "1"}),
    ("pdpd", [(2, 3), (3,)], {"axis": 1.0}),
    ("pdpd", [(2, 3), (3,)], {"axis": True}),
    ("explicit", [(3,), (2, 3)], {}),
    ("explicit", [(3,), (2, 3)], {"axes_mapping": "a,b"}),
    ("explicit", [(3,), (2, 3)], {"axes_mapping": [1.5]}),
    ("explicit", [(3,), (2, 3)], {"axes_mapping": object()}),
    ("onnx-legacy", [(2, 3), (3,)], {"broadcast": 2}),
    ("ncnn", [(2, 3), (3,)], {"ncnn_order": 2}),
    ("openvino-select", [(2,), (2,), (2,)], {"auto_broadcast": "bidirectional"}),
    ("onnx-gemm", [(3, 4)], {}),
    ("ncnn", [(2, 3), (3,)], {"ncnn_order": np.array([1, 0])}),
    ("pdpd", [(2, 3), (3,)], {"axis": np.array([1, 2])}),
    ("explicit", [(3,), (2, 3)], {"axes_mapping": np.array([[1]])}),
    ("numpy", [np.array([[2, 3]])], {}),
    ("numpy", [(2, np.array([2, 3]))], {}),
    ("openvino-select", [(2,), (2,), (2,)], {"auto_broadcast": np.zeros((3, 3))}),  # a one-line message
    ("onnx-legacy", [(2,), (2,)], {"axis": np.zeros((3, 3))}),
    (np.zeros((3, 3)), [(2,)], {}),
]


@pytest.mark.parametrize("rule, shapes, attrs", BAD,
                         ids=[re.sub(" at 0x[0-9a-f]+", "", f"{r} {s!r:.40} {a}") for r, s, a in BAD])  # stable ids
def test_bad_input_is_an_input_error(rule, shapes, attrs):
    with pytest.raises(InputError) as info:
        bcast.infer(*shapes, rule=rule, **attrs)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text, shape", [
    ("2,3,4", (2, 3, 4)), ("[2,3,4]", (2, 3, 4)), ("(2, 3, 4)", (2, 3, 4)), ("2x3x4", (2, 3, 4)),
    ("2X3", (2, 3)), (" 5 ", (5,)), ("5,", (5,)), ("[5]", (5,)), ("[]", ()), ("()", ()),
    ("scalar", ()), ("0,3", (0, 3)), ("0x10", (0, 10)), ("[ 2 , 3 ]", (2, 3)),
])
def test_parse_shape(text, shape):
    assert bcast.parse_shape(text) == shape


@pytest.mark.parametrize("text", [
    "", " ", "2,,3", ",", "2x", "2x ", "2,3x4", "[2,3", "2,3]", "[2,3)", "-1", "2,-3", "2.5", "a-b",
    "N+1,3", "??", "10..1", "..5", "1...", "[...]", "2xmax-1", "[[2]]", "２,3", "1e3", "+3", ",".join(["1"] * 65),
    "9" * 30,
])
def test_parse_shape_rejects(text):
    with pytest.raises(InputError) as info:
        bcast.parse_shape(text)
    assert "\n" not in str(info.value)


def test_ncnn_notation_names_axes_as_ncnn_does():
    with pytest.raises(BroadcastError) as info:
        bcast.infer([5, 3, 2], [3, 5], rule="ncnn", ncnn_order=True)
    err = info.value
    assert "A [5,3,2] with B [3,5]: axis c (A c, B h): 2 vs 5" in str(err)
    assert err.axes == (0, 0) and err.from_right == -3  # the fields stay in numpy order


def test_an_attribute_given_as_none_takes_its_default():
    assert bcast.infer((2, 3), (3,), rule="pdpd", axis=None).attr("start_axis") == 1
    assert bcast.infer((2, 3), (2, 3), rule="onnx-legacy", broadcast=None).attr("broadcast") == 0
    with pytest.raises(InputError):
        bcast.infer((3,), (2, 3), rule="explicit", axes_mapping=None)
