"""TOSA: its op table, from the TOSA specification and MLIR's TOSA dialect; spec only (no TOSA
implementation runs here)."""

#: The lint and rewrite targets this package holds: :func:`bcast.frameworks.targets` reads it.
TARGETS = {"tosa": "tosa"}
