"""``bcast.stablehlo``: the public name of :mod:`bcast.frameworks.stablehlo.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.stablehlo.ops import *  # noqa: F403
from .frameworks.stablehlo.ops import __all__  # noqa: F401
