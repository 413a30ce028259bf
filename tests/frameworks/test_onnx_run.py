"""bcast.frameworks.onnx.ops.run against ONNX itself: its schemas, its node tests, onnxruntime
and the ReferenceEvaluator.

- the op table's type constraints equal ``onnx.defs.get_schema`` at every opset;
- every single-node backend test shipped with onnx whose op is one of ours
  passes through ``bcast.frameworks.onnx.ops.run``, dtype included;
- differential: random shapes (valid and not) and values, fixed seeds, every
  op, several dtypes, against onnxruntime and the ReferenceEvaluator: values
  and dtype equal, refusals agree, except the registered deviations, which
  must behave as recorded;
- the legacy opset 1-6 forms against both runtimes;
- the memory guard, ``out=``, and bad input (an InputError, never a traceback).
"""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np
import pytest

import bcast.frameworks.onnx.ops as bo
from bcast import BroadcastError, InputError
from bcast.frameworks.deviations import notes_for
from bcast.run.execute import MemoryBudgetError
from support.shapes import random_shapes as shared_random_shapes

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from bcast.frameworks.onnx import onnxruntime as ort_oracle  # noqa: E402
from bcast.frameworks.onnx import reference as ref_oracle  # noqa: E402
from bcast.frameworks._oracle import RuntimeRefused  # noqa: E402
from support.onnx_node_cases import all_node_cases, opset_of  # noqa: E402

RUNTIMES = {"onnxruntime": ort_oracle.run, "reference": ref_oracle.run}
#: the deviation registry's name of each oracle's runtime
REGISTRY_RUNTIME = {"onnxruntime": "onnxruntime", "reference": "onnx.reference.ReferenceEvaluator"}
STATS: Counter = Counter()  # differential cases, per runtime and outcome


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    """Print the differential counts once the module's tests are done (pytest -s shows them)."""
    yield
    print(f"\ndifferential cases per runtime: {dict(sorted(STATS.items()))}")


# --- the table against onnx's schemas --------------------------------------------


def _schema(op, opset):
    try:
        return onnx.defs.get_schema(op, opset)
    except onnx.defs.SchemaError:
        return None


def _types(schema) -> dict:
    return {tc.type_param_str: frozenset(t[len("tensor("):-1] for t in tc.allowed_type_strs)
            for tc in schema.type_constraints}


def test_latest_opset_matches_onnx():
    assert bo.LATEST_OPSET == onnx.defs.onnx_opset_version()


@pytest.mark.parametrize("op", bo.ops())
def test_table_matches_onnx_schemas(op):
    """At every opset: the op exists exactly where onnx has it, its rows are
    onnx's versions, and types, inputs and attributes are onnx's."""
    row = bo.OPS[op]
    sinces = set()
    for opset in range(1, bo.LATEST_OPSET + 1):
        schema = _schema(op, opset)
        if schema is None:
            with pytest.raises(InputError, match=f"opset {opset} has no {op}"):
                bo.type_constraints(op, opset)
            continue
        sinces.add(schema.since_version)
        version = row.version(opset)
        assert version.since == schema.since_version, (op, opset)
        assert bo.type_constraints(op, opset) == _types(schema), (op, opset)
        names = [i.name for i in schema.inputs]
        assert list(row.input_names(len(names))) == names, (op, opset)
        resolved = [tv if tv in version.types or tv.startswith("tensor(") else "T" for tv in row.type_vars(len(names))]
        assert resolved == [i.type_str for i in schema.inputs], (op, opset)
        assert row.output == schema.outputs[0].type_str, (op, opset)
        variadic = schema.inputs[0].option == onnx.defs.OpSchema.FormalParameterOption.Variadic
        assert row.variadic == variadic
        optional = sum(i.option == onnx.defs.OpSchema.FormalParameterOption.Optional for i in schema.inputs)
        assert optional == (row.optional if version.since >= row.optional_since else 0), opset
        ours = {a.name: a for a in row.attributes(version)}
        theirs = {k: a for k, a in schema.attributes.items() if k != "consumed_inputs"}  # opset-1 in-place hint
        assert set(ours) == set(theirs), (op, opset, set(ours), set(theirs))
        for name, a in theirs.items():
            assert ours[name].required == a.required, (op, opset, name)
            if a.default_value.name:
                default = onnx.helper.get_attribute_value(a.default_value)
                assert ours[name].default == pytest.approx(default), (op, opset, name)
    assert [v.since for v in row.versions] == sorted(sinces), op


# --- ONNX's backend node tests ------------------------------------------------------


@pytest.fixture(scope="module")
def node_cases():
    ours, skipped = [], Counter()
    for case in all_node_cases():
        nodes = case.model.graph.node
        types = {n.op_type for n in nodes}
        if not types & set(bo.OPS):
            continue
        if len(nodes) == 1 and nodes[0].domain in ("", "ai.onnx"):
            ours.append(case)
        else:  # a graph of several nodes (an other op's function body, "_expanded"): not one op of ours
            skipped["several nodes (function expansions of other ops)"] += 1
    return ours, skipped


def _attrs(node) -> dict:
    values = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    return {k: v.decode() if isinstance(v, bytes) else v for k, v in values.items()}


