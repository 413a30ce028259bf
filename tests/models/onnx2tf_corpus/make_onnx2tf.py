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


def main(onnx2tf: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        sample = np.random.default_rng(0).uniform(0, 1, (20, 128, 128, 3)).astype(np.float32)
        np.save(os.path.join(work, SAMPLE), sample)
        for name in sorted(os.listdir(CORPUS)):
            if not name.endswith(".onnx"):
                continue
            stem = name[:-5]
            out = os.path.join(work, stem)
            source = os.path.join(work, name)  # a copy: onnx2tf writes its simplified model over its input
            shutil.copyfile(os.path.join(CORPUS, name), source)
            done = subprocess.run([onnx2tf, "-i", source, "-o", out, "-n"], cwd=work,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            made = os.path.join(out, f"{stem}_float32.tflite")
            if done.returncode == 0 and os.path.isfile(made):
                shutil.copyfile(made, os.path.join(HERE, f"{stem}.tflite"))
                print(f"{stem}: converted")
            else:
                print(f"{stem}: onnx2tf failed (exit {done.returncode})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "onnx2tf")
