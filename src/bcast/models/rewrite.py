"""``bcast rewrite`` (``bcast.rewrite``): make an ONNX model's broadcasts explicit for a target.

- ``target="onnx"``: upgrade the opset 1-6 ``broadcast``/``axis`` ops (rule
  ``onnx-legacy``) to opset 7's numpy broadcasting.  B is placed at ``axis``
  by the legacy rule; numpy right-aligns it, so B gets the trailing 1s it
  needs by an Unsqueeze (``rank(A) - rank(B) - axis`` of them: onnx's own 6->7
  converter inserts ``rank(A) - rank(B)`` and fails, deviation
  ``onnx-version-converter-axis``), and loses ``broadcast``/``axis``.  Then
  ``onnx.version_converter`` takes the model to opset 7 for every other op.
  A legacy node that is invalid under its own rule, or whose ranks are not
  known, has no upgrade: nothing is written.
- ``target="onnx2ncnn"`` (the legacy converter, :mod:`bcast.frameworks.ncnn.lint_onnx2ncnn`): the
  operands of the nodes lint flags are reshaped, an initializer into a new
  initializer of its aligned shape, a computed operand by a Reshape with a
  constant shape (not Unsqueeze: onnx2ncnn makes it an ExpandDims that breaks);
  scalars and unflagged nodes are left alone.  What ncnn still cannot compute
  (rank > 4, across the batch axis) stays in the report's findings.
- ``target="ncnn"`` (pnnx -> ncnn): pnnx inserts those reshapes itself; the
  rewrite replaces what it converts wrong by an exact equivalent it converts
  right (:mod:`bcast.frameworks.ncnn.rewrite_pnnx`: Pow with an integer exponent, a PRelu slope
  ncnn would apply per channel).
- ``target="openvino"``: the inputs OpenVINO aligns differently from the spec
  (PRelu's per-channel slope heuristic) get the output's rank.

Every graph is rewritten: the main graph, If/Loop/Scan bodies (nested too), and the body of
a model-local function when every call of it asks for the same edits (its constants are then
Constant nodes); a finding's path names where (:mod:`bcast.models.graphs`).  The ``ncnn``
rewrite covers the main graph only.

Graph input and output names stay; the new values and nodes get fresh names.
The output is written atomically and never over the input model.

>>> from onnx import helper, TensorProto as T, numpy_helper
>>> import numpy as np
>>> x = helper.make_tensor_value_info("x", T.FLOAT, [1, 2, 3, 4])
>>> y = helper.make_tensor_value_info("y", T.FLOAT, None)
>>> w = numpy_helper.from_array(np.ones((3, 4), np.float32), "w")
>>> g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g", [x], [y], [w])
>>> report = rewrite(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "onnx2ncnn")
>>> report.changes
['#0 (Add): initializer B w (3,4) -> (1,1,3,4)']
>>> report.findings
[]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .onnx_model import Shapes, load, save_atomic  # first: without onnx, its one-line InputError

import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

from ..core._format import format_shape
from ..core.errors import InputError
from .graphs import Walk, holds_graphs, subgraphs
from .lint import lint, sites
from .onnx_model import node_label

__all__ = ["TARGETS", "Rewrite", "rewrite"]

TARGETS = ("onnx", "ncnn", "onnx2ncnn", "openvino")
#: The opset the legacy forms are upgraded to (the first with numpy broadcasting).
UPGRADE_OPSET = 7


@dataclass
class Rewrite:
    """What :func:`rewrite` did: the new model, one line per change, what the target still cannot
    compute (lint findings of the new model), and the file written (None: nothing written)."""

    target: str
    model: object
    changes: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    out: str | None = None

    def to_dict(self) -> dict:
        return {"target": self.target, "out": self.out, "written": self.out is not None,
                "changes": list(self.changes), "findings": [f.to_dict() for f in self.findings]}


class _Names:
    """Fresh value and node names, unlike any in the model's graphs (subgraphs see the outer names)."""

    def __init__(self, *graphs) -> None:
        self.used = set()
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


