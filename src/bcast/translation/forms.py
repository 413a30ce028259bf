"""How a target may compute an op (its :class:`Form` s), and how each input may be given to it
(:class:`Reshape` candidates, fewest changes first): what :mod:`bcast.translation.search` tries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.dims import is_static
from ..core.plan import Plan
from ..frameworks.tflite.from_onnx import KERNEL_MAX_RANK as TFLITE_MAX_RANK
from .ops import Op

__all__ = ["EQUAL_RANK", "Form", "Reshape", "candidates", "equal_rank_limit", "forms", "realizable"]

#: The targets whose ops take operands of equal rank (each dim equal or 1).
EQUAL_RANK = ("tensorrt", "tosa")


def equal_rank_limit(target: str) -> int:
    """The rank limit of an equal-rank target: TensorRT's ``nvinfer1::Dims::MAX_DIMS``, TOSA's level 8K
    (their plug-ins', imported here only when asked: they load numpy)."""
    if target == "tensorrt":
        from ..frameworks.tensorrt.ops import MAX_RANK

        return MAX_RANK
    from ..frameworks.tosa.ops import LEVELS

    return LEVELS["8K"] or 0


@dataclass(frozen=True)
class Form:
    """One way the target can compute the op: the node's rule and attributes,
    the rule's operands (an int: that source input; a tuple: a constant shape),
    and whether the inputs may be reshaped first."""

    rule: str
    operands: tuple
    attrs: tuple[tuple[str, Any], ...] = ()
    node: tuple[tuple[str, Any], ...] = ()  # the node's own attributes
    reshape: bool = True


def forms(target: str, op: Op, plan: Plan) -> list[Form]:
    """The forms of ``op`` on ``target``, the source rule's own first."""
    n = len(plan.inputs)
    same = tuple(range(n))
    rule, attrs = plan.rule, dict(plan.attrs)
    if op.kind == "gemm":
        keep = (("transA", attrs["transA"]), ("transB", attrs["transB"]))
        return [Form("onnx-gemm", same, keep, keep, reshape=False)]
    if op.kind == "broadcast":
        return _broadcast_forms(target, plan)
    if target in EQUAL_RANK:  # TensorRT's IElementWiseLayer, ISelectLayer, IParametricReLULayer; TOSA's operators
        return [Form("equal-rank", same, (("max_rank", equal_rank_limit(target)),))]
    if op.kind == "prelu":
        return [Form({"numpy": "numpy", "onnx": "unidirectional", "openvino": "openvino-prelu"}[target], same)]
    if target == "ncnn":
        return [Form("ncnn", same)]
    if target == "tflite":  # the kernels' numpy broadcasting, within their rank limit
        return [Form("numpy", same, (("max_rank", TFLITE_MAX_RANK),))]
    if target != "openvino":
        return [Form("numpy", same)]
    native: list[Form] = []
    numpy = (("auto_broadcast", "numpy"),)
    if op.kind == "where":
        if rule == "openvino-select":
            mode = (("auto_broadcast", attrs["auto_broadcast"]), ("axis", attrs["axis"]))
            native.append(Form("openvino-select", same, mode, _ov_mode(mode), reshape=False))
        return [*native, Form("openvino-select", same, numpy, numpy)]
    if rule == "pdpd":
        native.append(Form("pdpd", same, (("axis", attrs["axis"]),),
                           (("auto_broadcast", "pdpd"), ("axis", attrs["axis"])), reshape=False))
    if rule == "none":
        native.append(Form("none", same, (), (("auto_broadcast", "none"),), reshape=False))
    return [*native, Form("numpy", same, (), numpy)]


def _ov_mode(mode: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    """An OpenVINO auto_broadcast spec: the axis only for pdpd."""
    return mode if dict(mode)["auto_broadcast"] == "pdpd" else mode[:1]


def _broadcast_forms(target: str, plan: Plan) -> list[Form]:
    """Data (input 0) broadcast to a shape: the source's own Broadcast/Expand, then
    the general form, data (reshaped) broadcast to the output shape."""
    rule, attrs = plan.rule, dict(plan.attrs)
    given, out = tuple(plan.inputs[1]), tuple(plan.shape)
    if target in EQUAL_RANK:  # ISliceLayer with stride 0, TOSA's TILE: data reshaped to the output's rank first
        return [Form("equal-rank", (0, out), (("max_rank", equal_rank_limit(target)),))]
    if target in ("numpy", "tflite"):  # np.broadcast_to, BROADCAST_TO: data into the shape, one way
        return [Form("unidirectional", (out, 0))]
    if target == "onnx":  # Expand: bidirectional
        native = [Form("bidirectional", (0, given), reshape=False)] if rule == "bidirectional" else []
        return [*native, Form("bidirectional", (0, out))]
    own = {
        "bidirectional": Form("bidirectional", (0, given), (), (("mode", "bidirectional"),), reshape=False),
        "explicit": Form("explicit", (0, given), (("axes_mapping", attrs.get("axes_mapping")),),
                         (("mode", "explicit"), ("axes_mapping", attrs.get("axes_mapping"))), reshape=False),
        "openvino-broadcast-pdpd": Form("openvino-broadcast-pdpd", (0, given), (("axis", attrs.get("axis")),),
                                        (("mode", "pdpd"), ("axis", attrs.get("axis"))), reshape=False),
    }
    return [own[rule], Form("unidirectional", (out, 0), (), (("mode", "numpy"),))]


@dataclass(frozen=True)
class Reshape:
    """Input ``i`` reshaped to ``shape``: by inserting 1s at ``axes`` (``axes`` None:
    a general reshape, which drops axes too and needs static dims)."""

    i: int
    shape: tuple
    axes: tuple[int, ...] | None


def candidates(plan: Plan, i: int, reshape: bool, target: str) -> list[Reshape | None]:
    """The shapes input ``i`` may be given to the target, fewest changes first:
    as it is (None); its aligned shape from its first mapped axis; its full aligned shape."""
    orig = tuple(plan.inputs[i])
    out: list[Reshape | None] = [None]
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
                kept = {ax - start for ax in amap if ax is not None}
                axes = tuple(k for k in range(len(shape)) if k not in kept)
            r = Reshape(i, shape, axes)
            if r not in out:
                out.append(r)
    return out


def realizable(r: Reshape | None, target: str) -> bool:
    """Whether the target can make the reshape: an insertion of 1s, or a reshape to static dims (TensorRT's
    and TOSA's reshapes take their shape as constants: static dims only)."""
    if r is None:
        return True
    return (r.axes is not None and target not in EQUAL_RANK) or all(is_static(d) for d in r.shape)
