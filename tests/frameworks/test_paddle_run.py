"""``bcast.paddle`` (``plan``, ``run``) against PaddlePaddle itself (paddlepaddle 3.3.1, CPU, through
``bcast.frameworks.paddle.oracle``): the 2.x/3.x API (numpy's rule, in-place ops, ``expand``) and the
legacy ``elementwise_*`` operators with ``axis`` (the ``paddle`` rule), which Paddle 3.x still runs.

``FIXED`` is the table of cases measured on paddlepaddle 3.3.1 (each with Paddle's own message where it
refuses), the legacy operators' documented examples among them.  Random cases come from
``bcast.strategies`` (``numpy``, ``unidirectional`` and ``paddle``), half broadcastable and half not,
0-size dims among them, fixed seeds; inputs are float32 small integers, so every kernel is exact.  Where
Paddle departs from its own spec, the case must be one a deviation record predicts
(``bcast.frameworks.paddle.deviations``).  The tests that run Paddle skip without it.
"""

from __future__ import annotations

import numpy as np
import pytest

from bcast import BroadcastError, InputError
from bcast.frameworks.deviations import BY_ID, notes_for
from bcast.frameworks.paddle.ops import OPS, op, ops, plan, run
from bcast.rules import infer
from support import eager

SEED = 20261125

