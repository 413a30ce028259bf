"""jax's conformance column (:mod:`bcast.conformance.columns`): the jax CPU wheel's values, eagerly, every
case in this process.  ``numpy`` runs as ``jnp.add``, ``equal-rank`` as ``lax.add``, ``explicit`` as
``lax.broadcast_in_dim`` (its ``transpose=1`` form: a case of ``transpose=0`` with a map out of order is not
one jax's op expresses), ``unidirectional`` as ``jnp.broadcast_to`` (A is the shape, B the array)."""

from __future__ import annotations

from ...conformance.columns import Binding, Case, Column, arrays
from .deviations import JaxRuntime

__all__ = ["COLUMNS"]

#: rule -> the op that checks it
_OPS = {"numpy": "jnp.add", "equal-rank": "lax.add", "explicit": "lax.broadcast_in_dim",
        "unidirectional": "jnp.broadcast_to"}


def _bindings(column: str) -> dict:
    from . import ops as jax_ops

    assert set(_OPS.values()) <= set(jax_ops.ops())
    return {rule: Binding(column, rule, op) for rule, op in _OPS.items()}


class _Jax:
    """One jax op on the case's arrays; ``run_all`` runs them one by one in this process."""

    def __init__(self, column: str = "jax"):
        self.column = column

    def inputs(self, case: Case, b: Binding):
        shapes = case.numpy_shapes
        if case.attrs.get("max_rank") is not None:
            return None  # jax has no rank limit of its own
        if b.rule == "explicit":
            dims = list(case.attrs["axes_mapping"])
            if not case.attrs.get("transpose") and dims != sorted(dims):
                return None  # the case asks for OpenVINO's sorted map; jax's op takes any order
            (x,) = arrays(case, 1)
            return (x, tuple(shapes[1])), {"broadcast_dimensions": dims}
        if b.rule == "unidirectional":
            x = arrays(Case(case.id, case.rule, case.source, (shapes[1],), {}), 1)[0]
            return (x, tuple(shapes[0])), {}
        if len(shapes) != 2:
            return None  # jnp.add and lax.add take two operands
        return tuple(arrays(case, 2)), {}

    def expected(self, b: Binding, inputs, attrs):
        from . import ops as jax_ops

        return jax_ops.run(b.op, *inputs, **attrs)

    def run_all(self, b: Binding, jobs: list) -> list:
        from . import oracle

        return oracle.run_many([((b.op, *inputs), attrs) for inputs, attrs in jobs])


COLUMNS = (
    Column("jax", "jax", "jax", "jax (CPU, eager)", "values", (JaxRuntime.JAX,), _bindings, _Jax),
)
