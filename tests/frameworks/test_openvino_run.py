"""Differential tests: ``bcast.frameworks.openvino.ops.run`` against OpenVINO running the same op on the same arrays.

For every op of :func:`bcast.frameworks.openvino.ops.ops` and every broadcast mode, random
shapes (valid and invalid: from the rules' generators in ``openvino_shapes``)
and random values (fixed seeds) of several element types are run by bcast and
by OpenVINO -- the CPU plugin (all cases of one op in one model, through
:func:`bcast.frameworks.openvino.oracle.run_many`) and ``Model.evaluate`` (the core's
reference implementation; for every pdpd case, and wherever the CPU plugin's
values deviate).  A case agrees when both refuse, or both return the same
shape, element type and values (floats: within a few ulp for Divide, Power,
FloorMod and Mod).

Every other outcome must be one the deviation registry records for this very
query -- ``bcast.frameworks.deviations.applicable`` with the op and its element type
(``op_attrs={"element_type": ...}``), OpenVINO's records only -- and OpenVINO
must then do what the record says (:data:`EXPECTED`).  Some records are about
cases that crash or write memory they should not (:data:`NOT_RUN`): those are
not run here (the tests named in the registry prove them, in a child process).

The registry's value records (no shape check) about the CPU plugin,
openvino-cpu-integer-values and openvino-cpu-minmax-nan, are modelled where
the random values meet them (:func:`cpu_value_model`): the CPU's result must
equal the model, and the reference (evaluate) must equal bcast.  The random
values avoid what those records' proofs observe: overflow of int8 / uint8,
int64 values beyond int32, NaN in Maximum/Minimum, division by zero.
"""

from __future__ import annotations

import random
import zlib
from collections import Counter
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import pytest

pytest.importorskip("openvino")

from bcast import BroadcastError, InputError  # noqa: E402
from bcast.frameworks.openvino import ops as bov  # noqa: E402
from bcast.frameworks.deviations import DEVIATIONS, applicable  # noqa: E402
from bcast.run.execute import MemoryBudgetError, memory_budget_set  # noqa: E402
from bcast.frameworks.openvino import oracle as oracle  # noqa: E402
from bcast.frameworks._oracle import RuntimeRefused  # noqa: E402
from support.openvino_shapes import random_cases, rshape, soften  # noqa: E402

SEED = 20260422
N_PER_MODE = 36  # random cases per op and mode
DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float16", "float32")

#: tally of every comparison: (op, mode, device, outcome) -> count; read by the report
TALLY: Counter = Counter()


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


@dataclass
class Case:
    """One query: the op, its inputs and keywords (as bcast.frameworks.openvino.ops.run and the oracle take
    them), and the rule query the registry is asked about."""

    op: str
    mode: str
    inputs: list
    kw: dict
    rule: str
    shapes: tuple
    rule_attrs: dict
    findings: frozenset = field(default=frozenset())

    def __post_init__(self):
        found = applicable(*self.shapes, rule=self.rule, op=self.op, op_attrs={"element_type": self.dtype},
                           **self.rule_attrs)
        self.findings = frozenset(f.deviation.id for f in found if f.deviation.runtime.startswith("openvino"))

    @property
    def dtype(self) -> str:
        return np.asarray(self.inputs[1 if self.op == "Select" else 0]).dtype.name

    def __str__(self) -> str:
        shapes = ", ".join(f"{np.shape(x)}" if isinstance(x, np.ndarray) else str(list(x)) for x in self.inputs)
        return f"{self.op} {self.dtype} [{shapes}] {self.kw}"


_NONZERO = ("Divide", "FloorMod", "Mod")  # their B is a divisor