def test_onnx_backend_node_tests(node_cases):
    """Every single-node backend test of our ops: bcast.frameworks.onnx.ops.run gives the
    expected output, dtype and shape included, within the tolerance of onnx's
    backend runner (rtol 1e-3, atol 1e-7 for floats; exact otherwise)."""
    cases, skipped = node_cases
    passed = 0
    per_op = Counter()
    for case in cases:
        node = case.model.graph.node[0]
        for inputs, outputs in case.data_sets:
            got = bo.run(node.op_type, *inputs, opset=opset_of(case.model), **_attrs(node))
            want = outputs[0]
            assert got.dtype == want.dtype, (case.name, got.dtype, want.dtype)
            assert got.shape == want.shape, (case.name, got.shape, want.shape)
            if want.dtype.kind == "f":
                np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol, err_msg=case.name)
            else:
                assert np.array_equal(got, want), (case.name, got, want)
            passed += 1
        per_op[node.op_type] += 1
    assert set(per_op) == set(bo.OPS), set(bo.OPS) - set(per_op)  # every op has node tests
    assert passed >= 224, passed
    print(f"onnx node tests: {passed} passed ({len(cases)} tests), skipped: {dict(skipped)}")


# --- random inputs ---------------------------------------------------------------------

INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535),
             "int32": (-10**6, 10**6), "uint32": (0, 10**6), "int64": (-10**6, 10**6), "uint64": (0, 10**6)}


def values(rng, shape, dtype, kind="any"):
    """Random values for one input.  ``kind``: ``any``; ``divisor`` (nonzero,
    small: no INT_MIN / -1); ``base``/``exponent`` (Pow, kept where results are
    exact or well defined); ``shift`` (0 .. bits-1)."""
    dt = np.dtype(dtype)
    return np.asarray(_draw(rng, shape, dt, kind)).astype(dt).reshape(shape)


def _draw(rng, shape, dt, kind):
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "O":
        return rng.choice(["", "a", "bb"], size=shape)
    if kind == "shift":
        return rng.integers(0, dt.itemsize * 8, size=shape)
    if kind == "base":
        if dt.kind == "f":
            return rng.uniform(0.5, 3.0, size=shape)
        return rng.integers(1, 4, size=shape) * rng.choice([-1, 1], size=shape)
    if kind == "exponent":
        if dt.kind == "f":
            return rng.uniform(-2.0, 2.0, size=shape)
        return rng.integers(0, 5, size=shape)  # the ReferenceEvaluator refuses negative integer powers
    if dt.kind == "f":
        v = rng.integers(-8, 9, size=shape) / 2
        return np.where(v == 0, 1.5, v) if kind == "divisor" else v
    lo, hi = INT_RANGE[dt.name]
    if kind == "divisor":
        v = rng.integers(max(lo, -100), min(hi, 100) + 1, size=shape)
        return np.where(v == 0, 7, v)
    return rng.integers(lo, hi + 1, size=shape, dtype=np.uint64 if dt == np.uint64 else np.int64)


# this module's cases: fewer 0-size dims, whole base shapes more often, more conflicts
random_shapes = functools.partial(shared_random_shapes, p=(0.05, 0.25, 0.25, 0.25, 0.2), keep_rank=0.5, perturb=0.1)


# --- the differential engine ------------------------------------------------------------


def outcome(fn, /, *args, **kwargs):
    """``fn(*args, **kwargs)``'s output, or the refusal (BroadcastError, RuntimeRefused)."""
    try:
        out = fn(*args, **kwargs)
    except (BroadcastError, RuntimeRefused) as e:
        return e
    return out[0] if isinstance(out, list) else out


def same_values(got, want, ulps, where):
    assert isinstance(got, np.ndarray), (where, got)
    assert got.shape == want.shape, (where, got.shape, want.shape)
    if bo.onnx_type(want.dtype) == "string":  # object or numpy str: ONNX's string either way
        assert bo.onnx_type(got.dtype) == "string", (where, got.dtype)
        assert np.array_equal(got.astype(object), want.astype(object)), (where, got, want)
        return
    assert got.dtype == want.dtype, (where, got.dtype, want.dtype)
    if got.dtype.kind == "f" and ulps and got.size:
        np.testing.assert_array_max_ulp(got, want, maxulp=ulps)
    elif got.dtype.kind == "f":
        assert np.array_equal(got, want, equal_nan=True), (where, got, want)
    else:
        assert np.array_equal(got, want), (where, got, want)


def _numpy_prelu(x, slope):
    return np.where(x > 0, x, x * slope)


def _check_deviation(dev_id, op, inputs, opset, attrs, got, ulps, where):
    """A registered deviation applies: the runtime must do what the registry records."""
    if dev_id in ("onnxruntime-prelu-bidirectional", "reference-prelu-bidirectional"):
        same_values(got, _numpy_prelu(*inputs), 0, where)
    elif dev_id == "reference-prelu-axis-fallback":
        assert isinstance(got, np.ndarray) and got.shape == inputs[0].shape, where
    elif dev_id == "onnxruntime-no-legacy-opsets":
        assert isinstance(got, RuntimeRefused) and "NOT_IMPLEMENTED" in got.message, (where, got)
    elif dev_id == "reference-pow1-legacy-attrs" and ("broadcast" in attrs or "axis" in attrs):
        assert isinstance(got, RuntimeRefused) and "unexpected keyword argument" in got.message, (where, got)
    elif dev_id in ("reference-legacy-ignores-broadcast", "reference-pow1-legacy-attrs",
                    "reference-variadic-before-8-broadcasts"):  # numpy broadcasting: what opset 8 does
        want = outcome(bo.run, op, *inputs, opset=8)
        if isinstance(want, BroadcastError):
            assert isinstance(got, RuntimeRefused), (where, "numpy broadcasting refuses, the runtime gives", got)
        else:
            same_values(got, want, ulps, where)
    elif dev_id == "reference-gemm-beta0-unchecked-c":  # C never read
        same_values(got, bo.run(op, *inputs[:2], opset=opset, **attrs), ulps, where)
    elif dev_id == "reference-mean-in-place":
        assert isinstance(got, RuntimeRefused) and "non-broadcastable output operand" in got.message, (where, got)
    else:
        raise AssertionError(f"{where}: deviation {dev_id} applies and the test does not know how to check it")


