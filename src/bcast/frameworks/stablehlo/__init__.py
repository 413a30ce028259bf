"""StableHLO: its op table (``broadcast_in_dim``, the element-wise ops, ``select``, CHLO's
``broadcast_*`` ops), from the spec; no runtime of its own here (jax, :mod:`bcast.frameworks.jax`,
lowers to it and is proven against its runtime)."""

#: The lint and rewrite targets this package holds (none).
TARGETS: dict[str, str] = {}