def values(rng, op, dtype, shape, role="A"):
    """Random values of ``dtype`` for input ``role`` of ``op``: in ranges where neither int8/uint8
    nor int32 overflows, divisors never 0, powers of positive bases for floats."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        if op == "Power":
            lo, hi = ((-2, 4) if role == "B" else (-5, 6)) if dtype.kind == "i" else ((0, 4) if role == "B" else (0, 6))
        else:
            span = {"int8": 10, "uint8": 20}.get(dtype.name, 40)
            lo, hi = (-span, span + 1) if dtype.kind == "i" else (0, span + 1)
        x = rng.integers(lo, hi, size=shape)
        if (op in _NONZERO and role == "B") or (op == "Power" and role == "A"):  # no 0 ** -1 either
            x = np.where(x == 0, 1 + rng.integers(0, 3, size=shape), x)
        return np.asarray(x, dtype=dtype)
    if op == "Power":
        x = rng.uniform(0.2, 3.0, size=shape) if role == "A" else rng.uniform(-3, 3, size=shape)
    elif op in _NONZERO and role == "B":
        x = rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.5, 4.0, size=shape)
    else:
        x = rng.standard_normal(shape) * 3
    return np.asarray(x, dtype=dtype)


def _dtypes_of(op) -> list:
    allowed = bov.TYPE_CLASSES[bov.OPS[op].types]
    return [d for d in DTYPES if d in allowed]


def eltwise_cases(op, mode, n=N_PER_MODE):
    rng = np.random.default_rng(zlib.crc32(f"{SEED}-{op}-{mode}".encode()))
    cases = []
    extra = {"python_division": False} if op == "Divide" else {}
    for i, (rule, (a, b), attrs) in enumerate(random_cases(mode, n, seed=f"{SEED}-{op}")):
        dtype = _dtypes_of(op)[i % len(_dtypes_of(op))]
        kw = {"auto_broadcast": mode, **attrs}
        if extra and i % 2:  # Divide: half the cases truncate
            kw.update(extra)
        inputs = [values(rng, op, dtype, a, "A"), values(rng, op, dtype, b, "B")]
        cases.append(Case(op, mode, inputs, kw, rule, (a, b), attrs))
    return cases


def select_cases(mode, n=N_PER_MODE):
    rng = np.random.default_rng(SEED + 1)
    cases = []
    for i, (rule, shapes, attrs) in enumerate(random_cases(f"select-{mode}", n, seed=f"{SEED}-select")):
        dtype = DTYPES[i % len(DTYPES)]
        cond = np.asarray(rng.random(shapes[0]) < 0.5)
        inputs = [cond, values(rng, "Select", dtype, shapes[1]), values(rng, "Select", dtype, shapes[2])]
        kw = {"auto_broadcast": mode, **({"axis": attrs["axis"]} if "axis" in attrs else {})}
        cases.append(Case("Select", mode, inputs, kw, rule, shapes, attrs))
    return cases


def prelu_cases(n=3 * N_PER_MODE):
    r = random.Random(f"{SEED}-prelu")
    rng = np.random.default_rng(SEED + 2)
    cases = []
    for i in range(n):
        data = rshape(r, 1, 4)
        pick = r.random()
        if pick < 0.3 and len(data) >= 2:
            slope = (data[1],)  # per channel
        elif pick < 0.8:
            slope = soften(r, data[r.randint(0, len(data)):])  # numpy into data
        else:
            slope = rshape(r, 0, 3)
        dtype = ("float16", "float32")[i % 2]
        x = np.asarray(rng.standard_normal(data) * 3, dtype=dtype)
        s = np.asarray(rng.standard_normal(slope), dtype=dtype)
        cases.append(Case("PRelu", "prelu", [x, s], {}, "openvino-prelu", (data, slope), {}))
    return cases


_BROADCAST_KINDS = {"numpy": "broadcast-numpy", "explicit": "explicit", "bidirectional": "bidirectional",
                    "pdpd": "broadcast-pdpd"}


def broadcast_cases(mode, version, n=N_PER_MODE):
    rng = np.random.default_rng(SEED + 3)
    cases = []
    for i, (rule, shapes, attrs) in enumerate(random_cases(_BROADCAST_KINDS[mode], n, seed=f"{SEED}-b{version}")):
        data_shape, target = (shapes[1], shapes[0]) if mode == "numpy" else shapes
        x = values(rng, "Broadcast", DTYPES[i % len(DTYPES)], data_shape)
        inputs = [x, list(target)] + ([list(attrs["axes_mapping"])] if mode == "explicit" else [])
        kw = {"mode": mode, "version": version, **({"axis": attrs["axis"]} if mode == "pdpd" else {})}
        cases.append(Case("Broadcast", f"{mode}-v{version}", inputs, kw, rule, shapes, attrs))
    return cases


# ---------------------------------------------------------------------------
# The two sides
# ---------------------------------------------------------------------------


def ours(case: Case):
    try:
        return bov.run(case.op, *case.inputs, **case.kw)
    except (BroadcastError, InputError) as e:
        return e


def theirs(cases, device):
    return oracle.run_many(cases[0].op, [(c.inputs, c.kw) for c in cases], device=device)


@cache
def evaluate_has_kernel(op, dtype) -> bool:
    """Whether ``Model.evaluate`` computes ``op`` for ``dtype`` at all (it lacks many, e.g.
    Multiply int8): tried on two elements of equal shapes."""
    if op == "Broadcast":
        inputs = [np.zeros(2, dtype), [2, 2]]
    elif op == "Select":
        inputs = [np.array([True, False]), np.ones(2, dtype), np.ones(2, dtype)]
    else:
        inputs = [np.ones(2, dtype), np.ones(2, dtype)]
    try:
        oracle.run(op, inputs, device="evaluate")
        return True
    except RuntimeRefused:
        return False


# ---------------------------------------------------------------------------
# What the registry says OpenVINO does, per record id
# ---------------------------------------------------------------------------

REFUSED, ACCEPTED = "refuses", "accepts"

#: Registry records that bear on running, by the device they concern ("both": its shape inference).
EXPECTED = {
    "openvino-pdpd-trailing-ones": ("both", REFUSED),
    "openvino-broadcast-pdpd-short-data": ("both", REFUSED),
    "openvino-broadcast-pdpd-stretches-target": ("both", ACCEPTED),
    "openvino-explicit-duplicate-axes": ("both", ACCEPTED),
    "openvino-explicit-scalar-axes": ("both", ACCEPTED),
    "openvino-pdpd-zero-size": ("both", "the opposite of bcast"),
    "openvino-select-reference-pdpd": ("evaluate", "runs, wrong values"),
}
#: Records judged by their own function below, on the CPU: cpu_pdpd_allowed, cpu_bidirectional_model.
CPU_MODELLED = ("openvino-cpu-pdpd-ops", "openvino-cpu-pdpd-reference-fallback",
                "openvino-cpu-pdpd-squared-difference-int", "openvino-cpu-select-pdpd-axis",
                "openvino-cpu-bidirectional-zero")
#: Records of cases that crash the process or write memory they should not: never run in-process here
#: (the registry's own tests run them in a child process).
NOT_RUN = {
    "openvino-cpu-scalar-to-scalar": ("CPU",),
    "openvino-broadcast-pdpd-long-data": ("CPU", "evaluate"),
    "openvino-prelu-unchecked": ("CPU", "evaluate"),
    "openvino-broadcast-empty-data": ("CPU", "evaluate"),
    "openvino-evaluate-empty-output": ("evaluate",),
}

def numpy_placement(case: Case):
    """What the CPU plugin computes for a pdpd op it converts to a numpy-broadcast op: B right-aligned
    (numpy's rule), whatever the axis; REFUSED where numpy's rule refuses the shapes."""
    try:
        return bov.run(case.op, *case.inputs, **{**case.kw, "auto_broadcast": "numpy", "axis": -1})
    except BroadcastError:
        return REFUSED


def cpu_pdpd_allowed(case: Case, mine) -> tuple[str, list]:
    """For a pdpd case on the CPU plugin: (the record that explains it, the outcomes allowed), or
    ("", []) where the CPU must agree with bcast.

    - openvino-cpu-pdpd-ops: the CPU ignores the axis and computes numpy's placement, or fails to compile
      (where that does not fit, and for some element types of the comparisons, logical and bitwise ops);
      where numpy's placement is the axis's, it agrees;
    - openvino-cpu-pdpd-reference-fallback, openvino-cpu-pdpd-squared-difference-int: it fails to compile;
    - openvino-cpu-select-pdpd-axis: it fails to compile.
    """
    if "openvino-cpu-pdpd-ops" in case.findings:
        return "openvino-cpu-pdpd-ops", [mine, REFUSED, numpy_placement(case)]
    if "openvino-cpu-select-pdpd-axis" in case.findings:
        return "openvino-cpu-select-pdpd-axis", [REFUSED]
    for did in ("openvino-cpu-pdpd-reference-fallback", "openvino-cpu-pdpd-squared-difference-int"):
        if did in case.findings:
            return did, [REFUSED]
    return "", []


# ---------------------------------------------------------------------------
# The registry's CPU value records (no shape check: looked up by op)
# ---------------------------------------------------------------------------


def value_records(op: str) -> set:
    """The ids of the registry's records of CPU values (check None) about ``op``."""
    return {d.id for d in DEVIATIONS
            if d.check is None and d.runtime == "openvino (CPU plugin)" and op in d.only_ops}


INTEGER_VALUES = "openvino-cpu-integer-values"
_SMALL_INT_OPS = ("Add", "Subtract", "Multiply", "Divide", "Power", "SquaredDifference")


UNCHECKED = "values not compared"


def cpu_value_model(case: Case, mine):
    """The CPU plugin's values where the registry's openvino-cpu-integer-values applies to this case,
    else ``mine``; :data:`UNCHECKED` where the CPU's values follow no model (int8/uint8 arithmetic:
    saturated, Divide rounded or truncated by the model's kind)."""
    if INTEGER_VALUES not in value_records(case.op):
        return mine
    dtype = np.dtype(case.dtype)
    if case.op in _SMALL_INT_OPS and dtype.name in ("int8", "uint8"):
        return UNCHECKED
    if case.op == "Divide" and dtype.kind == "i" and case.mode != "pdpd":  # (with pdpd it floors)
        return bov.run(case.op, *case.inputs, **{**case.kw, "python_division": False})
    return mine


# ---------------------------------------------------------------------------
# The judge
# ---------------------------------------------------------------------------

# SquaredDifference: the reference rounds x - y to the element type, then the product; the CPU computes
# float16 in float32 and rounds once
_ULP_OPS = {"Divide": 4, "Power": 8, "FloorMod": 4, "Mod": 4, "SquaredDifference": 2}


def same_values(case: Case, got, want) -> str | None:
    """None if ``got`` equals ``want`` (shape, dtype, values; floats within a few ulp for some ops)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"shape/dtype {got.shape} {got.dtype} vs {want.shape} {want.dtype}"
    if want.dtype.kind == "f" and case.op in _ULP_OPS:
        ulps = _ULP_OPS[case.op]
        eps = np.finfo(want.dtype).eps
        # FloorMod/Mod: the error of x - y*q is relative to y, not to the (small) result
        scale = np.maximum(np.abs(want), np.abs(np.asarray(case.inputs[1], np.float64)).max(initial=1.0))
        close = np.abs(got.astype(np.float64) - want) <= ulps * eps * scale
        close |= (np.isnan(got) & np.isnan(want)) | (got == want)
        return None if close.all() else f"values differ beyond {ulps} ulp: {got.ravel()[:6]} vs {want.ravel()[:6]}"
    ok = np.array_equal(got, want, equal_nan=want.dtype.kind == "f")
    return None if ok else f"values differ: {got.ravel()[:8]} vs {want.ravel()[:8]}"


def judge(case: Case, device: str, mine, got) -> tuple[str, str | None]:
    """(outcome for the tally, problem or None)."""
    refused_ours = isinstance(mine, (BroadcastError, InputError))
    refused_theirs = isinstance(got, RuntimeRefused)
    for did, (dev, what) in EXPECTED.items():
        if did not in case.findings or dev not in ("both", device) or did in CPU_MODELLED:
            continue
        # records about shape inference are checked against it; the run's outcome is tallied
        seen = shape_inference(case) if dev == "both" else got
        refused_seen = isinstance(seen, RuntimeRefused)
        if what == REFUSED:
            ok = refused_seen
        elif what == ACCEPTED:
            ok = not refused_seen and refused_ours
        elif what == "runs, wrong values":
            ok = not refused_seen and got.shape == mine.shape
        else:  # the opposite of bcast
            ok = refused_seen != refused_ours
        problem = None if ok else f"registry {did}: OpenVINO {what}, here: {_show(seen)} (bcast {_show(mine)})"
        run = f" (shape inference; the run {'refuses' if refused_theirs else 'runs'})" if dev == "both" else ""
        return f"deviation {did}{run}", problem
    want = mine
    outcome = "agree"
    if device == "CPU" and case.mode == "pdpd" and not refused_ours:
        record, allowed = cpu_pdpd_allowed(case, mine)
        for expected in allowed:
            if _matches(case, got, expected):
                how = "agrees" if expected is mine else "refuses" if expected is REFUSED else "numpy placement"
                return f"deviation {record} ({how})", None
        if allowed:
            return record, f"{record}: OpenVINO {device} {_show(got)}, none of the outcomes recorded"
    if device == "CPU" and "openvino-cpu-bidirectional-zero" in case.findings and not refused_ours:
        model = cpu_bidirectional_model(case, mine)
        if model is REFUSED:
            problem = None if refused_theirs else f"the CPU refuses (registry), here {_show(got)}"
            return "deviation openvino-cpu-bidirectional-zero (refuses)", problem
        want, outcome = model, "deviation openvino-cpu-bidirectional-zero (keeps a 1)"
    if device == "CPU" and not refused_ours:
        model = cpu_value_model(case, want)
        if model is UNCHECKED:
            if refused_theirs or (got.shape, got.dtype) != (mine.shape, mine.dtype):
                return "DISAGREE", f"bcast {_show(mine)}, OpenVINO {device} {_show(got)}"
            return f"deviation {INTEGER_VALUES} (int8/uint8: values not compared)", None
        if model is not want:
            want, outcome = model, f"deviation {INTEGER_VALUES} (Divide truncates)"
    if refused_ours or refused_theirs:
        if refused_ours and refused_theirs:
            return "agree (both refuse)", None
        return "DISAGREE", f"bcast {_show(mine)}, OpenVINO {device} {_show(got)}"
    if device == "evaluate" and "openvino-evaluate-pdpd-greater" in case.findings:  # values not compared
        if (got.shape, got.dtype) != (mine.shape, mine.dtype):
            return "DISAGREE", f"bcast {_show(mine)}, OpenVINO {device} {_show(got)}"
        differs = "differ" if not np.array_equal(got, mine) else "equal"
        return f"deviation openvino-evaluate-pdpd-greater (values {differs})", None
    problem = same_values(case, got, want)
    return outcome, (None if problem is None else f"{outcome}: {problem}")


def shape_inference(case: Case):
    """OpenVINO's shape inference of the case: the output shape, or the RuntimeRefused."""
    tensors = case.inputs[:1] if case.op == "Broadcast" else case.inputs
    shapes = [np.shape(x) for x in tensors] + [list(v) for v in case.inputs[len(tensors):]]
    try:
        return oracle.infer_shape(case.op, shapes, [np.asarray(x).dtype for x in tensors], **case.kw)
    except RuntimeRefused as e:
        return e


def cpu_bidirectional_model(case: Case, mine):
    """What the registry's openvino-cpu-bidirectional-zero says the CPU plugin (a model of static shapes)
    does with Broadcast-3 bidirectional: REFUSED where a data dim of 0 faces a target dim of 1; else
    it keeps a data dim of 1 where the target has 0 (data (1,), target [2,0] gives (2,1)), the values
    data's, broadcast."""
    data, target = case.inputs[0], list(case.inputs[1])
    n = len(mine.shape)
    dpad, tpad = (1,) * (n - data.ndim) + data.shape, [1] * (n - len(target)) + target
    if any(d == 0 and t == 1 for d, t in zip(dpad, tpad)):
        return REFUSED
    shape = list(mine.shape)
    for k in range(1, data.ndim + 1):
        if data.shape[-k] == 1 and shape[-k] == 0:
            shape[-k] = 1
    return np.broadcast_to(data.reshape((1,) * (len(shape) - data.ndim) + data.shape), shape)


def _matches(case: Case, got, expected) -> bool:
    if expected is REFUSED or isinstance(got, RuntimeRefused):
        return expected is REFUSED and isinstance(got, RuntimeRefused)
    model = cpu_value_model(case, expected)
    if model is UNCHECKED:
        return (got.shape, got.dtype) == (expected.shape, expected.dtype)
    return same_values(case, got, model) is None


def _show(x) -> str:
    if isinstance(x, Exception):
        return f"refused ({getattr(x, 'message', x)})"
    return f"{x.dtype}{x.shape}"


def check(cases: list, devices=("CPU",)) -> Counter:
    """Run ``cases`` through bcast and each device; fail with every unexplained disagreement."""
    mine = [ours(c) for c in cases]
    accepted = sum(isinstance(m, np.ndarray) for m in mine)
    # a generator that produced only refusals (or only acceptances) would test little
    assert accepted >= len(cases) // 5 and len(cases) - accepted >= len(cases) // 12, (accepted, len(cases))
    problems, tally = [], Counter()
    for device in devices:
        runnable = [k for k, c in enumerate(cases)
                    if not any(did in c.findings and device in devs for did, devs in NOT_RUN.items())
                    and (device == "CPU" or evaluate_has_kernel(c.op, c.dtype))]
        tally[(device, "not run")] += len(cases) - len(runnable)
        results = theirs([cases[k] for k in runnable], device) if runnable else []
        for k, got in zip(runnable, results):
            outcome, problem = judge(cases[k], device, mine[k], got)
            tally[(device, outcome)] += 1
            TALLY[(cases[k].op, cases[k].mode, device, outcome)] += 1
            if problem:
                problems.append(f"[{device}] {cases[k]}: {problem}")
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:30])
    return tally


