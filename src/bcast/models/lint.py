"""``bcast lint`` (``bcast.lint``): every broadcasting node of an ONNX model, checked.

The model is loaded whole (:func:`bcast.models.onnx_model.load`), onnx's shape inference
runs once, and the nodes are walked once in graph order.  Every node whose op
is in :data:`bcast.onnx.OPS` (the op table: the op -> rule binding per opset,
legacy ``broadcast``/``axis`` forms included) gets its plan from bcast's rule,
and bcast's output shape replaces onnx's for the nodes after it.  A node is
reported (a :class:`Finding`) when:

=========== ==================================================================
kind        meaning
=========== ==================================================================
unknown     an input's shape (its rank) is not known: the node cannot be checked
invalid     the shapes do not broadcast under the node's own spec
unproven    they broadcast only if symbolic or unknown dims meet constraints
            (onnx's shape inference silently assumes they do)
legacy      (target onnx) an opset 1-6 broadcast/axis form: onnxruntime has no
            kernel for it
differs     the target computes the node with another alignment than the spec
            (ncnn's left alignment, OpenVINO's per-channel PRelu slope, ...)
unsupported the target cannot compute it at all (ncnn: pairs outside its rules,
            rank > 4, a broadcast across the batch axis; onnx2ncnn: an op it
            does not convert)
values      the target runs the node through a kernel that computes other values
            on some inputs: a value record of the deviation registry
            (:mod:`bcast.models.values`), e.g. ncnn's POW on a negative base
=========== ==================================================================

Every graph is checked: If/Loop/Scan bodies (nested too) and the body of each
model-local function at each call; a finding's ``node`` is its path,
``If_0/then_branch/Mul_3`` (:mod:`bcast.models.graphs`).

Each finding has the node's name, op, input names and shapes, the output
shape, the kind, a reason, a fix, and the runtime deviations of the target
that bear on it (:mod:`bcast.frameworks.deviations`).

Targets, one per conversion path, each the ``lint_*`` module of its framework's package
(found by name, :func:`bcast.models.target.found`): ``onnx`` (the spec, and onnxruntime's
deviations: :mod:`bcast.frameworks.onnx.lint_onnx`), ``openvino`` (its ONNX frontend's rules:
:mod:`bcast.frameworks.openvino.lint_openvino`), ``ncnn`` (the model as pnnx converts it and ncnn
runs it: :mod:`bcast.frameworks.ncnn.lint_pnnx`), ``onnx2ncnn`` (the legacy converter's raw
BinaryOp on its blobs: :mod:`bcast.frameworks.ncnn.lint_onnx2ncnn`), and the deployment stacks
(:mod:`bcast.models.deploy`): ``tensorrt`` (the ONNX-TensorRT parser), ``tflite`` (the builtins a
converter writes, LiteRT's kernels), ``onnx2tf`` (those builtins, and onnx2tf's own NHWC
transpositions: :mod:`bcast.frameworks.tflite.lint_onnx2tf`), ``coreml`` (MIL, rank <= 5), ``tosa``
(onnx-mlir, level 8K), ``webnn`` and ``nnapi``.  This module walks the
model and asks the target's :class:`~bcast.models.target.Target` about each broadcasting node.

>>> from onnx import helper, TensorProto as T
>>> x = helper.make_tensor_value_info("x", T.FLOAT, [1, 3, 2, 3])
>>> s = helper.make_tensor_value_info("s", T.FLOAT, [3])
>>> y = helper.make_tensor_value_info("y", T.FLOAT, None)
>>> g = helper.make_graph([helper.make_node("PRelu", ["x", "s"], ["y"], name="act")], "g", [x, s], [y])
>>> m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
>>> lint(m)
[]
>>> [f.kind for f in lint(m, target="openvino")]
['differs']
"""

from __future__ import annotations

import os
import shlex
from functools import partial
from typing import Any

# first: without onnx, its one-line InputError
from .onnx_model import DEFAULT_DOMAINS, Shapes, check_text, load, node_label

import onnx  # noqa: E402

from ..core.dims import MAX_RANK, UNKNOWN
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..frameworks.onnx import ops as bonnx
from ..rules._cache import BoundedCache
from .findings import Finding, Report, format_finding
from .graphs import Walk, holds_graphs
from .layout import constant_names, layout_rows, parse_layout
from .target import Row, Site, Target, found
from .values import value_rows

__all__ = ["TARGETS", "KINDS", "Finding", "Site", "lint", "lint_report", "sites", "format_finding"]

