"""``bcast.openvino``: the public name of :mod:`bcast.frameworks.openvino.ops` (``ops()``, ``plan()``, ``run()``)."""

from .frameworks.openvino.ops import *  # noqa: F403
from .frameworks.openvino.ops import __all__
