"""Proofs of the ncnn records: the BinaryOp on pairs outside its rules, on empty blobs (in a child:
it kills the process), and the PyPI wheel's fast-math values."""

from __future__ import annotations

import signal

import numpy as np

from ...core._format import format_shape
from . import ops as ncnn_ops
from ..deviations import BY_ID, applicable

from .._proof import (
    CASES, _case, _expect, _expect_error, _findings, _fixed, _need, _signal_name, proof,
)


def _ncnn():
    ncnn = _need("ncnn")
    from . import oracle as oracle

    return ncnn, oracle


@proof("ncnn-garbage", cases=[
    (((2, 3, 4), (3, 4)), dict(rule="ncnn")),
    (((3, 2), (4, 2)), dict(rule="ncnn")),
])
def ncnn_computes_garbage_silently(dev):
    ncnn, oracle = _ncnn()

    # The registry's example: a mismatch on the innermost axis, out-of-bounds reads (in this process: they
    # stay within the allocator's slack).
    (a_shape, b_shape), attrs = _case(dev, 0)
    _expect_error(dev, 0)
    A = np.arange(24, dtype=np.float32).reshape(a_shape)
    B = 100 * np.arange(12, dtype=np.float32).reshape(b_shape)
    ret, out = oracle.forward("ADD", A, B)
    if ret != 0:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} returns {ret}")
    (finding,) = _findings(dev, 0)
    _expect(np.array(out).shape == (3, 4, 4), np.array(out).shape)  # B read as (3,4,1), A (2,3,4): per-axis max
    _expect(format_shape(np.array(out).shape) in finding.note, finding.note)

    # A mismatch on an outer axis only: rows past the end of A are clamped.
    (a_shape, b_shape), attrs = _case(dev, 1)
    _expect_error(dev, 1)
    A = np.arange(6, dtype=np.float32).reshape(a_shape)
    B = 100 * np.arange(1, 9, dtype=np.float32).reshape(b_shape)
    ret, out = oracle.forward("ADD", A, B)
    if ret != 0:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} returns {ret}")
    clamped = A[np.minimum(np.arange(4), a_shape[0] - 1)] + B
    np.testing.assert_array_equal(np.array(out), clamped)


@proof("ncnn-empty-blob", cases=[
    (((0, 3), (1, 3)), dict(rule="ncnn")),
])
def ncnn_empty_blob_crashes(dev):
    ncnn, oracle = _ncnn()
    (a_shape, b_shape), attrs = _case(dev)
    _expect_error(dev)
    try:  # in a child process
        out = oracle.run_isolated("ADD", np.zeros(a_shape, np.float32), np.ones(b_shape, np.float32))
    except oracle.RuntimeCrashed as e:
        _expect(e.returncode == -signal.SIGFPE, f"killed by {_signal_name(e.returncode)}, expected SIGFPE")
    except oracle.RuntimeRefused as e:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} no longer kills the process: {e.message}")
    else:
        _fixed(dev, ncnn, f"BinaryOp of A {a_shape} and B {b_shape} no longer kills the process: it returns 0 and "
                          f"an output of shape {out.shape}")

    # 1-D empty blobs do not crash: ncnn returns 0 and a non-empty output, as the note says.
    _expect("gives (1,)" in applicable((0,), (1,), rule="ncnn")[0].note)
    out = oracle.run_isolated("ADD", np.zeros((0,), np.float32), np.ones((1,), np.float32))
    _expect(out.shape == (1,), out.shape)


@proof("ncnn-fast-math", cases=[])
def ncnn_fast_math_departs_from_the_functors(dev):
    """A deviation of values (no shape case, no check): where the wheel's vector body (MIN: its
    one-element path) departs from ncnn's functor, bcast computes the functor, which the wheel's other
    path computes.  tests/frameworks/test_ncnn_run.py's differential allows exactly ``ncnn_wheel.wheel_departs``.

    Which near-integer quotients FMOD gets wrong depends on the vector body the wheel picks for the processor
    (AMD EPYC with AVX-512: FMOD(-12.33, -4.11) departs; with AVX2 and no AVX-512, FMOD(16.217218, -3.2434437)
    does and FMOD(-12.33, -4.11) does not): the cases of one group are alternatives, and the group is fixed only
    where none of them departs."""
    ncnn, oracle = _ncnn()
    from .proofs_wheel import same_bits, wheel_departs

    _expect(BY_ID[dev].check is None and not CASES[dev])
    f32 = np.float32
    cases: list[tuple] = [  # op, a, b, the functor's value, the path that departs (, the group of alternatives)
        ("DIV", 1.0, 0.0, f32(np.inf), "vector"),
        ("RDIV", 0.0, 2.0, f32(np.inf), "vector"),
        ("FLOOR_DIVIDE", -3.0, 0.0, f32(-np.inf), "vector"),
        ("POW", -2.0, 2.0, f32(4.0), "vector"),
        ("RPOW", 3.0, -2.0, f32(-8.0), "vector"),
        ("ATAN2", -0.0, -1.0, f32(-np.pi), "vector"),
        ("FMOD", -12.33, -4.11, np.fmod(f32(-12.33), f32(-4.11)), "vector", "near"),  # x/y rounds to 3 (AVX-512)
        ("FMOD", 16.217218, -3.2434437, np.fmod(f32(16.217218), f32(-3.2434437)), "vector", "near"),  # -5 (AVX2)
        ("FMOD", -2.0, 1.0, f32(-0.0), "vector"),  # fmodf keeps the dividend's sign: -0
        ("FLOOR_DIVIDE", -6.85, 1.37, np.floor(f32(-6.85) / f32(1.37)), "vector"),  # rounds to -5
        ("REMAINDER", 1.37, -2.74, f32(1.37), "vector"),  # x/y is -0.5: the tie goes to even, 0
        ("MIN", -0.0, 0.0, f32(-0.0), "scalar"),  # std::min keeps its first operand
        ("MIN", 1.0, np.nan, f32(1.0), "scalar"),  # ... and a NaN second operand gives the first
    ]
    kept: dict[str, list[str]] = {}  # group -> the cases of it that give the functor on the departing path
    departed: set[str] = set()
    for k, (name, a, b, functor, path, *tag) in enumerate(cases):
        group = tag[0] if tag else str(k)
        _expect(name in BY_ID[dev].only_ops, name)
        x, y = np.full(32, a, f32), np.full(32, b, f32)
        _expect(wheel_departs(name, x[:1], y[:1])[0], name)
        _expect(same_bits(ncnn_ops.run(name, x, y), np.full(32, functor, f32)), name)
        departing, keeping = (slice(None), slice(0, 1)) if path == "vector" else (slice(0, 1), slice(None))
        _expect(same_bits(oracle.run(name, x[keeping], y[keeping]), np.full(len(x[keeping]), functor, f32)), name)
        wheel = oracle.run(name, x[departing], y[departing])
        if same_bits(wheel[:1], np.full(1, functor, f32)):
            kept.setdefault(group, []).append(f"{name}({a}, {b}) on its {path} path gives the functor's {functor}")
        else:
            departed.add(group)
    fixed = [line for group, lines in kept.items() if group not in departed for line in lines]
    if fixed:
        _fixed(dev, ncnn, "; ".join(fixed))

