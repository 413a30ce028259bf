"""Core ML: its MIL element-wise binary ops and select (numpy broadcasting, rank at most 5), their
records and proofs, and the oracle (coremltools' MIL builder, whose type inference runs anywhere)."""

#: Core ML has no lint or rewrite target.
TARGETS: dict[str, str] = {}
