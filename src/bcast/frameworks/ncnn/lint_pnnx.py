"""The ``ncnn`` lint target: the model as pnnx converts it (``pnnx model.onnx``) and ncnn runs it.

pnnx (ncnn's recommended converter) does not hand ONNX's broadcasts to ncnn's
BinaryOp raw.  What it does, read from Tencent/ncnn ``tools/pnnx/src``
(commit a4d2ea1d, 2026-07-22) and checked by converting and running the corpus
of ``tests/models/convert_corpus`` with the PyPI wheel pnnx 20261020 and ncnn
1.0.20261020 (``tests/models/test_convert_corpus.py``):

- **The batch axis** (``pass_ncnn/solve_batch_index.cpp``, :mod:`bcast.frameworks.ncnn.pnnx_batch`): a tensor has one
  only where pnnx can tell: the input and output of a layer it knows to be
  batched (convolutions, pooling, normalizations, PReLU, interpolation, ...:
  :data:`BATCHED_OPS`), spread forward and backward through the graph
  (Transpose moves it, Squeeze/Unsqueeze shift it, a Reshape keeps it at axis 0
  only when its output starts with the batch size, other ops keep it); a 1-D
  tensor never has one, and the rest have none (pnnx's ``233``).  Constants
  have none.  ``convert_batch_layout.cpp`` keeps a batch axis out of ncnn's
  blob only at axis 0 (``default_ncnn_batch_axis``): elsewhere the blob holds
  the whole tensor.  A model without such a layer (a Linear stem, an MLP, a
  transformer block of MatMuls) runs in ncnn with the whole tensor as the blob.
- **Binary ops** (``pass_ncnn/insert_reshape_numpy_binaryop_broadcast.cpp``):
  the batch axis is dropped from each operand, and when the ranks differ pnnx
  inserts a Reshape that pads the lower-rank operand with leading 1s, numpy's
  alignment made explicit; ncnn's same-rank broadcast (``src/layer/binaryop.cpp``)
  is then numpy's.  So a broadcast is computed right unless: both operands
  have a batch axis in different places (pnnx: "binaryop broadcast across batch
  axis ... is not supported"), an operand without a batch axis varies along it,
  or a blob has more than 4 dims ("binaryop tensor0 with rank 5 is not
  supported yet!"; ncnn's Mat holds 4).
- **Reductions over the batch axis** (``pass_ncnn/torch_mean.cpp``, ``torch_sum.cpp``,
  ``torch_max.cpp``, ...: "mean along batch axis is not supported yet"): pnnx drops the
  batch axis from the reduced axes, so ncnn reduces each batch item alone; with a batch
  larger than 1 the result is wrong.  It is reported at the broadcasting node that
  consumes it (``x - x.mean(0, keepdim=True)``: minibatch statistics).  A broadcast of a
  batch-1 operand against the batch is itself fine: ncnn's batched Mat broadcasts it.
- **Pow** (``pass_ncnn/expand_expression.cpp``): ``x ** 2`` becomes UnaryOp
  square (exact); any other exponent a BinaryOp POW, which the x86 wheel
  computes with a fast-math ``pow_ps`` that returns garbage (2.4e38) for a base
  <= 0 (deviation ``ncnn-fast-math``): reported unless the base is positive by
  construction (Sigmoid, Exp, Softplus, or a constant > 0).
- **PRelu** (``pass_level2/F_prelu.cpp``, ``pass_ncnn/F_prelu.cpp``): the slope
  is flattened to ``(numel,)`` and ncnn's PReLU applies it per channel (axis 1);
  right only for a single slope or one that varies along axis 1 alone (an NHWC
  ``(1,1,C)`` or ``(C,)`` slope is applied along H).
- **Comparisons and Where**: pnnx writes ``torch.gt`` / ``torch.lt`` /
  ``torch.where`` ... into the ``.param``: no ``pass_ncnn`` pass converts them
  and ncnn has no such layer, so loading the model fails.
"""

from __future__ import annotations

import math
import os
from types import SimpleNamespace
from typing import Any

import numpy as np

from ...core._format import format_shape as _fs
from ...core.dims import is_one
from ...models.findings import Finding
from ...models.onnx_model import node_label
from ...models.target import Row, Site, Target
from .deviations import NcnnRuntime
from .pnnx_batch import REDUCTIONS, batch_reductions, rows, solve_batch

