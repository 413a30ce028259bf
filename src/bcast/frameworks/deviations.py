"""The deviation registry: where a runtime does not do what its own spec says.

bcast's rules implement the specs.  Each record (:class:`Deviation`) says which runtime
(and the versions it was proven on), which rule and ops, under which condition,
and what the runtime does instead.  The records live with their framework, each
beside its ``check``, in ``bcast.frameworks.<name>.deviations`` (``DEVIATIONS``);
this module assembles them in the registry's order (:func:`bcast.frameworks.names`: onnx,
openvino, ncnn), each framework's in its own order.  Each has a proof,
registered under its id with the framework's proofs (``bcast.frameworks.<name>.proofs*``),
that runs that runtime and says whether the deviation is still present, gone
(the runtime now follows its spec) or changed; ``bcast deviations --check``
(:mod:`bcast.conformance.drift`) runs them all on the installed versions, and the
test suite on the locked ones.

:func:`applicable` returns the records that bear on one query (shapes, rule,
attributes), each with a sentence about those very shapes; ``explain`` and
``compare`` print them.

Some records concern one op only (an op's own kernel, not the broadcasting
rule it shares with other ops): their ``only_ops`` names those ops as the op
tables spell them (``"Mean"``, ``"DIV"``), and they bear on a query only when
the caller names one of them (``op=``), with the op's attributes that the rule
does not take (``op_attrs=``, e.g. Gemm's ``beta``).  Without ``op`` such
records stay silent: ``explain`` and ``compare`` by rule know no op, so they
show them only asked by framework and op (``--framework mnn --op Greater``;
``compare``'s framework rows name their op); ``bcast deviations`` lists every
record.

A record whose ``check`` is None is about values, not shapes (a kernel that
computes something else on some inputs): no shape predicts it, so it never
bears on a query; it is listed and proven like the others.

>>> [f.deviation.id for f in applicable((2, 1), (4, 2, 1), op="Mean")]
['reference-mean-in-place']
>>> applicable((2, 1), (4, 2, 1))  # the op is not known: numpy broadcasting itself deviates nowhere
[]
"""

from __future__ import annotations

from typing import Any

from ..core.errors import BroadcastError
from ..core.plan import Plan
from ..rules import get_rule
from . import names, part
from ._deviation import Deviation, Note, Outcome, Runtime, attempt, installed_version

__all__ = ["BY_ID", "DEVIATIONS", "Deviation", "Note", "Runtime", "applicable", "notes_for",
           "installed_version"]

def _records() -> tuple[Deviation, ...]:
    """Every registered framework's records (its ``deviations`` part's ``DEVIATIONS``), framework by
    framework in the registry's order."""
    found: list[Deviation] = []
    for name in names():
        module = part(name, "deviations")
        if module is not None:
            found += module.DEVIATIONS
    ids = [d.id for d in found]
    if len(ids) != len(set(ids)):
        raise ValueError(f"deviation ids must be unique: {sorted({i for i in ids if ids.count(i) > 1})}")
    return tuple(found)


#: Every record, framework by framework.
DEVIATIONS: tuple[Deviation, ...] = _records()
#: Record id -> record.
BY_ID: dict[str, Deviation] = {d.id: d for d in DEVIATIONS}


def notes_for(result: Plan | BroadcastError, op: str | None = None,
              op_attrs: dict | None = None) -> list[Note]:
    """The deviations that bear on a plan or a broadcast error, with their notes.

    ``op``: the op the query was for, as its op table spells it (``"Max"``,
    ``"DIV"``); records with ``only_ops`` bear only on those ops, so they are
    left out when ``op`` is None.  ``op_attrs``: the op's attributes, for
    those the rule does not take (e.g. ``{"beta": 0.0}`` for Gemm; the op's
    defaults where left out), and ``element_type`` (a numpy dtype name, e.g.
    ``"int8"``) for the records that depend on it (OpenVINO's CPU plugin);
    without it such a record speaks of the element types it concerns.

    Every entry is proven on static shapes, so shapes with other dims (``N``,
    ``?``, ``2..4``) get none.
    """
    outcome = Outcome.of(result, op, op_attrs)
    if not all(type(d) is int for s in outcome.shapes for d in s):
        return []
    # an op's plan of more inputs than its rule takes (OpenVINO's FakeQuantize: five, each range into X by a
    # two-input rule): only the records about that op read it
    arity = get_rule(outcome.rule).max_inputs
    own = arity is not None and len(outcome.shapes) > arity
    out = []
    for dev in DEVIATIONS:
        if outcome.rule not in dev.rules or dev.check is None or not dev.concerns(op) or (
                own and op not in dev.only_ops):
            continue
        note = dev.check(outcome)
        if note:
            out.append(Note(dev, note))
    return out


def applicable(*shapes: Any, rule: str = "numpy", op: str | None = None, op_attrs: dict | None = None,
               **attrs: Any) -> list[Note]:
    """The deviations that bear on ``shapes`` under ``rule`` (see :func:`bcast.infer`);
    ``op`` and ``op_attrs`` as for :func:`notes_for`.

    >>> [f.deviation.id for f in applicable((2, 3), (3,), rule="none", op="Max")]
    ['reference-variadic-before-8-broadcasts']
    >>> [f.deviation.id for f in applicable((2, 3), (3, 4), (3,), rule="onnx-gemm", op="Gemm",
    ...                                     op_attrs={"beta": 0.0})]
    ['onnx-shape-inference-unchecked', 'reference-gemm-beta0-unchecked-c']
    """
    return notes_for(attempt(rule, *shapes, **attrs), op, op_attrs)