class _Editor:
    """Builds one graph's new node list: each node, with the Unsqueezes it needs just before it."""

    def __init__(self, graph, opset: int, names: _Names, constants: bool = False) -> None:
        self.graph = graph
        self.opset = opset
        self.names = names
        self.constants = constants  # a function's body has no initializers: Constant nodes instead
        self.nodes = []
        self.inits = []
        self.originals = {}  # index in nodes -> index of the graph's node it is (a copy of)
        self.made = {}  # (value, axes) -> the Unsqueeze's output (shared by the nodes that need it)

    def const(self, array, name: str) -> None:
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
            self.const(_int64(axes), axes_name)
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
            self.const(_int64(dims), shape_name)
            node = helper.make_node("Reshape", [value, shape_name], [out], name=name)
        else:
            node = helper.make_node("Reshape", [value], [out], name=name, shape=dims)
        self.nodes.append(node)
        self.made[key] = out
        return out

    def reshaped(self, value: str, array, shape: tuple) -> str:
        """A new initializer: the elements of initializer ``value`` (``array``) with ``shape``."""
        key = (value, "initializer", shape)
        if key not in self.made:
            name = self.names.fresh(value)
            self.const(array.reshape(shape), name)
            self.made[key] = name
        return self.made[key]

    def finish(self):
        g = self.graph
        del g.node[:]
        g.node.extend(self.nodes)
        g.initializer.extend(self.inits)


def _int64(values):
    import numpy as np

    return np.array(values, dtype=np.int64)


def _drop_attrs(node, names) -> None:
    keep = [a for a in node.attribute if a.name not in names]
    del node.attribute[:]
    node.attribute.extend(keep)


def _describe(site, i, plan, aligned) -> str:
    return (f"{site.label}: Unsqueeze {plan.names[i]} {site.inputs[i]} {format_shape(plan.inputs[i])} "
            f"to {format_shape(aligned)}")


def _align_inputs(site, node, editor: _Editor, changes: list) -> None:
    """Give every input of ``node`` the output's rank, at its aligned shape under the site's plan."""
    plan = site.plan
    for i, name in enumerate(site.inputs):
        if len(plan.inputs[i]) < plan.ndim:
            node.input[i] = editor.unsqueeze(name, plan.new_axes(i))
            changes.append(_describe(site, i, plan, plan.aligned_shape(i)))


def _walk(model, shapes: Shapes, edit, checker=None, functions: bool = False) -> tuple:
    """Rewrite every graph of ``model`` (the main graph, then each subgraph, depth first) with
    ``edit(site, node, editor, changes, blocked, checker)`` for each broadcasting node (``node``: its copy,
    to edit).  ``checker``: a lint target that sees every node (rewrite's view of the model is lint's).
    ``functions``: the body of a local function is rewritten too, when every call of it asks for the same
    edits (its calls share it; else it stays, and lint's findings name it).  Returns ``(changes, blocked)``."""
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    names, walk, changes, blocked = _Names(model.graph), Walk(model), [], []
    calls = {}  # function key -> [(its plan, its changes)] per call

    def graph(g, shapes, checker, prefix, editor):
        for i, node, site in sites(g, shapes, prefix):
            new = _copy(node)
            if checker is not None:
                checker.visit(node, site)
            if site is not None:
                edit(site, new, editor, editor.changes, blocked, checker)
            if holds_graphs(node) and not editor.constants:  # (a function's subgraphs and calls: left)
                here = (*prefix, node_label(node, i))
                for name, sub, inner, nested in walk.scopes(node, i, shapes, edit=new, functions=functions):
                    inner_checker = None if checker is None else checker.child(inner, sub, nested, node)
                    if nested:
                        graph(sub, inner, inner_checker, (*here, name), _sub_editor(sub, editor))
                    else:
                        fn = walk.functions[(node.domain, node.op_type)]
                        fn_opset = next((o.version for o in fn.opset_import if o.domain in ("", "ai.onnx")), opset)
                        body = _Editor(sub, fn_opset, _Names(sub), constants=True)
                        body.changes = []
                        graph(sub, inner, inner_checker, (*here, name), body)
                        calls.setdefault((fn.domain, fn.name), []).append((_plan(body), body.changes))
            editor.originals[len(editor.nodes)] = i
            editor.nodes.append(new)
        if not editor.constants:
            editor.finish()

    top = _Editor(model.graph, opset, names)
    top.changes = changes
    graph(model.graph, shapes, checker, (), top)
    for key, found in calls.items():
        plans = {p for p, _ in found}
        fn = walk.functions[key]
        if len(plans) == 1 and found[0][1]:
            _apply(fn, found[0][0])
            changes += found[0][1]
            changes.append(f"function {fn.name}: rewritten once for its {len(found)} call"
                           + ("s" if len(found) > 1 else ""))
    return changes, blocked


