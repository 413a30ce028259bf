"""Fuzzing every executor: bcast.apply / broadcast_arrays, onnx.run, openvino.run, ncnn.run.

Random dtypes (those the op does not take too: bool, strings, objects, complex, datetimes,
mixed), Python scalars and lists, NaN/inf/-0.0, 0-size dims, every memory layout (steps,
transposes, negative strides, stride-0 broadcast views, read-only), ``out=`` of every wrong
kind, random ops of every op table with random attributes, the memory budget.

The invariants:

- only bcast's documented errors escape (``only_documented``); a dtype an op does not take
  is an InputError naming the op and the dtype, never numpy's UFuncTypeError;
- ``bcast.apply`` equals numpy's own call on the same arrays (NaNs in the same places, the
  sign of zeros kept); the framework executors give the same bits whatever the layout of
  their inputs, through their fast paths and their full paths, with and without ``out=``;
- threads and blocks give the bits of one thread;
- ``out=`` may be any input that has the output's shape and dtype: the bits of the call without it;
- a large op run from inside another's task (a kernel that calls bcast, numpy's errstate
  callback) gives its own bits and leaves the outer op's alone; a forked child runs large ops;
- past the memory budget, MemoryBudgetError is raised before anything big is allocated
  (tracemalloc's peak stays small), whatever the declared size (2**40 elements of stride 0).
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bcast
import bcast.frameworks.ncnn.ops as bn
import bcast.frameworks.onnx.ops as bo
import bcast.frameworks.openvino.ops as bv
from bcast import BroadcastError, InputError
from bcast.run import parallel
from bcast.run import _blocked
from bcast.run.execute import MemoryBudgetError
from support.fuzz_harness import fuzz, only_documented

# --------------------------------------------------------------------------- values

NUMERIC = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float16", "float32", "float64")
HOSTILE = ("complex64", "complex128", "U3", "S2", "O", "M8[s]", "m8[ms]")
DTYPES = NUMERIC + HOSTILE

_FLOAT_VALUES = (0.0, -0.0, 1.0, -1.5, 2.0, 3.0, 0.5, np.nan, np.inf, -np.inf, 1e30, -7.0)


def _elements(dtype: np.dtype):
    if dtype.kind == "O":
        return st.integers(-3, 3)
    if dtype.kind in "fc":
        return st.sampled_from(_FLOAT_VALUES)
    return None  # hypothesis' own elements for the dtype


@st.composite
def arrays(draw, dtype, shape):
    """An array of ``shape``; sometimes a stride-0 view of a smaller one (broadcast_to)."""
    dtype = np.dtype(dtype)
    base = shape
    if shape and draw(st.booleans()):
        base = tuple(d if draw(st.booleans()) else 1 for d in shape)
    x = draw(hnp.arrays(dtype, base, elements=_elements(dtype)))
    return np.broadcast_to(x, shape) if base != shape else x


LAYOUTS = ("c", "f", "step", "neg", "readonly")


def layout(x: np.ndarray, how: str) -> np.ndarray:
    """``x``'s values in another memory layout (a stride-0 ``x`` becomes a copy first)."""
    if x.ndim == 0 or how == "c":
        return x
    if how == "f":
        return np.asfortranarray(x)
    if how == "step":
        big = np.empty(tuple(2 * d for d in x.shape), x.dtype)
        view = big[tuple(slice(None, None, 2) for _ in x.shape)]
        view[...] = x
        return view
    if how == "neg":
        flip = tuple(slice(None, None, -1) for _ in x.shape)
        return x[flip].copy()[flip]
    y = x.copy()
    y.flags.writeable = False
    return y


def same(got, want, *, bits: bool = False) -> None:
    """Equal shape, dtype and values: NaNs in the same places, zeros of the same sign
    (``bits``: the same bytes)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    if got.dtype.kind in "OUS":
        assert got.tolist() == want.tolist()
        return
    if bits or got.dtype.kind not in "fc":
        assert got.tobytes() == want.tobytes(), (got, want)
        return
    if got.dtype.kind == "c":
        got, want = got.view(got.real.dtype), want.view(want.real.dtype)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all(), (got, want)
    assert (got[~nan] == want[~nan]).all() and (np.signbit(got[~nan]) == np.signbit(want[~nan])).all(), (got, want)


def outcome(f, /, *args, **kwargs):
    """``("ok", f(*args, **kwargs))`` or ``("error", exception)``, for bcast's documented errors only."""
    try:
        return "ok", f(*args, **kwargs)
    except (BroadcastError, InputError) as e:
        return "error", e


# --------------------------------------------------------------------------- bcast.apply

UFUNCS = (np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.power, np.maximum,
          np.fmin, np.equal, np.less, np.logical_and, np.bitwise_xor, np.left_shift, np.arctan2,
          np.remainder, np.ldexp, np.negative, np.divmod, "add", "multiply", "maximum", "nope")
