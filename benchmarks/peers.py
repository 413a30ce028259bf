"""The peers of the benchmark: one op built once in onnxruntime and in OpenVINO.

Each builder takes the op, the inputs (numpy arrays, whose shapes and dtypes
become the model's static shapes) and a thread count, and returns two
callables: ``run()`` (the runtime allocates and returns the output) and
``run_into(out)`` (the output is the preallocated ``out``: onnxruntime's
io_binding, OpenVINO's infer request with its output tensor set).  Models are
built and compiled once; the inputs are bound once, without copies where the
runtime allows.

OpenVINO is compiled with ``INFERENCE_PRECISION_HINT=f32`` (on CPUs with
AMX or AVX512-BF16 it would otherwise compute float32 models in bfloat16)
and the latency hint.  onnxruntime runs one inter-op thread and ``threads``
intra-op threads, with its pool's spinning off (``allow_spinning=0``): a
spinning pool keeps burning a core after each run, which on a small machine
slows down whatever runs next -- the other candidates of the same round.

>>> import numpy as np
>>> run, run_into = ort_op("Add", [np.ones((2, 3), np.float32), np.ones(3, np.float32)], threads=1)  # doctest: +SKIP
>>> run()[0, 0]  # doctest: +SKIP
2.0
"""

from __future__ import annotations

import numpy as np

__all__ = ["ort_op", "ov_op", "ov_onnx_op", "ort_version", "ov_version"]


def ort_version() -> str:
    """onnxruntime's version, or "not installed"."""
    try:
        import onnxruntime
    except ImportError:
        return "not installed"
    return onnxruntime.__version__


def ov_version() -> str:
    """OpenVINO's version, or "not installed"."""
    try:
        import openvino
    except ImportError:
        return "not installed"
    return openvino.__version__.split("-")[0]


# --------------------------------------------------------------------------- onnxruntime


def _onnx_model(op: str, inputs, out_shape, out_dtype, attrs: dict):
    from onnx import helper

    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], f"bench_{op}",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
         for n, x in zip(names, inputs)],
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)), out_shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def ort_op(op: str, inputs, *, threads: int, out_shape, out_dtype=np.float32, attrs=None):
    """``(run, run_into)`` for one ONNX ``op`` on ``inputs`` in onnxruntime."""
    import onnxruntime as ort

    model = _onnx_model(op, inputs, out_shape, out_dtype, attrs or {})
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feeds = {f"x{i}": x for i, x in enumerate(inputs)}
    binding = sess.io_binding()
    for name, x in feeds.items():
        binding.bind_cpu_input(name, x)

    def run():
        return sess.run(None, feeds)[0]

    def run_into(out):
        binding.bind_output("y", "cpu", 0, out.dtype, out.shape, out.ctypes.data)
        sess.run_with_iobinding(binding)
        return out

    return run, run_into


# --------------------------------------------------------------------------- OpenVINO


def _ov_node(op: str, params, attrs: dict):
    from openvino import opset13

    builders = {
        "Add": lambda p: opset13.add(p[0], p[1], **attrs),
        "Sum": lambda p: _chain(opset13.add, p),
        "Where": lambda p: opset13.select(p[0], p[1], p[2], **attrs),
    }
    return builders[op](params)


def _chain(f, params):
    node = params[0]
    for p in params[1:]:
        node = f(node, p)
    return node


def ov_op(op: str, inputs, *, threads: int, attrs=None):
    """``(run, run_into)`` for one op on ``inputs`` in OpenVINO's CPU plugin.

    ``op`` is ``Add`` (``auto_broadcast`` in ``attrs``), ``Where`` (OpenVINO's
    Select) or ``Sum`` (a chain of Adds: OpenVINO has no variadic Sum; its CPU
    plugin fuses the chain into one eltwise kernel)."""
    import openvino as ov
    from openvino import opset13

    params = [opset13.parameter(list(x.shape), ov.Type(x.dtype), name=f"x{i}") for i, x in enumerate(inputs)]
    model = ov.Model([_ov_node(op, params, attrs or {})], params, f"bench_{op}")
    return _ov_runners(model, inputs, threads)


def ov_onnx_op(op: str, inputs, *, threads: int, out_shape, out_dtype=np.float32, attrs=None):
    """``(run, run_into)`` for one ONNX ``op`` on ``inputs`` in OpenVINO, read from
    the same ONNX model onnxruntime runs (OpenVINO's ONNX frontend)."""
    model = _onnx_model(op, inputs, out_shape, out_dtype, attrs or {})
    return _ov_runners(_core().read_model(model.SerializeToString(), b""), inputs, threads)


def _ov_runners(model, inputs, threads: int):
    import openvino as ov

    compiled = _core().compile_model(model, "CPU", {
        "INFERENCE_NUM_THREADS": threads,
        "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32",
        "NUM_STREAMS": 1,
    })
    request = compiled.create_infer_request()
    for i, x in enumerate(inputs):
        request.set_input_tensor(i, ov.Tensor(x, shared_memory=True))
    plain = compiled.create_infer_request()
    for i, x in enumerate(inputs):
        plain.set_input_tensor(i, ov.Tensor(x, shared_memory=True))
    bound = {}

    def run():
        plain.infer()
        return plain.get_output_tensor(0).data.copy()  # a new array, as every other candidate returns

    def run_into(out):
        if bound.get("out") is not out:
            request.set_output_tensor(0, ov.Tensor(out, shared_memory=True))
            bound["out"] = out
        request.infer()
        return out

    return run, run_into


_CORE = []


def _core():
    import openvino as ov

    if not _CORE:
        _CORE.append(ov.Core())
    return _CORE[0]
