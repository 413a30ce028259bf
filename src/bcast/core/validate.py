"""Validation of what callers pass in: the limits, and the checks of integers, flags, numbers
and axis lists, written once.

Every entry point (a rule's attributes, an op table's attributes, shapes and
dims) checks its arguments with these, so the limits are stated in one place:
:data:`INT64_MAX` (every framework stores dims and integer attributes as int64)
and :data:`MAX_RANK` (numpy's NPY_MAXDIMS; no framework goes further).  Each
check raises an :class:`~bcast.core.errors.InputError` that begins with
``where`` (the caller's name of the value) and says what it must be.

>>> integer(3, "axis")
3
>>> integer(2**63, "axis")
Traceback (most recent call last):
...
bcast.core.errors.InputError: axis = 9223372036854775808 does not fit in int64
>>> flag(True, "transA"), axes("1, 2", "axes_mapping")
(1, (1, 2))
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from ._format import brief
from .errors import InputError

__all__ = ["INT64_MAX", "MAX_RANK", "axes", "flag", "integer", "is_int", "number"]

#: Largest rank bcast accepts (numpy's NPY_MAXDIMS; no framework goes further).
MAX_RANK = 64

#: Largest integer bcast accepts as a dim or an integer attribute: every framework stores them as int64.
INT64_MAX = 2**63 - 1


def is_int(value: Any) -> bool:
    """An integer: a Python int (bool included), a numpy integer, anything with ``__index__``; not a float."""
    if isinstance(value, int):
        return True
    try:
        value.__index__()
    except Exception:  # noqa: BLE001 - no __index__, or one that refuses (a numpy array of several elements)
        return False
    return not isinstance(value, float)


def _is_bool(value: Any) -> bool:
    """Python's bool or numpy's (core imports no numpy: it is known by its type's name)."""
    return isinstance(value, bool) or type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")


def integer(value: Any, where: str) -> int:
    """``value`` as an int: an integer (not a bool) that fits in int64."""
    if _is_bool(value) or not is_int(value):
        raise InputError(f"{where} must be an integer, got {brief(value)}")
    value = int(value)
    if abs(value) > INT64_MAX:
        raise InputError(f"{where} = {brief(value)} does not fit in int64")
    return value


def flag(value: Any, where: str, *, spelled: str = "0 or 1") -> int:
    """``value`` as 0 or 1: an integer 0 or 1, or a bool (Python's or numpy's)."""
    if (_is_bool(value) or is_int(value)) and int(value) in (0, 1):
        return int(value)
    raise InputError(f"{where} must be {spelled}, got {brief(value)}")


def number(value: Any, where: str) -> float:
    """``value`` as a finite float: an integer (not a bool) or a float, not inf or NaN."""
    ok = not _is_bool(value) and (is_int(value) or isinstance(value, numbers.Real))  # numpy's floats are Real
    try:
        result = float(value) if ok else math.nan
    except OverflowError:  # an int past float64's range
        result = math.nan
    if not math.isfinite(result):
        raise InputError(f"{where} must be a finite number, got {brief(value)}")
    return result


def axes(value: Any, where: str) -> tuple[int, ...]:
    """``value`` as a tuple of at most :data:`MAX_RANK` ints, each fitting in int64: a sequence
    of integers, one integer, or text such as ``1,2`` or ``[1,2]``."""
    if isinstance(value, str):
        text = value.strip().strip("[]()").strip()
        parts = [p.strip() for p in text.split(",")] if text else []
        try:
            value = [int(p) for p in parts]
        except ValueError:
            raise InputError(f"{where} must be a list of integers such as 1,2 or [1,2], got {brief(value)}") from None
    elif is_int(value) and not isinstance(value, bool):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise InputError(f"{where} must be a list of integers, got {brief(value)}") from None
    if len(items) > MAX_RANK or any(isinstance(a, bool) or not is_int(a) for a in items):
        raise InputError(f"{where} must be a list of at most {MAX_RANK} integers, got {brief(value)}")
    result = tuple(int(a) for a in items)
    if any(abs(a) > INT64_MAX for a in result):
        raise InputError(f"{where} = {brief(value)} does not fit in int64")
    return result
