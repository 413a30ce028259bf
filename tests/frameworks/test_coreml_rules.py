"""``bcast.coreml`` (Core ML's MIL element-wise binary ops and select) against coremltools' MIL builder.

Core ML's runtime runs only on macOS, so the shapes are proven against what runs here: the MIL
builder's type inference (``mb.program`` of one op: its output shape, or its error) on fixed cases
and on random cases from ``bcast.strategies``, and the converter's rank check (``ct.convert``).
Where they differ from the rule (numpy, rank at most 5), a record says so: ``coreml-mil-rank`` (type
inference takes any rank; the converter refuses rank 6) and ``coreml-select-cond`` (select is typed
by a and b alone).
"""

from __future__ import annotations

import pytest

from bcast import BroadcastError, InputError, coreml
from bcast.frameworks.deviations import applicable

#: (op, shapes, bcast's shape or None where it refuses, the kind of refusal)
FIXED = [
    ("add", ((2, 3), (3,)), (2, 3), None),
    ("add", ((8, 1, 6, 1), (7, 1, 5)), (8, 7, 6, 5), None),
    ("add", ((), (2, 3)), (2, 3), None),
    ("add", ((2, 3), ()), (2, 3), None),
    ("sub", ((2, 1), (1, 3)), (2, 3), None),
    ("mul", ((2, 3), (4,)), None, "dims"),
    ("real_div", ((3, 2), (4, 2)), None, "dims"),
    ("pow", ((1, 2, 3, 4, 5), (5,)), (1, 2, 3, 4, 5), None),
    ("maximum", ((2, 1, 1, 1, 1), (1, 2, 2, 2, 2)), (2, 2, 2, 2, 2), None),
    ("add", ((1, 1, 1, 1, 1, 2), (2,)), None, "rank"),
    ("add", ((2,), (1, 1, 1, 1, 1, 1, 1)), None, "rank"),
    ("less", ((2, 1), (3,)), (2, 3), None),
    ("logical_and", ((4, 1), (1, 5)), (4, 5), None),
    ("select", ((2, 3), (2, 3), (3,)), (2, 3), None),
    ("select", ((2, 1), (3,), ()), (2, 3), None),
    ("select", ((2, 3), (3,), (3,)), (2, 3), None),  # MIL types it (3,): coreml-select-cond
    ("select", ((4,), (3,), (3,)), None, "dims"),  # MIL accepts it: coreml-select-cond
]


@pytest.mark.parametrize("op, shapes, shape, kind", FIXED)
def test_plan(op, shapes, shape, kind):
    if shape is None:
        with pytest.raises(BroadcastError) as e:
            coreml.plan(op, *shapes)
        assert e.value.kind == kind
    else:
        assert coreml.plan(op, *shapes).shape == shape


def test_ops_and_bad_requests():
    assert coreml.ops()[:3] == ("add", "sub", "mul") and coreml.ops()[-1] == "select"
    with pytest.raises(InputError, match="did you mean add"):
        coreml.plan("Add", (2,), (2,))
    with pytest.raises(InputError, match="takes 3 inputs"):
        coreml.plan("select", (2,), (2,))
    with pytest.raises(InputError, match="only on macOS"):
        coreml.run("add", 1, 2)


# --------------------------------------------------------------------------- against coremltools

def _oracle():
    pytest.importorskip("coremltools")
    from bcast.frameworks.coreml import oracle

    return oracle


def _mil(oracle, op, shapes):
    try:
        return oracle.infer_shape(op, shapes)
    except oracle.RuntimeRefused as e:
        return e


def _explained(op, shapes, ours, theirs) -> list:
    """The ids of the records that bear on a disagreement."""
    return [n.deviation.id for n in applicable(*shapes, rule="numpy", max_rank=5, op=op)]


