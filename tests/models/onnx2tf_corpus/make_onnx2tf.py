"""Regenerate the onnx2tf corpus: each model of tests/models/convert_corpus converted by onnx2tf.

    python -m venv /tmp/venv-onnx2tf && /tmp/venv-onnx2tf/bin/pip install onnx2tf==1.29.24
    python tests/models/onnx2tf_corpus/make_onnx2tf.py /tmp/venv-onnx2tf/bin/onnx2tf

onnx2tf 1.29.24 pins its whole stack (tensorflow 2.19.0, numpy 1.26.4, onnx 1.19.1, ...): it cannot
join the test lock (numpy 2.4), so it runs in a venv of its own and its output, the ``.tflite``
files (float32, ``<model>.tflite``), is committed; the tests run them in the lock's LiteRT.  The
converter downloads sample images from GitHub for a model whose inputs look like images (4-D, 3 on
the last axis after its transposition): with no network, a file of random values of that name in the
working directory stands in for them (they feed its own accuracy check, not the model).  A model
the converter fails on has no file (tests/models/test_onnx2tf_corpus.py's table says which).  onnx2tf
writes its simplified model (onnxsim) over the file it converts: it is given a copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(os.path.dirname(HERE), "convert_corpus")
SAMPLE = "calibration_image_sample_data_20x128x128x3_float32.npy"


def sample_images(work: str) -> None:
    """The file of random values onnx2tf reads in place of its sample images (no network here)."""
    sample = np.random.default_rng(0).uniform(0, 1, (20, 128, 128, 3)).astype(np.float32)
    np.save(os.path.join(work, SAMPLE), sample)


def convert(onnx2tf: str, model: str, work: str, dest: str) -> None:
    """Convert ``model`` with onnx2tf in ``work`` (holding :func:`sample_images`) and copy its float32 .tflite to
    ``dest``; print what happened.  onnx2tf is given a copy: it writes its simplified model over its input."""
    name = os.path.basename(model)[:-5]
    source = os.path.join(work, f"{name}.onnx")
    shutil.copyfile(model, source)
    out = os.path.join(work, name)
    done = subprocess.run([onnx2tf, "-i", source, "-o", out, "-n"], cwd=work,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    made = os.path.join(out, f"{name}_float32.tflite")
    if done.returncode == 0 and os.path.isfile(made):
        shutil.copyfile(made, dest)
        print(f"{name}: converted")
    else:
        print(f"{name}: onnx2tf failed (exit {done.returncode})")


def main(onnx2tf: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        sample_images(work)
        for name in sorted(os.listdir(CORPUS)):
            if name.endswith(".onnx"):
                convert(onnx2tf, os.path.join(CORPUS, name), work, os.path.join(HERE, f"{name[:-5]}.tflite"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "onnx2tf")
