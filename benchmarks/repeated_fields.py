"""The cost of linting models that are big in their repeated fields, for bcast.models.onnx_model.MAX_ENTRIES:
time and peak memory of ``bcast lint`` (a fresh process each) on files of N tiny initializers, N
value_info entries of 60 dims, one node of N attributes, one input of N dims, N opset imports, N
metadata entries, one Sum of N inputs.  The files are written as protobuf bytes directly (seconds for
millions of entries).

    PYTHONPATH=src python benchmarks/repeated_fields.py 100000 1000000
    PYTHONPATH=src python benchmarks/repeated_fields.py --limit 100000000 100000   # bcast's limit lifted

Measured: see README.md, Security.
"""

import os
import subprocess
import sys
import tempfile
import time


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number: int, payload) -> bytes:
    """A field: a varint for an int, else length-delimited bytes."""
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    payload = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def tensor_type(dims) -> bytes:  # TypeProto{tensor_type{elem_type FLOAT, shape{dim...}}}
    shape = b"".join(field(1, field(1, d)) for d in dims)
    return field(1, field(1, 1) + field(2, shape))


def value_info(name: str, dims) -> bytes:
    return field(1, name) + field(2, tensor_type(dims))


def model(graph_fields: bytes, extra: bytes = b"", opsets: bytes = b"") -> bytes:
    """ModelProto{ir_version 8, opset_import {"" 13}, graph{Relu x -> y, input x (2,3), output y}}."""
    node = field(1, "x") + field(2, "y") + field(4, "Relu")
    graph = field(1, node) + field(2, "g") + field(11, value_info("x", [2, 3])) + field(12, value_info("y", [2, 3]))
    return field(1, 8) + field(8, field(1, "") + field(2, 13)) + opsets + field(7, graph + graph_fields) + extra


def hostile(kind: str, n: int) -> bytes:
    if kind == "initializers":  # TensorProto{dims 1, data_type 1, name, raw_data 4 bytes}: ~21 bytes each
        return model(b"".join(field(5, field(1, 1) + field(2, 1) + field(8, f"i{i}") + field(9, b"\0" * 4))
                              for i in range(n)))
    if kind == "value_info":  # 60 dims each: ~266 bytes, as in the issue
        typ = field(2, tensor_type([1] * 60))
        return model(b"".join(field(13, field(1, f"v{i}") + typ) for i in range(n)))
    if kind == "attributes":  # one node, N int attributes
        attrs = b"".join(field(5, field(1, f"a{i}") + field(3, 1) + field(20, 2)) for i in range(n))
        node = field(1, "x") + field(2, "z") + field(4, "Relu") + attrs
        return model(field(1, node))
    if kind == "dims":  # one graph input of N dims
        return model(field(11, value_info("w", [1] * n)))
    if kind == "opset_imports":
        return model(b"", opsets=b"".join(field(8, field(1, f"d{i}") + field(2, 1)) for i in range(n)))
    if kind == "metadata":
        return model(b"", extra=b"".join(field(14, field(1, f"k{i}") + field(2, "v")) for i in range(n)))
    if kind == "node_inputs":  # one Sum of N inputs
        node = b"".join(field(1, "x") for _ in range(n)) + field(2, "s") + field(4, "Sum")
        return model(field(1, node))
    raise ValueError(kind)


KINDS = ("initializers", "value_info", "attributes", "dims", "opset_imports", "metadata", "node_inputs")

_CHILD = """
import resource, sys, time
from bcast.models import onnx_model as models
if sys.argv[2] != "-":
    models.MAX_ENTRIES = int(sys.argv[2])
from bcast.cli import main
import io, contextlib
start = time.perf_counter()
err = io.StringIO()
with contextlib.redirect_stderr(err):
    code = main(["lint", sys.argv[1]], out=io.StringIO())
took = time.perf_counter() - start
print(code, round(took, 2), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, err.getvalue().strip()[-110:])
"""


def measure(path: str, limit: str = "-") -> str:
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-c", _CHILD, path, limit], capture_output=True, text=True,
                          env=env).stdout.strip() or "(crashed)"


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--build"]:
        with open(args[3], "wb") as f:
            f.write(hostile(args[1], int(args[2])))
        sys.exit(0)
    limit = "-"
    if args[:1] == ["--limit"]:
        limit, args = args[1], args[2:]
    kinds = [a for a in args if not a.isdigit()] or KINDS
    with tempfile.TemporaryDirectory() as d:
        for n in [int(a) for a in args if a.isdigit()] or [100_000]:
            for kind in kinds:
                path = os.path.join(d, f"{kind}{n}.onnx")
                start = time.perf_counter()
                # built in a child: a parent's memory at fork time shows in its children's peak (ru_maxrss)
                subprocess.run([sys.executable, __file__, "--build", kind, str(n), path], check=True)
                built = time.perf_counter() - start
                print(f"{kind:>14} {n:>9,} {os.path.getsize(path) / 2**20:7.1f} MiB (built in {built:4.1f} s): "
                      f"exit, s, peak MB: {measure(path, limit)}", flush=True)
