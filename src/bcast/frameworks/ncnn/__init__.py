"""ncnn: its BinaryOp table, its deviation records and proofs, its oracle, and the two converters
into it (pnnx, the legacy onnx2ncnn) as lint and rewrite targets."""
