"""Translate: one framework's broadcast as another framework's explicit ops.

:func:`translate` takes the :class:`~bcast.core.plan.Plan` of a source rule and a
target (``numpy``, ``onnx``, ``openvino`` or ``ncnn``) and returns the
:class:`Recipe`: the *minimal* sequence of explicit steps -- Reshape /
Unsqueeze of some inputs, then the op, or the target's broadcast-to op -- that
makes the target compute what the source computes: the same output shape and
the same element of every input at every output position.

How: the plan says where every input axis lands (``Plan.aligned_shape(i)``).
For each way the target can express the op (its *forms*: ONNX's numpy
broadcasting; OpenVINO's ``auto_broadcast`` numpy, pdpd or none; ncnn's
BinaryOp alignment; Expand, Broadcast...), bcast tries every input as it is,
reshaped to the part of its aligned shape from its first mapped axis (numpy's
implicit left padding does the rest), or reshaped to the full output rank,
fewest reshapes first, and keeps the first combination whose plan under the
target's own rule aligns every input exactly as the source does.  A form that
would hit a recorded runtime deviation (:mod:`bcast.frameworks.deviations`: OpenVINO's
CPU plugin on pdpd, ncnn's garbage pairs...) is skipped, so a recipe computes
the right result on the real runtime, not only by the spec; the skipped ones
are listed in ``Recipe.avoided``.

Recipes are plain data (no runtime is imported to make one):

- ``numpy``: a Python expression over the input names (``a``, ``b``, ... the
  plan's names in lower case), for ``eval`` with ``np`` bound;
- ``onnx``: nodes at opset 13 (Unsqueeze with its axes as an input, Reshape
  and Expand with a shape initializer), in ONNX's textual syntax;
  :meth:`Recipe.model` parses it into a ``ModelProto``;
- ``openvino``: ops with their ``auto_broadcast`` (or Broadcast ``mode``);
  :meth:`Recipe.model` builds an ``ov.Model``;
- ``ncnn``: the ``.param`` text as pnnx writes it (magic 7767517, layer and
  blob counts, Input layers, Reshape with ``0=w 1=h 11=d 2=c``, BinaryOp
  with ``0=op_type``); inputs are the blobs ``in0``, ``in1``, the output ``out0``.

Recipes assume float32 tensors (Select's cond: bool): the deviations are
consulted for that element type, on the CPU plugin for OpenVINO.  Where no
recipe exists, :class:`TranslationError` says why.

>>> from bcast import infer
>>> print(translate(infer((2, 3, 4, 5), (3, 4), rule="paddle", axis=1), to="numpy"))
np.add(a, b.reshape(3, 4, 1))
>>> print(translate(infer((2, 3, 4), (4,)), to="onnx", op="Mul").text())
<ir_version: 7, opset_import: ["" : 13]>
bcast_translate (float[2,3,4] a, float[4] b) => (float[2,3,4] y)
{
   y = Mul (a, b)
}
>>> translate(infer((2, 3), (3,), rule="pdpd", axis=1), to="openvino").steps[-1].attrs
(('auto_broadcast', 'pdpd'), ('axis', 1))
>>> translate(infer((2, 3, 4), (3, 4), (4,)), to="ncnn", op="Where")
Traceback (most recent call last):
...
bcast.translation.search.TranslationError: cannot translate numpy A (2,3,4), B (3,4), C (4,) to ncnn: ncnn has no select layer ...
"""

from __future__ import annotations

import itertools
import keyword
from dataclasses import dataclass, field
from typing import Any

from ..core._format import brief, format_shape
from ..core.dims import is_static, json_shape
from ..core.errors import BroadcastError, InputError
from ..core.plan import Plan
from ..frameworks.ncnn.deviations import NcnnRuntime
from ..frameworks.onnx.deviations import OnnxRuntime
from ..frameworks.openvino.deviations import OpenVINORuntime
from ..rules import infer

__all__ = ["TARGETS", "OPS", "Op", "Recipe", "Step", "TranslationError", "translate", "model", "run_many"]

#: The frameworks a plan translates to.
TARGETS = ("numpy", "onnx", "openvino", "ncnn")

#: The ONNX opset of the recipes (Unsqueeze takes its axes as an input from 13 on) and its IR version.
ONNX_OPSET, ONNX_IR = 13, 7

#: The magic number that opens an ncnn .param file.
NCNN_MAGIC = 7767517


class TranslationError(ValueError):
    """The source plan is valid, but the target cannot compute it.

    Attributes: ``target``, ``rule``, ``shapes``, ``names`` (the source
    plan's) and ``reason`` (what the target lacks).  The CLI exits 1 on it,
    as on a :class:`~bcast.core.errors.BroadcastError`.
    """

    def __init__(self, plan: Plan, target: str, reason: str) -> None:
        self.target, self.rule, self.reason = target, plan.rule, reason
        self.shapes, self.names = plan.inputs, plan.names
        ins = ", ".join(f"{n} {format_shape(s)}" for n, s in zip(plan.names, plan.inputs))
        super().__init__(f"cannot translate {plan.rule} {ins} to {target}: {reason}")

    def __reduce__(self):
        return (_rebuild_error, (self.__dict__.copy(), str(self)))

    def to_dict(self) -> dict:
        """The ``error`` object of ``bcast translate --json``."""
        return {"kind": "untranslatable", "reason": self.reason, "message": str(self)}


def _rebuild_error(state: dict, message: str) -> TranslationError:
    err = TranslationError.__new__(TranslationError)
    err.__dict__.update(state)
    ValueError.__init__(err, message)
    return err


