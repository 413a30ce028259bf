"""The two kinds of error bcast raises.

``BroadcastError``: the shapes (and attributes) are well formed, but the rule
does not broadcast them.  It carries structured fields, so that ``explain``,
``--json`` and later ``lint`` read the fields and never parse the message.

``InputError``: the request itself is malformed (a shape that is not a shape,
an unknown rule, an attribute of the wrong type).  On the command line this is
exit status 2; a ``BroadcastError`` is exit status 1.

Both subclass ``ValueError``.
"""

from __future__ import annotations

from typing import Any

from ._format import format_shape, lookup_notation

__all__ = ["BroadcastError", "InputError"]


class InputError(ValueError):
    """A malformed request: bad shape syntax, unknown rule or attribute, bad type."""


class BroadcastError(ValueError):
    """The shapes do not broadcast under the rule.

    Attributes
    ----------
    rule : str
        The rule's public name, e.g. ``"numpy"``.
    shapes : tuple of tuple of int
        Every input shape, as given (numpy order).
    names : tuple of str
        The name of every input (``"A"``, ``"B"``, ``"data"``...).
    reason : str
        Why, in words: what must hold and what does not.
    kind : str
        ``"dims"`` (two dims conflict), ``"rank"``, ``"attribute"`` (an axis,
        axes_mapping or broadcast flag does not fit the shapes),
        ``"unsupported"`` (the framework cannot represent the case at all),
        ``"undecidable"`` (what the rule does depends on a size the shapes
        leave open: ncnn's alignment of a 1-D ``N``) or ``"unproven"``
        (``policy="strict"``: it broadcasts only for some sizes).
    operands : tuple of int
        Indices (into ``shapes``) of the operands involved, the conflicting
        pair for ``kind == "dims"``.
    axes : tuple of int or None
        For ``kind == "dims"``: the failing axis of each of ``operands``,
        counted from the left of that operand.
    from_right : int or None
        The failing output axis counted from the right (-1 is the last).
    dims : tuple of int or None
        The two conflicting dims, in the order of ``operands``.
    alignment : tuple of tuple or None
        The attempted placement of every input: for input ``i``,
        ``alignment[i][k]`` is the output axis its axis ``k`` was placed on
        (``None``: not placed).  ``explain`` draws the table from it.
    out_rank : int or None
        Rank of the attempted output (the width of the table).
    attrs : tuple of (name, value) pairs
        The rule's attributes, normalized, as a Plan has them.
    notation : str
        How the message writes the shapes: ``"numpy"``, or the name of a notation a rule registered
        (:class:`~bcast.core._format.Notation`: ncnn's ``[w,h,d,c]``), as the caller wrote them.
    """

    def __init__(
        self,
        rule: str,
        shapes: tuple,
        names: tuple,
        reason: str,
        *,
        kind: str = "dims",
        operands: tuple | None = None,
        axes: tuple | None = None,
        from_right: int | None = None,
        dims: tuple | None = None,
        alignment: tuple | None = None,
        out_rank: int | None = None,
        notation: str = "numpy",
        attrs: tuple = (),
    ) -> None:
        self.rule = rule
        self.shapes = tuple(tuple(s) for s in shapes)
        self.names = tuple(names)
        self.reason = reason
        self.kind = kind
        self.operands = tuple(range(len(self.shapes))) if operands is None else tuple(operands)
        self.axes = None if axes is None else tuple(axes)
        self.from_right = from_right
        self.dims = None if dims is None else tuple(dims)
        self.alignment = alignment
        self.out_rank = out_rank
        self.notation = notation
        self.attrs = tuple(attrs)
        super().__init__(self._message())

    def _operand(self, i: int) -> str:
        n = lookup_notation(self.notation)
        return f"{self.names[i]} {n.shape(self.shapes[i]) if n else format_shape(self.shapes[i])}"

    def _message(self) -> str:
        ops = [self._operand(i) for i in self.operands]
        if len(ops) == 1:
            head = ops[0]
        elif len(ops) == 2:
            head = f"{ops[0]} with {ops[1]}"
        else:
            head = ", ".join(ops[:-1]) + f" and {ops[-1]}"
        msg = f"{self.rule}: cannot broadcast {head}"
        where = self.where()
        if where:
            msg += f": {where}"
        return f"{msg}; {self.reason}"

    def where(self) -> str:
        """The failing spot, ``axis -1 (A axis 1, B axis 0): 3 vs 4``; empty unless two dims conflict.

        In a framework's notation (ncnn's) the axes are named as it names them: ``axis c (A c, B h): 2 vs 5``."""
        if self.kind != "dims" or self.axes is None or self.dims is None:
            return ""
        dims = " vs ".join(str(d) for d in self.dims)
        n = lookup_notation(self.notation)
        if n is not None and self.out_rank is not None:
            axes = ", ".join(
                f"{self.names[i]} {n.axis(len(self.shapes[i]), a)}" for i, a in zip(self.operands, self.axes)
            )
            at = "" if self.from_right is None else f"axis {n.axis(self.out_rank, self.out_rank + self.from_right)} "
            return f"{at}({axes}): {dims}"
        axes = ", ".join(f"{self.names[i]} axis {a}" for i, a in zip(self.operands, self.axes))
        at = "" if self.from_right is None else f"axis {self.from_right} "
        return f"{at}({axes}): {dims}"

    def __reduce__(self):  # pickling keeps the fields
        return (_rebuild, (self.__dict__.copy(),))

    def to_dict(self) -> dict[str, Any]:
        """The ``error`` object of the ``--json`` output (axes counted in numpy order)."""
        return {
            "kind": self.kind,
            "operands": [self.names[i] for i in self.operands],
            "axis": None if self.axes is None else list(self.axes),
            "from_right": self.from_right,
            "dims": None if self.dims is None else [d if type(d) is int else str(d) for d in self.dims],
            "reason": self.reason,
            "message": str(self),
        }


def _rebuild(state: dict) -> BroadcastError:
    err = BroadcastError.__new__(BroadcastError)
    err.__dict__.update(state)
    ValueError.__init__(err, err._message())
    return err
