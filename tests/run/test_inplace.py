"""``out=`` that is one of the inputs: every op of onnx.run, openvino.run, ncnn.run and apply, with
every input position that can be the output, gives the result of the same call without ``out=``
(numpy's rule: ``np.add(a, b, out=a)`` is right whatever overlaps)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bcast
from bcast.frameworks.ncnn import ops as ncnn
from bcast.frameworks.onnx import ops as onnx
from bcast.frameworks.openvino import ops as openvino
from bcast.run import parallel

RNG_SEED = 15

_DTYPES = {"float": np.float32, "double": np.float64, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
           "int8": np.int8, "uint32": np.uint32, "bool": np.bool_}


def _values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, 7, shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-6, 7, shape).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _check_every_position(call, inputs, label):
    """``call(*inputs, out=inputs[i])`` for every input ``i`` that has the output's shape and dtype
    (and with that input given twice) equals ``call(*inputs)``; returns how many calls were made."""
    expected = call(*[x.copy() for x in inputs])
    made = 0
    for i, x in enumerate(inputs):
        if x.shape != expected.shape or x.dtype != expected.dtype:
            continue
        copies = [y.copy() for y in inputs]
        got = call(*copies, out=copies[i])
        assert got is copies[i], label
        assert _same(copies[i], expected), f"{label}: out= input {i}\n{copies[i]}\n!=\n{expected}"
        made += 1
        for j in range(len(inputs)):  # the output array given as another input too
            if j != i and inputs[j].shape == x.shape and inputs[j].dtype == x.dtype:
                copies = [y.copy() for y in inputs]
                copies[j] = copies[i]
                want = call(*[y.copy() for y in copies])
                got = call(*copies, out=copies[i])
                assert _same(got, want), f"{label}: inputs {i} and {j} the output"
                made += 1
    return made


def _onnx_cases():
    """(op, dtypes, attrs) of every element-wise op of onnx.run, in the types its newest opset takes."""
    for name, o in onnx.OPS.items():
        if name == "Expand":
            continue
        types = o.version(None).types
        attrs_list = [{}]
        if name == "Mod":
            attrs_list = [{"fmod": 0}, {"fmod": 1}]
        if name == "BitShift":
            attrs_list = [{"direction": "LEFT"}, {"direction": "RIGHT"}]
        if name == "Gemm":
            attrs_list = [{}, {"alpha": 2.0, "beta": 0.5}, {"transA": 1}]
        for onnx_name, dtype in _DTYPES.items():
            tvs = [tv for _, tv in o.inputs]
            main = "T" if "T" in types else tvs[0]
            if onnx_name not in types.get(main, ()):
                continue
            if name == "Where":
                dtypes = (np.bool_, dtype, dtype)
            elif name == "Pow":
                dtypes = (dtype, dtype)
            elif o.variadic:
                dtypes = (dtype,) * 3
            else:
                dtypes = (dtype,) * len(o.inputs)
            for attrs in attrs_list:
                yield name, dtypes, attrs


@pytest.mark.parametrize("name,dtypes,attrs", list(_onnx_cases()),
                         ids=lambda v: v if isinstance(v, str) else None)
@pytest.mark.parametrize("broadcast", [False, True], ids=["same", "bcast"])
def test_onnx_out_is_an_input(name, dtypes, attrs, broadcast):
    rng = np.random.default_rng(RNG_SEED)
    made = 0
    for target in range(len(dtypes)):
        if name == "Gemm":
            shapes = [(4, 4)] * 3
        elif broadcast:  # the output-shaped input at one position, the others broadcast into it
            shapes = [(3, 4) if k == target else (4,) for k in range(len(dtypes))]
        else:
            shapes = [(3, 4)] * len(dtypes)
        inputs = [_values(rng, d, s) for d, s in zip(dtypes, shapes)]
        if name == "PRelu" and broadcast and target == 1:
            continue  # the slope broadcasts to X, never the other way
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            made += _check_every_position(lambda *xs, out=None: onnx.run(name, *xs, out=out, **attrs), inputs,
                                          f"onnx {name} {[np.dtype(d).name for d in dtypes]} {attrs}")
    assert made or name in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual")


def test_onnx_issue_examples():
    x = np.array([-0.5, 3], np.float32)
    assert onnx.run("PRelu", x, np.float32(2), out=x).tolist() == [-1.0, 3.0]
    a, b = np.array([1, 5], np.int32), np.array([4, 2], np.int32)
    assert onnx.run("Min", a, b, out=b).tolist() == [1, 2]


def test_onnx_out_overlaps_partly():
    """out= a view that overlaps an input without being it: still the not-in-place result."""
    base = np.arange(10, dtype=np.float32) - 4
    x, out = base[:8], base[2:]
    want = onnx.run("PRelu", x.copy(), np.float32(0.5))
    assert _same(onnx.run("PRelu", x, np.float32(0.5), out=out), want)


def _openvino_cases():
    for name, o in openvino.OPS.items():
        if o.kind == "broadcast":
            continue
        for dtype in _DTYPES.values():
            if o.types == "boolean" and dtype is not np.bool_ or o.types != "boolean" and dtype is np.bool_:
                continue
            if o.types == "float" and dtype not in (np.float32, np.float64):
                continue
            if o.types == "integral" and np.dtype(dtype).kind not in "iu":
                continue
            if o.kind == "select":
                yield name, (np.bool_, dtype, dtype)
            elif o.kind == "fake_quantize":
                yield name, (dtype,) * 5
            else:
                yield name, (dtype, dtype)


@pytest.mark.parametrize("name,dtypes", list(_openvino_cases()), ids=lambda v: v if isinstance(v, str) else None)
def test_openvino_out_is_an_input(name, dtypes):
    rng = np.random.default_rng(RNG_SEED)
    inputs = [_values(rng, d, (3, 4)) for d in dtypes]
    if name in ("Divide", "FloorMod", "Mod") and np.dtype(dtypes[0]).kind in "iu":
        for x in inputs:  # openvino refuses an integer division by zero (any input may be the divisor)
            x[x == 0] = 1
    kw = {"levels": 256} if name == "FakeQuantize" else {}
    _check_every_position(lambda *xs, out=None: openvino.run(name, *xs, out=out, **kw), inputs, f"openvino {name}")


@pytest.mark.parametrize("name", ncnn.ops())
def test_ncnn_out_is_an_input(name):
    rng = np.random.default_rng(RNG_SEED)
    inputs = [_values(rng, np.float32, (2, 3, 4)) for _ in range(2)]
    _check_every_position(lambda *xs, out=None: ncnn.run(name, *xs, out=out), inputs, f"ncnn {name}")


def _two_steps(a, b, out=None):
    """A user's kernel of two steps: ``2 * a + b`` (reads ``b`` after writing ``out``)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), np.result_type(a, b)) if out is None else out
    np.multiply(a, 2, out=out)
    np.add(out, b, out=out)
    return out