# --------------------------------------------------------------------------- the ops, in every framework


@dataclass(frozen=True)
class Op:
    """One op as each framework names it.  ``kind``: ``binary`` (element-wise,
    two inputs), ``where`` (cond, then, else), ``prelu``, ``gemm`` or
    ``broadcast`` (data to a shape); ``ncnn``: BinaryOp's op_type, or None
    where ncnn has no such BinaryOp."""

    name: str
    kind: str
    numpy: str
    onnx: str
    openvino: str
    ncnn: int | None = None
    ncnn_name: str | None = None


#: The op table: bcast's (ONNX's) name first; any of the names below selects the op.
OPS = (
    Op("Add", "binary", "add", "Add", "Add", 0, "ADD"),
    Op("Sub", "binary", "subtract", "Sub", "Subtract", 1, "SUB"),
    Op("Mul", "binary", "multiply", "Mul", "Multiply", 2, "MUL"),
    Op("Div", "binary", "divide", "Div", "Divide", 3, "DIV"),
    Op("Max", "binary", "maximum", "Max", "Maximum", 4, "MAX"),
    Op("Min", "binary", "minimum", "Min", "Minimum", 5, "MIN"),
    Op("Pow", "binary", "power", "Pow", "Power", 6, "POW"),
    Op("Where", "where", "where", "Where", "Select"),
    Op("PRelu", "prelu", "prelu", "PRelu", "PRelu"),
    Op("Gemm", "gemm", "matmul", "Gemm", "MatMul"),
    Op("Expand", "broadcast", "broadcast_to", "Expand", "Broadcast"),
)
_BY_NAME = {alias.lower(): o for o in OPS for alias in (o.name, o.numpy, o.onnx, o.openvino, o.ncnn_name) if alias}

#: Source rules whose op is fixed; every other rule is element-wise (a binary op, or Where for 3 inputs).
_RULE_OP = {
    "bidirectional": "Expand", "explicit": "Expand", "openvino-broadcast-pdpd": "Expand",
    "openvino-select": "Where", "openvino-prelu": "PRelu", "onnx-gemm": "Gemm",
}
#: Element-wise rules that may also take PRelu (a slope broadcast into data).
_PRELU_RULES = ("unidirectional", "openvino-prelu")

#: Why ncnn cannot express an op kind (its BinaryOp is its one broadcasting layer).
_NCNN_CANNOT = {
    "where": "ncnn has no select layer and its BinaryOp takes 2 blobs: a 3-input op has no ncnn form",
    "prelu": "ncnn's PReLU takes its slope as a weight (one per channel), not as a broadcast blob",
    "gemm": "Gemm is a matrix product, not a BinaryOp: ncnn's broadcasting layer cannot express it",
    "broadcast": "ncnn has no broadcast-to op: its BinaryOp broadcasts between two blobs only",
}


def _op(name: Any) -> Op:
    found = _BY_NAME.get(name.strip().lower()) if isinstance(name, str) else None
    if found is None:
        raise InputError(f"translate: unknown op {brief(name)}; the ops are: {', '.join(o.name for o in OPS)} "
                         "(or their numpy, onnx, openvino or ncnn names)")
    return found


def _source_op(plan: Plan, op: Any) -> Op:
    """The op the plan is translated for: ``op`` (default: the rule's own, else Add for two
    inputs and Where for three), checked against the rule and the inputs."""
    fixed = _RULE_OP.get(plan.rule)
    n = len(plan.inputs)
    o = _op(fixed or ("Where" if n == 3 else "Add") if op is None else op)
    if fixed is not None:
        if o.name != fixed:
            raise InputError(f"translate: rule {plan.rule} is the op {fixed}, not {o.name}")
        return o
    if o.kind == "prelu" and plan.rule not in _PRELU_RULES:
        raise InputError(f"translate: PRelu broadcasts by the rules {', '.join(_PRELU_RULES)}, not {plan.rule}")
    if o.kind not in ("binary", "where", "prelu"):
        raise InputError(f"translate: {o.name} is the op of the rules "
                         f"{', '.join(r for r, v in _RULE_OP.items() if v == o.name)}, not of {plan.rule}")
    arity = 3 if o.kind == "where" else 2
    if n != arity:
        raise InputError(f"translate: {o.name} takes {arity} inputs; the plan has {n} ({', '.join(plan.names)})")
    return o


# --------------------------------------------------------------------------- recipes


@dataclass(frozen=True)
class Step:
    """One node: ``op`` as the target names it, the names of its inputs and output,
    and its attributes (constant inputs included: ``axes``, ``shape``...)."""

    op: str
    inputs: tuple
    output: str
    attrs: tuple = ()

    def attr(self, name: str, default: Any = None) -> Any:
        return dict(self.attrs).get(name, default)

    def to_dict(self) -> dict:
        return {"op": self.op, "inputs": list(self.inputs), "output": self.output,
                "attrs": {k: _jsonable(v) for k, v in self.attrs}}


def _jsonable(v):
    return json_shape(v) if isinstance(v, tuple) else v


