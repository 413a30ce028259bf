"""``onnx-gemm``: ONNX Gemm, C against (M, N).

Source: ONNX Gemm-7/9/11/13: ``Y = alpha * A' * B' + beta * C`` with A' of shape
(M, K) and B' of shape (K, N) (after ``transA`` / ``transB``); "input tensor C
is broadcastable to shape (M, N)" with unidirectional broadcasting, so C is one
of (), (1,), (N,), (1, N), (M, 1), (1, 1), (M, N): rank at most 2.  C is
optional since Gemm-11.  The output is (M, N).

>>> from bcast import result_shape
>>> result_shape((3, 4), (4, 5), (1, 5), rule="onnx-gemm")
(3, 5)
"""

from __future__ import annotations

from ..core.dims import equal_constraint
from ..core.plan import AxisMap
from ._base import Attr, Ctx, fit_into, register, right_aligned

TRANS_A = Attr("transA", "bool", False, "A is (K, M) and is transposed")
TRANS_B = Attr("transB", "bool", False, "B is (N, K) and is transposed")


@register(
    "onnx-gemm", operands=("A", "B", "C"), min_inputs=2, max_inputs=3, attrs=(TRANS_A, TRANS_B),
    framework="onnx", unplaced="is contracted (Gemm's K)",
    summary="Gemm: C unidirectionally broadcast to (M, N), rank <= 2",
    source="ONNX Gemm-13 (unidirectional C)",
)
def plan(ctx: Ctx):
    A, B = ctx.shapes[0], ctx.shapes[1]
    for i, s in enumerate((A, B)):
        if len(s) != 2:
            raise ctx.error(f"Gemm's {ctx.names[i]} must have rank 2, it has rank {len(s)}", kind="rank", operands=(i,))
    ta, tb = ctx.attrs["transA"], ctx.attrs["transB"]
    m_ax, ka_ax = (1, 0) if ta else (0, 1)
    kb_ax, n_ax = (1, 0) if tb else (0, 1)
    found = equal_constraint((ctx.label(0, ka_ax), A[ka_ax]), (ctx.label(1, kb_ax), B[kb_ax]))
    if found is None:
        raise ctx.error(
            "the inner dims of A and B must match (K)", kind="dims", operands=(0, 1), axes=(ka_ax, kb_ax),
            dims=(A[ka_ax], B[kb_ax]),
        )
    ctx.record(found)
    shape = (A[m_ax], B[n_ax])
    map_a: list[int | None] = [None, None]  # A's K and B's K are contracted: on no output axis
    map_b: list[int | None] = [None, None]
    map_a[m_ax], map_b[n_ax] = 0, 1
    maps: list[AxisMap] = [tuple(map_a), tuple(map_b)]
    if len(ctx.shapes) == 3:
        C = ctx.shapes[2]
        if len(C) > 2:
            raise ctx.error(
                f"C has rank {len(C)}: it must be unidirectionally broadcastable to (M, N), so rank 2 at most",
                kind="rank", operands=(2,),
            )
        maps.append(right_aligned(C, 2))
        shape = fit_into(ctx, maps, shape, [(0, m_ax), (1, n_ax)],
                         "C's dim must equal (M, N)'s or be 1 (C is broadcast to (M, N), never the other way)")
    return ctx.plan(shape, maps)