#: Shapes of up to 3 inputs that numpy broadcasts, or independent ones (mostly not broadcastable).
SHAPES = st.one_of(
    hnp.mutually_broadcastable_shapes(num_shapes=2,
                                      min_dims=0, max_dims=3, min_side=0, max_side=3).map(lambda s: s.input_shapes),
    hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=1, max_side=3)
    .map(lambda s: s.input_shapes),
    st.lists(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3), min_size=1, max_size=3)
    .map(tuple),
)


@st.composite
def apply_inputs(draw):
    shapes = draw(SHAPES)
    mixed = draw(st.booleans())
    first = draw(st.sampled_from(DTYPES))
    inputs = []
    for shape in shapes:
        dtype = draw(st.sampled_from(DTYPES)) if mixed else first
        x = layout(draw(arrays(dtype, shape)), draw(st.sampled_from(LAYOUTS)))
        form = draw(st.sampled_from(("array",) * 6 + ("scalar", "list")))
        if form == "scalar" and x.ndim == 0 and x.dtype.kind in "biufc":
            x = x.item()  # a Python scalar
        elif form == "list":
            x = x.tolist()
        inputs.append(x)
    return inputs


def _numpy(func, inputs, **kw):
    f = getattr(np, func) if isinstance(func, str) else func
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # np.maximum(a, b, c): c is out=
        r = f(*inputs, **kw)
    return np.asarray(r) if isinstance(r, np.generic) else r


@given(func=st.sampled_from(UFUNCS), inputs=apply_inputs(), use_out=st.sampled_from((None, "right", "wrong", "input")),
       threads=st.sampled_from((1, 3)))
@example(func=np.power, inputs=[np.array([2]), np.array([-1])], use_out=None, threads=1)  # ValueError escaped
@example(func=np.power, inputs=[np.arange(3), np.array([-1])], use_out="right", threads=1)
@example(func=np.add, inputs=[np.ones(3, np.int8), 1], use_out=None, threads=1)  # was int64, numpy says int8
@example(func=np.add, inputs=[np.ones(3, np.uint8), -1], use_out=None, threads=1)  # OverflowError
@example(func=np.divmod, inputs=[np.ones(2), np.ones(2)], use_out=None, threads=1)  # a tuple, not stacked
@fuzz("apply", examples=250)
def test_apply_equals_numpy(func, inputs, use_out, threads):
    """bcast.apply under the numpy rule is numpy's call: same result, or a documented error
    where numpy fails (an InputError where numpy has no loop for the dtypes or values)."""
    try:
        want = _numpy(func, inputs)
        why = None
    except (TypeError, ValueError, OverflowError, AttributeError) as e:
        want, why = None, e
    except ArithmeticError:  # objects' own operators (1 // 0): theirs to raise, in numpy and in bcast
        return
    out = None
    if use_out == "input" and isinstance(want, np.ndarray):  # out= the first input that could be the output
        at = [i for i, x in enumerate(inputs) if type(x) is np.ndarray and x.shape == want.shape
              and x.dtype == want.dtype and x.flags.writeable and want.dtype.kind != "O"]
        if at:
            inputs = list(inputs)
            inputs[at[0]] = out = inputs[at[0]].copy()
    elif use_out and isinstance(want, np.ndarray):
        out = np.empty(want.shape, want.dtype) if use_out == "right" else np.empty(want.shape + (1,), want.dtype)
    previous = parallel.set_threads(threads)
    try:
        with np.errstate(all="ignore"):
            status, got = outcome(bcast.apply, func, *inputs, out=out)
    except ArithmeticError:
        assert any(x.dtype.kind == "O" for x in inputs if isinstance(x, np.ndarray))
        return
    finally:
        parallel.set_threads(previous)
    if any(not isinstance(x, (np.ndarray, int, float, complex, list)) for x in inputs) or func == "nope":  # str
        assert status == "error" and (isinstance(got, InputError) or func == "nope"), got  # the shapes come first
        return
    if why is not None:
        assert status == "error", (why, got)
        try:
            np.broadcast_shapes(*(np.shape(x) for x in inputs))
            assert isinstance(got, InputError), (why, got)
        except ValueError:  # numpy does not broadcast them either: the rule says why
            assert isinstance(got, BroadcastError), (why, got)
        return
    if status == "error":
        # refusals numpy does not make: an out= of the wrong shape, a Python int out of the array's range
        # (numpy compares it exactly), more inputs than the ufunc takes (numpy reads the last one as out=)
        assert use_out == "wrong" or isinstance(got, InputError) and "out of bounds" in str(got) \
            or len(inputs) > getattr(func if not isinstance(func, str) else np.add, "nin", 2), got
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    same(got, want)
    if out is not None:
        assert got is out


