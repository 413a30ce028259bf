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
    """``repr(value)`` on one line, cut to ``limit`` characters: for messages about bad input."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
