"""The ways a rule refuses, each a constructor of a refused case, and :class:`NotBroadcastableCase` (for
:mod:`bcast.testing.strategies`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ..core.errors import BroadcastError
from ..rules import RULES
from ._accepted import (
    _GENERATORS,
    BroadcastCase,
    _check_valid_params,
    _dims,
    _finish_valid,
    _gen_explicit,
    _gen_select,
    _Params,
    _pick,
    _rank,
)


@dataclass(frozen=True)
class NotBroadcastableCase:
    """A case the rule refuses: ``reason`` is the :class:`~bcast.BroadcastError`'s
    reason, ``kind`` its kind (``dims``, ``rank``, ``attribute``, ``unsupported``),
    ``error`` the error itself."""

    rule: str
    shapes: tuple
    attrs: dict
    reason: str
    kind: str
    error: BroadcastError = field(repr=False, compare=False)


# --------------------------------------------------------------------------- ways to refuse
# Each breaker returns (shapes, attrs) that the rule refuses.


def _conflict(draw, p: _Params):
    """Two dims in one output column made different and both not 1 (for one-way rules: the
    owner's and another's), in a valid case whose every input shares a column."""
    q = replace(p, rmin=max(p.rmin, 1), core=True)
    case = _finish_valid(q, *_GENERATORS[p.rule](draw, q))
    plan = case.plan
    cols: dict = {}
    for i, m in enumerate(plan.axis_maps):
        for k, ax in enumerate(m):
            if ax is not None:
                cols.setdefault(ax, []).append((i, k))
    shared = sorted(ax for ax, entries in cols.items() if len({i for i, _ in entries}) >= 2)
    ax = draw(st.sampled_from(shared))
    entries = cols[ax]
    first = draw(st.integers(0, len(entries) - 2))
    (i, k), (j, m) = entries[first], entries[draw(st.integers(first + 1, len(entries) - 1))]
    a = _pick(draw, p)
    b = _pick(draw, p, exclude=(a,))
    if i in _owners(case) and p.one_ok and draw(st.booleans()):
        a = 1  # the owner's 1 does not stretch: only the other input is broadcast (into it)
    shapes = [list(s) for s in plan.inputs]
    shapes[i][k], shapes[j][m] = a, b
    one_d = [x for x in (i, j) if len(shapes[x]) == 1 and len(shapes[(x + 1) % 2]) >= 2]
    if p.rule in ("ncnn", "openvino-prelu") and one_d:
        # a 1-D input lands by its length (ncnn: on the first axis if it matches; PRelu: per channel if
        # it equals data[1]): give the other input's first/channel axis and last axis the other value
        other = shapes[(one_d[0] + 1) % 2]
        other[0 if p.rule == "ncnn" else 1] = other[-1] = a if one_d[0] == j else b
    drawn = [tuple(s) for s in shapes]
    if case.attrs.get("ncnn_order"):
        drawn = [s[::-1] for s in drawn]
    return drawn, case.attrs


def _owners(case: BroadcastCase) -> set:
    """The inputs of a one-way rule whose dims the others must fit (a 1 there does not stretch)."""
    if case.rule == "openvino-select":
        return {1} if case.attrs["auto_broadcast"] == "pdpd" else set(range(3)) if case.attrs[
            "auto_broadcast"] == "none" else set()
    return _OWNERS.get(case.rule, set(range(len(case.shapes))) if case.rule == "none" else set())


_OWNERS = {"unidirectional": {0}, "pdpd": {0}, "explicit": {1}, "openvino-broadcast-pdpd": {1}, "onnx-gemm": {0, 1},
           "openvino-prelu": {0}, "onnx-legacy": {0}}


def _shape(draw, p: _Params, lo: int, hi: int) -> tuple:
    return _dims(draw, p, _rank(draw, lo, hi))


def _rank_too_high(draw, p: _Params):
    """The input that is broadcast INTO another gets a higher rank than that one."""
    if p.rule == "onnx-gemm":
        return _gemm_rank(draw, p)
    small = _shape(draw, p, p.rmin, p.rmax - 1)
    big = _shape(draw, p, len(small) + 1, p.rmax)
    if p.rule in ("none", "equal-rank"):
        shapes = [small] * p.n
        shapes[draw(st.integers(0, p.n - 1))] = big
        return shapes, {}
    attrs = {"broadcast": 1} if p.rule == "onnx-legacy" else {}
    return ((big, small) if p.rule == "openvino-broadcast-pdpd" else (small, big)), attrs


def _gemm_rank(draw, p: _Params):
    """Gemm's A or B of a rank other than 2, or C of rank 3 or more."""
    ranks = [r for r in range(p.rmin, p.rmax + 1) if r != 2]
    m, k, n = _dims(draw, p, 3)
    shapes = [(m, k), (k, n), (m, n)]
    if p.rmax >= 3 and p.n == 3 and draw(st.booleans()):
        shapes[2] = _shape(draw, p, max(3, p.rmin), p.rmax)
    else:
        shapes[draw(st.integers(0, 1))] = _dims(draw, p, draw(st.sampled_from(ranks)))
    return shapes[:p.n], {"transA": 0, "transB": 0}


