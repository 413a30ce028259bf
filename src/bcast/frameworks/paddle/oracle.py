"""Oracle: PaddlePaddle itself (``paddlepaddle``, dynamic mode on the CPU), on numpy arrays.

:func:`run` calls the op the way :mod:`bcast.frameworks.paddle.ops` names it: ``paddle.<op>(x, y)`` for
the binary ops, ``Tensor.<op>_`` on a copy of ``x`` for the in-place forms, ``paddle.where``, ``paddle.expand``,
``paddle.broadcast_to``, ``paddle.broadcast_tensors``; the legacy ``elementwise_*`` operators with their
``axis`` through ``paddle._legacy_C_ops`` (the operators themselves, their InferMeta and kernel).
Tensors come from the arrays with ``paddle.to_tensor`` and go back with ``.numpy()`` (a list for
``broadcast_tensors``).  Any error Paddle raises is a :class:`RuntimeRefused` with
Paddle's own sentence (its messages hold a C++ traceback and a hint besides).

paddle is imported on first use: ``pip install 'bcast[paddle]'`` (the ``paddlepaddle`` wheel).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np

from .._oracle import RuntimeRefused
from .ops import op as _op

__all__ = ["RuntimeRefused", "run", "run_many", "run_translated", "version"]

RUNTIME = "paddle"


def _paddle() -> Any:
    from ...core._require import require

    with warnings.catch_warnings():  # its import warns that no ccache is installed (for C++ extensions)
        warnings.simplefilter("ignore")
        paddle = require("paddle", "the paddle oracle")
    paddle.set_device("cpu")
    return paddle


def version() -> str:
    """The installed paddlepaddle's version, e.g. ``3.3.1``."""
    return str(_paddle().__version__)


def _tensor(paddle: Any, x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return paddle.to_tensor(np.array(x, copy=True))
    return x  # a Python number (y of a binary op)


def _numpy(t: Any) -> Any:
    if isinstance(t, (tuple, list)):
        return [_numpy(x) for x in t]
    return np.array(t.numpy(), copy=True)


def _call(paddle: Any, name: str, arrays: tuple, axis: Any) -> Any:
    o = _op(name)
    if o.kind == "expand":
        return getattr(paddle, o.name)(_tensor(paddle, arrays[0]), [int(d) for d in arrays[1]])
    tensors = [_tensor(paddle, x) for x in arrays]
    if o.kind == "tensors":
        return paddle.broadcast_tensors(tensors)
    if o.kind == "axis":
        legacy = getattr(paddle._legacy_C_ops, o.name)
        return legacy(*tensors, "axis", -1 if axis is None else int(axis))
    if o.kind == "inplace":  # Tensor.add_ (paddle.add_ is not exported)
        return getattr(tensors[0], o.name)(tensors[1])
    return getattr(paddle, o.name)(*tensors)


def _message(e: BaseException) -> str:
    """Paddle's own sentence: the line that starts with its error kind ("(InvalidArgument) Broadcast dimension
    mismatch. ...", or "InvalidArgumentError: ..." from the static executor), else the first line (a
    Python-level ValueError's)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    found = [ln for ln in lines if re.match(r"\(\w+\) |\w+Error: ", ln)]
    return (found[0] if found else lines[0] if lines else type(e).__name__)[:500]


def run(name: str, *arrays: Any, axis: Any = None) -> Any:
    """Op ``name`` (:func:`bcast.frameworks.paddle.ops.ops`) on ``arrays`` in Paddle: the result as numpy
    (a list of arrays for ``broadcast_tensors``), or :class:`RuntimeRefused` raised with Paddle's message."""
    paddle = _paddle()
    try:
        result = _call(paddle, name, arrays, axis)
        return _numpy(result)
    except Exception as e:  # Paddle's ValueError / RuntimeError subclasses, TypeError on bad arguments
        raise RuntimeRefused(RUNTIME, _message(e)) from None


def run_many(name: str, jobs: list) -> list:
    """:func:`run` on each ``(arrays, attrs)`` of ``jobs`` (``attrs``: ``{"axis": ...}`` or empty), in this
    process; each result is the output or the :class:`RuntimeRefused` (returned, not raised)."""
    out: list = []
    for arrays, attrs in jobs:
        try:
            out.append(run(name, *arrays, **attrs))
        except RuntimeRefused as e:
            out.append(e)
    return out


def run_translated(name: str, x: Any, y: Any, axis: int = -1) -> Any:
    """A legacy ``elementwise_*`` operator with ``axis`` the way Paddle 3.x runs an old static program (a
    ``.pdmodel`` of Paddle 1.x/2.x): the operator in a program of the old IR, translated to PIR
    (``paddle.pir.translate_to_pir``: its ``ElementwiseTranscriber`` turns ``axis`` into a reshape of Y, or
    nothing) and run by the PIR executor.  The output as numpy, or :class:`RuntimeRefused` (also where the
    old IR refuses to build the program: its InferShape checks the operator's own rule)."""
    paddle = _paddle()
    o = _op(name)
    if o.kind != "axis":
        raise ValueError(f"run_translated runs the legacy elementwise_* operators, not {o.name}")
    from paddle.pir_utils import OldIrGuard

    paddle.enable_static()
    try:
        with OldIrGuard():
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                xv = paddle.static.data("x", list(np.shape(x)), "float32")
                yv = paddle.static.data("y", list(np.shape(y)), "float32")
                helper = paddle.base.layer_helper.LayerHelper(o.name)
                out = helper.create_variable_for_type_inference("float32")
                helper.append_op(type=o.name, inputs={"X": [xv], "Y": [yv]}, outputs={"Out": [out]},
                                 attrs={"axis": int(axis)})  # the old IR runs the operator's InferShape here
        program = paddle.pir.translate_to_pir(main.desc)
        last = program.global_block().ops[-1]
        feed = {"x": np.asarray(x, np.float32), "y": np.asarray(y, np.float32)}
        result = paddle.static.Executor(paddle.CPUPlace()).run(program, feed=feed, fetch_list=[last.result(0)])
        return np.array(result[0], copy=True)
    except Exception as e:  # the old IR's InferShape while building, or the translated program at run
        raise RuntimeRefused(RUNTIME, _message(e)) from None
    finally:
        paddle.disable_static()
