"""How shapes are written in messages and tables: compact, numpy-ufunc style, or in a
framework's own notation that a rule registers (:class:`Notation`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Notation", "brief", "format_shape", "lookup_notation", "register_notation"]


def format_shape(shape: Sequence[object]) -> str:
    """``(2,3)``, ``(4,)``, ``()``."""
    dims = ",".join(str(d) for d in shape)
    if len(shape) == 1:
        return f"({dims},)"
    return f"({dims})"


@dataclass(frozen=True)
class Notation:
    """A framework's own way of writing shapes, other than numpy's: the axes in reverse order, in
    square brackets, each axis named by a letter that depends on the rank.  A rule whose callers may
    write shapes that way registers one (:func:`register_notation`); plans and errors carry its name
    (``"numpy"`` when there is none), and the core writes them with it without knowing the framework.

    ``name``: how messages name it (``in ncnn's [w,h,d,c] order``) and the key of the ``--json``
    block that has the shapes in it; ``order``: the axes as the framework lists them; ``axes``: for
    each rank, the letters of its axes in numpy order (``"chw"`` for rank 3).
    """

    name: str
    order: str
    axes: tuple[str, ...]

    def reorder(self, shape: Sequence[object]) -> tuple:
        """A shape in numpy order in this order, or back (the order is its own inverse)."""
        return tuple(shape)[::-1]

    def shape(self, shape: Sequence[object]) -> str:
        """A numpy-order shape written in this notation: ``(4,3,2)`` is ``[2,3,4]``."""
        return "[" + ",".join(str(d) for d in self.reorder(shape)) + "]"

    def axis(self, rank: int, axis: int) -> str:
        """The name of numpy axis ``axis`` of a shape of rank ``rank`` (its number where there is none)."""
        names = self.axes[rank - 1] if 1 <= rank <= len(self.axes) else ""
        return names[axis] if 0 <= axis < len(names) else str(axis)


_NOTATIONS: dict[str, Notation] = {}


def register_notation(n: Notation) -> Notation:
    """Make ``n`` the notation of its name (a rule module calls it once, at import)."""
    _NOTATIONS[n.name] = n
    return n


def lookup_notation(name: str) -> Notation | None:
    """The notation registered as ``name``; None for numpy's (or an unknown name): plain ``(2,3)``."""
    return _NOTATIONS.get(name)


def brief(value: object, limit: int = 60) -> str:
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
