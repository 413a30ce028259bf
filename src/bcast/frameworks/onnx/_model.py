"""What the two ONNX oracles share: the one-node model, the refusal, the cache.

:func:`make_model` builds a model of one node whose inputs are declared with
their element type and no shape, so that one model (and one onnxruntime
session) serves every shape and rank: the runtime's kernels, not ONNX's shape
inference, decide whether the shapes broadcast.  The output is declared
without a type; the runtimes infer it.

A runtime that refuses (at load or at run, whatever the reason) raises
:class:`bcast.frameworks._oracle.RuntimeRefused`, one exception type for every oracle.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any
from collections.abc import Callable

import numpy as np


__all__ = ["make_model", "cached", "elem_type", "feed_names", "model_key", "as_inputs"]


def elem_type(dtype: Any) -> int:
    """The ``TensorProto`` element type of a numpy dtype (object and numpy strings: STRING)."""
    from ...core._require import require

    require("onnx", "the ONNX oracles")
    from onnx import TensorProto, helper

    if isinstance(dtype, str) and dtype == "string":
        return TensorProto.STRING
    dt = np.dtype(dtype)
    if dt.kind in "OUS":
        return TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(dt)


def feed_names(n: int) -> tuple:
    return tuple(f"x{i}" for i in range(n))


def make_model(op: str, dtypes, *, opset: int, attrs: dict | None = None, names=None, shapes=None,
               initializers: dict | None = None):
    """A model of one ``op`` node at ``opset``, its output ``y`` of no declared type.

    The graph inputs are ``names`` (default ``x0, x1, ...``) of ``dtypes``;
    ``shapes`` gives each a declared shape (default: none, so one model runs
    every shape); ``initializers`` (name -> array) are constant inputs that
    follow the graph inputs on the node.  The IR version is the one onnx
    pairs with the opset.

    >>> m = make_model("Add", ["float32", "float32"], opset=14)
    >>> [n.op_type for n in m.graph.node], m.opset_import[0].version, m.ir_version
    (['Add'], 14, 7)
    """
    from ...core._require import require

    require("onnx", "the ONNX oracles")
    from onnx import helper, numpy_helper

    names = feed_names(len(dtypes)) if names is None else tuple(names)
    shapes = [None] * len(names) if shapes is None else list(shapes)
    consts = [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()]
    node = helper.make_node(op, list(names) + [t.name for t in consts], ["y"], **(attrs or {}))
    graph = helper.make_graph(
        [node], f"bcast_{op}",
        [helper.make_tensor_value_info(n, elem_type(t), s) for n, t, s in zip(names, dtypes, shapes)],
        [helper.make_empty_tensor_value_info("y")],
        initializer=consts,
    )
    return helper.make_model_gen_version(graph, opset_imports=[helper.make_opsetid("", opset)])


def model_key(op: str, inputs, opset: int, attrs: dict) -> tuple:
    """A hashable key for one model: op, input dtypes, opset and attributes."""
    dtypes = tuple("string" if np.dtype(x.dtype).kind in "OUS" else str(np.dtype(x.dtype)) for x in inputs)
    return op, dtypes, opset, tuple(sorted(attrs.items()))


def cached(build: Callable) -> Callable:
    """``build(op, dtypes, opset, attrs_items)`` memoized (sessions and evaluators are slow to make)."""
    return lru_cache(maxsize=512)(build)


def as_inputs(inputs) -> list:
    """The inputs as numpy arrays (a numpy scalar becomes an array of shape ())."""
    return [np.asarray(x) for x in inputs]
