"""The cases a rule accepts, built from the rule's definition: the drawing parameters and their checks,
one generator per rule, and :class:`BroadcastCase` (for :mod:`bcast.testing.strategies`; hypothesis is
imported only through that module, which checks it is installed first)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any
from collections.abc import Callable

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..rules import RULES, infer, result_shape
from ..rules._base import check_attrs, get_rule


@dataclass(frozen=True)
class BroadcastCase:
    """A case the rule accepts.

    ``attrs`` holds every attribute to pass back (drawn and fixed), so
    ``bcast.result_shape(*case.shapes, rule=case.rule, **case.attrs) == case.result``;
    ``result`` is in the shapes' order (ncnn's [w,h,d,c] when ``ncnn_order``),
    ``plan`` the rule's :class:`~bcast.core.plan.Plan` (numpy order)."""

    rule: str
    shapes: tuple
    attrs: dict
    result: tuple
    plan: Plan = field(repr=False, compare=False)


# --------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class _Params:
    """What a generator may draw: arity, rank and side bounds, fixed attributes."""

    rule: str
    n: int
    rmin: int
    rmax: int
    lo: int
    hi: int
    fixed: dict
    umax: int = 0  # max_dims and min_side as the caller gave them (ncnn's limits aside)
    ulo: int = 0
    core: bool = False  # every input has a dim placed on a column it shares with another

    @property
    def one_ok(self) -> bool:
        return self.lo <= 1 <= self.hi


#: Rank and side limits of rules that have them: (max rank, least side).
_LIMITS = {"ncnn": (4, 1)}


def _check_int(name: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name}={value!r} must be an integer")
    if value < least:
        raise InvalidArgument(f"{name}={value} must be at least {least}")
    return value


def _params(rule: Any, num_shapes, min_dims, max_dims, min_side, max_side, attrs) -> _Params:
    try:
        r = get_rule(rule)
        known = {a.name: a for a in r.attrs}
        for key in attrs:
            if key not in known:
                check_attrs(r, {key: attrs[key]})  # raises: the rule has no such attribute
        fixed = {k: known[k].normalize(r.name, v) for k, v in attrs.items()}
    except InputError as e:
        raise InvalidArgument(str(e)) from None
    if num_shapes is None:
        n = 2 if r.max_inputs is None else r.max_inputs
    else:
        n = _check_int("num_shapes", num_shapes, 1)
        if r.max_inputs is not None and not r.min_inputs <= n <= r.max_inputs:
            raise InvalidArgument(
                f"num_shapes={n}, but {r.name} takes {r.arity_text()}: num_shapes is for variadic rules "
                f"({', '.join(x.name for x in RULES.values() if x.max_inputs is None)})"
                + (" and onnx-gemm (2 or 3)" if r.name != "onnx-gemm" else ""))
        if n < r.min_inputs:
            raise InvalidArgument(f"num_shapes={n}, but {r.name} takes {r.arity_text()}")
    for name, v in (("min_dims", min_dims), ("max_dims", max_dims), ("min_side", min_side), ("max_side", max_side)):
        _check_int(name, v, 0)
    if min_dims > max_dims:
        raise InvalidArgument(f"min_dims={min_dims} is larger than max_dims={max_dims}")
    if min_side > max_side:
        raise InvalidArgument(f"min_side={min_side} is larger than max_side={max_side}")
    if max_dims > 64:
        raise InvalidArgument(f"max_dims={max_dims}: bcast takes rank 64 at most")
    rank_cap, side_floor = _LIMITS.get(r.name, (64, 0))
    if fixed.get("max_rank") is not None:  # a framework's limit: no drawn shape is above it
        rank_cap = min(rank_cap, fixed["max_rank"])
    return _Params(r.name, n, min_dims, min(max_dims, rank_cap), max(min_side, side_floor), max_side, fixed,
                   max_dims, min_side)


def _impossible(p: _Params, why: str, **given) -> InvalidArgument:
    shown = ", ".join(f"{k}={v!r}" for k, v in given.items())
    return InvalidArgument(f"Given {shown}, {p.rule} has no such case: {why}")


# --------------------------------------------------------------------------- drawing blocks