# ---------------------------------------------------------------------------
# The differential tests
# ---------------------------------------------------------------------------

ELTWISE = [name for name, op in bov.OPS.items() if op.kind == "eltwise"]


BOTH = ("CPU", "evaluate")


@pytest.mark.parametrize("op", ELTWISE)
@pytest.mark.parametrize("mode", ["numpy", "none", "pdpd"])
def test_eltwise(op, mode):
    tally = check(eltwise_cases(op, mode), BOTH)
    if mode == "pdpd" and op in ("Greater", "GreaterEqual"):  # the new deviation is seen
        assert tally[("evaluate", "deviation openvino-evaluate-pdpd-greater (values differ)")] >= 3, tally


@pytest.mark.parametrize("mode", ["numpy", "pdpd", "none"])
def test_select(mode):
    check(select_cases(mode), BOTH)


def test_prelu():
    check(prelu_cases(), BOTH)


@pytest.mark.parametrize("version, mode", [(3, "numpy"), (3, "explicit"), (3, "bidirectional"), (3, "pdpd"),
                                           (1, "numpy"), (1, "explicit"), (1, "pdpd")])
def test_broadcast(version, mode):
    check(broadcast_cases(mode, version), BOTH)


# ---------------------------------------------------------------------------
# Element types: bcast refuses exactly what OpenVINO's validate_and_infer_types refuses
# ---------------------------------------------------------------------------


