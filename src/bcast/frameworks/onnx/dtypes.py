"""ONNX's element types as numpy sees them: the type-name sets the op table's rows are made of,
and :func:`onnx_type`, ONNX's name of a numpy dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ALL", "BF16", "BOOL", "FLOATS", "INT32_64", "INTS", "UINTS", "is_float", "onnx_type"]

FLOATS = frozenset({"float16", "float", "double"})
BF16 = frozenset({"bfloat16"})
INT32_64 = frozenset({"int32", "int64", "uint32", "uint64"})
UINTS = frozenset({"uint8", "uint16", "uint32", "uint64"})
INTS = INT32_64 | {"int8", "int16", "uint8", "uint16"}
BOOL = frozenset({"bool"})
ALL = FLOATS | INTS | BOOL | {"complex64", "complex128", "string"}

_NUMPY_NAMES = {"float32": "float", "float64": "double"}  # else numpy's name is ONNX's
_NAMES: dict[np.dtype, str] = {}  # dtype -> its ONNX name, as computed once


def onnx_type(dtype: Any) -> str:
    """ONNX's name of a numpy dtype: ``float32`` -> ``float``; object and
    numpy strings -> ``string``; ``bfloat16`` (ml_dtypes) -> ``bfloat16``.

    >>> onnx_type(np.float64), onnx_type(np.uint8), onnx_type(object)
    ('double', 'uint8', 'string')
    """
    dt = np.dtype(dtype)
    name = _NAMES.get(dt)
    if name is None:  # numpy's dtype.name is computed in Python each time: microseconds
        name = "string" if dt.kind in "OUS" else _NUMPY_NAMES.get(dt.name, dt.name)
        if len(_NAMES) < 256:
            _NAMES[dt] = name
    return name


def is_float(dtype: Any) -> bool:
    """A float type of ONNX's (float16, float, double, bfloat16)."""
    return onnx_type(dtype) in FLOATS | BF16
