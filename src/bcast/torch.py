"""``bcast.torch``: the public name of :mod:`bcast.frameworks.torch.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.torch.ops import *  # noqa: F403
from .frameworks.torch.ops import __all__
