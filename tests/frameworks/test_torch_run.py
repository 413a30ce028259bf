"""``bcast.torch`` (``plan``, ``run``) against PyTorch itself (torch 2.13.0, CPU, through
``bcast.frameworks.torch.oracle``).

``FIXED`` is the table of cases measured on torch 2.13.0+cpu (each with torch's own message where it
refuses): bcast's plan must give the shape, or refuse, and torch must agree (shape and values).
Random cases come from ``bcast.strategies`` (the ``numpy`` rule for the binary ops and ``where``,
``unidirectional`` for the in-place ops and ``expand``), half broadcastable and half not, 0-size
dims among them, fixed seeds; inputs are float32 small integers, so every kernel is exact.  The
tests that run torch skip without it.
"""

from __future__ import annotations

import numpy as np
import pytest

from bcast import BroadcastError, InputError
from bcast.frameworks.torch import ops as torch_ops
from bcast.frameworks.torch.ops import op, ops, plan, run
from support import eager

SEED = 20261125

#: (op, the inputs' shapes (expand / broadcast_to: self's shape, then the sizes), the result's shape,
#: or None where torch refuses, with a fragment of torch 2.13's message)
FIXED = [
    # docs/source/notes/broadcasting.rst's examples
    ("add", ((5, 7, 3), (5, 7, 3)), (5, 7, 3), ""),
    ("add", ((0,), (2, 2)), None, "The size of tensor a (0) must match the size of tensor b (2)"),
    ("add", ((5, 3, 4, 1), (3, 1, 1)), (5, 3, 4, 1), ""),
    ("add", ((5, 1, 4, 1), (3, 1, 1)), (5, 3, 4, 1), ""),
    ("add", ((1,), (3, 1, 7)), (3, 1, 7), ""),
    ("add", ((5, 2, 4, 1), (3, 1, 1)), None, "The size of tensor a (2) must match the size of tensor b (3) at "
                                             "non-singleton dimension 1"),
    ("add_", ((5, 3, 4, 1), (3, 1, 1)), (5, 3, 4, 1), ""),
    ("add_", ((1, 3, 1), (3, 1, 7)), None, "output with shape [1, 3, 1] doesn't match the broadcast shape [3, 3, 7]"),
    # measured
    ("add", ((2, 3), (4,)), None, "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
                                  "dimension 1"),
    ("add", ((2, 3), (4, 3, 1)), None, "The size of tensor a (2) must match the size of tensor b (3)"),
    ("add", ((8, 1, 6, 1), (7, 1, 5)), (8, 7, 6, 5), ""),
    ("add", ((0,), (1,)), (0,), ""),
    ("add", ((0,), (2,)), None, "The size of tensor a (0) must match the size of tensor b (2)"),
    ("add", ((2, 0), (2, 1)), (2, 0), ""),
    ("add", ((), (2, 3)), (2, 3), ""),
    ("add", ((), ()), (), ""),
    ("maximum", ((2, 3), (4,)), None, "must match the size of tensor b (4)"),
    ("pow", ((2, 1), (1, 3)), (2, 3), ""),
    ("lt", ((2, 3), (4,)), None, "must match the size of tensor b (4)"),
    ("eq", ((5, 1, 4), (3, 1)), (5, 3, 4), ""),
    ("add_", ((2, 1), (2, 3)), None, "output with shape [2, 1] doesn't match the broadcast shape [2, 3]"),
    ("add_", ((3,), (1, 3)), None, "output with shape [3] doesn't match the broadcast shape [1, 3]"),
    ("add_", ((2, 3), (3,)), (2, 3), ""),
    ("add_", ((2, 3), ()), (2, 3), ""),
    ("add_", ((), (1,)), None, "output with shape [] doesn't match the broadcast shape [1]"),
    ("mul_", ((), (2,)), None, "output with shape [] doesn't match the broadcast shape [2]"),
    ("sub_", ((1,), ()), (1,), ""),
    ("div_", ((0,), (1,)), (0,), ""),
    ("add_", ((1,), (0,)), None, "output with shape [1] doesn't match the broadcast shape [0]"),
    ("expand", ((3, 1), (2, 3, 4)), (2, 3, 4), ""),
    ("expand", ((3, 1), (-1, 4)), (3, 4), ""),
    ("expand", ((3, 1), (-1, 3, 4)), None, "The expanded size of the tensor (-1) isn't allowed in a leading, "
                                           "non-existing dimension 0"),
    ("expand", ((3, 1), (4,)), None, "the number of sizes provided (1) must be greater or equal to the number of "
                                     "dimensions in the tensor (2)"),
    ("expand", ((3, 1), (4, 1)), None, "The expanded size of the tensor (4) must match the existing size (3) at "
                                       "non-singleton dimension 0"),
    ("expand", ((3, 1), (3, 1, -1)), None, "must match the existing size (3) at non-singleton dimension 1"),
    ("expand", ((1,), (0,)), (0,), ""),
    ("expand", ((0,), (3,)), None, "The expanded size of the tensor (3) must match the existing size (0)"),
    ("expand", ((0,), (-1,)), (0,), ""),
    ("expand", ((0,), (2, 0)), (2, 0), ""),
    ("expand", ((), ()), (), ""),
    ("expand", ((), (3,)), (3,), ""),
    ("expand", ((2, 3), (1, 2, 3)), (1, 2, 3), ""),
    ("expand", ((3,), (3, -1, 3)), None, "isn't allowed in a leading, non-existing dimension 1"),
    ("expand", ((3, 1), (3, -2)), None, "numel: integer multiplication overflow"),
    ("broadcast_to", ((3, 1), (-1, 4)), (3, 4), ""),
    ("broadcast_to", ((3, 1), (-1, 3, 4)), None, "isn't allowed in a leading, non-existing dimension 0"),
    ("broadcast_to", ((3, 1), (2, 4, 1)), None, "The expanded size of the tensor (4) must match the existing size "
                                                "(3) at non-singleton dimension 1"),
    ("where", ((2, 1), (3,), (4, 1, 1)), (4, 2, 3), ""),
    ("where", ((2, 1), (3,), (4, 1, 2)), None, "The size of tensor a (3) must match the size of tensor b (2) at "
                                               "non-singleton dimension 2"),
    ("broadcast_tensors", ((2, 3), (4,)), None, "The size of tensor a (3) must match the size of tensor b (4)"),
    ("broadcast_tensors", ((2, 1), (3,), (4, 1, 1)), (4, 2, 3), ""),
]