@pytest.mark.parametrize("func", [np.add, np.subtract, np.arctan2, "maximum", _two_steps],
                         ids=["add", "subtract", "arctan2", "maximum", "two_steps"])
def test_apply_out_is_an_input(func):
    rng = np.random.default_rng(RNG_SEED)
    inputs = [_values(rng, np.float64, (3, 4)) for _ in range(2)]
    _check_every_position(lambda *xs, out=None: bcast.apply(func, *xs, out=out), inputs, f"apply {func}")


@pytest.mark.parametrize("threads", [1, 2])
def test_large_out_is_an_input(threads):
    """Large ops (threads, compiled loops, blocking) with out= an input."""
    previous = parallel.set_threads(threads)
    try:
        rng = np.random.default_rng(RNG_SEED)
        shape = (4, 256, 64, 40)
        x = _values(rng, np.float32, shape)
        s = _values(rng, np.float32, (256, 1, 1))
        c = rng.random(shape) < 0.5
        y = _values(rng, np.float32, shape)
        _check_every_position(lambda *xs, out=None: onnx.run("PRelu", *xs, out=out), [x, s], "PRelu")
        _check_every_position(lambda *xs, out=None: onnx.run("Sum", *xs, out=out), [x, s, y], "Sum")
        _check_every_position(lambda *xs, out=None: onnx.run("Where", *xs, out=out), [c, x, y], "Where")
        _check_every_position(lambda *xs, out=None: bcast.apply(_two_steps, *xs, out=out), [x, y], "apply")
        _check_every_position(lambda *xs, out=None: onnx.run("Add", *xs, out=out), [x, s], "Add")
    finally:
        parallel.set_threads(previous)


def test_onnx_expand_out_is_its_input():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert _same(onnx.run("Expand", x, np.array([3, 4], np.int64), out=x), want)
    out = np.arange(12, dtype=np.float32).reshape(3, 4)  # its first row, expanded over all of it
    want = np.broadcast_to(out[1].copy(), (3, 4))
    assert _same(onnx.run("Expand", out[1], np.array([3, 4], np.int64), out=out), want)
