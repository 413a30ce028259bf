"""MNN: its BinaryOp and Select table (numpy broadcasting, rank at most 9), its runtime records and
proofs, and its oracle (the ``MNN`` wheel's expression API)."""

#: MNN has no lint or rewrite target.
TARGETS: dict[str, str] = {}
