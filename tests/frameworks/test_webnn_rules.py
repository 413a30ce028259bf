"""bcast.webnn against the WebNN specification and web-platform-tests' WebNN conformance cases.

Spec only: no WebNN implementation runs here.  The WPT rows are facts read from
web-platform-tests/wpt ``webnn/resources/test_data/{expand,prelu,where,sub}.json``: each case's input
shapes and the output shape it expects (and, for a few, the values), written here as data; every row
runs through bcast.webnn.
"""

import numpy as np
import pytest

import bcast
from bcast import BroadcastError, InputError
from bcast.frameworks import framework

S = (2, 2, 2, 3)

#: web-platform-tests expand.json: (input shape, newShape, expected output shape).
WPT_EXPAND = [
    ((), (24,), (24,)),
    ((), (4, 6), (4, 6)),
    ((), (2, 3, 4), (2, 3, 4)),
    ((), (2, 2, 2, 3), (2, 2, 2, 3)),
    ((), (2, 2, 3, 1, 2), (2, 2, 3, 1, 2)),
    ((1,), (24,), (24,)),
    ((1,), (4, 6), (4, 6)),
    ((1,), (2, 3, 4), (2, 3, 4)),
    ((1,), (2, 2, 2, 3), (2, 2, 2, 3)),
    ((1,), (2, 2, 3, 1, 2), (2, 2, 3, 1, 2)),
    ((1, 6), (4, 6), (4, 6)),
    ((4, 1), (4, 6), (4, 6)),
    ((1, 1), (4, 6), (4, 6)),
    ((4, 1), (2, 4, 3), (2, 4, 3)),
    ((1, 6), (2, 1, 2, 6), (2, 1, 2, 6)),
    ((1, 1), (2, 1, 3, 2, 2), (2, 1, 3, 2, 2)),
    ((1, 2, 1), (2, 2, 6), (2, 2, 6)),
    ((1, 2, 1), (2, 2, 2, 3), (2, 2, 2, 3)),
    ((1, 2, 1), (2, 1, 2, 2, 3), (2, 1, 2, 2, 3)),
    ((2, 1, 1, 1), (2, 3, 2, 2), (2, 3, 2, 2)),
    ((2, 1, 1, 1), (2, 2, 3, 1, 2), (2, 2, 3, 1, 2)),
]

#: web-platform-tests prelu.json: (x shape, slope shape, expected output shape).
WPT_PRELU = [
    ((24,), (24,), (24,)),
    ((4, 6), (4, 6), (4, 6)),
    ((2, 3, 4), (2, 3, 4), (2, 3, 4)),
    (S, S, S),
    ((2, 2, 1, 2, 3), (2, 2, 1, 2, 3), (2, 2, 1, 2, 3)),
    (S, (3,), S),
    (S, (1,), S),
    (S, (2, 3), S),
    (S, (1, 1, 3), S),
    (S, (1, 1, 1, 1), S),
]

#: web-platform-tests where.json: (condition, trueValues, falseValues shapes, expected output shape).
WPT_WHERE = [
    ((), (), (), ()),
    ((24,), (24,), (24,), (24,)),
    ((4, 6), (4, 6), (4, 6), (4, 6)),
    ((2, 3, 4), (2, 3, 4), (2, 3, 4), (2, 3, 4)),
    (S, S, S, S),
    ((3,), S, S, S),
    ((2, 1), S, S, S),
    ((1, 2, 3), S, S, S),
    ((1, 2, 2, 1), S, S, S),
    (S, (2, 3), S, S),
    (S, (2, 2, 1, 1), S, S),
    (S, S, (2, 2, 1), S),
    (S, S, (1, 2, 1, 3), S),
    ((2, 1, 1, 1), (2, 3), (2, 2, 1), S),
]

#: web-platform-tests sub.json (the element-wise binary ops' shapes): (a, b, expected output shape).
WPT_SUB = [
    (S, S, S),
    ((2, 2, 1, 2, 3), (2, 2, 1, 2, 3), (2, 2, 1, 2, 3)),
    ((1,), S, S),
    (S, (2, 3), S),
    (S, (2, 2, 1), S),
    ((1, 1, 1, 1), S, S),
]

BINARY = ("add", "sub", "mul", "div", "max", "min", "pow", "equal", "notEqual", "greater", "greaterOrEqual",
          "lesser", "lesserOrEqual", "logicalAnd", "logicalOr", "logicalXor")


@pytest.mark.parametrize("shape, new_shape, expected", WPT_EXPAND)
def test_wpt_expand(shape, new_shape, expected):
    p = bcast.webnn.plan("expand", shape, new_shape)
    assert (p.rule, p.shape) == ("unidirectional", expected)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = bcast.webnn.run("expand", x, new_shape)
    assert out.shape == expected and np.array_equal(out, np.broadcast_to(x, expected))


@pytest.mark.parametrize("x, slope, expected", WPT_PRELU)
def test_wpt_prelu(x, slope, expected):
    p = bcast.webnn.plan("prelu", x, slope)
    assert (p.rule, p.shape) == ("numpy", expected)


@pytest.mark.parametrize("c, t, f, expected", WPT_WHERE)
def test_wpt_where(c, t, f, expected):
    p = bcast.webnn.plan("where", c, t, f)
    assert (p.rule, p.shape) == ("numpy", expected)


@pytest.mark.parametrize("a, b, expected", WPT_SUB)
def test_wpt_binary_shapes(a, b, expected):
    for op in BINARY:
        assert bcast.webnn.plan(op, a, b).shape == expected, op
        assert bcast.webnn.plan(op, b, a).shape == expected, op  # bidirectional: either side