def compare(op, inputs, *, opset, ulps=0, runtimes=RUNTIMES, **attrs):
    """bcast against each runtime on one case: same values and dtype, or both
    refuse; registered deviations must behave as recorded."""
    mine = outcome(bo.run, op, *inputs, opset=opset, **attrs)
    findings = _findings(op, inputs, opset, attrs, mine)
    where = (op, opset, attrs, [x.shape for x in inputs], [x.dtype.name for x in inputs])
    for name, run in runtimes.items():
        got = outcome(run, op, inputs, opset=opset, **attrs)
        STATS[name] += 1
        devs = [f.deviation.id for f in findings if f.deviation.runtime == REGISTRY_RUNTIME[name]]
        if devs:
            for dev in devs:
                _check_deviation(dev, op, inputs, opset, attrs, got, ulps, where)
                STATS[f"{name} deviation {dev}"] += 1
            continue
        if isinstance(got, RuntimeRefused) and "NOT_IMPLEMENTED" in got.message:
            STATS[f"{name} has no kernel"] += 1  # a type the runtime lacks, whatever the shapes
            continue
        if isinstance(mine, BroadcastError):
            assert isinstance(got, RuntimeRefused), (name, where, "bcast refuses:", str(mine), "runtime gives",
                                                     got.shape)
            STATS[f"{name} refused"] += 1
        else:
            assert not isinstance(got, RuntimeRefused), (name, where, got.message)
            same_values(got, mine, ulps, (name,) + where)
    return mine


def _findings(op, inputs, opset, attrs, mine):
    """The registered deviations that bear on this case (its plan or its error, the op, its attributes)."""
    if isinstance(mine, BroadcastError):
        return notes_for(mine, op=op, op_attrs=attrs)
    shapes = [x.shape for x in inputs]
    k = bo.OPS[op].shape_input
    if k is not None:
        shapes[k] = tuple(int(v) for v in inputs[k])
    return notes_for(bo.plan(op, *shapes, opset=opset, **attrs), op=op, op_attrs=attrs)


# --- differential: every op, several dtypes ------------------------------------------------

ORT_OPSET = 26  # the opset of the differential tables: every onnxruntime since 1.31 loads it (checked below)
#: The newest opset each onnxruntime release loads, as measured (1.31.1: 26; 1.32.0: 28, with Mod-28 and
#: BitShift-28): the oracle's probe (max_opset) must find it on a listed release, and >= ORT_OPSET on any.
ORT_MAX_OPSET = {"1.31": 26, "1.32": 28}

FLOATS, INTS = ("float32", "float64", "float16"), ("int8", "uint8", "int16", "int32", "int64", "uint64")
#: op -> (dtypes of the inputs, value kind of each input, attrs, ulps)
DIFF = [
    ("Add", [(t, t) for t in FLOATS + INTS], "any any", {}, 0),
    ("Sub", [(t, t) for t in ("float32", "int8", "uint16", "int64")], "any any", {}, 0),
    ("Mul", [(t, t) for t in ("float32", "float16", "int16", "uint8", "int32")], "any any", {}, 0),
    ("Div", [(t, t) for t in ("float32", "float64", "int8", "int32", "int64", "uint32")], "any divisor", {}, 4),
    ("Pow", [("float32", "float32"), ("float64", "float64"), ("float32", "int64"), ("int32", "float32"),
             ("int64", "int64"), ("float32", "int32")], "base exponent", {}, 4),
    ("Mod", [(t, t) for t in ("int8", "int32", "int64", "uint16")], "any divisor", {"fmod": 0}, 0),
    ("Mod", [(t, t) for t in ("float32", "float64", "int32", "int64")], "any divisor", {"fmod": 1}, 0),
    ("BitShift", [(t, t) for t in ("uint8", "uint16", "uint32", "uint64")], "any shift", {"direction": "LEFT"}, 0),
    ("BitShift", [(t, t) for t in ("uint8", "uint64")], "any shift", {"direction": "RIGHT"}, 0),
    ("BitwiseAnd", [(t, t) for t in ("int8", "uint32", "int64")], "any any", {}, 0),
    ("BitwiseOr", [(t, t) for t in ("uint8", "int16", "int32")], "any any", {}, 0),
    ("BitwiseXor", [(t, t) for t in ("uint16", "int64")], "any any", {}, 0),
    ("And", [("bool", "bool")], "any any", {}, 0),
    ("Or", [("bool", "bool")], "any any", {}, 0),
    ("Xor", [("bool", "bool")], "any any", {}, 0),
    ("Equal", [(t, t) for t in ("float32", "int32", "int64", "bool", "uint8", "object")], "any any", {}, 0),
    ("Greater", [(t, t) for t in ("float32", "int8", "int64", "float16")], "any any", {}, 0),
    ("GreaterOrEqual", [(t, t) for t in ("float32", "int32", "uint64")], "any any", {}, 0),
    ("Less", [(t, t) for t in ("float64", "int16", "uint32")], "any any", {}, 0),
    ("LessOrEqual", [(t, t) for t in ("float32", "int64", "uint8")], "any any", {}, 0),
    ("Where", [("bool", t, t) for t in ("float32", "int64", "uint8", "bool", "object")], "any any any", {}, 0),
]
VARIADIC = [
    ("Max", ("float32", "float16", "int32", "uint8", "int64"), 0),
    ("Min", ("float32", "float64", "int8", "uint32"), 0),
    ("Sum", ("float32", "float64", "float16"), 0),
    ("Mean", ("float32", "float64", "float16"), 4),
]


