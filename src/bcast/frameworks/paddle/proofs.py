"""Proofs of the paddle records: expand with an empty shape list, the legacy operators' negative axis
and their axis overhang (in a child process: it kills the process)."""

from __future__ import annotations

import signal

import numpy as np

from ..deviations import applicable
from .._proof import _case, _expect, _expect_error, _findings, _fixed, _need, _plan, _refusal, _run_child, \
    _signal_name, proof


def _paddle():
    paddle = _need("paddle")
    from . import oracle

    return paddle, oracle


@proof("paddle-expand-empty-shape", cases=[
    (((), (2, 3)), dict(rule="unidirectional", max_rank=8, op="expand")),
])
def paddle_expand_keeps_x_for_an_empty_shape(dev):
    paddle, oracle = _paddle()
    (target, x_shape), _ = _case(dev)
    _expect_error(dev)
    (finding,) = _findings(dev)
    _expect("(2,3)" in finding.note, finding.note)
    x = np.arange(6, dtype=np.float32).reshape(x_shape)
    for name in ("expand", "broadcast_to"):
        got = _refusal(oracle.run, name, x, list(target))
        if isinstance(got, str):
            _fixed(dev, paddle, f"paddle.{name}(x of shape {x_shape}, []) refuses: {got}")
        np.testing.assert_array_equal(got, x)  # x unchanged
    # the same empty shape as a Tensor is refused
    with_tensor = _raised(lambda: paddle.expand(paddle.to_tensor(x), paddle.to_tensor(np.zeros(0, np.int64))))
    _expect(with_tensor is not None and "must be greater than or equal to the rank" in with_tensor, with_tensor)


def _raised(fn) -> str | None:
    try:
        fn()
    except Exception as e:  # Paddle's ValueError subclasses
        return str(e)
    return None


@proof("paddle-legacy-negative-axis", cases=[
    (((2, 3, 4, 5), (3, 4)), dict(rule="paddle", axis=-2)),
])
def paddle_legacy_kernel_refuses_a_negative_axis(dev):
    paddle, oracle = _paddle()
    (x_shape, y_shape), attrs = _case(dev)
    plan = _plan(dev)
    _expect(plan.shape == x_shape and plan.attr("start_axis") == 1, plan)
    (finding,) = _findings(dev)
    _expect("resolves to 1" in finding.note, finding.note)
    x = np.arange(120, dtype=np.float32).reshape(x_shape)
    y = np.arange(12, dtype=np.float32).reshape(y_shape)
    got = _refusal(oracle.run, "elementwise_add", x, y, axis=attrs["axis"])
    if not isinstance(got, str):
        np.testing.assert_array_equal(got, x + y.reshape(1, 3, 4, 1))
        _fixed(dev, paddle, f"elementwise_add with axis {attrs['axis']} computes InferMeta's placement")
    _expect("Axis should be great than or equal to 0" in got, got)
    # the axis InferMeta resolves it to runs, with that placement
    resolved = oracle.run("elementwise_add", x, y, axis=plan.attr("start_axis"))
    np.testing.assert_array_equal(resolved, x + y.reshape(1, 3, 4, 1))


@proof("paddle-legacy-axis-overhang", cases=[
    (((1, 1, 3), (5, 1)), dict(rule="paddle", axis=2)),
    (((2, 3, 4, 5), (4, 5, 1)), dict(rule="paddle", axis=2)),
])
def paddle_legacy_axis_overhang_aborts(dev):
    _need("paddle")
    (x_shape, y_shape), attrs = _case(dev, 0)
    _expect_error(dev, 0)
    _expect(len(_findings(dev, 0)) == 1 and len(_findings(dev, 1)) == 1)
    code = f"""
        import numpy as np
        from bcast.frameworks.paddle import oracle
        x, y = np.ones({x_shape}, np.float32), np.ones({y_shape}, np.float32)
        try:
            out = oracle.run("elementwise_add", x, y, axis={attrs['axis']})
            print("returned", out.shape)
        except oracle.RuntimeRefused as e:
            print("refused", e.message)
    """
    # A write past a vector's end: what follows depends on the heap's layout.  Run alone it aborts (SIGABRT,
    # "free(): invalid pointer"); in some layouts (under pytest, here) the process survives the write and
    # InferMeta goes on comparing Y's 5, placed at axis 2, with X's 3: the placement it never refused.
    r = _run_child(code)
    survived = "Received [3] in X is not equal to [5] in Y at i:2" in r.stdout
    if r.returncode == 0 and not survived:
        _fixed(dev, None, f"X {x_shape}, Y {y_shape}, axis {attrs['axis']} no longer aborts: {r.stdout.strip()}")
    _expect(survived or r.returncode == -signal.SIGABRT,
            f"killed by {_signal_name(r.returncode)}, expected SIGABRT: {r.stderr[-500:]}")
    _expect(survived or "free(): invalid pointer" in r.stderr or "Process abort signal" in r.stderr, r.stderr[-500:])
    # a placement whose overhang is trailing 1s (bcast ignores them) may go on: here it returns the right values
    (x_shape, y_shape), attrs = _case(dev, 1)
    plan = _plan(dev, 1)
    r = _run_child(f"""
        import numpy as np
        from bcast.frameworks.paddle import oracle
        x = np.arange(120, dtype=np.float32).reshape({x_shape})
        y = np.arange(20, dtype=np.float32).reshape({y_shape})
        out = oracle.run("elementwise_add", x, y, axis={attrs['axis']})
        print(out.shape, bool((out == x + y.reshape(1, 1, 4, 5)).all()))
    """)
    _expect(r.returncode == 0 and r.stdout.strip() == f"{plan.shape} True", (r.returncode, r.stdout, r.stderr[-300:]))


