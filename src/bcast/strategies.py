"""``bcast.strategies``: the public name of :mod:`bcast.testing.strategies` (hypothesis strategies
for every rule)."""

from .testing.strategies import *  # noqa: F403
from .testing.strategies import __all__