def _side(draw, p: _Params) -> int:
    return draw(st.integers(p.lo, p.hi))


def _dims(draw, p: _Params, n: int) -> tuple:
    return tuple(_side(draw, p) for _ in range(n))


def _stretch(draw, p: _Params, dims) -> tuple:
    """``dims`` with some replaced by 1 (stretched in the output), where 1 is a side allowed."""
    return tuple(1 if p.one_ok and d != 1 and draw(st.booleans()) else d for d in dims)


def _rank(draw, lo: int, hi: int) -> int:
    return draw(st.integers(lo, hi))


def _pick(draw, p: _Params, exclude=()) -> int:
    """A side that is not 1 and not in ``exclude`` (a bijection from a range: shrinks toward small)."""
    banned = sorted({1, *exclude} & set(range(p.lo, p.hi + 1)))
    v = draw(st.integers(p.lo, p.hi - len(banned)))
    for b in banned:
        if v >= b:
            v += 1
    return v


def _merge_col(base: int, dims) -> int:
    """The output dim of a column built from ``base`` (each dim ``base`` or a stretched 1)."""
    return base if base in dims else 1


def _right_merge(shapes, base) -> tuple:
    """numpy's output of shapes that are suffixes of ``base`` with 1s put in."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank, 0, -1):
        out.append(_merge_col(base[-k], [s[-k] for s in shapes if len(s) >= k]))
    return tuple(out)


# --------------------------------------------------------------------------- generators of valid cases
# Each returns (shapes, attrs, expected output shape in the shapes' order).


def _gen_numpy(draw, p: _Params):
    rank = _rank(draw, p.rmin, p.rmax)
    base = _dims(draw, p, rank)
    shapes = [_stretch(draw, p, base[rank - _rank(draw, p.rmin, rank):]) for _ in range(p.n)]
    return tuple(shapes), {}, _right_merge(shapes, base)


def _gen_none(draw, p: _Params):
    base = _dims(draw, p, _rank(draw, p.rmin, p.rmax))
    return (base,) * p.n, {}, base


def _gen_equal_rank(draw, p: _Params):
    base = _dims(draw, p, _rank(draw, p.rmin, p.rmax))
    shapes = [_stretch(draw, p, base) for _ in range(p.n)]
    return tuple(shapes), {}, _right_merge(shapes, base)


def _gen_unidirectional(draw, p: _Params):
    rank = _rank(draw, p.rmin, p.rmax)
    a = _dims(draw, p, rank)
    b = _stretch(draw, p, a[rank - _rank(draw, max(p.rmin, p.core), rank):])
    return (a, b), {}, a


def _pdpd_least_rank(p: _Params, axis) -> int:
    """The least rank of A for which B fits at a fixed ``axis``."""
    if axis is None or axis == -1:
        return p.rmin
    return max(p.rmin, axis + max(p.core, 0 if p.one_ok else p.rmin))


def _place_pdpd(draw, p: _Params, a: tuple, axis=None):
    """B placed into ``a`` by PDPD, from ``axis`` (None: drawn): returns (B, axis).

    B is a run of ``a``'s dims (some stretched to 1) from the start axis, and
    possibly trailing 1s that run past ``a``'s end (rule 5 ignores them)."""
    rank = len(a)
    least = max(p.rmin, p.core)
    if axis is not None and axis >= 0:
        start = axis
        rb = _rank(draw, least, rank if p.one_ok else rank - start)
    else:
        rb = _rank(draw, least, rank)
        if axis == -1 or not draw(st.booleans()):
            start = rank - rb
            axis = -1 if axis == -1 or draw(st.booleans()) else start
        else:
            top = rank - (p.core if rb else 0) if p.one_ok else rank - rb
            start = draw(st.integers(0, max(top, 0)))
            axis = start
    core = min(rb, rank - start)
    b = _stretch(draw, p, a[start:start + core]) + (1,) * (rb - core)
    return b, axis


def _gen_pdpd(draw, p: _Params):
    axis = p.fixed.get("axis")
    a = _dims(draw, p, _rank(draw, _pdpd_least_rank(p, axis), p.rmax))
    b, axis = _place_pdpd(draw, p, a, axis)
    return (a, b), {"axis": axis}, a


