"""Lint target ``onnx2ncnn``: the model as ncnn's legacy converter (tools/onnx/onnx2ncnn.cpp) writes it.

What the converter does, read from Tencent/ncnn ``tools/onnx/onnx2ncnn.cpp``:

- Add, Sub, Mul, Div, Max, Min and Pow become one raw ``BinaryOp`` (ADD ... POW,
  ``x ** 2`` included): no reshape is inserted, so ncnn's own broadcasting rule
  (:mod:`bcast.rules.ncnn`) applies to the blobs as they are.
- A rank-0 initializer of one element on either side becomes the layer's scalar
  (``fuse_binaryop_with_scalar``: ``with_scalar=1``; Sub/Div with the scalar first
  become RSUB/RDIV): always right.
- Every other initializer (and Constant, and a Reshape of an initializer,
  ``fuse_weight_reshape``) becomes a ``MemoryData`` blob: dims (n) -> (n);
  (a,b) -> (b) if a is 1 else (a,b); (a,b,c) -> (b,c) if a is 1 else (a,b,c);
  (a,b,c,d) -> (b,c,d) always (its axis 0 is dropped); rank 5 or more gets no dims.
- Every computed tensor is held without its axis 0, the batch, which the converter
  takes to be 1 everywhere (Reshape drops ``shape[0]``, Reduce*, Unsqueeze and the
  rest subtract 1 from their axes); a rank-0 tensor (a reduction with keepdims=0) is
  ncnn's one-element blob.
- ``Sum`` becomes ``Eltwise`` SUM, which does not broadcast; ``PRelu`` becomes ncnn's
  ``PReLU`` with the initializer's elements as one slope per channel (the blob's
  outermost axis); ``Unsqueeze`` becomes ``ExpandDims`` with its ``axes`` attribute
  less 1 (an opset-13 ``axes`` input is not read); ``Expand`` is dropped when the next
  node is an Add/Sub/Mul/Div/Min/Max that reads it (``fuse_expand_broadcast``).
- Every other broadcasting op (Greater, Less, Equal, Where, And, Or, Mod, Mean,
  BitShift, ...) has no conversion: the converter prints "X not supported yet!" and
  writes a layer of type X, which ncnn cannot load.

A BinaryOp is ``unsupported`` when ncnn cannot compute its blobs (garbage: the
ncnn-garbage record), ``differs`` when it computes them with another alignment
than the spec's; a computed tensor whose axis 0 is a static size other than 1 is
``unsupported`` (the converter's batch assumption does not hold).  The rewrite
(``bcast rewrite --target onnx2ncnn``) reshapes a flagged node's initializer to
its aligned shape (a new initializer: MemoryData then holds the blob ncnn's rule
needs) and a computed operand by a ``Reshape`` to its aligned shape with a
constant shape (which the converter writes as ncnn's Reshape, less ``shape[0]``).
"""

from __future__ import annotations

from collections import ChainMap

from ...core._format import format_shape
from ...core.errors import BroadcastError
from ...models.target import Row, Target
from .deviations import NcnnRuntime
from .ops import FROM_ONNX as BINARYOPS
from ...rules import infer

__all__ = ["TARGET", "Checks", "Onnx2ncnn", "memorydata_blob"]

TARGET = "onnx2ncnn"

#: The ops the converter turns into an Eltwise, a PReLU, or nothing (Expand before a BinaryOp).
_HANDLED = frozenset({*BINARYOPS, "Sum", "PRelu", "Gemm", "Expand"})
#: The ops fuse_expand_broadcast folds an Expand into.
_EXPAND_USERS = frozenset({"Add", "Sub", "Mul", "Div", "Min", "Max"})



def _blob_text(names, blobs) -> str:
    return " and ".join(f"{n} {format_shape(b)}" for n, b in zip(names, blobs))

class _Unconvertible(Exception):
    pass


def memorydata_blob(dims: tuple) -> tuple:
    """The blob (numpy order) of onnx2ncnn's MemoryData for an initializer of ``dims`` (rank >= 1)."""
    dims = tuple(dims)
    if len(dims) == 1:
        return dims
    if len(dims) in (2, 3):
        return dims[1:] if dims[0] == 1 else dims
    if len(dims) == 4:
        if dims[0] != 1:
            raise _Unconvertible(f"onnx2ncnn's MemoryData keeps dims 1-3 of a 4-D initializer: {format_shape(dims)} "
                                 f"loses its axis 0 of {dims[0]}")
        return dims[1:]
    raise _Unconvertible(f"onnx2ncnn's MemoryData has no dims for a rank-{len(dims)} initializer "
                         f"{format_shape(dims)} (ncnn blobs have rank 1 to 4)")


