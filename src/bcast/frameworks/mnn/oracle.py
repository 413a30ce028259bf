"""Oracle: MNN's BinaryOp and Select (the ``MNN`` PyPI wheel), through its expression API.

Each input becomes a constant of its shape and type (``MNN.expr.const``, NCHW, float32 or int32);
the op is the expression function of the same BinaryOpOperation (``_F.add`` is ADD,
``_F.divide`` REALDIV, ...), called on two variables of one type, so the wheel's Python layer
casts nothing; reading the result runs the op on the CPU backend.  Where MNN's shape computer
refuses the shapes, the result has no shape (MNN logs ``Broad cast error``):
:class:`RuntimeRefused`.

:func:`run_many` runs a batch in a child process, so a crash (or MNN's log on the C stdout) does
not reach the caller; :func:`run` runs one op in this process.

The wheel is imported on first use: ``pip install 'bcast[mnn]'``.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Sequence

import numpy as np

from .._oracle import RuntimeCrashed, RuntimeRefused
from .ops import op as _op

__all__ = ["EXPR", "RuntimeCrashed", "RuntimeRefused", "run", "run_many", "version"]

RUNTIME = "MNN"

#: The expression function (``MNN.expr``'s C functions) of each op.
EXPR = {
    "ADD": "add", "SUB": "subtract", "MUL": "multiply", "POW": "pow", "REALDIV": "divide", "MINIMUM": "minimum",
    "MAXIMUM": "maximum", "GREATER": "greater", "GREATER_EQUAL": "greater_equal", "LESS": "less",
    "FLOORDIV": "floordiv", "SquaredDifference": "squared_difference", "EQUAL": "equal",
    "LESS_EQUAL": "less_equal", "FLOORMOD": "floormod", "MOD": "mod", "ATAN2": "atan2", "NOTEQUAL": "not_equal",
    "SELECT": "select",
}


def _expr():
    from ...core._require import require

    require("MNN", "the MNN oracle")
    import _mnncengine._expr as F  # the C functions MNN.expr wraps (no casts, no conversions)

    return F


def version() -> str:
    """The installed wheel's version, e.g. ``3.6.1``."""
    from importlib.metadata import version as _version

    return _version("MNN")


def _var(F, x: np.ndarray):
    if x.dtype == np.int32 or x.dtype == np.bool_:
        return F.const(np.ascontiguousarray(x, np.int32), list(x.shape), F.NCHW, F.int)
    return F.const(np.ascontiguousarray(x, np.float32), list(x.shape), F.NCHW, F.float)


def run(op: str, *arrays: np.ndarray) -> np.ndarray:
    """MNN's op on ``arrays`` (float32 or int32; a SELECT cond may be bool), in this process: the output
    array, or :class:`RuntimeRefused` where MNN's shape computer refuses."""
    F = _expr()
    o = _op(op)
    out = getattr(F, EXPR[o.name])(*(_var(F, np.asarray(x)) for x in arrays))
    if out is None or not out.valid:  # (a Var of rank 0 is falsy: its shape is [])
        raise RuntimeRefused(RUNTIME, f"{o.name} of {', '.join(str(tuple(x.shape)) for x in arrays)}: no output "
                                      "(MNN's shape computer refuses it)")
    try:
        value = out.read()
    except SystemError:  # MNN logged why (on the C stdout); the binding raises a bare SystemError
        raise RuntimeRefused(RUNTIME, f"{o.name} of {', '.join(str(tuple(x.shape)) for x in arrays)}: reading the "
                                      f"output of shape {tuple(out.shape)} fails") from None
    return np.array(value).reshape(tuple(out.shape))


_CHILD = """
import os, pickle, sys
result = os.fdopen(os.dup(1), "wb")  # MNN prints on the C stdout: the result goes out on a copy of it
os.dup2(2, 1)
from bcast.frameworks.mnn import oracle
from bcast.frameworks._oracle import RuntimeRefused
jobs = pickle.load(sys.stdin.buffer)
out = []
for op, arrays in jobs:
    try:
        out.append(oracle.run(op, *arrays))
    except RuntimeRefused as e:
        out.append(e)
    except Exception as e:
        out.append(RuntimeRefused("MNN", f"{type(e).__name__}: {e}"))
result.write(pickle.dumps(out))
result.close()
"""


def run_many(jobs: Sequence[tuple]) -> list:
    """Each ``(op, arrays)`` of ``jobs`` run in one child process: its output array or its
    :class:`RuntimeRefused` (every job a :class:`RuntimeCrashed` where the child dies)."""
    if not jobs:
        return []
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    data = pickle.dumps([(op, [np.asarray(x) for x in arrays]) for op, arrays in jobs])
    done = subprocess.run([sys.executable, "-c", _CHILD], input=data, capture_output=True, timeout=300, env=env)
    if done.returncode != 0:
        crash = RuntimeCrashed(RUNTIME, f"the child process died ({done.returncode})", done.returncode)
        return [crash] * len(jobs)
    return list(pickle.loads(done.stdout))
