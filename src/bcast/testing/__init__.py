"""Test support for users of bcast: ``assert_broadcast``, hypothesis strategies
(``bcast.strategies``), the pytest plugin, and the seed documents' examples."""

from .assertions import *  # noqa: F403
from .assertions import __all__
