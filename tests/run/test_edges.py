"""Edges (issue 15, item 10): rank-0 results on every path, errors from object arrays' elements."""

import numpy as np
import pytest

import bcast
from bcast import InputError

onnx_ops = pytest.importorskip("bcast.frameworks.onnx.ops")
ov = pytest.importorskip("bcast.frameworks.openvino.ops")
ncnn = pytest.importorskip("bcast.frameworks.ncnn.ops")

_BOOL = {"And", "Or", "Xor", "LogicalAnd", "LogicalOr", "LogicalXor"}
_INT = {"BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"}


def _zero_d(op: str, n: int) -> list:
    if op in _BOOL:
        return [np.array(True)] * n
    if op in _INT:
        return [np.array(3, np.uint8), np.array(1, np.uint8)][:n] + [np.array(1, np.uint8)] * max(0, n - 2)
    return [np.array(2.0, np.float32), np.array(3.0, np.float32)][:n] + [np.array(1.0, np.float32)] * max(0, n - 2)


def _onnx_calls(op):
    attrs = {"direction": "LEFT"} if op == "BitShift" else {}
    if op == "Where":
        return [((np.array(True), np.array(1.0, np.float32), np.array(2.0, np.float32)), attrs)]
    if op == "Expand":
        return [((np.array(1.0, np.float32), np.array([], np.int64)), attrs)]
    if op == "Gemm":
        return []  # matrices, never rank 0
    if op in ("Sum", "Max", "Min", "Mean"):
        return [(tuple(_zero_d(op, n)), attrs) for n in (1, 2, 3)]
    return [(tuple(_zero_d(op, 2)), attrs)]


@pytest.mark.parametrize("op", onnx_ops.ops())
def test_onnx_run_rank0_is_an_array_on_every_path(op):
    # numpy's ufuncs give a scalar for 0-d inputs; bcast's executors give a 0-d array, as apply does and as
    # runtimes do, on the first call (full path) and the next ones (the small-op caches, the inline lookup)
    for inputs, attrs in _onnx_calls(op):
        for _ in range(3):
            result = onnx_ops.run(op, *inputs, **attrs)
            assert type(result) is np.ndarray and result.shape == (), (op, type(result))


@pytest.mark.parametrize("op", ov.ops())
def test_openvino_run_rank0_is_an_array_on_every_path(op):
    if op == "Broadcast":
        calls = [((np.array(1.0, np.float32), np.array([], np.int64)), {})]
    elif op == "Select":
        calls = [((np.array(True), np.array(1.0, np.float32), np.array(2.0, np.float32)), {})]
    else:
        calls = [(tuple(_zero_d(op, 2)), {})]
    for inputs, attrs in calls:
        for _ in range(3):
            try:
                result = ov.run(op, *inputs, **attrs)
            except InputError:  # a type the op does not take (the dtypes above are its commonest)
                continue
            assert type(result) is np.ndarray and result.shape == (), (op, type(result))


@pytest.mark.parametrize("op", ncnn.ops())
def test_ncnn_run_rank0_is_refused(op):
    # ncnn has no rank-0 blob: two 0-d inputs are an InputError on the fast path and the full one
    a = np.array(1.0, np.float32)
    for _ in range(2):
        with pytest.raises(InputError, match="rank 1 to 4"):
            ncnn.run(op, a, a)


@pytest.mark.parametrize("rule", ["numpy", "unidirectional", "bidirectional"])
@pytest.mark.parametrize("func", [np.add, "add", np.divide, lambda x, y: np.add(x, y)])
def test_apply_rank0_is_an_array(func, rule):
    a, b = np.array(2.0), np.array(3.0)
    for _ in range(3):
        for args in ((a, b), (np.float64(2), np.float64(3)), (a, 3.0)):
            result = bcast.apply(func, *args, rule=rule)
            assert type(result) is np.ndarray and result.shape == ()


@pytest.mark.parametrize("full", [False, True])  # the small-op path; the full one (names)
@pytest.mark.parametrize("func", [np.divmod, "divmod", np.frexp, np.modf])
def test_apply_rank0_of_two_outputs_is_arrays(func, full):
    args = (np.array(7.0),) if func in (np.frexp, np.modf) else (np.array(7.0), np.array(2.0))
    kwargs = {"names": ["a", "b"][:len(args)]} if full else {}
    for _ in range(3):
        result = bcast.apply(func, *args, **kwargs)
        assert type(result) is tuple and all(type(r) is np.ndarray and r.shape == () for r in result), result


