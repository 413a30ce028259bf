"""Hostile inputs for the fuzz suite's pure-Python targets: shape texts, dims, attribute values, argv.

Shared by ``test_fuzz_parse.py``, ``test_fuzz_rules.py`` and ``test_fuzz_cli.py``.  Every
strategy mixes what a user types by hand (``2,3``, ``N``, ``?``, ``2..5``) with what they
should not (negative and huge dims, ``10**400``, non-ASCII digits, control characters,
wrong types), so that the invariant is checked on the edges, not just on the happy path.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from bcast.core.dims import Interval, Sym

HUGE = (2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, 10**30)

#: ints a dim or an axis may be: small ones mostly, then the edges.
ints = st.one_of(
    st.integers(0, 6), st.integers(-3, -1), st.sampled_from(HUGE + tuple(-h for h in HUGE)),
    st.integers(-(2**70), 2**70),
)

#: dim tokens as typed: good ones, then everything a parser must refuse politely.
dim_tokens = st.one_of(
    st.integers(0, 8).map(str),
    st.sampled_from(["1", "?", "N", "M", "batch", "_", "x1", "max_len", "2..5", "3..", "0..", "5..2", "2..2",
                     "0..1", "1..9223372036854775807", "9223372036854775807", "9223372036854775808",
                     str(2**62), str(2**64), str(10**30), "1" * 5000, "2.." + "9" * 5000, "0" * 30 + "7"]),
    st.sampled_from(["", " ", "-1", "-0", "+3", "3.0", "1e3", "0x10", "1_000", "..", "...", "2...5", "..5",
                     "?..", "N..3", "٣", "１", "²", "ſ", "ＮＮ", "N N", "\x00", "\t", "\n", "\u2028", "∞", "'3'",
                     "[3]", "(3)", "{3}", "3,", ",", "x", "X", "e", "nan", "None", "-" + "1" * 5000]),
    st.text(max_size=6),
)

_separators = st.sampled_from([",", ", ", " ,", "x", "X", ";", " ", "", ",,"])
_wrappers = st.sampled_from([("", ""), ("[", "]"), ("(", ")"), ("[", ")"), ("(", ""), ("", "]"), (" [ ", " ] ")])


@st.composite
def shape_texts(draw) -> str:
    """A shape as a user might type it, or mistype it."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.text(max_size=30))
    if kind == 1:
        return draw(st.sampled_from(["", "[]", "()", "scalar", "SCALAR", "[scalar]", "[,]", "5,", "(5,)", ",5",
                                     "[[2]]", "2,3,", "2x3x", "xx", "[" * 50, "1," * 64 + "1", "1," * 63 + "1"]))
    n = draw(st.integers(0, 6))
    sep = draw(_separators)
    left, right = draw(_wrappers)
    return left + sep.join(draw(st.lists(dim_tokens, min_size=n, max_size=n))) + right


#: numpy scalars and arrays, as callers holding numpy values pass them.
numpy_values = st.sampled_from([np.int64(3), np.int64(-1), np.uint64(2**64 - 1), np.int8(1), np.bool_(True),
                                np.float64(2.0), np.array(3), np.array([2, 3]), np.array([], dtype=np.int64)])

#: dims as Python callers pass them: ints (negative, huge), Sym, Interval, text, and wrong types.
dims = st.one_of(
    st.integers(0, 6), st.integers(0, 6), st.just(1), st.just(1),
    ints,
    st.sampled_from([Sym("N"), Sym("M"), Interval(0, None), Interval(2, 5), Interval(1, 3), Interval(3, None),
                     Interval(0, 1), Interval(1, 2**63 - 1)]),
    st.sampled_from(["N", "?", "2..5", "1..", "3", "-1", "x", "", "٣"]),
    st.sampled_from([None, True, False, 2.0, float("nan"), b"3", [3], (), object(), 10**400, -(10**400), 10**5000,
                     -(10**5000)]),
    numpy_values,
)


