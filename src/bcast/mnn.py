"""``bcast.mnn``: the public name of :mod:`bcast.frameworks.mnn.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.mnn.ops import *  # noqa: F403
