"""Regenerate the ncnn models of tests/models/test_lint_param.py with pnnx (``pip install pnnx torch``).

Each small torch module below broadcasts as real networks do; pnnx converts it (TorchScript -> its own
graph -> ncnn) and this script keeps the ``.ncnn.param``/``.ncnn.bin`` pair as ``<name>.param``/``<name>.bin``
in tests/models/ncnn_param/.  Run from anywhere: ``python tests/support/make_ncnn_params.py [NAME...]``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import torch

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models", "ncnn_param")


class SE(torch.nn.Module):  # squeeze-and-excitation: a (C,1,1) channel scale
    def forward(self, x, s):
        return x * s


class AttentionMask(torch.nn.Module):  # scores (heads,q,k) + mask (1,q,k)
    def forward(self, scores, mask):
        return scores + mask


class Bias(torch.nn.Module):  # a bias over the last axis, a constant (MemoryData)
    def __init__(self, n):
        super().__init__()
        self.b = torch.nn.Parameter(torch.arange(n, dtype=torch.float32))

    def forward(self, x):
        return x + self.b


class Outer(torch.nn.Module):  # (C,1,1) vs (1,H,W): both sides broadcast
    def forward(self, a, b):
        return a - b


class Batch(torch.nn.Module):  # a broadcast across the batch axis
    def forward(self, x, y):
        return x * y


class RowScale(torch.nn.Module):  # (N,C) * (C,) with N == C: the 1-D tie
    def forward(self, x, y):
        return x * y


#: name -> (module, example inputs): the inputs' shapes are those pnnx traces with
MODELS = {
    "se": (SE(), (torch.rand(1, 3, 4, 5), torch.rand(1, 3, 1, 1))),
    "attention_mask": (AttentionMask(), (torch.rand(1, 2, 4, 4), torch.rand(1, 1, 4, 4))),
    "bias": (Bias(5), (torch.rand(1, 3, 4, 5),)),
    "bias_tie": (Bias(4), (torch.rand(1, 4, 4),)),
    "outer": (Outer(), (torch.rand(1, 3, 1, 1), torch.rand(1, 1, 4, 5))),
    "batch": (Batch(), (torch.rand(2, 3, 4), torch.rand(1, 3, 4))),
    "batch_both": (Batch(), (torch.rand(2, 1, 4), torch.rand(1, 3, 4))),
    "row_scale": (RowScale(), (torch.rand(3, 3), torch.rand(3))),
}


def main(names=None) -> None:
    import pnnx

    for name in names or MODELS:
        module, inputs = MODELS[name]
        with tempfile.TemporaryDirectory() as tmp:
            pt = os.path.join(tmp, f"{name}.pt")
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                pnnx.export(module.eval(), pt, inputs)
            finally:
                os.chdir(cwd)
            for ext in ("param", "bin"):
                shutil.copyfile(os.path.join(tmp, f"{name}.ncnn.{ext}"), os.path.join(HERE, f"{name}.{ext}"))


if __name__ == "__main__":
    main(sys.argv[1:])
