"""JAX: its op table (``jax.lax``'s binary ops, select and broadcast_in_dim; ``jax.numpy``'s binary
ops, where and broadcast_to, under ``jax_numpy_rank_promotion``), its deviation records from
StableHLO's spec with their proofs, and its oracle (the jax CPU wheel)."""

#: The lint and rewrite targets this package holds (none).
TARGETS: dict[str, str] = {}