def _sub_editor(graph, parent: _Editor) -> _Editor:
    editor = _Editor(graph, parent.opset, parent.names)
    editor.changes = parent.changes
    return editor


def _plan(editor: _Editor) -> tuple:
    """What a function's body became at one call: its nodes (inputs edited) and the new nodes, in order."""
    return tuple(("node", editor.originals[k], tuple(n.input)) if k in editor.originals
                 else ("new", n.SerializeToString(deterministic=True)) for k, n in enumerate(editor.nodes))


def _apply(fn, plan: tuple) -> None:
    nodes = []
    for entry in plan:
        if entry[0] == "node":
            n = _copy(fn.node[entry[1]])
            del n.input[:]
            n.input.extend(entry[2])
        else:
            n = onnx.NodeProto.FromString(entry[1])
        nodes.append(n)
    del fn.node[:]
    fn.node.extend(nodes)


def _onnx2ncnn_edit(site, node, editor, changes, blocked, checker) -> None:
    """A node lint flags for onnx2ncnn, that a reshape makes right: its initializers reshaped to their aligned
    shapes (new initializers), its computed inputs Reshaped; nothing else is touched."""
    if site.plan is None or not any(kind in ("differs", "unsupported") for kind, *_ in checker.check(site)):
        return
    steps = checker.steps(site)
    if steps is None:
        return
    arrays = {}  # the initializers whose elements fill the new shape (a Constant's value: a Reshape, folded too)
    for i, shape, how in steps:
        array = checker.shapes.constant(site.inputs[i]) if how == "initializer" else None
        if array is not None and array.size == _size(shape):
            arrays[i] = array
    for i, shape, how in steps:
        name = site.inputs[i]
        if i in arrays:
            node.input[i] = editor.reshaped(name, arrays[i], shape)
            what = "initializer"
        else:
            node.input[i] = editor.reshape(name, shape)
            what = "Reshape"
        changes.append(f"{site.label}: {what} {site.plan.names[i]} {name} {format_shape(site.plan.inputs[i])} "
                       f"-> {format_shape(shape)}")


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _onnx2ncnn(model):
    """The nodes lint flags for onnx2ncnn, with reshaped initializers and Reshapes (see the module docstring)."""
    from ..frameworks.ncnn.lint_onnx2ncnn import Onnx2ncnn

    shapes = Shapes(model)
    changes, _ = _walk(model, shapes, _onnx2ncnn_edit, Onnx2ncnn(shapes, model.graph), functions=True)
    return model, changes, []


def _onnx_edit(site, node, editor, changes, blocked, checker) -> None:
    if site.version.rule == "onnx-legacy":
        if site.plan is None:
            blocked.append(site)
        else:
            _upgrade_legacy(site, node, editor, changes)