__all__ = ["TARGET", "Checks", "Context", "check", "exact_power", "solve_batch", "unconvertible"]

TARGET = "ncnn"

#: Ops pnnx leaves as torch functions that no pass_ncnn pass converts: ncnn has no layer for them.
NO_NCNN_LAYER = {"Greater": "torch.gt", "Less": "torch.lt", "Equal": "torch.eq", "GreaterOrEqual": "torch.ge",
                 "LessOrEqual": "torch.le", "Where": "torch.where", "And": "torch.logical_and",
                 "Or": "torch.logical_or", "Xor": "torch.logical_xor", "BitwiseAnd": "torch.bitwise_and",
                 "BitwiseOr": "torch.bitwise_or", "BitwiseXor": "torch.bitwise_xor",
                 "BitShift": "torch.bitwise_left_shift/right_shift"}
#: The binary ops pnnx turns into an ncnn BinaryOp (expand_expression.cpp).
BINARY = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Mod", "Sum", "Mean"})
_POSITIVE = frozenset({"Sigmoid", "Exp", "Softplus"})
_SHAPE_OPS = frozenset({"Shape", "Size"})
class Context:
    """What the checks of a model's nodes read besides the node: pnnx's batch axes, producers, constants."""

    def __init__(self, model, shapes) -> None:
        self.model, self.shapes = model, shapes
        self._rows: list[tuple] | None = None
        self._batch: dict[str, int] | None = None
        self._reduced: dict[str, tuple] | None = None
        self._producers: dict[str, str] | None = None
        self.op_types: set[str] = set()
        consts = set(shapes.initializers)
        self._consumers: dict[str, list[tuple]] | None = None
        self._constant_nodes: dict[str, Any] = {}
        add = self.op_types.add
        for n in model.graph.node:  # one cheap pass; the batch axes are solved only when a verdict needs them
            add(n.op_type)
            # pnnx folds what is computed from constants alone (Constant nodes included), and a Shape/Size:
            # it converts for the static input shapes given to it (its fold_constants runs onnxruntime)
            if n.op_type in _SHAPE_OPS or all(i in consts for i in n.input if i):
                consts.update(n.output)
            if n.op_type == "Constant" and n.output:
                self._constant_nodes[n.output[0]] = n
        self.consts = consts
        self.inputs = frozenset(v.name for v in model.graph.input if v.name not in self.consts)

    @property
    def rows(self) -> list:
        if self._rows is None:
            self._rows = rows(self.model)
        return self._rows

    @property
    def batch(self) -> dict:
        if self._batch is None:
            self._batch = solve_batch(self.model, self.shapes, self.rows)
        return self._batch

    @property
    def reduced(self) -> dict:
        if self._reduced is None:
            self._reduced = batch_reductions(self.model, self.shapes, self.batch, self.rows) \
                if not self.op_types.isdisjoint(REDUCTIONS) else {}
        return self._reduced

    def binary_batch(self, site) -> tuple:
        """The batch axes of a binary site's inputs, or a stand-in with the same verdict: with one input a
        constant (no batch axis) and the same verdict whether the other's batch axis is 0, another axis or
        none, the graph need not be solved (a folded BatchNorm's Mul and Add, most constants of a CNN)."""
        names = site.inputs
        if self._batch is None and len(names) == 2:
            consts = [n in self.consts for n in names]
            if sum(consts) == 1:
                gi = [n in self.inputs for n in names]
                options = [tuple(None if c else b for c in consts) for b in (None, 0, 1)]  # 1: any axis but 0
                if len({tuple(_binary(site.plan, o, gi)) for o in options}) == 1:
                    return options[0]
        return tuple(self.batch.get(n) for n in names)

    def constant(self, name: str):
        """The values of an initializer or of a Constant node's output (numpy), or None."""
        values = self.shapes.constant(name)
        node = self._constant_nodes.get(name) if values is None else None
        if node is None or len(node.attribute) != 1:
            return values
        import onnx

        a = node.attribute[0]
        try:
            v = onnx.helper.get_attribute_value(a)
            values = onnx.numpy_helper.to_array(v) if a.type == onnx.AttributeProto.TENSOR else \
                np.asarray(v) if a.name in ("value_float", "value_floats", "value_int", "value_ints") else None
        except Exception:  # noqa: BLE001 - a tensor whose data do not fill it: not a known value
            return None
        return values

    def folded(self, site) -> bool:
        """Whether pnnx computes the node at conversion time (every input a constant to pnnx)."""
        return all(n in self.consts for n in site.inputs if n)

    def consumers(self, name: str) -> list:
        if self._consumers is None:
            made: dict[str, list[tuple]] = {}
            for row in self.rows:
                for i in row[2]:
                    made.setdefault(i, []).append(row)
            self._consumers = made
        return self._consumers.get(name, [])

    def gelu_tanh(self, site) -> bool:
        """Whether a Pow(x, 3) starts the tanh-GELU that pnnx fuses into one GELU layer (pass_level2/F_gelu.cpp,
        F_gelu_3/4): Pow(x, 3) -> Mul(0.044715) -> Add(x) -> Mul(sqrt(2/pi)) -> Tanh."""
        x, out = site.inputs[0], site.node.output[0] if site.node.output else ""

        def step(name, op, want=None, other=None):
            rows = self.consumers(name)
            if len(rows) != 1 or rows[0][1] != op or len(rows[0][2]) != 2:
                return None
            a, b = rows[0][2]
            o = b if a == name else a
            if other is not None and o != other:
                return None
            if want is not None:
                v = self.constant(o)
                if v is None or v.size != 1 or abs(float(v.ravel()[0]) - want) > 1e-4:
                    return None
            return rows[0][3][0] if rows[0][3] else None

        m = step(out, "Mul", 0.044715)
        a = m and step(m, "Add", other=x)
        t = a and step(a, "Mul", math.sqrt(2 / math.pi))
        return bool(t) and any(r[1] == "Tanh" for r in self.consumers(t))

    def positive(self, name: str) -> bool:
        """Whether a value is > 0 by construction (its producer, or a constant's values)."""
        values = self.constant(name)
        if values is not None:
            return bool(values.size) and bool((values > 0).all())
        if self._producers is None:
            self._producers = {o: t for _, t, _, outs in self.rows for o in outs if o}
        return self._producers.get(name) in _POSITIVE

    def scalar(self, name: str):
        values = self.constant(name)
        if values is None or values.ndim > 1 or values.size != 1 or values.dtype.kind not in "fiub":
            return None
        return float(values.ravel()[0])

    def key(self, site) -> tuple:
        """What :func:`check` reads of the site's inputs besides their shapes (for lint's cache)."""
        op = site.op.name
        if self.folded(site):
            return (True,)
        if op in NO_NCNN_LAYER:
            return ()
        pow_ = op == "Pow"
        binary = op in BINARY and site.plan is not None and len(site.plan.inputs) == 2
        return (self.binary_batch(site) if binary else None,
                tuple((n in self.inputs, self.reduced.get(n), pow_ and self.positive(n), self.scalar(n) if pow_
                       else None) for n in site.inputs), pow_ and self.gelu_tanh(site))


