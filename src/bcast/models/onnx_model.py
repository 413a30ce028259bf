"""ONNX models: loading them safely, and the shape of every value in them.

:func:`load` reads a model file (or takes a ``ModelProto``) and refuses, with
one :class:`~bcast.core.errors.InputError` line, anything that is not a whole ONNX
model: an unreadable file, bytes that are not a protobuf ``ModelProto``, a
truncated file (no graph, no opset, a node input that nothing defines), an
external-data location that leaves the model's folder (``../x``, an absolute
path, a symlink out), external data over the memory budget, a file of 2 GiB or
more (protobuf's limit), a model of more than :data:`MAX_NODES` nodes or of
more than :data:`MAX_ENTRIES` fields (counted from the bytes: all before the
file is parsed).  A FIFO or a device is refused without reading it.
External data is loaded only after every location has been checked.

:class:`Shapes` is the shape environment lint and rewrite read: onnx's shape
inference, run once on the whole model, for every value; bcast's rules for
the broadcasting ops (the caller stores their output shapes with
:meth:`Shapes.set`); and onnx's per-node inference only for the few nodes
downstream of a shape that bcast knew and onnx did not (opset-1 ops have no
shape inference).  A dim is an int, a :class:`~bcast.core.dims.Sym` for a
``dim_param`` (``?`` when the param is not a name), or ``?`` when missing; a
shape is a tuple, or None when even the rank is not known.

This module imports onnx: ``import bcast`` never imports it.

>>> from onnx import helper, TensorProto
>>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
>>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
>>> g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
>>> shapes = Shapes(load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])))
>>> shapes.get("y")
(Sym('N'), 3)
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Any
from itertools import chain
from operator import attrgetter
import stat

from ..core._format import brief
from ..core.dims import UNKNOWN, Sym
from ._files import open_regular
from ..core.errors import InputError

try:
    import onnx
    from onnx import numpy_helper, shape_inference
except ImportError:  # pragma: no cover - the test extra installs onnx
    from ..core._require import MissingDependency

    raise MissingDependency("reading ONNX models needs onnx: pip install 'bcast[onnx]'") from None

__all__ = ["load", "Shapes", "default_opset", "node_label", "save_atomic", "DEFAULT_DOMAINS", "MAX_NODES",
           "MAX_ENTRIES"]

#: The domains of ONNX's own ops.
DEFAULT_DOMAINS = ("", "ai.onnx")
#: protobuf refuses messages of 2 GiB or more.
_PROTOBUF_LIMIT = 2**31 - 1
#: The most nodes a model may have (its graph, subgraphs and functions together).  Measured: lint of a
#: chain of 1,000,000 Add nodes takes 16-21 s and 1.5-2.2 GB (onnx's shape inference ~1.1 KB a
#: node); a 2 GiB file could hold 80 million nodes.  Counted from the file's bytes before it is
#: parsed (parsing costs ~300 bytes a node).
MAX_NODES = 1_000_000
#: The most fields a model file may hold: every field of every message, nested ones included
#: (initializers, value_info, inputs, outputs, dims, attributes, node inputs, opset imports,
#: metadata...; see :mod:`bcast.models._size`).  Counted from the bytes before parsing.  Measured:
#: lint costs up to ~130 bytes a field (tiny initializers) and ~80 (value_info of many dims); a
#: million nodes of ~10 fields each fit.
MAX_ENTRIES = 10_000_000


# --------------------------------------------------------------------------- loading


def load(model, *, what: str = "model", locations: list | None = None) -> onnx.ModelProto:
    """The model in ``model`` (a path or a ``ModelProto``), checked whole, external data loaded.

    ``locations``: a list that receives the external-data file names the initializers named (loading
    forgets them; a converter that reads them its own way, pnnx, is checked against them).

    Raises :class:`~bcast.core.errors.InputError` with one line naming what is wrong.
    """
    if isinstance(model, onnx.ModelProto):
        # external data only matters where bcast reads it, the initializers (Shapes.constant): a Constant's
        # value is read by onnx's shape inference only, which refuses external data, reading no file
        if _check_structure(model, "the model", external_data=False):
            raise InputError("the model has tensors in external data that are not loaded: pass its path instead")
        return model
    try:
        path = os.fspath(model)
    except TypeError:
        raise InputError(f"{what} must be a path or an onnx.ModelProto, got {brief(model)}") from None
    data = _read(path)
    _check_size(data, path)
    try:
        proto = onnx.ModelProto.FromString(data)
    except Exception:  # protobuf's DecodeError, or worse, for bytes that are not a ModelProto
        raise InputError(f"{path}: not an ONNX model (the file is not a protobuf ModelProto)") from None
    external = _check_structure(proto, path, b"location" in data)  # no such bytes, no external data
    if external:
        if locations is not None:
            locations.extend(sorted({e.value for t in external for e in t.external_data if e.key == "location"}))
        _load_external(external, path)
    return proto


def _read(path: str) -> bytes:
    """The bytes of a regular file under protobuf's limit.  Opened without blocking (a FIFO with no
    writer), then checked on the open file (no race between the check and the read)."""
    fd, info = open_regular(path)
    problem = _unreadable(info)
    if problem:
        os.close(fd)
        raise InputError(f"{path}: {problem}")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(info.st_size + 1)  # read(n) allocates n bytes first: the size, not the limit
        except OSError as e:
            raise InputError(f"{path}: cannot read it ({e.strerror or e})") from None
    if len(data) > info.st_size:
        raise InputError(f"{path}: the file grew while bcast read it")
    return data


def _unreadable(info) -> str | None:
    """Why a file (its ``os.stat``) is not read at all: not a regular file, or too large."""
    from ..run.execute import format_bytes, memory_budget

    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size > _PROTOBUF_LIMIT:
        return "larger than protobuf's 2 GiB limit (weights belong in external data)"
    budget = memory_budget()
    if info.st_size > budget:
        return (f"its {format_bytes(info.st_size)} are over the memory budget of {format_bytes(budget)} "
                "(set BCAST_MEMORY_BUDGET or bcast.set_memory_budget to change it)")
    return None


def _count(data: bytes, *, always: bool = False):
    """The fields and nodes of a serialized ModelProto (:func:`bcast.models._size.count`); not
    counted (zeros) for a file too small to pass a limit, unless ``always``."""
    from ._size import Counts, count

    if not always and len(data) <= min(MAX_ENTRIES, 2 * MAX_NODES):  # a field takes a byte or more, a node 2
        return Counts()
    return count(data, onnx.ModelProto.DESCRIPTOR, max_entries=MAX_ENTRIES, max_nodes=MAX_NODES)


def _count_nodes(data: bytes) -> int:
    """The nodes in a serialized ModelProto, subgraphs and functions included, counted without
    parsing it (a hostile file of tiny nodes costs ~300 bytes a node to parse); stops past
    :data:`MAX_NODES`.

    >>> from onnx import helper
    >>> g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])] * 3, "g", [], [])
    >>> _count_nodes(helper.make_model(g).SerializeToString())
    3
    """
    return _count(data, always=True).nodes


def _check_size(data: bytes, where: str) -> None:
    """Refuse, before parsing, a model of more than :data:`MAX_NODES` nodes or :data:`MAX_ENTRIES`
    fields, naming the field that has the most."""
    found = _count(data)
    _check_nodes(found.nodes, where)
    if found.entries > MAX_ENTRIES:
        most = ", ".join(f"{label} ({n:,})" for label, n in found.largest())
        raise InputError(f"{where}: the model has more than {MAX_ENTRIES:,} fields to parse, the most bcast reads "
                         f"(bcast.models.onnx_model.MAX_ENTRIES); the most: {most}")


def _check_nodes(count: int, where: str) -> None:
    if count > MAX_NODES:
        raise InputError(f"{where}: the model has more than {MAX_NODES:,} nodes, the most bcast reads "
                         "(bcast.models.onnx_model.MAX_NODES)")


def _check_structure(model, where: str, external_data: bool = True) -> list:
    """What a whole model has: a graph with outputs and a default-domain opset.  A truncated
    file lacks one of them, or fails to parse (the graph is one length-prefixed field).  Then
    one walk over every graph (:func:`_scan`).  Returns the tensors whose data are external."""
    if not model.HasField("graph"):
        raise InputError(f"{where}: not an ONNX model, or a truncated one (it has no graph)")
    if default_opset(model) is None:
        raise InputError(f"{where}: no opset_import for the default ONNX domain (a truncated file?)")
    if not model.graph.output:
        raise InputError(f"{where}: the graph has no outputs (a truncated file?)")
    check_text(where, [o.domain for o in model.opset_import])
    return _scan(model, where, external_data)


def _scan(model, where: str, external_data: bool = True) -> list:
    """The tensors with external data in ``model``'s graph, every graph in it (If, Loop, Scan
    bodies...) and its functions, walked once without recursion (protobuf bounds the nesting, this
    walk does not need to), refusing more than :data:`MAX_NODES` nodes in all and a name bcast may
    print that is not UTF-8 text (protobuf hands one back as bytes): every name a value is given
    (node outputs, graph inputs, initializers), ops, domains, node names.  A node input names a
    value: one that is not text names none (lint checks the inputs it prints: :func:`check_text`),
    as a dim_param or an attribute name that is not text matches no name bcast looks for.
    ``str.join`` checks the types in C.
    Graphs and tensors held by attributes are found by each attribute's type, as onnx reads them
    (``onnx.helper.get_attribute_value``), on the nodes whose attributes anyone reads for them:
    the ops that hold a graph or a tensor, and every op outside ONNX's own domains (not the ops
    that hold a tensor when ``external_data`` is false: the model's bytes name no location)."""
    external, stack, count = [], [model.graph, *model.functions], 0
    check_text(where, [s for f in model.functions for s in (f.name, f.domain)])  # paths name a function
    while stack:
        g = stack.pop()
        nodes = g.node
        count += len(nodes)
        _check_nodes(count, where)
        heads = list(map(_HEAD, nodes))  # map and attrgetter: the walk over the nodes runs in C
        texts = [*chain.from_iterable(heads), *chain.from_iterable(map(_OUTPUTS, nodes))]
        holders = _HOLDERS if external_data else _GRAPH_HOLDERS
        for n, (op, domain, _) in zip(nodes, heads):
            if op in holders or domain not in DEFAULT_DOMAINS:
                for a in n.attribute:
                    if a.type in _NESTED:
                        external += _nested(a, stack, where)
        if type(g) is onnx.GraphProto:
            texts += map(_NAME, chain(g.input, g.output, g.value_info, g.initializer))
            external += _external(g.initializer, where)
            for sp in g.sparse_initializer:
                external += _external((sp.values, sp.indices), where)
        check_text(where, texts)
    return external


