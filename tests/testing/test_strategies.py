"""bcast.testing.strategies: every case drawn is what it claims, every rule's features are drawn,
failures shrink to small shapes, bad arguments are refused clearly."""

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis.errors import InvalidArgument

import bcast
from bcast.testing.strategies import broadcastable, examples, not_broadcastable

RULES = list(bcast.RULES)
FAST = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

#: Bounds and fixed attributes the strategies must honour, per rule (besides the defaults).
VARIANTS = [
    dict(min_side=0),
    dict(min_side=2, max_side=3),
    dict(min_dims=1, max_dims=2),
    dict(min_dims=2, max_dims=6, max_side=2),
]
FIXED = [
    ("numpy", dict(num_shapes=3)), ("numpy", dict(num_shapes=1)), ("none", dict(num_shapes=4)),
    ("pdpd", dict(axis=1)), ("pdpd", dict(axis=-1)), ("pdpd", dict(axis=0, min_side=2)),
    ("openvino-broadcast-pdpd", dict(axis=2)), ("explicit", dict(axes_mapping=[1, 3])),
    ("explicit", dict(axes_mapping=[])), ("ncnn", dict(ncnn_order=True)), ("ncnn", dict(max_dims=6, min_side=0)),
    ("onnx-legacy", dict(broadcast=0)), ("onnx-legacy", dict(broadcast=1, axis=1)),
    ("onnx-legacy", dict(broadcast=1, axis=-1)), ("paddle", dict(axis=1)), ("paddle", dict(axis=-2)),
    ("paddle", dict(axis=0, min_side=2)), ("openvino-select", dict(auto_broadcast="pdpd", axis=1)),
    ("openvino-select", dict(auto_broadcast="none")), ("onnx-gemm", dict(num_shapes=2, transA=1)),
    ("openvino-prelu", dict(min_dims=2)),
]
CALLS = [(rule, kw) for rule in RULES for kw in VARIANTS] + FIXED


def _id(rule, kw):
    return f"{rule}({', '.join(f'{k}={v!r}' for k, v in kw.items())})"


def _within(case, kw):
    shapes = [s[::-1] for s in case.shapes] if case.attrs.get("ncnn_order") else case.shapes
    lo = max(kw.get("min_side", 1), 1 if case.rule == "ncnn" else 0)
    for s in shapes:
        assert kw.get("min_dims", 0) <= len(s) <= kw.get("max_dims", 4) or case.rule == "onnx-gemm"
        assert all(lo <= d <= kw.get("max_side", 5) for d in s), (case, kw)


@pytest.mark.parametrize("rule, kw", CALLS, ids=[_id(*c) for c in CALLS])
def test_broadcastable_cases_broadcast(rule, kw):
    kw = dict(kw)
    fixed = {k: kw[k] for k in list(kw) if k not in ("num_shapes", "min_dims", "max_dims", "min_side", "max_side")}
    for case in examples(broadcastable(rule, **kw), 15, seed=3):
        assert bcast.result_shape(*case.shapes, rule=rule, **case.attrs) == case.result
        assert bcast.infer(*case.shapes, rule=rule, **case.attrs).shape == case.plan.shape
        assert all(case.attrs[k] == v or list(case.attrs[k]) == list(v) for k, v in fixed.items())
        if "num_shapes" in kw:
            assert len(case.shapes) == kw["num_shapes"]
        _within(case, kw)


@pytest.mark.parametrize("rule, kw", CALLS, ids=[_id(*c) for c in CALLS])
def test_not_broadcastable_cases_refuse(rule, kw):
    try:
        strategy = not_broadcastable(rule, **kw)
    except InvalidArgument as e:  # numpy with one shape, and the like
        assert "no way of refusing applies" in str(e)
        return
    for case in examples(strategy, 15, seed=3):
        with pytest.raises(bcast.BroadcastError) as info:
            bcast.infer(*case.shapes, rule=rule, **case.attrs)
        assert info.value.reason == case.reason and info.value.kind == case.kind
        for k, v in kw.items():
            if k in case.attrs:
                assert case.attrs[k] == v or list(case.attrs[k]) == list(v)


@FAST
@given(broadcastable("numpy", num_shapes=3))
def test_given_works_with_the_strategy(case):
    np = pytest.importorskip("numpy")
    assert np.broadcast_shapes(*case.shapes) == case.result


# -- each rule's features are drawn ----------------------------------------------------------------


def _stretched(c, i=None):
    return any(c.plan.stretched[j] for j in (range(len(c.shapes)) if i is None else [i]))


def _ncnn_numpy(c):
    return c.plan.inputs


