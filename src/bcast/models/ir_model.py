"""OpenVINO IR models (``model.xml`` + ``model.bin``): read safely, their broadcasting nodes with shapes.

:func:`read` reads the ``.xml`` with the standard library's expat, streaming, and refuses, with one
:class:`~bcast.core.errors.InputError` line, what is not a whole IR: a file that is not a regular one
(a FIFO or a device is refused without reading it), an ``.xml`` over :data:`MAX_XML_BYTES` or the
memory budget, more than :data:`MAX_ELEMENTS` XML elements, any DOCTYPE (an IR has none: no entity is
ever expanded), bytes that are not XML, a root that is not ``<net>``, a layer without id or type, an
edge to a layer or port that does not exist, a Const whose bytes lie outside the ``.bin`` (``model.bin``
beside the ``.xml`` unless ``bin`` names it; the ``.bin`` is never read whole: the few constants bcast
needs, Broadcast's target_shape and axes_mapping, are read at their offsets).

Every layer whose type is an op of OpenVINO's op table (:data:`bcast.frameworks.openvino.ops.OPS`:
the element-wise ops with ``auto_broadcast``, Select, PRelu, Broadcast-1/3) is a :class:`Node`, with
its attributes and its input shapes, in the main graph and in the bodies of If (``then_body``,
``else_body``), Loop and TensorIterator (``body``), nested to any depth: its ``path`` is
``("if_6", "then_body", "t")``.  The shapes come from OpenVINO's own reader when the
``openvino`` module is installed (``Core().read_model``: the shapes OpenVINO infers, a dynamic dim an
interval ``lo..hi`` or ``?``, a dynamic rank unknown) -- the ``reader`` says which; without it, or
when OpenVINO refuses the IR (its shape inference fails on a node), from the port dims the ``.xml``
holds (``-1`` is ``?``; a port without dims is a scalar, except a Parameter of shape ``...``, whose
rank is unknown).  numpy is all this module needs.

>>> import io
>>> xml = b'''<net name="m" version="11"><layers>
... <layer id="0" name="x" type="Parameter" version="opset1"><data shape="2,3" element_type="f32"/>
...  <output><port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port></output></layer>
... <layer id="1" name="add" type="Add" version="opset1"><data auto_broadcast="none"/><input>
...  <port id="0" precision="FP32"><dim>2</dim><dim>3</dim></port><port id="1"><dim>3</dim></port></input></layer>
... </layers><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/></edges></net>'''
>>> net = parse(xml, "m.xml")
>>> [(n.name, n.op, n.version, n.shapes, n.attrs) for n in net.nodes]
[('add', 'Add', 1, ((2, 3), (3,)), {'auto_broadcast': 'none'})]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

import numpy as np

from ..core._format import brief
from ..core.dims import MAX_RANK, UNKNOWN, Interval
from ..core.errors import InputError
from ._files import open_regular
from ..frameworks.openvino.ops import OPS

__all__ = ["IR", "Node", "read", "parse", "MAX_XML_BYTES", "MAX_ELEMENTS", "IR_OPS"]

#: The largest ``.xml`` read (the IR of a large network is tens of MiB).
MAX_XML_BYTES = 512 * 2**20
#: The most XML elements an ``.xml`` may hold (each costs ~100 bytes here; a million-layer IR has ~10 million).
MAX_ELEMENTS = 20_000_000
#: The IR's spelling of an op -> the op table's (``PReLU`` is serialized so).
_SPELLING = {"PReLU": "PRelu"}
#: The op names of the op table, by their IR spelling too.
IR_OPS = {**{name: name for name in OPS}, **_SPELLING}
#: The IR's element types (``element_type``) and port precisions -> numpy names.
_ELEMENT = {"f16": "float16", "f32": "float32", "f64": "float64", "boolean": "bool", "u1": "bool", "i8": "int8",
            "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32", "u32": "uint32", "i64": "int64",
            "u64": "uint64", "fp16": "float16", "fp32": "float32", "fp64": "float64", "bool": "bool"}


@dataclass
class Node:
    """One broadcasting layer: its id, name, op (as the op table spells it), opset version, attributes
    (``auto_broadcast``, ``axis``, ``mode``...), input port labels, input shapes (a shape: a tuple of dims,
    None when not even the rank is known), the element type of each input (a numpy name or None), the
    values of its constant integer inputs (input index -> tuple), and its output shape."""

    id: str
    name: str
    op: str
    version: int
    attrs: dict[str, Any]
    inputs: tuple[str, ...]
    shapes: tuple
    types: tuple
    constants: dict[int, tuple] = field(default_factory=dict)
    output: tuple | None = None
    path: tuple[str, ...] = ()  # the labels that lead to it: ("if_6", "then_body", "t") in a body

    @property
    def label(self) -> str:
        return "/".join(self.path or (self.name,))


@dataclass
class IR:
    """A read IR: its files, version, how many layers, its broadcasting :class:`Node` list, and the reader
    whose shapes they hold (``openvino <version>'s read_model``, or the ``.xml``'s port dims and why)."""

    path: str
    bin: str | None
    version: int
    layers: int
    nodes: list[Node]
    reader: str = "xml"
    refused: str = ""  # OpenVINO's first line where its reader refused the IR


# --------------------------------------------------------------------------- files


def _open(path: str, what: str, limit: int) -> tuple[int, int]:
    """A regular file opened without blocking (a FIFO with no writer), checked on the open file: its fd and
    size."""
    from ..run.execute import format_bytes, memory_budget

    fd, info = open_regular(path, " (an IR's weights lie beside its .xml; --bin names them elsewhere)"
                            if what == "weights" else "")
    problem = None
    if info.st_size > limit:
        problem = f"its {format_bytes(info.st_size)} are over the {format_bytes(limit)} bcast reads of an IR's {what}"
    elif what == "xml" and info.st_size > memory_budget():
        problem = (f"its {format_bytes(info.st_size)} are over the memory budget of {format_bytes(memory_budget())} "
                   "(set BCAST_MEMORY_BUDGET or bcast.set_memory_budget to change it)")
    if problem:
        os.close(fd)
        raise InputError(f"{path}: {problem}")
    return fd, info.st_size


def _read_xml(path: str) -> bytes:
    fd, size = _open(path, "xml", MAX_XML_BYTES)
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(size + 1)
        except OSError as e:
            raise InputError(f"{path}: cannot read it ({e.strerror or e})") from None
    if len(data) > size:
        raise InputError(f"{path}: the file grew while bcast read it")
    return data


def bin_path(path: str, bin: str | None = None) -> str:
    """The weights file of the IR ``path``: ``bin``, else ``path`` with ``.bin`` for its extension."""
    return bin if bin is not None else os.path.splitext(path)[0] + ".bin"


# --------------------------------------------------------------------------- the XML, streamed


class _Graph:
    """One graph of the IR: the main one (``path`` empty), or the body of a layer (If's ``then_body`` /
    ``else_body``, Loop's and TensorIterator's ``body``; ``path``: the labels that lead to it)."""

    def __init__(self, path: tuple[str, ...], depth: int) -> None:
        self.path = path
        self.depth = depth  # of its <layers> element
        self.layers: dict[str, dict] = {}
        self.edges: dict[tuple[str, str], tuple[str, str]] = {}  # (to layer, to port) -> (from layer, from port)


class _Net:
    """expat's handlers: every graph's layers (id -> dict), their ports' dims, and its edges."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.elements = 0
        self.stack: list[str] = []
        self.version = 0
        self.graphs: list[_Graph] = []
        self.open: list[_Graph] = []  # the graphs being read, innermost last
        self.layers: list[tuple[dict, int]] = []  # the layers being read (their depth), innermost last
        self.port: list | None = None
        self.text: list[str] = []

    def bad(self, why: str) -> InputError:
        return InputError(f"{self.where}: not an OpenVINO IR ({why})")

    def start(self, tag: str, attrs: dict) -> None:
        self.elements += 1
        if self.elements > MAX_ELEMENTS:
            raise InputError(f"{self.where}: the IR has more than {MAX_ELEMENTS:,} XML elements, the most bcast "
                             "reads (bcast.models.ir_model.MAX_ELEMENTS)")
        parent = self.stack[-1] if self.stack else None
        self.stack.append(tag)
        depth = len(self.stack)
        layer, layer_depth = self.layers[-1] if self.layers else (None, 0)
        graph = self.open[-1] if self.open else None
        if depth == 1:
            if tag != "net":
                raise self.bad(f"its root is <{tag[:40]}>, not <net>")
            self.version = _int(attrs.get("version", "0"), self, "net version")
        elif tag == "layers" and depth == 2:  # the main graph
            self.open.append(_Graph((), depth))
            self.graphs.append(self.open[-1])
        elif tag == "layers" and layer is not None and graph is not None and depth == layer_depth + 2:
            # a body of the innermost layer (<then_body><layers>...)
            self.open.append(_Graph((*graph.path, layer["name"], parent or ""), depth))
            self.graphs.append(self.open[-1])
        elif graph is not None and tag == "layer" and parent == "layers" and depth == graph.depth + 1:
            if "id" not in attrs or "type" not in attrs:
                raise self.bad("a <layer> without id or type")
            if attrs["id"] in graph.layers:
                raise self.bad(f"two layers have id {brief(attrs['id'])}")
            new = {"id": attrs["id"], "name": attrs.get("name", attrs["id"]), "type": attrs["type"],
                   "version": attrs.get("version", ""), "data": {}, "input": {}, "output": {}}
            graph.layers[attrs["id"]] = new
            self.layers.append((new, depth))
        elif layer is not None and depth == layer_depth + 1 and tag == "data":
            layer["data"] = dict(attrs)
        elif layer is not None and depth == layer_depth + 2 and tag == "port" and parent in ("input", "output"):
            self.port = []
            layer[parent][attrs.get("id", "")] = (self.port, attrs.get("precision", ""))
        elif self.port is not None and tag == "dim":
            self.text = []
        elif graph is not None and tag == "edge" and parent == "edges" and depth == graph.depth + 1:
            try:
                graph.edges[(attrs["to-layer"], attrs["to-port"])] = (attrs["from-layer"], attrs["from-port"])
            except KeyError:
                raise self.bad("an <edge> without from-layer, from-port, to-layer or to-port") from None

    def end(self, tag: str) -> None:
        depth = len(self.stack)
        self.stack.pop()
        if tag == "dim" and self.port is not None:
            text = "".join(self.text).strip()
            if len(self.port) >= MAX_RANK:
                raise self.bad(f"a port of more than {MAX_RANK} dims")
            self.port.append(UNKNOWN if text == "-1" else _int(text, self, "dim", low=0))
        elif tag == "port":
            self.port = None
        elif tag == "layer" and self.layers and self.layers[-1][1] == depth:
            self.layers.pop()
        elif len(self.open) > 1 and depth == self.open[-1].depth - 1:  # a body ends (</then_body>)
            self.open.pop()

    def chars(self, text: str) -> None:
        if self.port is not None and self.stack and self.stack[-1] == "dim":
            self.text.append(text)