_A = onnx.AttributeProto
_HEAD, _OUTPUTS, _NAME = attrgetter("op_type", "domain", "name"), attrgetter("output"), attrgetter("name")
#: attribute types that hold graphs or tensors
_NESTED = frozenset((_A.GRAPH, _A.GRAPHS, _A.TENSOR, _A.TENSORS, _A.SPARSE_TENSOR, _A.SPARSE_TENSORS))
#: ONNX's ops with an attribute of those types: graphs, then graphs or tensors
_GRAPH_HOLDERS = frozenset(("If", "Loop", "Scan", "SequenceMap"))
_HOLDERS = _GRAPH_HOLDERS | {"Constant", "ConstantOfShape"}


def _nested(a, graphs: list, where: str) -> list:
    """The graphs of attribute ``a`` go on ``graphs``; returns its tensors with external data."""
    kind = a.type
    if kind in (_A.GRAPH, _A.GRAPHS):
        check_text(where, [a.name])  # a subgraph's finding path names the attribute that holds it
    if kind == _A.GRAPH:
        graphs.append(a.g)
    elif kind == _A.GRAPHS:
        graphs.extend(a.graphs)
    elif kind == _A.TENSOR:
        return _external([a.t], where)
    elif kind == _A.TENSORS:
        return _external(a.tensors, where)
    elif kind == _A.SPARSE_TENSOR:
        return _external([a.sparse_tensor.values, a.sparse_tensor.indices], where)
    else:
        return _external([x for sp in a.sparse_tensors for x in (sp.values, sp.indices)], where)
    return []


