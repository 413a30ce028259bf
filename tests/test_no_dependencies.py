"""The shape-only API imports nothing heavy: not the runtimes, not even numpy."""

import subprocess
import sys

CODE = """
import sys
import bcast
from bcast.frameworks.deviations import applicable
bcast.result_shape((2, 3), (3,))
for rule in bcast.RULES:
    try:
        bcast.infer((2, 3, 4), (3, 4), rule=rule, **({"axes_mapping": [1, 2]} if rule == "explicit" else {}))
    except (bcast.BroadcastError, bcast.InputError):
        pass
bcast.infer((2, 3), (3, 1), rule="pdpd", axis=1).explain()
applicable((2, 3, 4), (3, 4), rule="ncnn")
from bcast.cli import main
bcast.translate(bcast.infer((2, 3, 4), (3,), rule="pdpd", axis=1), to="openvino").text()
heavy = [m for m in ("numpy", "onnx", "onnxruntime", "openvino", "ncnn", "hypothesis") if m in sys.modules]
print(",".join(heavy))
"""


def test_core_imports_no_heavy_module():
    r = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""
