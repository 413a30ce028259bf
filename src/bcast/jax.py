"""``bcast.jax``: the public name of :mod:`bcast.frameworks.jax.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.jax.ops import *  # noqa: F403
from .frameworks.jax.ops import __all__  # noqa: F401