#: Every target's checks, from the framework packages' ``lint_*`` modules (:func:`bcast.models.target.found`).
TARGET_CHECKS: dict[str, type[Target]] = {name: module.Checks for name, module in found("lint").items()}
TARGETS = tuple(TARGET_CHECKS)
KINDS = ("unknown", "invalid", "unproven", "legacy", "differs", "unsupported", "values")


# --------------------------------------------------------------------------- the walk


def _resolve(op_type: str, domain: str, opset: int):
    """``(Op, Version)`` of a broadcasting op at ``opset``, or None (not one of bcast's ops, or not yet)."""
    op = bonnx.OPS.get(op_type)
    if op is None or domain not in DEFAULT_DOMAINS:
        return None
    found = [v for v in op.versions if v.since <= opset]
    return (op, found[-1]) if found else None


_KNOWN_ATTRS: dict = {}  # (op name, version since) -> the attribute names it takes


def _known_attrs(op: bonnx.Op, version: bonnx.Version) -> frozenset:
    key = (op.name, version.since)
    known = _KNOWN_ATTRS.get(key)
    if known is None:
        known = _KNOWN_ATTRS[key] = frozenset(a.name for a in op.attributes(version))
    return known


def _attrs(node, op: bonnx.Op, version: bonnx.Version) -> dict:
    """The node's attributes that the op's version takes (others, e.g. Add-1's consumed_inputs, do not
    bear on broadcasting)."""
    if not node.attribute:
        return {}
    known = _known_attrs(op, version)
    out = {}
    for a in node.attribute:
        if a.name in known:
            v = onnx.helper.get_attribute_value(a)
            out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def _shape_input(site_inputs, k, shapes: Shapes):
    """The rule's 'shape' of a shape input (Expand's): its values when constant, else unknown dims."""
    values = shapes.constant(site_inputs[k])
    if values is not None and values.ndim == 1:
        return tuple(int(v) if v >= 0 else UNKNOWN for v in values)
    length = shapes.get(site_inputs[k])
    if length is not None and len(length) == 1 and type(length[0]) is int:
        if length[0] > MAX_RANK:  # 2**62 entries declared: no tuple that long
            raise InputError(f"shape input {site_inputs[k]!r} has {length[0]} entries: a rank of more than {MAX_RANK}")
        return (UNKNOWN,) * length[0]
    return None


