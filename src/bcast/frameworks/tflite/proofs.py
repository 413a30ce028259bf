"""Proofs of the TFLite records: one-op models in LiteRT's interpreter (``ai-edge-litert``), through
:mod:`bcast.frameworks.tflite.oracle`."""

from __future__ import annotations

import numpy as np

from .._proof import _case, _expect, _findings, _fixed, _need, _plan, proof


def _oracle():
    litert = _need("ai_edge_litert")
    from . import oracle

    return litert, oracle


@proof("tflite-select-one-element", cases=[
    (((1, 1), (1,), ()), dict(rule="numpy", op="SELECT_V2")),
    (((1,), (1, 1), (1,)), dict(rule="tflite-select", op="SELECT")),
])
def select_one_element_keeps_the_declared_shape(dev):
    litert, oracle = _oracle()
    f32 = np.float32

    # SELECT_V2 of (1,1), (1,), (): numpy's rule says (1,1); the interpreter keeps the declared output shape.
    (c, x, y), _ = _case(dev, 0)
    want = _plan(dev, 0).shape
    _expect(want == (1, 1) and len(_findings(dev, 0)) == 1)
    cond, xs, ys = np.ones(c, bool), np.full(x, 3, f32), np.full(y, 4, f32)
    out = oracle.run("SELECT_V2", cond, xs, ys)  # the model declares the output of shape ()
    if out.shape == want:
        _fixed(dev, litert, f"SELECT_V2 of {c}, {x}, {y} now gives {out.shape}")
    _expect(out.shape == () and out == 3, (out.shape, out))
    declared = oracle.run("SELECT_V2", cond, xs, ys, out_shape=(1, 1, 1))  # ... whatever shape it declares
    _expect(declared.shape == (1, 1, 1), declared.shape)

    # SELECT of (1,), (1,1), (1,): x and y differ, which SELECT refuses; the interpreter takes them.
    (c, x, y), _ = _case(dev, 1)
    _expect(len(_findings(dev, 1)) == 1)
    out = oracle.run("SELECT", np.zeros(c, bool), np.full(x, 3, f32), np.full(y, 4, f32))
    _expect(out.shape == () and out == 4, (out.shape, out))


def _crashed(oracle, result) -> bool:
    return isinstance(result, oracle.RuntimeCrashed)


@proof("tflite-rank-abort", cases=[
    (((2,) * 9, (1,) * 9), dict(rule="numpy", max_rank=8, op="SUB")),
    (((2, 1) * 4 + (2,), (1, 2) * 4 + (1,)), dict(rule="numpy", max_rank=8, op="ADD",
                                                   op_attrs={"element_type": "float32"})),
])
def rank_nine_broadcast_aborts(dev):
    litert, oracle = _oracle()
    import signal

    f32 = np.float32
    jobs: list[tuple] = []
    for k in range(2):
        (a, b), attrs = _case(dev, k)
        _expect(len(_findings(dev, k)) == 1)
        jobs.append((attrs["op"], np.full(a, 6, f32), np.full(b, 2, f32)))
    jobs.append(("SUB", np.full((2,) * 8, 6, f32), np.full((1,) * 8, 2, f32)))  # rank 8: computed
    jobs.append(("SELECT_V2", np.ones((2,) * 9, bool), np.full((1,) * 9, 6, f32), f32(2)))  # Prepare refuses rank 9
    sub9, add9, sub8, select9 = oracle.run_many(jobs)
    for got, (op, *_) in ((sub9, jobs[0]), (add9, jobs[1])):
        if not _crashed(oracle, got):
            _fixed(dev, litert, f"{op} of rank 9 no longer aborts: {got if isinstance(got, Exception) else got.shape}")
        _expect(got.returncode == -signal.SIGABRT, got.message)
    _expect(isinstance(sub8, np.ndarray) and sub8.shape == (2,) * 8 and (sub8 == 4).all())
    _expect(isinstance(select9, oracle.RuntimeRefused) and not _crashed(oracle, select9)
            and "output_size->size <= 8" in select9.message, select9)


@proof("tflite-rank-fast-path", cases=[
    (((2,) * 9, ()), dict(rule="numpy", max_rank=8, op="ADD", op_attrs={"element_type": "float32"})),
    (((2,) * 10, (1,) * 9 + (2,)), dict(rule="numpy", max_rank=8, op="MUL", op_attrs={"element_type": "float32"})),
    (((2,) * 9, (1,) * 9), dict(rule="numpy", max_rank=8, op="POW")),
])
def fast_paths_compute_past_rank_eight(dev):
    litert, oracle = _oracle()
    f32 = np.float32
    jobs: list[tuple] = []
    for k in range(3):
        (a, b), attrs = _case(dev, k)
        _expect(len(_findings(dev, k)) == 1)
        jobs.append((attrs["op"], np.full(a, 3, f32), np.full(b, 2, f32)))
    jobs.append(("ADD", np.full((2,) * 9, 3, np.int32), np.full((), 2, np.int32)))  # int32: the loop, which aborts
    jobs.append(("POW", np.full((2,) * 9, 4, f32), np.full((1,) * 9, 0.5, f32)))  # exponent 0.5: the loop, aborts
    add, mul, pow_, add_int, pow_half = oracle.run_many(jobs)
    for got, want, value in ((add, (2,) * 9, 5), (mul, (2,) * 10, 6), (pow_, (2,) * 9, 9)):
        _expect(isinstance(got, np.ndarray), f"a fast path no longer computes: {got}")
        _expect(got.shape == want and (got == value).all(), (got.shape, want))
    _expect(_crashed(oracle, add_int) and _crashed(oracle, pow_half), (add_int, pow_half))
