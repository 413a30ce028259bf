"""Proofs of the OpenVINO records about running ops: PRelu, explicit and scalar Broadcast, empty
data and outputs, Select on the CPU plugin, and the values it computes.  Runs that kill the
process (or read memory they should not) run in a child, judged by its return code."""

from __future__ import annotations

import signal
from typing import Any

import numpy as np

from ...rules import infer
from ...core.errors import InputError
from ...core._format import format_shape
from . import ops as openvino_ops
from ..deviations import BY_ID, applicable
from .._oracle import RuntimeRefused

from .._proof import (
    CASES, _aligned, _case, _expect, _expect_error, _findings, _fixed, _ids, _plan, _raises, _refusal,
    _run_child, _signal_name, proof,
)
from .proofs import _child_json, _ov, _ov_values, _pdpd


#: PRelu on the CPU plugin, in a child (it reads slope elements no rule pairs with data's).
_OV_PRELU_CPU = """
import json, numpy as np
from bcast.frameworks.openvino import oracle
for x_shape, s_shape in {cases!r}:
    X = -np.arange(1, 1 + int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape)  # all negative
    S = 10 * np.arange(1, 1 + int(np.prod(s_shape)), dtype=np.float32).reshape(s_shape)
    out = {{"inferred": list(oracle.infer_shape("PRelu", [x_shape, s_shape]))}}
    try:
        y = oracle.run("PRelu", [X, S], static=True)
        out.update(shape=list(y.shape), values=y.ravel().tolist())
    except oracle.RuntimeRefused as e:
        out["error"] = e.message
    print(json.dumps(out), flush=True)
"""


@proof("openvino-prelu-unchecked", cases=[
    (((3, 1), (1, 4)), dict(rule="openvino-prelu")),
    (((2, 1), (3,)), dict(rule="openvino-prelu")),
])
def openvino_prelu_slope_unchecked(dev):
    ov, _ = _ov()
    cases = CASES[dev]
    for i in range(len(cases)):
        _expect_error(dev, i)  # neither per channel nor numpy-broadcastable into data
    runs = _child_json(_OV_PRELU_CPU.format(cases=[shapes for shapes, _ in cases]))
    _expect(len(runs) == len(cases), runs)
    for i, (((x_shape, s_shape), _attrs), run) in enumerate(zip(cases, runs)):
        where = f"PRelu of data {x_shape} with slope {s_shape}"
        _expect(tuple(run["inferred"]) == x_shape, f"{where}: shape inference gives {run['inferred']}")
        if "error" in run:
            _fixed(dev, ov, f"{where} no longer runs on the CPU plugin: {run['error']}")
        _expect(tuple(run["shape"]) == x_shape, run)
        X = -np.arange(1, 1 + int(np.prod(x_shape)), dtype=np.float32).reshape(x_shape)
        last = 10 * float(np.prod(s_shape))  # the slope's last element
        np.testing.assert_array_equal(np.array(run["values"], np.float32).reshape(x_shape), X * last,
                                      err_msg=f"{where}: expected every element times the slope's last one")
        (finding,) = _findings(dev, i)
        _expect("compiles and runs" in finding.note and format_shape(x_shape) in finding.note, finding.note)


@proof("openvino-explicit-duplicate-axes", cases=[
    (((1, 3), (2, 3, 4)), dict(rule="explicit", axes_mapping=[1, 1])),
])
def openvino_explicit_accepts_duplicate_axes(dev):
    ov, oracle = _ov()
    (d_shape, target), attrs = _case(dev)
    _expect_error(dev)
    axes = attrs["axes_mapping"]
    out = _refusal(oracle.infer_shape, "Broadcast", [d_shape, target, axes], mode="explicit")
    if isinstance(out, str):
        _fixed(dev, ov, f"Broadcast explicit with axes_mapping {axes} is refused: {out}")
    _expect(out == target)
    D = np.array([[1, 2, 3]], np.float32)
    cpu = oracle.run("Broadcast", [D, target, axes], static=True, mode="explicit")
    ref = oracle.run("Broadcast", [D, target, axes], device="evaluate", mode="explicit")
    if np.array_equal(cpu, ref):
        _fixed(dev, ov, f"Broadcast explicit with axes_mapping {axes} is accepted and the CPU plugin and "
                        "the reference now agree")
    # Where the mapping is wrong in another way too, OpenVINO refuses it, and the registry does not list it.
    for d2, t2, a2 in [((1,), (1,), [0, 0]), ((3, 4), (2, 3, 4), [1, 1])]:  # length != rank; 4 vs target 3
        with _raises(RuntimeRefused):
            oracle.infer_shape("Broadcast", [d2, t2, a2], mode="explicit")
        _expect(dev not in _ids(applicable(d2, t2, rule="explicit", axes_mapping=a2)))


