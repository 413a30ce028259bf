"""OpenVINO: its op table, its deviation records and proofs, its oracle (shape inference,
``Model.evaluate``, the CPU plugin)."""
