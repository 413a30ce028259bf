"""PyTorch: its op table (eager binary ops, in-place ops, ``where``, ``expand``), its deviation records
and proofs, and its oracle (``torch`` on the CPU)."""

#: The lint and rewrite targets this package holds: none (torch runs no ONNX model).
TARGETS: dict[str, str] = {}