#: (op, the inputs' shapes (expand / broadcast_to: x's shape, then the sizes), attributes, the result's
#: shape, or None where Paddle refuses, with a fragment of paddlepaddle 3.3.1's message)
FIXED = [
    # the legacy operators' documented examples (fluid's elementwise OpMaker; paddle.add's 2.0 docstring)
    ("elementwise_add", ((2, 3, 4, 5), ()), {}, (2, 3, 4, 5), ""),
    ("elementwise_add", ((2, 3, 4, 5), (5,)), {}, (2, 3, 4, 5), ""),
    ("elementwise_add", ((2, 3, 4, 5), (4, 5)), {"axis": -1}, (2, 3, 4, 5), ""),
    ("elementwise_add", ((2, 3, 4, 5), (4, 5)), {"axis": 2}, (2, 3, 4, 5), ""),
    ("elementwise_add", ((2, 3, 4, 5), (3, 4)), {"axis": 1}, (2, 3, 4, 5), ""),
    ("elementwise_add", ((2, 3, 4, 5), (2,)), {"axis": 0}, (2, 3, 4, 5), ""),
    ("elementwise_add", ((2, 3, 4, 5), (2, 1)), {"axis": 0}, (2, 3, 4, 5), ""),
    # measured: X may be the smaller input; trailing 1s of the smaller one may overhang the end
    ("elementwise_mul", ((3, 4), (2, 3, 4, 5)), {"axis": 1}, (2, 3, 4, 5), ""),
    ("elementwise_sub", ((2, 3, 4, 5), (4, 5, 1)), {"axis": 2}, (2, 3, 4, 5), ""),
    ("elementwise_add", ((2, 3, 4, 5), (3, 1)), {"axis": 1}, (2, 3, 4, 5), ""),
    ("elementwise_add", ((2, 3), (2, 3)), {"axis": 1}, (2, 3), ""),  # equal shapes: axis not looked at
    ("elementwise_add", ((2, 3), (1, 3)), {"axis": 0}, (2, 3), ""),
    ("elementwise_add", ((2, 3), (2, 1)), {"axis": -1}, (2, 3), ""),
    ("elementwise_add", ((2, 3), (3,)), {"axis": 0}, None, "Broadcast dimension mismatch. Operands could not be "
                                                          "broadcast together with the shape of X = [2, 3] and the "
                                                          "shape of Y = [3]. Received [2] in X is not equal to [3] in "
                                                          "Y at i:0."),
    ("elementwise_add", ((2, 3, 4, 5), (3, 4)), {"axis": -3}, None, "Received [2] in X is not equal to [3] in Y"),
    ("elementwise_add", ((2, 3, 4, 5), (3, 4)), {"axis": 4}, None, "The axis range must be [-4, 4), but axis is 4"),
    ("elementwise_add", ((2, 3, 4, 5), (3, 4)), {"axis": -5}, None, "The axis range must be [-4, 4), but axis is -5"),
    ("elementwise_add", ((2, 3, 4), (4, 2)), {"axis": 0}, None, "Received [2] in X is not equal to [4] in Y at i:0"),
    ("elementwise_max", ((2, 3, 4), (2, 3, 1)), {"axis": 0}, (2, 3, 4), ""),
    # the 2.x/3.x API: numpy's rule
    ("add", ((2, 3), (4,)), {}, None, "Broadcast dimension mismatch. Operands could not be broadcast together with "
                                    "the shape of X = [2, 3] and the shape of Y = [4]. Received [3] in X is not equal "
                                    "to [4] in Y at i:1."),
    ("add", ((2, 3, 4, 5), (3, 4)), {}, None, "Broadcast dimension mismatch"),
    ("add", ((0,), (1,)), {}, (0,), ""),
    ("add", ((0,), (2,)), {}, None, "Broadcast dimension mismatch"),
    ("add", ((), (2, 3)), {}, (2, 3), ""),
    ("multiply", ((8, 1, 6, 1), (7, 1, 5)), {}, (8, 7, 6, 5), ""),
    ("add", ((1,) * 8 + (2,), (1,)), {}, (1,) * 8 + (2,), ""),  # rank 9: Paddle's largest
    ("where", ((2, 1), (3,), (4, 1, 1)), {}, (4, 2, 3), ""),
    ("where", ((2, 1), (3,), (4, 1, 2)), {}, None, "Broadcast dimension mismatch"),
    ("broadcast_tensors", ((2, 1), (3,), (4, 1, 1)), {}, (4, 2, 3), ""),
    ("broadcast_tensors", ((2, 3), (4,)), {}, None, "BroadcastTensorsOp inputs does not satisfy bcast semantics"),
    ("add_", ((2, 1), (2, 3)), {}, None, "The shape of broadcast output [2, 3] is different from that of inplace "
                                         "tensor paddle.Size([2, 1]) in the Inplace operation."),
    ("add_", ((3,), (1, 3)), {}, None, "The shape of broadcast output [1, 3] is different from that of inplace "
                                       "tensor paddle.Size([3])"),
    ("add_", ((), (1,)), {}, None, "is different from that of inplace tensor paddle.Size([])"),
    ("multiply_", ((2, 3), (3,)), {}, (2, 3), ""),
    ("expand", ((3, 1), (-1, 4)), {}, (3, 4), ""),
    ("expand", ((3, 1), (-1, 3, 4)), {}, None, "The expanded size (-1) for non-existing dimensions must be positive"),
    ("expand", ((3, 1), (4,)), {}, None, "The number of elements (1) of 'shape' for expand_v2 op must be "
                                     "greater than or equal to the rank (2) of the input"),
    ("expand", ((3, 1), (4, 1)), {}, None, "The value (3) of the non-singleton dimension does not match the "
                                           "corresponding value (4) in shape for expand_v2 op."),
    ("expand", ((1,), (0,)), {}, (0,), ""),
    ("expand", ((0,), (3,)), {}, None, "The value (0) of the non-singleton dimension does not match"),
    ("expand", ((), (3,)), {}, (3,), ""),
    ("expand", ((), (-1,)), {}, None, "The expanded size (-1) for non-existing dimensions must be positive"),
    ("expand", ((3,), (-2, 3)), {}, None, "The expanded size (-2) for non-existing dimensions must be positive"),
    ("broadcast_to", ((3, 1), (-1, 4)), {}, (3, 4), ""),
    ("broadcast_to", ((1,), (2,) * 8), {}, (2,) * 8, ""),
    # rank limits: a tensor has 9 dims at most, expand takes 8 sizes, broadcast_tensors broadcasts to rank 6
    ("add", ((1,) * 10, (1,)), {}, None, "Now only supports access to dimension 0 to 9"),
    ("elementwise_add", ((1,) * 10, (1,)), {}, None, "Now only supports access to dimension 0 to 9"),
    ("add_", ((2,) * 9, (1,) * 9), {}, (2,) * 9, ""),
    ("expand", ((1,), (1,) * 9), {}, None, "The number of elements (9) of 'shape' for must not be greater than 8"),
    ("broadcast_to", ((1,) * 9, (1,) * 9), {}, None, "must not be greater than 8"),
    ("broadcast_tensors", ((2,) * 6, (1,) * 6), {}, (2,) * 6, ""),
    ("broadcast_tensors", ((1,) * 7, (1,) * 7), {}, None, "Maximum supported rank for broadcast is: 6"),
    ("where", ((2,) * 9, (2,) * 9, (2,) * 9), {}, (2,) * 9, ""),
]


def _refused(name, shapes, attrs):
    try:
        plan(name, *shapes, **attrs)
    except (BroadcastError, InputError):
        return True
    return False


# --- bcast alone ----------------------------------------------------------------


