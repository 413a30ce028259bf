"""Core ML: its MIL element-wise binary ops and select (numpy broadcasting, rank at most 5), their
records and proofs, and the oracle (coremltools' MIL builder, whose type inference runs anywhere)."""

#: The lint and rewrite targets this package holds: :func:`bcast.frameworks.targets` reads it.
TARGETS = {"coreml": "coreml"}
