"""Write the small ONNX models the README's lint examples read (run from anywhere):

- ``examples/scale_prelu.onnx``: x (1,5,4,5) -> Mul "scale" by w (4,5) -> PRelu "act" with slope (5,).
  Valid ONNX; ncnn left-aligns w (pnnx drops the batch axis), OpenVINO applies the slope per channel.
- ``examples/legacy_add.onnx``: opset 6 Add "add" with broadcast=1, axis=1: A (2,3,4,5), B (3,4).
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def scale_prelu():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, 4, 5])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, 4, 5])
    w = numpy_helper.from_array(np.linspace(0.5, 1.5, 20, dtype=np.float32).reshape(4, 5), "w")
    slope = numpy_helper.from_array(np.linspace(0.1, 0.5, 5, dtype=np.float32), "slope")
    nodes = [helper.make_node("Mul", ["x", "w"], ["scaled"], name="scale"),
             helper.make_node("PRelu", ["scaled", "slope"], ["y"], name="act")]
    g = helper.make_graph(nodes, "scale_prelu", [x], [y], [w, slope])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8, producer_name="bcast")


def legacy_add():
    a = helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3, 4, 5])
    b = helper.make_tensor_value_info("B", TensorProto.FLOAT, [3, 4])
    c = helper.make_tensor_value_info("C", TensorProto.FLOAT, [2, 3, 4, 5])
    node = helper.make_node("Add", ["A", "B"], ["C"], name="add", broadcast=1, axis=1)
    g = helper.make_graph([node], "legacy_add", [a, b], [c])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 6)], ir_version=3, producer_name="bcast")


MODELS = {"scale_prelu.onnx": scale_prelu, "legacy_add.onnx": legacy_add}

if __name__ == "__main__":
    for name, make in MODELS.items():
        onnx.save(make(), os.path.join(HERE, name))
