"""Oracle: one ONNX node in an onnxruntime session (CPU, one thread).

Sessions are cached by (op, input dtypes, opset, attributes); the inputs are
declared without shapes, so one session runs every shape.  Whatever
onnxruntime refuses -- at load (an opset it does not know, a type it has no
kernel for) or at run (shapes that do not broadcast) -- is raised as
:class:`~bcast.frameworks._oracle.RuntimeRefused`.

>>> import numpy as np
>>> run("Add", [np.ones((2, 1), np.float32), np.ones(3, np.float32)])[0].shape  # doctest: +SKIP
(2, 3)
"""

from __future__ import annotations

from functools import lru_cache

from .._oracle import RuntimeRefused
from ._model import as_inputs, cached, feed_names, make_model, model_key

__all__ = ["run", "run_model", "RuntimeRefused", "max_opset"]

RUNTIME = "onnxruntime"


def _ort():
    from ...core._require import require

    onnxruntime = require("onnxruntime", "the onnxruntime oracle")

    onnxruntime.set_default_logger_severity(4)
    return onnxruntime


def _session(model):
    ort = _ort()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 4
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


@lru_cache(maxsize=1)
def max_opset() -> int:
    """The newest ai.onnx opset this onnxruntime loads (it refuses opsets still under development)."""
    import onnx

    _ort()  # not installed: that error, not a refusal at every opset
    for opset in range(onnx.defs.onnx_opset_version(), 0, -1):
        try:
            _session(make_model("Identity", ["float32"], opset=opset))
            return opset
        except Exception:  # noqa: BLE001 - any refusal: try an older opset
            continue
    raise RuntimeRefused(RUNTIME, "loads no opset at all")  # pragma: no cover


@cached
def _cached_session(op, dtypes, opset, attrs):
    _ort()  # not installed: that error, not a refusal
    try:
        return _session(make_model(op, dtypes, opset=opset, attrs=dict(attrs)))
    except Exception as e:  # noqa: BLE001 - every load failure is a refusal
        return RuntimeRefused(RUNTIME, _text(e))


def _text(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _run(sess, feeds: dict) -> list:
    try:
        return list(sess.run(None, feeds))
    except Exception as e:  # noqa: BLE001 - onnxruntime's own errors, and feeds it cannot take
        raise RuntimeRefused(RUNTIME, _text(e)) from None


def run_model(model, feeds: dict) -> list:
    """Run a whole model (a ``ModelProto``, e.g. from
    :func:`~bcast.frameworks.onnx._model.make_model` with declared shapes) on
    ``feeds``; its outputs, or ``RuntimeRefused``.  Not cached."""
    _ort()  # not installed: that error, not a refusal
    try:
        sess = _session(model)
    except Exception as e:  # noqa: BLE001 - every load failure is a refusal
        raise RuntimeRefused(RUNTIME, _text(e)) from None
    return _run(sess, feeds)


def run(op: str, inputs, *, opset: int | None = None, **attrs) -> list:
    """Run ``op`` on ``inputs`` (numpy arrays, in ONNX's order) in onnxruntime.

    ``opset=None``: the newest opset onnxruntime loads (:func:`max_opset`).
    Returns the list of outputs; raises ``RuntimeRefused`` where onnxruntime
    refuses to load or to run the node.
    """
    arrays = as_inputs(inputs)
    opset = max_opset() if opset is None else opset
    key = model_key(op, arrays, opset, attrs)
    sess = _cached_session(*key)
    if isinstance(sess, RuntimeRefused):
        raise sess
    return _run(sess, dict(zip(feed_names(len(arrays)), arrays)))