def _outer_names(graph) -> set:
    """The names a subgraph (and the subgraphs in it) reads from the scopes around it."""
    import onnx

    made = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    used: set[str] = set()
    for node in graph.node:
        used.update(n for n in node.input if n)
        for a in node.attribute:
            subs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
            for sub in subs:
                used |= _outer_names(sub)
        made.update(node.output)
    return used - made


#: The newest IR version and ai.onnx opset pnnx 20261020's bundled onnxruntime (1.30) reads.
PNNX_ORT_IR, PNNX_ORT_OPSET = 13, 26


def _pnnx_inputs(graph):
    """None, or what pnnx's eliminate_initializer_input gets wrong: (the model's own inputs it removes, the
    initializers it keeps as inputs).  It collects the positions of the initializers in graph.input, then for
    each, in order, moves the element now at that position to the end (if there is one) and removes the last
    element: an initializer listed before the model's inputs shifts the positions after it."""
    inits = {t.name for t in graph.initializer}
    names = [v.name for v in graph.input]
    if not inits or inits.isdisjoint(names):
        return None
    left = list(names)
    for i in [k for k, n in enumerate(names) if n in inits]:
        if left:
            left.pop(i if i < len(left) else -1)
    wanted = [n for n in names if n not in inits]
    if left == wanted:
        return None
    return [n for n in wanted if n not in left], [n for n in left if n in inits]