@given(shapes=SHAPES, dtype=st.sampled_from(DTYPES), rule=st.sampled_from(("numpy", "bidirectional", "pdpd",
                                                                            "unidirectional", "ncnn", "none")),
       axis=st.one_of(st.none(), st.integers(-4, 4), st.just("x"), st.just(2**70)), data=st.data())
@fuzz("broadcast_arrays", examples=150)
def test_broadcast_arrays_are_views(shapes, dtype, rule, axis, data):
    """Every view is read-only, of the plan's shape, the input's values repeated (stride 0 where stretched)."""
    inputs = [data.draw(arrays(dtype, s)) for s in shapes]
    attrs = {} if axis is None else {"axis": axis}
    with only_documented():
        views = bcast.broadcast_arrays(*inputs, rule=rule, **attrs)
        plan = bcast.infer(*shapes, rule=rule, **attrs)
        for i, (x, v) in enumerate(zip(inputs, views)):
            assert v.shape == plan.shape and not v.flags.writeable
            assert np.shares_memory(v, x) or x.size == 0 or v.size == 0
            same(v, np.broadcast_to(x.reshape(plan.aligned_shape(i)), plan.shape))


# --------------------------------------------------------------------------- framework executors


def _draw_shapes(draw, n):
    if draw(st.booleans()):
        return draw(hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=4, min_side=0,
                                                      max_side=3)).input_shapes
    return tuple(draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3)) for _ in range(n))


def _check_refusal(e: Exception, op: str, dtypes) -> None:
    """A refused dtype is named in the message, with the op."""
    text = str(e)
    if isinstance(e, InputError) and ("type" in text or "float32" in text) and "out=" not in text:
        assert op in text, text


@st.composite
def onnx_cases(draw):
    name = draw(st.sampled_from(bo.ops()))
    o = bo.OPS[name]
    version = draw(st.sampled_from(o.versions)) if draw(st.booleans()) else o.versions[-1]
    n = draw(st.integers(1, 4)) if o.variadic else len(o.inputs) - (draw(st.integers(0, o.optional)))
    allowed = {tv: sorted(version.types.get(tv, version.types.get("T", ()))) for _, tv in o.inputs}
    inputs = []
    shapes = _draw_shapes(draw, n)
    for (_, tv), shape in zip(o.inputs * n if o.variadic else o.inputs, shapes):
        if tv.startswith("tensor(") and draw(st.integers(0, 3)):  # Expand's shape: int64 values
            target = draw(st.lists(st.integers(0, 3), max_size=4))
            inputs.append(np.array(target, np.int64))
            continue
        names = [t for t in allowed.get(tv, []) if t not in ("bfloat16", "string")]
        onnx_names = {"float": "float32", "double": "float64"}
        dtype = draw(st.sampled_from([onnx_names.get(t, t) for t in names])) if names and draw(st.integers(0, 4)) \
            else draw(st.sampled_from(DTYPES))
        inputs.append(draw(arrays(dtype, shape)))
    attrs = {}
    for a in o.attributes(version):
        if draw(st.booleans()):
            attrs[a.name] = draw(st.sampled_from(a.kind) if isinstance(a.kind, tuple) else
                                 st.sampled_from((0, 1, -1, 2, 0.5, "x", None, True)))
    opset = version.since if version is not o.versions[-1] or draw(st.booleans()) else None
    return name, inputs, opset, attrs


def _same_bits_all_ways(run, inputs, layouts, **kw):
    """``run`` on ``inputs``: the same bits in every layout and with out=; returns the result or the error."""
    status, want = outcome(run, *inputs, **kw)
    if status == "error":
        return status, want
    if not isinstance(want, np.ndarray) or not want.flags.writeable:
        return status, want
    hows = [*layouts, *layouts[-1:] * (len(inputs) - len(layouts))]  # (more inputs than layouts: the last again)
    moved = [layout(x, how) if isinstance(x, np.ndarray) else x for x, how in zip(inputs, hows)]
    s2, got = outcome(run, *moved, **kw)
    assert s2 == "ok", got
    same(got, want, bits=True)
    out = np.full(want.shape, 7, want.dtype) if want.dtype.kind != "O" else np.empty(want.shape, object)
    s3, got = outcome(run, *inputs, out=out, **kw)
    assert s3 == "ok", got
    assert got is out
    same(out, want, bits=True)
    in_place(run, inputs, want, **kw)
    return status, want


def in_place(run, inputs, want, **kw):
    """``run(*inputs, out=inputs[i])`` for every input ``i`` that could be the output (its shape
    and dtype): the bits of the call without out= (numpy's rule for ``np.add(a, b, out=a)``)."""
    if want.dtype.kind == "O":
        return
    for i, x in enumerate(inputs):
        if isinstance(x, np.ndarray) and x.shape == want.shape and x.dtype == want.dtype:
            copies = [np.array(y, copy=True) if isinstance(y, np.ndarray) else y for y in inputs]
            status, got = outcome(run, *copies, out=copies[i], **kw)
            assert status == "ok" and got is copies[i], (i, got)
            same(copies[i], want, bits=True)