def _dtype_inputs(op, a, b):
    if op == "Select":
        return [np.array([True]), np.ones(1, a), np.ones(1, b)]
    return [np.ones(1, a), np.ones(1, b)]


def _ov_accepts_types(op, a, b) -> bool:
    inputs = _dtype_inputs(op, a, b)
    try:
        oracle.infer_shape(op, [x.shape for x in inputs], [x.dtype for x in inputs])
        return True
    except RuntimeRefused:
        return False


def _registry_ids() -> set:
    return {d.id for d in DEVIATIONS}


# FakeQuantize: test_openvino_fake_quantize.py
@pytest.mark.parametrize("op", [name for name in bov.ops() if name not in ("Broadcast", "FakeQuantize")])
def test_element_types_agree_with_openvino(op):
    """Every pair of element types: bcast refuses (InputError) where OpenVINO's shape inference
    refuses, and keeps the type (or gives boolean) where it accepts -- never promoting.

    PRelu: the registry's openvino-prelu-element-types -- OpenVINO's PRelu checks no element type at
    all (mixed types and booleans pass); bcast follows the spec, one floating-point type T."""
    problems = []
    for a in bov.ELEMENT_TYPES:
        for b in (bov.ELEMENT_TYPES if a in ("int32", "float32", "bool") else (a,)):
            inputs = _dtype_inputs(op, a, b)
            try:
                out = bov.run(op, *inputs)
                ok = True
            except InputError:
                ok = False
            theirs = _ov_accepts_types(op, a, b)
            if op == "PRelu" and "openvino-prelu-element-types" in _registry_ids():
                assert theirs, f"OpenVINO's PRelu now checks types ({a}, {b}): revisit the registry record"
                theirs = a == b and a in bov.TYPE_CLASSES["float"]  # the spec
            if ok != theirs:
                problems.append(f"{op}({a}, {b}): bcast {'accepts' if ok else 'refuses'}, OpenVINO "
                                f"{'accepts' if theirs else 'refuses'}")
            elif ok:
                want = np.bool_ if bov.OPS[op].boolean_output else np.dtype(b)
                if out.dtype != want:
                    problems.append(f"{op}({a}, {b}): dtype {out.dtype}, want {np.dtype(want)}")
    assert not problems, "\n".join(problems)