def test_onnxruntime_max_opset():
    """The probe's answer is the installed onnxruntime's: it loads that opset and refuses the next one
    that onnx knows."""
    import onnxruntime

    newest = ort_oracle.max_opset()
    assert newest >= ORT_OPSET
    ones = [np.ones(1, np.float32)] * 2
    (y,) = ort_oracle.run("Add", ones, opset=newest)
    assert y.tolist() == [2.0]
    if newest < onnx.defs.onnx_opset_version():
        with pytest.raises(RuntimeRefused):
            ort_oracle.run("Add", ones, opset=newest + 1)
    release = ".".join(onnxruntime.__version__.split(".")[:2])
    if release in ORT_MAX_OPSET:
        assert newest == ORT_MAX_OPSET[release], (onnxruntime.__version__, newest)


@pytest.mark.parametrize("op,dtypes,kinds,attrs,ulps", DIFF, ids=lambda v: str(v))
def test_differential_binary(op, dtypes, kinds, attrs, ulps):
    """Random shapes and values: bcast == onnxruntime == ReferenceEvaluator."""
    rng = np.random.default_rng(sum(map(ord, op + str(attrs))))
    kinds = kinds.split()
    counts = Counter()
    for dts in dtypes:
        for _ in range(max(12, 40 // len(dtypes))):
            shapes = random_shapes(rng, len(dts))
            inputs = [values(rng, s, t, k) for s, t, k in zip(shapes, dts, kinds)]
            mine = compare(op, inputs, opset=ORT_OPSET, ulps=ulps, **attrs)
            counts[isinstance(mine, BroadcastError)] += 1
    assert counts[True] and counts[False], counts  # both kinds of case were drawn


@pytest.mark.parametrize("op,dtypes,ulps", VARIADIC, ids=lambda v: str(v))
def test_differential_variadic(op, dtypes, ulps):
    rng = np.random.default_rng(sum(map(ord, op)))
    counts = Counter()
    for dt in dtypes:
        for _ in range(12):
            shapes = random_shapes(rng, int(rng.integers(1, 5)))
            inputs = [values(rng, s, dt) for s in shapes]
            mine = compare(op, inputs, opset=ORT_OPSET, ulps=ulps)
            counts[isinstance(mine, BroadcastError)] += 1
    assert counts[True] and counts[False], counts


def test_differential_prelu():
    """PRelu: the slope is broadcast one way to X; where a runtime broadcasts
    both ways (or falls back to an axis) the registry says so."""
    rng = np.random.default_rng(16)
    counts = Counter()
    before = STATS.copy()
    for dt in ("float32", "float16"):
        for _ in range(40):
            x_shape, s_shape = random_shapes(rng, 2)
            x, slope = values(rng, x_shape, dt), values(rng, s_shape, dt)
            mine = compare("PRelu", [x, slope], opset=ORT_OPSET)
            counts[isinstance(mine, BroadcastError)] += 1
    assert min(counts.values()) >= 10, counts
    # the ReferenceEvaluator's axis fallback needs a 1-D slope whose length occurs once in X
    compare("PRelu", [values(rng, (2, 3, 4, 5), "float32"), values(rng, (3,), "float32")], opset=ORT_OPSET)
    seen = STATS - before
    for dev in ("onnxruntime-prelu-bidirectional", "reference-prelu-bidirectional", "reference-prelu-axis-fallback"):
        runtime = dev.split("-")[0] if not dev.startswith("reference") else "reference"
        assert seen[f"{runtime} deviation {dev}"], (dev, seen)  # the sample meets every PRelu deviation


def test_differential_expand():
    rng = np.random.default_rng(13)
    counts = Counter()
    for dt in ("float32", "int64", "bool", "object"):
        for _ in range(25):
            data_shape, target = random_shapes(rng, 2)
            x = values(rng, data_shape, dt)
            mine = compare("Expand", [x, np.array(target, np.int64).reshape(len(target))], opset=ORT_OPSET)
            counts[isinstance(mine, BroadcastError)] += 1
    assert min(counts.values()) >= 10, counts


GEMM_C = [None, (), (1,), ("N",), (1, "N"), ("M", 1), (1, 1), ("M", "N"),  # accepted
          ("M",), ("N", "M"), (1, 1, "N"), (2, "M", "N"), ("K",), (2, "N"), ("M", 2)]  # refused unless M, N fit


def test_differential_gemm():
    rng = np.random.default_rng(11)
    counts = Counter()
    for dt in ("float32", "float64"):
        for _ in range(40):
            m, k, n = (int(v) for v in rng.integers(1, 5, size=3))
            ta, tb = int(rng.integers(2)), int(rng.integers(2))
            c = GEMM_C[int(rng.integers(len(GEMM_C)))]
            a = values(rng, (k, m) if ta else (m, k), dt)
            b = values(rng, (n, k) if tb else (k, n), dt)
            inputs = [a, b]
            if c is not None:
                inputs.append(values(rng, tuple({"M": m, "N": n, "K": k}.get(d, d) for d in c), dt))
            alpha, beta = (float(v) for v in rng.choice([1.0, 0.5, 2.0], size=2))
            mine = compare("Gemm", inputs, opset=ORT_OPSET, alpha=alpha, beta=beta, transA=ta, transB=tb)
            counts[isinstance(mine, BroadcastError)] += 1
    assert min(counts.values()) >= 10, counts


def test_gemm_integers_against_reference():
    """onnxruntime has no integer Gemm kernel; the ReferenceEvaluator has."""
    rng = np.random.default_rng(12)
    for dt in ("int32", "int64", "uint32"):
        for alpha, beta in ((1.0, 1.0), (0.5, 1.5), (2.0, 0.5)):
            a, b, c = (values(rng, s, dt, "exponent") for s in ((3, 4), (4, 2), (2,)))  # 0..4: exact in float64
            compare("Gemm", [a, b, c], opset=ORT_OPSET, alpha=alpha, beta=beta,
                    runtimes={"reference": ref_oracle.run})


def test_gemm_beta0_against_runtimes():
    """beta=0: C must still broadcast to (M, N); where it does not, the ReferenceEvaluator (which never
    reads C) computes anyway: deviation reference-gemm-beta0-unchecked-c, checked as recorded."""
    rng = np.random.default_rng(10)
    before = STATS.copy()
    for c_shape in [(2, 4), (4,), (1, 1), (3,), (2, 3), (4, 2)]:
        inputs = [values(rng, s, "float32") for s in ((2, 3), (3, 4), c_shape)]
        compare("Gemm", inputs, opset=ORT_OPSET, beta=0.0)
    seen = STATS - before
    assert seen["reference deviation reference-gemm-beta0-unchecked-c"] == 3, seen
    assert seen["onnxruntime refused"] == 3, seen


def test_opset28_forms_against_runtimes():
    """Mod-28 (floats with fmod=0) and BitShift-28 (signed types, any shift) against the
    ReferenceEvaluator, and against onnxruntime where it loads opset 28 (1.32 does: same values; 1.31
    refuses the opset)."""
    rng = np.random.default_rng(28)
    ort28 = ort_oracle.max_opset() >= 28
    runtimes = dict(RUNTIMES) if ort28 else {"reference": ref_oracle.run}
    before = STATS.copy()
    for dt in ("float32", "float64", "float16"):
        for _ in range(10):
            shapes = random_shapes(rng, 2)
            compare("Mod", [values(rng, shapes[0], dt), values(rng, shapes[1], dt, "divisor")], opset=28,
                    runtimes=runtimes, fmod=0)
    for dt in ("int8", "int32", "int64"):
        for direction in ("LEFT", "RIGHT"):
            x = values(rng, (3, 4), dt)
            y = rng.integers(-3, 70, size=(4,)).astype(dt)
            compare("BitShift", [x, y], opset=28, runtimes=runtimes, direction=direction)
    seen = STATS - before
    if ort28:  # every case ran on onnxruntime: no kernel missing, none refused for want of one
        assert seen["onnxruntime"] == 36 and not seen["onnxruntime has no kernel"], seen
    else:
        with pytest.raises(RuntimeRefused, match="IR version: 14|[Oo]pset 28"):
            ort_oracle.run("Add", [np.ones(1, np.float32)] * 2, opset=28)


# --- types: what bcast refuses, onnxruntime refuses -------------------------------------------

ALL_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "bool", "object")


def _array(dt, shape=(2, 2)):
    return np.full(shape, "a", dtype=object) if dt == "object" else np.ones(shape, dt)


@pytest.mark.parametrize("op", [op for op in bo.ops() if op != "Expand"])
def test_refused_types_are_refused_by_onnxruntime(op):
    """Every input type the table refuses for ``op`` at opset 26 (all inputs
    of that type; Where's and Pow's other inputs kept valid), onnxruntime
    refuses too.  (The other way round onnxruntime lacks many kernels.)"""
    attrs = {"direction": "LEFT"} if op == "BitShift" else {"fmod": 1} if op == "Mod" else {}
    refused = 0
    for dt in ALL_DTYPES:
        if op == "Where":
            arrays = [np.ones((2, 2), bool), _array(dt), _array(dt)]
        elif op == "Pow":
            arrays = [_array(dt), np.ones((2, 2), np.float32)]
        else:
            arrays = [_array(dt)] * (3 if op == "Gemm" else 2)
        try:
            bo.run(op, *arrays, opset=ORT_OPSET, **attrs)
        except InputError as e:
            assert str(e).startswith(f"onnx {op}"), str(e)
            with pytest.raises(RuntimeRefused):
                ort_oracle.run(op, arrays, opset=ORT_OPSET, **attrs)
            refused += 1
    assert refused or op in ("Where", "Equal"), op  # those two take every type at opset 26


# --- the legacy forms (opset < 7, and < 8 for the variadic ops) ---------------------------------

LEGACY_OPS = [("Add", "float32", "any"), ("Sub", "int32", "any"), ("Mul", "float64", "any"),
              ("Div", "float32", "divisor"), ("Pow", "float32", "base"), ("And", "bool", "any"),
              ("Or", "bool", "any"), ("Xor", "bool", "any"), ("Equal", "int64", "any"),
              ("Greater", "float32", "any"), ("Less", "float64", "any")]


@pytest.mark.parametrize("op,dt,kind", LEGACY_OPS, ids=lambda v: str(v))
def test_legacy_broadcast_axis_against_runtimes(op, dt, kind):
    """Opset 6 with broadcast/axis.  onnxruntime runs no opset 1-6 kernel and
    the ReferenceEvaluator ignores broadcast/axis: both registered deviations,
    checked to behave as recorded; where neither applies, they agree with bcast."""
    rng = np.random.default_rng(sum(map(ord, op)) + 6)
    counts = Counter()
    before = STATS.copy()
    for _ in range(15):
        a_shape = tuple(int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 4))))
        if rng.random() < 0.6 and a_shape:  # B a piece of A: the interesting case
            i, j = sorted(int(v) for v in rng.integers(0, len(a_shape) + 1, 2))
            b_shape = tuple(1 if rng.random() < 0.2 else d for d in a_shape[i:j])
        else:
            (b_shape,) = random_shapes(rng, 1, max_rank=3)
        broadcast = int(rng.random() < 0.8)
        axis = [None, -1, 0, 1, 2][int(rng.integers(5))]
        attrs = {"broadcast": broadcast} if axis is None else {"broadcast": broadcast, "axis": axis}
        inputs = [values(rng, a_shape, dt, kind), values(rng, b_shape, dt, "exponent" if op == "Pow" else kind)]
        mine = compare(op, inputs, opset=6, **attrs)
        counts[isinstance(mine, BroadcastError)] += 1
    assert counts[True] and counts[False], counts
    seen = STATS - before
    assert seen["onnxruntime deviation onnxruntime-no-legacy-opsets"] == 15, seen
    ref_dev = "reference-pow1-legacy-attrs" if op == "Pow" else "reference-legacy-ignores-broadcast"
    assert seen[f"reference deviation {ref_dev}"], seen


