"""``bcast.paddle``: the public name of :mod:`bcast.frameworks.paddle.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.paddle.ops import *  # noqa: F403
from .frameworks.paddle.ops import __all__