def _gen_broadcast_pdpd(draw, p: _Params):
    (target, data), attrs, out = _gen_pdpd(draw, p)
    return (data, target), attrs, out


def _gen_explicit(draw, p: _Params):
    fixed = p.fixed.get("axes_mapping")
    least = max(fixed) + 1 if fixed else p.rmin
    rank = _rank(draw, max(p.rmin, least), p.rmax)
    target = _dims(draw, p, rank)
    if fixed is not None:
        axes = tuple(fixed)
    else:
        rd = _rank(draw, max(p.rmin, p.core), rank)
        drawn: list[int] = []
        prev = -1
        for k in range(rd):
            prev = draw(st.integers(prev + 1, rank - (rd - k)))
            drawn.append(prev)
        axes = tuple(drawn)
    data = _stretch(draw, p, [target[ax] for ax in axes])
    return (data, target), {"axes_mapping": list(axes)}, target


def _merge(a: int, b: int) -> int:
    return b if a == 1 else a


def _gen_ncnn(draw, p: _Params):
    rank = _rank(draw, max(1, p.rmin), p.rmax)
    rl = _rank(draw, max(p.rmin, p.core), rank)
    base = list(_dims(draw, p, rank))
    if rl == rank or rl >= 2:  # same rank, or 2-D/3-D on the LEADING axes: either side stretches
        hi, lo = _stretch(draw, p, base), _stretch(draw, p, base[:rl])
        out = tuple(_merge_col(base[k], [hi[k]] + ([lo[k]] if k < rl else [])) for k in range(rank))
    elif rl == 0:
        hi, lo, out = tuple(base), (), tuple(base)
    elif draw(st.booleans()):  # 1-D on the first axis (inner); the tie: the last axis has that length too
        if draw(st.booleans()):
            base[-1] = base[0]
        hi, lo, out = tuple(base), (base[0],), tuple(base)
    else:  # 1-D on the last axis (outer): it matches that axis, is 1, or that axis is 1
        how = draw(st.sampled_from(("match", "one", "stretch") if p.one_ok else ("match",)))
        if how == "stretch":
            base[-1] = 1
        v = base[-1] if how == "match" else 1 if how == "one" else _side(draw, p)
        hi, lo = tuple(base), (v,)
        out = hi if v == base[0] else hi[:-1] + (_merge(hi[-1], v),)
    shapes: tuple[tuple, ...] = (lo, hi) if draw(st.booleans()) else (hi, lo)
    order = p.fixed["ncnn_order"] if "ncnn_order" in p.fixed else draw(st.booleans())
    if order:
        shapes, out = tuple(s[::-1] for s in shapes), out[::-1]
    return shapes, {"ncnn_order": order}, out


def _gen_legacy(draw, p: _Params):
    broadcast = p.fixed["broadcast"] if "broadcast" in p.fixed else int(draw(st.booleans()))
    axis = p.fixed.get("axis")
    fixed_axis = "axis" in p.fixed
    if not broadcast:
        a = _dims(draw, p, _rank(draw, p.rmin, p.rmax))
        return (a, a), {"broadcast": 0, "axis": axis}, a
    least = max(p.rmin, p.core) + (axis if axis is not None and axis >= 0 else 0)
    rank = _rank(draw, max(p.rmin, least), p.rmax)
    a = _dims(draw, p, rank)
    if not p.core and p.one_ok and draw(st.sampled_from((True, False, False, False))):  # one element: a scalar
        rb = _rank(draw, p.rmin, rank)
        if not fixed_axis:
            axis = draw(st.one_of(st.none(), st.integers(-1, rank)))
        return (a, (1,) * rb), {"broadcast": 1, "axis": axis}, a
    if axis is not None and axis >= 0:
        rb = _rank(draw, max(p.rmin, p.core), rank - axis)
        start = axis
    else:
        rb = _rank(draw, max(p.rmin, p.core), rank)
        start = rank - rb
        if not fixed_axis:
            axis = draw(st.sampled_from((None, -1, start)))
    b = list(a[start:start + rb])
    if p.one_ok and rb:  # leading and trailing 1s of B are ignored
        lead = draw(st.integers(0, rb - 1))  # B all 1s is the scalar case above
        trail = draw(st.integers(0, rb - 1 - lead))
        b[:lead] = [1] * lead
        b[rb - trail:] = [1] * trail
    return (a, tuple(b)), {"broadcast": 1, "axis": axis}, a