def test_wpt_values():
    """A few of the WPT cases' values (float32), computed by bcast.webnn.run."""
    f32 = np.float32
    # where.json "all broadcast 4D": every condition nonzero, so trueValues (2,3) everywhere
    t = f32([38.77214217758569, 18.20477212490914, -11.542049811225752,
             -82.74693634531252, -18.612025770709195, -75.7753416776858]).reshape(2, 3)
    f = f32([-86.59848282630414, -67.72773908066867, -30.73133521230433, -93.49223433991423]).reshape(2, 2, 1)
    out = bcast.webnn.run("where", np.array([58, 217], np.uint8).reshape(2, 1, 1, 1), t, f)
    assert out.shape == S and np.array_equal(out, np.broadcast_to(t, S))
    # sub.json "broadcast 1D to 4D" (first six elements of b) and "broadcast 2D to 4D" (first six of a)
    b = f32([73.59273411765761, 14.484682970108636, -69.40201711151408,
             -52.04528488626416, -75.78136877111933, -2.274051445061204])
    got = bcast.webnn.run("sub", f32([-97.04911633292723]), b)
    np.testing.assert_allclose(got, [-170.641845703125, -111.53379821777344, -27.64710235595703,
                                     -45.00383377075195, -21.267745971679688, -94.77507019042969], rtol=1e-6)
    b2 = f32([10.76283817728796, -90.23991799972681, 12.787367580497303,
              -62.44633978281189, 32.182575156356904, 20.35949259849579]).reshape(2, 3)
    got = bcast.webnn.run("sub", b.reshape(2, 3), b2)
    np.testing.assert_allclose(got.ravel(), [62.82989501953125, 104.72460174560547, -82.18938446044922,
                                             10.401054382324219, -107.96394348144531, -22.633544921875], rtol=1e-6)
    # prelu.json "broadcast 4D x 1D slope" [3] (first six elements of x)
    x = f32([-2.5491681672317235, -4.794857500523286, 8.413617520687886,
             6.108623511441287, -8.492292847462334, 3.3143364551069876]).reshape(2, 3)
    slope = f32([5.073923296191488, 0.48077445494619653, -7.091750168010829])
    got = bcast.webnn.run("prelu", x, slope)
    np.testing.assert_allclose(got.ravel(), [-12.934283256530762, -2.3052449226379395, 8.413617134094238,
                                             6.108623504638672, -4.082877159118652, 3.3143365383148193], rtol=1e-6)


#: The specification's own examples and counter-examples: (op, shapes, output shape or the error's kind).
SPEC = [
    ("add", ((5, 1), (1, 6)), (5, 6)),  # "Broadcasting": [5,1] with [1,6]
    ("expand", ((4,), (5, 4)), (5, 4)),  # [4] to [5,4]
    ("expand", ((1,), (5, 4)), (5, 4)),  # [1] to [5,4]
    ("add", ((2, 3), (4,)), "dims"),
    ("prelu", ((4, 1, 2), (5, 4, 3, 1)), (5, 4, 3, 2)),  # bidirectional: larger than the input
    ("where", ((2, 1), (3,), (1, 1, 3)), (1, 2, 3)),
    # expand is unidirectional, where ONNX's Expand is bidirectional (onnxruntime PR#21163)
    ("expand", ((2, 3), (1, 3)), "dims"),
    ("expand", ((3, 1), (1,)), "rank"),
    ("expand", ((3, 1), (3, 4)), (3, 4)),
    # dims are "valid dimensions": integers greater than zero
    ("add", ((0, 3), (3,)), "unsupported"),
    ("expand", ((3,), (0, 3)), "unsupported"),
    ("where", ((1,), (2, 0), (1,)), "unsupported"),
    # no rank limit in the specification
    ("add", ((1,) * 9, (2,)), (1,) * 8 + (2,)),
]


@pytest.mark.parametrize("op, shapes, expected", SPEC)
def test_spec_examples(op, shapes, expected):
    if isinstance(expected, str):
        with pytest.raises(BroadcastError) as e:
            bcast.webnn.plan(op, *shapes)
        assert e.value.kind == expected
    else:
        assert bcast.webnn.plan(op, *shapes).shape == expected


def test_expand_differs_from_onnx_expand():
    assert bcast.onnx.plan("Expand", (2, 3), (1, 3)).shape == (2, 3)
    with pytest.raises(BroadcastError):
        bcast.webnn.plan("expand", (2, 3), (1, 3))


def test_rules_per_op():
    fw = framework("webnn")
    shapes = {"where": ((3,), (2, 3), (1,)), "expand": ((3,), (2, 3))}
    rules = {op: fw.plan(op, *shapes.get(op, ((2, 3), (3,)))).rule for op in fw.ops()}
    assert rules.pop("expand") == "unidirectional"
    assert set(rules.values()) == {"numpy"}
    assert set(BINARY) | {"prelu", "where"} == set(rules)


def test_run_checks_its_inputs():
    with pytest.raises(InputError, match="webnn add: input b must be a numpy array"):
        bcast.webnn.run("add", np.ones(2), [1, 2])
    with pytest.raises(InputError, match="webnn expand: takes 2 inputs"):
        bcast.webnn.run("expand", np.ones(2))
    with pytest.raises(InputError, match="unknown op 'Add'; the ops are: add"):
        bcast.webnn.plan("Add", (2,), (2,))
    out = np.empty((2, 3))
    assert bcast.webnn.run("expand", np.ones(3), (2, 3), out=out) is out
    assert bcast.webnn.run("logicalAnd", np.array([True, False]), np.array([[True], [False]])).tolist() == \
        [[True, False], [False, False]]
