"""Proofs of the Core ML records: coremltools' MIL builder types rank-6 outputs (only the converter refuses
them), and types select by a and b alone."""

from __future__ import annotations

from .._proof import _case, _expect, _expect_error, _findings, _fixed, _need, _plan, proof


def _oracle():
    ct = _need("coremltools")
    from . import oracle

    return ct, oracle


@proof("coreml-mil-rank", cases=[
    (((1, 1, 1, 1, 1, 2), (2,)), dict(rule="numpy", max_rank=5, op="add")),
])
def mil_types_rank_6(dev):
    ct, oracle = _oracle()
    shapes, _ = _case(dev)
    _expect_error(dev)
    (finding,) = _findings(dev)
    try:
        typed = oracle.infer_shape("add", shapes)
    except oracle.RuntimeRefused as e:
        _fixed(dev, ct, f"the MIL builder now refuses add of {shapes}: {e.message}")
    _expect(typed == (1, 1, 1, 1, 1, 2), typed)
    _expect("(1,1,1,1,1,2)" in finding.note, finding.note)
    refused = oracle.convert_refuses("add", shapes)  # the limit itself: the converter's check
    _expect(refused is not None and "rank <= 5" in refused, refused)
    _expect(oracle.convert_refuses("add", [(1, 1, 1, 1, 2), (2,)]) is None)  # rank 5 converts


@proof("coreml-select-cond", cases=[
    (((2, 3), (3,), (3,)), dict(rule="numpy", max_rank=5, op="select")),
    (((4,), (3,), (3,)), dict(rule="numpy", max_rank=5, op="select")),
])
def mil_select_ignores_cond(dev):
    ct, oracle = _oracle()
    shapes, _ = _case(dev, 0)
    _expect(_plan(dev, 0).shape == (2, 3))
    (finding,) = _findings(dev, 0)
    typed = oracle.infer_shape("select", shapes)
    if typed == (2, 3):
        _fixed(dev, ct, f"select of {shapes} is now typed (2, 3)")
    _expect(typed == (3,), typed)
    _expect("(3,)" in finding.note, finding.note)

    shapes, _ = _case(dev, 1)  # a cond that broadcasts with neither: accepted
    _expect_error(dev, 1)
    (finding,) = _findings(dev, 1)
    try:
        typed = oracle.infer_shape("select", shapes)
    except oracle.RuntimeRefused as e:
        _fixed(dev, ct, f"select of {shapes} is now refused: {e.message}")
    _expect(typed == (3,), typed)
