"""The record every op table's rows extend, and the checks of a call that every table makes.

Each framework's op table (``bcast.frameworks.<name>.ops``) has its own ``Op``
record, a subclass of :class:`Op` here: what all of them have is the op's
name, the names of its inputs, and two checks of a call, written once here:
:meth:`Op.check_arity` (how many inputs) and :meth:`Op.check_dtypes` (each
input's dtype is one its type variable allows; the inputs of one type variable
have one dtype).  The messages are each framework's own (they are user
interface, and differ by framework): a table's ``Op`` words them by
overriding :meth:`Op.arity_message`, :meth:`Op.dtype_message` and
:meth:`Op.dtypes_differ_message`; every message begins with :attr:`Op.where`.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class MyOp(Op):
...     framework = "mine"
...     def input_names(self, n):
...         return ("A", "B")[:n]
>>> MyOp("Add").check_arity([1, 2, 3], (2,))
Traceback (most recent call last):
...
bcast.core.errors.InputError: mine Add: takes 2 inputs (A, B), got 3
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..core.errors import InputError

__all__ = ["Op"]


def _name(dtype: Any) -> str:
    return str(dtype.name)


def _same(dtype: Any) -> Any:
    return dtype


@dataclass(frozen=True)
class Op:
    """One op of a framework's op table: its ``name``; a table's own record adds the rest."""

    name: str

    #: What every message about one of the table's ops begins with, before the op's name.
    framework: ClassVar[str] = ""

    @property
    def where(self) -> str:
        """The op as messages name it: the framework, then the op (``onnx Add``)."""
        return f"{self.framework} {self.name}"

    def input_names(self, n: int) -> tuple[str, ...]:
        """The names of the op's first ``n`` inputs."""
        raise NotImplementedError(f"{type(self).__name__} names no inputs")

    # ----------------------------------------------------------------------- arity

    def check_arity(self, inputs: Sequence, allowed: Container[int]) -> None:
        """Raise an InputError (:meth:`arity_message`) unless ``len(inputs)`` is in ``allowed``."""
        if len(inputs) not in allowed:
            raise InputError(self.arity_message(inputs, allowed))

    def arity_message(self, inputs: Sequence, allowed: Container[int]) -> str:
        """What :meth:`check_arity` says when ``inputs`` are too few or too many (``allowed``:
        a tuple of counts, or a range)."""
        counts = sorted(allowed) if isinstance(allowed, (tuple, list, range)) else []
        most = counts[-1] if counts else len(inputs)
        want = " or ".join(str(n) for n in counts)
        return f"{self.where}: takes {want} inputs ({', '.join(self.input_names(most))}), got {len(inputs)}"

    # ----------------------------------------------------------------------- dtypes

    def check_dtypes(self, named: Sequence[tuple[str, str, Any]], allowed: Mapping[str, Collection[str]], *,
                     type_name: Callable[[Any], str] = _name, key: Callable[[Any], Any] = _same,
                     same_first: bool = False, context: Any = None) -> dict[str, tuple[str, Any]]:
        """Check the dtypes of a call's inputs; return ``{type variable: (its first input's name,
        its dtype)}``.

        ``named``: ``(input name, type variable, dtype)`` of each input; ``allowed``: the type
        names each type variable allows (``type_name(dtype)`` must be among them); the inputs of
        one type variable must have one ``key(dtype)`` (where their dtypes differ but their keys
        do not, as numpy's strings of two lengths, the variable's dtype is ``object``).  The
        checks run input by input, each input's allowed types first; ``same_first``: every
        input's sameness first, then the allowed types of each type variable's first input.
        A failed check raises an InputError of :meth:`dtype_message` or
        :meth:`dtypes_differ_message` (``context`` passed on to them).
        """
        first: dict[str, tuple[str, Any]] = {}
        for name, tv, dtype in named:
            if not same_first and type_name(dtype) not in allowed[tv]:
                raise InputError(self.dtype_message(named, name, tv, dtype, allowed[tv], context))
            if tv in first and key(first[tv][1]) != key(dtype):
                raise InputError(self.dtypes_differ_message(first[tv][0], first[tv][1], name, dtype, tv, context))
            if tv in first and first[tv][1] != dtype:
                first[tv] = (first[tv][0], np.dtype(object))
            first.setdefault(tv, (name, dtype))
        if same_first:
            for tv, (name, dtype) in first.items():
                if type_name(dtype) not in allowed[tv]:
                    raise InputError(self.dtype_message(named, name, tv, dtype, allowed[tv], context))
        return first

    def dtype_message(self, named: Sequence[tuple[str, str, Any]], name: str, tv: str, dtype: Any,
                      allowed: Collection[str], context: Any) -> str:
        """What :meth:`check_dtypes` says when input ``name``'s dtype is not one ``tv`` allows."""
        return f"{self.where}: input {name} must be one of {', '.join(sorted(allowed))} ({tv}); got {dtype}"

    def dtypes_differ_message(self, first: str, first_dtype: Any, name: str, dtype: Any, tv: str,
                              context: Any) -> str:
        """What :meth:`check_dtypes` says when inputs ``first`` and ``name`` of ``tv`` differ."""
        return f"{self.where}: inputs {first} and {name} must have the same type ({tv}); got {first_dtype} and {dtype}"