def _key(site: Site):
    """What a site's checks depend on, hashable; None if an attribute value is not (a list)."""
    key = (site.op.name, site.version.since, site.shapes, tuple(sorted(site.attrs.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


_SPECS: BoundedCache[tuple, Plan | BroadcastError | InputError] = BoundedCache()  # site key -> its plan or error


def _spec(site: Site) -> Plan | BroadcastError | InputError:
    """The plan of the node's own rule (or its error); nodes alike share one (a model repeats few shapes),
    across runs too (bounded, as the plan cache is)."""
    key = site.key
    result = _SPECS.get(key) if key is not None else None
    if result is not None:
        return result
    try:
        result = bonnx.plan(site.op.name, *site.shapes, opset=site.opset, **site.attrs)
    except (BroadcastError, InputError) as e:
        result = e.with_traceback(None)  # kept: no frames kept with it
    if key is not None:
        _SPECS.put(key, result)
    return result


def sites(model, shapes: Shapes, prefix: tuple = ()):
    """Walk one graph once, in order (``model``: a model, its main graph, or a graph of ``shapes``'s
    scope, with ``prefix`` the path to it): yields ``(index, node, site)`` for every node,
    ``site`` None for a node that is not a broadcasting op.  Each site's spec is computed,
    and its output shape stored in ``shapes`` for the nodes after it."""
    opset = min(shapes.opset, bonnx.LATEST_OPSET)
    # (op_type, domain) -> (Op, Version) or None: a model repeats few op types
    resolved: dict[tuple[str, str], tuple[bonnx.Op, bonnx.Version] | None] = {}
    graph = model.graph if isinstance(model, onnx.ModelProto) else model
    for i, node in enumerate(graph.node):
        kind = (node.op_type, node.domain)
        if kind in resolved:
            found = resolved[kind]
        else:
            found = resolved[kind] = _resolve(*kind, opset)
        if found is None:
            if shapes.bcast_only:
                shapes.follow(node)
            yield i, node, None
            continue
        op, version = found
        names = list(node.input)
        check_text("the model", names)  # the names a finding prints (models.load checked every other)
        while names and not names[-1]:
            names.pop()  # optional inputs left out (Gemm's C)
        dims = [shapes.get(n) if n else None for n in names]
        refused = None
        if op.shape_input is not None and op.shape_input < len(names):
            try:
                dims[op.shape_input] = _shape_input(names, op.shape_input, shapes)
            except InputError as e:
                refused = e
        path = (*prefix, node_label(node, i))
        site = Site(i, node, op, version, opset, tuple(names), tuple(dims), _attrs(node, op, version),
                    label="/".join(path), path=path)
        site.unknown = () if refused else tuple(n for n, s in zip(names, dims) if s is None)
        site.key = _key(site)
        if refused:
            site.spec = refused
        elif not site.unknown:
            site.spec = _spec(site)
        if site.plan is not None and node.output:
            elem = onnx.TensorProto.BOOL if op.output not in site.version.types else shapes.elem_type(names[0])
            shapes.set(node.output[0], site.plan.shape, elem)
        yield i, node, site


# --------------------------------------------------------------------------- findings


_CLI_FLAGS = {"axis": "--axis", "broadcast": "--broadcast", "transA": "--trans-a", "transB": "--trans-b"}


def _explain_cmd(err: BroadcastError) -> str:
    """The ``bcast explain`` command that shows the alignment of a failed broadcast."""
    args = ["bcast", "explain", *(",".join(map(str, s)) + ("," if len(s) == 1 else "") if s else "[]"
                                  for s in err.shapes), "--rule", err.rule]
    for k, v in err.attrs:
        if k in ("transA", "transB") and v:
            args.append(_CLI_FLAGS[k])
        elif k in ("axis", "broadcast") and v is not None:
            args += [_CLI_FLAGS[k], str(v)]
    return " ".join(shlex.quote(a) for a in args)


# --------------------------------------------------------------------------- the entry points


def _spec_findings(site: Site, failed: dict[str, str], checker: Target) -> list[Row]:
    """What the node's own spec says: unknown shapes, invalid, unproven."""
    if site.unknown:
        why = [f"{n!r}" + _origin(n, failed, checker.shapes) for n in site.unknown]
        return [Row("unknown", None, "the shape of " + ", ".join(why) + " is not known (not even its rank): "
                    "the node cannot be checked",
                    "declare the shapes (graph inputs, value_info), or make them inferable by onnx")]
    if isinstance(site.spec, InputError):
        return [Row("invalid", site.version.rule, str(site.spec), "fix the node's attributes")]
    if isinstance(site.spec, BroadcastError):
        e = site.spec
        return [Row("invalid", e.rule, str(e), "change the shapes (or the node's attributes) so that they "
                    f"broadcast under its rule; `{_explain_cmd(e)}` shows the alignment",
                    checker.notes(e, site.op.name))]
    plan = site.plan
    if plan is not None and plan.constraints:
        need = "; ".join(str(c) for c in plan.constraints)
        return [Row("unproven", plan.rule,
                    f"the shapes broadcast only if {need} (onnx shape inference assumes so without a word)",
                    "make sure the sizes meet it, or give those dims static sizes")]
    return []


def _origin(name: str, failed: dict, shapes: Shapes) -> str:
    """Where an unknown shape comes from (looked up only when one is unknown)."""
    if name in failed:
        return f" (the output of node {failed[name]}, which bcast could not check)"
    for i, node in enumerate(shapes.graph.node):
        if name in node.output:
            return f" (the output of node {node_label(node, i)}, {node.op_type}, whose shape onnx cannot infer)"
    return " (a graph input without a shape)" if any(v.name == name for v in shapes.graph.input) else ""


def _make(site: Site, target: str, row: Row) -> Finding:
    out = site.node.output[0] if site.node.output else ""
    return Finding(site.label, site.op.name, site.opset, site.inputs, site.shapes, out,
                   site.plan.shape if site.plan is not None else None, row.kind, target, row.rule, row.reason,
                   row.fix, tuple(row.notes), site.path)


#: The target's rows of each distinct site, keyed on (target, site key, context): a check reads nothing else,
#: and models repeat few shapes (bounded, as bcast's plan cache).
_CHECKS: BoundedCache[tuple, tuple[Row, ...]] = BoundedCache()


def checker(target: str, shapes: Shapes, graph: Any) -> Target:
    """The checks of ``target`` for the main graph ``graph`` (they name the runtimes whose deviation
    records speak for the target: its ``runtimes`` and ``decisive_runtimes``)."""
    return TARGET_CHECKS[target](shapes, graph)


def lint_report(model, target: str = "onnx", layout: str | None = None, inputs=()) -> Report:
    """Like :func:`lint`, with the counts (nodes, broadcasting nodes checked)."""
    if isinstance(model, (str, os.PathLike)) and os.fspath(model).endswith(".param"):  # an ncnn model
        from .ncnn_param import lint_param

        if layout is not None:
            raise InputError("layout: a layout change is checked on an ONNX model (the converter's input), not on "
                             "an ncnn .param")
        return lint_param(model, inputs, None if target == "onnx" else target)
    if inputs:
        raise InputError("inputs: the Input shapes of an ncnn .param; an ONNX model declares its own")
    if target not in TARGETS:
        raise InputError(f"unknown target {target!r}; the targets are: {', '.join(TARGETS)}")
    layouts = parse_layout(layout) if layout is not None else None
    locations: list[str] = []
    proto = load(model, locations=locations)
    shapes = Shapes(proto)
    report = Report(target, shapes.opset, 0, 0)
    walk = Walk(proto)
    walk.count(proto.graph)
    checks = checker(target, shapes, proto.graph)
    if isinstance(model, (str, os.PathLike)):  # the file's own name and its external data files
        checks.source = (os.fspath(model), tuple(locations))
    _lint_graph(proto.graph, shapes, checks, (), walk, report, {},
                (layouts, constant_names(proto)) if layouts else None)
    report.findings += checks.finish(proto)  # nodes the converter cannot take at all (not broadcasting sites)
    return report


def _lint_graph(graph: Any, shapes: Shapes, checker: Target, prefix: tuple[str, ...], walk: Walk, report: Report,
                failed: dict[str, str], layout: tuple | None = None) -> None:
    """Lint one graph (and, depth first, the graphs inside its nodes) into ``report``.  ``failed``: output
    name -> label of the node that made it without a plan; ``layout``: the layout changes and the model's
    constants (:func:`bcast.models.layout.layout_rows`), or None."""
    target = checker.name
    report.nodes += len(graph.node)
    for i, node, site in sites(graph, shapes, prefix):
        checker.visit(node, site)
        if holds_graphs(node):  # If/Loop/Scan, a local function's call
            here = (*prefix, node_label(node, i))
            for name, sub, inner, nested in walk.scopes(node, i, shapes):
                _lint_graph(sub, inner, checker.child(inner, sub, nested, node),
                            (*here, name), walk, report, failed, layout)
        if site is None:
            continue
        report.checked += 1
        rows = _spec_findings(site, failed, checker)
        if site.plan is not None:
            key = None if site.key is None else (target, site.key, checker.context(site))
            found = _CHECKS.get(key) if key is not None else None
            if found is None:
                found = tuple(checker.check(site))
                if key is not None:
                    _CHECKS.put(key, found)
            rows += found
            rows += value_rows(checker.decisive_runtimes, checker.route(site),
                               partial(_elem_types, shapes, site.inputs), site.op.name)
            if layout is not None:
                rows += layout_rows(site, *layout)
        else:
            failed.update({o: site.label for o in node.output})
        report.findings += [_make(site, target, r) for r in rows]


def _elem_types(shapes: Shapes, names: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(map(shapes.elem_type, names))


def lint(model: Any, target: str = "onnx", layout: str | None = None, inputs=()) -> list[Finding]:
    """Check every broadcasting node of an ONNX model for ``target``.

    Parameters
    ----------
    model : str, os.PathLike or onnx.ModelProto
        The model (a path: read whole, external data checked to stay in its folder).
    target : {"onnx", "ncnn", "openvino", "onnx2ncnn"}
        The runtime the model is for (see the module docstring).
    layout : str, optional
        A layout change the converter makes (``"NCHW:NHWC"``, ``"channels-last"``): the broadcasts
        it breaks are findings too (:mod:`bcast.models.layout`).
    inputs : sequence of str
        For an ncnn ``.param`` (linted by :mod:`bcast.models.ncnn_param`, target ncnn): the Input
        shapes, ``"in0=1,3,224,224"``.

    Returns
    -------
    list of Finding
        Empty when every node is fine.

    Raises
    ------
    InputError
        The file is not a whole ONNX model, the target is unknown, or the layout malformed.
    """
    return lint_report(model, target, layout, inputs).findings