FEATURES = {
    "numpy": {
        "mixed ranks": lambda c: len({len(s) for s in c.shapes}) > 1,
        "A stretched": lambda c: _stretched(c, 0), "B stretched": lambda c: _stretched(c, 1),
        "both stretched": lambda c: _stretched(c, 0) and _stretched(c, 1), "scalar": lambda c: () in c.shapes,
    },
    "unidirectional": {"B stretched": _stretched, "B lower rank": lambda c: len(c.shapes[1]) < len(c.shapes[0])},
    "none": {"rank 3+": lambda c: len(c.result) >= 3},
    "equal-rank": {"A stretched": lambda c: _stretched(c, 0), "B stretched": lambda c: _stretched(c, 1),
                   "both stretched": lambda c: _stretched(c, 0) and _stretched(c, 1),
                   "rank 3+": lambda c: len(c.result) >= 3},
    "pdpd": {
        "trailing 1s ignored": lambda c: None in c.plan.axis_maps[1],
        "axis -1": lambda c: c.attrs["axis"] == -1, "explicit axis, not suffix": lambda c: c.attrs["axis"] >= 0
        and c.attrs["axis"] != len(c.shapes[0]) - len(c.shapes[1]),
        "B stretched": _stretched,
    },
    "bidirectional": {"target smaller": lambda c: c.result != c.shapes[1],
                      "data stretched": lambda c: _stretched(c, 0)},
    "explicit": {
        "not right-aligned": lambda c: list(c.attrs["axes_mapping"])
        != list(range(len(c.shapes[1]) - len(c.shapes[0]), len(c.shapes[1]))),
        "scalar data": lambda c: c.shapes[0] == (), "stretched": _stretched,
    },
    "ncnn": {
        **{a: (lambda want: lambda c: c.plan.attr("alignment") == want)(a)
           for a in ("same rank", "scalar", "inner axis", "outer axis", "inner axes")},
        "the tie": lambda c: c.plan.attr("alignment") == "inner axis" and len(c.result) >= 2
        and c.plan.shape[0] == c.plan.shape[-1] != 1,
        "ncnn order": lambda c: c.attrs["ncnn_order"],
        "lower rank first": lambda c: len(c.shapes[0]) < len(c.shapes[1]),
        "stretched": _stretched,
    },
    "onnx-legacy": {
        "broadcast=0": lambda c: c.attrs["broadcast"] == 0,
        "scalar-like B": lambda c: c.attrs["broadcast"] and c.shapes[1] and set(c.shapes[1]) == {1},
        "leading 1s": lambda c: c.attrs["broadcast"] and len(c.shapes[1]) > 1 and c.shapes[1][0] == 1
        and set(c.shapes[1]) != {1} and c.shapes[0][c.plan.attr("start_axis")] != 1,
        "trailing 1s": lambda c: c.attrs["broadcast"] and len(c.shapes[1]) > 1 and c.shapes[1][-1] == 1
        and set(c.shapes[1]) != {1} and c.shapes[0][c.plan.attr("start_axis") + len(c.shapes[1]) - 1] != 1,
        "explicit axis": lambda c: c.attrs["broadcast"] and c.attrs["axis"] not in (None, -1),
        "axis unset": lambda c: c.attrs["broadcast"] and c.attrs["axis"] is None,
    },
    "paddle": {
        "A smaller": lambda c: len(c.shapes[0]) < len(c.shapes[1]),
        "trailing 1s trimmed": lambda c: any(None in m for m in c.plan.axis_maps),
        "negative axis": lambda c: c.attrs["axis"] < -1, "equal shapes": lambda c: c.shapes[0] == c.shapes[1],
        "both stretched": lambda c: _stretched(c, 0) and _stretched(c, 1),
    },
    "openvino-select": {
        **{m: (lambda want: lambda c: c.attrs["auto_broadcast"] == want)(m) for m in ("numpy", "pdpd", "none")},
        "pdpd explicit axis": lambda c: c.attrs["auto_broadcast"] == "pdpd" and c.attrs["axis"] >= 0,
    },
    "openvino-prelu": {
        "per channel": lambda c: c.plan.attr("alignment") == "per channel",
        "numpy": lambda c: c.plan.attr("alignment") == "numpy" and len(c.shapes[1]) >= 1,
    },
    "onnx-gemm": {
        "transA": lambda c: c.attrs["transA"], "transB": lambda c: c.attrs["transB"],
        **{f"C rank {r}": (lambda rank: lambda c: len(c.shapes[2]) == rank)(r) for r in (0, 1, 2)},
        "C stretched": lambda c: _stretched(c, 2),
    },
    "openvino-broadcast-pdpd": {
        "trailing 1s ignored": lambda c: None in c.plan.axis_maps[0], "stretched": _stretched,
    },
}
assert set(FEATURES) == set(RULES)


@pytest.mark.parametrize("rule", RULES)
def test_every_feature_is_drawn(rule):
    cases = examples(broadcastable(rule), 120, seed=7)
    missing = [name for name, seen in FEATURES[rule].items() if not any(seen(c) for c in cases)]
    assert not missing, f"{rule}: never drawn in 120 cases: {missing}"


#: The kinds of refusal each rule's not_broadcastable draws (with max_dims=5 and min_side=0 for ncnn).
KINDS = {
    "numpy": {"dims"}, "unidirectional": {"dims", "rank"}, "none": {"dims", "rank"}, "equal-rank": {"dims", "rank"},
    "pdpd": {"dims", "rank", "attribute"}, "bidirectional": {"dims"}, "explicit": {"dims", "attribute"},
    "ncnn": {"dims", "unsupported"}, "onnx-legacy": {"dims", "rank", "attribute"}, "paddle": {"dims", "attribute"},
    "openvino-select": {"dims", "attribute"}, "openvino-prelu": {"dims", "rank"}, "onnx-gemm": {"dims", "rank"},
    "openvino-broadcast-pdpd": {"dims", "rank", "attribute"},
}