@given(case=onnx_cases(), layouts=st.lists(st.sampled_from(LAYOUTS), min_size=4, max_size=4))
@example(case=("Pow", [np.array([3.0], np.float16), np.array([2], np.int8)], None, {}), layouts=["c"] * 4)
@fuzz("onnx.run", examples=300)
def test_onnx_run(case, layouts):
    """Documented errors only; a refused type names the op; fast path (no opset) = full path
    (opset given); every layout and out= give the same bits."""
    name, inputs, opset, attrs = case
    status, result = _same_bits_all_ways(lambda *xs, **kw: bo.run(name, *xs, opset=opset, **attrs, **kw),
                                         inputs, layouts)
    if status == "error":
        _check_refusal(result, name, [x.dtype for x in inputs])
        return
    if opset is None and not attrs:  # the small-op fast path; the full path with the opset spelled out
        s2, full = outcome(bo.run, name, *inputs, opset=bo.LATEST_OPSET)
        assert s2 == "ok", full
        same(result, full, bits=True)


@st.composite
def onnx_valid_cases(draw):
    """An onnx op at its newest opset on inputs of types it takes, of shapes that broadcast."""
    name = draw(st.sampled_from([n for n in bo.ops() if n != "Expand"]))
    o = bo.OPS[name]
    version = o.versions[-1]
    n = draw(st.integers(1, 4)) if o.variadic else len(o.inputs)
    onnx_names = {"float": "float32", "double": "float64"}
    chosen: dict = {}
    inputs = []
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3, min_side=1,
                                                    max_side=3)).input_shapes
    for (_, tv), shape in zip(o.inputs * n if o.variadic else o.inputs, shapes):
        tv = tv if tv in version.types else "T"
        if tv not in chosen:
            names = sorted(t for t in version.types[tv] if t not in ("bfloat16", "string"))
            chosen[tv] = onnx_names.get(draw(st.sampled_from(names)), None) or draw(st.sampled_from(names))
        inputs.append(draw(arrays(chosen[tv], shape)))
    attrs = {}
    if name == "BitShift":
        attrs["direction"] = draw(st.sampled_from(("LEFT", "RIGHT")))
    if name == "Mod":
        attrs["fmod"] = draw(st.sampled_from((0, 1)))
    if name == "Gemm":
        side = draw(st.integers(1, 3))
        inputs = [draw(arrays(chosen["T"], (side, side))) for _ in range(draw(st.integers(2, 3)))]
        attrs = {"alpha": draw(st.sampled_from((1.0, 2.0))), "beta": draw(st.sampled_from((1.0, 0.5, 0.0)))}
    return name, inputs, attrs


@given(case=onnx_valid_cases())
@example(case=("PRelu", [np.array([-0.5, 3], np.float32), np.array(2, np.float32)], {}))
@example(case=("Min", [np.array([1, 5], np.int32), np.array([4, 2], np.int32)], {}))
@fuzz("onnx.run out= an input", examples=300)
def test_onnx_run_out_is_an_input(case):
    """out= any input of the output's shape and dtype: the bits of the call without out=."""
    name, inputs, attrs = case
    status, want = outcome(bo.run, name, *inputs, **attrs)
    if status == "ok":
        in_place(lambda *xs, **kw: bo.run(name, *xs, **attrs, **kw), inputs, want)


@st.composite
def openvino_cases(draw):
    name = draw(st.sampled_from(bv.ops()))
    spec = bv.OPS[name]
    n = {"eltwise": 2, "select": 3, "prelu": 2, "broadcast": 2, "fake_quantize": 5}[spec.kind]
    shapes = _draw_shapes(draw, n)
    if spec.kind == "fake_quantize" and draw(st.integers(0, 3)):  # mostly ranges that go into X, as in a model
        x = shapes[0]
        shapes = (x, *(tuple(d if draw(st.integers(0, 2)) else 1 for d in x[draw(st.integers(0, len(x))):])
                       for _ in range(4)))
    allowed = bv.TYPE_CLASSES[spec.types]
    dtype = draw(st.sampled_from(allowed)) if draw(st.integers(0, 4)) else draw(st.sampled_from(DTYPES))
    mixed = spec.kind != "fake_quantize" or not draw(st.integers(0, 5))  # (one dtype for its five, mostly)
    inputs = [draw(arrays(dtype if not mixed or draw(st.integers(0, 6)) else draw(st.sampled_from(DTYPES)), s))
              for s in shapes]
    kw = {}
    if spec.kind == "select":
        inputs[0] = inputs[0].astype(bool) if inputs[0].dtype.kind in "biuf" and draw(st.integers(0, 4)) else inputs[0]
    if spec.kind == "broadcast":
        inputs[1] = draw(st.lists(st.integers(0, 3), max_size=4))
        kw["mode"] = draw(st.sampled_from(("numpy", "bidirectional", "pdpd", "explicit", "none", "NUMPY", 3)))
        if kw["mode"] in ("explicit", "none"):
            inputs.append(draw(st.lists(st.integers(-1, 3), max_size=3)))
    elif spec.kind in ("eltwise", "select", "fake_quantize"):
        kw["auto_broadcast"] = draw(st.sampled_from(("numpy", "NUMPY", "pdpd", "none", "explicit", 1)))
        if kw["auto_broadcast"] == "pdpd" and draw(st.booleans()):
            kw["axis"] = draw(st.integers(-2, 3))
    if spec.kind == "fake_quantize" and draw(st.integers(0, 5)) != 5:  # (else levels left out: refused)
        kw["levels"] = draw(st.sampled_from((256, 255, 2, 3, np.int64(16)) * 3 + (1, 0, -5, 2.5, True, "256")))
    if name == "Divide" and draw(st.booleans()):
        kw["python_division"] = draw(st.sampled_from((True, False, 0, 2, np.array([1, 0]))))
    return name, inputs, kw