def test_broadcast_keeps_the_element_type():
    for dtype in bov.ELEMENT_TYPES:
        x = np.zeros((1, 3), dtype)
        assert bov.run("Broadcast", x, [2, 3]).dtype == x.dtype
        assert oracle.run("Broadcast", [x, [2, 3]]).dtype == x.dtype


# ---------------------------------------------------------------------------
# Values the random cases avoid (the registry's value records prove the CPU's side)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
@pytest.mark.parametrize("op", ["Divide", "FloorMod", "Mod"])
def test_integer_division_by_zero_is_refused(op, dtype):
    """bcast refuses; the CPU returns garbage (the registry's openvino-cpu-integer-values); the
    reference refuses Divide (Mod by zero kills the process: not run here)."""
    x, y = np.array([7, 1], dtype), np.array([0, 1], dtype)
    with pytest.raises(InputError, match="integer division by zero"):
        bov.run(op, x, y)
    got = oracle.run(op, [x, y])
    garbage = (0, np.iinfo(dtype).min, np.iinfo(np.int32).min)  # int64: computed in int32
    assert got[1] == (1 if op == "Divide" else 0) and got[0] in garbage, got
    if op == "Divide" and dtype in ("int32", "int64"):
        with pytest.raises(RuntimeRefused, match="division by zero"):
            oracle.run(op, [x, y], device="evaluate")
    # an empty divisor divides nothing
    assert bov.run(op, np.zeros((0, 2), dtype), y).shape == (0, 2)


