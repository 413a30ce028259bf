"""ONNX models: loading them safely, and the shape of every value in them.

:func:`load` reads a model file (or takes a ``ModelProto``) and refuses, with
one :class:`~bcast.errors.InputError` line, anything that is not a whole ONNX
model: an unreadable file, bytes that are not a protobuf ``ModelProto``, a
truncated file (no graph, no opset, a node input that nothing defines), an
external-data location that leaves the model's folder (``../x``, an absolute
path, a symlink out).  External data is loaded only after every location has
been checked.

:class:`Shapes` is the shape environment lint and rewrite read: onnx's shape
inference, run once on the whole model, for every value; bcast's rules for
the broadcasting ops (the caller stores their output shapes with
:meth:`Shapes.set`); and onnx's per-node inference only for the few nodes
downstream of a shape that bcast knew and onnx did not (opset-1 ops have no
shape inference).  A dim is an int, a :class:`~bcast.dims.Sym` for a
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

from ._format import brief
from .dims import UNKNOWN, Sym
from .errors import InputError

try:
    import onnx
    from onnx import numpy_helper, shape_inference
except ImportError:  # pragma: no cover - the test extra installs onnx
    raise InputError("reading ONNX models needs the onnx package: pip install 'bcast[onnx]'") from None

__all__ = ["load", "Shapes", "default_opset", "node_label", "save_atomic", "DEFAULT_DOMAINS"]

#: The domains of ONNX's own ops.
DEFAULT_DOMAINS = ("", "ai.onnx")
#: protobuf refuses messages of 2 GiB or more.
_PROTOBUF_LIMIT = 2**31 - 1


# --------------------------------------------------------------------------- loading


def load(model, *, what: str = "model") -> "onnx.ModelProto":
    """The model in ``model`` (a path or a ``ModelProto``), checked whole, external data loaded.

    Raises :class:`~bcast.errors.InputError` with one line naming what is wrong.
    """
    if isinstance(model, onnx.ModelProto):
        _check_structure(model, "the model")
        consts = (a.t for n in model.graph.node if n.op_type == "Constant" for a in n.attribute)
        if any(_is_external(t) for t in model.graph.initializer) or any(_is_external(t) for t in consts):
            raise InputError("the model has tensors in external data that are not loaded: pass its path instead")
        return model
    try:
        path = os.fspath(model)
    except TypeError:
        raise InputError(f"{what} must be a path or an onnx.ModelProto, got {brief(model)}") from None
    data = _read(path)
    try:
        proto = onnx.ModelProto.FromString(data)
    except Exception:  # protobuf's DecodeError, or worse, for bytes that are not a ModelProto
        raise InputError(f"{path}: not an ONNX model (the file is not a protobuf ModelProto)") from None
    _check_structure(proto, path)
    if b"location" in data:  # an external tensor names its location: no such bytes, no external data
        _load_external(proto, path)
    return proto


def _read(path: str) -> bytes:
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise InputError(f"{path}: not a regular file")
    if os.path.getsize(path) > _PROTOBUF_LIMIT:
        raise InputError(f"{path}: larger than protobuf's 2 GiB limit (weights belong in external data)")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read it ({e.strerror or e})") from None


def _check_structure(model, where: str) -> None:
    """What a whole model has: a graph with outputs and a default-domain opset.  A truncated
    file lacks one of them, or fails to parse (the graph is one length-prefixed field)."""
    if not model.HasField("graph"):
        raise InputError(f"{where}: not an ONNX model, or a truncated one (it has no graph)")
    if default_opset(model) is None:
        raise InputError(f"{where}: no opset_import for the default ONNX domain (a truncated file?)")
    if not model.graph.output:
        raise InputError(f"{where}: the graph has no outputs (a truncated file?)")


def _tensors(graph):
    """Every TensorProto of a graph and its subgraphs: initializers and attribute values."""
    yield from graph.initializer
    for sp in graph.sparse_initializer:
        yield sp.values
        yield sp.indices
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                yield a.t
            yield from a.tensors
            if a.HasField("g"):
                yield from _tensors(a.g)
            for sub in a.graphs:
                yield from _tensors(sub)


def _is_external(t) -> bool:
    return t.data_location == onnx.TensorProto.EXTERNAL


def _load_external(model, path: str) -> None:
    """Check every external-data location against the model's folder, then load the data."""
    tensors = [t for t in _tensors(model.graph) if _is_external(t)]
    if not tensors:
        return
    base = os.path.dirname(os.path.abspath(path))
    for t in tensors:
        _check_location(t, base, path)
    from onnx.external_data_helper import load_external_data_for_tensor

    for t in tensors:
        try:
            load_external_data_for_tensor(t, base)
        except Exception as e:  # pragma: no cover - the checks above leave little to fail
            raise InputError(f"{path}: cannot load the external data of tensor {t.name!r}: {e}") from None
        t.data_location = onnx.TensorProto.DEFAULT
        del t.external_data[:]


