"""Oracle: one TFLite builtin op in LiteRT's interpreter (the ``ai-edge-litert`` wheel), on numpy arrays.

Each op runs in a one-op model written here, at run time, with the ``flatbuffers``
package from the facts of TFLite's schema (``tensorflow/compiler/mlir/lite/schema/schema.fbs``,
LiteRT's ``tflite/converter/schema/schema.fbs``): a ``Model`` (file identifier ``TFL3``,
schema version 3) with one subgraph whose input tensors feed one ``Operator`` and whose one
output tensor is the result.  No builtin options are written: the interpreter's parser then
gives every op its defaults (no fused activation).  The inputs are resized to each case's
shapes (``resize_tensor_input``, which may change the rank) before ``allocate_tensors``:
that is where a kernel's ``Prepare`` checks the shapes and refuses (:class:`RuntimeRefused`).

Two ways to run: ``delegate=False`` (the default) uses the builtin kernels alone
(``OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES``), the kernels of
``tensorflow/lite/kernels``; ``delegate=True`` lets the interpreter apply its default
delegate (XNNPACK), as ``Interpreter(model_content=...)`` does.

Some kernels abort the process on shapes they do not support (``TFLITE_CHECK``): run
such inputs through :func:`run_many`, which uses a child process and turns a death into
:class:`RuntimeCrashed`.  The wheel is imported on first use: ``pip install 'bcast[tflite]'``.
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
from .._oracle import RuntimeCrashed, RuntimeRefused, exit_status, last_line

__all__ = ["OP_CODES", "RuntimeCrashed", "RuntimeRefused", "graph", "model", "run", "run_graph", "run_many", "version"]

RUNTIME = "tflite"

#: schema.fbs ``enum BuiltinOperator``: the ops bcast runs, at their numbers.
OP_CODES = {
    "ADD": 0, "MUL": 18, "SUB": 41, "DIV": 42, "MAXIMUM": 55, "MINIMUM": 57, "LESS": 58, "GREATER": 61,
    "GREATER_EQUAL": 62, "LESS_EQUAL": 63, "SELECT": 64, "EQUAL": 71, "NOT_EQUAL": 72, "POW": 78,
    "LOGICAL_OR": 84, "LOGICAL_AND": 86, "FLOOR_DIV": 90, "FLOOR_MOD": 95, "SQUARED_DIFFERENCE": 99,
    "SELECT_V2": 123, "BROADCAST_TO": 130, "RESHAPE": 22,
}
#: The op versions written (``OperatorCode.version``, default 1): BROADCAST_TO's builtin kernel is registered
#: from version 2 (version 1 was TF's flex op; ``kernels/register.cc``).
OP_VERSIONS = {"BROADCAST_TO": 2}
#: schema.fbs: ``OperatorCode.deprecated_builtin_code`` holds codes below this; above, this value.
_PLACEHOLDER_FOR_GREATER_OP_CODES = 127
#: schema.fbs ``enum TensorType``, for the numpy types the ops here take.
TENSOR_TYPES = {"float32": 0, "int32": 2, "int64": 4, "bool": 6}


def _litert():
    from ...core._require import require

    return require("ai_edge_litert", "the TFLite oracle")


def version() -> str:
    """The installed ``ai-edge-litert`` wheel's version, e.g. ``2.3.0``."""
    from importlib.metadata import version as dist_version

    _litert()
    return dist_version("ai-edge-litert")


# --------------------------------------------------------------------------- the one-op model


def _int_vector(b, values) -> int:
    b.StartVector(4, len(values), 4)
    for v in reversed(values):
        b.PrependInt32(int(v))
    return b.EndVector()


def _offset_vector(b, offsets) -> int:
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