@pytest.mark.parametrize("name, shapes, attrs, shape, says", FIXED, ids=[f"{r[0]}-{i}" for i, r in enumerate(FIXED)])
def test_plan_gives_the_measured_shape_or_refuses(name, shapes, attrs, shape, says):
    if shape is None:
        assert _refused(name, shapes, attrs)
    else:
        assert plan(name, *shapes, **attrs).shape == shape


def test_every_op_has_its_rule_and_names():
    rules = {name: op(name).rule for name in ops()}
    assert {n for n, r in rules.items() if r == "paddle"} == {n for n in ops() if n.startswith("elementwise_")}
    assert {n for n, r in rules.items() if r == "unidirectional"} == \
        {n for n in ops() if n.endswith("_")} | {"expand", "broadcast_to"}
    assert plan("add", (2, 3), (3,)).names == ("x", "y")
    assert plan("elementwise_add", (2, 3), (3,)).names == ("X", "Y")
    assert plan("expand", (3,), (2, 3)).names == ("shape", "x")
    assert op("paddle.add") is op("Tensor.add") is OPS["add"]


@pytest.mark.parametrize("call, says", [
    (lambda: plan("addd", (2,), (2,)), "paddle: unknown op 'addd'; the ops are: add, subtract"),
    (lambda: plan("add", (2, 3), (3,), axis=1), "paddle add: takes no axis"),
    (lambda: plan("elementwise_add", (2,)), "paddle elementwise_add: takes 2 inputs (X, Y), got 1"),
    (lambda: run("add_", np.ones(3, np.float32), np.ones(3, np.float32), out=np.ones(3, np.float32)),
     "paddle add_: takes no out= (it writes into x)"),
])
def test_bad_calls_are_one_line_input_errors(call, says):
    with pytest.raises(InputError) as e:
        call()
    assert says in str(e.value) and "\n" not in str(e.value)


# --- against Paddle ----------------------------------------------------------------


@pytest.fixture(scope="module")
def oracle():
    pytest.importorskip("paddle")
    from bcast.frameworks.paddle import oracle

    return oracle


def _explained(name, shapes, attrs) -> list:
    """The ids of the paddle records that bear on bcast's answer to this query (the op named)."""
    try:
        result = plan(name, *shapes, **attrs)
    except BroadcastError as e:
        result = e
    except InputError:
        return []
    return [n.deviation.id for n in notes_for(result, op=name) if n.deviation.framework == "paddle"]


def _kills(name, shapes, attrs) -> bool:
    """A paddle record says this case kills the process (paddle-legacy-axis-overhang): not run here (its
    proof runs one in a child process)."""
    return any(BY_ID[i].kills_process for i in _explained(name, shapes, attrs))


def _check(oracle, name, cases, rng, counts=None) -> None:
    """Every case through bcast and Paddle: they agree, or a paddle record explains the difference."""
    from bcast.frameworks._oracle import RuntimeRefused

    cases = [c for c in cases if not _kills(name, *c)]
    jobs = [(eager.inputs(op(name), shapes, rng), attrs) for shapes, attrs in cases]
    for (shapes, attrs), (arrays, _), theirs in zip(cases, jobs, oracle.run_many(name, jobs)):
        ours = eager.ours(run, name, arrays, **attrs)
        try:
            eager.agree(ours, theirs, (name, shapes, attrs))
        except AssertionError:
            explained = _explained(name, shapes, attrs)
            assert explained, (name, shapes, attrs, ours, theirs)
            assert isinstance(theirs, RuntimeRefused) != isinstance(ours, Exception)
            if counts is not None:
                counts[explained[0]] = counts.get(explained[0], 0) + 1


def test_fixed_cases_agree_with_paddle(oracle):
    from bcast.frameworks._oracle import RuntimeRefused

    rng = np.random.default_rng(SEED)
    for name, shapes, attrs, shape, says in FIXED:
        arrays = eager.inputs(op(name), shapes, rng)
        theirs = oracle.run_many(name, [(arrays, attrs)])[0]
        if shape is None:
            assert isinstance(theirs, RuntimeRefused) and says in theirs.message, (name, shapes, theirs)
        eager.agree(eager.ours(run, name, arrays, **attrs), theirs, (name, shapes))