@pytest.mark.parametrize("op, shapes, shape, kind", FIXED)
def test_fixed_cases_against_mil_type_inference(op, shapes, shape, kind):
    oracle = _oracle()
    theirs = _mil(oracle, op, shapes)
    ours = shape
    if isinstance(theirs, tuple) and theirs == ours:
        assert not [i for i in _explained(op, shapes, ours, theirs) if i != "coreml-mil-rank"]
        return
    if ours is None and not isinstance(theirs, tuple):
        assert "Incompatible dim" in theirs.message
        return
    ids = _explained(op, shapes, ours, theirs)
    assert ids, (op, shapes, ours, theirs)  # every disagreement has its record


def test_random_cases_against_mil_type_inference():
    """Random cases of the numpy rule (ranks 0-6, a few 0-size dims), through every op kind: bcast's
    shape is MIL's, both refuse, or a record bears on the case."""
    oracle = _oracle()
    from bcast.strategies import broadcastable, examples, not_broadcastable

    cases = examples(broadcastable("numpy", max_dims=6, min_side=0, max_side=4), 60, seed=19)
    cases += examples(not_broadcastable("numpy", max_dims=6, max_side=4), 40, seed=19)
    cases += examples(broadcastable("numpy", num_shapes=3, max_dims=5, max_side=3), 20, seed=19)
    ops = ("add", "real_div", "less", "logical_or")
    agreed = explained = 0
    for k, case in enumerate(cases):
        op = "select" if len(case.shapes) == 3 else ops[k % len(ops)]
        try:
            ours = coreml.plan(op, *case.shapes).shape
        except BroadcastError:
            ours = None
        theirs = _mil(oracle, op, case.shapes)
        if (ours is None and not isinstance(theirs, tuple)) or ours == theirs:
            agreed += 1
            continue
        assert _explained(op, case.shapes, ours, theirs), (op, case.shapes, ours, theirs)
        explained += 1
    assert agreed + explained == len(cases) and agreed > len(cases) // 2


def test_the_converter_enforces_rank_5():
    """The rule's max_rank is where coremltools' converter refuses: rank 5 converts, rank 6 does not."""
    oracle = _oracle()
    assert oracle.convert_refuses("add", [(1, 1, 1, 1, 2), (2,)]) is None
    assert "rank <= 5" in oracle.convert_refuses("add", [(1, 1, 1, 1, 1, 2), (2,)])


#: (shapes with symbols, bcast's shape, MIL's: a symbol of its own where bcast's is an interval)
SYMBOLIC = [
    ((("N", 3), (3,)), ("N", 3), ("N", 3)),
    ((("N",), (3,)), (3,), (3,)),  # bcast adds the constraint N in {1, 3}; MIL assumes it
    ((("N",), (1,)), ("N",), ("N",)),
    ((("N",), ("N",)), ("N",), ("N",)),
    ((("N",), ("M",)), ("0..",), ("new",)),  # unknown both ways: an interval, a fresh symbol
]


@pytest.mark.parametrize("shapes, ours, mil", SYMBOLIC)
def test_symbolic_dims_against_mil(shapes, ours, mil):
    pytest.importorskip("coremltools")
    from coremltools.converters.mil import Builder as mb
    from coremltools.converters.mil.mil import Function, get_new_symbol

    from bcast.core.shapes import as_shape

    assert coreml.plan("add", *shapes).shape == as_shape(ours)
    symbols = {name: get_new_symbol() for name in ("N", "M")}
    given = [tuple(symbols.get(d, d) for d in s) for s in shapes]
    with Function({"x": mb.placeholder(shape=given[0]), "y": mb.placeholder(shape=given[1])}) as f:
        typed = mb.add(x=f.inputs["x"], y=f.inputs["y"]).shape
    expected = [symbols.get(d, d) for d in mil]
    assert len(typed) == len(expected)
    for got, want in zip(typed, expected):
        assert got == want if want != "new" else got not in symbols.values() and not isinstance(got, int)
