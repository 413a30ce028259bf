"""Android NNAPI: its op table, from NeuralNetworks.h; spec only (no NNAPI driver runs here)."""

#: The lint and rewrite targets this package holds: none.
TARGETS: dict[str, str] = {}