def test_float_division_by_zero_is_inf_and_nan():
    x, y = np.array([1, -1, 0], np.float32), np.zeros(3, np.float32)
    mine, cpu = bov.run("Divide", x, y), oracle.run("Divide", [x, y])
    np.testing.assert_array_equal(mine, cpu)
    np.testing.assert_array_equal(mine, [np.inf, -np.inf, np.nan])


def test_integer_power_as_the_reference():
    """static_cast<T>(std::pow(double(x), double(y))): negative exponents truncate."""
    x, y = np.array([2, -1, -2, 1, 3], np.int32), np.array([-1, -1, -3, -5, 4], np.int32)
    mine = bov.run("Power", x, y)
    assert mine.tolist() == [0, -1, 0, 1, 81]
    assert oracle.run("Power", [x, y], device="evaluate").tolist() == mine.tolist()
    assert oracle.run("Power", [x, y]).tolist() == mine.tolist()


# ---------------------------------------------------------------------------
# The memory guard, out=, bad input
# ---------------------------------------------------------------------------


def test_terabyte_broadcast_fails_fast():
    with memory_budget_set("1GiB"):
        with pytest.raises(MemoryBudgetError, match="TiB"):
            bov.run("Broadcast", np.float32(1), [2**20, 2**20])
        with pytest.raises(MemoryBudgetError):
            bov.run("Add", np.ones((2**20, 1), np.float32), np.ones((1, 2**20), np.float32))
        with pytest.raises(MemoryBudgetError):  # Power's output (it holds no float64 intermediate since issue 18)
            bov.run("Power", np.ones((2**16, 1), np.int8), np.ones((1, 2**16), np.int8))


