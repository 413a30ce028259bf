"""Optional dependencies: import one, or say in one line the smallest thing that installs it."""

from __future__ import annotations

import importlib

from .errors import InputError

__all__ = ["INSTALL", "MissingDependency", "require", "require_all"]

#: What installs each optional module: the smallest extra of bcast that holds it, else the package itself
#: (the runtimes are in no extra but ``test``, which installs far more).
INSTALL = {
    "onnx": "pip install 'bcast[onnx]'",
    "hypothesis": "pip install 'bcast[hypothesis]'",
    "numba": "pip install 'bcast[fast]'",
    "array_api_compat": "pip install 'bcast[array]'",
    "onnxruntime": "pip install onnxruntime",
    "openvino": "pip install openvino",
    "ncnn": "pip install ncnn",
    "ai_edge_litert": "pip install 'bcast[tflite]'",
    "MNN": "pip install 'bcast[mnn]'",
    "coremltools": "pip install 'bcast[coreml]'",
    "torch": "pip install 'bcast[torch]'",
    "paddle": "pip install 'bcast[paddle]'",
    "tosa_reference_model": "pip install tosa-tools",  # (it pins numpy < 2.2: not with the test lock)
}


class MissingDependency(InputError, ImportError):
    """An optional dependency is not installed: an :class:`~bcast.core.errors.InputError` (the command
    line's one-line error) and an ``ImportError``; the message says what to install."""


def require(module: str, what: str):
    """Import ``module`` (e.g. ``"onnx.parser"``), or raise :class:`MissingDependency` saying that
    ``what`` needs it and the smallest ``pip install`` that brings it.

    >>> require("json", "this").__name__
    'json'
    >>> require("bcast_no_such_package.sub", "this")
    Traceback (most recent call last):
    ...
    bcast.core._require.MissingDependency: this needs bcast_no_such_package: pip install bcast_no_such_package
    """
    top = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if e.name is not None and e.name.partition(".")[0] != top:
            raise  # the package is there and something it needs is not: its own error says what
        raise MissingDependency(f"{what} needs {top}: {INSTALL.get(top, f'pip install {top}')}") from None


def require_all(modules, what: str) -> None:
    """Every one of ``modules`` is importable, or one :class:`MissingDependency` naming all that are
    missing and one ``pip install`` line for them (not one at a time, install after install).

    >>> require_all(["json", "bcast_no_such_a", "bcast_no_such_b"], "x")
    Traceback (most recent call last):
    ...
    bcast.core._require.MissingDependency: x needs bcast_no_such_a and bcast_no_such_b: pip install bcast_no_such_a ...
    """
    missing = []
    for module in modules:
        try:
            require(module, what)
        except MissingDependency:
            missing.append(module.partition(".")[0])
    if missing:
        hints = " ".join(INSTALL.get(m, f"pip install {m}").removeprefix("pip install ") for m in missing)
        raise MissingDependency(f"{what} needs {' and '.join(missing)}: pip install {hints}")
