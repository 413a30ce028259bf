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
    tensors = [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()]
    ir = ir_version or (3 if opset < 7 else 8)
    if ir < 4:  # initializers are graph inputs too
        vin += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in tensors]
    declared = outputs if isinstance(outputs, dict) else dict.fromkeys(outputs)
    vout = [helper.make_tensor_value_info(o, TensorProto.FLOAT, s) for o, s in declared.items()]
    g = helper.make_graph(made, "g", vin, vout, initializer=tensors)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    done = onnx.shape_inference.infer_shapes(m).graph
    inferred = {v.name: v for v in (*done.value_info, *done.output) if v.type.tensor_type.HasField("shape")}
    for v in m.graph.output:  # the checker wants the outputs' shapes: onnx's where the caller gave none
        if not v.type.tensor_type.HasField("shape") and v.name in inferred:
            v.CopyFrom(inferred[v.name])
    return m


def randomized(path: str, seed: int = 0):
    """A light model with every weight random (ConstantOfShape -> a random initializer, initializers
    redrawn) and every broadcasting node's output exposed as a graph output; returns the model and
    the feeds for its real inputs (batch 1)."""
    import bcast.frameworks.onnx.ops as bonnx

    rng = np.random.default_rng(seed)

    def weights(dims):
        """Random, every element its own value; conv/fc weights scaled by fan-in (no overflow), the 1-D ones
        (biases, BatchNorm's) in [0.5, 1.5] (variances > 0)."""
        if len(dims) < 2:
            return rng.uniform(0.5, 1.5, dims).astype(np.float32)
        return (rng.uniform(-1, 1, dims) / np.sqrt(np.prod(dims[1:]))).astype(np.float32)

    m = onnx.load(path)
    g = m.graph
    consts = {}
    for t in g.initializer:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(weights(tuple(t.dims)), t.name))
    keep = []
    shapes = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in shapes:
            dims = tuple(int(d) for d in shapes[n.input[0]])
            consts[n.output[0]] = weights(dims)
        else:
            keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    used = {i for n in keep for i in n.input}
    kept = [t for t in g.initializer if t.name in used]  # the ConstantOfShape shapes go
    del g.initializer[:]
    g.initializer.extend(kept)
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in consts.items())
    inits = {t.name for t in g.initializer}
    # graph inputs that are weights are no inputs any more (IR >= 4 lets initializers stand alone)
    real = [v for v in g.input if v.name not in inits and v.name in used]
    del g.input[:]
    g.input.extend(real)
    m.ir_version = max(m.ir_version, 4)
    outs = {o.name for o in g.output}
    inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.value_info}
    for n in g.node:
        if n.op_type in bonnx.OPS and n.output[0] not in outs:
            g.output.append(inferred[n.output[0]])
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
    so.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


#: The repeated fields :func:`add_repeated` fills, each with the field bcast's refusal names for it.
REPEATED = {
    "initializers": "GraphProto.initializer", "sparse_initializers": "GraphProto.sparse_initializer",
    "value_info": "TensorShapeProto.dim", "inputs": "GraphProto.input", "dims": "TensorShapeProto.dim",
    "attributes": "NodeProto.attribute", "attribute_ints": "AttributeProto.ints", "node_inputs": "NodeProto.input",
    "opset_imports": "ModelProto.opset_import", "metadata": "ModelProto.metadata_props",
    "functions": "FunctionProto.",
}


