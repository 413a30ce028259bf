"""pnnx's batch axis (``pass_ncnn/solve_batch_index.cpp``): which axis of each value pnnx takes
for the batch, and the values a reduction over it computes (see :mod:`bcast.frameworks.ncnn.lint_pnnx`).

A tensor has a batch axis only where pnnx can tell: the input and output of a layer it knows to
be batched (:data:`BATCHED_OPS`), spread forward and backward through the graph (Transpose moves
it, Squeeze/Unsqueeze shift it, a Reshape keeps it at axis 0 only when its output starts with the
batch size, other ops keep it); a 1-D tensor never has one, and the rest have none (pnnx's
``233``).  Constants have none.
"""

from __future__ import annotations

from ...core.dims import is_one

__all__ = ["BATCHED_OPS", "NONE", "REDUCTIONS", "batch_reductions", "rows", "solve_batch"]

#: ONNX ops that pnnx maps to a layer of solve_batch_index.cpp's is_known_operator_with_batch_index_0 list.
BATCHED_OPS = frozenset({
    "Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool",
    "BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization", "PRelu",
    "Resize", "Upsample", "LRN", "DepthToSpace", "SpaceToDepth", "GridSample", "RMSNormalization",
})
NONE = None  # no batch axis (pnnx's 233)


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            import onnx
            return onnx.helper.get_attribute_value(a)
    return default


def _axes(node, shapes, rank):
    axes = _attr(node, "axes")
    if axes is None and len(node.input) > 1 and node.input[1]:
        values = shapes.constant(node.input[1])
        axes = None if values is None else [int(v) for v in values.ravel()]
    return None if axes is None else sorted(a % rank for a in axes) if rank else list(axes)


def _forward(node, b, shapes):
    """Where the batch axis ``b`` of the node's first input lands in its output (NONE: gone)."""
    t = node.op_type
    x = shapes.get(node.input[0]) if node.input else None
    rank = len(x) if x is not None else 0
    if t == "Transpose":
        perm = _attr(node, "perm")
        perm = list(perm) if perm is not None else list(range(rank))[::-1]
        return perm.index(b) if b in perm else NONE
    if t == "Unsqueeze":
        out = shapes.get(node.output[0])
        axes = _axes(node, shapes, len(out) if out is not None else 0)
        if axes is None:
            return NONE
        for a in axes:
            if a <= b:
                b += 1
        return b
    if t == "Squeeze":
        axes = _axes(node, shapes, rank)
        if axes is None:
            axes = [k for k, d in enumerate(x or ()) if d == 1]
        return NONE if b in axes else b - sum(a < b for a in axes)
    if t == "Reshape":
        out = shapes.get(node.output[0])
        if x is None or out is None or b != 0 or not out:
            return NONE
        return 0 if x[0] == out[0] else NONE  # pnnx's keep_batch_index for axis 0; other cases given up
    if t == "Flatten":
        axis = _attr(node, "axis", 1) % max(rank, 1)
        return b if b < axis and axis == 1 else NONE
    return b


def _backward(node, b, shapes):
    """Where the batch axis ``b`` of the node's output is in its first input (NONE: not there)."""
    t = node.op_type
    x = shapes.get(node.input[0]) if node.input else None
    if t == "Transpose":
        perm = _attr(node, "perm")
        perm = list(perm) if perm is not None else list(range(len(x or ())))[::-1]
        return perm[b] if b < len(perm) else NONE
    if t in ("Unsqueeze", "Squeeze", "Reshape", "Flatten"):
        for k in range(len(x or ())):
            if _forward(node, k, shapes) == b:
                return k
        return NONE
    return b


#: The ops that move the batch axis (solve_batch_index.cpp's permute/transpose/squeeze/unsqueeze/reshape/flatten);
#: every other op keeps it where it is, on every input and output.
_MOVERS = frozenset({"Transpose", "Unsqueeze", "Squeeze", "Reshape", "Flatten"})


def rows(model) -> list:
    """``(node, op_type, inputs, outputs)`` of every node of the main graph (protobuf read once)."""
    return [(n, n.op_type, tuple(n.input), tuple(n.output)) for n in model.graph.node]


def solve_batch(model, shapes, nodes=None) -> dict:
    """pnnx's batch axis of every value of the main graph: name -> axis (absent: none)."""
    graph = model.graph
    nodes = rows(model) if nodes is None else nodes
    if not any(t in BATCHED_OPS for _, t, _, _ in nodes):
        return {}  # no layer pnnx knows to be batched: no batch axis anywhere (233)
    varying = {v.name for v in graph.input} - {t.name for t in graph.initializer}
    producers: dict[str, tuple] = {}
    consumers: dict[str, list[tuple]] = {}
    for row in nodes:  # graph order: a value varies if it is computed from a graph input
        _, _, ins, outs = row
        if not varying.isdisjoint(ins):
            varying.update(o for o in outs if o)
        for o in outs:
            producers[o] = row
        for i in ins:
            consumers.setdefault(i, []).append(row)
    batch = {}
    todo = []
    for _, t, ins, outs in nodes:
        if t in BATCHED_OPS and ins and outs:
            for name in (ins[0], outs[0]):
                if name in varying and name not in batch:
                    batch[name] = 0
                    todo.append(name)
    while todo:
        name = todo.pop()
        b = batch[name]
        for node, t, ins, outs in consumers.get(name, ()):
            if t in BATCHED_OPS:
                continue
            if t in _MOVERS:
                if ins[0] != name:
                    continue
                where = _forward(node, b, shapes)
                if where is NONE:
                    continue
            else:
                where = b
            for o in outs:
                if o and o not in batch and o in varying:
                    batch[o] = where
                    todo.append(o)
        row = producers.get(name)
        if row is None or row[1] in BATCHED_OPS or not row[2]:
            continue
        node, t, ins, _ = row
        if t in _MOVERS:
            where = _backward(node, b, shapes)
            ins = ins[:1]
            if where is NONE:
                continue
        else:
            where = b
        for i in ins:
            if i and i not in batch and i in varying:
                s = shapes.get(i)
                if s is not None and where < len(s):
                    batch[i] = where
                    todo.append(i)
    for name in list(batch):
        s = shapes.get(name)
        if s is not None and len(s) <= 1:
            del batch[name]  # "always treat 1-dim tensor as no batch axis"
    return batch


#: The reductions pnnx maps to an ncnn Reduction (torch_mean.cpp, torch_sum.cpp, torch_max.cpp, ...).
REDUCTIONS = frozenset({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                        "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"})


def batch_reductions(model, shapes, batch: dict, nodes=None) -> dict:
    """The values computed by a reduction over ncnn's batch axis (axis 0) of a batch larger than 1, and the
    values one-input ops compute from them: name -> (the reduction's node index, op, batch size)."""

    out: dict[str, tuple[int, str, object]] = {}
    if not batch:
        return out
    for i, (node, t, ins, outs) in enumerate(rows(model) if nodes is None else nodes):
        if not ins or not outs:
            continue
        x = ins[0]
        if t in REDUCTIONS and batch.get(x) == 0:
            s = shapes.get(x)
            if s is None or not s or is_one(s[0]):
                continue
            axes = _axes(node, shapes, len(s))
            if axes is None and _attr(node, "noop_with_empty_axes", 0) and len(node.input) < 2:
                continue
            if axes is None or 0 in axes:
                out[outs[0]] = (i, t, s[0])
        elif x in out and len([n for n in ins if n]) == 1:
            out.update(dict.fromkeys(filter(None, outs), out[x]))
    return out


