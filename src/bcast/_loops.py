"""The compiled loop of :mod:`bcast._kernels` (imports numba: only that module imports this one)."""

from __future__ import annotations

import numba
import numpy as np

_u = np.uint64


#: the op codes of :func:`rows`
CODES = {"add": 0, "subtract": 1, "multiply": 2, "divide": 3}


@numba.njit(inline="always")
def _store(op, out, i, x, y):  # pragma: no cover - compiled
    # Each branch stores its own result in out's type: int32 + int32 is an int64 in numba and
    # the store wraps it, as numpy does.  (A function returning the result would unify the
    # branches' types: float64 for ints, through divide.)
    if op == 0:
        out[i] = x + y
    elif op == 1:
        out[i] = x - y
    elif op == 2:
        out[i] = x * y
    else:
        out[i] = x / y


# error_model="numpy": x / 0 is inf or nan, as in numpy, not ZeroDivisionError.  Indices are
# unsigned (strides are >= 0): numba then skips its negative-index wraparound and LLVM
# vectorizes the inner loops (each branch has constant inner strides, and ``op`` is the same for
# every element: LLVM takes its test out of the loop).  Compiled once per dtype, cached on disk.
@numba.njit(nogil=True, boundscheck=False, error_model="numpy", cache=True)
def rows(op, a, b, out, J, K, as0, as1, as2, bs0, bs1, bs2, t0, t1):  # pragma: no cover - compiled
    """Rows ``t0 <= t < t1`` of ``out`` (rows of K elements, J rows per outer step):
    ``out[t*K + k] = a[i*as0 + j*as1 + k*as2] (op) b[i*bs0 + j*bs1 + k*bs2]``, t = i*J + j."""
    nj, nk = _u(J), _u(K)
    a0, a1, a2, b0, b1, b2 = _u(as0), _u(as1), _u(as2), _u(bs0), _u(bs1), _u(bs2)
    i = _u(t0) // nj
    j = _u(t0) - i * nj
    po = _u(t0) * nk
    for _ in range(_u(t0), _u(t1)):
        pa = i * a0 + j * a1
        pb = i * b0 + j * b1
        if a2 == 1 and b2 == 1:
            for k in range(nk):
                _store(op, out, po + k, a[pa + k], b[pb + k])
        elif a2 == 1 and b2 == 0:
            y = b[pb]
            for k in range(nk):
                _store(op, out, po + k, a[pa + k], y)
        elif a2 == 0 and b2 == 1:
            x = a[pa]
            for k in range(nk):
                _store(op, out, po + k, x, b[pb + k])
        else:
            for k in range(nk):
                _store(op, out, po + k, a[pa + k * a2], b[pb + k * b2])
        po += nk
        j += _u(1)
        if j == nj:
            j = _u(0)
            i += _u(1)
