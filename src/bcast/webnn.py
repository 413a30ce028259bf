"""``bcast.webnn``: the public name of :mod:`bcast.frameworks.webnn.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.webnn.ops import *  # noqa: F403
from .frameworks.webnn.ops import __all__
