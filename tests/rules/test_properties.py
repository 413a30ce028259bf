"""Properties: numpy against np.broadcast_shapes, Plan invariants for every
rule, error fields that are true, and no exception but ours on any input."""

import pytest

hypothesis = pytest.importorskip("hypothesis")
np = pytest.importorskip("numpy")

from hypothesis import HealthCheck, assume, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import mutually_broadcastable_shapes  # noqa: E402

import bcast  # noqa: E402
from bcast import BroadcastError, InputError  # noqa: E402

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

shapes_st = st.lists(st.integers(0, 4), min_size=0, max_size=5).map(tuple)


def _numpy_or_error(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


@SETTINGS
@given(mutually_broadcastable_shapes(num_shapes=2, min_side=0, max_dims=5))
def test_numpy_matches_broadcast_shapes(case):
    shapes = case.input_shapes
    assert bcast.result_shape(*shapes) == case.result_shape
    assert bcast.infer(*shapes).shape == case.result_shape


@SETTINGS
@given(st.integers(1, 4).flatmap(lambda n: mutually_broadcastable_shapes(num_shapes=n, min_side=0, max_dims=6)))
def test_numpy_matches_for_any_number_of_inputs(case):
    assert bcast.result_shape(*case.input_shapes) == case.result_shape


@SETTINGS
@given(st.lists(shapes_st, min_size=1, max_size=4))
@example([(0,), (1,)])
@example([(0,), (5,)])
@example([(), ()])
def test_numpy_refuses_exactly_when_numpy_does(shapes):
    expected = _numpy_or_error(*shapes)
    try:
        got = bcast.result_shape(*shapes)
    except BroadcastError as err:
        assert expected is None, err
        _check_error_is_true(err, shapes)
    else:
        assert got == expected


@SETTINGS
@given(shapes_st, shapes_st)
def test_fast_path_equals_full_path(a, b):
    try:
        fast = bcast.result_shape(a, b)
    except BroadcastError as err:
        with pytest.raises(BroadcastError) as again:
            bcast.infer(a, b)
        assert str(again.value) == str(err)
    else:
        assert fast == bcast.infer(a, b).shape


def _check_error_is_true(err, shapes):
    """The named shapes are the inputs; the named dims really conflict."""
    assert err.shapes == tuple(tuple(s) for s in shapes)
    assert set(err.operands) <= set(range(len(shapes)))
    if err.kind == "dims" and err.axes is not None:
        (i, j), (ai, aj) = err.operands, err.axes
        assert i != j
        assert err.shapes[i][ai] == err.dims[0]
        assert err.shapes[j][aj] == err.dims[1]
        assert err.dims[0] != err.dims[1]
        if err.alignment is not None:
            ax = err.out_rank + err.from_right
            assert err.alignment[i][ai] == ax and err.alignment[j][aj] == ax
    assert str(err).startswith(f"{err.rule}: cannot broadcast ")


ALL_RULE_CASES = {
    "numpy": lambda: st.lists(shapes_st, min_size=1, max_size=3).map(lambda s: (s, {})),
    "none": lambda: st.lists(shapes_st, min_size=1, max_size=3).map(lambda s: (s, {})),
    "equal-rank": lambda: st.tuples(st.lists(shapes_st, min_size=1, max_size=3), st.one_of(st.none(), st.integers(0, 4))
                                    ).map(lambda s: (s[0], {"max_rank": s[1]})),
    "unidirectional": lambda: st.tuples(shapes_st, shapes_st).map(lambda s: (list(s), {})),
    "bidirectional": lambda: st.tuples(shapes_st, shapes_st).map(lambda s: (list(s), {})),
    "pdpd": lambda: st.tuples(shapes_st, shapes_st, st.integers(-2, 5)).map(lambda s: ([s[0], s[1]], {"axis": s[2]})),
    "paddle": lambda: st.tuples(shapes_st, shapes_st, st.integers(-6, 6)).map(lambda s: ([s[0], s[1]], {"axis": s[2]})),
    "explicit": lambda: st.tuples(shapes_st, shapes_st, st.lists(st.integers(-1, 5), max_size=5)).map(
        lambda s: ([s[0], s[1]], {"axes_mapping": s[2]})),
    "ncnn": lambda: st.tuples(shapes_st, shapes_st, st.booleans()).map(lambda s: ([s[0], s[1]], {"ncnn_order": s[2]})),
    "onnx-legacy": lambda: st.tuples(shapes_st, shapes_st, st.sampled_from([0, 1]),
                                     st.one_of(st.none(), st.integers(-2, 5))).map(
        lambda s: ([s[0], s[1]], {"broadcast": s[2], "axis": s[3]})),
    "openvino-select": lambda: st.tuples(shapes_st, shapes_st, shapes_st, st.sampled_from(["numpy", "pdpd", "none"]),
                                         st.integers(-1, 3)).map(
        lambda s: ([s[0], s[1], s[2]], {"auto_broadcast": s[3], "axis": s[4]})),
    "openvino-prelu": lambda: st.tuples(shapes_st, shapes_st).map(lambda s: (list(s), {})),
    "onnx-gemm": lambda: st.tuples(shapes_st, shapes_st, st.lists(shapes_st, max_size=1), st.booleans(),
                                   st.booleans()).map(
        lambda s: ([s[0], s[1], *s[2]], {"transA": s[3], "transB": s[4]})),
    "openvino-broadcast-pdpd": lambda: st.tuples(shapes_st, shapes_st, st.integers(-2, 5)).map(
        lambda s: ([s[0], s[1]], {"axis": s[2]})),
}


def test_every_rule_has_a_property_strategy():
    assert set(ALL_RULE_CASES) == set(bcast.RULES)


@pytest.mark.parametrize("rule", sorted(ALL_RULE_CASES))
def test_plan_invariants(rule):
    @settings(max_examples=150, deadline=None)
    @given(ALL_RULE_CASES[rule]())
    def check(case):
        shapes, attrs = case
        try:
            plan = bcast.infer(*shapes, rule=rule, **attrs)
        except BroadcastError as err:
            order = [s[::-1] for s in err.shapes] if attrs.get("ncnn_order") else err.shapes
            assert [tuple(s) for s in order] == [tuple(s) for s in shapes]
            _check_error_is_true(err, [s[::-1] for s in shapes] if attrs.get("ncnn_order") else shapes)
            return
        out = plan.shape
        for i, (shape, amap) in enumerate(zip(plan.inputs, plan.axis_maps)):
            assert len(amap) == len(shape)
            placed = [ax for ax in amap if ax is not None]
            assert placed == sorted(set(placed)), "mapped axes strictly increase"
            for k, ax in enumerate(amap):
                if ax is None:  # dropped size-1 axis, or Gemm's contracted K
                    assert rule == "onnx-gemm" or shape[k] == 1
                    continue
                assert shape[k] == out[ax] or shape[k] == 1
                assert (k in plan.stretched[i]) == (shape[k] != out[ax])
        if rule == "onnx-gemm":
            return
        # running the plan: every input views as the output shape, zero-copy
        for i in range(len(plan.inputs)):
            x = np.zeros(plan.inputs[i], dtype=np.int8)
            view = np.broadcast_to(x.reshape(plan.aligned_shape(i)), out)
            assert view.shape == out
        if rule in ("unidirectional", "pdpd", "onnx-legacy", "openvino-prelu"):
            assert out == plan.inputs[0]
        if rule in ("explicit", "openvino-broadcast-pdpd"):
            assert out == plan.inputs[1]
        if rule in ("numpy", "bidirectional", "unidirectional", "none"):
            assert out == np.broadcast_shapes(*plan.inputs)

    check()


@SETTINGS
@given(shapes_st, shapes_st)
def test_unidirectional_implies_numpy_gives_a(a, b):
    try:
        out = bcast.result_shape(a, b, rule="unidirectional")
    except BroadcastError:
        return
    assert out == a == bcast.result_shape(a, b)


@SETTINGS
@given(shapes_st, shapes_st)
def test_ncnn_is_symmetric(a, b):
    assume(len(a) <= 4 and len(b) <= 4)
    try:
        ab = bcast.result_shape(a, b, rule="ncnn")
    except BroadcastError:
        with pytest.raises(BroadcastError):
            bcast.result_shape(b, a, rule="ncnn")
        return
    assert bcast.result_shape(b, a, rule="ncnn") == ab


same_rank_pairs = st.integers(1, 4).flatmap(
    lambda r: st.tuples(*[st.lists(st.integers(1, 4), min_size=r, max_size=r).map(tuple)] * 2)
)


@SETTINGS
@given(same_rank_pairs)
def test_ncnn_same_rank_is_numpy(pair):
    a, b = pair
    assert _ncnn(a, b) == _numpy_or_error(a, b)


def _ncnn(a, b):
    try:
        return bcast.result_shape(a, b, rule="ncnn")
    except BroadcastError:
        return None


junk = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 2**64), st.floats(allow_nan=True), st.text(max_size=12),
    st.lists(st.one_of(st.integers(-3, 2**64), st.floats(), st.text(max_size=3), st.none()), max_size=6),
    st.tuples(st.integers(-2, 9), st.integers(-2, 9)),
    st.lists(st.integers(-2, 5), max_size=3).map(np.array),
    st.lists(st.lists(st.integers(0, 3), min_size=2, max_size=2), max_size=2).map(np.array),
    st.integers(-2, 5).map(np.int64),
)


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(st.sampled_from(sorted(bcast.RULES)), st.text(max_size=8), st.none(), st.integers()),
    st.lists(st.one_of(shapes_st, junk), max_size=4),
    st.dictionaries(
        st.sampled_from(["axis", "axes_mapping", "broadcast", "ncnn_order", "auto_broadcast", "transA", "transB",
                         "bogus"]),
        junk, max_size=3,
    ),
)
def test_only_our_errors_escape(rule, shapes, attrs):
    try:
        plan = bcast.infer(*shapes, rule=rule, **attrs)
    except (BroadcastError, InputError) as err:
        assert "\n" not in str(err)
        return
    plan.explain()
    plan.to_dict()


cli_token = st.one_of(
    st.sampled_from(["shape", "explain", "compare", "rules", "deviations", "--json", "--rule", "--axis",
                     "--axes-mapping", "--broadcast", "--ncnn-order", "--auto-broadcast", "--trans-a",
                     "--names", "pdpd", "ncnn", "explicit", "onnx-legacy", "openvino-select", "-1", "0", "1",
                     "2,3", "[]", "scalar", "3", "1,2", "N", "?", "2x", "-", "--"]),
    st.text(alphabet="0123456789,x[]()-?. N", max_size=8),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(cli_token, max_size=7))
def test_cli_never_tracebacks(argv):
    import contextlib
    import io

    from bcast.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(argv, out=io.StringIO())
        except SystemExit as exit_:  # argparse: --help, or a usage error through our one-line error()
            code = exit_.code
    assert code in (0, 1, 2), (argv, code)
    if code == 2 and err.getvalue():
        assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
