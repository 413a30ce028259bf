"""``bcast.coreml``: the public name of :mod:`bcast.frameworks.coreml.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.coreml.ops import *  # noqa: F403
