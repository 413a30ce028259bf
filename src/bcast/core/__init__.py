"""The shape core: dims, shapes, the Plan, errors and their formatting.

Pure Python (no numpy, no framework): every layer above reads these types.
"""
