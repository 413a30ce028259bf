"""Issue 18, item 5: no temporary beyond the output.  For every op of the three op tables, a
large call (2^21 output elements, in bcast's threads) allocates its output and at most 1 MiB
more; into a given ``out=``, at most 1 MiB.  tracemalloc sees numpy's data allocations (numpy
reports them to it); the inputs exist before it starts, and calls first warm the pools, the
scratch, the imports and the compiled loops."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import bcast
import bcast.frameworks.ncnn.ops as bn
import bcast.frameworks.onnx.ops as bo
import bcast.frameworks.openvino.ops as bov
from bcast.run import _kernels

MiB = 1 << 20
ROWS, COLS = 2048, 1024  # 2^21 elements: at bcast.run.parallel.MIN_ELEMENTS, so two threads run it
SHAPE = (ROWS, COLS)


def _arrays(dtype, *shapes, value=2):
    return [np.full(s, value, dtype) for s in shapes]


def _peak(call) -> tuple[int, object]:
    call()  # warm: imports, the pool's threads, their scratch; a compiled loop is asked for
    _kernels.wait()  # (compiled in a background thread, whose allocations tracemalloc would see)
    call()  # the loop, made ready for this call
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = call()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, result


def _check(run, inputs, **kw):
    previous = bcast.run.parallel.set_threads(2)
    try:
        peak, result = _peak(lambda: run(*inputs, **kw))
        assert isinstance(result, np.ndarray) and result.size >= 1 << 20
        assert peak <= result.nbytes + MiB, f"out=None: peak {peak / MiB:.2f} MiB, output {result.nbytes / MiB} MiB"
        out = np.empty_like(result)
        peak, again = _peak(lambda: run(*inputs, out=out, **kw))
        assert again is out
        assert peak <= MiB, f"out=: peak {peak / MiB:.2f} MiB"
    finally:
        bcast.run.parallel.set_threads(previous)


def _onnx_cases():
    f32, i32 = np.float32, np.int32
    row = ((ROWS, COLS), (COLS,))
    cases = {
        "Div": [(f32, {}), (np.int8, {}), (np.int16, {}), (i32, {}), (np.int64, {}), (np.uint8, {})],
        "Mod": [(f32, {"fmod": 1}), (i32, {})],
        "BitShift": [(np.uint32, {"direction": "LEFT"})],
    }
    out = []
    for name, o in bo.OPS.items():
        if name in ("Gemm", "Expand", "Pow", "Where"):
            continue
        types = o.versions[-1].types["T"]
        dtype = f32 if "float" in types else i32 if "int32" in types else np.bool_
        for dt, attrs in cases.get(name, [(dtype, {})]):
            n = 3 if o.variadic else 2
            shapes = row if n == 2 else row + ((ROWS, 1),)
            out.append(pytest.param(name, _arrays(dt, *shapes), attrs, id=f"{name}-{np.dtype(dt).name}-{n}"))
            if o.variadic:
                out.append(pytest.param(name, _arrays(dt, *row), attrs, id=f"{name}-{np.dtype(dt).name}-2"))
    for x, y in ((f32, f32), (np.float16, f32), (i32, np.int8), (i32, f32), (np.int64, np.int64)):
        xs, ys = _arrays(x, *row)
        if np.dtype(y).kind == "i":
            ys = np.tile(np.array([-1, 0, 1, 2], y), COLS // 4)  # negative exponents too
        else:
            ys = ys.astype(y)
        out.append(pytest.param("Pow", [xs, ys], {}, id=f"Pow-{np.dtype(x).name}-{np.dtype(y).name}"))
    out.append(pytest.param("Where", [np.ones(SHAPE, bool), *_arrays(f32, *row)], {}, id="Where"))
    out.append(pytest.param("Gemm", _arrays(f32, (ROWS, 8), (8, COLS), (COLS,)), {"beta": 0.5}, id="Gemm-float32"))
    out.append(pytest.param("Gemm", _arrays(np.int64, (ROWS, 8), (8, COLS), SHAPE), {"alpha": 2.0, "beta": 3.0},
                            id="Gemm-int64-scaled"))
    out.append(pytest.param("Expand", [np.ones(COLS, f32), np.array(SHAPE, np.int64)], {}, id="Expand"))
    return out


@pytest.mark.parametrize("op, inputs, attrs", _onnx_cases())
def test_onnx_op_allocates_its_output_only(op, inputs, attrs):
    _check(lambda *xs, **kw: bo.run(op, *xs, **kw), inputs, **attrs)


def _openvino_cases():
    row = ((ROWS, COLS), (COLS,))
    out = []
    for name, o in bov.OPS.items():
        if o.kind == "select":
            out.append(pytest.param(name, [np.ones(SHAPE, bool), *_arrays(np.float32, *row)], {}, id=name))
            continue
        if o.kind == "broadcast":
            out.append(pytest.param(name, [np.ones(COLS, np.float32), list(SHAPE)], {}, id=name))
            continue
        if o.kind == "fake_quantize":  # X, a per-column input_low, per-tensor ranges
            ranges = _arrays(np.float32, (COLS,), (), (1, COLS), (), value=-1)
            out.append(pytest.param(name, [*_arrays(np.float32, SHAPE), *ranges], {"levels": 256}, id=name))
            continue
        kinds = {"numeric": (np.float32, np.int8, np.int32), "any": (np.float32,), "boolean": (np.bool_,),
                 "integral": (np.int32,), "float": (np.float32,)}[o.types]
        for dt in kinds:
            out.append(pytest.param(name, _arrays(dt, *row), {}, id=f"{name}-{np.dtype(dt).name}"))
    out.append(pytest.param("Divide", _arrays(np.int32, *row), {"python_division": False}, id="Divide-trunc"))
    return out


@pytest.mark.parametrize("op, inputs, attrs", _openvino_cases())
def test_openvino_op_allocates_its_output_only(op, inputs, attrs):
    _check(lambda *xs, **kw: bov.run(op, *xs, **kw), inputs, **attrs)


@pytest.mark.parametrize("op", bn.ops())
def test_ncnn_op_allocates_its_output_only(op):
    a = np.full(SHAPE, 1.5, np.float32)
    b = np.full((ROWS, 1), 0.75, np.float32)  # ncnn: a 2-D B of (h, 1) broadcasts along w
    _check(lambda *xs, **kw: bn.run(op, *xs, **kw), [a, b])
