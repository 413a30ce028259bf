"""The first large op of each dtype on a fresh install: what it costs before numba's disk cache holds a loop.

Run:  python benchmarks/first_call.py [--dtypes float16,float32,...] [--shape 16,256,56,56]

Each dtype runs in a new Python process with an empty numba cache folder
(``NUMBA_CACHE_DIR``), as on a fresh install: ``bcast.onnx.run("Add", x, b)``
on ``x`` of the shape and ``b`` of (C,1,1) (a conv bias).  Printed per dtype:
the import of bcast, the first call (numpy's loop runs while the compiled loop
is compiled in a background thread), how long until the compiled loop is ready
(``bcast.run._kernels.wait``), the second call (the compiled loop, where it
pays), and numpy's own Add for scale.  Then the same with the cache the first
process left (a second run of the program).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import bcast.onnx
from bcast.run import _kernels
t1 = time.perf_counter()
dtype, shape = sys.argv[1], tuple(int(d) for d in sys.argv[2].split(","))
rng = np.random.default_rng(0)
x = rng.uniform(0.5, 2, shape).astype(dtype)
b = rng.uniform(0.5, 2, (shape[1], 1, 1)).astype(dtype)
t2 = time.perf_counter()
first = bcast.onnx.run("Add", x, b)
t3 = time.perf_counter()
_kernels.wait()
t4 = time.perf_counter()
second = bcast.onnx.run("Add", x, b)
t5 = time.perf_counter()
np.add(x, b)
t6 = time.perf_counter()
assert first.tobytes() == second.tobytes()
print(json.dumps({"import": t1 - t0, "first": t3 - t2, "ready": t4 - t2, "second": t5 - t4, "numpy": t6 - t5}))
"""


def measure(dtype: str, shape: str, cache: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", CHILD, dtype, shape], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default="float16,float32,float64,int8,uint8,int32,int64")
    parser.add_argument("--shape", default="16,256,56,56", help="x's shape (N,C,H,W); b is (C,1,1)")
    args = parser.parse_args(argv)
    print(f"Add {args.shape} + (C,1,1), each dtype in a new process; seconds")
    print(f"{'dtype':<9} {'cache':<6} {'import':>7} {'first':>7} {'ready':>7} {'second':>8} {'numpy':>8}")
    worst = 0.0
    for dtype in args.dtypes.split(","):
        with tempfile.TemporaryDirectory(prefix="bcast-numba-") as cache:
            for state in ("empty", "filled"):
                r = measure(dtype, args.shape, cache)
                if "error" in r:
                    print(f"{dtype:<9} {state:<6} failed: {r['error']}")
                    continue
                worst = max(worst, r["first"])
                print(f"{dtype:<9} {state:<6} {r['import']:7.3f} {r['first']:7.3f} {r['ready']:7.3f} "
                      f"{r['second']:8.4f} {r['numpy']:8.4f}", flush=True)
    print(f"\nthe slowest first call: {worst:.3f} s (target: 1 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