@dataclass(frozen=True)
class Recipe:
    """What the target runs: its inputs (name, shape, element type), the steps,
    the output (``output``, of shape ``shape``).

    ``avoided`` holds the deviations (``Finding``) that made bcast pass over a
    shorter form (e.g. OpenVINO's pdpd on its CPU plugin).
    """

    target: str
    plan: Plan
    op: str
    inputs: tuple
    steps: tuple
    output: str
    shape: tuple
    avoided: tuple = field(default=(), compare=False)

    def text(self) -> str:
        """The target's own text: a numpy expression, ONNX's textual syntax, OpenVINO
        ops, or an ncnn .param file.  It holds only where ``plan.constraints`` hold
        (symbolic dims: ``N == M or N == 1 or M == 1``)."""
        return _TEXT[self.target]([(self, "")])

    def __str__(self) -> str:
        return self.text()

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``bcast translate --json``."""
        source = self.plan.to_dict()
        return {
            "target": self.target, "rule": self.plan.rule, "attrs": source["attrs"],
            "inputs": source["inputs"], "names": source["names"], "op": self.op, "ok": True,
            "feeds": [{"name": n, "shape": json_shape(s), "dtype": t} for n, s, t in self.inputs],
            "output": self.output, "shape": json_shape(self.shape), "constraints": source["constraints"],
            "steps": [s.to_dict() for s in self.steps], "text": self.text(),
            "avoided": [f.to_dict() for f in self.avoided], "error": None,
        }

    def model(self):
        """The recipe as the target's model: an ``onnx.ModelProto``, an ``openvino.Model``,
        the ncnn ``.param`` text, or for numpy the expression's code object."""
        return model([self])

    def run(self, *arrays):
        """Run the recipe on the real target (numpy, onnxruntime, OpenVINO's CPU plugin,
        ncnn) with ``arrays`` as its inputs, in order; returns the output array."""
        return run_many([self], [arrays])[0]


# --------------------------------------------------------------------------- forms: how a target may say it


@dataclass(frozen=True)
class _Form:
    """One way the target can compute the op: the node's rule and attributes,
    the rule's operands (an int: that source input; a tuple: a constant shape),
    and whether the inputs may be reshaped first."""

    rule: str
    operands: tuple
    attrs: tuple = ()
    node: tuple = ()  # the node's own attributes
    reshape: bool = True


def _forms(target: str, op: Op, plan: Plan) -> list:
    """The forms of ``op`` on ``target``, the source rule's own first."""
    n = len(plan.inputs)
    same = tuple(range(n))
    rule, attrs = plan.rule, dict(plan.attrs)
    if op.kind == "gemm":
        keep = (("transA", attrs["transA"]), ("transB", attrs["transB"]))
        return [_Form("onnx-gemm", same, keep, keep, reshape=False)]
    if op.kind == "broadcast":
        return _broadcast_forms(target, plan)
    if op.kind == "prelu":
        return [_Form({"numpy": "numpy", "onnx": "unidirectional", "openvino": "openvino-prelu"}[target], same)]
    if target == "ncnn":
        return [_Form("ncnn", same)]
    if target != "openvino":
        return [_Form("numpy", same)]
    native, numpy = [], (("auto_broadcast", "numpy"),)
    if op.kind == "where":
        if rule == "openvino-select":
            mode = (("auto_broadcast", attrs["auto_broadcast"]), ("axis", attrs["axis"]))
            native.append(_Form("openvino-select", same, mode, _ov_mode(mode), reshape=False))
        return native + [_Form("openvino-select", same, numpy, numpy)]
    if rule == "pdpd":
        native.append(_Form("pdpd", same, (("axis", attrs["axis"]),),
                            (("auto_broadcast", "pdpd"), ("axis", attrs["axis"])), reshape=False))
    if rule == "none":
        native.append(_Form("none", same, (), (("auto_broadcast", "none"),), reshape=False))
    return native + [_Form("numpy", same, (), numpy)]


def _ov_mode(mode: tuple) -> tuple:
    """An OpenVINO auto_broadcast spec: the axis only for pdpd."""
    return mode if dict(mode)["auto_broadcast"] == "pdpd" else mode[:1]


def _broadcast_forms(target: str, plan: Plan) -> list:
    """Data (input 0) broadcast to a shape: the source's own Broadcast/Expand, then
    the general form, data (reshaped) broadcast to the output shape."""
    rule, attrs = plan.rule, dict(plan.attrs)
    given, out = tuple(plan.inputs[1]), tuple(plan.shape)
    if target == "numpy":  # np.broadcast_to: data into the shape, one way
        return [_Form("unidirectional", (out, 0))]
    if target == "onnx":  # Expand: bidirectional
        native = [_Form("bidirectional", (0, given), reshape=False)] if rule == "bidirectional" else []
        return native + [_Form("bidirectional", (0, out))]
    native = {
        "bidirectional": _Form("bidirectional", (0, given), (), (("mode", "bidirectional"),), reshape=False),
        "explicit": _Form("explicit", (0, given), (("axes_mapping", attrs.get("axes_mapping")),),
                          (("mode", "explicit"), ("axes_mapping", attrs.get("axes_mapping"))), reshape=False),
        "openvino-broadcast-pdpd": _Form("openvino-broadcast-pdpd", (0, given), (("axis", attrs.get("axis")),),
                                         (("mode", "pdpd"), ("axis", attrs.get("axis"))), reshape=False),
    }
    return [native[rule], _Form("unidirectional", (out, 0), (), (("mode", "numpy"),))]


# --------------------------------------------------------------------------- the search


@dataclass(frozen=True)
class _Reshape:
    """Input ``i`` reshaped to ``shape``: by inserting 1s at ``axes`` (``axes`` None:
    a general reshape, which drops axes too and needs static dims)."""

    i: int
    shape: tuple
    axes: tuple | None