@pytest.mark.parametrize("n", [2, 300_000])  # the small-op path and the threaded one
@pytest.mark.parametrize("func", [np.arctan2, "arctan2", np.sinh])
def test_object_arrays_whose_elements_fail_raise_input_error(func, n):
    # numpy's object loop calls each element's own method (int has no arctan2): an AttributeError that
    # escaped bcast.apply before
    a = np.ones(n, dtype=object)
    with pytest.raises(InputError, match="arctan2|sinh"):
        bcast.apply(func, *[a] * (1 if func is np.sinh else 2))


@pytest.mark.parametrize("func", [np.arctan2, "arctan2"])
def test_object_arrays_after_numbers_of_the_same_shapes(func):
    # the inline lookup of apply's commonest call is keyed by shapes: float calls fill it, object arrays reach it
    f, o = np.ones(2), np.ones(2, dtype=object)
    for _ in range(3):
        bcast.apply(func, f, f)
    with pytest.raises(InputError, match="arctan2: these values do not take it"):
        bcast.apply(func, o, o)
    assert bcast.apply(func, f, f)[0] == np.arctan2(1.0, 1.0)


def test_object_arrays_element_errors_of_any_kind():
    a = np.array([1, 0], dtype=object)
    with pytest.raises(InputError, match="ZeroDivisionError"):
        bcast.apply(np.floor_divide, a, a)
    with pytest.raises(InputError, match="ZeroDivisionError"):
        bcast.apply(np.floor_divide, np.ones(300_000, dtype=object), np.zeros(300_000, dtype=object))


def test_a_callers_own_function_raises_its_own_errors():
    def f(x, y, out=None):
        raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        bcast.apply(f, np.ones(3), np.ones(3))


def _sparse_model(path, w_dims, x_dims=(2, 3, 4)):
    from onnx import TensorProto, helper, numpy_helper, save

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_dims))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    values = numpy_helper.from_array(np.array([5.0, 7.0], np.float32), "w")
    indices = numpy_helper.from_array(np.array([0, 1], np.int64), "w_indices")
    sparse = helper.make_sparse_tensor(values, indices, list(w_dims))
    g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["y"])], "g", [x], [y], sparse_initializer=[sparse])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8  # onnx 1.23 writes IR 14, newer than pnnx's onnxruntime reads (the ncnn target says so)
    save(m, str(path))
    return str(path)


def test_lint_knows_a_sparse_initializers_shape(tmp_path):
    pytest.importorskip("onnx")
    from bcast.models import onnx_model as models

    ok = _sparse_model(tmp_path / "ok.onnx", (3, 4))
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(ok, providers=["CPUExecutionProvider"])
    assert session.run(None, {"x": np.ones((2, 3, 4), np.float32)})[0].shape == (2, 3, 4)  # a valid model
    for target in ("onnx", "ncnn", "openvino"):
        assert bcast.lint(ok, target) == [], target
    shapes = models.Shapes(models.load(ok))
    assert shapes.get("w") == (3, 4) and shapes.elem_type("w") == 1
    bad = _sparse_model(tmp_path / "bad.onnx", (5,))  # (2,3,4) x (5,): a real finding, not "not known"
    findings = bcast.lint(bad, "onnx")
    assert len(findings) == 1 and "not known" not in str(findings[0]) and "5" in str(findings[0])


# --------------------------------------------------------------------------- fuzz: ufuncs on object arrays

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from support.fuzz_harness import fuzz, only_documented  # noqa: E402

_UFUNCS = sorted((f for f in vars(np).values() if type(f) is np.ufunc and f.nout == 1), key=lambda f: f.__name__)
_ELEMENTS = st.sampled_from([0, 1, -3, 2**70, 0.5, float("nan"), 1j, True, None, "s", b"b", (1,), Ellipsis])


@given(func=st.sampled_from(_UFUNCS), name=st.booleans(), data=st.data(),
       shapes=st.sampled_from([((2,), (2,)), ((3, 1), (4,)), ((), (2,)), ((70_000, 2), (2,))]))
@fuzz("apply on object arrays", examples=150)
def test_ufuncs_on_object_arrays_raise_only_documented_errors(func, name, data, shapes):
    """Every numpy ufunc on object arrays of mixed Python values (ints past int64, None, strings, tuples):
    a result, or a BroadcastError/InputError -- never the elements' own AttributeError, ZeroDivisionError,
    OverflowError... (small-op path, inline lookup, threads)."""
    arrays = []
    for shape in shapes[:func.nin]:
        values = data.draw(st.lists(_ELEMENTS, min_size=1, max_size=4))
        a = np.empty(int(np.prod(shape)), dtype=object)
        for i in range(a.size):
            a[i] = values[i % len(values)]
        arrays.append(a.reshape(shape))
    f = func.__name__ if name else func
    numbers = [np.ones(x.shape) for x in arrays]  # numbers of the same shapes fill the caches
    with np.errstate(all="ignore"):
        for args in (arrays, numbers, numbers, arrays):
            with only_documented():
                bcast.apply(f, *args)