#: op -> (the rule its random cases come from, how many inputs, whether the shapes swap: unidirectional's
#: (A, B) is expand's (B, A))
RANDOM = {
    **{name: ("numpy", 2, False) for name in ("add", "subtract", "multiply", "divide", "maximum", "remainder",
                                              "greater_equal")},
    "where": ("numpy", 3, False), "broadcast_tensors": ("numpy", 3, False),
    **{name: ("unidirectional", None, False) for name in ("add_", "multiply_", "remainder_")},
    "expand": ("unidirectional", None, True), "broadcast_to": ("unidirectional", None, True),
    **{name: ("paddle", None, False) for name in ("elementwise_add", "elementwise_sub", "elementwise_mul",
                                                  "elementwise_div", "elementwise_max", "elementwise_pow")},
}


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_shapes_agree_with_paddle(oracle, name):
    """Random cases: bcast's run (or refusal) and Paddle's, shapes and values, for every case drawn."""
    rule, num_shapes, swap = RANDOM[name]
    rng = np.random.default_rng(SEED)
    cases = [(s[::-1] if swap else s, a) for s, a in eager.random_cases(rule, 15, SEED, num_shapes)]
    _check(oracle, name, cases, rng)


#: Cases where Paddle departs from its spec, each with the record that says so: (op, shapes, attributes,
#: the record, what Paddle gives: a shape, or a fragment of its message).
DEVIATING = [
    ("expand", ((2, 3), ()), {}, "paddle-expand-empty-shape", (2, 3)),
    ("broadcast_to", ((1,), ()), {}, "paddle-expand-empty-shape", (1,)),
    ("elementwise_add", ((2, 3, 4, 5), (3, 4)), {"axis": -2}, "paddle-legacy-negative-axis",
     "Axis should be great than or equal to 0, but received axis is -2"),
    ("elementwise_mul", ((), (1, 1)), {"axis": -2}, "paddle-legacy-negative-axis", "Axis should be great than"),
    ("where", ((1,) * 8, (1,) * 9, (1,) * 9), {}, "paddle-where-rank-9", "must not be greater than 8"),
]


@pytest.mark.parametrize("name, shapes, attrs, record, gives", DEVIATING, ids=[r[3] for r in DEVIATING])
def test_deviating_cases_are_the_records(oracle, name, shapes, attrs, record, gives):
    """bcast keeps to the spec; Paddle does what the record says; the record bears on bcast's answer."""
    from bcast.frameworks._oracle import RuntimeRefused

    assert record in _explained(name, shapes, attrs)
    arrays = eager.inputs(op(name), shapes, np.random.default_rng(SEED))
    ours, theirs = eager.ours(run, name, arrays, **attrs), oracle.run_many(name, [(arrays, attrs)])[0]
    if isinstance(gives, tuple):
        assert isinstance(ours, BroadcastError) and theirs.shape == gives
    else:
        assert not isinstance(ours, Exception) and isinstance(theirs, RuntimeRefused) and gives in theirs.message


def _shape_or_none(*shapes, rule="numpy", **attrs):
    try:
        return infer(*shapes, rule=rule, **attrs).shape
    except BroadcastError:
        return None


@pytest.mark.parametrize("name", ["elementwise_add", "elementwise_div", "elementwise_max"])
def test_translated_programs_are_the_record_or_agree(oracle, name):
    """The random cases the paddle rule accepts as old-IR programs that Paddle 3.x translates to PIR: the result is
    numpy's broadcast of X and of Y as ``deviations.translated`` reshapes it (the record's model of the
    translator), values included; where that differs from the operator's own rule, deviation
    paddle-pir-translator-axis bears on the case."""
    from bcast.frameworks.paddle.deviations import translated

    rng = np.random.default_rng(SEED)
    differ = 0
    for (x_shape, y_shape), attrs in eager.random_cases("paddle", 20, SEED):
        if _kills(name, (x_shape, y_shape), attrs) or _refused(name, (x_shape, y_shape), attrs):
            continue  # (a program the operator refuses cannot be built: the old IR runs its InferShape)
        axis = attrs.get("axis", -1)
        x, y = eager.inputs(op(name), (x_shape, y_shape), rng)
        y2 = translated(x_shape, y_shape, axis)
        model = _shape_or_none(x_shape, y2)
        try:
            got = oracle.run_translated(name, x, y, axis=axis)
        except oracle.RuntimeRefused:
            assert model is None, (x_shape, y_shape, axis)
        else:
            assert got.shape == model, (x_shape, y_shape, axis)
            np.testing.assert_array_equal(got, run(name, x, y.reshape(y2), axis=-1))
        if x_shape != y_shape and plan(name, x_shape, y_shape, **attrs).shape != model:
            assert "paddle-pir-translator-axis" in _explained(name, (x_shape, y_shape), attrs), (x_shape, y_shape, axis)
            differ += 1
    assert differ, "no random case where the translator differs"
