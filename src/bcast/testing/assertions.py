"""Assertions for tests that broadcast: a failure shows the aligned table and the difference.

:func:`assert_broadcast` checks what a rule makes of some shapes (or arrays):
that they broadcast, to an expected shape, or that they do not.
:func:`assert_plans_equal` compares two :class:`~bcast.core.plan.Plan` values.  On
failure both raise an ``AssertionError`` whose message is the aligned table
(:meth:`Plan.explain`, or the error's table) and, line by line, what differs.

>>> from bcast.testing import assert_broadcast
>>> assert_broadcast((8, 1, 6, 1), (7, 1, 5), expected=(8, 7, 6, 5)).shape
(8, 7, 6, 5)
>>> assert_broadcast((2, 3, 4, 5), (3, 4), rule="pdpd", axis=1, expected=(2, 3, 4, 6))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
AssertionError: pdpd [axis=1]: A (2,3,4,5), B (3,4) -> (2,3,4,5), expected (2,3,4,6)
  axis 3 (from right -1): 5, expected 6
<BLANKLINE>
pdpd [axis=1, start_axis=1]: A (2,3,4,5), B (3,4) -> (2,3,4,5)
<BLANKLINE>
  axis         0   1   2   3
...

With pytest, bcast's plugin (:mod:`bcast.testing.pytest_plugin`, loaded through the
``pytest11`` entry point) makes a failed ``assert plan == other`` print the
same: both tables and the fields that differ.
"""

from __future__ import annotations

from typing import Any

from ..core._format import format_shape
from ..core.errors import BroadcastError
from ..views.explain import explain_error, explain_plan
from ..core.plan import Plan
from ..rules import infer
from ..core.shapes import as_shape

__all__ = ["assert_broadcast", "assert_plans_equal", "plan_differences"]

_ANY = object()


def _shape_of(x: Any):
    """An array's shape (anything with ``.shape`` that is not itself a shape), else ``x``."""
    shape = getattr(x, "shape", None)
    return tuple(shape) if shape is not None and not isinstance(x, (tuple, list, str)) else x


def _query(rule: str, shapes, attrs: dict) -> str:
    shown = ", ".join(f"{k}={list(v) if isinstance(v, tuple) else v}" for k, v in attrs.items())
    return rule + (f" [{shown}]" if shown else "")


def shape_differences(got: tuple, want: tuple) -> list:
    """One line per difference between two output shapes (rank, then each axis).

    >>> shape_differences((2, 3), (2, 4))
    ['axis 1 (from right -1): 3, expected 4']
    >>> shape_differences((3,), (2, 3))
    ['rank 1, expected 2']
    """
    if len(got) != len(want):
        return [f"rank {len(got)}, expected {len(want)}"]
    n = len(got)
    return [f"axis {k} (from right {k - n}): {g}, expected {w}" for k, (g, w) in enumerate(zip(got, want)) if g != w]


