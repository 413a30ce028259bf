"""The cost of linting a model of many nodes, for bcast.models.onnx_model.MAX_NODES: time and peak memory of
``bcast lint`` (a subprocess each) on a chain of N Add nodes (every one a broadcasting node) or Relu nodes.

    PYTHONPATH=src python benchmarks/many_nodes.py 100000 1000000

Measured (2 shared cores, 2026-11-22): 1,000,000 nodes lint in 6-9 s (Relu) to 16-21 s (Add), 1.5-2.2 GB
peak (onnx's shape inference ~1.1 GB of it); MAX_NODES + 1 nodes are refused before parsing in ~0.7 s.
"""

import os
import resource
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto, helper


def chain(n: int, op: str) -> onnx.ModelProto:
    nodes = [helper.make_node(op, [f"v{i}", "x"][: 2 if op == "Add" else 1], [f"v{i + 1}"]) for i in range(n)]
    inputs = [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1, 4]),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])]
    g = helper.make_graph(nodes, "chain", inputs, [helper.make_tensor_value_info(f"v{n}", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def measure(path: str) -> tuple:
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "bcast", "lint", path], capture_output=True, text=True)
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # MB, the largest child so far
    return took, peak, p.returncode, (p.stdout or p.stderr).strip().splitlines()[0][-80:]


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        for n in map(int, sys.argv[1:] or ["100000", "1000000"]):
            for op in ("Relu", "Add"):
                path = os.path.join(d, f"{op}{n}.onnx")
                onnx.save(chain(n, op), path)
                took, peak, code, line = measure(path)
                print(f"{n:>9} {op:<5} {os.path.getsize(path) / 2**20:7.1f} MiB file  {took:6.1f} s  "
                      f"peak {peak:7.0f} MB (so far)  exit {code}  {line}", flush=True)
