"""Small ONNX models for the lint and rewrite tests, and the onnx wheel's light model-zoo graphs
with their constant weights replaced by random values."""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def light(name: str) -> str:
    return os.path.join(LIGHT, f"light_{name}.onnx")


def model(nodes, inputs: dict, outputs, *, opset: int = 17, inits: dict | None = None, ir_version=None):
    """A model of ``nodes`` (tuples ``(op, inputs, outputs, attrs)`` or NodeProtos); ``inputs``
    maps names to shapes (None: no shape); ``outputs`` are names; ``inits`` maps names to arrays."""
    made = []
    for i, n in enumerate(nodes):
        if isinstance(n, tuple):
            op, ins, outs, *attrs = n
            n = helper.make_node(op, list(ins), list(outs), name=f"n{i}", **(attrs[0] if attrs else {}))
        made.append(n)
    vin = [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in inputs.items()]
    vout = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs]
    tensors = [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()]
    g = helper.make_graph(made, "g", vin, vout, initializer=tensors)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version or (3 if opset < 7 else 8)
    return m


def randomized(path: str, seed: int = 0):
    """A light model with every weight random (ConstantOfShape -> a random initializer, initializers
    redrawn) and every broadcasting node's output exposed as a graph output; returns the model and
    the feeds for its real inputs (batch 1)."""
    import bcast.onnx as bonnx

    rng = np.random.default_rng(seed)
    m = onnx.load(path)
    g = m.graph
    consts = {}
    for t in g.initializer:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(rng.standard_normal(tuple(t.dims)).astype(np.float32), t.name))
    keep = []
    shapes = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in shapes:
            dims = tuple(int(d) for d in shapes[n.input[0]])
            consts[n.output[0]] = (rng.standard_normal(dims) * 0.5 + 0.5).astype(np.float32)
        else:
            keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in consts.items())
    inits = {t.name for t in g.initializer}
    # graph inputs that are weights are no inputs any more (IR >= 4 lets initializers stand alone)
    real = [v for v in g.input if v.name not in inits]
    del g.input[:]
    g.input.extend(real)
    m.ir_version = max(m.ir_version, 4)
    outs = {o.name for o in g.output}
    for n in g.node:
        if n.op_type in bonnx.OPS and n.output[0] not in outs:
            g.output.append(helper.make_tensor_value_info(n.output[0], TensorProto.FLOAT, None))
            outs.add(n.output[0])
    feeds = {}
    for v in real:
        dims = [d.dim_value or 1 for d in v.type.tensor_type.shape.dim]
        feeds[v.name] = rng.standard_normal(dims).astype(np.float32)
    return m, feeds


def run_ort(m, feeds):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))