def test_broadcast_view_of_any_size_allocates_nothing():
    with memory_budget_set(0):
        view = bov.run("Broadcast", np.arange(3, dtype=np.float32), [2**40, 2**10, 3], materialize=False)
    assert view.shape == (2**40, 2**10, 3) and view.strides == (0, 0, 4)  # 12 PiB
    assert not view.flags.writeable
    data = np.arange(3)
    assert np.shares_memory(bov.run("Broadcast", data, [2, 3], materialize=False), data)
    with pytest.raises(InputError, match="more than a numpy array can have"):
        bov.run("Broadcast", np.float32(1), [2**40] * 2, materialize=False)


def test_out():
    a, b = np.arange(6, dtype=np.int32).reshape(2, 3), np.array([1, 2, 3], np.int32)
    out = np.empty((2, 3), np.int32)
    assert bov.run("Add", a, b, out=out) is out
    np.testing.assert_array_equal(out, a + b)
    for op in ("Mod", "FloorMod", "Maximum", "SquaredDifference", "Power", "Divide"):  # out= is an input
        x = a + 1
        want = bov.run(op, x, b)
        assert bov.run(op, x, b, out=x) is x
        np.testing.assert_array_equal(x, want)
    assert bov.run("Broadcast", b, [2, 3], out=out) is out
    np.testing.assert_array_equal(out, [[1, 2, 3]] * 2)
    cond = np.array([True, False, True])
    assert bov.run("Select", cond, a, b, out=out) is out


@pytest.mark.parametrize("out, match", [
    (np.empty((3, 2), np.int32), "shape"),
    (np.empty((2, 3), np.int64), "dtype"),
    (np.empty((2, 3), np.bool_), "dtype"),
    ([0] * 6, "array"),
])
def test_out_of_the_wrong_shape_or_dtype(out, match):
    a, b = np.zeros((2, 3), np.int32), np.zeros(3, np.int32)
    with pytest.raises(InputError, match=match):
        bov.run("Add", a, b, out=out)
    with pytest.raises(InputError, match=match):
        bov.run("Broadcast", b, [2, 3], out=out)


I32 = np.array([1, 2, 3], np.int32)
F32 = np.ones(3, np.float32)
BOOL = np.array([True, False, True])