def _external(tensors, where: str) -> list:
    """Those of ``tensors`` whose data are in an external file (their locations are text too)."""
    found = [t for t in tensors if t.data_location == onnx.TensorProto.EXTERNAL]
    for t in found:
        check_text(where, [t.name, *(e.value for e in t.external_data)])
    return found


def check_text(where: str, texts: list) -> None:
    """InputError unless every one of ``texts`` (names read from a model) is text, not bytes."""
    try:
        "".join(texts)
    except TypeError:
        bad = next(t for t in texts if type(t) is not str)
        raise InputError(f"{where}: a name or string field is not UTF-8 text ({brief(bad)}): "
                         "ONNX strings must be UTF-8") from None


def _load_external(tensors: list, path: str) -> None:
    """Check every external-data location against the model's folder, then load the data."""
    from ..run.execute import format_bytes, memory_budget

    base = os.path.dirname(os.path.abspath(path))
    total = sum(_check_location(t, base, path) for t in tensors)
    budget = memory_budget()
    if total > budget:
        raise InputError(f"{path}: its external data ({format_bytes(total)}) is over the memory budget of "
                         f"{format_bytes(budget)} (set BCAST_MEMORY_BUDGET or bcast.set_memory_budget to change it)")
    from onnx.external_data_helper import load_external_data_for_tensor

    for t in tensors:
        try:
            load_external_data_for_tensor(t, base)
        except Exception as e:  # onnx's own checks (it refuses symlinks, even inside the folder)
            raise InputError(f"{path}: cannot load the external data of tensor {t.name!r}: "
                             f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        t.data_location = onnx.TensorProto.DEFAULT
        del t.external_data[:]


def _check_location(t, base: str, path: str) -> int:
    """Refuse a location out of ``base`` or not a regular file, or bytes past its end; the bytes to read."""
    info = {e.key: e.value for e in t.external_data}
    loc = info.get("location", "")
    where = f"{path}: tensor {t.name!r} has external data {loc!r}"
    if not loc:
        raise InputError(f"{path}: tensor {t.name!r} is in external data but names no location")
    if "\0" in loc:
        raise InputError(f"{where}: not a file name (it has a NUL character)")
    if os.path.isabs(loc) or loc.startswith(("/", "\\")) or (len(loc) > 1 and loc[1] == ":"):
        raise InputError(f"{where}: an absolute path; external data must lie in the model's folder")
    if ".." in loc.replace("\\", "/").split("/"):
        raise InputError(f"{where}: it leaves the model's folder ('..')")
    real_base = os.path.realpath(base)
    real = os.path.realpath(os.path.join(base, loc))
    if os.path.commonpath([real, real_base]) != real_base:
        raise InputError(f"{where}: a symlink out of the model's folder")
    if not os.path.exists(real):
        raise InputError(f"{where}: no such file in the model's folder")
    if not os.path.isfile(real):
        raise InputError(f"{where}: not a regular file (a folder, a FIFO, a device)")
    try:
        offset, length = int(info.get("offset", 0)), int(info.get("length", -1))
    except ValueError:
        raise InputError(f"{where}: its offset/length are not integers") from None
    size = os.path.getsize(real)
    if offset < 0 or offset > size or (length >= 0 and offset + length > size):
        raise InputError(f"{where}: offset {offset} and length {length} run past the file's {size} bytes")
    return length if length >= 0 else size - offset


def default_opset(model) -> int | None:
    """The model's opset of the default ONNX domain (None if it has none)."""
    for o in model.opset_import:
        if o.domain in DEFAULT_DOMAINS:
            return o.version
    return None


def node_label(node, index: int) -> str:
    """A node's name, or ``#index (op_type)`` for a nameless node.

    >>> from onnx import helper
    >>> node_label(helper.make_node("Add", ["a", "b"], ["c"]), 3)
    '#3 (Add)'
    """
    return node.name or f"#{index} ({node.op_type})"


# --------------------------------------------------------------------------- saving


def save_atomic(model, out, *, source=None, force: bool = False) -> str:
    """Write ``model`` to ``out`` atomically (a temp file in ``out``'s folder, then
    ``os.replace``): a failure leaves nothing behind.  Refuses ``out`` when it is
    ``source`` (also through a symlink), an existing ``out`` unless ``force``, and
    one that is not a regular file (a FIFO, a device) even with ``force``."""
    out = os.fspath(out)
    if "\0" in out:
        raise InputError(f"{out!r}: not a file name (it has a NUL character)")
    if source is not None and _same_file(out, os.fspath(source)):
        raise InputError(f"{out} is the input model: refusing to overwrite it (write to another file)")
    if os.path.isdir(out):
        raise InputError(f"{out} is a folder, not a file")
    if os.path.lexists(out):
        if not force:
            raise InputError(f"{out} exists: refusing to overwrite it (use --force / force=True)")
        mode = os.lstat(out).st_mode  # a symlink is replaced, not what it points to
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise InputError(f"{out} is not a regular file (a FIFO, a device, a socket): refusing to replace it, "
                             "even with --force")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise InputError(f"{out}: folder {folder} does not exist")
    try:
        data = model.SerializeToString()
    except ValueError as e:  # over protobuf's limit
        raise InputError(f"{out}: cannot serialize the model ({e})") from None
    import tempfile

    tmp = None
    try:
        # a short name: any name ``out`` may have (up to the file system's 255 bytes) leaves room for it
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".bcast-", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 would hide the model from other users
        os.replace(tmp, out)
    except BaseException as e:  # an error, KeyboardInterrupt, the CLI's SIGTERM: no temp file stays
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(e, OSError):
            raise InputError(f"{out}: cannot write it ({e.strerror or e})") from None
        raise
    return out


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _same_file(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # hard links too
    except OSError:
        return False


# --------------------------------------------------------------------------- shapes


def _dim(d):
    if d.HasField("dim_value"):
        return d.dim_value if d.dim_value >= 0 else UNKNOWN
    if d.HasField("dim_param"):
        try:
            return Sym(d.dim_param)
        except InputError:  # a param that is not a name ("N+1", "batch size"): a size not known here
            return UNKNOWN
    return UNKNOWN


def shape_of(type_proto):
    """The shape in an ONNX ``TypeProto`` of a tensor, or None (rank not known, not a tensor)."""
    if type_proto.WhichOneof("value") != "tensor_type":
        return None
    tt = type_proto.tensor_type
    if not tt.HasField("shape"):
        return None
    return tuple(_dim(d) for d in tt.shape.dim)


class Shapes:
    """The shape of every value of a model's main graph (see the module docstring).

    ``get(name)`` is a tuple of dims, or None where not even the rank is known.
    """

    def __init__(self, model, *, infer: bool = True) -> None:
        opset = default_opset(model)
        if opset is None:  # (load refuses such a model)
            raise InputError("the model has no opset_import for the default ONNX domain")
        self.opset: int = opset
        self.ir_version = model.ir_version
        self.opset_imports = list(model.opset_import)
        inferred = _infer(model) if infer else model
        g = inferred.graph
        # as onnx knows them
        self._info: MutableMapping[str, Any] = {v.name: v for v in (*g.input, *g.value_info, *g.output)}
        self.initializers: MutableMapping[str, Any] = {t.name: t for t in model.graph.initializer}
        # a sparse initializer is named by its values; its shape is its dims (onnx's inference uses them
        # for the nodes it feeds, and reports no value_info for it)
        self.sparse: MutableMapping[str, Any] = {sp.values.name: sp for sp in model.graph.sparse_initializer}
        self._shapes: MutableMapping[str, Any] = {}  # name -> shape, filled on demand and by set()
        self.bcast_only: set[str] = set()  # names whose shape bcast knows and onnx did not
        self.graph = model.graph
        self.inferred = g  # the graph as onnx's inference left it (its subgraphs carry their value_info)

    def scope(self, graph, inferred=None) -> Shapes:
        """The shapes seen from inside ``graph``, a subgraph (an If branch, a Loop or Scan body) of a
        node of this graph: its own values (from ``inferred``, its counterpart in onnx's inferred
        model, whose value_info onnx filled in), then every value of the outer scopes, bcast's shapes
        included.  Nothing is copied: writes go to the subgraph's own maps."""
        from collections import ChainMap

        child = object.__new__(Shapes)
        child.opset, child.ir_version, child.opset_imports = self.opset, self.ir_version, self.opset_imports
        g = inferred if inferred is not None else graph
        own = {v.name: v for v in (*g.input, *g.value_info, *g.output)}
        child._info = ChainMap(own, self._info)
        child.initializers = ChainMap({t.name: t for t in graph.initializer}, self.initializers)
        child.sparse = ChainMap({sp.values.name: sp for sp in graph.sparse_initializer}, self.sparse)
        shadowed = own.keys() | {o for n in graph.node for o in n.output}
        child._shapes = ChainMap({}, self._shapes if shadowed.isdisjoint(self._shapes) else
                                 {k: v for k, v in self._shapes.items() if k not in shadowed})
        child.bcast_only = set(self.bcast_only) - shadowed
        child.graph, child.inferred = graph, g
        return child

    def get(self, name: str):
        if name in self._shapes:
            return self._shapes[name]
        if name in self.initializers:
            shape = tuple(self.initializers[name].dims)
        elif name in self.sparse:
            shape = tuple(self.sparse[name].dims)
        elif name in self._info:
            shape = shape_of(self._info[name].type)
        else:
            shape = None
        self._shapes[name] = shape
        return shape

    def elem_type(self, name: str) -> int:
        if name in self.initializers:
            return self.initializers[name].data_type
        if name in self.sparse:
            return self.sparse[name].values.data_type
        v = self._info.get(name)
        if v is not None and v.type.WhichOneof("value") == "tensor_type":
            return v.type.tensor_type.elem_type
        return onnx.TensorProto.UNDEFINED

    def set(self, name: str, shape, elem_type: int | None = None) -> None:
        """Store a shape bcast computed (a broadcasting op's output)."""
        if self.get(name) is None:  # onnx did not know it
            self.bcast_only.add(name)
            if elem_type and name not in self._info:
                self._info[name] = onnx.helper.make_tensor_value_info(name, elem_type, None)
        self._shapes[name] = tuple(shape)

    def value_infos(self) -> list:
        """A ValueInfoProto for every value whose shape bcast knows and onnx's inference did not (for
        tools that need the shapes in the model, e.g. onnx's version converter)."""
        return [onnx.helper.make_tensor_value_info(n, self.elem_type(n), [_proto_dim(d) for d in self._shapes[n]])
                for n in sorted(self.bcast_only) if self._shapes.get(n) is not None]

    def constant(self, name: str):
        """The values of an initializer, as a numpy array, or None (none, or its data do not fill its
        dims: numpy_helper would raise).  Reads only the bytes the file holds: nothing is allocated
        for dims that a tensor declares without data."""
        t = self.initializers.get(name)
        if t is None:
            return None
        try:
            return numpy_helper.to_array(t)
        except Exception:  # dims that the data do not fill (2**62 with no data), a data type it does not know
            return None

    def follow(self, node) -> None:
        """For a node that is not a broadcasting op: when one of its inputs has a shape only
        bcast knows and an output has none, run onnx's inference on this node alone."""
        if (not self.bcast_only or not any(n in self.bcast_only for n in node.input)
                or all(self.get(o) is not None for o in node.output)):
            return
        if any(n and self.get(n) is None for n in node.input) or node.domain not in DEFAULT_DOMAINS:
            return
        types = {n: onnx.helper.make_tensor_type_proto(self.elem_type(n), [_proto_dim(d) for d in self.get(n)])
                 for n in node.input if n}
        data = {n: self.initializers[n] for n in node.input if n in self.initializers}
        try:
            schema = onnx.defs.get_schema(node.op_type, self.opset, node.domain)
            outs = shape_inference.infer_node_outputs(schema, node, types, input_data=data,
                                                      opset_imports=self.opset_imports,
                                                      ir_version=max(self.ir_version, 3))
        except Exception:  # onnx could not infer it either: the shape stays unknown
            return
        for name, t in outs.items():
            shape = shape_of(t)
            if shape is not None:
                self._info[name] = onnx.helper.make_value_info(name, t)
                self._shapes[name] = shape
                self.bcast_only.add(name)


def _proto_dim(d):
    """A bcast dim as ``make_tensor_type_proto`` takes it: an int, a param, or None."""
    if type(d) is int:
        return d
    return d.name if isinstance(d, Sym) else None


def _infer(model):
    try:
        return shape_inference.infer_shapes(model)
    except Exception:  # onnx gives up on the whole model (a bad attribute, a type clash): no shapes but the given
        return model
