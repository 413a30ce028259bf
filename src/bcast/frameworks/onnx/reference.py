"""Oracle: one ONNX node in onnx's ``onnx.reference.ReferenceEvaluator``.

The same one-node model as :mod:`bcast.frameworks.onnx.onnxruntime`, evaluators cached
the same way.  The evaluator is numpy underneath: whatever it raises (numpy's
broadcasting errors, its own checks) is a refusal,
:class:`~bcast.frameworks._oracle.RuntimeRefused`.

>>> import numpy as np
>>> run("Add", [np.ones((2, 1), np.float32), np.ones(3, np.float32)])[0].shape  # doctest: +SKIP
(2, 3)
"""

from __future__ import annotations

import warnings

import numpy as np

from .._oracle import RuntimeRefused
from ._model import as_inputs, cached, feed_names, make_model, model_key

__all__ = ["run", "run_model", "RuntimeRefused"]

RUNTIME = "reference"


def _load(model):
    from ...core._require import require

    ReferenceEvaluator = require("onnx.reference", "the ReferenceEvaluator oracle").ReferenceEvaluator

    try:
        return ReferenceEvaluator(model)
    except Exception as e:  # noqa: BLE001 - every load failure is a refusal
        return RuntimeRefused(RUNTIME, " ".join(str(e).split()))


@cached
def _evaluator(op, dtypes, opset, attrs):
    return _load(make_model(op, dtypes, opset=opset, attrs=dict(attrs)))


def _run(ev, feeds: dict) -> list:
    if isinstance(ev, RuntimeRefused):
        raise ev
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's overflow and divide warnings
            outs = ev.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - numpy's and the evaluator's errors are its refusals
        cause = e.__cause__ or e
        raise RuntimeRefused(RUNTIME, " ".join(f"{e} {'' if cause is e else cause}".split())) from None
    # ONNX outputs are tensors: a numpy scalar (what the evaluator gives for some rank-0 results) is
    # returned as an array of shape ()
    return [np.asarray(o) if isinstance(o, np.generic) else o for o in outs]


def run_model(model, feeds: dict) -> list:
    """Run a whole model on ``feeds``: its outputs, or ``RuntimeRefused``.  Not cached."""
    return _run(_load(model), feeds)


def run(op: str, inputs, *, opset: int | None = None, **attrs) -> list:
    """Run ``op`` on ``inputs`` in the ReferenceEvaluator.

    ``opset=None``: the newest opset onnx defines.  Returns the list of
    outputs; raises ``RuntimeRefused`` where the evaluator fails.
    """
    import onnx

    arrays = as_inputs(inputs)
    opset = onnx.defs.onnx_opset_version() if opset is None else opset
    return _run(_evaluator(*model_key(op, arrays, opset, attrs)), dict(zip(feed_names(len(arrays)), arrays)))
