"""``bcast.nnapi``: the public name of :mod:`bcast.frameworks.nnapi.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.nnapi.ops import *  # noqa: F403
from .frameworks.nnapi.ops import __all__
