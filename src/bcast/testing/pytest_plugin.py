"""bcast's pytest plugin: a failed ``assert plan == other`` shows the aligned tables.

Registered through the ``pytest11`` entry point, so pytest loads it in every
session of a project that has bcast installed; it only adds
``pytest_assertrepr_compare`` and imports nothing but bcast's shape core (no
numpy, no runtime).  Turn it off with ``pytest -p no:bcast``.

When both sides of a failed ``==`` are :class:`~bcast.core.plan.Plan` values, the
report lists the fields that differ (shape axis by axis, axis maps, stretched
axes...) and both plans' aligned tables (:func:`bcast.testing.assertions.compare_lines`).
"""

from __future__ import annotations


def pytest_assertrepr_compare(config, op, left, right):
    """Explain a failed ``Plan == Plan``; None (pytest's own report) for anything else."""
    if op != "==":
        return None
    from ..core.plan import Plan

    if isinstance(left, Plan) and isinstance(right, Plan):
        from .assertions import compare_lines

        return compare_lines(left, right)
    return None
