"""OpenVINO's FakeQuantize-1: how its five inputs broadcast, and its values, as its spec says.

FakeQuantize(X, input_low, input_high, output_low, output_high; levels, auto_broadcast) is what
NNCF and POT write into every quantized IR.  Its spec (FakeQuantize-1, OpenVINO's
``docs/.../quantization/fake-quantize-1.rst``): each range input "must be broadcastable to the
shape of X", and the output has "shape and type matching the 1st input tensor X".  So the ranges
broadcast *into* X, one by one:

==============  ===============================================================================
numpy           each range by the ``unidirectional`` rule into X: right-aligned, its rank at most
                X's, each dim X's or 1 (``(1,C,1,1)`` and ``(C,1,1)`` are both per channel)
none            each range of X's very shape (rule ``none``)
pdpd            each range into X by the ``pdpd`` rule, from ``axis``
==============  ===============================================================================

The output is X's shape; a range bigger than X (a dim where X has 1, or a higher rank) is refused.
OpenVINO itself does not refuse it: its shape inference (``src/core/shape_inference/include/
fake_quantize.hpp``) merges each range into X's shape with ``broadcast_merge_into`` (both ways)
and declares X's shape all the same, and its CPU plugin then returns the grown shape (record
``openvino-fake-quantize-range-grows``).

The values are the spec's formula in the element type, as OpenVINO's reference computes it
(``src/core/reference/include/openvino/reference/fake_quantize.hpp``: ``std::nearbyint``, which
rounds half to even)::

    x <= min(il, ih)  ->  ol
    x >  max(il, ih)  ->  oh
    else              ->  nearbyint((x - il) / (ih - il) * (levels - 1)) / (levels - 1) * (oh - ol) + ol

``Model.evaluate`` gives exactly these values (f32, tests/frameworks/test_openvino_fake_quantize.py);
the CPU plugin, with constant ranges, precomputes a scale and a shift per channel and departs from
them (records ``openvino-cpu-fake-quantize-values`` and ``openvino-cpu-fake-quantize-output-ranges``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core._format import brief
from ...core.errors import BroadcastError, InputError
from ...core.plan import Plan
from ...rules import infer
from ...run.kernel import elementwise
from .._blocks import blocks

__all__ = ["NAMES", "RULES", "check_levels", "kernel", "plan"]

#: FakeQuantize's inputs, in order.
NAMES = ("X", "input_low", "input_high", "output_low", "output_high")
#: auto_broadcast -> the rule each range broadcasts into X by.
RULES = {"numpy": "unidirectional", "none": "none", "pdpd": "pdpd"}


def plan(shapes: tuple, rule: str, axis: Any = None) -> Plan:
    """The plan of FakeQuantize on ``shapes`` (X and the four ranges) when each range broadcasts into X
    by ``rule`` (a value of :data:`RULES`; ``axis`` for pdpd): the output is X's shape.  Raises the
    first range's :class:`~bcast.core.errors.BroadcastError`."""
    attrs = {"axis": axis} if rule == "pdpd" else {}
    plans = []
    for i, r in enumerate(shapes[1:], 1):
        try:
            plans.append(infer(shapes[0], r, rule=rule, names=(NAMES[0], NAMES[i]), **attrs))
        except BroadcastError as e:  # the error names the pair, and holds all five shapes
            reason = e.reason
            if rule == "unidirectional" and e.kind == "dims":
                reason = (f"{NAMES[i]}'s dim must equal X's or be 1 (FakeQuantize-1: each range must be broadcastable "
                          "to X's shape, the output's)")
            every = [infer(s, rule="numpy").inputs[0] if j != i else e.shapes[1] for j, s in enumerate(shapes)]
            raise BroadcastError(e.rule, tuple(every), NAMES, reason, kind=e.kind, operands=(0, i), axes=e.axes,
                                 from_right=e.from_right, dims=e.dims, out_rank=e.out_rank, attrs=e.attrs) from None
    constraints = tuple(dict.fromkeys(c for p in plans for c in p.constraints))
    return Plan.build(rule, [plans[0].inputs[0], *(p.inputs[1] for p in plans)], plans[0].shape, NAMES,
                      [plans[0].axis_maps[0], *(p.axis_maps[1] for p in plans)], plans[0].attrs, constraints)


def check_levels(levels: Any) -> int:
    """``levels``: an integer of at least 2 (the spec; the CPU plugin refuses fewer)."""
    if isinstance(levels, (bool, np.bool_)) or not isinstance(levels, (int, np.integer)) or levels < 2:
        raise InputError(f"openvino FakeQuantize: levels must be an integer of at least 2 (the spec: 2 binarizes, "
                         f"256 is int8); got {brief(levels)}")
    return int(levels)


def kernel(name: str, attrs: dict):
    """The kernel of FakeQuantize with ``attrs["levels"]``: the spec's formula in the element type, block
    by block (each temporary holds one block)."""
    levels = attrs["levels"]  # checked when run (ops.run refuses a call without it)

    def fake_quantize(x, il, ih, ol, oh, out=None):
        dtype = x.dtype
        steps = dtype.type(check_levels(levels) - 1)
        buf = out if out is not None else np.empty(x.shape, dtype)
        with np.errstate(all="ignore"):
            for at in blocks(buf.shape, 8 * dtype.itemsize):  # some 6 temporaries a block: small blocks
                xb, lo, hi, olb, ohb = x[at], il[at], ih[at], ol[at], oh[at]
                q = np.rint((xb - lo) / (hi - lo) * steps) / steps * (ohb - olb) + olb
                q = np.where(xb > np.maximum(lo, hi), ohb, q)
                buf[at] = np.where(xb <= np.minimum(lo, hi), olb, q)
        return buf

    return elementwise(fake_quantize)
