"""Editing an ONNX model's graphs, for the rewrite targets (:mod:`bcast.models.rewrite`): fresh names
(:class:`Names`), one graph's new node list (:class:`Editor`), and the walk over every graph of a
model with an edit per broadcasting node (:func:`walk`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .onnx_model import Shapes, node_label  # first: without onnx, its one-line InputError

import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

from ..core._format import format_shape  # noqa: E402
from .graphs import Walk, holds_graphs, subgraphs  # noqa: E402
from .lint import sites  # noqa: E402
from .target import Site, Target  # noqa: E402

__all__ = ["Edit", "Editor", "Names", "align_inputs", "copy_node", "describe", "drop_attrs", "int64", "walk"]

class Names:
    """Fresh value and node names, unlike any in the model's graphs (subgraphs see the outer names)."""

    def __init__(self, *graphs: Any) -> None:
        self.used: set[str] = set()
        stack = list(graphs)
        while stack:
            graph = stack.pop()
            self.used |= {v.name for v in (*graph.input, *graph.output, *graph.value_info)}
            self.used |= {t.name for t in graph.initializer}
            for n in graph.node:
                self.used.update(n.input)
                self.used.update(n.output)
                self.used.add(n.name)
                stack += [g for _, g in subgraphs(n)]

    def fresh(self, base: str) -> str:
        k = 0
        while f"{base}_bcast{k}" in self.used:
            k += 1
        name = f"{base}_bcast{k}"
        self.used.add(name)
        return name


class Editor:
    """Builds one graph's new node list: each node, with the Unsqueezes it needs just before it."""

    def __init__(self, graph: Any, opset: int, names: Names, constants: bool = False) -> None:
        self.graph = graph
        self.opset = opset
        self.names = names
        self.constants = constants  # a function's body has no initializers: Constant nodes instead
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.originals: dict[int, int] = {}  # index in nodes -> index of the graph's node it is (a copy of)
        self.made: dict[tuple, str] = {}  # (value, axes) -> the Unsqueeze's output (shared by the nodes that need it)
        self.changes: list[str] = []  # one line per change (shared by a graph and its subgraphs)

    def const(self, array: Any, name: str) -> None:
        """A constant tensor named ``name``: an initializer, or in a function's body a Constant node."""
        tensor = numpy_helper.from_array(array, name)
        if self.constants:
            self.nodes.append(helper.make_node("Constant", [], [name], name=self.names.fresh(name), value=tensor))
        else:
            self.inits.append(tensor)

    def unsqueeze(self, value: str, axes: tuple) -> str:
        if (value, axes) in self.made:
            return self.made[(value, axes)]
        out = self.names.fresh(value)
        name = self.names.fresh(f"{value}_unsqueeze")
        if self.opset >= 13:  # axes is an input from Unsqueeze-13
            axes_name = self.names.fresh(f"{value}_axes")
            self.const(int64(axes), axes_name)
            node = helper.make_node("Unsqueeze", [value, axes_name], [out], name=name)
        else:
            node = helper.make_node("Unsqueeze", [value], [out], name=name, axes=list(axes))
        self.nodes.append(node)
        self.made[(value, axes)] = out
        return out

    def reshape(self, value: str, shape: tuple) -> str:
        """``value`` reshaped to ``shape`` (static but for one dim, -1) by a Reshape with a constant shape."""
        key = (value, "reshape", shape)
        if key in self.made:
            return self.made[key]
        out = self.names.fresh(value)
        name = self.names.fresh(f"{value}_reshape")
        dims = [d if type(d) is int else -1 for d in shape]
        if self.opset >= 5:  # the shape is an input from Reshape-5
            shape_name = self.names.fresh(f"{value}_shape")
            self.const(int64(dims), shape_name)
            node = helper.make_node("Reshape", [value, shape_name], [out], name=name)
        else:
            node = helper.make_node("Reshape", [value], [out], name=name, shape=dims)
        self.nodes.append(node)
        self.made[key] = out
        return out

    def reshaped(self, value: str, array: Any, shape: tuple) -> str:
        """A new initializer: the elements of initializer ``value`` (``array``) with ``shape``."""
        key = (value, "initializer", shape)
        if key not in self.made:
            name = self.names.fresh(value)
            self.const(array.reshape(shape), name)
            self.made[key] = name
        return self.made[key]

    def finish(self) -> None:
        g = self.graph
        del g.node[:]
        g.node.extend(self.nodes)
        g.initializer.extend(self.inits)


def int64(values: Iterable[int]) -> Any:
    import numpy as np

    return np.array(values, dtype=np.int64)


def drop_attrs(node: Any, names: Iterable[str]) -> None:
    keep = [a for a in node.attribute if a.name not in names]
    del node.attribute[:]
    node.attribute.extend(keep)


