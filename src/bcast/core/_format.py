"""How shapes are written in messages and tables: compact, numpy-ufunc style."""

from __future__ import annotations


def format_shape(shape, *, ncnn: bool = False) -> str:
    """``(2,3)``, ``(4,)``, ``()``; with ``ncnn=True`` the [w,h,d,c] list ``[3,2]``."""
    dims = ",".join(str(d) for d in shape)
    if ncnn:
        return f"[{dims}]"
    if len(shape) == 1:
        return f"({dims},)"
    return f"({dims})"


def brief(value, limit: int = 60) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters: for messages about bad input.

    It never fails, whatever ``value`` is: an int too long for ``repr`` (Python's 4300-digit
    limit) or an object whose ``__repr__`` raises is named by its type.

    >>> brief([1] * 100, 12), brief(10**5000)
    ('[1, 1, 1,...', '<an int of 16610 bits>')
    """
    try:
        text = " ".join(repr(value).split())
    except Exception:  # noqa: BLE001 - a message about bad input must not fail on it
        bits = f" of {value.bit_length()} bits" if isinstance(value, int) else ""
        text = f"<{'an' if isinstance(value, int) else 'a'} {type(value).__name__}{bits}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
