"""Proofs of the MNN records: a tensor of rank 10 (in a child: it kills the process), an empty output, and
the float32 comparisons that compare bit patterns."""

from __future__ import annotations

import signal

import numpy as np

from .._proof import (
    _case, _expect, _expect_error, _findings, _fixed, _need, _plan, _run_child, _signal_name, proof,
)
from ..deviations import BY_ID, applicable


def _mnn():
    mnn = _need("MNN")
    from . import oracle

    return mnn, oracle


@proof("mnn-rank-crash", cases=[
    (((1,) * 10, (2,)), dict(rule="numpy", max_rank=9)),
])
def mnn_rank_10_kills_the_process(dev):
    mnn, oracle = _mnn()
    shapes, _ = _case(dev)
    _expect_error(dev)
    (finding,) = _findings(dev)
    _expect("rank 10" in finding.note, finding.note)
    done = _run_child(f"""
        import numpy as np
        from bcast.frameworks.mnn import oracle
        try:
            out = oracle.run("ADD", np.ones({shapes[0]}, np.float32), np.ones({shapes[1]}, np.float32))
            print("shape", out.shape)
        except oracle.RuntimeRefused as e:
            print("refused", e.message)
    """)
    if done.returncode == 0:
        _fixed(dev, mnn, f"ADD of {shapes[0]} and {shapes[1]} no longer kills the process: {done.stdout.strip()}")
    _expect(done.returncode == -signal.SIGSEGV, f"killed by {_signal_name(done.returncode)}, expected SIGSEGV")
    # rank 9, the limit, runs
    out = oracle.run("ADD", np.ones((1,) * 9, np.float32), np.ones((2,), np.float32))
    _expect(out.shape == (1,) * 8 + (2,), out.shape)


@proof("mnn-empty-output", cases=[
    (((0, 3), (1, 3)), dict(rule="numpy", max_rank=9)),
])
def mnn_computes_no_empty_output(dev):
    mnn, oracle = _mnn()
    shapes, _ = _case(dev)
    _expect(_plan(dev).shape == (0, 3))
    (finding,) = _findings(dev)
    _expect("(0,3)" in finding.note, finding.note)
    try:
        out = oracle.run("ADD", np.zeros(shapes[0], np.float32), np.ones(shapes[1], np.float32))
    except oracle.RuntimeRefused as e:
        _expect("reading the output of shape (0, 3) fails" in e.message, e.message)  # the shape is numpy's
    else:
        _fixed(dev, mnn, f"ADD of {shapes[0]} and {shapes[1]} now gives an output of shape {out.shape}")


def _bits(op, x, y):
    """op computed on the float32 bit patterns read as int32 (x, y broadcast)."""
    x, y = (np.ascontiguousarray(v).view(np.int32) for v in np.broadcast_arrays(x, y))
    return {"GREATER": np.greater, "GREATER_EQUAL": np.greater_equal, "LESS": np.less, "LESS_EQUAL": np.less_equal,
            "EQUAL": np.equal, "NOTEQUAL": np.not_equal}[op](x, y).astype(np.int32)


@proof("mnn-compare-bits", cases=[
    (((2, 1), (1, 3)), dict(rule="numpy", max_rank=9, op="GREATER")),
])
def mnn_compares_stretched_floats_as_ints(dev):
    mnn, oracle = _mnn()
    from . import ops

    (finding,) = _findings(dev, 0)
    one = applicable((2, 3), (3,), rule="numpy", max_rank=9, op="GREATER")  # one input stretched: compared as floats
    _expect(dev not in [n.deviation.id for n in one])
    x, y = np.array([[-1], [-0.0]], np.float32), np.array([[-3, 0, -2]], np.float32)
    fixed = []
    for op in BY_ID[dev].only_ops:
        theirs = oracle.run(op, x, y)
        if np.array_equal(theirs, ops.run(op, x, y)):
            fixed.append(op)
        else:
            _expect(np.array_equal(theirs, _bits(op, x, y)), (op, theirs))
        # one input stretched (the loop path): the values are compared
        a = np.array([[-1, -3, 0], [-0.0, 2, -2]], np.float32)
        _expect(np.array_equal(oracle.run(op, a, y[0]), ops.run(op, a, y[0])), op)
    if fixed:
        _fixed(dev, mnn, f"{', '.join(fixed)} of stretched float32 inputs now compare the values")


@proof("mnn-less-bits", cases=[
    (((5,), (5,)), dict(rule="numpy", max_rank=9, op="LESS")),
])
def mnn_less_compares_floats_as_ints(dev):
    mnn, oracle = _mnn()
    from . import ops

    (finding,) = _findings(dev)
    _expect("-1 and -3 gives 1" in finding.note, finding.note)
    x, y = np.array([-1, -3, -0.0, -1, 2], np.float32), np.array([-3, -1, 0, 2, -1], np.float32)
    theirs = oracle.run("LESS", x, y)
    if np.array_equal(theirs, ops.run("LESS", x, y)):
        _fixed(dev, mnn, "LESS of float32 now compares the values")
    _expect(np.array_equal(theirs, _bits("LESS", x, y)), theirs)
    _expect(np.array_equal(theirs, [1, 0, 1, 1, 0]), theirs)
    _expect(np.array_equal(oracle.run("LESS", np.float32(-1), np.float32(-3)), 1))  # the one-element path too


@proof("mnn-select-y", cases=[
    (((2, 3), (2, 3), (2, 1)), dict(rule="numpy", max_rank=9, op="SELECT")),
])
def mnn_select_does_not_stretch_y(dev):
    mnn, oracle = _mnn()
    from . import ops

    (finding,) = _findings(dev, 0)
    x_stretched = applicable((2, 3), (2, 1), (2, 3), rule="numpy", max_rank=9, op="SELECT")  # y checked: right
    _expect(dev not in [n.deviation.id for n in x_stretched])
    cond = np.array([[1, 0, 1], [0, 0, 0]], np.int32)
    x, y = np.array([[1, 2, 3], [4, 5, 6]], np.float32), np.array([[-1], [-2]], np.float32)
    theirs = oracle.run("SELECT", cond, x, y)
    if np.array_equal(theirs, ops.run("SELECT", cond, x, y)):
        _fixed(dev, mnn, "Select now stretches y (2,1) against x (2,3)")
    # the output's flat position k takes y's element k: position 1 takes y[1] = -2; from 2 on, past y's end
    _expect(theirs[0].tolist() == [1, -2, 3], theirs)
    x2 = np.array([[7], [8]], np.float32)  # a stretched x is stretched: right
    _expect(np.array_equal(oracle.run("SELECT", cond, x2, x), ops.run("SELECT", cond, x2, x)))