def _candidates(plan: Plan, i: int, reshape: bool, target: str) -> list:
    """The shapes input ``i`` may be given to the target, fewest changes first:
    as it is; its aligned shape from its first mapped axis; its full aligned shape."""
    orig = tuple(plan.inputs[i])
    out = [None]
    if reshape:
        aligned, amap = plan.aligned_shape(i), plan.axis_maps[i]
        mapped = [ax for ax in amap if ax is not None]
        first = min(mapped) if mapped else len(aligned)
        for start in (first, 0):
            shape = aligned[start:]
            if shape == orig or (target == "ncnn" and not shape):
                continue
            axes = None
            if None not in amap:
                kept = {ax - start for ax in amap}
                axes = tuple(k for k in range(len(shape)) if k not in kept)
            r = _Reshape(i, shape, axes)
            if r not in out:
                out.append(r)
    return out


def _realizable(r: _Reshape | None) -> bool:
    return r is None or r.axes is not None or all(is_static(d) for d in r.shape)


def _operands(plan: Plan, form: _Form, choice: tuple) -> list:
    shapes = {i: (tuple(plan.inputs[i]) if r is None else r.shape) for i, r in zip(_tensors(plan), choice)}
    return [shapes[o] if isinstance(o, int) else o for o in form.operands]


def _tensors(plan: Plan) -> tuple:
    """The inputs that are tensors: all, but for the broadcast-to rules only data."""
    return (0,) if _RULE_OP.get(plan.rule) == "Expand" else tuple(range(len(plan.inputs)))


def _agrees(plan: Plan, form: _Form, got: Plan) -> bool:
    """Whether the target's plan aligns every tensor input as the source's does
    (and, where the output is not made of the inputs' dims, has its shape)."""
    for pos, o in enumerate(form.operands):
        if isinstance(o, int) and got.aligned_shape(pos) != plan.aligned_shape(o):
            return False
    return _RULE_OP.get(plan.rule) not in ("Expand", "Gemm") or tuple(got.shape) == tuple(plan.shape)


#: The runtimes whose deviations a target's recipe must avoid (OpenVINO: its CPU plugin).
_RUNTIMES = {"numpy": (), "onnx": (OnnxRuntime.ONNXRUNTIME,),
             "openvino": (OpenVINORuntime.OPENVINO, OpenVINORuntime.CPU_PLUGIN), "ncnn": (NcnnRuntime.NCNN,)}


def _findings(target: str, got: Plan, op_name: str) -> list:
    from ..frameworks.deviations import findings_for

    return [f for f in findings_for(got, op=op_name, op_attrs={"element_type": "float32"})
            # a recipe writes every attribute out (the pdpd axis too): it avoids those of omitted attributes
            if f.deviation.runtime in _RUNTIMES[target] and not f.deviation.needs_omitted_attr]


def _search(plan: Plan, target: str, op: Op):
    """The best (form, reshapes) for the target: fewest reshapes, then the form's rank;
    with the deviations that ruled out better ones, and why nothing fit (if so)."""
    op_name = {"numpy": op.numpy, "onnx": op.onnx, "openvino": op.openvino, "ncnn": op.ncnn_name}[target]
    tried = []  # (key, findings) of combinations ruled out by a deviation
    why = []
    best = None
    for rank, form in enumerate(_forms(target, op, plan)):
        per_input = [_candidates(plan, i, form.reshape, target) for i in _tensors(plan)]
        choices = sorted(itertools.product(*per_input), key=lambda c: sum(r is not None for r in c))
        for choice in choices:
            key = (sum(r is not None for r in choice), rank)
            if best is not None and key >= best[0]:
                break
            stuck = [r for r in choice if not _realizable(r)]
            if stuck:
                why += [f"{plan.names[r.i]} {format_shape(plan.inputs[r.i])} must be reshaped to "
                        f"{format_shape(r.shape)}, which needs static dims" for r in stuck]
                continue
            open_shapes = [o for o in form.operands if isinstance(o, tuple) and not all(map(is_static, o))]
            if open_shapes:
                why.append(f"{op_name} takes the shape {format_shape(open_shapes[0])} as values, and it has open dims")
                break
            try:
                got = infer(*_operands(plan, form, choice), rule=form.rule, **dict(form.attrs))
            except BroadcastError as e:
                why.append(e.reason)
                continue
            if not _agrees(plan, form, got):
                continue
            found = _findings(target, got, op_name)
            if found:
                tried.append((key, found))
                continue
            best = (key, form, choice)
    if best is None:
        return None, [f for _, fs in tried for f in fs], why
    avoided = [f for k, fs in tried if k < best[0] for f in fs]
    return best[1:], avoided, why


def _unique(items) -> list:
    return list(dict.fromkeys(items))


def _no_recipe(plan: Plan, target: str, op: Op, avoided: list, why: list) -> TranslationError:
    if avoided:
        notes = "; ".join(_unique(f"{f.deviation.id}: {f.note}" for f in avoided))
        return TranslationError(plan, target, f"every form of {op.name} on {target} hits a runtime deviation ({notes})")
    if why:
        return TranslationError(plan, target, "; ".join(_unique(why)))
    return TranslationError(plan, target, f"no form of {op.name} on {target} aligns the inputs as {plan.rule} does")


def _precheck(plan: Plan, target: str, op: Op) -> str | None:
    """Why the target cannot take these inputs at all, before any form is tried."""
    if target == "ncnn":
        if op.kind in _NCNN_CANNOT:
            return _NCNN_CANNOT[op.kind]
        for name, s in zip(plan.names, plan.inputs):
            if not s:
                return (f"{name} is a scalar (rank 0): ncnn has no rank-0 blob; its with_scalar=1 form takes a "
                        "constant, not an input")
        if len(plan.shape) > 4:
            return f"the output has rank {len(plan.shape)}: an ncnn blob has rank 1 to 4 ([w], [w,h], [w,h,c], [w,h,d,c])"
    return None