def _onnx(model):
    """The legacy broadcast/axis forms upgraded, then opset 7 by onnx's converter."""
    shapes = Shapes(model)
    if shapes.opset >= UPGRADE_OPSET:
        return model, [], []
    changes, blocked = _walk(model, shapes, _onnx_edit)
    if blocked:
        return model, changes, blocked
    outputs = {v.name for v in model.graph.output}
    model.graph.value_info.extend(v for v in shapes.value_infos() if v.name not in outputs)  # the converter needs them
    try:
        model = onnx.version_converter.convert_version(model, UPGRADE_OPSET)
    except Exception as e:  # the converter refuses some other op
        raise InputError(f"onnx's version converter cannot take the model to opset {UPGRADE_OPSET}: "
                         f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    changes.append(f"opset {shapes.opset} -> {UPGRADE_OPSET} (onnx.version_converter, for the other ops)")
    return model, changes, []


def _upgrade_legacy(site, node, editor: _Editor, changes: list) -> None:
    """B placed at axis gets the trailing 1s numpy's right alignment needs; broadcast/axis go."""
    plan = site.plan
    a, b = plan.inputs
    if site.attrs.get("broadcast") and not all(d == 1 for d in b):
        start = plan.axis_maps[1][0] if b else len(a)
        trailing = len(a) - start - len(b)
        if trailing > 0:
            axes = tuple(range(len(b), len(b) + trailing))
            node.input[1] = editor.unsqueeze(site.inputs[1], axes)
            changes.append(_describe(site, 1, plan, tuple(b) + (1,) * trailing))
    _drop_attrs(node, ("broadcast", "axis"))
    changes.append(f"{site.label}: {site.op.name}-{site.version.since} broadcast/axis -> numpy broadcasting")


def _copy(node):
    new = onnx.NodeProto()
    new.CopyFrom(node)
    return new


def _pnnx(model):
    """pnnx -> ncnn: the findings with an exact rewrite (:mod:`bcast.frameworks.ncnn.rewrite_pnnx`; the main graph)."""
    from ..frameworks.ncnn.rewrite_pnnx import rewrite_model

    return rewrite_model(model, _Names(model.graph), _copy)


def _openvino_edit(site, node, editor, changes, blocked, checker) -> None:
    """A node OpenVINO aligns differently from the spec (PRelu's per-channel slope): its inputs get the
    output's rank, and OpenVINO then aligns as the spec does."""
    if site.plan is not None and any(kind == "differs" and "aligns the inputs" in reason
                                     for kind, _, reason, *_ in checker.check(site)):
        _align_inputs(site, node, editor, changes)


def _openvino(model):
    from .lint import _target

    shapes = Shapes(model)
    changes, _ = _walk(model, shapes, _openvino_edit, _target("openvino")(shapes, model.graph), functions=True)
    return model, changes, []


_REWRITERS = {"onnx": _onnx, "ncnn": _pnnx, "onnx2ncnn": _onnx2ncnn, "openvino": _openvino}
assert tuple(_REWRITERS) == TARGETS


def rewrite(model, target: str, out=None, *, force: bool = False) -> Rewrite:
    """Rewrite an ONNX model so that ``target`` computes every broadcast as its spec says.

    Parameters
    ----------
    model : str, os.PathLike or onnx.ModelProto
        The model; a path is read whole (see :func:`bcast.models.onnx_model.load`).
    target : {"onnx", "ncnn", "onnx2ncnn", "openvino"}
        ``onnx``: upgrade the opset 1-6 broadcast/axis forms; ``onnx2ncnn``: equal
        ranks for every BinaryOp; ``ncnn``: pnnx's exact rewrites; ``openvino``:
        equal ranks where OpenVINO aligns otherwise (see the module docstring).
    out : str or os.PathLike, optional
        Where to write the new model (atomically).  Never the input model; an
        existing file only with ``force=True``.  None: nothing is written.

    Returns
    -------
    Rewrite
        The new model, the changes, the findings lint still has for the target,
        and the path written (None when nothing was: no ``out``, or a legacy
        node that has no upgrade, listed in ``findings``).

    Raises
    ------
    InputError
        A bad model file, an unknown target, ``out`` that is the input or exists.
    """
    if target not in TARGETS:
        raise InputError(f"unknown rewrite target {target!r}; the targets are: {', '.join(TARGETS)}")
    source = None if isinstance(model, onnx.ModelProto) else os.fspath(model)
    original = load(model)
    proto = onnx.ModelProto()
    proto.CopyFrom(original)
    new, changes, blocked = _REWRITERS[target](proto)
    if blocked:  # the findings that stop the upgrade: the nodes' own lint findings
        labels = {s.label for s in blocked}
        return Rewrite(target, None, changes, [f for f in lint(original, target) if f.node in labels])
    report = Rewrite(target, new, changes, lint(new, target))
    if out is not None:
        report.out = save_atomic(new, out, source=source, force=force)
    return report