def test_legacy_gemm_and_variadic_against_runtimes():
    """Gemm-6 (broadcast=0: C is (M, N)) and Max/Min/Sum/Mean-6 (equal shapes)."""
    rng = np.random.default_rng(66)
    f32 = "float32"
    for c_shape in [(2, 4), (4,), (1, 4), (), (2, 1), (3,)]:
        for broadcast in (0, 1):
            inputs = [values(rng, (2, 3), f32), values(rng, (3, 4), f32), values(rng, c_shape, f32)]
            compare("Gemm", inputs, opset=6, broadcast=broadcast)
    before = STATS.copy()
    for op in ("Max", "Min", "Sum", "Mean"):
        for shapes in [[(2, 3), (2, 3)], [(2, 3), (3,)], [(2, 3), (1, 3), (2, 3)], [(4,)], [(), ()]]:
            compare(op, [values(rng, s, f32) for s in shapes], opset=6, ulps=4)
    seen = STATS - before
    assert seen["reference deviation reference-variadic-before-8-broadcasts"] == 8, seen  # 2 per op


# --- out=, Expand's view, the memory guard ---------------------------------------------------------


def test_out_is_written_and_returned():
    a, b = np.arange(6, dtype=np.int8).reshape(2, 3), np.array([120], np.int8)
    out = np.empty((2, 3), np.int8)
    assert bo.run("Add", a, b, out=out) is out
    assert np.array_equal(out, (a.astype(np.int16) + 120).astype(np.int8))
    out = np.empty((2, 3), bool)
    assert bo.run("Less", a, np.array(3, np.int8), out=out) is out and out.sum() == 3
    out = np.empty((2, 2), np.float32)
    g = bo.run("Gemm", np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), np.ones(2, np.float32), out=out)
    assert g is out and (out == 4).all()
    out = np.empty((2, 3), np.float32)
    assert bo.run("Expand", np.ones((1, 3), np.float32), np.array([2, 1]), out=out) is out