# --------------------------------------------------------------------------- the entry point


def translate(*source, to: str, op: str | None = None, rule: str = "numpy", names=None,
              policy: str = "permissive", **attrs) -> Recipe:
    """The minimal explicit recipe that makes ``to`` compute what the source computes.

    Parameters
    ----------
    *source : a Plan, or shapes
        The source: one :class:`~bcast.core.plan.Plan` (``bcast.infer(*shapes, rule=..., **attrs)``),
        or the shapes themselves with ``rule``, ``names``, ``policy`` and the rule's
        attributes, as :func:`bcast.infer` takes them: ``translate((2, 3, 4), (3, 4), to="ncnn")``.
    to : {"numpy", "onnx", "openvino", "ncnn"}
        The target framework.
    op : str, optional
        The op, by bcast's, numpy's, ONNX's, OpenVINO's or ncnn's name (:data:`OPS`):
        ``Add`` (the default for two inputs), ``Sub``, ``Mul``, ``Div``, ``Max``,
        ``Min``, ``Pow``, ``Where`` (three inputs).  The op-specific rules fix it:
        ``openvino-select`` Where, ``openvino-prelu`` PRelu, ``onnx-gemm`` Gemm, and
        the broadcast-to rules (``bidirectional``, ``explicit``,
        ``openvino-broadcast-pdpd``) Expand: data broadcast to the target shape.

    Returns
    -------
    Recipe

    Raises
    ------
    TranslationError
        The target cannot compute it (ncnn's rank limit, an op ncnn lacks, a
        reshape of symbolic dims, every form hitting a runtime deviation...).
    InputError
        An unknown target or op, or an op that does not fit the rule.

    Examples
    --------
    >>> from bcast import infer
    >>> print(translate(infer((2, 3), (3, 1), rule="pdpd", axis=1), to="openvino").text())
    a = Parameter(f32, [2,3])
    b = Parameter(f32, [3,1])
    b_1 = Reshape(b, [3], special_zero=false)
    y = Add(a, b_1, auto_broadcast=numpy)
    >>> print(translate(infer((4, 3, 2), (3, 2)), to="ncnn").text())  # doctest: +NORMALIZE_WHITESPACE
    7767517
    4 4
    Input                    in0                      0 1 in0
    Input                    in1                      0 1 in1
    Reshape                  reshape_0                1 1 in1 2 0=2 1=3 2=1
    BinaryOp                 binaryop_0               2 1 in0 2 out0 0=0
    """
    if len(source) == 1 and isinstance(source[0], Plan):
        plan = source[0]
        given = [k for k, v in (("rule", rule != "numpy"), ("names", names is not None),
                                ("policy", policy != "permissive")) if v] + list(attrs)
        if given:
            raise InputError(f"translate: a Plan carries its rule and attributes; got {', '.join(given)} too")
    elif any(isinstance(s, Plan) for s in source):
        raise InputError("translate takes one Plan, or shapes: not a Plan among shapes")
    else:
        plan = infer(*source, rule=rule, names=names, policy=policy, **attrs)
    if to not in TARGETS:
        raise InputError(f"translate: unknown target {brief(to)}; the targets are: {', '.join(TARGETS)}")
    o = _source_op(plan, op)
    reason = _precheck(plan, to, o)
    if reason:
        raise TranslationError(plan, to, reason)
    found, avoided, why = _search(plan, to, o)
    if found is None:
        raise _no_recipe(plan, to, o, avoided, why)
    form, choice = found
    return _BUILD[to](plan, o, form, [r for r in choice if r is not None], tuple(avoided))


# --------------------------------------------------------------------------- building the steps


def _names(plan: Plan, target: str) -> list:
    """The recipe's input names: ncnn's blobs in0, in1...; else the plan's names, lower case,
    made valid Python names (``else`` is ``else_``)."""
    if target == "ncnn":
        return [f"in{i}" for i in range(len(_tensors(plan)))]
    out = []
    for i in _tensors(plan):
        name = "".join(ch if ch.isalnum() else "_" for ch in plan.names[i].lower()) or f"x{i}"
        out.append(name + "_" if keyword.iskeyword(name) or name == "np" or name[0].isdigit() else name)
    return out


def _dtype(op: Op, i: int) -> str:
    return "bool" if op.kind == "where" and i == 0 else "float32"


def _recipe(plan, op, target, op_name, names, steps, avoided) -> Recipe:
    inputs = tuple((n, tuple(plan.inputs[i]), _dtype(op, i)) for n, i in zip(names, _tensors(plan)))
    return Recipe(target, plan, op_name, inputs, tuple(steps), steps[-1].output, tuple(plan.shape), avoided)


def _reshape_steps(plan, target, names, reshapes, make) -> tuple[list, list]:
    """One step per reshaped input (``make(reshape, src, dst)``); the names the op reads."""
    values, steps = list(names), []
    pos = {i: k for k, i in enumerate(_tensors(plan))}
    for r in reshapes:
        k = pos[r.i]
        dst = str(len(names) + len(steps)) if target == "ncnn" else f"{names[k]}_1"  # ncnn: blobs numbered as pnnx does
        steps.append(make(r, names[k], dst))
        values[k] = dst
    return steps, values