@cache
def model(op: str, dtypes: tuple, out_dtype: str, out_shape: tuple = ()) -> bytes:
    """The bytes of a ``.tflite`` model of one ``op`` whose inputs have the numpy types ``dtypes``
    (each a key of :data:`TENSOR_TYPES`) and whose output has ``out_dtype``.  The inputs are
    declared of shape ``[]`` (the caller resizes them), the output of ``out_shape``."""
    inputs = tuple((f"in{i}", (), d) for i, d in enumerate(dtypes))
    return graph(inputs, ((op, tuple(n for n, _, _ in inputs), "out", None),), ("out", tuple(out_shape), out_dtype))


def graph(inputs: tuple, steps: tuple, output: tuple) -> bytes:
    """The bytes of a ``.tflite`` model of several ops: ``inputs`` are ``(name, shape, dtype)``, each step
    ``(op, input names, output name, shape)`` -- ``shape`` (or None) a constant int32 vector appended to
    the step's inputs (RESHAPE's and BROADCAST_TO's shape) --, ``output`` the ``(name, shape, dtype)`` of the
    last step's value.  Intermediate values have the type their op gives and the shape the kernels work out."""
    import flatbuffers

    b = flatbuffers.Builder(1024)
    # name, shape, dtype, the constant's data
    specs: list[tuple[str, tuple, str, bytes | None]] = [(n, tuple(shape), dtype, None) for n, shape, dtype in inputs]
    dtypes = {n: dtype for n, _, dtype in inputs}
    op_inputs = []
    for k, (op, args, out, shape) in enumerate(steps):
        ins = list(args)
        if shape is not None:
            name = f"{out}_shape_{k}"
            specs.append((name, (len(shape),), "int32", np.asarray(shape, np.int32).tobytes()))
            ins.append(name)
        op_inputs.append(ins)
        last = k == len(steps) - 1
        dtypes[out] = _out_dtype(op, [np.empty(0, dtypes[n]) for n in args])
        specs.append((out, tuple(output[1]) if last else (), output[2] if last else dtypes[out], None))
    index = {name: i for i, (name, _, _, _) in enumerate(specs)}
    buffers = [_buffer(b, None)]
    tensors = []
    for name, shape, dtype, data in specs:
        buffer = 0
        if data is not None:
            buffers.append(_buffer(b, data))
            buffer = len(buffers) - 1
        tensors.append(_tensor(b, name, shape, dtype, buffer))
    codes = list(dict.fromkeys(op for op, _, _, _ in steps))
    operators = []
    for (op, _, out, _), ins in zip(steps, op_inputs):
        in_vec, out_vec = _int_vector(b, [index[n] for n in ins]), _int_vector(b, [index[out]])
        b.StartObject(13)  # table Operator: opcode_index, inputs, outputs, ...
        b.PrependUint32Slot(0, codes.index(op), 0)
        b.PrependUOffsetTRelativeSlot(1, in_vec, 0)
        b.PrependUOffsetTRelativeSlot(2, out_vec, 0)
        operators.append(b.EndObject())
    tensor_vec = _offset_vector(b, tensors)
    sg_inputs = _int_vector(b, [index[n] for n, _, _ in inputs])
    sg_outputs = _int_vector(b, [index[output[0]]])
    operator_vec = _offset_vector(b, operators)
    b.StartObject(6)  # table SubGraph: tensors, inputs, outputs, operators, name, ...
    b.PrependUOffsetTRelativeSlot(0, tensor_vec, 0)
    b.PrependUOffsetTRelativeSlot(1, sg_inputs, 0)
    b.PrependUOffsetTRelativeSlot(2, sg_outputs, 0)
    b.PrependUOffsetTRelativeSlot(3, operator_vec, 0)
    subgraph = b.EndObject()
    opcodes = []
    for op in codes:
        code = OP_CODES[op]
        b.StartObject(4)  # table OperatorCode: deprecated_builtin_code, custom_code, version, builtin_code
        b.PrependInt8Slot(0, min(code, _PLACEHOLDER_FOR_GREATER_OP_CODES), 0)
        b.PrependInt32Slot(2, OP_VERSIONS.get(op, 1), 1)
        b.PrependInt32Slot(3, code, 0)
        opcodes.append(b.EndObject())
    opcode_vec, subgraphs, buffer_vec = _offset_vector(b, opcodes), _offset_vector(b, [subgraph]), \
        _offset_vector(b, buffers)
    b.StartObject(5)  # table Model: version, operator_codes, subgraphs, description, buffers, ...
    b.PrependUint32Slot(0, 3, 0)
    b.PrependUOffsetTRelativeSlot(1, opcode_vec, 0)
    b.PrependUOffsetTRelativeSlot(2, subgraphs, 0)
    b.PrependUOffsetTRelativeSlot(4, buffer_vec, 0)
    b.Finish(b.EndObject(), file_identifier=b"TFL3")
    return bytes(b.Output())