def describe(site: Site, i: int, plan: Any, aligned: tuple) -> str:
    return (f"{site.label}: Unsqueeze {plan.names[i]} {site.inputs[i]} {format_shape(plan.inputs[i])} "
            f"to {format_shape(aligned)}")


def align_inputs(site: Site, node: Any, editor: Editor, changes: list[str]) -> None:
    """Give every input of ``node`` the output's rank, at its aligned shape under the site's plan."""
    plan = site.plan
    assert plan is not None  # (edits see the sites with a valid spec)
    for i, name in enumerate(site.inputs):
        if len(plan.inputs[i]) < plan.ndim:
            node.input[i] = editor.unsqueeze(name, plan.new_axes(i))
            changes.append(describe(site, i, plan, plan.aligned_shape(i)))


#: An edit: ``(site, node, editor, changes, blocked, checker)``, ``node`` the site's node's copy to edit.
Edit = Callable[[Site, Any, Editor, list[str], list[Site], Any], None]


def walk(model: Any, shapes: Shapes, edit: Edit, checker: Target | None = None, functions: bool = False
         ) -> tuple[list[str], list[Site]]:
    """Rewrite every graph of ``model`` (the main graph, then each subgraph, depth first) with
    ``edit(site, node, editor, changes, blocked, checker)`` for each broadcasting node (``node``: its copy,
    to edit).  ``checker``: a lint target that sees every node (rewrite's view of the model is lint's).
    ``functions``: the body of a local function is rewritten too, when every call of it asks for the same
    edits (its calls share it; else it stays, and lint's findings name it).  Returns ``(changes, blocked)``."""
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    names, scopes = Names(model.graph), Walk(model)
    changes: list[str] = []
    blocked: list[Site] = []
    calls: dict[tuple[str, str], list[tuple[tuple, list[str]]]] = {}  # function key -> (its plan, its changes) per call

    def graph(g: Any, shapes: Shapes, checker: Target | None, prefix: tuple[str, ...], editor: Editor) -> None:
        for i, node, site in sites(g, shapes, prefix):
            new = copy_node(node)
            if checker is not None:
                checker.visit(node, site)
            if site is not None:
                edit(site, new, editor, editor.changes, blocked, checker)
            if holds_graphs(node) and not editor.constants:  # (a function's subgraphs and calls: left)
                here = (*prefix, node_label(node, i))
                for name, sub, inner, nested in scopes.scopes(node, i, shapes, edit=new, functions=functions):
                    inner_checker = None if checker is None else checker.child(inner, sub, nested, node)
                    if nested:
                        graph(sub, inner, inner_checker, (*here, name), _sub_editor(sub, editor))
                    else:
                        fn = scopes.functions[(node.domain, node.op_type)]
                        fn_opset = next((o.version for o in fn.opset_import if o.domain in ("", "ai.onnx")), opset)
                        body = Editor(sub, fn_opset, Names(sub), constants=True)
                        body.changes = []
                        graph(sub, inner, inner_checker, (*here, name), body)
                        calls.setdefault((fn.domain, fn.name), []).append((_plan(body), body.changes))
            editor.originals[len(editor.nodes)] = i
            editor.nodes.append(new)
        if not editor.constants:
            editor.finish()

    top = Editor(model.graph, opset, names)
    top.changes = changes
    graph(model.graph, shapes, checker, (), top)
    for key, found in calls.items():
        plans = {p for p, _ in found}
        fn = scopes.functions[key]
        if len(plans) == 1 and found[0][1]:
            _apply(fn, found[0][0])
            changes += found[0][1]
            changes.append(f"function {fn.name}: rewritten once for its {len(found)} call"
                           + ("s" if len(found) > 1 else ""))
    return changes, blocked


def _sub_editor(graph: Any, parent: Editor) -> Editor:
    editor = Editor(graph, parent.opset, parent.names)
    editor.changes = parent.changes
    return editor


def _plan(editor: Editor) -> tuple:
    """What a function's body became at one call: its nodes (inputs edited) and the new nodes, in order."""
    return tuple(("node", editor.originals[k], tuple(n.input)) if k in editor.originals
                 else ("new", n.SerializeToString(deterministic=True)) for k, n in enumerate(editor.nodes))


def _apply(fn: Any, plan: tuple) -> None:
    nodes = []
    for entry in plan:
        if entry[0] == "node":
            n = copy_node(fn.node[entry[1]])
            del n.input[:]
            n.input.extend(entry[2])
        else:
            n = onnx.NodeProto.FromString(entry[1])
        nodes.append(n)
    del fn.node[:]
    fn.node.extend(nodes)


def copy_node(node: Any) -> Any:
    new = onnx.NodeProto()
    new.CopyFrom(node)
    return new