def _build_numpy(plan, op, form, reshapes, avoided) -> Recipe:
    def make(r, src, dst):
        if all(is_static(d) for d in r.shape):
            return Step("reshape", (src,), dst, (("shape", r.shape),))
        return Step("expand_dims", (src,), dst, (("axis", r.axes),))

    names = _names(plan, "numpy")
    steps, values = _reshape_steps(plan, "numpy", names, reshapes, make)
    node = dict(form.node)
    if op.kind == "broadcast":
        steps.append(Step("broadcast_to", tuple(values), "y", (("shape", form.operands[0]),)))
    elif op.kind == "gemm":
        trans = (("transA", node["transA"]), ("transB", node["transB"]))
        steps.append(Step("matmul", tuple(values[:2]), "y" if len(values) == 2 else "ab", trans))
        if len(values) == 3:
            steps.append(Step("add", ("ab", values[2]), "y"))
    else:
        steps.append(Step(op.numpy, tuple(values), "y"))
    return _recipe(plan, op, "numpy", op.numpy, names, steps, avoided)


def _build_onnx(plan, op, form, reshapes, avoided) -> Recipe:
    def make(r, src, dst):
        if r.axes is not None:
            return Step("Unsqueeze", (src,), dst, (("axes", r.axes),))
        return Step("Reshape", (src,), dst, (("shape", r.shape),))

    names = _names(plan, "onnx")
    steps, values = _reshape_steps(plan, "onnx", names, reshapes, make)
    attrs = ()
    if op.kind == "broadcast":
        attrs = (("shape", form.operands[1]),)
    elif op.kind == "gemm":
        attrs = tuple((k, int(v)) for k, v in form.node if v)
    steps.append(Step(op.onnx, tuple(values), "y", attrs))
    return _recipe(plan, op, "onnx", op.onnx, names, steps, avoided)


def _build_openvino(plan, op, form, reshapes, avoided) -> Recipe:
    def make(r, src, dst):
        if r.axes is not None:
            return Step("Unsqueeze", (src,), dst, (("axes", r.axes),))
        return Step("Reshape", (src,), dst, (("shape", r.shape), ("special_zero", False)))

    names = _names(plan, "openvino")
    steps, values = _reshape_steps(plan, "openvino", names, reshapes, make)
    node = dict(form.node)
    if op.kind == "broadcast":
        target = form.operands[0] if isinstance(form.operands[0], tuple) else form.operands[1]
        attrs = (("target_shape", target),) + tuple((k, v) for k, v in form.node)
        steps.append(Step("Broadcast", tuple(values), "y", attrs))
    elif op.kind == "gemm":
        trans = (("transpose_a", node["transA"]), ("transpose_b", node["transB"]))
        steps.append(Step("MatMul", tuple(values[:2]), "y" if len(values) == 2 else "ab", trans))
        if len(values) == 3:
            steps.append(Step("Add", ("ab", values[2]), "y", (("auto_broadcast", "numpy"),)))
    else:
        steps.append(Step(op.openvino, tuple(values), "y", form.node))
    return _recipe(plan, op, "openvino", op.openvino, names, steps, avoided)


#: ncnn's Reshape params of a shape in numpy order, by rank: w, h, d, c.
_NCNN_RESHAPE = {1: ("0",), 2: ("1", "0"), 3: ("2", "1", "0"), 4: ("2", "11", "1", "0")}


def _build_ncnn(plan, op, form, reshapes, avoided) -> Recipe:
    def make(r, src, dst):
        keys = _NCNN_RESHAPE[len(r.shape)]
        params = tuple(sorted(zip(keys, r.shape), key=lambda kv: _NCNN_ORDER.index(kv[0])))
        return Step("Reshape", (src,), dst, params)

    names = _names(plan, "ncnn")
    steps, values = _reshape_steps(plan, "ncnn", names, reshapes, make)
    steps.append(Step("BinaryOp", tuple(values), "out0", (("0", op.ncnn),)))
    return _recipe(plan, op, "ncnn", op.ncnn_name, names, steps, avoided)


_NCNN_ORDER = ("0", "1", "11", "2")
_BUILD = {"numpy": _build_numpy, "onnx": _build_onnx, "openvino": _build_openvino, "ncnn": _build_ncnn}


# --------------------------------------------------------------------------- text


def _renamed(recipe: Recipe, prefix: str) -> tuple:
    """(inputs, steps, output) with every value name prefixed (to put many recipes in one model)."""
    if not prefix:
        return recipe.inputs, recipe.steps, recipe.output

    def p(name):
        return prefix + name

    inputs = tuple((p(n), s, t) for n, s, t in recipe.inputs)
    steps = tuple(Step(s.op, tuple(p(x) for x in s.inputs), p(s.output), s.attrs) for s in recipe.steps)
    return inputs, steps, p(recipe.output)


def _dims(shape, sep=",") -> str:
    return sep.join(str(d) for d in shape)


def _numpy_text(items) -> str:
    (recipe, _), = items
    expr = {n: n for n, _, _ in recipe.inputs}
    for s in recipe.steps:
        expr[s.output] = _NUMPY_EXPR[s.op](s, *[expr[x] for x in s.inputs])
    return expr[recipe.output]


def _np_shape(shape) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else f"({_dims(shape, ', ')})"


def _np_matmul(s, a, b):
    return f"np.matmul({a}{'.T' if s.attr('transA') else ''}, {b}{'.T' if s.attr('transB') else ''})"


