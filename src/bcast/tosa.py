"""``bcast.tosa``: the public name of :mod:`bcast.frameworks.tosa.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.tosa.ops import *  # noqa: F403
from .frameworks.tosa.ops import __all__