@given(case=openvino_cases(), layouts=st.lists(st.sampled_from(LAYOUTS), min_size=3, max_size=3))
@example(case=("Divide", [np.ones(2), np.ones(2)], {"python_division": np.array([1, 0])}), layouts=["c"] * 3)
@fuzz("openvino.run", examples=300)
def test_openvino_run(case, layouts):
    """Documented errors only; fast path ("numpy") = full path ("NUMPY"); every layout and out= the same bits."""
    name, inputs, kw = case
    status, result = _same_bits_all_ways(lambda *xs, **k: bv.run(name, *xs, **kw, **k), inputs, layouts)
    if status == "error":
        _check_refusal(result, name, [])
        return
    if kw.get("auto_broadcast") == "numpy" and len(kw) == 1:
        same(result, bv.run(name, *inputs, auto_broadcast="NUMPY"), bits=True)


@given(op=st.one_of(st.sampled_from(bn.ops()), st.integers(-1, 20), st.just("nope")),
       shapes=st.one_of(st.integers(0, 1).flatmap(lambda _: st.tuples(
           hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=3),
           hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=3)))),
       dtypes=st.tuples(st.sampled_from(("float32",) * 8 + DTYPES), st.sampled_from(("float32",) * 8 + DTYPES)),
       with_scalar=st.sampled_from((False, True, 0, "yes", np.array([1, 1]))),
       scalar=st.sampled_from((2.0, -0.0, np.nan, np.inf, 2**2000, 1e300, "x", True)),
       layouts=st.lists(st.sampled_from(LAYOUTS), min_size=2, max_size=2), data=st.data())
@example(op="ADD", shapes=((2,), (2,)), dtypes=("float32", "float32"), with_scalar=True, scalar=2**2000,
         layouts=["c", "c"], data=None)  # OverflowError escaped
@example(op="ADD", shapes=((2,), (2,)), dtypes=("float32", "float32"), with_scalar=np.array([1, 1]), scalar=2.0,
         layouts=["c", "c"], data=None)  # ValueError (truth value of an array) escaped
@fuzz("ncnn.run", examples=250)
def test_ncnn_run(op, shapes, dtypes, with_scalar, scalar, layouts, data):
    """Documented errors only; fast path = full path (ncnn_order=True); every layout and out= the same bits."""
    if data is None:
        a, b = (np.ones(s, d) for s, d in zip(shapes, dtypes))
    else:
        a, b = (data.draw(arrays(d, s)) for s, d in zip(shapes, dtypes))
    if isinstance(with_scalar, np.ndarray) or with_scalar:
        run = lambda x, out=None: bn.run(op, x, with_scalar=with_scalar, scalar=scalar, out=out)  # noqa: E731
        status, result = _same_bits_all_ways(run, [a], layouts)
        return
    status, result = _same_bits_all_ways(lambda x, y, out=None: bn.run(op, x, y, out=out), [a, b], layouts)
    if status == "ok":
        full = bn.run(op, a[::-1][::-1], b, ncnn_order=True) if a.ndim else bn.run(op, a, b, ncnn_order=True)
        same(result, full, bits=True)
    else:
        _check_refusal(result, "ncnn", [])


# --------------------------------------------------------------------------- threads and blocks


@pytest.fixture
def small_thresholds(monkeypatch):
    """Threads and blocks from a few thousand elements on (the real thresholds are millions)."""
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 2048)
    monkeypatch.setattr(_blocked, "TILE", 512)
    monkeypatch.setattr(_blocked, "RUN", 64)
    previous = parallel.set_threads(1)
    yield
    parallel.set_threads(previous)