_NUMPY_EXPR = {
    "reshape": lambda s, x: f"{x}.reshape({_dims(s.attr('shape'), ', ')})",
    "expand_dims": lambda s, x: f"np.expand_dims({x}, {_np_shape(s.attr('axis'))})",
    "broadcast_to": lambda s, x: f"np.broadcast_to({x}, {_np_shape(s.attr('shape'))})",
    "where": lambda s, c, t, e: f"np.where({c}, {t}, {e})",
    "prelu": lambda s, d, k: f"np.where({d} < 0, {d} * {k}, {d})",
    "matmul": _np_matmul,
    **{o.numpy: (lambda name: lambda s, x, y: f"np.{name}({x}, {y})")(o.numpy) for o in OPS if o.kind == "binary"},
}

#: Step attributes that are constant inputs (initializers) of the ONNX node, in input order.
_ONNX_CONST = {"Unsqueeze": "axes", "Reshape": "shape", "Expand": "shape"}
_ONNX_TYPES = {"float32": "float", "bool": "bool"}


def _onnx_text(items) -> str:
    ins, outs, inits, body = [], [], [], []
    for recipe, prefix in items:
        inputs, steps, output = _renamed(recipe, prefix)
        ins += [f"{_ONNX_TYPES[t]}[{_dims(_onnx_dims(s))}] {n}" for n, s, t in inputs]
        outs.append(f"float[{_dims(_onnx_dims(recipe.shape))}] {output}")
        for s in steps:
            args = list(s.inputs)
            const = _ONNX_CONST.get(s.op)
            if const:
                values = s.attr(const)
                inits.append(f"int64[{len(values)}] {s.output}_{const} = {{{_dims(values)}}}")
                args.append(f"{s.output}_{const}")
            attrs = [f"{k} = {v}" for k, v in s.attrs if k != const]
            shown = f" <{', '.join(attrs)}>" if attrs else ""
            body.append(f"   {s.output} = {s.op}{shown} ({', '.join(args)})")
    head = f'<ir_version: {ONNX_IR}, opset_import: ["" : {ONNX_OPSET}]>\n'
    head += f"bcast_translate ({', '.join(ins)}) => ({', '.join(outs)})\n"
    if inits:
        head += f"<{', '.join(inits)}>\n"
    return head + "{\n" + "\n".join(body) + "\n}"


def _onnx_dims(shape) -> tuple:
    """Dims as ONNX's textual syntax writes them: ints, symbols, ``?`` for what it cannot say."""
    return tuple(d if is_static(d) or str(d).isidentifier() else "?" for d in shape)


_OV_TYPES = {"float32": "f32", "bool": "boolean"}
#: Step attributes that are Constant inputs of the OpenVINO node, in input order.
_OV_CONST = {"Unsqueeze": ("axes",), "Reshape": ("shape",), "Broadcast": ("target_shape", "axes_mapping")}


def _ov_value(v) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    return f"[{_dims(v)}]" if isinstance(v, tuple) else str(v)


def _openvino_text(items) -> str:
    lines = []
    for recipe, prefix in items:
        inputs, steps, _ = _renamed(recipe, prefix)
        lines += [f"{n} = Parameter({_OV_TYPES[t]}, [{_dims(s)}])" for n, s, t in inputs]
        for s in steps:
            consts = _OV_CONST.get(s.op, ())
            args = list(s.inputs) + [_ov_value(s.attr(c)) for c in consts if s.attr(c) is not None]
            args += [f"{k}={_ov_value(v)}" for k, v in s.attrs if k not in consts]
            lines.append(f"{s.output} = {s.op}({', '.join(args)})")
    return "\n".join(lines)


def _ncnn_line(layer: str, name: str, ins, outs, params=()) -> str:
    text = f"{layer:<24} {name:<24} {len(ins)} {len(outs)}"
    for blob in (*ins, *outs):
        text += f" {blob}"
    for k, v in params:
        text += f" {k}={v}"
    return text


def _ncnn_text(items) -> str:
    lines, blobs, count = [], 0, {}
    for recipe, prefix in items:
        inputs, steps, _ = _renamed(recipe, prefix)
        for n, _, _ in inputs:
            lines.append(_ncnn_line("Input", n, (), (n,)))
        for s in steps:
            k = count.get(s.op, 0)
            count[s.op] = k + 1
            lines.append(_ncnn_line(s.op, f"{prefix}{s.op.lower()}_{k}", s.inputs, (s.output,), s.attrs))
        blobs += len(inputs) + len(steps)
    return f"{NCNN_MAGIC}\n{len(lines)} {blobs}\n" + "\n".join(lines)


_TEXT = {"numpy": _numpy_text, "onnx": _onnx_text, "openvino": _openvino_text, "ncnn": _ncnn_text}


# --------------------------------------------------------------------------- models and runs (runtimes load here)


def _prefixed(recipes) -> list:
    if len(recipes) == 1:
        return [(recipes[0], "")]
    return [(r, f"r{k}_") for k, r in enumerate(recipes)]


def _onnx_model(recipes):
    from ..core._require import require

    parser = require("onnx.parser", "an ONNX model of a recipe")
    m = parser.parse_model(_onnx_text(_prefixed(recipes)))
    for value in (*m.graph.input, *m.graph.output):  # the parser reads float[] as "no shape", not rank 0
        if not value.type.tensor_type.HasField("shape"):
            value.type.tensor_type.shape.SetInParent()
    return m