@pytest.mark.parametrize("out", [np.empty((3, 2), np.float32), np.empty((2, 3), np.float64),
                                 np.empty((2, 3), np.int32), [[0.0] * 3] * 2, np.empty((2, 3), np.float32)[:, :0]],
                         ids=["shape", "dtype", "int", "list", "empty"])
def test_out_of_the_wrong_shape_or_dtype(out):
    a = np.ones((2, 3), np.float32)
    for op, inputs in (("Add", (a, a)), ("Expand", (a, np.array([2, 3]))),
                       ("Gemm", (a, np.ones((3, 3), np.float32)))):
        with pytest.raises(InputError, match="out="):
            bo.run(op, *inputs, out=out)


def test_expand_view_is_read_only_and_shares_memory():
    x = np.arange(3.0, dtype=np.float32).reshape(3, 1)
    v = bo.run("Expand", x, np.array([2, 1, 6]), materialize=False)
    assert v.shape == (2, 3, 6) and not v.flags.writeable and np.shares_memory(v, x)
    big = bo.run("Expand", x, np.array([10**6, 3, 10**6]), materialize=False)  # 12 TB, never allocated
    assert big.shape == (10**6, 3, 10**6) and np.shares_memory(big, x)


@pytest.mark.parametrize("op,inputs", [
    ("Expand", (np.ones(1, np.float32), np.array([10**7] * 4))),
    ("Add", (np.ones((10**6, 1)), np.ones((1, 10**6)))),
    ("Where", (np.ones((10**6, 1), bool), np.ones((1, 10**6), np.float32), np.float32(0))),
    ("Gemm", (np.ones((10**6, 1), np.float32), np.ones((1, 10**6), np.float32))),
    ("Sum", (np.ones((10**6, 1), np.float32), np.ones((1, 10**6), np.float32), np.ones(1, np.float32))),
], ids=["Expand", "Add", "Where", "Gemm", "Sum"])
def test_memory_guard(op, inputs):
    """Outputs of terabytes are refused before anything is allocated, the size in the message."""
    with pytest.raises(MemoryBudgetError, match=r"needs \S+ [TPEZ]iB") as e:
        bo.run(op, *inputs)
    assert e.value.nbytes > 2**40


# --- ONNX's dtypes, exactly ------------------------------------------------------------------------


def _a(values_, dt):
    return np.array(values_, dtype=dt)


