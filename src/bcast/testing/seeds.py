"""Every example and counter-example of the five seed documents, as data.

tests/testing/test_seeds.py checks every row; ``bcast conformance`` runs them through the
real runtimes (:func:`rows`).

One row per example: (source, rule, shapes, attrs, expected).  ``expected``
is the output shape, or ``None`` where the document says the broadcast does
not happen.  Shapes are written as in the document: numpy order for ONNX and
OpenVINO, ncnn's [w,h,d,c] order for ncnn (the ncnn test converts them).

Sources (the documents bcast started from; docs/design.md lists them):
  onnx-en   000  ONNX docs/Broadcasting.md (onnx 1.7.0)
  onnx-zh   001  the same document in Chinese
  ncnn      002  ncnn docs/developer-guide/binaryop-broadcasting.md
  ov-rules  003  OpenVINO "Broadcast Rules For Elementwise Operations"
  ov-bc3    004  OpenVINO Broadcast-3
"""

from typing import Any

#: One row: (source, rule, shapes, attrs, expected output shape or None where the document refuses).
Row = tuple[str, str, tuple, dict[str, Any], Any]

S: tuple[int, ...] = ()  # "B is a scalar", shape (,)

_ONNX_MULTI = [
    ((2, 3, 4, 5), S, (2, 3, 4, 5)),
    ((2, 3, 4, 5), (5,), (2, 3, 4, 5)),
    ((4, 5), (2, 3, 4, 5), (2, 3, 4, 5)),
    ((1, 4, 5), (2, 3, 1, 1), (2, 3, 4, 5)),
    ((3, 4, 5), (2, 1, 1, 1), (2, 3, 4, 5)),
]
_ONNX_UNI = [
    ((2, 3, 4, 5), S, (2, 3, 4, 5)),
    ((2, 3, 4, 5), (5,), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (2, 1, 1, 5), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (1, 3, 1, 5), (2, 3, 4, 5)),
]

ONNX: list[Row] = (
    [("onnx-en multidirectional", "numpy", (a, b), {}, c) for a, b, c in _ONNX_MULTI]
    + [("onnx-zh multidirectional", "numpy", (a, b), {}, c) for a, b, c in _ONNX_MULTI]
    + [("onnx-en unidirectional", "unidirectional", (a, b), {}, c) for a, b, c in _ONNX_UNI]
    + [("onnx-zh unidirectional", "unidirectional", (a, b), {}, c) for a, b, c in _ONNX_UNI]
)

OPENVINO = [
    # Numpy examples
    ("ov-rules numpy", "numpy", (S, S), {}, S),
    ("ov-rules numpy", "numpy", ((2, 3), (1,)), {}, (2, 3)),
    ("ov-rules numpy", "numpy", ((3,), (2, 3)), {}, (2, 3)),
    ("ov-rules numpy", "numpy", ((2, 3, 5), S), {}, (2, 3, 5)),
    ("ov-rules numpy", "numpy", ((2, 1, 5), (1, 4, 5)), {}, (2, 4, 5)),
    ("ov-rules numpy", "numpy", ((6, 5), (2, 1, 5)), {}, (2, 6, 5)),
    ("ov-rules numpy", "numpy", ((2, 1, 5), (4, 1)), {}, (2, 4, 5)),
    ("ov-rules numpy", "numpy", ((3, 2, 1, 4), (5, 4)), {}, (3, 2, 5, 4)),
    ("ov-rules numpy", "numpy", ((1, 5, 3), (5, 2, 1, 3)), {}, (5, 2, 5, 3)),
    ("ov-rules numpy", "numpy", ((3,), (2,)), {}, None),
    ("ov-rules numpy", "numpy", ((3, 1, 5), (4, 4, 5)), {}, None),
    # PDPD examples
    ("ov-rules pdpd", "pdpd", ((2, 3, 4, 5), (3, 4)), {"axis": 1}, (2, 3, 4, 5)),
    ("ov-rules pdpd", "pdpd", ((2, 3, 4, 5), (3, 1)), {"axis": 1}, (2, 3, 4, 5)),
    ("ov-rules pdpd", "pdpd", ((2, 3, 4, 5), (4, 5)), {"axis": -1}, (2, 3, 4, 5)),
    ("ov-rules pdpd", "pdpd", ((2, 3, 4, 5), (4, 5)), {}, (2, 3, 4, 5)),
    ("ov-rules pdpd", "pdpd", ((2, 3, 4, 5), (4, 5)), {"axis": 2}, (2, 3, 4, 5)),
    ("ov-rules pdpd", "pdpd", ((2, 3, 4, 5), (1, 3)), {"axis": 0}, (2, 3, 4, 5)),
    ("ov-rules pdpd", "pdpd", ((2, 3, 4, 5), S), {}, (2, 3, 4, 5)),
    ("ov-rules pdpd", "pdpd", ((2, 3, 4, 5), (5,)), {}, (2, 3, 4, 5)),
    # Bidirectional examples
    ("ov-rules bidirectional", "bidirectional", ((5,), (1,)), {}, (5,)),
    ("ov-rules bidirectional", "bidirectional", ((2, 3), (3,)), {}, (2, 3)),
    ("ov-rules bidirectional", "bidirectional", ((3, 1), (3, 4)), {}, (3, 4)),
    ("ov-rules bidirectional", "bidirectional", ((3, 4), S), {}, (3, 4)),
    ("ov-rules bidirectional", "bidirectional", ((3, 1), (2, 1, 6)), {}, (2, 3, 6)),
    # Broadcast-3: the four <layer> examples (numpy mode is data -> target one way)
    ("ov-bc3 numpy", "unidirectional", ((1, 16, 50, 50), (16, 1, 1)), {}, (1, 16, 50, 50)),
    ("ov-bc3 explicit", "explicit", ((16,), (1, 16, 50, 50)), {"axes_mapping": [1]}, (1, 16, 50, 50)),
    ("ov-bc3 explicit", "explicit", ((50, 50), (1, 50, 50, 16)), {"axes_mapping": [1, 2]}, (1, 50, 50, 16)),
    ("ov-bc3 bidirectional", "bidirectional", ((16, 1, 1), (1, 1, 50, 50)), {}, (1, 16, 50, 50)),
    # Broadcast-3 text: "[C] to [N,C,H,W] ... axes_mapping = [1]"; "[H,W] to [N,H,W,C] with [1, 2]";
    # "such operations cannot be expressed with ... numpy"
    ("ov-bc3 explicit", "explicit", ((3,), (2, 3, 4, 5)), {"axes_mapping": [1]}, (2, 3, 4, 5)),
    ("ov-bc3 explicit", "explicit", ((4, 5), (2, 4, 5, 3)), {"axes_mapping": [1, 2]}, (2, 4, 5, 3)),
    ("ov-bc3 numpy", "unidirectional", ((2, 3, 4, 5), (3,)), {}, None),
    ("ov-bc3 numpy", "unidirectional", ((2, 4, 5, 3), (4, 5)), {}, None),
]

