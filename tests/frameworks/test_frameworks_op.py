"""The op tables' shared record (bcast.frameworks._op.Op) and its checks, each table wording its messages."""

import numpy as np
import pytest

import bcast.ncnn
import bcast.onnx
import bcast.openvino
from bcast.core.errors import InputError
from bcast.frameworks._op import Op
from bcast.frameworks.ncnn import ops as ncnn_ops
from bcast.frameworks.onnx import ops as onnx_ops
from bcast.frameworks.openvino import ops as openvino_ops

F32 = np.ones(3, np.float32)


@pytest.mark.parametrize("table", [onnx_ops, openvino_ops, ncnn_ops])
def test_every_table_row_is_the_shared_record(table):
    rows = table.OPS.values() if isinstance(table.OPS, dict) else table.OPS
    assert all(isinstance(o, Op) and isinstance(o, table.Op) for o in rows)
    assert bcast.onnx.Op is onnx_ops.Op and bcast.openvino.Op is openvino_ops.Op and bcast.ncnn.Op is ncnn_ops.Op


def test_where_names_the_framework_and_the_op():
    assert onnx_ops.OPS["Add"].where == "onnx Add"
    assert openvino_ops.OPS["Add"].where == "openvino Add"
    assert ncnn_ops.op("ADD").where == "ncnn BinaryOp ADD"


@pytest.mark.parametrize(("call", "message"), [
    (lambda: bcast.onnx.run("Add", F32), "onnx Add: takes 2 inputs (A, B), got 1"),
    (lambda: bcast.onnx.run("Gemm", F32), "onnx Gemm: takes 2 or 3 inputs (A, B, C), got 1"),
    (lambda: bcast.onnx.run("Sum"), "onnx Sum: takes 1 or more inputs, got 0"),
    (lambda: bcast.onnx.plan("Add", (1,)), "onnx Add: takes 2 inputs (A, B), got 1"),
    (lambda: bcast.openvino.run("Add", F32), "openvino Add: takes 2 (A, B) inputs; got 1"),
    (lambda: bcast.openvino.plan("Broadcast", (1,), (2,), (0,)),
     "openvino Broadcast: takes 2 (data, target_shape) inputs; got 3"),
    (lambda: bcast.ncnn.run("ADD", F32), "ncnn BinaryOp ADD: two inputs needed (or with_scalar=True and scalar=); "
                                         "got A only"),
    (lambda: bcast.ncnn.run("ADD", F32, F32, with_scalar=True),
     "ncnn BinaryOp ADD: with_scalar=True takes one input; B is the scalar= value, got B array([1., 1., 1.], "
     "dtype=float32)"),
])
def test_arity_messages(call, message):
    with pytest.raises(InputError) as e:
        call()
    assert str(e.value).startswith(message.split(", got B ")[0])
    if ", got B " not in message:
        assert str(e.value) == message


@pytest.mark.parametrize(("call", "message"), [
    (lambda: bcast.onnx.run("BitShift", F32, F32, opset=11, direction="LEFT"),
     "onnx BitShift-11: input X must be one of uint16, uint32, uint64, uint8 (T); got float"),
    (lambda: bcast.onnx.run("Add", F32, np.ones(3)),
     "onnx Add: inputs A and B must have the same type (T); got float32 and float64"),
    (lambda: bcast.openvino.run("Add", F32, np.ones(3)),
     "openvino Add: inputs A and B must have the same element type; got float32 and float64"),
    (lambda: bcast.openvino.run("LogicalAnd", F32, F32),
     "openvino LogicalAnd: A and B must be of a boolean element type (bool); got float32"),
    (lambda: bcast.ncnn.run("ADD", F32, np.ones(3)),
     "ncnn BinaryOp ADD: input B must be float32 (ncnn computes in fp32); got float64: convert it with "
     ".astype(np.float32)"),
    (lambda: bcast.ncnn.run("ADD", F32.astype(">f4"), F32),
     "ncnn BinaryOp ADD: input A must be float32 (ncnn computes in fp32); got >f4: convert it with "
     ".astype(np.float32)"),
])
def test_dtype_messages(call, message):
    with pytest.raises(InputError) as e:
        call()
    assert str(e.value) == message


def test_onnx_strings_of_two_lengths_are_one_type():
    got = bcast.onnx.run("Equal", np.array(["ab"]), np.array(["abc", "ab"]))
    assert got.tolist() == [False, True]


def test_openvino_checks_sameness_before_the_type_class():
    with pytest.raises(InputError, match="must have the same element type; got int8 and float32"):
        bcast.openvino.run("PRelu", np.ones(3, np.int8), F32)
