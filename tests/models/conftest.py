"""Fixtures shared by the model tests (lint, rewrite)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def saved(tmp_path):
    """A small model (Add of an input (1,2,3,4) and a (3,4) initializer) saved as m.onnx in tmp_path."""
    from support.onnx_models import model, onnx  # onnx is optional: only the tests that use the fixture need it

    m = model([("Add", ["x", "w"], ["c"])], {"x": [1, 2, 3, 4]}, ["c"], inits={"w": np.ones((3, 4), np.float32)})
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    return path
