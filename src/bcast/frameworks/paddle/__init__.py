"""PaddlePaddle: its op table (the 2.x/3.x API and the legacy ``elementwise_*`` ops with ``axis``), its
deviation records and proofs, and its oracle (``paddlepaddle`` on the CPU)."""

#: The lint and rewrite targets this package holds: none.
TARGETS: dict[str, str] = {}
