"""``bcast.tflite``: the public name of :mod:`bcast.frameworks.tflite.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.tflite.ops import *  # noqa: F403
from .frameworks.tflite.ops import __all__
