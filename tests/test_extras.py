"""A missing optional dependency is one message naming the smallest thing that installs it:
bcast's smallest extra that holds it (`bcast[onnx]`, not `bcast[test]`), else the package."""

import pathlib
import re
import subprocess
import sys

import pytest

import bcast
from bcast.core._require import INSTALL, MissingDependency

SRC = pathlib.Path(bcast.__file__).resolve().parent

CASES = {
    # blocked module, code, the message
    "recipe-onnx-model": ("onnx", "bcast.translate((2, 3), (3,), to='onnx').model()",
                          "an ONNX model of a recipe needs onnx: pip install 'bcast[onnx]'"),
    "lint": ("onnx", "bcast.lint('m.onnx')", "reading ONNX models needs onnx: pip install 'bcast[onnx]'"),
    "recipe-openvino-model": ("openvino", "bcast.translate((2, 3), (3,), to='openvino').model()",
                              "an OpenVINO model of a recipe needs openvino: pip install openvino"),
    "recipe-onnx-run": ("onnxruntime", "bcast.translate((2, 3), (3,), to='onnx').run(np.ones((2, 3), 'f4'), "
                        "np.ones(3, 'f4'))", "running an ONNX recipe needs onnxruntime: pip install onnxruntime"),
    # was: "... needs onnx: pip install 'bcast[onnx]'", then, once installed, "... needs onnxruntime"
    "recipe-onnx-run-numpy-only": (("onnx", "onnxruntime"), "bcast.translate((2, 3), (3,), to='onnx').run("
                                   "np.ones((2, 3), 'f4'), np.ones(3, 'f4'))", "running an ONNX recipe needs onnx "
                                   "and onnxruntime: pip install 'bcast[onnx]' onnxruntime"),
    "recipe-ncnn-run": ("ncnn", "bcast.translate((2, 3), (3,), to='ncnn').run(np.ones((2, 3), 'f4'), "
                        "np.ones(3, 'f4'))", "running an ncnn recipe needs ncnn: pip install ncnn"),
    "recipe-stablehlo-run": ("jax", "bcast.translate((2, 3), (3,), to='stablehlo').run(np.ones((2, 3), 'f4'), "
                             "np.ones(3, 'f4'))", "running a StableHLO recipe needs jax: pip install jax"),
    "tflite-oracle": ("ai_edge_litert", "from bcast.frameworks.tflite import oracle; oracle.version()",
                      "the TFLite oracle needs ai_edge_litert: pip install 'bcast[tflite]'"),
    "strategies": ("hypothesis", "import bcast.strategies",
                   "bcast.strategies needs hypothesis: pip install 'bcast[hypothesis]'"),
}

_CODE = """
import sys
for blocked in {blocked!r}.split():
    sys.modules[blocked] = None  # as if not installed
import numpy as np, bcast
from bcast.core._require import MissingDependency
try:
    {code}
except MissingDependency as e:
    assert isinstance(e, ImportError) and isinstance(e, bcast.InputError)
    print(e)
"""


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_message_names_the_smallest_install(case):
    blocked, code, message = CASES[case]
    blocked = " ".join(blocked) if isinstance(blocked, tuple) else blocked
    r = subprocess.run([sys.executable, "-c", _CODE.format(blocked=blocked, code=code)], capture_output=True,
                       text=True, timeout=120, env={"PYTHONPATH": str(SRC.parent), "PATH": ""})
    assert r.returncode == 0 and r.stdout.strip() == message, r.stderr


def test_conformance_without_hypothesis_says_it_once():
    """Was: 'conformance needs hypothesis and numpy (bcast.testing.strategies needs hypothesis: pip install
    'bcast[hypothesis]' (or 'bcast[test]')): pip install 'bcast[test]'' -- nested, and the wrong extra."""
    code = "import sys; sys.modules['hypothesis'] = None\nfrom bcast.cli import main\nsys.exit(main(['conformance']))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": str(SRC.parent), "PATH": ""})
    assert r.returncode == 2 and r.stderr == (
        "bcast conformance: error: bcast conformance (its random cases; --cases 0 runs without) needs hypothesis: "
        "pip install 'bcast[hypothesis]'\n"), r.stderr


@pytest.mark.parametrize("extra, code", [([], 1), (["--allow-missing"], 0)])
def test_conformance_of_the_seed_examples_needs_nothing_but_numpy(extra, code):
    """Was: `--cases 0` (the seed examples only, no random case drawn) refused without hypothesis.  With
    no runtime at all it runs, checks nothing and says so (exit 1; --allow-missing: 0)."""
    blocked = ["hypothesis", "onnx", "onnxruntime", "openvino", "ncnn", "ai_edge_litert", "torch", "paddle", "MNN",
               "coremltools", "jax"]
    prog = (f"import sys\nfor m in {blocked!r}: sys.modules[m] = None\nfrom bcast.cli import main\n"
            f"sys.exit(main(['conformance', '--cases', '0', *{extra!r}]))")
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": str(SRC.parent), "PATH": ""})
    assert (r.returncode, r.stderr) == (code, ""), r.stderr
    assert "(0 random per rule" in r.stdout and "0 checks" in r.stdout, r.stdout


def test_every_install_hint_in_the_source_is_a_smallest_one():
    allowed = {hint.removeprefix("pip install ") for hint in INSTALL.values()}
    for path in SRC.rglob("*.py"):
        for hint in re.findall(r"pip install ([^\s`\"),]+)", path.read_text(encoding="utf-8")):
            assert hint.strip("'") != "bcast[test]", (path.name, hint)
            assert hint in allowed or hint.startswith(("{", "'bcast[", "bcast_no_such")), (path.name, hint)


def test_a_broken_install_is_not_called_missing(monkeypatch):
    """An ImportError from inside an installed package is its own error, not 'install it'."""
    from bcast.core._require import require

    def broken(name):
        raise ModuleNotFoundError("No module named 'libfoo'", name="libfoo")

    monkeypatch.setattr("importlib.import_module", broken)
    with pytest.raises(ModuleNotFoundError) as info:
        require("onnx", "x")
    assert not isinstance(info.value, MissingDependency)