def _int(text: str, net: _Net, what: str, low: int = -(2**63)) -> int:
    try:
        value = int(text)
    except ValueError:
        raise net.bad(f"{what} {brief(text)} is not an integer") from None
    if not low <= value < 2**63:
        raise net.bad(f"{what} {value} is out of range")
    return value


def _refuse_doctype(*args: Any) -> None:
    raise _Doctype


class _Doctype(Exception):
    pass


def _stream(data: bytes, where: str) -> _Net:
    net = _Net(where)
    parser = expat.ParserCreate()
    parser.buffer_text = True  # a dim's text in one call
    parser.StartDoctypeDeclHandler = _refuse_doctype  # no DTD: no entity is declared, none expanded
    parser.EntityDeclHandler = _refuse_doctype
    parser.StartElementHandler = net.start
    parser.EndElementHandler = net.end
    parser.CharacterDataHandler = net.chars
    try:
        parser.Parse(data, True)
    except _Doctype:
        raise InputError(f"{where}: not an OpenVINO IR (it has a DOCTYPE; an IR has none, and bcast expands no "
                         "entity)") from None
    except expat.ExpatError as e:
        raise InputError(f"{where}: not an OpenVINO IR, or a truncated one (XML: {e})") from None
    if not net.graphs or not net.graphs[0].layers:
        raise net.bad("no <layers>")
    return net