SEMANTICS = [
    ("Add int8 wraps", "Add", (_a([100, -100], "int8"), _a([100, -100], "int8")), {}, _a([-56, 56], "int8")),
    ("Sub uint8 wraps", "Sub", (_a([1], "uint8"), _a([2], "uint8")), {}, _a([255], "uint8")),
    ("Mul float16 stays", "Mul", (_a([2, 3], "float16"), _a(0.5, "float16")), {}, _a([1, 1.5], "float16")),
    ("Div int truncates", "Div", (_a([-7, 7, -7, 7], "int64"), _a([2, -2, -2, 2], "int64")), {},
     _a([-3, -3, 3, 3], "int64")),
    ("Div uint", "Div", (_a([7, 200], "uint8"), _a([2, 3], "uint8")), {}, _a([3, 66], "uint8")),
    ("Mod fmod=0 sign of divisor", "Mod", (_a([-7, 7, -7, 7], "int32"), _a([3, -3, -3, 3], "int32")), {},
     _a([2, -2, -1, 1], "int32")),
    ("Mod fmod=1 sign of dividend", "Mod", (_a([-7, 7, -7, 7], "int32"), _a([3, -3, -3, 3], "int32")),
     {"fmod": 1}, _a([-1, 1, -1, 1], "int32")),
    ("Mod float fmod=1", "Mod", (_a([-7.5, 7.5], "float32"), _a([2, -2], "float32")), {"fmod": 1},
     _a([-1.5, 1.5], "float32")),
    ("Pow int base float exponent", "Pow", (_a([2, 3, -2, 2], "int32"), _a([0.5, 2.5, 3, -1], "float32")), {},
     _a([1, 15, -8, 0], "int32")),
    ("Pow int negative exponent", "Pow", (_a([1, -1, -1, 2, 0], "int64"), _a([-2, -3, -2, -1, -1], "int64")), {},
     _a([1, -1, 1, 0, 0], "int64")),
    ("Pow float base int exponent", "Pow", (_a([2, 0.5], "float32"), _a([3, -2], "int64")), {},
     _a([8, 4], "float32")),
    ("Equal gives bool", "Equal", (_a([1, 2], "int32"), _a(2, "int32")), {}, _a([False, True], "bool")),
    ("Equal strings", "Equal", (_a(["a", "b"], object), _a(["b"], object)), {}, _a([False, True], "bool")),
    ("Max variadic", "Max", (_a([1, 5], "uint16"), _a([3], "uint16"), _a([[0], [4]], "uint16")), {},
     _a([[3, 5], [4, 5]], "uint16")),
    ("Mean float16", "Mean", (_a([1, 2], "float16"), _a([3, 4], "float16")), {}, _a([2, 3], "float16")),
    ("Sum one input", "Sum", (_a([1, 2], "float64"),), {}, _a([1, 2], "float64")),
    ("BitShift right", "BitShift", (_a([16, 255], "uint8"), _a([4, 1], "uint8")), {"direction": "RIGHT"},
     _a([1, 127], "uint8")),
    ("Where strings", "Where", (_a([True, False], bool), _a(["x"], object), _a(["y", "zz"], object)), {},
     _a(["x", "zz"], object)),
    ("PRelu int32", "PRelu", (_a([[-2, 3]], "int32"), _a([5], "int32")), {}, _a([[-10, 3]], "int32")),
    ("Gemm alpha beta", "Gemm", (_a([[1, 2]], "float32"), _a([[3], [4]], "float32"), _a(1, "float32")),
     {"alpha": 2.0, "beta": 0.5}, _a([[22.5]], "float32")),
    ("Gemm int32 truncates", "Gemm", (_a([[3]], "int32"), _a([[1]], "int32"), _a([1], "int32")),
     {"alpha": 0.5, "beta": 1.5}, _a([[3]], "int32")),
]


@pytest.mark.parametrize("name,op,inputs,attrs,want", SEMANTICS, ids=[c[0] for c in SEMANTICS])
def test_onnx_semantics(name, op, inputs, attrs, want):
    got = bo.run(op, *inputs, **attrs)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want), (got, want)


def test_pow_negative_integer_exponent_as_onnxruntime():
    """x ** -n for integers: onnxruntime computes in double and truncates; the
    ReferenceEvaluator refuses (numpy: "Integers to negative integer powers")."""
    x, y = _a([1, -1, -1, 2, -3, 5], "int64"), _a([-2, -3, -2, -1, -1, -4], "int64")
    same_values(bo.run("Pow", x, y), ort_oracle.run("Pow", [x, y])[0], 0, "Pow")
    with pytest.raises(RuntimeRefused, match="negative integer powers"):
        ref_oracle.run("Pow", [x, y])


def test_bfloat16_stays_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.array([1.5, 2.0], ml_dtypes.bfloat16)
    assert bo.run("Add", x, x).dtype == x.dtype
    assert bo.run("Less", x, x).dtype == np.bool_
    assert bo.onnx_type(x.dtype) == "bfloat16"
    with pytest.raises(InputError, match="bfloat16"):
        bo.run("Add", x, x, opset=12)  # bfloat16 Add arrives in opset 13


def test_ops_and_plan():
    assert bo.ops() == tuple(bo.OPS) and len(bo.ops()) == 26
    assert bo.plan("Sum", (2, 1), (3,), (1, 1, 1)).shape == (1, 2, 3)
    assert bo.plan("Expand", (3, 1), (2, 1, 6)).shape == (2, 3, 6)
    assert bo.plan("PRelu", (2, 3), (3,)).rule == "unidirectional"
    assert bo.plan("Max", (2, 3), (2, 3), opset=6).rule == "none"
    with pytest.raises(BroadcastError, match="B's dims must EQUAL"):
        bo.plan("Add", (2, 3, 4, 5), (3, 1, 4), opset=6, broadcast=1, axis=1)
    with pytest.raises(BroadcastError):
        bo.plan("Max", (2, 3), (3,), opset=7)