def _axis_out(draw, p: _Params):
    """An axis that does not fit: pdpd's below -1 or past A's end; Paddle's out of [-R, R) or not
    -1/0 for equal ranks; onnx-legacy's past rank(A) - rank(B)."""
    if p.rule in ("pdpd", "openvino-broadcast-pdpd", "openvino-select"):
        (shapes, attrs, _) = (_gen_select if p.rule == "openvino-select" else _GENERATORS[p.rule])(
            draw, replace(p, fixed={**p.fixed, "auto_broadcast": "pdpd"} if p.rule == "openvino-select" else p.fixed))
        return shapes, {**attrs, "axis": draw(st.integers(-4, -2))}
    if p.rule == "paddle":
        x = _shape(draw, p, max(p.rmin + 1, 1), p.rmax)
        rank = len(x)
        y = _dims(draw, p, _rank(draw, p.rmin, rank - 1))
        axis = draw(st.one_of(st.integers(rank, rank + 2), st.integers(-rank - 2, -rank - 1)))
        return ((x, y) if draw(st.booleans()) else (y, x)), {"axis": axis}
    # onnx-legacy: B with a dim that is not 1 placed past A's end
    a = _shape(draw, p, max(p.rmin, 1), p.rmax)
    b = list(_dims(draw, p, _rank(draw, max(p.rmin, 1), len(a))))
    b[draw(st.integers(0, len(b) - 1))] = _pick(draw, p)
    return (a, tuple(b)), {"broadcast": 1, "axis": draw(st.integers(len(a) - len(b) + 1, len(a) + 1))}


def _bad_mapping(draw, p: _Params):
    """An axes_mapping of the wrong length, with an axis past the target, or not increasing."""
    (data, target), attrs, _ = _gen_explicit(draw, replace(p, rmin=max(p.rmin, 1)))
    axes = list(attrs["axes_mapping"])
    how = draw(st.sampled_from(("length", "range", "order") if len(axes) >= 2 else ("length", "range")))
    if how == "length":
        axes = axes[:-1] if draw(st.booleans()) else axes + [len(target) - 1]
    elif how == "range":
        axes[-1] = draw(st.integers(len(target), len(target) + 2))
    else:  # a repeat, or two entries swapped
        k = draw(st.integers(0, len(axes) - 2))
        if draw(st.booleans()):
            axes[k + 1] = axes[k]
        else:
            axes[k], axes[k + 1] = axes[k + 1], axes[k]
    return (data, target), {"axes_mapping": axes}


