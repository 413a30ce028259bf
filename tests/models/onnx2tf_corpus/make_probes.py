"""Regenerate the onnx2tf probes (tests/models/onnx2tf_corpus/probes): one-op ONNX models that test a rule of
``bcast lint --target onnx2tf`` (bcast.frameworks.tflite.lint_onnx2tf), and onnx2tf 1.29.24's conversion of
each, run in LiteRT by tests/models/test_onnx2tf_corpus.py.

    python tests/models/onnx2tf_corpus/make_probes.py /tmp/venv-onnx2tf/bin/onnx2tf

(run with the python of onnx2tf's venv: it builds the models with onnx and numpy; see make_onnx2tf.py.)
"""

from __future__ import annotations

import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_onnx2tf import convert, sample_images  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes")

#: name: (nodes as (op, inputs, output), graph inputs and their shapes, constants and their shapes, output shape)
PROBES = {
    "max_c11": ([("Max", ["x", "w"], "y")], {"x": (1, 3, 4, 5)}, {"w": (3, 1, 1)}, (1, 3, 4, 5)),
    "max_1c11": ([("Max", ["x", "w"], "y")], {"x": (1, 3, 4, 5)}, {"w": (1, 3, 1, 1)}, (1, 3, 4, 5)),
    "pow_1c11": ([("Pow", ["x", "w"], "y")], {"x": (1, 3, 4, 5)}, {"w": (1, 3, 1, 1)}, (1, 3, 4, 5)),
    "mask_square": ([("Add", ["x", "m"], "y")], {"x": (1, 2, 4, 4), "m": (1, 1, 1, 4)}, {}, (1, 2, 4, 4)),
    "mask_rect": ([("Add", ["x", "m"], "y")], {"x": (1, 2, 3, 4), "m": (1, 1, 1, 4)}, {}, (1, 2, 3, 4)),
    "matmul_table3": ([("MatMul", ["x", "k"], "h"), ("Add", ["h", "c"], "y")], {"x": (1, 5, 6)},
                      {"k": (6, 5), "c": (1, 5, 5)}, (1, 5, 5)),
    "matmul_squared_table3": ([("MatMul", ["x", "k"], "h"), ("Mul", ["h", "h"], "g"), ("Add", ["g", "c"], "y")],
                              {"x": (1, 5, 6)}, {"k": (6, 5), "c": (1, 5, 5)}, (1, 5, 5)),
    "matmul_table2": ([("MatMul", ["x", "k"], "h"), ("Add", ["h", "c"], "y")], {"x": (1, 5, 6)},
                      {"k": (6, 5), "c": (5, 5)}, (1, 5, 5)),
}


def build(name: str) -> onnx.ModelProto:
    nodes, inputs, consts, out = PROBES[name]
    rng = np.random.default_rng(len(name))
    graph = helper.make_graph(
        [helper.make_node(op, ins, [o], name=f"{o}_n") for op, ins, o in nodes], name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        [numpy_helper.from_array(rng.uniform(0.5, 1.5, s).astype(np.float32), n) for n, s in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def main(onnx2tf: str) -> None:
    os.makedirs(HERE, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        sample_images(work)
        for name in PROBES:
            model = os.path.join(HERE, f"{name}.onnx")
            onnx.save(build(name), model)
            convert(onnx2tf, model, work, os.path.join(HERE, f"{name}.tflite"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "onnx2tf")
