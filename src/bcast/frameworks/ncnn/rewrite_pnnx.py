"""``bcast rewrite --target ncnn``: what pnnx -> ncnn gets wrong, rewritten into ops it gets right.

pnnx inserts the reshapes a numpy broadcast needs by itself (:mod:`bcast.frameworks.ncnn.lint_pnnx`), so
this rewrite adds no Unsqueeze.  It rewrites the two findings of the ``ncnn`` target that
have an exact equivalent pnnx converts right:

- ``Pow(x, n)`` with a constant integer exponent, ``3 <= |n| <= 8`` (or ``n == 1``):
  ncnn's BinaryOp POW returns garbage for a base <= 0; the product ``x * x * ... * x``
  (and ``1 / product`` for ``n < 0``) is exact in any sign.
- ``PRelu(x, slope)`` whose slope pnnx's PReLU would apply along the wrong axis:
  ``Relu(x) + (x - Relu(x)) * slope``, where the Mul is a numpy broadcast that pnnx
  aligns right (``x - Relu(x)`` is ``min(x, 0)`` exactly).

Every other finding stays a finding of the new model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import helper, numpy_helper

from ...models.edit import Names, copy_node
from ...models.lint import sites
from ...models.onnx_model import Shapes
from . import lint_pnnx

__all__ = ["TARGET", "rewrite"]

TARGET = "ncnn"


def rewrite(model):
    """The pnnx rewrite of ``model`` (changed in place; the main graph): (model, changes, blocked)."""
    names = Names(model.graph)
    shapes = Shapes(model)
    ctx = lint_pnnx.Context(model, shapes)
    nodes: list[Any] = []
    inits: list[Any] = []
    changes: list[str] = []
    dropped: set[str] = set()
    for _, node, site in sites(model, shapes):
        node = copy_node(node)
        rows = lint_pnnx.check(site, ctx) if site is not None and site.plan is not None and node.output else []
        if rows and site.op.name == "Pow" and (n := lint_pnnx.exact_power(ctx.scalar(site.inputs[1]))) is not None:
            nodes += _power(node, site.inputs[0], n, names, inits)
            dropped.add(site.inputs[1])
            changes.append(f"{site.label}: Pow {site.inputs[0]} ** {n} -> "
                           + ("1 / (" if n < 0 else "") + " * ".join([site.inputs[0]] * abs(n))
                           + (")" if n < 0 else "") + " (ncnn's POW is wrong for bases <= 0)")
            continue
        if rows and site.op.name == "PRelu" and rows[0].kind == "differs":
            x, slope = site.inputs
            nodes += _prelu(node, x, slope, names)
            changes.append(f"{site.label}: PRelu -> Relu(x) + (x - Relu(x)) * {site.inputs[1]} (pnnx's PReLU "
                           "applies the slope per channel)")
            continue
        nodes.append(node)
    g = model.graph
    used = {i for n in nodes for i in n.input} | {v.name for v in g.output}
    orphans = [t for t in g.initializer if t.name not in used and t.name in dropped]  # the exponents replaced
    for t in orphans:
        g.initializer.remove(t)
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(inits)
    return model, changes, []


def _power(node, x, n, names, inits) -> list:
    out = node.output[0]
    base = node.name or out
    if n == 1:
        return [helper.make_node("Identity", [x], [out], name=names.fresh(base))]
    made, acc = [], x
    for k in range(abs(n) - 1):
        last = k == abs(n) - 2 and n > 0
        nxt = out if last else names.fresh(f"{out}_pow")
        made.append(helper.make_node("Mul", [acc, x], [nxt], name=names.fresh(base)))
        acc = nxt
    if n < 0:
        one = names.fresh(f"{out}_one")
        inits.append(numpy_helper.from_array(np.array(1, np.float32), one))
        made.append(helper.make_node("Div", [one, acc], [out], name=names.fresh(base)))
    return made


def _prelu(node, x, slope, names) -> list:
    out = node.output[0]
    base = node.name or out
    pos, neg, scaled = (names.fresh(f"{out}_{s}") for s in ("pos", "neg", "scaled"))
    return [helper.make_node("Relu", [x], [pos], name=names.fresh(base)),
            helper.make_node("Sub", [x, pos], [neg], name=names.fresh(base)),
            helper.make_node("Mul", [neg, slope], [scaled], name=names.fresh(base)),
            helper.make_node("Add", [pos, scaled], [out], name=names.fresh(base))]