@proof("openvino-cpu-bidirectional-zero", cases=[
    (((0,), (2, 1)), dict(rule="bidirectional")),
    (((1,), (2, 0)), dict(rule="bidirectional")),
])
def openvino_cpu_bidirectional_zero(dev):
    ov, oracle = _ov()
    (d_shape, target), attrs = _case(dev)
    plan = _plan(dev)
    _expect(plan.shape == (2, 0))
    # OpenVINO's own shape inference agrees with bcast (and numpy) ...
    _expect(oracle.infer_shape("Broadcast", [d_shape, target], mode="bidirectional") == plan.shape)
    # ... but the CPU plugin refuses to compile it
    got = _refusal(oracle.run, "Broadcast", [np.zeros(d_shape, np.float32), target], static=True,
                   mode="bidirectional")
    if not isinstance(got, str):
        _fixed(dev, ov, f"Broadcast bidirectional of data {d_shape} to {list(target)} compiles on CPU, "
                        f"output shape {got.shape}")
    _expect("cannot be broadcasted" in got, got)

    # data (1,) into [2,0]: a static-shape model keeps the 1; a dynamic one and shape inference give (2,0)
    (d_shape, target), _ = _case(dev, 1)
    _expect(_plan(dev, 1).shape == (2, 0))
    _expect(oracle.infer_shape("Broadcast", [d_shape, target], mode="bidirectional") == (2, 0))
    D = np.ones(d_shape, np.float32)
    _expect(oracle.run("Broadcast", [D, target], mode="bidirectional").shape == (2, 0))
    got = oracle.run("Broadcast", [D, target], static=True, mode="bidirectional")
    if got.shape == (2, 0):
        _fixed(dev, ov, f"Broadcast bidirectional of data {d_shape} to {list(target)} gives (2,0) on the CPU")
    np.testing.assert_array_equal(got, np.ones((2, 1), np.float32))
    (finding,) = _findings(dev, 1)
    _expect("(2,1)" in finding.note, finding.note)


#: A scalar Broadcast to [] on the CPU plugin, in a child: compiling it kills the process.
_OV_SCALAR = """
import numpy as np
from bcast.frameworks.openvino import oracle
y = oracle.run("Broadcast", [np.array(3.0, np.float32), []], static=True, mode={mode!r})
print("compiled; output shape", y.shape, flush=True)
"""


@proof("openvino-cpu-scalar-to-scalar", cases=[
    (((), ()), dict(rule="bidirectional")),
    (((), ()), dict(rule="unidirectional")),  # Broadcast-3 mode numpy
])
def openvino_cpu_scalar_to_scalar_crashes(dev):
    ov, _ = _ov()
    outcomes = []
    for (shapes, attrs), mode in zip(CASES[dev], ("bidirectional", "numpy")):
        _expect(infer(*shapes, **attrs).shape == ())
        p = _run_child(_OV_SCALAR.format(mode=mode))
        outcomes.append((mode, p))
    crashed = [(m, p.returncode) for m, p in outcomes if p.returncode < 0]
    if len(crashed) != len(outcomes):
        told = "; ".join(
            f"mode {m}: rc {p.returncode}, stdout {p.stdout.strip()!r}, stderr {p.stderr.strip()[-300:]!r}"
            for m, p in outcomes if p.returncode >= 0
        )
        _fixed(dev, ov, f"compiling a scalar Broadcast to [] no longer kills the process: {told}")
    for mode, rc in crashed:  # a segmentation fault in 2026.4.1
        _expect(rc == -signal.SIGSEGV, f"mode {mode}: killed by {_signal_name(rc)}, expected SIGSEGV")


