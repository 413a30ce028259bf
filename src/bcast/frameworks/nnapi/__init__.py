"""Android NNAPI: its op table, from NeuralNetworks.h; spec only (no NNAPI driver runs here)."""

#: The lint and rewrite targets this package holds: :func:`bcast.frameworks.targets` reads it.
TARGETS = {"nnapi": "nnapi"}