# --- bcast alone ----------------------------------------------------------------


@pytest.mark.parametrize("name, shapes, shape, says", FIXED, ids=[f"{r[0]}-{i}" for i, r in enumerate(FIXED)])
def test_plan_gives_the_measured_shape_or_refuses(name, shapes, shape, says):
    if shape is None:
        with pytest.raises((BroadcastError, InputError)):
            plan(name, *shapes)
    else:
        assert plan(name, *shapes).shape == shape


def test_every_op_has_its_rule_and_names():
    rules = {name: op(name).rule for name in ops()}
    assert {n for n, r in rules.items() if r == "unidirectional"} == \
        {n for n in ops() if n.endswith("_")} | {"expand", "broadcast_to"}
    assert plan("add", (2, 3), (3,)).names == ("input", "other")
    assert plan("add_", (2, 3), (3,)).names == ("self", "other")
    assert plan("expand", (3,), (2, 3)).names == ("size", "self")
    assert plan("where", (1,), (1,), (1,)).names == ("condition", "input", "other")
    assert op("torch.add") is op("Tensor.add") is torch_ops.OPS["add"]


@pytest.mark.parametrize("call, says", [
    (lambda: plan("addd", (2,), (2,)), "torch: unknown op 'addd'; the ops are: add, sub"),
    (lambda: plan("add", (2,)), "torch add: takes 2 inputs (input, other), got 1"),
    (lambda: plan("where", (2,), (2,)), "torch where: takes 3 inputs (condition, input, other), got 2"),
    (lambda: plan("expand", (3, 1), (-1, 3, 4)), "-1 is not allowed at axis 0, a leading, non-existing dimension"),
    (lambda: plan("expand", (3,), (-2, 3)), "has a negative size -2 at axis 0"),
    (lambda: run("add_", np.ones(3, np.float32), np.ones(3, np.float32), out=np.ones(3, np.float32)),
     "torch add_: takes no out="),
    (lambda: run("where", np.ones(2, np.float32), np.ones(2), np.ones(2)), "condition must be a boolean array"),
    (lambda: run("add", [1, 2], np.ones(2)), "input must be a numpy array (a tensor); got list"),
    (lambda: run("add", np.ones(3), np.ones(3), out=np.ones(2)), "torch add: out= has shape (2,)"),
    (lambda: run("add_", np.ones(3, np.int64), np.ones(3, np.float32)), "torch add_:"),
])
def test_bad_calls_are_one_line_input_errors(call, says):
    with pytest.raises(InputError) as e:
        call()
    assert says in str(e.value) and "\n" not in str(e.value)


