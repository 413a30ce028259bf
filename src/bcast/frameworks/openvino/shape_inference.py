"""OpenVINO's own shape inference, for static dims, where it departs from the spec bcast's rules
implement (reference/openvino.md §1 and §3).  The deviation records' checks ask it what OpenVINO
accepts and returns; bcast's rules say what the spec does.

>>> pdpd_merge((2, 1), (0,), -1)  # a dim 0 of B takes A's 1 (the spec refuses)
(2, 0)
>>> broadcast_pdpd((3,), (2, 1), -1)  # a target dim of 1 takes data's 3 (the spec refuses)
(2, 3)
"""

from __future__ import annotations

__all__ = ["broadcast_pdpd", "pdpd_merge"]


def pdpd_merge(big: tuple, small: tuple, axis: int) -> tuple | None:
    """The element-wise ops' (and Select's) pdpd shape inference, ``PartialShape::broadcast_merge_into``:
    ``small`` merged into ``big`` from ``axis`` (-1: right-aligned), or None where OpenVINO refuses."""
    if len(small) > len(big) or axis < -1:
        return None
    start = len(big) - len(small) if axis == -1 else axis
    if start + len(small) > len(big):
        return None
    out = list(big)
    for i, d in enumerate(small):
        t = out[start + i]
        if d > t:  # its static "src > dst" check
            return None
        if d == t or d == 1:
            continue
        if t != 1:
            return None
        out[start + i] = d  # Dimension::broadcast_merge lets a 0 (d < t, so d == 0) take a dim of 1
    return tuple(out)


def broadcast_pdpd(data: tuple, target: tuple, axis: int) -> tuple | None:
    """Broadcast's pdpd shape inference: ``data`` placed into ``target`` from ``axis`` (-1: right-aligned),
    its dims past the target's last axis ignored, or None where OpenVINO refuses."""
    start = len(target) - len(data) if axis == -1 else axis
    if start < 0 or len(data) < len(target) - start:
        return None
    out = list(target)
    for i in range(start, len(target)):
        d = data[i - start]
        if d == 1:
            continue
        if target[i] == 1 or target[i] == d:
            out[i] = d
        else:
            return None
    return tuple(out)
