"""Hypothesis strategies that draw broadcast cases for every rule.

:func:`broadcastable` draws cases a rule accepts, :func:`not_broadcastable`
cases it refuses.  Both *construct* their cases (they never filter random
shapes): each rule has a generator that builds the shapes and attributes from
the rule's own definition -- mixed ranks and stretched 1s for numpy, B's
trailing 1s past A's end for pdpd, ncnn's inner/outer/tie placement of a 1-D
input, explicit ``axes_mapping``, onnx-legacy's ``broadcast`` and ``axis``,
Paddle's either-side placement, Select's three modes, PRelu's per-channel
slope, Gemm's transposes -- and each way a rule can refuse (two dims in one
column, a rank it does not take, an axis or mapping that does not fit) has a
constructor.  Ranks and sides are drawn as plain integers, so hypothesis
shrinks a failure toward low ranks and sides of 1, as
:func:`hypothesis.extra.numpy.mutually_broadcastable_shapes` does.

>>> from hypothesis import given
>>> import bcast
>>> from bcast.strategies import broadcastable
>>> @given(broadcastable("pdpd"))
... def test_pdpd_output_is_a(case):
...     assert case.result == case.shapes[0]
...     assert bcast.result_shape(*case.shapes, rule="pdpd", **case.attrs) == case.result
>>> test_pdpd_output_is_a()

hypothesis is optional: ``pip install 'bcast[hypothesis]'`` (the test extra
has it too); ``import bcast`` never imports this module.
"""

from __future__ import annotations

from ..core._require import require

require("hypothesis", "bcast.strategies")  # else one line naming the smallest extra that brings it
from hypothesis import strategies as st  # noqa: E402

from ..core.errors import BroadcastError  # noqa: E402
from ..rules import RULES, infer  # noqa: E402
from ._accepted import _GENERATORS, BroadcastCase, _check_valid_params, _finish_valid, _impossible, _params  # noqa: E402
from ._refused import _BREAKERS, NotBroadcastableCase, _breakers  # noqa: E402

for _case in (BroadcastCase, NotBroadcastableCase):  # the public names: help() and pickles say bcast.testing.strategies
    _case.__module__ = __name__

__all__ = ["BroadcastCase", "NotBroadcastableCase", "broadcastable", "examples", "not_broadcastable"]


def broadcastable(rule: str, num_shapes: int | None = None, min_dims: int = 0, max_dims: int = 4,
                  min_side: int = 1, max_side: int = 5, **attrs) -> st.SearchStrategy[BroadcastCase]:
    """A strategy for cases that ``rule`` broadcasts: :class:`BroadcastCase` values.

    Parameters
    ----------
    rule : str
        A rule name (``bcast rules``).
    num_shapes : int, optional
        For the variadic rules (``numpy``, ``none``): how many shapes (default
        2); ``onnx-gemm`` takes 2 or 3 (default 3, with C).  Other rules take
        their own arity; another value is an error.
    min_dims, max_dims : int
        Bounds on every input's rank (ncnn: 4 at most; Gemm's A and B: 2).
    min_side, max_side : int
        Bounds on every dim (ncnn: 1 at least).  A side of 1 is what stretches,
        so ``min_side > 1`` draws cases without stretching.
    **attrs
        Attributes to fix (``axis=1``, ``auto_broadcast="pdpd"``...); the others
        are drawn.

    >>> from bcast.strategies import broadcastable
    >>> broadcastable("pdpd", num_shapes=3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hypothesis.errors.InvalidArgument: num_shapes=3, but pdpd takes 2 shapes (A, B): num_shapes is for variadic ...
    """
    p = _params(rule, num_shapes, min_dims, max_dims, min_side, max_side, attrs)
    _check_valid_params(p)

    @st.composite
    def cases(draw):
        return _finish_valid(p, *_GENERATORS[p.rule](draw, p))

    return cases()


def not_broadcastable(rule: str, num_shapes: int | None = None, min_dims: int = 0, max_dims: int = 4,
                      min_side: int = 1, max_side: int = 5, **attrs) -> st.SearchStrategy[NotBroadcastableCase]:
    """A strategy for cases that ``rule`` refuses: :class:`NotBroadcastableCase` values.

    Parameters as for :func:`broadcastable`.  Each rule refuses in its own ways,
    all drawn: two dims of one output column that differ and are not 1 (for the
    one-way rules, a 1 of the output's owner facing another size), an input of
    too high a rank, an axis or ``axes_mapping`` that does not fit, what ncnn
    cannot hold (rank 5, two scalars, a 0-size dim, when the bounds allow them),
    Gemm's inner dims.  Attributes given are kept, and the ways that would have
    to change them are left out.

    >>> from bcast.strategies import not_broadcastable
    >>> not_broadcastable("numpy", num_shapes=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hypothesis.errors.InvalidArgument: Given num_shapes=1, ..., numpy has no such case: no way of refusing applies
    """
    p = _params(rule, num_shapes, min_dims, max_dims, min_side, max_side, attrs)
    ways = _breakers(p)
    if not ways:
        raise _impossible(p, "no way of refusing applies", num_shapes=p.n, min_dims=min_dims, max_dims=max_dims,
                          min_side=min_side, max_side=max_side, **attrs)

    @st.composite
    def cases(draw):
        way = draw(st.sampled_from(ways))
        shapes, drawn = _BREAKERS[way][0](draw, p)
        attrs_ = {k: v for k, v in {**drawn, **p.fixed}.items() if k in {a.name for a in RULES[p.rule].attrs}}
        try:
            plan = infer(*shapes, rule=p.rule, **attrs_)
        except BroadcastError as e:
            return NotBroadcastableCase(p.rule, tuple(tuple(s) for s in shapes), attrs_, e.reason, e.kind, e)
        raise AssertionError(  # pragma: no cover - a bug in a breaker or a rule
            f"bcast.strategies drew {shapes} {attrs_} as not broadcastable ({way}), but {p.rule} gives {plan.shape}")

    return cases()


def examples(strategy: st.SearchStrategy, n: int, *, seed: int = 0) -> list:
    """``n`` values drawn from ``strategy``, the same ones for the same ``seed``
    (hypothesis's generation, no shrinking, no example database; fewer when the
    strategy has fewer distinct values).  For reports and scripts; tests use
    ``@given``.

    >>> [c.shapes for c in examples(broadcastable("numpy", max_dims=1, max_side=2), 3, seed=1)][:1]
    [((), ())]
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fix_seed

    out: list = []

    @fix_seed(seed)
    @settings(max_examples=n, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value):
        if len(out) < n:
            out.append(value)

    collect()
    return out