def test_run_writes_in_place_and_returns_views():
    self = np.zeros((2, 3), np.float32)
    assert run("add_", self, np.float32([1, 2, 3])) is self and self[1].tolist() == [1, 2, 3]
    v = run("expand", np.float32([[1], [2]]), (2, -1, 3))
    assert v.shape == (2, 2, 3) and v.strides[0] == 0 and not v.flags.writeable
    a, b = run("broadcast_tensors", np.ones((2, 1)), np.ones(3))
    assert a.shape == b.shape == (2, 3)


# --- against torch ----------------------------------------------------------------


@pytest.fixture(scope="module")
def oracle():
    pytest.importorskip("torch")
    from bcast.frameworks.torch import oracle

    return oracle


def test_fixed_cases_agree_with_torch(oracle):
    from bcast.frameworks._oracle import RuntimeRefused

    rng = np.random.default_rng(SEED)
    for name, shapes, shape, says in FIXED:
        arrays = eager.inputs(op(name), shapes, rng)
        theirs = oracle.run_many(name, [arrays])[0]
        if shape is None:
            assert isinstance(theirs, RuntimeRefused) and says in theirs.message, (name, shapes, theirs)
        eager.agree(eager.ours(run, name, arrays), theirs, (name, shapes))


#: op -> (the rule its random cases come from, how many inputs, whether the shapes swap: unidirectional's
#: (A, B) is expand's (B, A))
RANDOM = {
    **{name: ("numpy", 2, False) for name in ("add", "sub", "mul", "div", "maximum", "pow", "remainder", "ge")},
    "where": ("numpy", 3, False), "broadcast_tensors": ("numpy", 3, False),
    **{name: ("unidirectional", None, False) for name in ("add_", "mul_", "remainder_")},
    "expand": ("unidirectional", None, True), "broadcast_to": ("unidirectional", None, True),
}


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_shapes_agree_with_torch(oracle, name):
    """Random cases: bcast's run (or refusal) and torch's, shapes and values, for every case drawn."""
    rule, num_shapes, swap = RANDOM[name]
    rng = np.random.default_rng(SEED)
    cases = [s[::-1] if swap else s for s, _ in eager.random_cases(rule, 15, SEED, num_shapes)]
    jobs = [eager.inputs(op(name), shapes, rng) for shapes in cases]
    for shapes, arrays, theirs in zip(cases, jobs, oracle.run_many(name, jobs)):
        eager.agree(eager.ours(run, name, arrays), theirs, (name, shapes))


def _numel_passes(size) -> bool:
    """Whether c10's element count check (``safe_compute_numel``: the sizes multiplied left to right as
    unsigned 64-bit numbers, any step's overflow remembered, and the product at most 2**63 - 1) passes
    ``size``."""
    product, overflowed = 1, False
    for d in size:
        product *= d % 2**64
        overflowed |= product >= 2**64
        product %= 2**64
    return not overflowed and product < 2**63


def test_expand_with_minus_one_agrees_with_torch(oracle):
    """-1 in every position of the sizes of random unidirectional cases: kept dims agree, new leading
    axes are refused by both, except where deviation torch-expand-negative-size says torch takes it (a
    0-d self, whose leading -1 ATen does not check, and sizes whose product passes c10's unsigned overflow
    check): there torch gives a tensor whose size holds the -1."""
    rng = np.random.default_rng(SEED)
    deviating = 0
    for (target, self_shape), _ in eager.random_cases("unidirectional", 10, SEED):
        for i in range(len(target)):
            size = tuple(-1 if k == i else d for k, d in enumerate(target))
            for name in ("expand", "broadcast_to"):
                arrays = eager.inputs(op(name), (self_shape, size), rng)
                ours, theirs = eager.ours(run, name, arrays), oracle.run_many(name, [arrays])[0]
                if self_shape == () and _numel_passes(size):
                    assert isinstance(ours, InputError) and theirs == size, (name, size, theirs)
                    deviating += 1
                    continue
                eager.agree(ours, theirs, (name, self_shape, size))
    assert deviating