def assert_broadcast(*shapes, rule: str = "numpy", expected: Any = _ANY, reason: str | None = None, **attrs):
    """Assert what ``rule`` makes of ``shapes`` (shapes, or arrays: their ``.shape``).

    Parameters
    ----------
    *shapes
        The inputs: shapes as :func:`bcast.infer` takes them, or arrays.
    rule : str
        The rule (default ``"numpy"``).
    expected : shape or ``bcast.BroadcastError``, optional
        The output shape they must broadcast to (in the inputs' order: ncnn's
        [w,h,d,c] with ``ncnn_order=True``), or ``bcast.BroadcastError``: they
        must not broadcast.  Left out: they must broadcast, to any shape.
    reason : str, optional
        With ``expected=BroadcastError``: a text the error's reason contains.
    **attrs
        The rule's attributes.

    Returns the :class:`~bcast.core.plan.Plan` (the ``BroadcastError`` when a
    refusal was expected).  Raises ``AssertionError`` with the aligned table and
    the difference; a malformed request raises :class:`bcast.InputError`.

    >>> assert_broadcast((2, 3), (4,), expected=BroadcastError, reason="equal or one of them 1").kind
    'dims'
    """
    shapes = tuple(_shape_of(s) for s in shapes)
    query = _query(rule, shapes, attrs)
    refusal = expected is BroadcastError
    try:
        plan = infer(*shapes, rule=rule, **attrs)
    except BroadcastError as err:
        if not refusal:
            want = "" if expected is _ANY else f", expected {format_shape(as_shape(expected))}"
            raise AssertionError(f"{query}: not broadcastable{want}\n  {err.reason}\n\n{explain_error(err)}") from None
        if reason is not None and reason not in err.reason:
            raise AssertionError(f"{query}: refused, but the reason does not contain {reason!r}:\n  {err.reason}"
                                 f"\n\n{explain_error(err)}") from None
        return err
    got = plan.shape[::-1] if plan.attr("ncnn_order") else plan.shape
    if refusal:
        raise AssertionError(f"{query}: broadcasts to {format_shape(got)}, expected a BroadcastError"
                             f"\n\n{explain_plan(plan, deviations=False)}")
    if expected is not _ANY:
        wanted = as_shape(expected)
        diff = shape_differences(got, wanted)
        if diff:
            ins = ", ".join(f"{n} {format_shape(s)}" for n, s in zip(plan.names, shapes))
            lines = "\n".join(f"  {d}" for d in diff)
            raise AssertionError(f"{query}: {ins} -> {format_shape(got)}, expected {format_shape(wanted)}\n{lines}"
                                 f"\n\n{explain_plan(plan, deviations=False)}")
    return plan


def plan_differences(got: Plan, want: Plan) -> list:
    """One line per field in which two plans differ (empty when they are equal).

    >>> plan_differences(infer((2, 1), (3,)), infer((2, 3), (3,)))
    ['inputs: A (2,1), B (3,); expected A (2,3), B (3,)', 'stretched: A axes (1,); expected none']
    """
    out = []

    def shapes(p):
        return ", ".join(f"{n} {format_shape(s)}" for n, s in zip(p.names, p.inputs))

    def stretched(p):
        shown = [f"{n} axes {tuple(s)}" for n, s in zip(p.names, p.stretched) if s]
        return ", ".join(shown) or "none"

    if got.rule != want.rule:
        out.append(f"rule: {got.rule}; expected {want.rule}")
    if got.inputs != want.inputs or got.names != want.names:
        out.append(f"inputs: {shapes(got)}; expected {shapes(want)}")
    if got.attrs != want.attrs:
        out.append(f"attrs: {dict(got.attrs)}; expected {dict(want.attrs)}")
    out += [f"shape: {d}" for d in shape_differences(got.shape, want.shape)]
    if got.axis_maps != want.axis_maps:
        out.append(f"axis_maps: {got.axis_maps}; expected {want.axis_maps}")
    if got.stretched != want.stretched:
        out.append(f"stretched: {stretched(got)}; expected {stretched(want)}")
    if got.constraints != want.constraints:
        out.append(f"constraints: {[str(c) for c in got.constraints]}; expected {[str(c) for c in want.constraints]}")
    return out


def compare_lines(got: Plan, want: Plan) -> list:
    """What a failed ``got == want`` shows: the differences, then both tables."""
    lines = ["Plans differ:"] + [f"  {d}" for d in plan_differences(got, want)]
    lines += ["", "got:"] + explain_plan(got, deviations=False).splitlines()
    lines += ["", "expected:"] + explain_plan(want, deviations=False).splitlines()
    return lines


def assert_plans_equal(got: Plan, want: Plan) -> None:
    """Assert two plans are equal; else an ``AssertionError`` listing the fields that
    differ, with both aligned tables.

    >>> assert_plans_equal(infer((2, 1), (3,)), infer((2, 1), (3,)))
    """
    if got != want:
        raise AssertionError("\n".join(compare_lines(got, want)))