def _buffer(b, data: bytes | None) -> int:
    vec = None
    if data is not None:
        b.StartVector(1, len(data), 16)  # schema.fbs: data:[ubyte] (force_align: 16)
        for byte in reversed(data):
            b.PrependUint8(byte)
        vec = b.EndVector()
    b.StartObject(3)  # table Buffer: data, offset, size
    if vec is not None:
        b.PrependUOffsetTRelativeSlot(0, vec, 0)
    return b.EndObject()


def _tensor(b, name: str, shape: tuple, dtype: str, buffer: int) -> int:
    name_off, shape_vec = b.CreateString(name), _int_vector(b, list(shape))
    b.StartObject(11)  # table Tensor: shape, type, buffer, name, ...
    b.PrependUOffsetTRelativeSlot(0, shape_vec, 0)
    b.PrependInt8Slot(1, TENSOR_TYPES[dtype], 0)
    b.PrependUint32Slot(2, buffer, 0)  # 0: the empty buffer (no data)
    b.PrependUOffsetTRelativeSlot(3, name_off, 0)
    return b.EndObject()


def _out_dtype(op: str, arrays) -> str:
    if op in ("LESS", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "EQUAL", "NOT_EQUAL"):
        return "bool"
    return arrays[1].dtype.name if op in ("SELECT", "SELECT_V2") else arrays[0].dtype.name


def interpreter(op: str, dtypes: tuple, out_dtype: str, *, delegate: bool = False, out_shape: tuple = ()):
    """A fresh interpreter of :func:`model` (its tensors not yet allocated)."""
    _litert()
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    resolver = OpResolverType.AUTO if delegate else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    return Interpreter(model_content=model(op, dtypes, out_dtype, tuple(out_shape)),
                       experimental_op_resolver_type=resolver,
                       num_threads=1)


def run(op: str, *inputs, delegate: bool = False, out_shape: tuple = ()) -> np.ndarray:
    """TFLite's builtin ``op`` on ``arrays`` (numpy arrays of float32, int32, int64 or bool; BROADCAST_TO's
    second input is the int32 shape), in this process, in a fresh interpreter whose model declares the
    output of shape ``out_shape``.

    Returns the output (a copy); raises :class:`RuntimeRefused` when the interpreter refuses (a kernel's
    ``Prepare`` or ``Eval`` fails).  Shapes a kernel may abort on: :func:`run_many`.
    """
    arrays = [np.array(a, order="C") for a in inputs]  # (np.ascontiguousarray makes a scalar 1-D)
    dtypes = tuple(a.dtype.name for a in arrays)
    for d in dtypes:
        if d not in TENSOR_TYPES:
            raise RuntimeRefused(RUNTIME, f"no TFLite tensor type for numpy {d} here")
    interp = interpreter(op, dtypes, _out_dtype(op, arrays), delegate=delegate, out_shape=out_shape)
    try:
        for i, a in enumerate(arrays):
            interp.resize_tensor_input(i, list(a.shape))
        interp.allocate_tensors()
        for i, a in enumerate(arrays):
            interp.set_tensor(interp.get_input_details()[i]["index"], a)
        interp.invoke()
    except (RuntimeError, ValueError) as e:
        raise RuntimeRefused(RUNTIME, last_line(e)) from None
    out = interp.get_output_details()[0]
    try:
        return np.array(interp.get_tensor(out["index"]), copy=True)
    except ValueError as e:  # the binding cannot read an empty dynamic tensor ("Invalid tensor size.")
        if 0 in out["shape"]:
            return np.empty(tuple(out["shape"]), out["dtype"])
        raise RuntimeRefused(RUNTIME, last_line(e)) from None