def _ncnn_unsupported(draw, p: _Params):
    """What no ncnn blob can be: rank 5 or more, two scalars, a 0-size dim."""
    ways = [w for w, ok in (("rank", p.umax >= 5), ("scalars", p.rmin == 0), ("zero", p.ulo == 0)) if ok]
    how = draw(st.sampled_from(ways))
    other = _shape(draw, p, max(p.rmin, 1), max(p.rmax, p.rmin, 1))
    if how == "rank":
        bad = _dims(draw, p, _rank(draw, max(5, p.rmin), p.umax))
    elif how == "scalars":
        bad, other = (), ()
    else:
        dims = list(_shape(draw, p, max(p.rmin, 1), p.rmax))
        dims[draw(st.integers(0, len(dims) - 1))] = 0
        bad = tuple(dims)
    return ((bad, other) if draw(st.booleans()) else (other, bad)), {}


def _gemm_k(draw, p: _Params):
    """Gemm's A and B with different inner dims (K)."""
    m, n, k = _dims(draw, p, 3)
    k2 = draw(st.integers(p.lo, p.hi - 1))
    k2 += k2 >= k
    ta, tb = p.fixed.get("transA", False), p.fixed.get("transB", False)
    shapes = [(k, m) if ta else (m, k), (n, k2) if tb else (k2, n), (m, n)]
    return shapes[:p.n], {"transA": int(ta), "transB": int(tb)}


#: How each rule can refuse: (breaker, when it applies to the parameters, the attributes it sets).
_BREAKERS: dict[str, tuple] = {
    "conflict": (_conflict, lambda p: p.rmax >= 1 and _sides(p) >= 2 and p.n >= 2, ()),
    "rank": (_rank_too_high, lambda p: p.rmax > p.rmin and (p.rule not in ("none", "equal-rank") or p.n >= 2)
             and (p.rule != "onnx-gemm" or any(r != 2 for r in range(p.rmin, p.rmax + 1))), ()),
    "axis": (_axis_out, lambda p: p.rmax >= 1 and (p.rule != "paddle" or p.rmax > p.rmin)
             and (p.rule != "onnx-legacy" or _sides(p) >= 1), ("axis", "broadcast", "auto_broadcast")),
    "mapping": (_bad_mapping, lambda p: p.rmax >= 1, ("axes_mapping",)),
    "unsupported": (_ncnn_unsupported, lambda p: p.umax >= 5 or p.rmin == 0 or p.ulo == 0, ()),
    "inner-dims": (_gemm_k, lambda p: p.hi > p.lo, ()),
}

_RULE_BREAKERS = {
    "numpy": ("conflict",),
    "unidirectional": ("conflict", "rank"),
    "none": ("conflict", "rank"),
    "pdpd": ("conflict", "rank", "axis"),
    "bidirectional": ("conflict",),
    "explicit": ("conflict", "mapping"),
    "equal-rank": ("conflict", "rank"),
    "ncnn": ("conflict", "unsupported"),
    "onnx-legacy": ("conflict", "rank", "axis"),
    "paddle": ("conflict", "axis"),
    "openvino-select": ("conflict", "axis"),
    "openvino-prelu": ("conflict", "rank"),
    "onnx-gemm": ("conflict", "rank", "inner-dims"),
    "openvino-broadcast-pdpd": ("conflict", "rank", "axis"),
}
assert set(_RULE_BREAKERS) == set(RULES), "every rule can refuse"


def _sides(p: _Params) -> int:
    """How many sides other than 1 may be drawn."""
    return p.hi - p.lo + 1 - p.one_ok


def _breakers(p: _Params) -> list:
    """The breakers of ``p.rule`` that apply: bounds allow them and they set no fixed attribute."""
    out = []
    for name in _RULE_BREAKERS[p.rule]:
        func, applies, sets = _BREAKERS[name]
        if applies(p) and not (set(sets) & set(p.fixed)) and _compatible(name, p):
            out.append(name)
    return out


def _compatible(name: str, p: _Params) -> bool:
    """Fixed attributes that rule a way of refusing out, beyond those it sets."""
    if name != "conflict":
        return True
    if p.rule == "onnx-gemm" and p.n == 2:  # no C: A and B share no output column
        return False
    try:
        _check_valid_params(replace(p, rmin=max(p.rmin, 1), core=True))
    except InvalidArgument:
        return False
    return True