# ncnn, in the document's [w,h,d,c] notation.
_NCNN_A = [[2], [2, 3], [2, 3, 4], [2, 3, 4, 5]]

_NO_DIMS: list[list[int]] = [[]]
NCNN_SCALAR = [
    (a, b, a) for a in _NCNN_A for b in _NO_DIMS + [[1] * r for r in range(1, len(a) + 1)]
]
NCNN_SAME = [(a, a, a) for a in _NCNN_A]
NCNN_EXPLICIT = [
    ([2, 3], [1, 3]), ([2, 3], [2, 1]),
    ([2, 3, 4], [1, 3, 4]), ([2, 3, 4], [2, 1, 4]), ([2, 3, 4], [2, 3, 1]),
    ([2, 3, 4], [1, 1, 4]), ([2, 3, 4], [1, 3, 1]), ([2, 3, 4], [2, 1, 1]),
    ([2, 3, 4, 5], [1, 3, 4, 5]), ([2, 3, 4, 5], [2, 1, 4, 5]), ([2, 3, 4, 5], [2, 3, 1, 5]),
    ([2, 3, 4, 5], [2, 3, 4, 1]), ([2, 3, 4, 5], [1, 1, 4, 5]), ([2, 3, 4, 5], [1, 3, 1, 5]),
    ([2, 3, 4, 5], [1, 3, 4, 1]), ([2, 3, 4, 5], [2, 1, 1, 5]), ([2, 3, 4, 5], [2, 1, 4, 1]),
    ([2, 3, 4, 5], [2, 3, 1, 1]), ([2, 3, 4, 5], [1, 1, 1, 5]), ([2, 3, 4, 5], [1, 1, 4, 1]),
    ([2, 3, 4, 5], [1, 3, 1, 1]), ([2, 3, 4, 5], [2, 1, 1, 1]),
]
# "implicit broadcast B for inner axis": B covers A's OUTER (last in ncnn order) axes.
NCNN_INNER = [
    ([2, 3], [3]), ([2, 3, 4], [4]), ([2, 3, 4], [3, 4]),
    ([2, 3, 4, 5], [5]), ([2, 3, 4, 5], [4, 5]), ([2, 3, 4, 5], [3, 4, 5]),
]
# "implicit broadcast B with 1 dimension rank for outer axis" (numpy-like)
NCNN_OUTER = [([2, 3], [2]), ([2, 3, 4], [2]), ([2, 3, 4, 5], [2])]
# "When the size is the same, eg. [2,2] and [2], broadcast B for inner axis will be prioritized."
NCNN_TIE = [([2, 2], [2])]

NCNN = (
    [("ncnn scalar-like", a, b, c) for a, b, c in NCNN_SCALAR]
    + [("ncnn no broadcast", a, b, c) for a, b, c in NCNN_SAME]
    + [("ncnn explicit B", a, b, a) for a, b in NCNN_EXPLICIT]
    + [("ncnn implicit inner axis", a, b, a) for a, b in NCNN_INNER]
    + [("ncnn implicit outer axis", a, b, a) for a, b in NCNN_OUTER]
    + [("ncnn tie", a, b, a) for a, b in NCNN_TIE]
)


def rows() -> list:
    """Every row as (source, rule, shapes, attrs, expected), ncnn's included (rule
    ``ncnn`` with ``ncnn_order=True``, shapes and expected in ncnn order).

    >>> len(rows()) == len(ONNX) + len(OPENVINO) + len(NCNN)
    True
    """
    ncnn = [(src, "ncnn", (tuple(a), tuple(b)), {"ncnn_order": True}, tuple(c)) for src, a, b, c in NCNN]
    return ONNX + OPENVINO + ncnn