@pytest.mark.parametrize("rule", RULES)
def test_every_way_of_refusing_is_drawn(rule):
    kw = dict(max_dims=5, min_side=0) if rule == "ncnn" else {}
    cases = examples(not_broadcastable(rule, **kw), 100, seed=7)
    assert {c.kind for c in cases} == KINDS[rule]
    if rule == "ncnn":  # rank 5, two scalars, an empty blob; and pairs numpy accepts but ncnn does not
        reasons = " ".join(c.reason for c in cases)
        assert "rank 5" in reasons and "both inputs are scalars" in reasons and "0-size" in reasons
        assert any(c.kind == "dims" and isinstance(bcast.compare(*c.shapes)["rules"][0]["shape"], list)
                   for c in cases)
    if rule in ("unidirectional", "pdpd"):  # A's 1 does not stretch to B's dim: only B to A
        assert any(c.kind == "dims" and c.error.dims[0] == 1 for c in cases)


# -- shrinking ---------------------------------------------------------------------------------------


def test_shrinks_to_small_shapes():
    case = find(broadcastable("numpy", num_shapes=3), lambda c: any(c.plan.stretched) and len(c.result) >= 2,
                settings=settings(database=None, max_examples=500))
    assert sum(len(s) for s in case.shapes) <= 4 and max(d for s in case.shapes for d in s) <= 2


def test_shrinks_the_ncnn_tie():
    case = find(broadcastable("ncnn", ncnn_order=False),
                lambda c: c.plan.attr("alignment") == "inner axis" and c.plan.shape[0] == c.plan.shape[-1] != 1
                and len(c.result) >= 2, settings=settings(database=None, max_examples=1000))
    assert sorted(case.shapes, key=len) == [(2,), (2, 2)]


def test_shrinks_a_refusal():
    case = find(not_broadcastable("numpy"), lambda c: True, settings=settings(database=None))
    assert sorted(case.shapes) == [(0,), (2,)] or sorted(case.shapes) == [(2,), (3,)]


def test_shrinks_a_pdpd_refusal_to_the_one_way_rule():
    case = find(not_broadcastable("pdpd"), lambda c: c.kind == "dims", settings=settings(database=None))
    assert len(case.shapes[0]) == 1 and max(case.shapes[0] + case.shapes[1]) <= 3


# -- bad arguments -----------------------------------------------------------------------------------


def e(rule, match, **kw):
    return pytest.param(rule, kw, match, id=_id(rule, kw))


BAD = [
    e("nope", "unknown rule 'nope'"),
    e("pdpd", "pdpd takes 2 shapes", num_shapes=3),
    e("numpy", "num_shapes=0 must be at least 1", num_shapes=0),
    e("numpy", "num_shapes=2.0 must be an integer", num_shapes=2.0),
    e("numpy", "min_dims=3 is larger than max_dims=2", min_dims=3, max_dims=2),
    e("numpy", "min_side=4 is larger than max_side=3", min_side=4, max_side=3),
    e("numpy", "max_dims=65", max_dims=65),
    e("numpy", "min_side=-1 must be at least 0", min_side=-1),
    e("numpy", "numpy has no attribute 'axis'", axis=1),
    e("pdpd", "attribute axis must be an integer", axis="1"),
    e("pdpd", "pdpd's axis is -1 or an axis of A", axis=-2),
    e("pdpd", "B must fit A from axis 5", axis=5, min_side=2),
    e("explicit", "strictly increasing", axes_mapping=[2, 1]),
    e("explicit", "an axis for each", axes_mapping=[0, 4]),
    e("ncnn", "rank 1 to 4", min_dims=5, max_dims=6),
    e("ncnn", "its dims are at least 1", min_side=0, max_side=0),
    e("onnx-gemm", "A and B have rank 2", min_dims=3),
    e("paddle", "axis must be in", axis=4),
]


@pytest.mark.parametrize("rule, kw, match", BAD)
def test_bad_arguments(rule, kw, match):
    with pytest.raises(InvalidArgument, match=match.replace("(", r"\(").replace("[", r"\[")):
        broadcastable(rule, **kw)


@pytest.mark.parametrize("rule, kw", [("numpy", dict(num_shapes=1)), ("none", dict(num_shapes=1)),
                                      ("numpy", dict(max_dims=0)), ("numpy", dict(max_side=2))])
def test_no_way_of_refusing(rule, kw):
    with pytest.raises(InvalidArgument, match="no way of refusing applies"):
        not_broadcastable(rule, **kw)


def test_without_hypothesis_the_import_error_names_the_extra():
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "try:\n import bcast.testing.strategies\nexcept ImportError as e:\n print(e)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "pip install 'bcast[hypothesis]'" in r.stdout, r.stderr
