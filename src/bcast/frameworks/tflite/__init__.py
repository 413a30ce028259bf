"""TFLite / LiteRT: its broadcasting builtins (the interpreter's kernels), SELECT's own rule, BROADCAST_TO,
the converter's rank limits, its deviation records and proofs, and its oracle (``ai-edge-litert``)."""

#: The lint and rewrite targets this package holds: :func:`bcast.frameworks.targets` reads it.
TARGETS = {"tflite": "tflite", "onnx2tf": "onnx2tf"}
