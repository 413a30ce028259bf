"""Oracle: ncnn's BinaryOp layer (the ``ncnn`` PyPI wheel), on numpy arrays.

Two blobs run through a one-layer net built from an in-memory param (the
Python binding copies the blob lists of ``Layer.forward``, so a bare layer's
outputs would be lost); the with_scalar form runs a bare layer in place,
whose ``ParamDict`` takes the scalar exactly (a param text cannot hold every
float32, nor inf or NaN).  Packing, fp16 and bf16 are off and one thread runs,
so the x86 fp32 kernels compute.

:func:`run` runs in this process.  ncnn checks no shapes: on a pair outside its
rules it reads past the end of a row, and an empty blob kills the process
(SIGFPE).  Run such inputs through :func:`run_isolated` or :func:`run_many`,
which use a child process and turn a death into :class:`RuntimeCrashed`.

The wheel is imported on first use: ``pip install ncnn``.

>>> import numpy as np
>>> run("ADD", np.float32([[0, 1], [2, 3]]), np.float32([100, 200]))  # doctest: +SKIP
array([[100., 101.],
       [202., 203.]], dtype=float32)
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
from functools import cache

import numpy as np

from ...core._format import format_shape
from .ops import op as _op
from .._oracle import RuntimeCrashed, RuntimeRefused, exit_status

__all__ = [
    "RuntimeCrashed", "RuntimeRefused", "extract", "forward", "load_net", "ncnn_dims", "run", "run_isolated",
    "run_many", "ulp_distance", "version",
]

RUNTIME = "ncnn"

#: Input in0, Input in1, BinaryOp in0 in1 -> out; %d is the op type.
TWO_BLOBS = "7767517\n3 3\nInput in0 0 1 in0\nInput in1 0 1 in1\nBinaryOp op 2 1 in0 in1 out 0=%d\n"


def _ncnn():
    from ...core._require import require

    return require("ncnn", "the ncnn oracle")


def version() -> str:
    """The installed wheel's version, e.g. ``1.0.20261020``."""
    return _ncnn().__version__


def _configure(opt) -> None:
    """fp32 kernels, no packing, one thread: the layer as the reference note measured it."""
    opt.use_packing_layout = False
    opt.num_threads = 1
    opt.use_fp16_storage = opt.use_fp16_packed = opt.use_fp16_arithmetic = False
    opt.use_bf16_storage = False


def load_net(param: str, what: str = "the .param"):
    """An ncnn ``Net`` of the ``.param`` text ``param`` with no weights, set as every run here is
    (fp32 kernels, no packing, one thread); :class:`RuntimeRefused` "cannot load ``what``" if ncnn
    refuses the text."""
    ncnn = _ncnn()
    net = ncnn.Net()
    _configure(net.opt)
    if net.load_param_mem(param) != 0:
        raise RuntimeRefused(RUNTIME, f"cannot load {what}")
    net.load_model(ncnn.DataReaderFromEmpty())
    return net


def extract(net, feeds: dict, output: str) -> np.ndarray:
    """Run ``net`` (from :func:`load_net`) on ``feeds`` (blob name -> array, as float32) and return the
    blob ``output`` as a numpy array; :class:`RuntimeRefused` when ncnn returns non-zero."""
    ex = net.create_extractor()
    for name, x in feeds.items():
        ex.input(name, _mat(x))
    ret, mat = ex.extract(output)
    if ret != 0:
        raise RuntimeRefused(RUNTIME, f"extracting {output} returned {ret}")
    return np.array(mat).copy()


@cache
def _net(code: int):
    return load_net(TWO_BLOBS % code, f"a BinaryOp net with op_type {code}")


@cache
def _option():
    opt = _ncnn().Option()
    _configure(opt)
    return opt


def _scalar_layer(code: int, scalar: float):
    ncnn = _ncnn()
    layer = ncnn.create_layer("BinaryOp")
    pd = ncnn.ParamDict()
    pd.set(0, code)
    pd.set(1, 1)
    pd.set(2, float(np.float32(scalar)))
    if layer.load_param(pd) != 0 or layer.create_pipeline(_option()) != 0:
        raise RuntimeRefused(RUNTIME, f"cannot create a with_scalar BinaryOp with op_type {code}")
    return layer


def _mat(x):
    """A blob holding a copy of ``x`` (numpy order: a (c,h,w) array is [w,h,c])."""
    return _ncnn().Mat(np.ascontiguousarray(x, dtype=np.float32)).clone()


def ncnn_dims(mat) -> list:
    """A Mat's shape as ncnn writes it: [w], [w,h], [w,h,c] or [w,h,d,c]."""
    return [[mat.w], [mat.w, mat.h], [mat.w, mat.h, mat.c], [mat.w, mat.h, mat.d, mat.c]][mat.dims - 1]


def forward(op_type, a, b=None, *, with_scalar: bool = False, scalar: float = 0.0):
    """Run the layer once: ``(ret, Mat)``, ncnn's return code and output blob.

    Inputs are converted to float32 (contiguous).  No check of any kind: on
    shapes ncnn does not support this may read out of bounds or crash.
    """
    code = _op(op_type).code
    if with_scalar:
        mat = _mat(a)
        ret = _scalar_layer(code, scalar).forward_inplace(mat, _option())
        return ret, mat
    ex = _net(code).create_extractor()
    ex.input("in0", _mat(a))
    ex.input("in1", _mat(b))
    return ex.extract("out")


