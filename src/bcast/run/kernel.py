"""What the executor knows of a kernel: whether it is element-wise, and which ufunc it computes.

A kernel is ``f(*views, out=None)`` applied by :func:`bcast.run.execute.run_plan`
to the inputs' stride-0 views.  A numpy ufunc with one output is a kernel as it
is.  A framework's op table marks its own kernels with :func:`elementwise`: one
attribute, a :class:`Marks`, says that slices of ``out`` may be computed from the
same slices of the views (so :mod:`bcast.run.parallel` may split the op among
threads) and, where the kernel is a numpy ufunc run with warnings off, which
ufunc and whether it takes its inputs swapped (so :mod:`bcast.run._kernels` may
run it as a compiled loop and the small-op fast paths may call the ufunc on the
arrays as they are).

Also here, written once for every op table: :func:`ufunc_kernel` (a ufunc with
warnings off, marked) and :func:`std_max` / :func:`std_min` (C++'s, whose NaN
handling differs from numpy's).

>>> import numpy as np
>>> k = ufunc_kernel(np.add)
>>> is_elementwise(k), ufunc_of(k) == (np.add, False), is_elementwise(len)
(True, True, False)
>>> out = np.empty(2)
>>> std_max(np.array([np.nan, 1.0]), np.array([0.0, np.nan]), out)
array([nan,  1.])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import numpy as np

from .out import overlaps

__all__ = ["LOOPS", "Marks", "elementwise", "is_elementwise", "loop_of", "natural_ufunc", "std_max", "std_min",
           "ufunc_kernel", "ufunc_of"]

_ATTR = "_bcast_kernel"


@dataclass(frozen=True, slots=True)
class Marks:
    """What a marked kernel is: element-wise always; ``ufunc``: the numpy ufunc it computes with
    numpy's floating-point warnings off (None: some other element-wise function); ``swapped``:
    it computes ``ufunc(views[1], views[0])``."""

    ufunc: np.ufunc | None = None
    swapped: bool = False
    loop: str | None = None


def elementwise(func: Callable, ufunc: np.ufunc | None = None, *, swapped: bool = False,
                loop: str | None = None) -> Callable:
    """Mark ``func(*views, out=out)`` as element-wise: computing slices of ``out`` from the same
    slices of the views gives the same values, and it raises nothing that depends on the values.
    ``ufunc``: it computes this numpy ufunc (of the views swapped: ``swapped``) with warnings off.
    ``loop``: it computes one of the compiled loops that are not a single ufunc, bit for bit
    (:data:`LOOPS`)."""
    if loop is not None and loop not in LOOPS:
        raise ValueError(f"unknown compiled loop {loop!r}; the loops are {', '.join(sorted(LOOPS))}")
    setattr(func, _ATTR, Marks(ufunc, swapped, loop))
    return func


#: What a kernel marked ``loop=`` computes, written once: every input is a view of the output's shape.
LOOPS = {
    "where": "(cond, x, y): x where cond, else y (bits copied; x, y and out of one dtype)",
    "sum": "(x0, x1, ...): ((x0 + x1) + x2) + ..., each step rounded to the output's dtype (numpy's add)",
    "mean": "(x0, x1, ...): the 'sum' loop, then divided by the input count in the output's dtype (numpy's divide)",
    "max": "(x0, x1, ...): numpy's maximum folded left to right (a NaN anywhere is kept)",
    "min": "(x0, x1, ...): numpy's minimum folded left to right (a NaN anywhere is kept)",
    "div": "(a, b): floats: numpy's divide; integers: the quotient truncated toward zero "
           "(C's, as ONNX's Div; numpy's floor_divide's 0 for a zero divisor, wrapping on MIN / -1)",
    "pow": "(x, y): numpy's power where x, y and out are all float16; ONNX's where they share an integer type "
           "(wrapping; a negative exponent: 1 / x**-y truncated toward zero, 0 for x = 0)",
}


def loop_of(func: Callable) -> str | None:
    """The compiled loop a marked kernel computes (:data:`LOOPS`), else None."""
    marks = getattr(func, _ATTR, None)
    return marks.loop if type(marks) is Marks else None


def is_elementwise(func: Callable) -> bool:
    """A ufunc with one output, or a callable marked by :func:`elementwise`."""
    if type(func) is np.ufunc:
        return func.nout == 1
    return type(getattr(func, _ATTR, None)) is Marks


def ufunc_of(func: Callable) -> tuple[np.ufunc, bool] | None:
    """``(ufunc, swapped)`` of a kernel marked as computing a ufunc, else None."""
    marks = getattr(func, _ATTR, None)
    if type(marks) is not Marks or marks.ufunc is None:
        return None
    return marks.ufunc, marks.swapped


#: The ufunc a kernel marked with a loop computes on float inputs of one dtype: the loop's float form.
_FLOAT_UFUNCS = {"div": np.divide}


def natural_ufunc(func: Callable, dtypes: tuple = ()) -> np.ufunc | None:
    """The ufunc that computes the marked kernel ``func`` on its inputs in order (not swapped), or None;
    given the inputs' ``dtypes``, also a marked loop's ufunc on floats (``div`` on floats of one dtype is
    numpy's divide).

    >>> import bcast.frameworks.onnx.kernels as k
    >>> natural_ufunc(k.div), natural_ufunc(k.div, (np.dtype(np.float32),) * 2) is np.divide
    (None, True)
    """
    spec = ufunc_of(func)
    if spec is not None:
        return spec[0] if not spec[1] else None
    loop = loop_of(func)
    f = None if loop is None else _FLOAT_UFUNCS.get(loop)
    if f is None or not dtypes or any(np.dtype(d).kind != "f" or d != dtypes[0] for d in dtypes):
        return None
    return f


def ufunc_kernel(ufunc: np.ufunc, *, swapped: bool = False) -> Callable:
    """``ufunc`` as a kernel ``f(*views, out=None)`` with numpy's floating-point warnings off
    (inf and NaN are values, as in the runtimes), marked."""
    if swapped:
        def kernel(*views: Any, out: Any = None) -> Any:
            with np.errstate(all="ignore"):
                return ufunc(*views[::-1], out=out)
    else:
        def kernel(*views: Any, out: Any = None) -> Any:
            with np.errstate(all="ignore"):
                return ufunc(*views, out=out)

    kernel.__name__ = kernel.__qualname__ = ufunc.__name__
    return elementwise(kernel, ufunc, swapped=swapped)


def _pick(x: Any, y: Any, take_y: Any, out: Any) -> Any:
    """y where ``take_y``, else x: a new array, or written into ``out`` (which may be an input)."""
    if out is None:
        return np.where(take_y, y, x)
    if overlaps(out, (x, y)):  # a masked copy into an input would read what it has overwritten
        out[...] = np.where(take_y, y, x)
        return out
    np.copyto(out, x)
    np.copyto(out, y, where=take_y)
    return out


def std_max(x: Any, y: Any, out: Any = None) -> Any:
    """C++'s ``std::max(x, y)`` = ``(x < y) ? y : x``, into ``out`` (None: a new array): a NaN
    in x is kept, a NaN in y is not (numpy's maximum keeps both), and of -0 and +0 the first."""
    return _pick(x, y, np.less(x, y), out)


def std_min(x: Any, y: Any, out: Any = None) -> Any:
    """C++'s ``std::min(x, y)`` = ``(y < x) ? y : x``, into ``out`` (None: a new array)."""
    return _pick(x, y, np.less(y, x), out)
