"""``bcast.tensorrt``: the public name of :mod:`bcast.frameworks.tensorrt.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.tensorrt.ops import *  # noqa: F403
from .frameworks.tensorrt.ops import __all__