@proof("paddle-pir-translator-axis", cases=[
    (((3, 4), (2, 3, 4, 5)), dict(rule="paddle", axis=1, op="elementwise_add")),
    (((2, 3, 4, 5), (4, 5, 1)), dict(rule="paddle", axis=2, op="elementwise_mul")),
])
def paddle_pir_translator_reads_axis_its_own_way(dev):
    paddle, oracle = _paddle()
    from .deviations import translated

    fixed = []
    for i in (0, 1):
        (x_shape, y_shape), attrs = _case(dev, i)
        plan = _plan(dev, i)
        (finding,) = _findings(dev, i)
        _expect("an error" in finding.note, finding.note)
        x = np.arange(np.prod(x_shape), dtype=np.float32).reshape(x_shape)
        y = np.arange(np.prod(y_shape), dtype=np.float32).reshape(y_shape)
        _expect(oracle.run(attrs["op"], x, y, axis=attrs["axis"]).shape == plan.shape)  # the operator itself
        got = _refusal(oracle.run_translated, attrs["op"], x, y, axis=attrs["axis"])
        if not isinstance(got, str):
            fixed.append(f"X {x_shape}, Y {y_shape}, axis {attrs['axis']} gives {got.shape}")
            continue
        _expect("Broadcast dimension mismatch" in got, got)
    if len(fixed) == 2:
        _fixed(dev, paddle, "; ".join(fixed))
    _expect(not fixed, fixed)
    # where the translator's reshape is InferMeta's placement, both agree (values too)
    x_shape, y_shape = (2, 3, 4, 5), (3, 4)
    _expect(not applicable(x_shape, y_shape, rule="paddle", axis=1, op="elementwise_add")
            and translated(x_shape, y_shape, 1) == (1, 3, 4, 1))
    x = np.arange(120, dtype=np.float32).reshape(x_shape)
    y = np.arange(12, dtype=np.float32).reshape(y_shape)
    np.testing.assert_array_equal(oracle.run_translated("elementwise_add", x, y, axis=1), x + y.reshape(1, 3, 4, 1))


@proof("paddle-where-rank-9", cases=[
    ((((1,) * 8), ((1,) * 9), ((1,) * 9)), dict(rule="numpy", max_rank=9, op="where")),
])
def paddle_where_refuses_rank_9(dev):
    paddle, oracle = _paddle()
    shapes, attrs = _case(dev)
    plan = _plan(dev)
    _expect(plan.shape == (1,) * 9 and len(_findings(dev)) == 1)
    cond, x, y = np.ones(shapes[0], bool), np.ones(shapes[1], np.float32), np.full(shapes[2], 2, np.float32)
    got = _refusal(oracle.run, "where", cond, x, y)
    if not isinstance(got, str):
        _fixed(dev, paddle, f"where of {[s for s in shapes]} gives {got.shape}")
    _expect("must not be greater than 8" in got, got)
    # three equal rank-9 shapes are taken, and an element-wise op broadcasts at rank 9
    _expect(oracle.run("where", np.ones((1,) * 9, bool), x, y).shape == (1,) * 9)
    _expect(oracle.run("add", np.ones((2,) * 9, np.float32), x).shape == (2,) * 9)