def _external_data(model, source) -> str | None:
    """Why pnnx reads none of the model's external data, or None: load_onnx.cpp reads one file,
    ``MODEL.onnx.data`` beside the model (each tensor at its offset in it), whatever the tensors' ``location``
    says.  ``source``: (the model's file, the external data files its tensors named), or None (in memory)."""
    import onnx

    path, locs = source if source is not None else (None, ())
    if not locs:  # a model in memory: only the tensors it still marks external
        locs = sorted({e.value for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL
                       for e in t.external_data if e.key == "location"})
    if len(locs) > 1:
        return (f"its weights are in {len(locs)} external data files ({', '.join(map(repr, locs[:3]))}) and pnnx "
                "reads one")
    if not locs or path is None:
        return None
    want = os.path.basename(path) + ".data"
    if os.path.normpath(locs[0]) != want:
        return (f"its weights are in {locs[0]!r} and pnnx reads external data only from {want!r} (the model's file "
                "name + .data)")
    return None


def _batch_constant_concats(model, shapes, ctx) -> list:
    """Concat nodes that join a batched tensor with a constant whose axis 0 is the batch (> 1): pnnx writes the
    constant as a MemoryData blob holding the whole tensor, batch axis included, while the batched blobs
    have none (``cls.expand(B, -1, -1)`` of a ViT, folded by the exporter or by pnnx)."""
    ctx = ctx if ctx is not None else Context(model, shapes)
    out = []
    for i, node in enumerate(model.graph.node):
        if node.op_type != "Concat" or not any(n in ctx.consts for n in node.input):
            continue
        batched = [n for n in node.input if ctx.batch.get(n) == 0]
        if not batched:
            continue
        for n in node.input:
            s = shapes.get(n)
            if n in ctx.consts and s and len(s) >= 2 and type(s[0]) is int and s[0] > 1:
                out.append((i, node, f"{n} {_fs(s)} is a constant to pnnx, and ncnn's blob of it keeps its axis 0 "
                            f"({s[0]}) while {batched[0]}'s blob has no batch axis: the Concat joins blobs of "
                            "different ranks and computes garbage (seen: a ViT's class token expanded to the batch)",
                            "expand the constant to batch 1 (or build it from the batched input), so that ncnn's "
                            "batch broadcasting repeats it"))
                break
    return out


