"""What a serialized ONNX model would cost to parse, read from its bytes before parsing.

Parsing a protobuf costs memory for every field it holds, and lint costs more
for each (onnx's shape inference copies the model into C++ objects; Python
reads names and shapes): a file of 4 million tiny initializers (83 MiB) took
4.4-5.1 GB through lint, a million value_info entries of 60 dims each took
9.9 GB.  :func:`count` walks the bytes with onnx's own schema (the protobuf
descriptors of ``onnx.ModelProto`` and every message in it) and counts every
field occurrence in every message, subgraphs and functions included: nodes,
initializers, sparse initializers, inputs, outputs, value_info, their dims,
attributes and their ints/floats/strings, opset imports, metadata... A message
of single numbers and strings only (a dim, an opset import, a metadata entry)
counts one, as the field that holds it, without walking it.  A repeated
number that is not declared packed but is written packed (a hostile encoding
of ``dims`` or ``ints``) counts one per number.  The payload of bytes, strings
and declared-packed tensor data counts once: its memory is its size, and the
file's size is already bounded (protobuf's 2 GiB, the memory budget).

The walk stops as soon as a limit is passed: it costs at most the limit's
worth of fields (~0.3 us each), whatever the file holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: wire type -> bytes of a fixed-size field
_FIXED = {1: 8, 5: 4}
_VARINT_TYPES = frozenset((3, 4, 5, 8, 13, 14, 17, 18))  # int64, uint64, int32, bool, uint32, enum, sint32, sint64


@dataclass
class Counts:
    """What :func:`count` found: ``entries`` (every field occurrence), ``nodes`` (NodeProtos
    anywhere), ``by_field`` (entries per repeated ``Message.field`` of onnx's schema), and
    ``over`` (a limit was passed: the walk stopped there)."""

    entries: int = 0
    nodes: int = 0
    over: bool = False
    by_field: dict = field(default_factory=dict)

    def largest(self, k: int = 3) -> list:
        """The ``k`` fields with the most entries: ``[(Message.field, count), ...]``, most first."""
        return sorted(self.by_field.items(), key=lambda kv: (-kv[1], kv[0]))[:k]


_SCHEMA: dict = {}


def _schema(desc) -> dict:
    """``{field number: (child's full name or None, varint not declared packed, label)}`` of a message type,
    for it and every message type reachable from it (built once, from onnx's descriptors)."""
    if desc.full_name not in _SCHEMA:
        stack = [desc]
        while stack:
            d = stack.pop()
            if d.full_name in _SCHEMA:
                continue
            fields = {}
            for f in d.fields:
                unpacked_varint = f.is_repeated and not f.is_packed and f.type in _VARINT_TYPES
                label = f"{d.name}.{f.name}" if f.is_repeated else None  # by_field: repeated fields
                m = f.message_type
                # a leaf message (only single numbers and strings: a dim, an opset import, a metadata entry)
                # costs what one field does: counted as one, not walked
                leaf = m is not None and not any(c.message_type is not None or c.is_repeated for c in m.fields)
                child = m.full_name if m is not None and not leaf else None
                fields[f.number] = (child, unpacked_varint, label)
                if child is not None:
                    stack.append(m)
            _SCHEMA[d.full_name] = (d, fields)
    return _SCHEMA


def count(data: bytes, desc, *, max_entries: int, max_nodes: int, node_type: str = "onnx.NodeProto") -> Counts:
    """Count the fields of the serialized message ``data`` (of type ``desc``), per field
    (``by_field``), and its nodes, stopping once ``max_entries`` or ``max_nodes`` is passed.
    Bytes that are not protobuf end the walk of their message (the parser refuses them
    afterwards).

    >>> import onnx
    >>> from onnx import helper
    >>> g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])] * 3, "g", [], [])
    >>> c = count(helper.make_model(g).SerializeToString(), onnx.ModelProto.DESCRIPTOR,
    ...           max_entries=100, max_nodes=100)
    >>> c.nodes, c.by_field["GraphProto.node"], c.by_field["NodeProto.input"]
    (3, 3, 3)
    """
    schema = _schema(desc)
    result = Counts()
    counts = result.by_field
    entries = nodes = 0
    end_all = len(data)
    # depth first: a message's fields are walked when it is met, its parent's rest waits on the stack
    # (as deep as the nesting, not as long as a list of messages)
    stack: list[tuple] = []
    fields, i, end = schema[desc.full_name][1], 0, end_all
    try:
        while True:
            if i >= end:
                if not stack:
                    break
                fields, i, end = stack.pop()
                continue
            # the tag: a varint, inline (most tags are one byte)
            b = data[i]
            i += 1
            if b < 0x80:
                tag = b
            else:
                tag, shift = b & 0x7F, 7
                while True:
                    b = data[i]
                    i += 1
                    tag |= (b & 0x7F) << shift
                    if b < 0x80:
                        break
                    shift += 7
            wire = tag & 7
            if wire == 0:
                while data[i] >= 0x80:
                    i += 1
                i += 1
                n = 0
            elif wire == 2:
                b = data[i]
                i += 1
                if b < 0x80:
                    n = b
                else:
                    n, shift = b & 0x7F, 7
                    while True:
                        b = data[i]
                        i += 1
                        n |= (b & 0x7F) << shift
                        if b < 0x80:
                            break
                        shift += 7
            elif wire in _FIXED:
                n = _FIXED[wire]
            elif wire == 3 or wire == 4:  # a group's start or end: its fields are walked as this message's
                n = 0
            else:  # not protobuf: the parser refuses it
                break
            entries += 1
            known = fields.get(tag >> 3)
            if known is not None:
                child, unpacked_varint, label = known
                if label is not None:
                    counts[label] = counts.get(label, 0) + 1
                if child is not None and wire == 2:
                    nodes += child == node_type
                    stack.append((fields, i + n, end))
                    fields, end = schema[child][1], min(i + n, end_all)
                    n = 0  # i: the child's first field
                elif unpacked_varint and wire == 2 and n:  # numbers written packed: one entry each
                    more = int(np.count_nonzero(np.frombuffer(data, np.uint8, min(n, end_all - i), i) < 0x80)) - 1
                    entries += more
                    counts[label] += more
            i += n
            if entries > max_entries or nodes > max_nodes:
                result.over = True
                break
    except IndexError:  # truncated: the parser refuses it
        pass
    result.entries, result.nodes = entries, nodes
    return result