def _check_location(t, base: str, path: str) -> None:
    info = {e.key: e.value for e in t.external_data}
    loc = info.get("location", "")
    where = f"{path}: tensor {t.name!r} has external data {loc!r}"
    if not loc:
        raise InputError(f"{path}: tensor {t.name!r} is in external data but names no location")
    if os.path.isabs(loc) or loc.startswith(("/", "\\")) or (len(loc) > 1 and loc[1] == ":"):
        raise InputError(f"{where}: an absolute path; external data must lie in the model's folder")
    if ".." in loc.replace("\\", "/").split("/"):
        raise InputError(f"{where}: it leaves the model's folder ('..')")
    real_base = os.path.realpath(base)
    real = os.path.realpath(os.path.join(base, loc))
    if os.path.commonpath([real, real_base]) != real_base:
        raise InputError(f"{where}: a symlink out of the model's folder")
    if not os.path.isfile(real):
        raise InputError(f"{where}: no such file in the model's folder")
    try:
        offset, length = int(info.get("offset", 0)), int(info.get("length", -1))
    except ValueError:
        raise InputError(f"{where}: its offset/length are not integers") from None
    size = os.path.getsize(real)
    if offset < 0 or offset > size or (length >= 0 and offset + length > size):
        raise InputError(f"{where}: offset {offset} and length {length} run past the file's {size} bytes")


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
    ``source`` (also through a symlink) and an existing ``out`` unless ``force``."""
    out = os.fspath(out)
    if source is not None and _same_file(out, os.fspath(source)):
        raise InputError(f"{out} is the input model: refusing to overwrite it (write to another file)")
    if os.path.lexists(out) and not force:
        raise InputError(f"{out} exists: refusing to overwrite it (use --force / force=True)")
    if os.path.isdir(out):
        raise InputError(f"{out} is a folder, not a file")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise InputError(f"{out}: folder {folder} does not exist")
    try:
        data = model.SerializeToString()
    except ValueError as e:  # over protobuf's limit
        raise InputError(f"{out}: cannot serialize the model ({e})") from None
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(out) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise InputError(f"{out}: cannot write it ({e.strerror or e})") from None
        raise
    return out


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
        self.opset = default_opset(model)
        self.ir_version = model.ir_version
        self.opset_imports = list(model.opset_import)
        inferred = _infer(model) if infer else model
        g = inferred.graph
        self._info = {v.name: v for v in (*g.input, *g.value_info, *g.output)}  # as onnx knows them
        self.initializers = {t.name: t for t in model.graph.initializer}
        self._shapes = {}  # name -> shape, filled on demand and by set()
        self.bcast_only = set()  # names whose shape bcast knows and onnx did not
        self.graph = model.graph

    def get(self, name: str):
        if name in self._shapes:
            return self._shapes[name]
        if name in self.initializers:
            shape = tuple(self.initializers[name].dims)
        elif name in self._info:
            shape = shape_of(self._info[name].type)
        else:
            shape = None
        self._shapes[name] = shape
        return shape

    def elem_type(self, name: str) -> int:
        if name in self.initializers:
            return self.initializers[name].data_type
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
        """The values of an initializer, as a numpy array, or None."""
        t = self.initializers.get(name)
        return None if t is None else numpy_helper.to_array(t)

    def follow(self, node) -> None:
        """For a node that is not a broadcasting op: when one of its inputs has a shape only
        bcast knows and an output has none, run onnx's inference on this node alone."""
        if not self.bcast_only or not any(n in self.bcast_only for n in node.input) or all(self.get(o) is not None for o in node.output):
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
