"""jax's deviation records: where jax does not do what its own documentation says.  Each record
follows its ``check``; their proofs are in :mod:`bcast.frameworks.jax.proofs`;
:mod:`bcast.frameworks.deviations` assembles the registry.
"""

from __future__ import annotations

from .._deviation import Deviation, Outcome, Runtime, attempt, verdict

__all__ = ["DEVIATIONS", "RUNTIME", "JaxRuntime"]


class JaxRuntime(Runtime):
    """The jax programs whose deviations are recorded."""

    JAX = "jax"


#: The versions the records were proven on, oldest first.
_JAX = ("0.10.2",)


def _where_promotes(o: Outcome) -> str | None:
    """``jnp.where`` refused under ``rank_promotion="raise"`` (bcast.jax plans it by lax's rule, named
    ``condition``, ``x``, ``y``) for operands of different ranks that numpy's rule broadcasts."""
    e = o.error
    if o.rule != "equal-rank" or e is None or e.kind != "rank" or "condition" not in e.names:
        return None
    if len(o.shapes) != 3:  # the error of the operands of a rank, a rank-0 one left out: jax's own shapes differ
        return ("jax's jnp.where broadcasts these operands by numpy's rule anyway (rank promotion), with no error "
                "and no warning under jax_numpy_rank_promotion='raise' or 'warn'")
    found = attempt("numpy", *o.shapes)
    return (f"jax's jnp.where gives {verdict(found)} anyway: it broadcasts by numpy's rule (rank promotion) with no "
            "error and no warning under jax_numpy_rank_promotion='raise' or 'warn'")


JAX_WHERE_IGNORES_RANK_PROMOTION = Deviation(
    id="jax-where-ignores-rank-promotion",
    runtime=JaxRuntime.JAX,
    proven_on=_JAX,
    rules=("equal-rank",),
    ops="jnp.where",
    condition="jax_numpy_rank_promotion='raise' (or 'warn'), operands of different ranks that numpy broadcasts, "
              "none of rank 0 among the two that differ, e.g. condition (2,1), x (3,), y ()",
    behaviour="jnp.where broadcasts them by numpy's rule (rank promotion) without an error or a warning, where the "
              "binary jnp ops (jnp.add ...) raise ValueError (or warn); jax/_src/numpy/util.py's _where calls "
              "_broadcast_arrays, not promote_shapes",
    spec="jax_numpy_rank_promotion: \"Control NumPy-style automatic rank promotion broadcasting ('allow', 'warn', "
         "or 'raise')\" (jax/_src/config.py; docs \"Rank promotion warning\")",
    check=_where_promotes,
)


DEVIATIONS: tuple[Deviation, ...] = (JAX_WHERE_IGNORES_RANK_PROMOTION,)

#: The enum of this framework's runtimes: a record is this framework's when its runtime is a member
#: (``bcast compare --framework`` keeps those).
RUNTIME = JaxRuntime
