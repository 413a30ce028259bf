"""``bcast lint model.tflite``: every broadcasting operator of a TFLite flatbuffer, checked by TFLite's rules.

The file is read as the flatbuffer it claims to be (schema.fbs: ``Model.subgraphs``, ``SubGraph.tensors``
and ``operators``, ``Tensor.shape`` / ``shape_signature``, ``Operator.opcode_index`` / ``inputs``,
``OperatorCode.builtin_code``), with every offset checked to stay inside the file: a damaged or hostile
file is one line, never a read past its end.  The file is mapped, not read: its weights are never
copied.  No TensorFlow or LiteRT is needed.

Each operator whose builtin is one of ``bcast.tflite``'s ops (ADD, SUB, MUL, DIV, POW, MAXIMUM,
MINIMUM, the comparisons, the logical ops, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE, SELECT, SELECT_V2,
BROADCAST_TO) gets the plan of its kernel's rule (:func:`bcast.frameworks.tflite.ops.plan`) on its
input tensors' shapes (``shape_signature``'s -1 is an unknown dim; BROADCAST_TO's target is its
output's shape), and is reported when:

=========== ==================================================================
unknown     an input tensor's rank is not known
invalid     the shapes do not broadcast under the kernel's rule: LiteRT refuses the model when it
            allocates its tensors
unsupported they broadcast, but a TFLite deviation record says the interpreter dies on them
            (``tflite-rank-abort``: past rank 8)
differs     a TFLite deviation record says the kernel computes something else on them
=========== ==================================================================

The only target is ``tflite``.  The proof (tests/models/test_lint_tflite_file.py): the 103 models onnx2tf
1.29.24 wrote from the conversion corpus, every one of which LiteRT runs (no finding of kind invalid
or unsupported on any), and models edited so that LiteRT refuses them (each flagged).
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from typing import Any

from ..core.dims import UNKNOWN
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..frameworks.deviations import notes_for
from ..frameworks.tflite.deviations import TFLiteRuntime
from ..frameworks.tflite.oracle import OP_CODES
from ..frameworks.tflite.ops import OPS, plan as tflite_plan
from ._files import open_regular
from .findings import Finding, Report

__all__ = ["TARGET", "TFLiteReport", "lint_tflite", "lint_tflite_report"]

TARGET = "tflite"
#: The largest file read (a flatbuffer's offsets are 32-bit: 2 GiB is its own limit).
MAX_BYTES = 2**31
#: At most this many tensors, operators, dims in one file (a vector longer than the file is refused too).
MAX_ITEMS = 10_000_000
_NAMES = {code: name for name, code in OP_CODES.items() if name in OPS}


class _Buffer:
    """Bounds-checked reads of a flatbuffer (little-endian)."""

    def __init__(self, data: Any, path: str) -> None:
        self.data, self.size, self.path = data, len(data), path

    def bad(self, what: str) -> InputError:
        return InputError(f"{self.path}: not a valid TFLite model ({what})")

    def u32(self, at: int) -> int:
        if at < 0 or at + 4 > self.size:
            raise self.bad(f"an offset past the end of the file at byte {at}")
        return struct.unpack_from("<I", self.data, at)[0]

    def i32(self, at: int) -> int:
        value = self.u32(at)
        return value - (1 << 32) if value >= 1 << 31 else value

    def u16(self, at: int) -> int:
        if at < 0 or at + 2 > self.size:
            raise self.bad(f"a vtable past the end of the file at byte {at}")
        return struct.unpack_from("<H", self.data, at)[0]

    def field(self, table: int, index: int) -> int | None:
        """The position of field ``index`` of the table at ``table``, or None where it is absent."""
        vtable = table - self.i32(table)
        length = self.u16(vtable)
        slot = 4 + 2 * index
        if slot + 2 > length:
            return None
        off = self.u16(vtable + slot)
        return table + off if off else None

    def table(self, table: int, index: int) -> int | None:
        at = self.field(table, index)
        return None if at is None else at + self.u32(at)

    def vector(self, table: int, index: int) -> tuple[int, int]:
        """(start of the elements, count) of vector field ``index``; (0, 0) where absent."""
        at = self.field(table, index)
        if at is None:
            return 0, 0
        start = at + self.u32(at)
        n = self.u32(start)
        if n > MAX_ITEMS or start + 4 + 4 * n > self.size:
            raise self.bad(f"a vector of {n} entries at byte {start}, past the end of the file")
        return start + 4, n

    def ints(self, table: int, index: int) -> list[int] | None:
        """The int vector field ``index``; None where absent."""
        if self.field(table, index) is None:
            return None
        start, n = self.vector(table, index)
        return [self.i32(start + 4 * k) for k in range(n)]

    def tables(self, table: int, index: int) -> list[int]:
        start, n = self.vector(table, index)
        return [start + 4 * k + self.u32(start + 4 * k) for k in range(n)]

    def scalar(self, table: int, index: int, fmt: str, default: int) -> int:
        at = self.field(table, index)
        if at is None:
            return default
        if at + struct.calcsize(fmt) > self.size:
            raise self.bad(f"a field past the end of the file at byte {at}")
        return int(struct.unpack_from("<" + fmt, self.data, at)[0])

    def string(self, table: int, index: int) -> str:
        at = self.field(table, index)
        if at is None:
            return ""
        start = at + self.u32(at)
        n = self.u32(start)
        if start + 4 + n > self.size:
            raise self.bad(f"a string past the end of the file at byte {start}")
        return bytes(self.data[start + 4:start + 4 + min(n, 200)]).decode("utf-8", "replace")


@dataclass
class _Op:
    label: str
    name: str
    inputs: tuple[str, ...]
    shapes: tuple
    output: str
    out_shape: tuple | None


def _map(path: str) -> Any:
    """The file mapped read-only (a regular file, refused before reading otherwise)."""
    fd, info = open_regular(path)
    try:
        if info.st_size > MAX_BYTES:
            raise InputError(f"{path}: larger than 2 GiB: not a TFLite model bcast reads")
        if info.st_size < 8:
            raise InputError(f"{path}: not a valid TFLite model ({info.st_size} bytes)")
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)


def _tensor_shape(buf: _Buffer, tensor: int) -> tuple | None:
    signature = buf.ints(tensor, 7)  # shape_signature: -1 for a dynamic dim
    shape = buf.ints(tensor, 0)
    if signature is not None and shape is not None and len(signature) == len(shape):
        dims = tuple(UNKNOWN if s < 0 else d for s, d in zip(signature, shape))
    elif shape is not None:
        dims = tuple(shape)
    else:
        return None  # (no shape: an unranked tensor)
    if any(type(d) is int and d < 0 for d in dims):
        raise buf.bad(f"a tensor of shape {dims}")
    return dims


def read_ops(path: str) -> tuple[int, int, list[_Op]]:
    """(the schema version, the operator count, the broadcasting operators) of the model at ``path``."""
    data = _map(os.fspath(path))
    try:
        buf = _Buffer(data, os.fspath(path))
        if bytes(data[4:8]) != b"TFL3":
            raise buf.bad("no TFL3 identifier")
        model = buf.u32(0)
        version = buf.scalar(model, 0, "I", 0)
        codes = []
        for c in buf.tables(model, 1):
            deprecated = buf.scalar(c, 0, "b", 0)
            codes.append(max(deprecated, buf.scalar(c, 3, "i", 0)))
        found, total = [], 0
        for g, sub in enumerate(buf.tables(model, 2)):
            tensors = buf.tables(sub, 0)
            names = [buf.string(t, 3) or f"#{k}" for k, t in enumerate(tensors)]
            for k, op in enumerate(buf.tables(sub, 3)):
                total += 1
                index = buf.scalar(op, 0, "I", 0)
                if index >= len(codes):
                    raise buf.bad(f"operator {k} names operator code {index} of {len(codes)}")
                name = _NAMES.get(codes[index])
                if name is None:
                    continue
                ins = [i for i in (buf.ints(op, 1) or []) if i >= 0]
                outs = [i for i in (buf.ints(op, 2) or []) if i >= 0]
                if any(i >= len(tensors) for i in ins + outs):
                    raise buf.bad(f"operator {k} reads a tensor past the {len(tensors)} of its subgraph")
                shapes = tuple(_tensor_shape(buf, tensors[i]) for i in ins)
                out_shape = _tensor_shape(buf, tensors[outs[0]]) if outs else None
                if name == "BROADCAST_TO" and len(shapes) == 2:
                    shapes = (shapes[0], out_shape)  # the target: the output's shape
                label = (f"subgraph {g}/" if g else "") + f"{name}_{k}"
                found.append(_Op(label, name, tuple(names[i] for i in ins), shapes,
                                 names[outs[0]] if outs else "", out_shape))
        return version, total, found
    finally:
        data.close()


@dataclass
class TFLiteReport(Report):
    """A :class:`~bcast.models.findings.Report` of a ``.tflite`` model: ``opset`` holds its schema version."""

    def describe(self) -> str:
        return f"TFLite model, schema version {self.opset}"

    def to_dict(self, model: str | None = None) -> dict:
        return {**super().to_dict(model), "format": "tflite"}


def _rows(op: _Op) -> list[tuple]:
    if any(s is None for s in op.shapes):
        return [("unknown", None, "the rank of " + ", ".join(n for n, s in zip(op.inputs, op.shapes) if s is None)
                 + " is not known: the operator cannot be checked", "give the tensors static ranks", ())]
    try:
        result: Plan | BroadcastError = tflite_plan(op.name, *op.shapes)
    except BroadcastError as e:
        result = e
    except InputError as e:
        return [("invalid", None, str(e), "fix the operator's inputs", ())]
    notes = tuple(n for n in notes_for(result, op.name) if n.deviation.runtime in tuple(TFLiteRuntime))
    if isinstance(result, BroadcastError):
        dies = [n for n in notes if n.deviation.kills_process]
        if dies:
            return [("unsupported", result.rule, f"{result} (the interpreter dies on it)",
                     "reshape around the operator so that no input exceeds the kernel's rank limit", notes)]
        return [("invalid", result.rule, str(result), "change the shapes so that they broadcast under the "
                 "kernel's rule (LiteRT refuses the model when it allocates its tensors)", notes)]
    if result.constraints:
        need = "; ".join(str(c) for c in result.constraints)
        return [("unproven", result.rule, f"the shapes broadcast only if {need}", "give the dims static sizes",
                 notes)]
    differs = [n for n in notes if n.deviation.check is not None]
    if differs:
        return [("differs", result.rule, "; ".join(n.note for n in differs), "see the deviation record", notes)]
    return []


def lint_tflite_report(model: Any, target: str = TARGET) -> TFLiteReport:
    """Lint the ``.tflite`` model at ``model``."""
    if target != TARGET:
        raise InputError(f"a .tflite model is linted for target {TARGET} only (it is already TFLite's model); got "
                         f"target {target!r}")
    version, total, ops = read_ops(os.fspath(model))
    report = TFLiteReport(TARGET, version, total, 0)
    for op in ops:
        report.checked += 1
        for kind, rule, reason, fix, notes in _rows(op):
            report.findings.append(Finding(op.label, op.name, version, op.inputs, op.shapes, op.output,
                                           op.out_shape, kind, TARGET, rule, reason, fix, notes, (op.label,)))
    return report


def lint_tflite(model: Any, target: str = TARGET) -> list[Finding]:
    """The findings of :func:`lint_tflite_report`: empty when every broadcasting operator is fine."""
    return lint_tflite_report(model, target).findings