def add_repeated(m, kind: str, n: int) -> None:
    """Add ``n`` of one repeated field to the model ``m`` (valid as before; unused names): a repeated-field bomb
    when ``n`` is large.  ``subgraph_nodes``: an If whose branches hold ``n`` nodes each."""
    g = m.graph
    tag = len(g.node)  # names of their own, whatever m holds
    if kind == "initializers":
        g.initializer.extend(numpy_helper.from_array(np.zeros(1, np.float32), f"i{tag}_{i}") for i in range(n))
    elif kind == "sparse_initializers":
        for i in range(n):
            values = numpy_helper.from_array(np.ones(1, np.float32), f"s{tag}_{i}")
            g.sparse_initializer.append(helper.make_sparse_tensor(values, numpy_helper.from_array(
                np.zeros(1, np.int64), f"s{tag}_{i}_idx"), [4]))
    elif kind == "value_info":
        g.value_info.extend(helper.make_tensor_value_info(f"v{tag}_{i}", TensorProto.FLOAT, [1, 2]) for i in range(n))
    elif kind == "inputs":
        g.input.extend(helper.make_tensor_value_info(f"u{tag}_{i}", TensorProto.FLOAT, None) for i in range(n))
    elif kind == "dims":
        g.input.append(helper.make_tensor_value_info(f"w{tag}", TensorProto.FLOAT, [1] * n))
    elif kind == "attributes":
        g.node.append(helper.make_node("Relu", [g.input[0].name], [f"r{tag}"]))
        g.node[-1].attribute.extend(helper.make_attribute(f"a{i}", 1) for i in range(n))
    elif kind == "attribute_ints":
        g.node.append(helper.make_node("Relu", [g.input[0].name], [f"r{tag}"]))
        g.node[-1].attribute.append(helper.make_attribute("ints", list(range(n)), attr_type=onnx.AttributeProto.INTS))
    elif kind == "node_inputs":
        g.node.append(helper.make_node("Sum", [g.input[0].name] * n, [f"s{tag}"]))
    elif kind == "opset_imports":
        m.opset_import.extend(helper.make_opsetid(f"d{tag}_{i}", 1) for i in range(n))
    elif kind == "metadata":
        m.metadata_props.extend(onnx.StringStringEntryProto(key=f"k{tag}_{i}", value="v") for i in range(n))
    elif kind == "functions":
        f = helper.make_function("local", f"f{tag}", ["a"], ["b"], [helper.make_node("Relu", ["a"], ["b"])],
                                 [helper.make_opsetid("", 17)])
        m.functions.extend(f for _ in range(n))
    elif kind == "subgraph_nodes":
        body = helper.make_graph([helper.make_node("Relu", ["x"], ["x"])] * n, "body", [],
                                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)])
        cond = helper.make_tensor_value_info(f"c{tag}", TensorProto.BOOL, [])
        g.input.append(cond)
        g.node.append(helper.make_node("If", [cond.name], [f"z{tag}"], then_branch=body, else_branch=body))
    else:
        raise ValueError(kind)


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def branch(name, nodes, out):
    return helper.make_graph(nodes, name, [], [vi(out, None)])


def readme_if(nested: bool = False):
    """The README's ncnn-garbage Mul (x (1,5,4,5) * w (4,5)) in the then-branch of If_0 (in a Loop body's If
    when ``nested``), its else-branch a harmless Add."""
    then = branch("then", [helper.make_node("Mul", ["x", "w"], ["t"], name="Mul_3")], "t")
    other = branch("else", [helper.make_node("Add", ["x", "x"], ["e"], name="Add_1")], "e")
    if_node = helper.make_node("If", ["c"], ["y" if not nested else "yb"], name="If_0", then_branch=then,
                               else_branch=other)
    if not nested:
        nodes = [if_node]
    else:
        body = helper.make_graph(
            [if_node, helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")], "body",
            [vi("i", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL)],
            [vi("cond_out", [], TensorProto.BOOL), vi("yb", None)])
        nodes = [helper.make_node("Loop", ["n", ""], ["y"], name="Loop_2", body=body)]
    inputs = [vi("x", [1, 5, 4, 5]), vi("c", [], TensorProto.BOOL)]
    inputs += [vi("n", [], TensorProto.INT64)] if nested else []
    w = numpy_helper.from_array(np.arange(20, dtype=np.float32).reshape(4, 5), "w")
    g = helper.make_graph(nodes, "g", inputs, [vi("y", None)], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