def run(op_type, a, b=None, *, with_scalar: bool = False, scalar: float = 0.0) -> np.ndarray:
    """ncnn's BinaryOp ``op_type`` (0-18 or a name) on ``a`` and ``b``, in this process.

    Returns the output as a float32 numpy array; raises :class:`RuntimeRefused`
    when ncnn returns non-zero.  For shapes outside ncnn's rules use
    :func:`run_isolated`.
    """
    ret, mat = forward(op_type, a, b, with_scalar=with_scalar, scalar=scalar)
    if ret != 0:
        raise RuntimeRefused(RUNTIME, f"BinaryOp {_op(op_type).name} returned {ret}")
    return np.array(mat).copy()


def ulp_distance(x, y) -> np.ndarray:
    """Element-wise distance between two float32 arrays in units in the last place.

    Two NaNs are 0 apart; a NaN and a number are ``2**32`` apart; infinities
    are one step past the largest float; -0 and +0 are 0 apart.

    >>> int(ulp_distance(np.float32(1), np.nextafter(np.float32(1), np.float32(2))))
    1
    """
    x, y = np.broadcast_arrays(np.asarray(x, np.float32), np.asarray(y, np.float32))

    def ordinal(v):
        i = np.array(v, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    nx, ny = np.isnan(x), np.isnan(y)
    d = np.abs(ordinal(np.where(nx, 0, x)) - ordinal(np.where(ny, 0, y)))
    return np.where(nx & ny, 0, np.where(nx | ny, 2**32, d))


# --------------------------------------------------------------------------- in a child process


def run_isolated(op_type, a, b=None, *, with_scalar: bool = False, scalar: float = 0.0, timeout: float = 60):
    """:func:`run` in a child process: a crash raises :class:`RuntimeCrashed`."""
    (result,) = run_many([(op_type, a, b, with_scalar, scalar)], timeout=timeout)
    if isinstance(result, RuntimeRefused):
        raise result
    return result


def run_many(cases, *, timeout: float = 120) -> list:
    """Run many cases in child processes; one result per case, in order.

    ``cases`` holds tuples ``(op_type, a, b)`` or ``(op_type, a, b,
    with_scalar, scalar)``.  Each result is the output array, or the
    :class:`RuntimeRefused` (:class:`RuntimeCrashed` if the child died on that
    case) -- returned, not raised.  After a crash the remaining cases run in a
    fresh child.
    """
    todo = [_case(c) for c in cases]
    results: list = []
    while len(results) < len(todo):
        done, crash = _run_child(todo[len(results):], timeout)
        results.extend(done)
        if crash is not None:
            results.append(crash)
    return results


def _case(case) -> tuple:
    op_type, a, b, *rest = case
    with_scalar, scalar = (rest + [False, 0.0][len(rest):])[:2]
    return (_op(op_type).code, np.ascontiguousarray(a, np.float32),
            None if b is None else np.ascontiguousarray(b, np.float32), bool(with_scalar), float(scalar))


def _run_child(cases: list, timeout: float):
    """One child on ``cases``: the results it wrote, and the crash that stopped it (or None)."""
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "from bcast.frameworks.ncnn.oracle import _child_main; _child_main()"],
            input=pickle.dumps(cases), capture_output=True, timeout=timeout, env=env,
        )
    except subprocess.TimeoutExpired:
        return [], RuntimeCrashed(RUNTIME, f"the child running {len(cases)} case(s) timed out after {timeout} s", -9)
    done = _read_results(proc.stdout)
    if len(done) == len(cases):
        return done, None
    if proc.returncode == 0:
        detail = proc.stderr.decode(errors="replace").strip()[-300:]
        return done, RuntimeCrashed(RUNTIME, f"the child stopped without a result: {detail}", 0)
    code, a, b, with_scalar, _ = cases[len(done)]
    shapes = f"A {format_shape(a.shape)}" + ("" if with_scalar else f" and B {format_shape(b.shape)}")
    return done, RuntimeCrashed(
        RUNTIME, f"BinaryOp {_op(code).name} on {shapes} killed the process ({exit_status(proc.returncode)})",
        proc.returncode,
    )


def _read_results(data: bytes) -> list:
    stream, out = io.BytesIO(data), []
    while stream.tell() < len(data):
        try:
            ret, value = pickle.load(stream)
        except Exception:  # a record cut short by the crash
            break
        out.append(value if ret == 0 else RuntimeRefused(RUNTIME, f"BinaryOp returned {ret}"))
    return out




def _child_main() -> None:
    """The child: read the pickled cases on stdin, write one pickled ``(ret, array)`` per case."""
    cases = pickle.load(sys.stdin.buffer)
    out = sys.stdout.buffer
    for code, a, b, with_scalar, scalar in cases:
        ret, mat = forward(code, a, b, with_scalar=with_scalar, scalar=scalar)
        pickle.dump((ret, np.array(mat).copy() if ret == 0 else None), out)
        out.flush()
