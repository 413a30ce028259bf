"""Oracles: the real runtimes, run on the same inputs as bcast.

One module per runtime, each a thin adapter with the same shape of API, each
importing its runtime only when used (they are optional: ``pip install
bcast[test]`` installs them):

- :mod:`bcast.frameworks.onnx.onnxruntime` -- one ONNX node in an onnxruntime session;
- :mod:`bcast.frameworks.onnx.reference` -- the same node in ``onnx.reference.ReferenceEvaluator``;
- :mod:`bcast.frameworks.openvino.oracle` -- one OpenVINO op, compiled on the CPU plugin or
  evaluated by the core's reference (``Model.evaluate``);
- :mod:`bcast.frameworks.ncnn.oracle` -- one ncnn BinaryOp layer, in the process or in a
  child process (ncnn may crash on the shapes it does not support).

Every oracle has ``run(op, inputs, ...)``; a runtime that refuses (an error at
load or at run, a non-zero return code) raises :class:`RuntimeRefused`, and one
that dies in a child process :class:`RuntimeCrashed`.  The ONNX oracles also
have ``run_model(model, feeds)`` for whole models.

The differential tests, the deviation proofs and ``bcast conformance`` use them.
"""

from __future__ import annotations

import importlib.util

__all__ = ["RuntimeCrashed", "RuntimeRefused", "available", "exit_status", "last_line"]


def last_line(exc: BaseException) -> str:
    """The last non-empty line of an error's text: the stable part of a runtime's message."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__


class RuntimeRefused(Exception):
    """A runtime refused the request: an error at load or at run, or a non-zero return code.

    Attributes: ``runtime`` (``"onnxruntime"``, ``"reference"``, ``"openvino"``,
    ``"ncnn"``) and ``message`` (the runtime's own text, on one line).
    """

    def __init__(self, runtime: str, message: str) -> None:
        self.runtime, self.message = runtime, message
        super().__init__(f"{runtime} refused: {message}")

    def __reduce__(self):
        return (type(self), (self.runtime, self.message))


class RuntimeCrashed(RuntimeRefused):
    """The child process running the runtime died; ``returncode`` is its status
    (``-signal.SIGFPE`` for a floating-point exception)."""

    def __init__(self, runtime: str, message: str, returncode: int) -> None:
        self.returncode = returncode
        super().__init__(runtime, message)

    def __reduce__(self):
        return (type(self), (self.runtime, self.message, self.returncode))

_RUNTIMES = {"onnxruntime": "onnxruntime", "reference": "onnx", "openvino": "openvino", "ncnn": "ncnn"}


def available() -> tuple:
    """The oracles whose runtime is installed, by name."""
    return tuple(name for name, module in _RUNTIMES.items() if importlib.util.find_spec(module) is not None)


def exit_status(returncode: int) -> str:
    """How a child process ended, for a message: the signal's name (``SIGABRT``) or ``exit status N``."""
    if returncode < 0:
        import signal

        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"
