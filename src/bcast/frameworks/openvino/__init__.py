"""OpenVINO: its op table, its deviation records and proofs, its oracle (shape inference,
``Model.evaluate``, the CPU plugin)."""

#: The lint and rewrite targets this package holds: target name -> the name of its modules
#: (``lint_<name>``, ``rewrite_<name>``); :func:`bcast.frameworks.targets` reads it.
TARGETS = {"openvino": "openvino"}