def unconvertible(model, shapes, ctx=None, source=None) -> list:
    """The nodes pnnx cannot convert at all: ``(index, node, reason, fix)``.

    A model of opset 1-6: pnnx crashes on it whatever its ops (its first node carries the finding).

    A model newer than pnnx's bundled onnxruntime 1.30 reads (IR > 13, opset > 26): pnnx crashes on it.

    A model whose graph.input lists initializers ahead of its own inputs (IR 3): pnnx removes the wrong
    entries (onnx's light model zoo: densenet121, inception_v1, squeezenet, vgg19).

    A Loop: pnnx keeps it as a ``Loop`` layer, which ncnn has not (loading fails).

    An If: ``pass_onnx/inline_if_graph.cpp`` inlines the branch of a constant condition (an
    initializer; a Constant node is folded into one first), and pnnx 20261020 crashes (signal
    11, no model written) on any other If, and on one whose branches read an initializer of
    the main graph (its shape inference, run before the inlining, sees those names undefined)."""
    import onnx

    why = _external_data(model, source)
    if why and model.graph.node:
        return [(0, model.graph.node[0], f"pnnx loads this model without its weights: {why} (load_onnx.cpp): the "
                 "converted model computes with garbage (or pnnx crashes)",
                 "save the model with all its external data in one file named after it (onnx.save(model, "
                 "'NAME.onnx', save_as_external_data=True, location='NAME.onnx.data')), or with none")]
    ir, opset = model.ir_version, shapes.opset
    if (ir > PNNX_ORT_IR or (opset is not None and opset > PNNX_ORT_OPSET)) and model.graph.node:
        # seen by running pnnx 20261020: "Unsupported model IR version: 14, max supported IR version: 13", or
        # "Current official support for domain ai.onnx is till opset 26", then signal 11
        return [(0, model.graph.node[0], f"pnnx cannot convert a model of IR {ir}, opset {opset}: pnnx 20261020 "
                 f"folds constants with its bundled onnxruntime 1.30, which reads IR <= {PNNX_ORT_IR} and ai.onnx "
                 f"opset <= {PNNX_ORT_OPSET}, and crashes (signal 11, no model written) on a newer model, whatever "
                 "its ops (onnx 1.23's helper.make_model writes IR 14, opset 28 by default)",
                 f"save the model with ir_version {PNNX_ORT_IR} (model.ir_version = {PNNX_ORT_IR}) and, for a newer "
                 f"opset, onnx.version_converter.convert_version(model, {PNNX_ORT_OPSET}); or export for opset "
                 f"<= {PNNX_ORT_OPSET}")]
    wrong = _pnnx_inputs(model.graph)
    if wrong is not None and model.graph.node:
        removed, kept = wrong
        what = ", ".join([f"removes {', '.join(map(repr, removed[:3]))}"] * bool(removed)
                         + [f"keeps {', '.join(map(repr, kept[:3]))} as graph inputs"] * bool(kept))
        return [(0, model.graph.node[0], "pnnx mistakes the model's graph inputs: graph.input lists initializers "
                 "(an IR 3 habit) ahead of the model's own, and pnnx's eliminate_initializer_input "
                 "(pass_onnx/eliminate_initializer_input.cpp) removes them at their first positions one after "
                 f"another, which each removal has shifted: it {what}, and the conversion fails",
                 "remove the initializers from graph.input (IR >= 4 does not list them), or list them after the "
                 "model's inputs")]
    if shapes.opset is not None and shapes.opset < 7 and model.graph.node:
        # seen by running pnnx 20261020: Add-6, same shapes or broadcast/axis, one node or more
        return [(0, model.graph.node[0], f"pnnx cannot convert a model of opset {shapes.opset}: pnnx 20261020 crashes "
                 "(signal 11, no model written) on opset 1-6 models, whatever their ops",
                 "bcast rewrite MODEL --target onnx -o OUT.onnx (upgrades it to opset 7, broadcast/axis made numpy "
                 "broadcasting), then convert that")]
    op_types = ctx.op_types if ctx is not None else {n.op_type for n in model.graph.node}
    concats = _batch_constant_concats(model, shapes, ctx) if "Concat" in op_types else []
    if not {"If", "Loop"} & op_types:
        return concats
    consts = {t.name for t in model.graph.initializer}
    consts |= {o for n in model.graph.node if n.op_type == "Constant" for o in n.output}  # rare: If/Loop only
    out = []
    for i, node in enumerate(model.graph.node):
        if node.op_type == "Loop":
            out.append((i, node, "pnnx writes this Loop as a Loop layer (and its trip count and condition as "
                        "pnnx.Expression layers) that ncnn does not have: loading the model fails",
                        "unroll the loop (a constant trip count) before converting, or run it outside ncnn"))
            continue
        if node.op_type != "If" or not node.input:
            continue
        outer = set()
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                outer |= _outer_names(a.g)
        read = sorted(outer & {t.name for t in model.graph.initializer})
        if node.input[0] not in consts:
            why = "its condition is computed, and pnnx inlines an If only on a constant condition"
        elif read:
            why = f"its branches read the main graph's initializers ({', '.join(read[:3])})"
        else:
            continue
        out.append((i, node, f"pnnx cannot convert this If: {why} (pass_onnx/inline_if_graph.cpp); pnnx 20261020 "
                    "crashes and writes no model",
                    "export each branch as its own model, or make the condition a constant and give the branches "
                    "their own Constant nodes"))
    return concats + out


