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
- ``target="onnx2ncnn"`` (the legacy converter, :mod:`bcast.frameworks.ncnn.lint_onnx2ncnn`,
  :mod:`bcast.frameworks.ncnn.rewrite_onnx2ncnn`): the
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .onnx_model import load, save_atomic  # first: without onnx, its one-line InputError

import onnx  # noqa: E402

from ..core.errors import InputError  # noqa: E402
from .findings import Finding  # noqa: E402
from .lint import lint  # noqa: E402
from .target import Site, found  # noqa: E402

__all__ = ["TARGETS", "Rewrite", "rewrite"]



@dataclass
class Rewrite:
    """What :func:`rewrite` did: the new model, one line per change, what the target still cannot
    compute (lint findings of the new model), and the file written (None: nothing written)."""

    target: str
    model: Any
    changes: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    out: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "out": self.out, "written": self.out is not None,
                "changes": list(self.changes), "findings": [f.to_dict() for f in self.findings]}


#: Every target's rewrite, from the framework packages' ``rewrite_*`` modules (:func:`bcast.models.target.found`):
#: ``rewrite(model) -> (model, changes, blocked)``, ``blocked`` the sites that stop it (nothing is written).
REWRITERS: dict[str, Callable[[Any], tuple[Any, list[str], list[Site]]]] = {
    name: module.rewrite for name, module in found("rewrite").items()}
TARGETS = tuple(REWRITERS)


def rewrite(model: Any, target: str, out: Any = None, *, force: bool = False) -> Rewrite:
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
    new, changes, blocked = REWRITERS[target](proto)
    if blocked:  # the findings that stop the upgrade: the nodes' own lint findings
        labels = {s.label for s in blocked}
        return Rewrite(target, None, changes, [f for f in lint(original, target) if f.node in labels])
    report = Rewrite(target, new, changes, lint(new, target))
    if out is not None:
        report.out = save_atomic(new, out, source=source, force=force)
    return report