def _computed_blob(shape: tuple, strict: bool = True) -> tuple:
    """The blob of a computed tensor: without its axis 0 (the batch); rank 0 is the one-element blob.
    ``strict``: raise _Unconvertible where axis 0 is a static size other than 1."""
    if len(shape) == 0:
        return (1,)
    if len(shape) == 1:
        return shape
    if strict and type(shape[0]) is int and shape[0] != 1:
        raise _Unconvertible(f"onnx2ncnn takes axis 0 of every computed tensor for the batch, of size 1, and "
                             f"holds the rest: this one is {format_shape(shape)}, so ncnn holds no such tensor")
    return shape[1:]


class Onnx2ncnn(Target):
    """The checks of target ``onnx2ncnn`` (see the module docstring)."""

    name = TARGET
    runtimes = decisive_runtimes = tuple(NcnnRuntime)

    def __init__(self, shapes, graph, parent=None) -> None:
        super().__init__(shapes, graph, parent)
        # name -> dims of a weight as the converter holds it (initializers, Constants, Reshapes of them)
        self.weights = {} if parent is None else ChainMap({}, parent.weights)
        # name -> the blob of a value that is not "its tensor without axis 0": computed from weights only
        # (onnx2ncnn folds no constants: its layers run on the MemoryData blobs), or an Unsqueeze's ExpandDims
        self.blobs = {} if parent is None else ChainMap({}, parent.blobs)
        for t in graph.initializer:
            self.weights[t.name] = tuple(t.dims)
        self.graph = graph
        # output name -> op of the node right after its maker, when that node reads it
        self.next_op: dict[str, str] = {}

    def bind(self, caller, formals: dict) -> None:
        for formal, actual in formals.items():
            if actual in caller.weights:
                self.weights[formal] = caller.weights[actual]
            if actual in caller.blobs:
                self.blobs[formal] = caller.blobs[actual]

    def blob(self, name: str, shape: tuple, strict: bool = True) -> tuple:
        """The blob ncnn holds for value ``name`` of ONNX shape ``shape`` (raises _Unconvertible)."""
        if name in self.blobs:
            return self.blobs[name]
        if name in self.weights:
            return memorydata_blob(self.weights[name]) if self.weights[name] else (1,)
        return _computed_blob(shape, strict)

    def _derived(self, name: str) -> bool:
        return name in self.weights or (name in self.blobs and self.blobs[name] is not None)

    def visit(self, node, site) -> None:
        if node.domain not in ("", "ai.onnx") or not node.output:
            return
        try:
            self._follow(node, site)
        except (_Unconvertible, BroadcastError):
            pass

    def _follow(self, node, site) -> None:
        """The blobs of the node's outputs, where they are not the default (see :meth:`blob`)."""
        op, inputs, out = node.op_type, node.input, node.output[0]
        if op == "Constant":
            t = next((a.t for a in node.attribute if a.name == "value" and a.HasField("t")), None)
            if t is not None:
                self.weights[out] = tuple(t.dims)
            elif node.attribute and node.attribute[0].name in ("value_float", "value_int"):
                self.weights[out] = ()
            elif node.attribute and node.attribute[0].name in ("value_floats", "value_ints"):
                self.weights[out] = (len(node.attribute[0].floats or node.attribute[0].ints),)
            return
        first = inputs[0] if inputs else ""
        if not first:
            return
        if op == "Unsqueeze":
            shape = self.shapes.get(first)
            if shape is not None:
                b = list(self.blob(first, shape))
                axes = next((list(a.ints) for a in node.attribute if a.name == "axes"), [])  # an axes input: not read
                for a in sorted(a - 1 if a > 0 else a for a in axes):
                    b.insert(a if a >= 0 else len(b) + a + 1, 1)
                self.blobs[out] = tuple(b)
        elif op == "Reshape":
            if first in self.weights:  # fuse_weight_reshape
                shape = self.shapes.get(out)
                if shape is not None and all(type(d) is int for d in shape):
                    self.weights[out] = shape
        elif self._derived(first) and all(map(self._derived, filter(None, inputs))):
            if site is not None:
                if site.plan is not None and len(site.inputs) == 2:
                    blobs = [self.blob(n, s) for n, s in zip(site.inputs, site.plan.inputs)]
                    self.blobs[out] = infer(*blobs, rule="ncnn").shape
            else:
                shape = self.shapes.get(first)
                if shape is not None and self.shapes.get(out) == shape:
                    self.blobs[out] = self.blob(first, shape)  # element-wise (Sqrt, Neg...)

    def route(self, site):
        op = BINARYOPS.get(site.op.name)
        if op in ("SUB", "DIV") and len(site.inputs) == 2 and self.weights.get(site.inputs[0]) == ():
            return "R" + op  # fuse_binaryop_with_scalar: the scalar first
        return op

    def context(self, site) -> tuple:
        return (*(self.weights.get(n) for n in site.inputs), *(self.blobs.get(n) for n in site.inputs),
                self._fused_expand(site))

    def _fused_expand(self, site) -> bool:
        if site.op.name != "Expand":
            return False
        nodes = self.graph.node
        nxt = nodes[site.index + 1] if site.index + 1 < len(nodes) else None
        return (nxt is not None and nxt.op_type in _EXPAND_USERS and site.node.output[0] in list(nxt.input)[:2])

    def check(self, site) -> list:
        op = site.op.name
        if op not in _HANDLED:
            return [Row("unsupported", None, f"onnx2ncnn has no conversion for {op}: it prints \"{op} not supported "
                     f"yet!\" and writes a layer of type {op}, which ncnn cannot load",
                     "compute it with ops onnx2ncnn converts, or convert with pnnx", ())]
        if op == "Expand":
            return [] if self._fused_expand(site) else [
                Row("unsupported", None, "onnx2ncnn converts Expand only when the next node is an "
                 "Add/Sub/Mul/Div/Min/Max that reads it (it drops it): otherwise it writes a layer ncnn cannot load",
                 "let the BinaryOp that reads it broadcast instead", ())]
        if op == "Gemm":
            return []
        if op == "Sum":
            return self._sum(site)
        if op == "PRelu":
            return self._prelu(site)
        return self._binaryop(site)

    def _operand_blobs(self, site, strict: bool = True) -> tuple:
        return tuple(self.blob(n, s, strict) for n, s in zip(site.inputs, site.plan.inputs))

    def _sum(self, site) -> list:
        if len(set(site.plan.inputs)) <= 1:
            return []
        return [Row("unsupported", None, "onnx2ncnn writes Sum as ncnn's Eltwise SUM, which does not broadcast: the "
                 f"inputs {', '.join(format_shape(s) for s in site.plan.inputs)} differ",
                 "broadcast with Add (a BinaryOp) instead", ())]

    def _prelu(self, site) -> list:
        plan = site.plan
        slope = site.inputs[1]
        if slope not in self.weights:
            return [Row("unsupported", None, "onnx2ncnn reads PRelu's slope from the initializers: a computed "
                     "slope is written as no slope at all", "make the slope an initializer", ())]
        dims = self.weights[slope]
        n = 1
        for d in dims:
            n *= d
        aligned = plan.aligned_shape(1)
        varying = [ax for ax, d in enumerate(aligned) if d != 1]
        if n == 1 or (varying == [1] and plan.ndim >= 2):
            return []
        return [Row("differs", None, f"onnx2ncnn writes PRelu as ncnn's PReLU with {n} slopes, one per channel (the "
                 f"outermost axis of the blob, axis 1 of {format_shape(plan.shape)}); the spec aligns the slope "
                 f"{format_shape(dims)} as {format_shape(aligned)}",
                 "apply the slope with Mul/Max/Min, or give it the shape (C,1,...) of a per-channel slope", ())]

    def _binaryop(self, site) -> list:
        plan = site.plan
        binop = BINARYOPS[site.op.name]
        if len(plan.inputs) == 1:
            return []
        if len(plan.inputs) > 2:
            return [Row("unsupported", None, f"onnx2ncnn writes one BinaryOp {binop} for {len(plan.inputs)} "
                     "inputs: ncnn's BinaryOp reads two", "chain two-input nodes", ())]
        if any(self.weights.get(n) == () for n in site.inputs):
            return []  # fuse_binaryop_with_scalar: the layer's scalar, always right
        batch = ""  # why the blobs are not what the model computes, besides the broadcast
        try:
            blobs = self._operand_blobs(site)
        except _Unconvertible as e:
            try:
                blobs = self._operand_blobs(site, strict=False)  # what ncnn holds all the same
            except _Unconvertible:
                return [Row("unsupported", "ncnn", str(e), self.fix(site) or "none that bcast knows", ())]
            batch = f"{e}; "
        try:
            q = infer(*blobs, rule="ncnn", names=plan.names)
        except BroadcastError as e:
            return [Row("unsupported", "ncnn", f"{batch}onnx2ncnn writes a raw BinaryOp {binop} on blobs "
                     f"{_blob_text(plan.names, blobs)}: {e.reason}", self.fix(site) or "none that bcast knows",
                     self.notes(e, binop))]
        if batch:
            return [Row("unsupported", "ncnn", f"{batch}onnx2ncnn writes a raw BinaryOp {binop} on blobs "
                     f"{_blob_text(plan.names, blobs)}", self.fix(site) or "none that bcast knows", ())]
        notes = self.notes(q, binop)
        wrong = _misaligned(plan, q)
        if wrong:
            return [Row("differs", "ncnn", f"onnx2ncnn writes a raw BinaryOp {binop} on blobs "
                     f"{_blob_text(plan.names, blobs)}, which ncnn aligns {wrong}: it computes {binop} on other "
                     "elements than the spec", self.fix(site) or "none that bcast knows", notes)]
        decisive = self.decisive(notes)
        if decisive:
            return [Row("unsupported", "ncnn", "; ".join(f.note for f in decisive), "avoid these shapes on ncnn",
                        notes)]
        return []

    def fix(self, site):
        """What ``bcast rewrite --target onnx2ncnn`` does to this node (the words name the inputs as A and B,
        not by value: findings are cached per shapes), or None when it has nothing that makes it right."""
        steps = self.steps(site)
        if steps is None:
            return None
        what = ", ".join(f"{'reshape initializer' if how == 'initializer' else 'Reshape'} {site.plan.names[i]} "
                         f"to {format_shape(s)}" for i, s, how in steps)
        return f"bcast rewrite MODEL --target onnx2ncnn -o OUT.onnx ({what})"

    def steps(self, site):
        """``[(input index, new shape, how)]``, ``how`` "initializer" or "reshape", that make the node right
        on ncnn, or None."""
        plan = site.plan
        if plan is None or site.op.name not in BINARYOPS or len(plan.inputs) != 2 or plan.ndim > 4:
            return None
        steps, blobs = [], []
        for i, name in enumerate(site.inputs):
            aligned = plan.aligned_shape(i)
            if name in self.weights:
                if any(type(d) is not int for d in aligned):
                    return None
                how = "initializer"
            else:
                if sum(type(d) is not int for d in aligned) > 1:
                    return None  # a Reshape infers one dim at most
                how = "reshape"
            try:
                blob = memorydata_blob(aligned) if how == "initializer" else _computed_blob(aligned)
            except _Unconvertible:
                return None
            blobs.append(blob)
            if len(plan.inputs[i]) != plan.ndim:
                steps.append((i, aligned, how))
        if not steps:
            return None
        try:
            q = infer(*blobs, rule="ncnn", names=plan.names)
        except BroadcastError:
            return None
        return None if _misaligned(plan, q) else steps


def _misaligned(plan, q) -> str:
    """How ncnn's plan ``q`` of the blobs aligns the inputs otherwise than the spec's ``plan`` (the output's
    leading axes that ncnn does not hold must be 1s), or "" where it computes the same elements."""
    k = plan.ndim - q.ndim
    if k < 0 or any(type(d) is int and d != 1 for d in plan.shape[:k]):
        return (f"into an output of {format_shape(q.shape)}, not the spec's {format_shape(plan.shape)}")
    out = []
    for i in range(len(plan.inputs)):
        a, b = plan.aligned_shape(i)[k:], q.aligned_shape(i)
        if a != b:
            out.append(f"{plan.names[i]} as {format_shape(b)}, not {format_shape(a)}")
    return "; ".join(out)


#: The checks of the target (the name :mod:`bcast.models.target` looks for).
Checks = Onnx2ncnn
