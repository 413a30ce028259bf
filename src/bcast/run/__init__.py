"""The executor: runs a Plan on arrays (zero-copy views, one output written once, the memory
budget, threads, compiled loops, recycling).  Every framework's op table supplies kernels to it."""