# --- bad input: an InputError with one line, never a traceback --------------------------------------

f32 = np.ones((2, 3), np.float32)
i32 = np.ones((2, 3), np.int32)

BAD = [
    ("unknown op", "Frobnicate", (f32, f32), {}, "unknown op 'Frobnicate'"),
    ("op not a str", 3, (f32,), {}, "unknown op 3"),
    ("Add of one", "Add", (f32,), {}, "takes 2 inputs"),
    ("Add of three", "Add", (f32, f32, f32), {}, "takes 2 inputs"),
    ("Sum of none", "Sum", (), {}, "1 or more"),
    ("Where of two", "Where", (f32 > 0, f32), {}, "takes 3 inputs"),
    ("Gemm without C at 9", "Gemm", (f32, f32.T), {"opset": 9}, "takes 3 inputs"),
    ("unknown attr", "Add", (f32, f32), {"fmod": 1}, "no attribute 'fmod'"),
    ("legacy attr at 13", "Add", (f32, f32), {"broadcast": 1}, "no attribute 'broadcast'"),
    ("fmod 2", "Mod", (i32, i32), {"fmod": 2}, "fmod must be 0 or 1"),
    ("no direction", "BitShift", (i32.astype(np.uint8),) * 2, {}, "direction is required"),
    ("direction lower", "BitShift", (i32.astype(np.uint8),) * 2, {"direction": "left"}, "direction must be one of"),
    ("alpha a string", "Gemm", (f32, f32.T), {"alpha": "x"}, "alpha must be a finite number"),
    ("transA 2", "Gemm", (f32, f32.T), {"transA": 2}, "transA must be 0 or 1"),
    ("axis a float", "Add", (f32, f32), {"opset": 6, "broadcast": 1, "axis": 1.5}, "axis must be an integer"),
    ("materialize a str", "Expand", (f32, np.array([2, 3])), {"materialize": "no"}, "materialize must be"),
    ("materialize on Add", "Add", (f32, f32), {"materialize": False}, "materialize=False is for Expand only"),
    ("materialize with out", "Expand", (f32, np.array([2, 3])), {"materialize": False, "out": f32.copy()},
     "do not go together"),
    ("BitShift signed at 11", "BitShift", (i32, i32), {"opset": 11, "direction": "LEFT"}, "uint16, uint32"),
    ("Mean of ints", "Mean", (i32, i32), {}, "must be one of bfloat16, double, float, float16"),
    ("And of floats", "And", (f32, f32), {}, "input A must be one of bool"),
    ("Where condition int", "Where", (i32, f32, f32), {}, "input condition must be one of bool"),
    ("Expand shape int32", "Expand", (f32, np.array([2, 3], np.int32)), {}, "input shape must be one of int64"),
    ("Expand shape 2-D", "Expand", (f32, np.array([[2, 3]])), {}, "1-D int64 array"),
    ("Expand shape negative", "Expand", (f32, np.array([-2, 3])), {},
     "onnx Expand: input shape must not have negative dims"),
    ("Mod float fmod=0 at 13", "Mod", (f32, f32), {"opset": 13}, "floats need fmod=1 before opset 28"),
    ("Greater int at 7", "Greater", (i32, i32), {"opset": 7}, "input A must be one of double, float, float16"),
    ("mismatched", "Add", (f32, f32.astype(np.float64)), {}, "inputs A and B must have the same type (T); got "
                                                             "float32 and float64"),
    ("mismatched Gemm C", "Gemm", (f32, f32.T, i32), {}, "inputs A and C must have the same type"),
    ("mismatched variadic", "Max", (f32, f32, i32), {}, "inputs data_0 and data_2 must have the same type"),
    ("mismatched Where", "Where", (f32 > 0, f32, i32), {}, "inputs X and Y must have the same type"),
    ("Python float", "Add", (f32, 2.0), {}, "input B must be a numpy array, got float"),
    ("Python int", "Mul", (3, f32), {}, "input A must be a numpy array, got int"),
    ("list", "Add", (f32, [1.0, 2.0, 3.0]), {}, "must be a numpy array, got list"),
    ("None", "Add", (f32, None), {}, "got NoneType"),
    ("string", "Equal", (f32, "abc"), {}, "got str"),
    ("complex Add", "Add", (f32.astype(np.complex64),) * 2, {}, "got complex64"),
    ("opset 0", "Add", (f32, f32), {"opset": 0}, "opset 0 has no Add"),
    ("opset too new", "Add", (f32, f32), {"opset": 29}, "newer than any bcast knows"),
    ("opset a str", "Add", (f32, f32), {"opset": "13"}, "opset must be an integer"),
    ("BitwiseAnd at 17", "BitwiseAnd", (i32, i32), {"opset": 17}, "exists from opset 18"),
]


@pytest.mark.parametrize("name,op,inputs,attrs,match", BAD, ids=[c[0] for c in BAD])
def test_bad_input(name, op, inputs, attrs, match):
    with pytest.raises(InputError) as e:
        bo.run(op, *inputs, **attrs)
    text = str(e.value)
    assert match in text, text
    assert "\n" not in text and len(text) < 300, text
    assert type(e.value) is InputError


def test_integer_pow_with_any_exponent_wraps():
    """Found by fuzzing: a uint64 exponent past int32 made numpy raise; the power
    wraps mod 2**bits like the other integer ops."""
    x = np.array([3, -2, 2, -1, 5], np.int32)
    y = np.array([2, 3, 40, 2**63 + 1, 0], np.uint64)
    got = bo.run("Pow", x, y)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [9, -8, 0, -1, 1])
