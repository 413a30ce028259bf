"""Translate a broadcast into another framework's explicit ops (``bcast.translate``).

:mod:`~bcast.translation.search` finds the minimal recipe over the target's :mod:`~bcast.translation.forms`;
:mod:`~bcast.translation.build` writes its steps, :mod:`~bcast.translation.text` their text;
:mod:`~bcast.translation.runtimes` builds and runs them on the real runtimes.
"""

from .ops import OPS, Op
from .recipe import TARGETS, Recipe, TranslationError
from .runtimes import model, run_many
from .search import translate
from .step import Step

__all__ = ["OPS", "TARGETS", "Op", "Recipe", "Step", "TranslationError", "model", "run_many", "translate"]