def _gen_paddle(draw, p: _Params):
    axis = p.fixed.get("axis")
    if not p.core and (axis is None or axis in (-1, 0)) and draw(st.booleans()):
        x = _dims(draw, p, _rank(draw, p.rmin, p.rmax))
        return (x, x), {"axis": -1 if axis is None else axis}, x
    least = max(p.rmin, p.core)
    if axis is not None and axis >= 0:
        rank = _rank(draw, _paddle_least_rank(p, axis), p.rmax)
        top = rank - 1 if axis else rank
        rs = _rank(draw, least, min(top, rank if p.one_ok else rank - axis))
        start = axis
    elif axis is not None:  # negative: start = rank - rs + axis + 1 >= 0
        rank = _rank(draw, max(p.rmin, -axis, least - axis - 1), p.rmax)
        rs = _rank(draw, least, min(rank + axis + 1, rank - (axis != -1)))
        start = rank - rs + axis + 1
    else:
        rank = _rank(draw, p.rmin, p.rmax)
        rs = _rank(draw, min(least, rank), rank)
        if rs == rank:
            start, axis = 0, draw(st.sampled_from((-1, 0)))
        elif rs >= 2 and p.one_ok and draw(st.booleans()):  # trailing 1s past the end (Paddle trims them)
            start = axis = draw(st.integers(rank - rs + 1, rank - 1))
        else:
            start = draw(st.integers(0, min(rank - rs, rank - 1)))  # Paddle's axis is below the rank
            neg = start - (rank - rs) - 1
            axis = neg if neg >= -rank and draw(st.booleans()) else start
    core = min(rs, rank - start)
    big = _stretch(draw, p, _dims(draw, p, rank))
    base = list(big)
    small = []
    for k in range(core):
        d = _side(draw, p) if big[start + k] == 1 else big[start + k]
        base[start + k] = d
        small.append(d)
    small = _stretch(draw, p, small) + (1,) * (rs - core)
    out = list(big)
    for k in range(core):
        out[start + k] = _merge(big[start + k], small[k])
    shapes = (small, big) if rs < rank and draw(st.booleans()) else (big, small)
    return shapes, {"axis": axis}, tuple(out)


def _paddle_least_rank(p: _Params, axis: int) -> int:
    """The least larger rank for which the smaller input fits at a fixed ``axis``."""
    least = max(p.rmin, p.core)
    if axis < 0:
        return max(p.rmin, -axis, least - axis - 1)
    return max(p.rmin, axis + 1, least + (axis > 0), axis + (0 if p.one_ok else least))


def _gen_select(draw, p: _Params):
    mode = p.fixed.get("auto_broadcast") or draw(st.sampled_from(("numpy", "pdpd", "none")))
    axis = p.fixed.get("axis")
    if mode != "pdpd":
        shapes, _, out = (_gen_numpy if mode == "numpy" else _gen_none)(draw, replace(p, n=3))
        return shapes, {"auto_broadcast": mode, "axis": -1 if axis is None else axis}, out
    then = _dims(draw, p, _rank(draw, _pdpd_least_rank(p, axis), p.rmax))
    else_, axis = _place_pdpd(draw, p, then, axis)
    cond, _ = _place_pdpd(draw, p, then, axis)
    return (cond, then, else_), {"auto_broadcast": "pdpd", "axis": axis}, then


def _gen_prelu(draw, p: _Params):
    rank = _rank(draw, p.rmin, p.rmax)
    data = _dims(draw, p, rank)
    if rank >= 2 and p.rmin <= 1 and draw(st.booleans()):
        return (data, (data[1],)), {}, data
    slope = _stretch(draw, p, data[rank - _rank(draw, max(p.rmin, p.core), rank):])
    return (data, slope), {}, data