def _openvino_model(recipes):
    import numpy as np

    from ..core._require import require

    ov = require("openvino", "an OpenVINO model of a recipe")

    from ..frameworks.openvino.oracle import _factory, _node_attrs

    params, results = [], []
    for recipe, prefix in _prefixed(recipes):
        inputs, steps, output = _renamed(recipe, prefix)
        values = {}
        for n, s, t in inputs:
            p = ov.op.Parameter(ov.Type.boolean if t == "bool" else ov.Type.f32,
                                ov.PartialShape([d if is_static(d) else -1 for d in s]))
            p.set_friendly_name(n)
            params.append(p)
            values[n] = p.output(0)
        for s in steps:
            args = [values[x] for x in s.inputs]
            args += [ov.op.Constant(np.asarray(s.attr(c), np.int64).reshape(-1)).output(0)
                     for c in _OV_CONST.get(s.op, ()) if s.attr(c) is not None]
            attrs = {k: v for k, v in s.attrs if k not in _OV_CONST.get(s.op, ())}
            if s.op in ("Unsqueeze", "Reshape", "MatMul"):
                node = _factory("opset16").create(s.op, args, attrs)
            else:
                opset, attrs = _node_attrs(s.op, attrs)
                node = _factory(opset).create(s.op, args, attrs)
            values[s.output] = node.output(0)
        results.append(values[output])
    return ov.Model(results, params, "bcast_translate")


def _numpy_model(recipes):
    return [compile(r.text(), "<bcast translate>", "eval") for r in recipes]


_MODEL = {"numpy": _numpy_model, "onnx": _onnx_model, "openvino": _openvino_model,
          "ncnn": lambda recipes: _ncnn_text(_prefixed(recipes))}


def model(recipes):
    """One model holding many recipes of one target, each's names prefixed ``r0_``, ``r1_``...
    (none for a single recipe): an ONNX ``ModelProto``, an ``openvino.Model``, an ncnn
    ``.param`` text, or for numpy a list of code objects."""
    recipes = list(recipes)
    _one_target(recipes)
    return _MODEL[recipes[0].target](recipes)


def _one_target(recipes) -> str:
    targets = {r.target for r in recipes}
    if len(targets) != 1:
        raise InputError("translate: recipes of one target, at least one")
    return targets.pop()


def run_many(recipes, inputs) -> list:
    """Run many recipes of one target at once: one model (one onnxruntime session, one
    OpenVINO compile, one ncnn net) holds them all.  ``inputs[k]`` are the arrays of
    ``recipes[k]``; returns one output array per recipe."""
    recipes, inputs = list(recipes), [list(x) for x in inputs]
    if not recipes:
        return []
    target = _one_target(recipes)
    if len(inputs) != len(recipes):
        raise InputError(f"translate.run_many: {len(recipes)} recipes but {len(inputs)} lists of inputs")
    for r, xs in zip(recipes, inputs):
        if len(xs) != len(r.inputs):
            raise InputError(f"the {r.target} recipe takes {len(r.inputs)} inputs "
                             f"({', '.join(n for n, _, _ in r.inputs)}), got {len(xs)}")
    return _RUN[target](recipes, inputs)


def _feeds(recipes, inputs) -> dict:
    import numpy as np

    feeds = {}
    for (recipe, prefix), xs in zip(_prefixed(recipes), inputs):
        for (n, _, t), x in zip(recipe.inputs, xs):
            # (np.ascontiguousarray would make a 0-d array 1-d)
            feeds[prefix + n] = np.require(np.asarray(x, dtype=bool if t == "bool" else np.float32), requirements="C")
    return feeds


def _run_numpy(recipes, inputs):
    import numpy as np

    out = []
    for code, (recipe, _), xs in zip(_numpy_model(recipes), _prefixed(recipes), inputs):
        env = {n: x for (n, _, _), x in zip(recipe.inputs, _feeds([recipe], [xs]).values())}
        out.append(np.asarray(eval(code, {"np": np, "__builtins__": {}}, env)))  # noqa: S307 - our own expression
    return out


def _run_onnx(recipes, inputs):
    from ..core._require import require_all

    require_all(("onnx", "onnxruntime"), "running an ONNX recipe")  # both named at once
    from ..frameworks.onnx.onnxruntime import run_model

    return run_model(_onnx_model(recipes), _feeds(recipes, inputs))


def _run_openvino(recipes, inputs):
    import numpy as np

    from ..frameworks.openvino.oracle import _core

    # f32 throughout: the CPU plugin may otherwise compute MatMul in a lower precision
    compiled = _core().compile_model(_openvino_model(recipes), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(list(_feeds(recipes, inputs).values()))
    return [np.asarray(result[compiled.output(k)]).copy() for k in range(len(recipes))]


def _run_ncnn(recipes, inputs):
    import numpy as np

    from ..core._require import require

    ncnn = require("ncnn", "running an ncnn recipe")

    from ..frameworks._oracle import RuntimeRefused
    from ..frameworks.ncnn.oracle import _configure

    net = ncnn.Net()
    _configure(net.opt)
    if net.load_param_mem(_ncnn_text(_prefixed(recipes))) != 0:
        raise RuntimeRefused("ncnn", "cannot load the recipe's .param")
    net.load_model(ncnn.DataReaderFromEmpty())
    feeds = _feeds(recipes, inputs)
    out = []
    for recipe, prefix in _prefixed(recipes):
        ex = net.create_extractor()
        for n, _, _ in recipe.inputs:
            ex.input(prefix + n, ncnn.Mat(feeds[prefix + n]).clone())
        ret, mat = ex.extract(prefix + recipe.output)
        if ret != 0:
            raise RuntimeRefused("ncnn", f"extracting {prefix + recipe.output} returned {ret}")
        out.append(np.array(mat).copy())
    return out


_RUN = {"numpy": _run_numpy, "onnx": _run_onnx, "openvino": _run_openvino, "ncnn": _run_ncnn}