@proof("openvino-cpu-select-pdpd-axis", cases=[
    (((3,), (2, 3), (3,)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=1)),
    (((2, 3), (2, 3), (2, 3)), dict(rule="openvino-select", auto_broadcast="pdpd", axis=0)),
])
def openvino_cpu_select_pdpd_axis(dev):
    ov, oracle = _ov()
    fixed = []
    for i, (shapes, attrs) in enumerate(CASES[dev]):
        C = np.arange(int(np.prod(shapes[0]))).reshape(shapes[0]) % 2 == 0
        T = _ov_values(shapes[1], np.float32, 1, 9, seed=i)
        E = -_ov_values(shapes[2], np.float32, 1, 9, seed=i + 1)
        want = np.where(*_aligned(_plan(dev, i), [C, T, E]))
        np.testing.assert_array_equal(oracle.run("Select", [C, T, E], device="evaluate", **_pdpd(attrs["axis"])), want)
        got = _refusal(oracle.run, "Select", [C, T, E], static=True, **_pdpd(attrs["axis"]))
        if not isinstance(got, str):
            fixed.append(f"Select pdpd axis {attrs['axis']} of {shapes} compiles on the CPU")
        else:
            _expect("not broadcastable" in got or "Unsupported auto broadcast specification" in got, got)
    # int32 and int64 run them right
    for dtype in ("int32", "int64"):
        C, T, E = np.array([True, False, True]), np.ones((2, 3), dtype), np.zeros(3, dtype)
        np.testing.assert_array_equal(oracle.run("Select", [C, T, E], static=True, **_pdpd(1)), np.where(C, T, E))
        _expect(dev not in _ids(applicable((3,), (2, 3), (3,), rule="openvino-select", auto_broadcast="pdpd",
                                           axis=1, op_attrs={"element_type": dtype})))
    # the same first case with axis -1 (which means 1 for else, 1 for cond) runs; so does an empty output
    C, T, E = np.array([True, False, True]), np.ones((2, 3), np.float32), np.zeros(3, np.float32)
    np.testing.assert_array_equal(oracle.run("Select", [C, T, E], static=True, **_pdpd(-1)), np.where(C, T, E))
    empty = [np.ones(0, bool), np.ones((2, 0), np.float32), np.ones(0, np.float32)]
    _expect(oracle.run("Select", empty, static=True, **_pdpd(1)).shape == (2, 0))
    _expect(dev not in _ids(applicable((0,), (2, 0), (0,), rule="openvino-select", auto_broadcast="pdpd", axis=1)))
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


#: One Broadcast of data with a 0 dim, in a child: it dies of SIGFPE.
_OV_EMPTY_DATA = """
import numpy as np
from bcast.frameworks.openvino import oracle
y = oracle.run("Broadcast", [np.zeros({shape}, np.float32), {target}], {how}, mode={mode!r})
print("survived; output shape", y.shape, flush=True)
"""


