"""ONNX: its op table, its deviation records and proofs, its oracles (onnxruntime, onnx's
ReferenceEvaluator)."""
