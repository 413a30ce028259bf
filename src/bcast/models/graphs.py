"""The graphs lint and rewrite walk: the main graph, every subgraph, every call of a model-local function.

A node's attributes of type GRAPH / GRAPHS (If's ``then_branch`` and ``else_branch``,
Loop's and Scan's ``body``, any op's) are graphs like the main one: their nodes are
walked right after the node that holds them, with the shapes onnx's inference wrote
into them (its inferred model carries a ``value_info`` per subgraph) and every value
of the outer scopes visible (:meth:`bcast.models.onnx_model.Shapes.scope`).  A node that calls
a model-local function (its ``op_type`` and ``domain`` name one of ``model.functions``)
has the function's body walked as a graph of its own, once per call, with the
caller's shapes for its inputs and the caller's attributes for its attribute
references (onnx infers the shapes in it); a function that no node calls never runs
and is not walked.

Where a node is: its **path**, the labels of the nodes and the attributes that lead to
it, joined by ``/``: ``If_0/then_branch/Mul_3`` is node ``Mul_3`` of the
``then_branch`` of node ``If_0``; ``Loop_2/body/If_1/else_branch/#0 (Add)`` is nested
twice; ``Call_4/MyFunc/Mul_0`` is node ``Mul_0`` of function ``MyFunc`` called by node
``Call_4``.  A GRAPHS attribute's graphs are ``name[0]``, ``name[1]``...  A node of the
main graph is its label alone, as before.  (Node names may contain ``/`` themselves,
as PyTorch's do: JSON output also gives the path as a list.)
"""

from __future__ import annotations

import onnx
from onnx import helper

from ..core.errors import InputError
from .onnx_model import MAX_NODES, DEFAULT_DOMAINS

__all__ = ["Walk", "holds_graphs", "subgraphs"]

_A = onnx.AttributeProto
#: ONNX's own ops that hold graphs (as bcast.models.onnx_model reads them); any op of another domain may, or may be a
#: local function's call.
_GRAPH_OPS = frozenset(("If", "Loop", "Scan", "SequenceMap"))


def holds_graphs(node) -> bool:
    """Whether ``node`` may hold a graph or call a local function (the others are not looked into)."""
    return node.op_type in _GRAPH_OPS or node.domain not in DEFAULT_DOMAINS


def subgraphs(node):
    """``(component, graph)`` for each graph held by ``node``'s attributes, in attribute order."""
    for a in node.attribute:
        if a.type == _A.GRAPH:
            yield a.name, a.g
        elif a.type == _A.GRAPHS:
            for k, g in enumerate(a.graphs):
                yield f"{a.name}[{k}]", g


class Walk:
    """The scopes of one model, and the budget that bounds the work of walking them: function bodies
    are walked once per call (a chain of functions that call each other twice would grow
    exponentially), so every node walked counts against :data:`bcast.models.onnx_model.MAX_NODES`."""

    def __init__(self, model) -> None:
        self.model = model
        self.functions = {(f.domain, f.name): f for f in model.functions}
        # the functions being walked, innermost last (a function that calls itself: refused)
        self.calling: list[tuple[str, str]] = []
        self.walked = 0

    def count(self, graph) -> None:
        self.walked += len(graph.node)
        if self.walked > MAX_NODES:
            raise InputError(f"the model has more than {MAX_NODES:,} nodes to check once its function calls are "
                             "expanded, the most bcast reads (bcast.models.onnx_model.MAX_NODES)")

    def scopes(self, node, index: int, shapes, edit=None, functions: bool = True):
        """``(component, graph, shapes, nested)`` for each graph inside ``node`` (``node`` is node ``index`` of
        ``shapes.graph``): its subgraphs (``nested``: they see the outer scope), or the body of the local function
        it calls (a scope of its own).  ``edit``: a copy of
        ``node`` whose subgraphs are the ones yielded (rewrite edits the copy)."""
        inferred = shapes.inferred.node[index] if len(shapes.inferred.node) == len(shapes.graph.node) else node
        if inferred.op_type != node.op_type:
            inferred = node
        twins = dict(subgraphs(inferred))
        for name, g in subgraphs(edit if edit is not None else node):
            self.count(g)
            yield name, g, shapes.scope(g, twins.get(name)), True
        fn = self.functions.get((node.domain, node.op_type))
        if functions and fn is not None and node.domain not in DEFAULT_DOMAINS:
            key = (fn.domain, fn.name)
            if key in self.calling:
                raise InputError(f"function {fn.name!r} calls itself (through node {node.name or node.op_type!r}): "
                                 "ONNX functions may not recurse")
            call = _call_model(self.model, fn, node, shapes)
            self.count(call.graph)
            from .onnx_model import Shapes

            self.calling.append(key)
            try:
                yield fn.name, call.graph, Shapes(call), False
            finally:
                self.calling.pop()


def _call_model(model, fn, node, shapes):
    """The body of function ``fn`` as called by ``node``: a model whose inputs have the caller's types and
    whose attribute references are the caller's attributes (or the function's defaults)."""
    inputs = []
    for formal, actual in zip(fn.input, node.input):
        shape = shapes.get(actual) if actual else None
        dims = None if shape is None else [d if type(d) is int else getattr(d, "name", None) for d in shape]
        inputs.append(helper.make_tensor_value_info(formal, shapes.elem_type(actual) if actual else 0, dims))
    given = {a.name: a for a in node.attribute}
    given.update({a.name: a for a in fn.attribute_proto if a.name not in given})
    nodes = []
    for n in fn.node:
        if any(a.ref_attr_name for a in n.attribute):
            n = _copy(n)
            keep = []
            for a in n.attribute:
                if a.ref_attr_name:
                    if a.ref_attr_name not in given:
                        continue  # not given, no default: the attribute is absent
                    value = _A()
                    value.CopyFrom(given[a.ref_attr_name])
                    value.name = a.name
                    a = value
                keep.append(a)
            del n.attribute[:]
            n.attribute.extend(keep)
        nodes.append(n)
    outputs = [onnx.ValueInfoProto(name=o) for o in fn.output]
    g = helper.make_graph(nodes, fn.name, inputs, outputs)
    opsets = {o.domain: o.version for o in model.opset_import}
    opsets.update({o.domain: o.version for o in fn.opset_import})
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()])
    m.ir_version = model.ir_version
    m.functions.extend(model.functions)
    return m


def _copy(node):
    new = onnx.NodeProto()
    new.CopyFrom(node)
    return new