@proof("openvino-broadcast-empty-data", cases=[
    (((3, 0), (3, 0)), dict(rule="unidirectional")),  # Broadcast-3 mode numpy: target, then data
    (((0,), (2, 0)), dict(rule="bidirectional")),
])
def openvino_broadcast_of_empty_data_crashes(dev):
    ov, oracle = _ov()
    runs: list[Any] = []
    for (shapes, _attrs), mode in zip(CASES[dev], ("numpy", "bidirectional")):
        target, data = shapes if mode == "numpy" else shapes[::-1]
        _expect(_plan(dev, len(runs) // 2).shape == target)  # the spec: the empty target shape
        # a CPU model of dynamic shapes returns it (in-process: it does not crash)
        _expect(oracle.run("Broadcast", [np.zeros(data, np.float32), list(target)], mode=mode).shape == target)
        for how in ("static=True", "device='evaluate'"):
            p = _run_child(_OV_EMPTY_DATA.format(shape=data, target=list(target), how=how, mode=mode))
            runs.append((f"Broadcast mode {mode} of data {data} to {list(target)} ({how})", p))
    survived = [f"{what}: rc {p.returncode}, {p.stdout.strip()!r}" for what, p in runs if p.returncode >= 0]
    if survived:
        _fixed(dev, ov, "; ".join(survived))
    for what, p in runs:
        _expect(p.returncode == -signal.SIGFPE, f"{what}: killed by {_signal_name(p.returncode)}, expected SIGFPE")


#: Model.evaluate of an op with an empty output, repeated, in a child: it corrupts the heap.
_OV_EMPTY_OUTPUT = """
import numpy as np
from bcast.frameworks.openvino import oracle
inputs = [np.ones(s, {dtypes!r}[i]) for i, s in enumerate({shapes!r})]
for _ in range(100):
    y = oracle.run({op!r}, inputs, device="evaluate")
print("survived; output shape", y.shape, flush=True)
"""


@proof("openvino-evaluate-empty-output", cases=[
    (((2, 0, 3), (3,)), dict(rule="numpy")),
    (((2, 0, 3), (3,), (3,)), dict(rule="openvino-select", auto_broadcast="numpy")),
    (((0, 3, 3), (3,)), dict(rule="openvino-prelu")),
])
def openvino_evaluate_empty_output_corrupts_memory(dev):
    ov, oracle = _ov()
    element_types = {"Add": ["int64"] * 2, "Select": ["bool", "int64", "int64"], "PRelu": ["float32"] * 2}
    for i, (op, dtypes) in enumerate(element_types.items()):
        shapes, _ = _case(dev, i)
        inputs = [np.ones(s, t) for s, t in zip(shapes, dtypes)]
        empty = shapes[0] if op == "PRelu" else (2, 0, 3)
        _expect(openvino_ops.run(op, *inputs).shape == _plan(dev, i).shape == empty)
        p = _run_child(_OV_EMPTY_OUTPUT.format(op=op, shapes=shapes, dtypes=dtypes))
        if "survived" in p.stdout:
            _fixed(dev, ov, f"{op} of {shapes} in Model.evaluate, 100 times, exits with "
                            f"{p.returncode}: {p.stdout.strip()!r}")
        # the corrupted heap kills the process, or a corrupted size makes an allocation fail
        # (SIGABRT or SIGSEGV seen; any signal is accepted, the heap it corrupts is not ours to predict)
        _expect(p.returncode < 0 or "std::bad_alloc" in p.stderr, (
            f"{op}: rc {p.returncode} ({_signal_name(p.returncode) if p.returncode < 0 else 'exit'}), "
            f"{p.stderr.strip()[-300:]!r}"))


@proof("openvino-evaluate-pdpd-greater", cases=[
    (((2, 3), (3,)), dict(rule="pdpd", axis=-1, op="Greater")),
    (((2, 3), (3,)), dict(rule="pdpd", axis=-1, op="GreaterEqual")),
])
def openvino_evaluate_pdpd_greater(dev):
    ov, oracle = _ov()
    A = np.array([[1, 5, 3], [4, 2, 6]], np.float32)
    B = np.array([3, 3, 3], np.float32)
    fixed = []
    for i, op in enumerate(("Greater", "GreaterEqual")):
        ((a_shape, b_shape), attrs) = _case(dev, i)
        _expect((a_shape, b_shape) == (A.shape, B.shape))
        want = getattr(np, op.lower().replace("equal", "_equal"))(A, B)
        np.testing.assert_array_equal(oracle.run(op, [A, B], static=True, **_pdpd(attrs["axis"])), want)  # the CPU
        # the second row reads whatever memory follows B, which may by chance give the right answer:
        # only five right answers in a row count as fixed
        for _ in range(5):
            got = oracle.run(op, [A, B.copy()], device="evaluate", **_pdpd(attrs["axis"]))
            if not np.array_equal(got, want):
                break
        else:
            fixed.append(f"Model.evaluate {op} pdpd of {a_shape} and {b_shape} is right")
            continue
        np.testing.assert_array_equal(got[0], want[0])  # the first row reads B itself, the second what follows
    _expect(dev not in _ids(applicable((2, 3), (3,), rule="pdpd", op="Less")))
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


@proof("openvino-cpu-integer-values", cases=[])
def openvino_cpu_integer_values(dev):
    """A deviation of values (no check): bcast computes what Model.evaluate (the reference) computes."""
    ov, oracle = _ov()
    _expect(BY_ID[dev].check is None and not CASES[dev])
    run = openvino_ops.run
    cases: list[tuple[Any, ...]] = [
        # what, op, (A, B), element type, attrs, a model of static shapes?, the CPU's values, the spec's
        # (None: an error)
        ("int8 saturates", "Add", [[100, -100], [100, 100]], "int8", {}, False, [127, 0], [-56, 0]),
        ("uint8 saturates", "Subtract", [[3], [5]], "uint8", {}, False, [0], [254]),
        ("int8 Divide rounds (dynamic)", "Divide", [[4, 7, -7], [7, 2, 2]], "int8", {}, False, [1, 4, -4], [0, 3, -4]),
        ("int8 Divide truncates (static)", "Divide", [[4, 7, -7], [7, 2, 2]], "int8", {}, True, [0, 3, -3],
         [0, 3, -4]),
        ("int64 in int32", "Add", [[2**40], [3]], "int64", {}, False, [3], [2**40 + 3]),
        ("Divide by 0", "Divide", [[7, 1], [0, 1]], "int32", {}, False, [np.iinfo(np.int32).min, 1], None),
    ] + [
        (f"{t} Divide truncates", "Divide", [[-7, 7], [2, -2]], t, {}, False, [-3, -3], [-4, -4])
        for t in ("int16", "int32", "int64")
    ]
    fixed = []
    for what, op, (x, y), dtype, attrs, static, cpu_model, spec in cases:
        X, Y = np.array(x, dtype), np.array(y, dtype)
        if spec is None:  # bcast refuses, as the reference does
            with _raises(InputError, match="division by zero"):
                run(op, X, Y)
            with _raises(RuntimeRefused, match="division by zero"):
                oracle.run(op, [X, Y], device="evaluate")
        else:
            _expect(run(op, X, Y, **attrs).tolist() == spec, what)
            ref = _refusal(oracle.run, op, [X, Y], device="evaluate", **attrs)
            _expect(isinstance(ref, str) or ref.tolist() == spec, what)  # (evaluate lacks int8, int16 Divide)
        cpu = oracle.run(op, [X, Y], static=static, **attrs).tolist()
        if cpu == spec:
            fixed.append(f"{what}: {op} {x} {y} gives {cpu} on the CPU")
        else:
            _expect(cpu == cpu_model, (what, cpu))
    # with pdpd the CPU honours python_division: floors by default, truncates without
    X, Y = np.array([-7, 7], np.int32), np.array([2, -2], np.int32)
    _expect(oracle.run("Divide", [X, Y], **_pdpd(-1)).tolist() == [-4, -4])
    _expect(oracle.run("Divide", [X, Y], python_division=False, **_pdpd(-1)).tolist() == [-3, -3])
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


@proof("openvino-cpu-minmax-nan", cases=[])
def openvino_cpu_minmax_nan(dev):
    ov, oracle = _ov()
    _expect(BY_ID[dev].check is None and not CASES[dev])
    x, y = np.array([np.nan, 1], np.float32), np.array([1, np.nan], np.float32)
    fixed = []
    for op in ("Maximum", "Minimum"):
        spec = oracle.run(op, [x, y], device="evaluate")  # std::max / std::min: the first operand on a NaN
        np.testing.assert_array_equal(spec, [np.nan, 1])
        np.testing.assert_array_equal(openvino_ops.run(op, x, y), spec)
        cpu = oracle.run(op, [x, y])
        if np.array_equal(cpu, spec, equal_nan=True):
            fixed.append(f"{op}(NaN, 1), {op}(1, NaN) on the CPU give {cpu.tolist()}")
        else:
            np.testing.assert_array_equal(cpu, [1, np.nan])
    if fixed:
        _fixed(dev, ov, "; ".join(fixed))


@proof("openvino-prelu-element-types", cases=[])
def openvino_prelu_checks_no_element_types(dev):
    ov, oracle = _ov()
    _expect(BY_ID[dev].check is None and not CASES[dev])
    accepted = []
    for data, slope in (("float32", "int32"), ("bool", "bool"), ("int8", "float16")):
        with _raises(InputError):  # bcast follows the spec: one floating-point type
            openvino_ops.run("PRelu", np.ones((2, 3), data), np.ones(3, slope))
        if not isinstance(_refusal(oracle.infer_shape, "PRelu", [(2, 3), (3,)], [data, slope]), str):
            accepted.append((data, slope))
    if len(accepted) < 3:
        _fixed(dev, ov, f"PRelu's shape inference now refuses some element types (accepts only {accepted})")