# --------------------------------------------------------------------------- nodes


def _version(text: str) -> int:
    digits = "".join(c for c in text if c.isdigit())
    return int(digits[:4]) if digits else 1


def _attrs(data: dict) -> dict[str, Any]:
    """The attributes that bear on broadcasting, typed: auto_broadcast, Broadcast's mode, FakeQuantize's levels, the
    pdpd axis (``auto_broadcast.auto_broadcast_axis``: OpenVINO's reader reads no other spelling, and takes 0 where
    it is absent -- not the -1 of the op's spec; measured on 2026.4.1)."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if k in ("auto_broadcast", "mode"):
            out[k] = str(v).strip().lower()
        elif k == "levels":  # FakeQuantize's
            try:
                out["levels"] = int(v)
            except ValueError:
                out["levels"] = v
        elif k.endswith(".auto_broadcast_axis") or k.endswith(".axis"):
            try:
                out["axis"] = int(v)
            except ValueError:
                out["axis"] = v
    if "pdpd" in (out.get("auto_broadcast"), out.get("mode")):
        out.setdefault("axis", 0)
    return out


def _const(net: _Net, layer: dict, bin_file: str | None) -> tuple | None:
    """The integer values of a Const layer (Broadcast's target_shape, axes_mapping), read at its offset."""
    data = layer["data"]
    elem = _ELEMENT.get(data.get("element_type", "").lower())
    if elem is None or elem not in ("int32", "int64", "uint32", "uint64", "int8", "uint8", "int16", "uint16"):
        return None
    offset = _int(data.get("offset", "0"), net, "Const offset", low=0)
    size = _int(data.get("size", "0"), net, "Const size", low=0)
    if size > 8 * MAX_RANK:
        return None  # not a shape
    if bin_file is None:
        return None
    fd, total = _open(bin_file, "weights", 2**63 - 1)
    with os.fdopen(fd, "rb") as f:
        if offset + size > total:
            raise InputError(f"{net.where}: Const {brief(layer['name'])} lies outside {bin_file} (offset {offset} + "
                             f"size {size} > {total} bytes)")
        f.seek(offset)
        raw = f.read(size)
    values = np.frombuffer(raw, dtype=np.dtype(elem).newbyteorder("<"), count=size // np.dtype(elem).itemsize)
    return tuple(int(v) for v in values)


def parse(data: bytes, where: str, bin_file: str | None = None) -> IR:
    """The IR in ``data`` (the ``.xml``'s bytes), shapes from its port dims (see the module docstring)."""
    net = _stream(data, where)
    nodes = []
    for graph in net.graphs:
        nodes += _nodes(net, graph, bin_file)
    return IR(where, bin_file, net.version, sum(len(g.layers) for g in net.graphs), nodes, "xml")


def _nodes(net: _Net, graph: _Graph, bin_file: str | None) -> list[Node]:
    """The broadcasting nodes of one graph, its edges checked."""
    for (to, _), (src, out) in graph.edges.items():
        if to not in graph.layers or src not in graph.layers or out not in graph.layers[src]["output"]:
            raise net.bad(f"an edge from layer {brief(src)} port {brief(out)} to layer {brief(to)}: no such layer "
                          "or port")
    nodes = []
    for lid, layer in graph.layers.items():
        op = IR_OPS.get(layer["type"])
        if op is None:
            continue
        ports = sorted(layer["input"].items(), key=lambda kv: _int(kv[0], net, "port id") if kv[0] else 0)
        names, shapes, types = [], [], []
        constants: dict[int, tuple] = {}
        for i, (pid, (dims, precision)) in enumerate(ports):
            edge = graph.edges.get((lid, pid))
            source = graph.layers[edge[0]] if edge else None
            names.append(f"{source['name']}" if source else f"{layer['name']}:{pid}")
            shape: tuple | None = tuple(dims)
            if source is not None and source["type"] == "Parameter" and source["data"].get("shape") == "...":
                shape = None  # a dynamic rank: the port has no dims, as a scalar's
            shapes.append(shape)
            types.append(_ELEMENT.get(precision.lower()))
            if op == "Broadcast" and i > 0 and source is not None and source["type"] == "Const":
                values = _const(net, source, bin_file)
                if values is not None:
                    constants[i] = values
        outs = list(layer["output"].values())
        nodes.append(Node(lid, layer["name"], op, _version(layer["version"]), _attrs(layer["data"]), tuple(names),
                          tuple(shapes), tuple(types), constants, tuple(outs[0][0]) if outs else None,
                          (*graph.path, layer["name"])))
    return nodes


def _check_bin(net_data: bytes, bin_file: str) -> str | None:
    """The weights file, checked (a regular file), or None where the IR holds no Const with bytes."""
    if b'type="Const"' not in net_data:
        return None
    os.close(_open(bin_file, "weights", 2**63 - 1)[0])
    return bin_file


# --------------------------------------------------------------------------- OpenVINO's reader


def _ov_dim(d: Any):
    if d.is_static:
        return d.get_length()
    hi = d.get_max_length()
    lo = d.get_min_length()
    return UNKNOWN if lo <= 0 and hi < 0 else Interval(max(lo, 0), None if hi < 0 else hi)


def _ov_shape(ps: Any) -> tuple | None:
    if ps.rank.is_dynamic:
        return None
    return tuple(_ov_dim(d) for d in ps)


def _with_openvino(ir: IR, xml: str, bin_file: str | None) -> IR:
    """The same nodes, their shapes and constants as OpenVINO's reader has them; ``ir`` as it is (its reader
    saying why) where openvino is not installed or refuses the IR."""
    try:
        import openvino as ov
    except ImportError:
        ir.reader = "the .xml's port dims (the openvino module is not installed)"
        return ir
    try:
        model = ov.Core().read_model(xml, bin_file) if bin_file else ov.Core().read_model(xml)
    except Exception as e:  # RuntimeError mostly: OpenVINO's shape inference refuses a node
        # its last line says what failed ("Argument shapes are inconsistent."), the others where
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        first = lines[-1] if lines else type(e).__name__
        ir.reader = f"the .xml's port dims (openvino refused the IR: {first[:300]})"
        ir.refused = first[:300]
        return ir
    by_path = {n.path: n for n in ir.nodes}
    for path, op in _ov_ops(model, ()):
        node = by_path.get(path)
        if node is None:
            continue
        node.attrs = _attrs(op.get_attributes())
        node.shapes = tuple(_ov_shape(op.input(i).get_partial_shape()) for i in range(op.get_input_size()))
        node.types = tuple(_ov_type(op.input(i).get_element_type()) for i in range(op.get_input_size()))
        node.output = _ov_shape(op.output(0).get_partial_shape()) if op.get_output_size() else None
        if node.op == "Broadcast":
            node.constants = {}
            for i in range(1, op.get_input_size()):
                source = op.input_value(i).get_node()
                if source.get_type_name() == "Constant":
                    node.constants[i] = tuple(int(v) for v in source.get_data().ravel())
    ir.reader = f"openvino {ov.__version__.split('-')[0]}'s read_model"
    return ir


def _ov_ops(model: Any, prefix: tuple[str, ...]):
    """``(path, op)`` of every op of an OpenVINO model, the bodies of If, Loop and TensorIterator included (paths
    as the ``.xml`` names them: ``("if_6", "then_body", "t")``)."""
    for op in model.get_ordered_ops():
        name = op.get_friendly_name()
        yield (*prefix, name), op
        if op.get_type_name() == "If":
            yield from _ov_ops(op.get_then_body(), (*prefix, name, "then_body"))
            yield from _ov_ops(op.get_else_body(), (*prefix, name, "else_body"))
        elif op.get_type_name() in ("Loop", "TensorIterator"):
            yield from _ov_ops(op.get_function(), (*prefix, name, "body"))


def _ov_type(t: Any) -> str | None:
    return _ELEMENT.get(str(t.get_type_name()).lower())


def read(path: Any, bin: Any = None, reader: str = "auto") -> IR:
    """The IR at ``path`` (its weights at ``bin``, default beside it), checked (see the module docstring).
    ``reader``: ``auto`` (OpenVINO's where installed), ``xml`` (the port dims, always)."""
    if reader not in ("auto", "xml"):
        raise InputError(f"reader must be 'auto' or 'xml', got {brief(reader)}")
    try:
        xml = os.fspath(path)
        weights = None if bin is None else os.fspath(bin)
    except TypeError:
        raise InputError(f"the IR must be a path, got {brief(path)}") from None
    data = _read_xml(xml)
    bin_file = _check_bin(data, bin_path(xml, weights))
    ir = parse(data, xml, bin_file)
    ir.bin = bin_file
    if reader == "auto":
        ir = _with_openvino(ir, xml, bin_file)
    else:
        ir.reader = "the .xml's port dims (as asked)"
    return ir
