"""``bcast.onnx``: the public name of :mod:`bcast.frameworks.onnx.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.onnx.ops import *  # noqa: F403
from .frameworks.onnx.ops import __all__
