"""``bcast.ncnn``: the public name of :mod:`bcast.frameworks.ncnn.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.ncnn.ops import *  # noqa: F403
from .frameworks.ncnn.ops import __all__