def check(site, ctx: Context) -> list:
    """The rows (kind, rule, reason, fix, notes) of one broadcasting node under pnnx -> ncnn."""
    op = site.op.name
    plan = site.plan
    if ctx.folded(site):
        return []  # pnnx's fold_constants computes it with onnxruntime: ncnn never sees it
    if op in NO_NCNN_LAYER:
        return [Row("unsupported", "ncnn",
                 f"pnnx writes {op} as {NO_NCNN_LAYER[op]}, a layer ncnn does not have: loading the model fails",
                 "compute it from ops ncnn has (e.g. a mask from Sign/Relu/Clip arithmetic), or cut it out of the "
                 "model", ())]
    reduced = [(n, ctx.reduced[n]) for n in site.inputs if n in ctx.reduced]
    if reduced:
        n, (index, op_type, size) = reduced[0]
        label = node_label(ctx.rows[index][0], index)
        return [Row("unsupported", "ncnn",
                 f"{n} comes from {op_type} {label} over the batch axis (size {size}): pnnx drops the batch axis from "
                 "the reduced axes (\"mean along batch axis is not supported yet\"), so ncnn reduces each batch item "
                 "alone", "none that bcast knows: compute batch statistics outside ncnn", ())]
    if op == "PRelu":
        return _prelu(site, plan)
    if op == "Expand" and len(site.inputs) > 1 and site.inputs[1] not in ctx.consts:
        return [Row("unsupported", "ncnn", f"the shape {site.inputs[1]} is computed from the model's input values, not "
                 "from constants or static shapes: pnnx 20261020 cannot fold it (its onnxruntime run fails: "
                 "\"invalid expand shape\") and crashes (signal 11, no model written)",
                 "give Expand a constant shape (or one computed by Shape ops from the inputs' shapes)", ())]
    if op in _VARIADIC:
        rows = _variadic(op, site.inputs)
        if rows is not None:
            return rows
    if op not in BINARY or len(plan.inputs) != 2:
        return []
    rows = _binary(plan, ctx.binary_batch(site), [n in ctx.inputs for n in site.inputs])
    if rows:
        return rows
    if op == "Pow":
        return _pow(site, ctx)
    return []


_VARIADIC = frozenset({"Max", "Min", "Sum", "Mean"})


def _variadic(op, names):
    """What pnnx does with the variadic ops (pass_onnx.cpp), seen on onnx's backend node tests: None where a
    two-input op's checks decide (Max/Min of 2, Sum of 2 or more: unrolled into Adds)."""
    n = len(names)
    if op == "Mean":
        return [Row("unsupported", "ncnn", "pnnx maps no Mean (pass_onnx.cpp has no aten op for it): it writes a Mean "
                 "layer, which ncnn does not have: loading the model fails",
                 "write it as Sum then a Mul by 1/n (ops pnnx converts)", ())]
    if op == "Sum" and n == 1:
        return [Row("unsupported", "ncnn", "pnnx 20261020 crashes (signal 11, no model written) on a 1-input Sum",
                 "remove the node: a 1-input Sum is its input", ())]
    if op in ("Max", "Min") and n > 2:
        return [Row("differs", "ncnn", f"pnnx maps {op} to aten::{op.lower()} (pass_onnx.cpp) with the first two "
                 f"inputs only: ncnn's BinaryOp computes the {op.lower()} of {names[0]} and {names[1]} and ignores "
                 f"{', '.join(names[2:])}", f"write it as a chain of 2-input {op} nodes", ())]
    if op in ("Max", "Min") and n == 1:
        return [Row("differs", "ncnn", f"pnnx maps a 1-input {op} to torch.{op.lower()}(x), which ncnn computes as a "
                 "Reduction over every axis: one value where ONNX returns the input",
                 "remove the node: a 1-input " + op + " is its input", ())]
    return None


def _prelu(site, plan) -> list:
    x, slope = plan.inputs
    aligned = plan.aligned_shape(1)
    numel = 1
    for d in slope:
        numel = numel * d if type(d) is int else numel
    if numel == 1 or (len(x) >= 2 and all(is_one(d) for k, d in enumerate(aligned) if k != 1)
                      and aligned[1] == x[1]):
        return []
    return [Row("differs", "ncnn",
             f"pnnx flattens the slope {_fs(slope)} to ({numel},) and ncnn's PReLU applies it per channel (axis 1"
             f"{', size ' + str(x[1]) if len(x) > 1 else ''}): ONNX applies it as {_fs(aligned)} on {_fs(x)}",
             "bcast rewrite MODEL --target ncnn -o OUT.onnx (PRelu -> Relu(x) + (x - Relu(x)) * slope, a Mul pnnx "
             "broadcasts right)",
             ())]


def exact_power(value):
    """The integer exponent ``bcast rewrite --target ncnn`` writes as a product (1, or 3 to 8 either sign), or None."""
    if value is None or not math.isfinite(value) or value != int(value):
        return None
    n = int(value)
    return n if n == 1 or 3 <= abs(n) <= 8 else None