def run_graph(content: bytes, *arrays) -> np.ndarray:
    """The model ``content`` (:func:`graph`) on ``arrays``, its inputs in order, with the builtin kernels;
    :class:`RuntimeRefused` when the interpreter refuses it."""
    _litert()
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    try:
        interp = Interpreter(model_content=content, num_threads=1,
                             experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
        interp.allocate_tensors()
        for d, a in zip(interp.get_input_details(), arrays):
            interp.set_tensor(d["index"], np.array(a, d["dtype"], order="C"))
        interp.invoke()
        return np.array(interp.get_tensor(interp.get_output_details()[0]["index"]), copy=True)
    except (RuntimeError, ValueError) as e:
        raise RuntimeRefused(RUNTIME, last_line(e)) from None


# --------------------------------------------------------------------------- in a child process


def run_many(jobs, *, delegate: bool = False, timeout: float = 120) -> list:
    """Run many ``(op, *arrays)`` jobs in child processes; one result per job, in order: the
    output array, or the :class:`RuntimeRefused` (:class:`RuntimeCrashed` if the child died on
    that job) -- returned, not raised.  After a crash the remaining jobs run in a fresh child."""
    todo = [(op, [np.array(a, order="C") for a in arrays]) for op, *arrays in jobs]
    results: list = []
    while len(results) < len(todo):
        done, crash = _run_child(todo[len(results):], delegate, timeout)
        results.extend(done)
        if crash is not None:
            results.append(crash)
    return results


def _run_child(jobs: list, delegate: bool, timeout: float):
    """One child on ``jobs``: the results it wrote, and the crash that stopped it (or None)."""
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "from bcast.frameworks.tflite.oracle import _child_main; _child_main()"],
            input=pickle.dumps((jobs, delegate)), capture_output=True, timeout=timeout, env=env,
        )
    except subprocess.TimeoutExpired:
        return [], RuntimeCrashed(RUNTIME, f"the child running {len(jobs)} job(s) timed out after {timeout} s", -9)
    done = _read_results(proc.stdout)
    if len(done) == len(jobs):
        return done, None
    if proc.returncode == 0:
        detail = proc.stderr.decode(errors="replace").strip()[-300:]
        return done, RuntimeCrashed(RUNTIME, f"the child stopped without a result: {detail}", 0)
    op, arrays = jobs[len(done)]
    shapes = " and ".join(format_shape(a.shape) for a in arrays)
    return done, RuntimeCrashed(RUNTIME, f"{op} on {shapes} killed the process ({exit_status(proc.returncode)})",
                                proc.returncode)


def _read_results(data: bytes) -> list:
    stream, out = io.BytesIO(data), []
    while stream.tell() < len(data):
        try:
            out.append(pickle.load(stream))
        except Exception:  # a record cut short by the crash
            break
    return out




def _child_main() -> None:
    """The child: read the pickled jobs on stdin, write one pickled result per job."""
    jobs, delegate = pickle.load(sys.stdin.buffer)
    out = sys.stdout.buffer
    for op, arrays in jobs:
        try:
            result: object = run(op, *arrays, delegate=delegate)
        except RuntimeRefused as e:
            result = e
        pickle.dump(result, out)
        out.flush()
