"""Translate a broadcast into another framework's explicit ops (``bcast.translate``)."""

from .search import Recipe, TranslationError, run_many, translate

__all__ = ["Recipe", "TranslationError", "run_many", "translate"]