@st.composite
def shapes(draw, max_rank: int = 5):
    """One shape as a Python caller passes it: mostly a tuple of dims, sometimes a list, a text, a bare dim
    or something that is not a shape at all."""
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return draw(shape_texts())
    if kind == 1:
        return draw(st.sampled_from([None, 3, -1, 2.5, True, "x", b"2,3", {"a": 1}, {2, 3}, range(3),
                                     [1] * 65, tuple([1] * 64), (10**400,)]))
    if kind == 2 and draw(st.booleans()):
        return draw(numpy_values)
    if kind == 2:
        return iter(draw(st.lists(st.integers(0, 3), max_size=3)))  # an iterator: read once
    rank = draw(st.integers(0, max_rank))
    shape = draw(st.lists(dims if kind <= 4 else st.integers(0, 4) | st.just(1), min_size=rank, max_size=rank))
    return shape if kind == 3 else tuple(shape)


#: values for an int attribute (axis): any type, any size.
axis_values = st.one_of(
    st.integers(-6, 6), ints, numpy_values,
    st.sampled_from([None, True, False, 1.0, 1.5, float("inf"), "1", "x", "", [1], (0,), 10**400, -(10**400),
                     10**5000, -(10**5000)]),
)

#: values for an axes attribute (axes_mapping): lists with duplicates, unsorted, out of range, wrong types.
axes_values = st.one_of(
    st.lists(st.integers(-2, 6), max_size=6), numpy_values, st.lists(numpy_values, max_size=3),
    st.lists(st.integers(-2, 6), max_size=6).map(tuple),
    st.lists(ints, max_size=4),
    st.lists(st.integers(0, 5), max_size=5).map(lambda a: ",".join(map(str, a))),
    st.sampled_from([None, 1, -1, 2**63, 10**400, True, 1.0, "1,2", "[1,2]", "(0,)", "", "[]", "1,,2", "1;2", "x",
                     "1" * 5000, " 1 , 2 ", "١", "1_0", [1, "2"], [1.0], [True], [None], [10**400], [10**5000],
                     {1: 2}, {1, 2}, object(), "9223372036854775808", [1] * 65]),
)

#: values for a bool attribute (ncnn_order, transA, transB) and for onnx-legacy's broadcast.
bool_values = st.sampled_from([None, True, False, 0, 1, 2, -1, "x", "1", "true", 1.0, 0.5, 10**400, 10**5000, [1]])

#: values for openvino-select's auto_broadcast.
choice_values = st.sampled_from([None, "numpy", "pdpd", "none", "NUMPY", "Pdpd", " numpy", "explicit", "", 1, True,
                                 ["numpy"], "nümpy"])

#: which values go with which attribute name; unknown names get anything.
ATTR_VALUES = {
    "axis": axis_values, "axes_mapping": axes_values, "broadcast": bool_values, "ncnn_order": bool_values,
    "transA": bool_values, "transB": bool_values, "auto_broadcast": choice_values,
}

ANY_VALUE = st.one_of(axis_values, axes_values, bool_values, choice_values)


@st.composite
def attrs_for(draw, rule_attrs: tuple) -> dict:
    """Attributes for a rule: mostly its own (each with any value), sometimes another rule's or none at all."""
    names = list(rule_attrs)
    if draw(st.integers(0, 5)) == 0:
        names.append(draw(st.sampled_from(sorted(ATTR_VALUES) + ["alignment", "start_axis", "Axis", ""])))
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names))) if names else []
    return {name: draw(ATTR_VALUES.get(name, ANY_VALUE)) for name in chosen}


policies = st.sampled_from(["permissive", "permissive", "permissive", "strict", "Strict", "", None, 1])

names_values = st.one_of(
    st.none(), st.none(), st.none(),
    st.lists(st.sampled_from(["A", "B", "x", "data", "", "a\nb", "é", "C" * 100, "\udcff"]), max_size=4),
    st.sampled_from(["AB", 3, [1, 2], [None, None], ("a", "b", "c")]),
)


#: dims a well-formed request has: small sizes and 1s mostly, 0, the largest int64s, symbols, intervals.
valid_dims = st.one_of(
    st.integers(1, 4), st.just(1), st.just(1), st.just(0), st.sampled_from([2**62, 2**63 - 1]),
    st.sampled_from([Sym("N"), Sym("M"), Interval(0, None), Interval(2, 5), Interval(1, 3), Interval(0, 1)]),
)


def valid_shapes(max_rank: int = 5):
    """Well-formed shapes: tuples of valid dims, mostly static."""
    static = st.lists(st.integers(1, 4) | st.just(1) | st.just(0), max_size=max_rank).map(tuple)
    return static | static | st.lists(valid_dims, max_size=max_rank).map(tuple)