def _pow(site, ctx: Context) -> list:
    base, exponent = site.inputs
    if ctx.scalar(exponent) == 2.0:
        return []  # expand_expression.cpp: "replace pow 2 with square"
    if ctx.positive(base):
        return []
    if ctx.scalar(exponent) == 3.0 and ctx.gelu_tanh(site):
        return []  # pnnx fuses the tanh-GELU around it into one GELU layer
    n = exact_power(ctx.scalar(exponent))
    return [Row("differs", "ncnn",
             "pnnx turns this Pow into a BinaryOp POW, and ncnn's x86 POW (fast-math pow_ps) returns garbage "
             "(2.4e38) for a base <= 0 [ncnn-fast-math]",
             f"bcast rewrite MODEL --target ncnn -o OUT.onnx (x ** {n} -> a product of x)" if n is not None else
             "none that bcast knows: use this Pow only on bases > 0 (e.g. after Sigmoid/Exp/Softplus)", ())]


def _binary(plan, batch, graph_input) -> list:
    batch = list(batch)
    names = plan.names
    b0, b1 = batch
    if b0 is not None and b1 is not None and b0 != b1:
        return [Row("unsupported", "ncnn", f"the inputs' batch axes are {b0} and {b1}: pnnx: \"binaryop broadcast "
                 f"across batch axis {b0} and {b1} is not supported\"", "none that bcast knows", ())]
    # the ncnn batch axis: only axis 0 is kept out of the blob (convert_batch_layout.cpp)
    shapes = list(plan.inputs)
    nb = [0 if b == 0 and len(shapes[i]) >= 2 else None for i, b in enumerate(batch)]
    for i, s in enumerate(shapes):  # "assume reshape 5-rank tensor has batch_index 0" (not a graph input: it
        if batch[i] is None and len(s) == 5 and is_one(s[0]) and not graph_input[i]:  # is fed as a 5-D Mat)
            nb[i] = 0
    blobs = [s[1:] if nb[i] == 0 else tuple(s) for i, s in enumerate(shapes)]
    big = [i for i, s in enumerate(blobs) if len(s) > 4]
    if big:
        return [Row("unsupported", "ncnn",
                 f"{names[big[0]]} {_fs(shapes[big[0]])} is a {len(blobs[big[0]])}-D blob in ncnn (pnnx: "
                 f"\"binaryop tensor with rank {len(shapes[big[0]])} is not supported yet!\"): ncnn's Mat holds 4 "
                 "dims", "reshape to at most 4 dims (besides a batch axis at 0) around this op", ())]
    if nb[0] == nb[1]:  # both or neither batched at 0: pnnx pads the lower rank with leading 1s, numpy's alignment
        return []
    k = 0 if nb[0] == 0 else 1  # the batched one; the other's dim that faces its batch axis must be 1
    other = shapes[1 - k]
    lead = len(other) - (len(shapes[k]) - 1)  # the other's axes that face the batch axis or lie beyond it
    if lead >= 1 and any(not is_one(d) for d in other[:lead]):
        return [Row("unsupported", "ncnn",
                 f"{names[1 - k]} {_fs(other)} has no batch axis but varies along {names[k]}'s batch axis: "
                 "ncnn's blobs have none", "none that bcast knows", ())]
    return []


class Checks(Target):
    """The checks of target ``ncnn``: the model as pnnx converts it and ncnn runs it (see the module docstring)."""

    name = TARGET
    runtimes = decisive_runtimes = tuple(NcnnRuntime)

    def __init__(self, shapes, graph, parent: Target | None = None) -> None:
        super().__init__(shapes, graph, parent)
        # pnnx's batch axes are solved per graph: a body's values from outside it count as having none
        self.ctx = Context(SimpleNamespace(graph=graph), shapes)

    def context(self, site: Site) -> tuple:
        return self.ctx.key(site)

    def check(self, site: Site) -> list[Row]:
        return check(site, self.ctx)

    def finish(self, model) -> list[Finding]:
        return [Finding(node_label(node, i), node.op_type, self.shapes.opset, tuple(node.input),
                        tuple(self.shapes.get(n) if n else None for n in node.input),
                        node.output[0] if node.output else "", None, "unsupported", self.name, None, reason, fix)
                for i, node, reason, fix in unconvertible(model, self.shapes, self.ctx, self.source)]
