"""ncnn: its BinaryOp table, its deviation records and proofs, its oracle, and the two converters
into it (pnnx, the legacy onnx2ncnn) as lint and rewrite targets."""

#: The lint and rewrite targets this package holds: target name -> the name of its modules
#: (``lint_<name>``, ``rewrite_<name>``); :func:`bcast.frameworks.targets` reads it.
TARGETS = {"ncnn": "pnnx", "onnx2ncnn": "onnx2ncnn"}
