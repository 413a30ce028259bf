"""Lint findings of kind ``values``: a node the target runs through a value deviation of the registry.

The registry's records whose ``check`` is None (:mod:`bcast.frameworks.deviations`) are about
values, not shapes: a runtime's kernel that computes something else on some inputs
(ncnn's POW on a negative base, ``ncnn-fast-math``; OpenVINO's saturating int8
arithmetic; onnxruntime's Where that loses the sign of -0.0...).  No shape predicts
them, so lint cannot say that a node computes wrong values, only that the model
routes it through such a kernel: one ``values`` finding per node and record, with
the record's condition and behaviour, when the record's runtime is the one the
target runs (onnxruntime for ``onnx``; ncnn for ``onnx2ncnn``; OpenVINO for
``openvino``), its ``only_ops`` name the op the target runs the node as, and the
node's element types are among those the record concerns (:data:`ELEMENT_TYPES`;
a record not listed there concerns every type).

Records are read through their public fields only (``id``, ``runtime``,
``only_ops``, ``check``, ``condition``, ``behaviour``).
"""

from __future__ import annotations

from onnx import TensorProto as T

from collections.abc import Callable

from ..frameworks.deviations import DEVIATIONS, Deviation, Note
from .target import Row

__all__ = ["ELEMENT_TYPES", "value_rows"]

_FLOATS = frozenset({T.FLOAT, T.DOUBLE, T.FLOAT16, T.BFLOAT16})
_INTS = frozenset({T.INT8, T.UINT8, T.INT16, T.UINT16, T.INT32, T.UINT32, T.INT64, T.UINT64})

#: record id -> whether it concerns a node whose input element types are ``types`` (onnx TensorProto codes;
#: 0 where not known, which concerns every record, as bcast cannot tell).
ELEMENT_TYPES = {
    "openvino-cpu-integer-values": lambda types: not types[0] or types[0] in _INTS,
    "openvino-cpu-minmax-nan": lambda types: not types[0] or types[0] in _FLOATS,
    "openvino-prelu-element-types": lambda types: (len(types) > 1 and types[0] and types[1]
                                                   and (types[0] != types[1] or types[0] not in _FLOATS)),
    "onnxruntime-where-negative-zero": lambda types: (len(types) < 2 or not types[1]
                                                      or types[1] in (T.FLOAT, T.DOUBLE)),
}

_BY_RUNTIME: dict[tuple[str, ...], dict[str, list[Deviation]]] = {}  # runtime prefixes -> {op: [records]}


def _records(prefixes: tuple[str, ...]) -> dict[str, list[Deviation]]:
    found = _BY_RUNTIME.get(prefixes)
    if found is None:
        found = _BY_RUNTIME[prefixes] = {}
        for dev in DEVIATIONS:
            if dev.check is None and dev.runtime.startswith(prefixes):
                for op in dev.only_ops or ("*",):
                    found.setdefault(op, []).append(dev)
    return found


def value_rows(prefixes: tuple[str, ...], op: str | None, types: Callable[[], tuple[int, ...]], onnx_op: str
               ) -> list[Row]:
    """The ``values`` rows for a node that the target runs as ``op`` (None: a kernel the registry does not
    name), with input element types ``types()`` (called only when a record concerns the op), on the
    runtimes whose names start with ``prefixes``."""
    if op is None:
        return []
    table = _records(prefixes)
    records = (*table.get(op, ()), *table.get("*", ()))
    if not records:
        return []
    elem = types()
    rows: list[Row] = []
    for dev in records:
        concerns = ELEMENT_TYPES.get(dev.id)
        if concerns is not None and not concerns(elem):
            continue
        as_op = "" if op == onnx_op else f" as {op}"
        note = f"{dev.runtime} runs {onnx_op}{as_op}: {dev.behaviour}"
        fix = "make sure the inputs avoid what the record's condition says: " + dev.condition
        if op in ("POW", "RPOW"):
            fix = "for x ** 2 or x ** 3 write x * x (* x), which ncnn computes right; else keep the base > 0"
        rows.append(Row("values", None, f"{dev.runtime} runs {onnx_op}{as_op}, whose kernel computes other values "
                        f"than the spec on some inputs ({dev.id}; see the note)", fix, (Note(dev, note),)))
    return rows
