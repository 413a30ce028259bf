"""bcast: how every major ML framework broadcasts tensors, exactly.

>>> import bcast
>>> bcast.result_shape((2, 3, 4, 5), (3, 4), rule="pdpd", axis=1)
(2, 3, 4, 5)
>>> print(bcast.infer((8, 1, 6, 1), (7, 1, 5)))
numpy: A (8,1,6,1), B (7,1,5) -> (8,7,6,5)
"""

from typing import TYPE_CHECKING

from .views.comparison import compare
from .views import explain as _explain  # installs Plan.explain's explainer (the core cannot import views)
from .core.errors import BroadcastError, InputError
from .core.plan import Plan
from .rules import RULES, infer, result_shape, rule_names
from .core.shapes import as_shape, format_shape, parse_shape

__version__ = "0.1.0"
del _explain  # imported for its effect only

# Running ops needs numpy; the shape API does not.  These load on first use (``dir(bcast)``
# lists them, and type checkers read them from the block below).
_LAZY = {
    "apply": "run.execute",
    "broadcast_arrays": "run.execute",
    "memory_budget": "run.execute",
    "memory_budget_set": "run.execute",
    "set_memory_budget": "run.execute",
    "MemoryBudgetError": "run.execute",
    "translate": "translation.search",
    "TranslationError": "translation.search",
    "threads": "run.parallel",
    "set_threads": "run.parallel",
}
_SUBMODULES = ("onnx", "openvino", "ncnn", "tflite", "tensorrt", "tosa", "webnn", "torch", "paddle", "nnapi", "mnn",
               "coreml", "stablehlo", "jax", "translation")

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors (never run)
    from . import (coreml, jax, mnn, ncnn, nnapi, onnx, openvino, paddle, stablehlo, tensorrt,  # noqa: F401
                   tflite, torch, tosa, translation, webnn)
    from .models.lint import Finding
    from .models.rewrite import Rewrite
    from .run.execute import (  # noqa: F401
        MemoryBudgetError, apply, broadcast_arrays, memory_budget, memory_budget_set, set_memory_budget)
    from .run.parallel import set_threads, threads  # noqa: F401
    from .translation.search import TranslationError, translate  # noqa: F401


def lint(model, target: "str | None" = None, layout: "str | None" = None, inputs=()) -> "list[Finding]":
    """Check every broadcasting node of an ONNX model for ``target`` (default onnx; with ``layout``, the layout
    change a converter makes too: ``"NCHW:NHWC"``): :func:`bcast.models.lint.lint` (needs the onnx package,
    loaded on the first call: ``pip install 'bcast[onnx]'``); of an OpenVINO IR (a path ending in ``.xml``,
    target openvino): :func:`bcast.models.lint_ir.lint_ir` (numpy alone); of an ncnn ``.param`` (``inputs``:
    its Input shapes, ``"in0=1,3,224,224"``): :func:`bcast.models.ncnn_param.lint_param`; of a ``.tflite``
    model: :func:`bcast.models.tflite_model.lint_tflite` (numpy alone)."""
    import os

    path = os.fspath(model).lower() if isinstance(model, (str, os.PathLike)) else ""
    if path.endswith((".xml", ".param", ".tflite")):
        what = {".xml": "an OpenVINO IR", ".param": "an ncnn .param"}.get(os.path.splitext(path)[1], "a .tflite model")
        if layout is not None:
            raise InputError(f"layout: a layout change is checked on an ONNX model (the converter's input), not "
                             f"on {what}")
        if path.endswith(".tflite"):
            from .models.tflite_model import lint_tflite

            if inputs:
                raise InputError("inputs: the Input shapes of an ncnn .param; a .tflite model declares its own")
            return lint_tflite(model, target or "tflite")
        if path.endswith(".xml"):
            from .models.lint_ir import lint_ir

            if inputs:
                raise InputError("inputs: the Input shapes of an ncnn .param; an OpenVINO IR declares its own")
            return lint_ir(model, target or "openvino")
        from .models.ncnn_param import lint_param

        return lint_param(model, inputs, target).findings
    from .models.lint import lint as _lint

    return _lint(model, target or "onnx", layout, inputs)


def rewrite(model, target: str, out=None, *, force: bool = False) -> "Rewrite":
    """Rewrite an ONNX model so that ``target`` computes every broadcast as its spec says:
    :func:`bcast.models.rewrite.rewrite` (needs the onnx package: ``pip install 'bcast[onnx]'``)."""
    from .models.rewrite import rewrite as _rewrite

    return _rewrite(model, target, out, force=force)


def __getattr__(name):
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'bcast' has no attribute {name!r}")
    globals()[name] = value  # loaded once: later lookups are plain attribute reads
    return value


def __dir__():
    return sorted({*globals(), *_LAZY, *_SUBMODULES} - {"TYPE_CHECKING"})  # typing's flag is no API

__all__ = [
    "BroadcastError",
    "InputError",
    "compare",
    "Plan",
    "RULES",
    "infer",
    "result_shape",
    "rule_names",
    "as_shape",
    "format_shape",
    "parse_shape",
    "__version__",
    "lint",
    "rewrite",
    *_LAZY,
]