@pytest.fixture(scope="module")
def compiled_loops():
    """numba compiles the loops once per dtype, ~10 s of CPU each on a fresh cache (README "Speed"):
    here, before the cases, and not inside the first case that needs one, under its time limit."""
    for dtype in ("float32", "float64", "int32", "int64"):
        with np.errstate(all="ignore"):
            bcast.apply(np.add, np.ones((600, 600), dtype), np.ones(600, dtype))


def _big(rng, shape, dtype):
    """Random values with NaN, inf and -0.0 sprinkled in."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    flat = x.reshape(-1)
    for v in (np.nan, np.inf, -np.inf, -0.0) if flat.size else ():
        flat[rng.integers(0, flat.size, 3)] = v
    return x


EXECUTORS = {
    "apply": (lambda op, xs: bcast.apply(op, *xs), (np.add, np.multiply, np.maximum, np.arctan2, np.less),
              ("float32", "float64", "int32", "float16")),
    "onnx": (lambda op, xs: bo.run(op, *xs), ("Add", "Div", "Pow", "Max", "Sum", "Mean", "PRelu", "Mod"),
             ("float32", "float64", "int32", "int64")),
    "openvino": (lambda op, xs: bv.run(op, *xs), ("Add", "Maximum", "Minimum", "Power", "FloorMod", "Mod",
                                                 "SquaredDifference", "Divide"), ("float32", "float64", "float16")),
    "ncnn": (lambda op, xs: bn.run(op, *xs), ("ADD", "MAX", "MIN", "REMAINDER", "LOGADDEXP", "FLOOR_DIVIDE", "POW"),
             ("float32",)),
}


@given(executor=st.sampled_from(sorted(EXECUTORS)), data=st.data(), seed=st.integers(0, 2**32 - 1),
       shapes=st.sampled_from((((64, 96), (96,)), ((8, 1, 300), (7, 1)), ((3, 40, 50), (3, 1, 50)),
                               ((2, 70, 80), ()), ((90, 90), (90, 1)), ((5000,), (5000,)))),
       layouts=st.lists(st.sampled_from(LAYOUTS), min_size=2, max_size=2), n=st.integers(2, 4))
@fuzz("threads = one thread", examples=60)
def test_threads_equal_one_thread(compiled_loops, small_thresholds, executor, data, seed, shapes, layouts, n):
    """Threaded and blocked runs give the bits of one thread, in every layout."""
    run, ops, dtypes = EXECUTORS[executor]
    op = data.draw(st.sampled_from(ops))
    dtype = data.draw(st.sampled_from(dtypes))
    if executor == "ncnn" and (len(shapes[1]) == 0 or shapes == ((8, 1, 300), (7, 1))):
        shapes = (shapes[0], shapes[0][:1])  # ncnn: B on A's leading axes
    rng = np.random.default_rng(seed)
    xs = [layout(_big(rng, s, dtype), how) for s, how in zip(shapes, layouts)]
    with only_documented():
        one = run(op, xs)
        parallel.set_threads(n)
        many = run(op, xs)
        same(many, one, bits=True)


_OUTER_SHAPES = (((8, 1, 300), (7, 1)), ((3, 40, 50), (3, 1, 50)), ((2, 70, 80), ()), ((64, 96), (96,)))


@given(executor=st.sampled_from(sorted(EXECUTORS)), data=st.data(), seed=st.integers(0, 2**32 - 1),
       shapes=st.sampled_from(_OUTER_SHAPES), n=st.integers(1, 4), how=st.sampled_from(("kernel", "errstate")))
@fuzz("calls from inside calls", examples=40)
def test_calls_from_inside_calls(small_thresholds, executor, data, seed, shapes, n, how):
    """A large op run from inside another's task -- a kernel given to apply that calls bcast before
    reading its (scratch) operands, numpy's errstate(call=...) callback, in a pool thread or in
    this one -- gives the bits of the same op run alone, and so does the outer op; nothing hangs."""
    run, ops, dtypes = EXECUTORS[executor]
    op = data.draw(st.sampled_from(ops))
    dtype = data.draw(st.sampled_from(dtypes))
    inner_shapes = shapes if executor != "ncnn" or shapes[1] == (3, 1, 50) else (shapes[0], shapes[0][:1])
    rng = np.random.default_rng(seed)
    xs = [_big(rng, s, dtype) for s in inner_shapes]
    a, b = (_big(rng, s, np.float64) for s in shapes)
    with only_documented():
        with np.errstate(all="ignore"):
            want_inner, want_outer = run(op, xs), np.divide(a, b)
        parallel.set_threads(n)
        inner = []

        def call_inner(*_):
            with np.errstate(all="ignore"):
                inner.append(run(op, xs))

        if how == "kernel":
            @parallel.elementwise
            def kernel(x, y, out=None):
                call_inner()
                with np.errstate(all="ignore"):
                    return np.divide(x, y, out=out)

            got = bcast.apply(kernel, a, b, dtype=np.float64)
        else:
            with np.errstate(all="call", call=call_inner):
                got = bcast.apply(np.divide, a, b)
        same(got, want_outer, bits=True)
        for r in inner:
            same(r, want_inner, bits=True)


@given(executor=st.sampled_from(sorted(EXECUTORS)), data=st.data(), seed=st.integers(0, 2**32 - 1),
       shapes=st.sampled_from(_OUTER_SHAPES), n=st.integers(2, 4))
@fuzz("fork", examples=15)
def test_fork_after_the_pool_started(small_thresholds, executor, data, seed, shapes, n):
    """os.fork() once the pool has run an op: the child's large op gives the parent's bits (a child
    that hangs is killed after 20 s: a failure)."""
    import hashlib
    import os
    import select

    run, ops, dtypes = EXECUTORS[executor]
    op = data.draw(st.sampled_from(ops))
    dtype = data.draw(st.sampled_from(dtypes))
    if executor == "ncnn" and shapes[1] != (3, 1, 50):
        shapes = (shapes[0], shapes[0][:1])
    rng = np.random.default_rng(seed)
    xs = [_big(rng, s, dtype) for s in shapes]
    parallel.set_threads(n)
    try:
        with np.errstate(all="ignore"):
            want = run(op, xs)  # the pool has started
    except (BroadcastError, InputError):
        return
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its answer on the pipe, then out at once, whatever happens
        try:
            with np.errstate(all="ignore"):
                got = np.ascontiguousarray(run(op, xs))
            os.write(write, hashlib.sha256(got.tobytes()).hexdigest().encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 20)
        if not ready:
            os.kill(pid, 9)
        answer = os.read(read, 64).decode() if ready else "hung"
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    assert answer == hashlib.sha256(np.ascontiguousarray(want).tobytes()).hexdigest(), answer


# --------------------------------------------------------------------------- the memory budget

HUGE = 2**40


def _tiny(dtype, shape):
    """A stride-0 view of one element: ``shape`` declared, 1 element stored."""
    return np.broadcast_to(np.ones((), dtype), shape)


BUDGET_CASES = {
    "apply": lambda shape: bcast.apply(np.add, _tiny("float32", shape), np.ones(1, np.float32)),
    "apply pdpd": lambda shape: bcast.apply("multiply", _tiny("float32", shape), _tiny("float32", shape[:1]),
                                            rule="pdpd", axis=0),
    "onnx Add": lambda shape: bo.run("Add", _tiny("int8", shape), np.ones(1, np.int8)),
    "onnx Sum": lambda shape: bo.run("Sum", *[_tiny("float32", shape)] * 4),
    "onnx Mean": lambda shape: bo.run("Mean", _tiny("float64", shape), np.ones(1)),
    "onnx Where": lambda shape: bo.run("Where", _tiny("bool", shape), np.ones(1), np.zeros(1)),
    "onnx Pow": lambda shape: bo.run("Pow", _tiny("int32", shape), np.ones(1, np.int64)),
    "onnx Pow f16": lambda shape: bo.run("Pow", _tiny("float16", shape), np.ones(1, np.int8)),
    "onnx Expand": lambda shape: bo.run("Expand", np.ones(1, np.float32), np.array(shape, np.int64)),
    "onnx Gemm": lambda shape: bo.run("Gemm", _tiny("int32", (shape[0], 1)), _tiny("int32", (1, shape[-1])),
                                      alpha=2.0),
    "openvino Add": lambda shape: bv.run("Add", _tiny("float32", shape), np.ones(1, np.float32)),
    "openvino Power": lambda shape: bv.run("Power", _tiny("int8", shape), np.ones(1, np.int8)),
    "openvino FloorMod": lambda shape: bv.run("FloorMod", _tiny("int16", shape), np.ones(1, np.int16)),
    "openvino Select": lambda shape: bv.run("Select", _tiny("bool", shape), np.ones(1), np.zeros(1)),
    "openvino Broadcast": lambda shape: bv.run("Broadcast", np.ones(1, np.int8), list(shape)),
    "openvino Maximum": lambda shape: bv.run("Maximum", _tiny("float64", shape), np.ones(1)),
    "ncnn ADD": lambda shape: bn.run("ADD", _tiny("float32", shape), _tiny("float32", shape[:1])),
    "ncnn REMAINDER": lambda shape: bn.run("REMAINDER", _tiny("float32", shape), _tiny("float32", shape[:1])),
    "ncnn scalar": lambda shape: bn.run("POW", _tiny("float32", shape), with_scalar=True, scalar=2),
}


@given(case=st.sampled_from(sorted(BUDGET_CASES)), budget=st.sampled_from((2**20 + 1, 3 << 20)),
       shape=st.one_of(st.sampled_from(((HUGE,), (2**20, 2**20), (2**14, HUGE // 2**14), (3, HUGE))),
                       st.tuples(st.integers(1, 2**11), st.integers(1, 2**11))))
@fuzz("memory budget", examples=80)
def test_memory_budget_refused_before_allocating(case, budget, shape):
    """Past the budget: MemoryBudgetError, and nothing near the output's size was ever allocated;
    within it: the op runs, its peak a few budgets at most (output, intermediates, fixed-size scratch)."""
    with bcast.memory_budget_set(budget):  # once untraced: importing numba, loading a compiled loop
        outcome(BUDGET_CASES[case], shape)  # (~32 MB of Python objects, once) are not the op's
    tracemalloc.start()
    try:
        with bcast.memory_budget_set(budget):
            status, result = outcome(BUDGET_CASES[case], shape)
            del result
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if status == "error":  # at most an output that fits (an intermediate refused), and small objects
        assert peak < budget + (64 << 10), (case, shape, peak)
    else:
        assert peak < 4 * budget + (8 << 20), (case, shape, peak)  # + ncnn's blocks of float64 scratch
    if np.prod(shape, dtype=object) >= 2**30:
        assert status == "error"


@pytest.mark.parametrize("case", sorted(BUDGET_CASES))
def test_memory_budget_huge_shape_raises(case):
    """2**40 elements declared by stride-0 views: refused before anything is allocated."""
    tracemalloc.start()
    try:
        with bcast.memory_budget_set(2**20):
            with pytest.raises((MemoryBudgetError, InputError)):
                BUDGET_CASES[case]((4, HUGE // 4))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20


# --------------------------------------------------------------------------- regressions, one line each


def test_bad_dtype_keyword_is_an_input_error():
    big = np.ones(5000)
    with pytest.raises(InputError, match="dtype= must be a numpy dtype"):
        bcast.apply(np.add, big, big, dtype="nope")


def test_ncnn_flags_and_scalars():
    a = np.ones(2, np.float32)
    with pytest.raises(InputError, match="ncnn_order must be True or False"):
        bn.run("ADD", a, a, ncnn_order=np.array([1, 1]))
    with pytest.raises(InputError, match="with_scalar must be True or False"):
        bn.run("ADD", a, with_scalar="yes")
    assert np.isinf(bn.run("ADD", a, with_scalar=True, scalar=-(2**2000))).all()


def test_openvino_flag_given_an_array():
    with pytest.raises(InputError, match="materialize must be True or False"):
        bv.run("Broadcast", np.ones(2), [2, 2], materialize=np.array([1, 0]))


def test_onnx_gemm_of_scaled_integers_fits_its_output():
    # issue 18: its float64 intermediate is one block now, not one of the output's size
    with bcast.memory_budget_set(5 << 20):  # the int32 output: 4 MiB
        assert bo.run("Gemm", np.ones((1024, 1), np.int32), np.ones((1, 1024), np.int32), alpha=2.0)[0, 0] == 2
    with bcast.memory_budget_set(3 << 20):
        with pytest.raises(MemoryBudgetError):
            bo.run("Gemm", np.ones((1024, 1), np.int32), np.ones((1, 1024), np.int32), alpha=2.0)


# --------------------------------------------------------------------------- against onnxruntime

#: ops whose values onnxruntime computes exactly as ONNX says, on NaN/inf/-0.0 too (Max/Min
#: propagate NaN in both, Div by 0 is inf/NaN in IEEE).
_ORT_OPS = ("Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "Where", "Sum")


def test_hostile_values_against_onnxruntime():
    """One fixed-seed batch: NaN/inf/-0.0 in every layout, 0-size dims; bcast's values are
    onnxruntime's (one session per op and dtype, cached: 20 sessions, 60 runs)."""
    ort = pytest.importorskip("onnxruntime")  # noqa: F841
    from bcast.frameworks.onnx import onnxruntime as ort_oracle

    rng = np.random.default_rng(8)
    shapes = (((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((0, 3), (1, 3)), ((5,), ()), ((2, 2, 2), (2, 2, 2)), ((1,), (3, 1)))
    runs = 0
    for op in _ORT_OPS:
        for dtype in ("float32", "float64"):
            for a_shape, b_shape in (shapes[i] for i in rng.choice(len(shapes), 3, replace=False)):
                xs = [layout(_big(rng, s, dtype), LAYOUTS[rng.integers(len(LAYOUTS))]) for s in (a_shape, b_shape)]
                if op == "Where":
                    xs = [rng.random(b_shape) < 0.5] + xs
                want = ort_oracle.run(op, [np.ascontiguousarray(x) for x in xs])[0]
                got = bo.run(op, *xs)
                # onnxruntime's Where (1.31.1, 1.32.0) gives +0.0 where it picks an X of -0.0
                # (bcast: X; deviation onnxruntime-where-negative-zero)
                if op == "Where":
                    got, want = got + 0.0, want + 0.0
                same(got, want)
                runs += 1
    assert runs == 60
