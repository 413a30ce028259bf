"""The executor: runs a Plan on arrays (zero-copy views, one output written once, the memory
budget, threads, compiled loops, recycling).  Every framework's op table supplies kernels to it
(:mod:`bcast.run.kernel`).  :func:`clear_caches` forgets every prepared call and cached plan."""

from ._fast import clear_caches

__all__ = ["clear_caches"]
