"""The rules, one module each, registered by public name (DESIGN.md).

:func:`infer` is the one entry point: it checks the shapes and attributes,
runs the rule, and returns a :class:`~bcast.core.plan.Plan` or raises a
:class:`~bcast.core.errors.BroadcastError`.
"""

from __future__ import annotations

from ..core._format import brief, lookup_notation
from ..core.dims import MAX_DIM, MAX_RANK
from ..core.errors import InputError
from ..core.plan import Plan
from ._base import RULES, Attr, Ctx, Rule, check_attrs, check_inputs, get_rule
from ._cache import PLANS, plan_key

# Registration order is the order of ``bcast compare``.
from . import numpy, unidirectional, none, pdpd, bidirectional, explicit, equal_rank  # noqa: E402,F401
from . import ncnn, onnx_legacy, paddle  # noqa: E402,F401
from . import select, prelu, gemm, broadcast_pdpd  # noqa: E402,F401

__all__ = ["RULES", "Rule", "Attr", "infer", "result_shape", "get_rule", "rule_names"]


def rule_names() -> tuple:
    """The public names of every rule, in a stable order."""
    return tuple(RULES)


POLICIES = ("permissive", "strict")


def infer(*shapes, rule: str = "numpy", names=None, policy: str = "permissive", **attrs) -> Plan:
    """Broadcast ``shapes`` under ``rule``; return the :class:`Plan`.

    Parameters
    ----------
    *shapes : tuple of int, list, int or str
        The input shapes, in numpy order (``ncnn_order=True`` for ncnn's
        [w,h,d,c]).  Strings use the command-line syntax (``"2,3,4"``).
    rule : str
        A rule name (:func:`rule_names`), default ``"numpy"``.
    names : sequence of str, optional
        Names for the inputs in messages (default: the rule's, e.g. A, B).
    policy : {"permissive", "strict"}
        For dims that are not static (``N``, ``?``, ``2..4``).  ``"permissive"``
        (the default, as ONNX shape inference): broadcast when some sizes
        make it work, and record in ``Plan.constraints`` what they must be.
        ``"strict"``: only what holds for every size; a plan that would need a
        constraint is a BroadcastError of kind ``"unproven"``.
    **attrs
        The rule's attributes: ``axis``, ``axes_mapping``, ``broadcast``,
        ``ncnn_order``, ``auto_broadcast``, ``transA``, ``transB``.

    Raises
    ------
    BroadcastError
        The shapes do not broadcast under the rule (fields say where and why).
    InputError
        A malformed shape, an unknown rule or attribute, a wrong type.

    Examples
    --------
    >>> infer((2, 3, 4, 5), (3, 4), rule="pdpd", axis=1).shape
    (2, 3, 4, 5)
    >>> print(infer("N,3", "M,1"))
    numpy: A (N,3), B (M,1) -> (?,3) if N == M or N == 1 or M == 1
    >>> infer("N,3", "M,1", policy="strict")
    Traceback (most recent call last):
    ...
    bcast.core.errors.BroadcastError: numpy: cannot broadcast A (N,3) with B (M,1); policy strict: not provable from the shapes alone, it needs N == M or N == 1 or M == 1
    """  # noqa: E501 - a doctest's message is one line
    key = plan_key(rule, shapes, names, policy, attrs)
    plan = PLANS.get(key) if key is not None else None
    if plan is None:
        plan = _infer(shapes, rule, names, policy, attrs)
        if key is not None:
            PLANS.put(key, plan)
    return plan


def _infer(shapes, rule, names, policy, attrs) -> Plan:
    """:func:`infer` without the plan cache."""
    r = get_rule(rule)
    if policy not in POLICIES:
        raise InputError(f"unknown policy {brief(policy)}; the policies are: {', '.join(POLICIES)}")
    checked = check_attrs(r, attrs)
    shapes, names = check_inputs(r, shapes, names)
    ctx = Ctx(r.name, shapes, names, checked)
    plan = r.func(ctx)
    if policy == "strict" and plan.constraints:
        needs = "; ".join(str(c) for c in plan.constraints)
        raise ctx.error(f"policy strict: not provable from the shapes alone, it needs {needs}", kind="unproven")
    return plan


def result_shape(*shapes, rule: str = "numpy", policy: str = "permissive", **attrs) -> tuple:
    """The output shape of ``shapes`` broadcast under ``rule`` (see :func:`infer`).

    With ``ncnn_order=True`` the result is in ncnn's [w,h,d,c] order, like the
    inputs.  A fast path makes the common call (two int tuples, numpy rule)
    cost less than ``np.broadcast_shapes``.

    >>> result_shape((2, 3, 4, 5), (5,))
    (2, 3, 4, 5)
    """
    if rule == "numpy" and len(shapes) == 2 and not attrs and policy in POLICIES:
        a, b = shapes
        if type(a) is tuple and type(b) is tuple:
            out = _numpy2(a, b)
            if out is not None:
                return out
    plan = infer(*shapes, rule=rule, policy=policy, **attrs)
    n = lookup_notation(plan.notation)
    return plan.shape if n is None else n.reorder(plan.shape)


def _numpy2(a: tuple, b: tuple):
    """numpy's rule for two tuples of plain ints; ``None`` sends the caller to
    the full path (which validates and raises)."""
    la, lb = len(a), len(b)
    if la < lb:
        a, b, la, lb = b, a, lb, la
    if la > MAX_RANK:
        return None
    for d in a:
        if type(d) is not int or d < 0 or d > MAX_DIM:
            return None
    out = list(a)
    off = la - lb
    for i, d in enumerate(b):
        if type(d) is not int or d < 0 or d > MAX_DIM:
            return None
        o = out[off + i]
        if d != o:
            if o == 1:
                out[off + i] = d
            elif d != 1:
                return None
    return tuple(out)