def _gen_gemm(draw, p: _Params):
    ta = p.fixed["transA"] if "transA" in p.fixed else draw(st.booleans())
    tb = p.fixed["transB"] if "transB" in p.fixed else draw(st.booleans())
    m, k, n = _dims(draw, p, 3)
    shapes = [(k, m) if ta else (m, k), (n, k) if tb else (k, n)]
    if p.n == 3:
        rc = _rank(draw, max(p.rmin, p.core), min(2, p.rmax))
        shapes.append(_stretch(draw, p, (m, n)[2 - rc:]))
    return tuple(shapes), {"transA": int(ta), "transB": int(tb)}, (m, n)


_GENERATORS: dict[str, Callable] = {
    "numpy": _gen_numpy,
    "unidirectional": _gen_unidirectional,
    "none": _gen_none,
    "pdpd": _gen_pdpd,
    "bidirectional": _gen_numpy,
    "explicit": _gen_explicit,
    "equal-rank": _gen_equal_rank,
    "ncnn": _gen_ncnn,
    "onnx-legacy": _gen_legacy,
    "paddle": _gen_paddle,
    "openvino-select": _gen_select,
    "openvino-prelu": _gen_prelu,
    "onnx-gemm": _gen_gemm,
    "openvino-broadcast-pdpd": _gen_broadcast_pdpd,
}
assert set(_GENERATORS) == set(RULES), "every rule has a generator"


def _check_valid_params(p: _Params) -> None:
    """Refuse, up front, bounds and fixed attributes no valid case satisfies."""
    given = {"min_dims": p.rmin, "max_dims": p.rmax}
    if p.lo > p.hi:
        raise _impossible(p, f"its dims are at least {p.lo}", min_side=p.lo, max_side=p.hi)
    if p.rule == "onnx-gemm" and not p.rmin <= 2 <= p.rmax:
        raise _impossible(p, "A and B have rank 2", **given)
    if p.rule == "ncnn" and p.rmin > 4:
        raise _impossible(p, "an ncnn blob has rank 1 to 4", min_dims=p.rmin)
    axis = p.fixed.get("axis")
    if p.rule in ("pdpd", "openvino-broadcast-pdpd") or (
            p.rule == "openvino-select" and p.fixed.get("auto_broadcast") == "pdpd"):
        if axis is not None and axis < -1:
            raise _impossible(p, "pdpd's axis is -1 or an axis of A", axis=axis)
        if _pdpd_least_rank(p, axis) > p.rmax:
            raise _impossible(p, f"B must fit A from axis {axis}", axis=axis, **given)
    if p.rule == "paddle" and axis is not None:
        if _paddle_least_rank(p, axis) > p.rmax:
            raise _impossible(p, "axis must be in [-R, R) for R the larger rank", axis=axis, **given)
    if p.rule == "onnx-legacy" and p.fixed.get("broadcast", 1) and axis is not None and axis >= 0:
        if axis + p.rmin > p.rmax:
            raise _impossible(p, f"B must fit A from axis {axis}", axis=axis, **given)
    if p.rule == "explicit" and "axes_mapping" in p.fixed:
        axes = list(p.fixed["axes_mapping"])
        if any(a < 0 for a in axes) or axes != sorted(set(axes)):
            raise _impossible(p, "axes_mapping must be strictly increasing axes >= 0", axes_mapping=axes)
        if not p.rmin <= len(axes) <= p.rmax or (axes and max(axes) + 1 > p.rmax):
            raise _impossible(p, "data has one dim per entry and the target an axis for each", axes_mapping=axes,
                              **given)


def _finish_valid(p: _Params, shapes, attrs, expected) -> BroadcastCase:
    attrs = {**attrs, **p.fixed}
    try:
        plan = infer(*shapes, rule=p.rule, **attrs)
        result = result_shape(*shapes, rule=p.rule, **attrs)
    except BroadcastError as e:  # pragma: no cover - a bug in a generator or a rule
        raise AssertionError(f"bcast.strategies drew {shapes} {attrs} as broadcastable, but: {e}") from None
    if result != tuple(expected):  # pragma: no cover
        raise AssertionError(f"bcast.strategies built {shapes} {attrs} for {expected}, {p.rule} gives {result}")
    return BroadcastCase(p.rule, tuple(tuple(s) for s in shapes), attrs, result, plan)
