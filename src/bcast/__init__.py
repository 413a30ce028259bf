"""bcast: how every major ML framework broadcasts tensors, exactly.

>>> import bcast
>>> bcast.result_shape((2, 3, 4, 5), (3, 4), rule="pdpd", axis=1)
(2, 3, 4, 5)
>>> print(bcast.infer((8, 1, 6, 1), (7, 1, 5)))
numpy: A (8,1,6,1), B (7,1,5) -> (8,7,6,5)
"""

from .comparison import compare
from .errors import BroadcastError, InputError
from .plan import Plan
from .rules import RULES, infer, result_shape, rule_names
from .shapes import as_shape, format_shape, parse_shape

__version__ = "0.1.0"

# Running ops needs numpy; the shape API does not.  These load on first use.
_LAZY = {
    "apply": "execute",
    "broadcast_arrays": "execute",
    "memory_budget": "execute",
    "memory_budget_set": "execute",
    "set_memory_budget": "execute",
    "MemoryBudgetError": "execute",
    "translate": "translation",
    "TranslationError": "translation",
    "lint": "linter",  # ONNX models: these load onnx on first use
    "rewrite": "rewriter",
    "threads": "parallel",
    "set_threads": "parallel",
}
_SUBMODULES = ("execute", "onnx", "openvino", "ncnn", "oracles", "translation", "parallel")


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
    *_LAZY,
]