# (id, args, kwargs, error type, message fragment)
BAD = [
    ("unknown-op", ("Plus", I32, I32), {}, InputError, "unknown op 'Plus'"),
    ("op-case", ("add", I32, I32), {}, InputError, "did you mean Add"),
    ("op-not-str", (3, I32, I32), {}, InputError, "unknown op 3"),
    ("arity", ("Add", I32), {}, InputError, "takes 2"),
    ("arity-select", ("Select", BOOL, I32), {}, InputError, "takes 3"),
    ("list-input", ("Add", [1, 2, 3], I32), {}, InputError, "numpy array"),
    ("python-scalar", ("Add", 1, I32), {}, InputError, "numpy array"),
    ("object-dtype", ("Add", np.array([None]), np.array([None])), {}, InputError, "not an OpenVINO element type"),
    ("complex", ("Add", np.ones(2, complex), np.ones(2, complex)), {}, InputError, "not an OpenVINO element type"),
    ("mixed", ("Add", I32, F32), {}, InputError, "same element type; got int32 and float32"),
    ("bool-add", ("Add", BOOL, BOOL), {}, InputError, "numeric element type"),
    ("logical-int", ("LogicalOr", I32, I32), {}, InputError, "boolean element type"),
    ("bitwise-float", ("BitwiseXor", F32, F32), {}, InputError, "integral element type"),
    ("select-cond", ("Select", I32, I32, I32), {}, InputError, "cond must be boolean"),
    ("select-mixed", ("Select", BOOL, I32, F32), {}, InputError, "then and else"),
    ("prelu-int", ("PRelu", I32, I32), {}, InputError, "float element type"),
    ("mode", ("Add", I32, I32), {"auto_broadcast": "bidirectional"}, InputError, "auto_broadcast must be"),
    ("mode-type", ("Add", I32, I32), {"auto_broadcast": 3}, InputError, "auto_broadcast must be"),
    ("axis-numpy", ("Add", I32, I32), {"axis": 0}, InputError, "axis applies to pdpd"),
    ("axis-type", ("Add", I32, I32), {"auto_broadcast": "pdpd", "axis": "1"}, InputError, "integer"),
    ("axis-2", ("Add", I32, I32), {"auto_broadcast": "pdpd", "axis": -2}, BroadcastError, "axis -2"),
    ("unknown-attr", ("Add", I32, I32), {"broadcast": 1}, InputError, "unknown attribute broadcast"),
    ("python-division", ("Divide", I32, I32), {"python_division": "yes"}, InputError, "True or False"),
    ("prelu-auto", ("PRelu", F32, F32), {"auto_broadcast": "pdpd"}, InputError, "no auto_broadcast"),
    ("shapes", ("Add", np.ones((2, 3)), np.ones(4)), {}, BroadcastError, "cannot broadcast"),
    ("none", ("Add", np.ones((2, 3)), np.ones(3)), {"auto_broadcast": "none"}, BroadcastError,
     "all shapes must be equal"),
    ("b-mode", ("Broadcast", I32, [2, 3]), {"mode": "everything"}, InputError, "mode must be"),
    ("b-version", ("Broadcast", I32, [2, 3]), {"version": 2}, InputError, "version must be 1 or 3"),
    ("b-v1-bidirectional", ("Broadcast", I32, [2, 3]), {"mode": "bidirectional", "version": 1}, InputError,
     "Broadcast-1 has no mode bidirectional"),
    ("b-explicit-arity", ("Broadcast", I32, [2, 3]), {"mode": "explicit"}, InputError, "takes 3"),
    ("b-numpy-arity", ("Broadcast", I32, [2, 3], [1]), {}, InputError, "takes 2"),
    ("b-target-2d", ("Broadcast", I32, [[2, 3]]), {}, InputError, "1-D"),
    ("b-target-float", ("Broadcast", I32, [2.0, 3.0]), {}, InputError, "integers"),
    ("b-target-bool", ("Broadcast", I32, [True]), {}, InputError, "integers"),
    ("b-target-ragged", ("Broadcast", I32, [[2], [3, 4]]), {}, InputError, "integers"),
    ("b-target-negative", ("Broadcast", I32, [-1, 3]), {}, InputError, "negative"),
    ("b-target-str", ("Broadcast", I32, "2,3"), {}, InputError, "integers"),
    ("b-axes-negative", ("Broadcast", I32, [2, 3], [-1]), {"mode": "explicit"}, BroadcastError, "negative"),
    ("b-axes-unsorted", ("Broadcast", np.ones((3, 2)), [2, 3, 4], [2, 1]), {"mode": "explicit"}, BroadcastError,
     "sorted"),
    ("b-numpy-one-way", ("Broadcast", I32, [1]), {}, BroadcastError, "cannot broadcast"),
    ("b-auto-broadcast", ("Broadcast", I32, [2, 3]), {"auto_broadcast": "pdpd"}, InputError, "no auto_broadcast"),
    ("b-axis-numpy", ("Broadcast", I32, [2, 3]), {"axis": 1}, InputError, "axis applies to pdpd"),
    ("b-materialize", ("Broadcast", I32, [2, 3]), {"materialize": "no"}, InputError, "True or False"),
    ("b-out-view", ("Broadcast", I32, [2, 3]), {"materialize": False, "out": np.empty((2, 3), np.int32)},
     InputError, "exclude each other"),
]


@pytest.mark.parametrize("args, kwargs, error, match", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_is_refused_with_a_clear_error(args, kwargs, error, match):
    with pytest.raises(error, match=match) as info:
        bov.run(*args, **kwargs)
    assert "\n" not in str(info.value)


def test_nothing_is_promoted():
    """Every op on int8 (or its smallest type) returns int8 (or boolean): never a wider type."""
    for name in bov.ops():
        spec = bov.OPS[name]
        dtype = "float16" if spec.types == "float" else "bool" if spec.types == "boolean" else "int8"
        x = np.ones((2, 3), dtype)
        inputs = {"select": [np.ones(3, bool), x, x], "broadcast": [x, [2, 2, 3]], "fake_quantize": [x] * 5}.get(
            spec.kind, [x, x])
        want = np.bool_ if spec.boolean_output else np.dtype(dtype)
        assert bov.run(name, *inputs, **({"levels": 256} if name == "FakeQuantize" else {})).dtype == want, name


def test_ops_lists_the_table():
    assert set(bov.ops()) == set(bov.OPS) and len(bov.ops()) == 26
    assert {c.op for c in eltwise_cases("Add", "numpy", 2)} == {"Add"}
