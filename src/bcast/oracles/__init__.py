"""Oracles: the real runtimes, run on the same inputs as bcast.

One module per runtime, each a thin adapter with the same shape of API, each
importing its runtime only when used (they are optional: ``pip install
bcast[test]`` installs them):

- :mod:`bcast.oracles.onnxruntime` -- one ONNX node in an onnxruntime session;
- :mod:`bcast.oracles.reference` -- the same node in ``onnx.reference.ReferenceEvaluator``;
- :mod:`bcast.oracles.openvino` -- one OpenVINO op, compiled on the CPU plugin or
  evaluated by the core's reference (``Model.evaluate``);
- :mod:`bcast.oracles.ncnn` -- one ncnn BinaryOp layer, in the process or in a
  child process (ncnn may crash on the shapes it does not support).

The differential tests, the deviation proofs and ``bcast conformance`` use them.
"""

from __future__ import annotations

import importlib.util

__all__ = ["available"]

_RUNTIMES = {"onnxruntime": "onnxruntime", "reference": "onnx", "openvino": "openvino", "ncnn": "ncnn"}


def available() -> tuple:
    """The oracles whose runtime is installed, by name."""
    return tuple(name for name, module in _RUNTIMES.items() if importlib.util.find_spec(module) is not None)
