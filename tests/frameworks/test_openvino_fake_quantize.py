"""FakeQuantize-1 (``bcast.openvino.plan/run("FakeQuantize", ...)``) against OpenVINO: its shape inference, its
CPU plugin (constant ranges, as in every quantized IR; all the cases of a batch in one model) and Model.evaluate.

The rule (bcast.frameworks.openvino.fake_quantize): each range broadcasts *into* X (numpy: ``unidirectional``;
none: equal shapes; pdpd: from the axis), the output is X's shape.  Every case agrees, or OpenVINO does what a
record about FakeQuantize says for that very case (its check fires on the case's plan or error, all five shapes,
as ``bcast lint`` asks them):

- openvino-fake-quantize-range-grows: shape inference accepts (declaring X's shape) a range that is not
  broadcastable to X but numpy-broadcasts with it; the CPU plugin is not run on those (some kill the process:
  the record's proof runs them in a child);
- openvino-cpu-fake-quantize-none: the CPU plugin refuses auto_broadcast none;
- openvino-cpu-fake-quantize-output-ranges: the CPU's values differ where one output range is per tensor and
  the other per channel;
- openvino-cpu-fake-quantize-pdpd and openvino-evaluate-fake-quantize-pdpd: both read pdpd ranges right-aligned.

Values: Model.evaluate equals ``bcast.openvino.run`` exactly; the CPU plugin (a scale and a shift precomputed
per channel: openvino-cpu-fake-quantize-values) within 1e-5, or one quantization level off on a rounding tie.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("openvino")

import bcast.openvino as bov  # noqa: E402
from bcast import BroadcastError, InputError  # noqa: E402
from bcast.frameworks._oracle import RuntimeRefused  # noqa: E402
from bcast.frameworks._deviation import Outcome  # noqa: E402
from bcast.frameworks.deviations import DEVIATIONS  # noqa: E402
from bcast.frameworks.openvino import oracle  # noqa: E402
from bcast.strategies import broadcastable, examples, not_broadcastable  # noqa: E402

LEVELS = 256
#: (X, input_low, input_high, output_low, output_high, auto_broadcast, axis, bcast's answer: shape or "error")
FIXED = [
    ((1, 3, 4, 4), (1, 3, 1, 1), (1, 3, 1, 1), (1, 3, 1, 1), (1, 3, 1, 1), "numpy", None, (1, 3, 4, 4)),  # per channel
    ((1, 3, 4, 4), (3, 1, 1), (3, 1, 1), (3, 1, 1), (3, 1, 1), "numpy", None, (1, 3, 4, 4)),  # per channel, rank 3
    ((1, 3, 4, 4), (), (), (), (), "numpy", None, (1, 3, 4, 4)),  # per tensor, scalars
    ((1, 3, 4, 4), (1, 1, 1, 1), (1,), (), (1, 1), "numpy", None, (1, 3, 4, 4)),  # per tensor, mixed ranks
    ((2, 8, 5), (1, 8, 1), (1, 8, 1), (1, 8, 1), (1, 8, 1), "numpy", None, (2, 8, 5)),  # MatMul's axis 1
    ((2, 5, 8), (1, 1, 8), (1, 1, 8), (1, 1, 8), (1, 1, 8), "numpy", None, (2, 5, 8)),  # last axis
    ((2, 3, 4, 5), (1, 3, 4, 1), (), (), (), "numpy", None, (2, 3, 4, 5)),  # two axes
    ((6, 3), (6, 1), (6, 1), (6, 1), (6, 1), "numpy", None, (6, 3)),  # weights, per output channel
    ((2, 3, 2, 2, 2, 2), (1, 3, 1, 1, 1, 1), (), (), (), "numpy", None, (2, 3, 2, 2, 2, 2)),  # rank 6
    ((5,), (5,), (), (), (), "numpy", None, (5,)),
    ((), (), (), (), (), "numpy", None, ()),
    ((1, 3, 4, 4), (1, 4, 1, 1), (), (), (), "numpy", None, "error"),  # 4 channels for 3
    ((1, 3, 4, 4), (4,), (), (), (), "numpy", None, (1, 3, 4, 4)),  # (4,) right-aligned: W's, not the channels'
    ((1, 1, 4, 4), (1, 3, 1, 1), (1, 3, 1, 1), (1, 3, 1, 1), (1, 3, 1, 1), "numpy", None, "error"),  # grows
    ((3, 4), (1, 1, 3, 1), (), (), (), "numpy", None, "error"),  # rank above X's
    ((1, 3, 4, 4), (1, 3, 4, 4), (1, 3, 4, 4), (1, 3, 4, 4), (1, 3, 4, 4), "none", None, (1, 3, 4, 4)),
    ((1, 3, 4, 4), (1, 3, 1, 1), (1, 3, 1, 1), (1, 3, 1, 1), (1, 3, 1, 1), "none", None, "error"),
    ((1, 3, 4, 4), (3,), (3,), (3,), (3,), "pdpd", 1, (1, 3, 4, 4)),  # per channel from axis 1
    ((1, 3, 4, 4), (3, 1, 1), (3, 1, 1), (3, 1, 1), (3, 1, 1), "pdpd", 1, (1, 3, 4, 4)),
    ((1, 3, 4, 4), (3,), (), (), (), "pdpd", 3, "error"),  # 3 against W's 4
    ((2, 3, 4, 5), (), (), (), (1, 3, 1, 1), "numpy", None, (2, 3, 4, 5)),  # output-ranges record
]


def _ranges(rng, shapes) -> list:
    """Random ranges of ``shapes``: input_low < 0 < input_high, output_low < output_high."""
    lo, hi = (-2.0, -0.5), (0.5, 2.0)
    return [rng.uniform(*(lo if i % 2 == 0 else hi), s).astype(np.float32) for i, s in enumerate(shapes)]


def _case(rng, x_shape, shapes, mode="numpy", axis=None):
    kw = {"levels": LEVELS, "auto_broadcast": mode, **({"axis": axis} if axis is not None else {})}
    x = rng.uniform(-3, 3, x_shape).astype(np.float32)
    return [x, *_ranges(rng, shapes)], kw


def _bcast(inputs, kw):
    try:
        return bov.run("FakeQuantize", *inputs, **kw)
    except BroadcastError as e:
        return e


def _records(inputs, kw) -> set:
    """The records about FakeQuantize that bear on the case: its plan or error (all five shapes), as lint asks."""
    try:
        result = bov.plan("FakeQuantize", *[np.shape(x) for x in inputs], **kw)
    except BroadcastError as e:
        result = e
    outcome = Outcome.of(result, "FakeQuantize")
    return {d.id for d in DEVIATIONS if "FakeQuantize" in d.only_ops and d.check is not None
            and outcome.rule in d.rules and d.check(outcome)}


def _levels_off(cpu, want, ranges) -> float:
    """How many quantization levels the CPU's farthest element is off."""
    step = np.abs(np.asarray(ranges[3]) - np.asarray(ranges[2])) / (LEVELS - 1)
    return float((np.abs(cpu - want) / np.broadcast_to(step, want.shape)).max()) if want.size else 0.0


def check(cases) -> dict:
    """Every case against OpenVINO (see the module docstring); returns the tally of outcomes."""
    tally: dict = {}
    runs, problems = [], []
    for inputs, kw in cases:
        mine, records = _bcast(inputs, kw), _records(inputs, kw)
        shapes = [np.shape(x) for x in inputs]
        attrs = {k: v for k, v in kw.items() if k != "axis" or kw["auto_broadcast"] == "pdpd"}
        try:
            declared = oracle.infer_shape("FakeQuantize", shapes, **attrs)
        except RuntimeRefused:
            declared = None
        where = f"FakeQuantize{tuple(shapes)} {kw}"
        if isinstance(mine, BroadcastError):
            if "openvino-fake-quantize-range-grows" in records:
                ok = declared == shapes[0]
                tally["refused, OpenVINO accepts (range-grows)"] = tally.get(
                    "refused, OpenVINO accepts (range-grows)", 0) + 1
            else:
                ok = declared is None
                tally["both refuse"] = tally.get("both refuse", 0) + 1
            if not ok:
                problems.append(f"{where}: bcast refuses, OpenVINO's shape inference gives {declared}")
            continue
        if declared != mine.shape:
            problems.append(f"{where}: bcast {mine.shape}, OpenVINO's shape inference {declared}")
            continue
        ev = oracle.run("FakeQuantize", inputs, device="evaluate", **attrs)
        if not np.array_equal(ev, mine, equal_nan=True) and "openvino-evaluate-fake-quantize-pdpd" not in records:
            problems.append(f"{where}: Model.evaluate differs from bcast")
        runs.append((inputs, attrs, mine, records, where))
    cpus = oracle.run_many("FakeQuantize", [(inputs, attrs) for inputs, attrs, *_ in runs])
    for (inputs, _, mine, records, where), cpu in zip(runs, cpus):
        if isinstance(cpu, RuntimeRefused):
            key = "CPU refuses (cpu-fake-quantize-none or -pdpd)"
            if not records & {"openvino-cpu-fake-quantize-none", "openvino-cpu-fake-quantize-pdpd"}:
                problems.append(f"{where}: the CPU plugin refuses ({cpu.message})")
        elif cpu.shape != mine.shape:
            key = "CPU shape differs"
            problems.append(f"{where}: the CPU plugin returns {cpu.shape}")
        elif _levels_off(cpu, mine, inputs[1:]) > (1 + 1e-3):
            key = "CPU values differ (cpu-fake-quantize-output-ranges or -pdpd)"
            if not records & {"openvino-cpu-fake-quantize-output-ranges", "openvino-cpu-fake-quantize-pdpd"}:
                problems.append(f"{where}: the CPU plugin is {_levels_off(cpu, mine, inputs[1:]):.2f} levels off")
        else:
            key = "agree"
            if records - {"openvino-cpu-fake-quantize-output-ranges", "openvino-evaluate-fake-quantize-pdpd"}:
                problems.append(f"{where}: agrees, though the registry says {records}")
        tally[key] = tally.get(key, 0) + 1
    assert not problems, "\n".join(problems[:20])
    return tally


@pytest.mark.parametrize("row", FIXED, ids=[f"{r[5]}-{r[0]}-{r[1]}-{r[4]}" for r in FIXED])
def test_fixed_plans(row):
    """bcast's answer on the table's rows (the spec: each range into X)."""
    *shapes, mode, axis, want = row
    kw = {"auto_broadcast": mode, **({"axis": axis} if axis is not None else {})}
    if want == "error":
        with pytest.raises(BroadcastError):
            bov.plan("FakeQuantize", *shapes, **kw)
    else:
        assert bov.plan("FakeQuantize", *shapes, **kw).shape == want


def test_fixed_cases_against_openvino():
    rng = np.random.default_rng(1)
    tally = check([_case(rng, row[0], row[1:5], row[5], row[6]) for row in FIXED])
    assert tally["agree"] >= 13 and tally["both refuse"] >= 3, tally


def test_random_cases_against_openvino():
    """Random shapes of bcast.strategies: five mutually broadcastable shapes (numpy, valid under the spec
    when each range fits into X), five that are not, and pairs of the unidirectional rule (X, one range; the
    other three per tensor or equal to the first), ranks up to 5."""
    rng = np.random.default_rng(2)
    drawn = [c.shapes for c in examples(broadcastable("numpy", num_shapes=5, max_dims=4), 60, seed=3)]
    drawn += [c.shapes for c in examples(not_broadcastable("numpy", num_shapes=5, max_dims=4), 20, seed=4)]
    for c in examples(broadcastable("unidirectional", max_dims=5), 60, seed=5):
        x, r = c.shapes
        drawn.append((x, r, r if rng.random() < 0.5 else (), r, r if rng.random() < 0.5 else ()))
    for c in examples(not_broadcastable("unidirectional", max_dims=5), 20, seed=6):
        drawn.append((*c.shapes, (), (), ()))
    tally = check([_case(rng, s[0], s[1:]) for s in drawn])
    assert tally["agree"] >= 60 and tally["both refuse"] >= 20, tally


def test_levels_and_element_types():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(InputError, match="levels is required"):
        bov.run("FakeQuantize", x, x, x, x, x)
    for bad in (1, 0, 2.5, True):
        with pytest.raises(InputError, match="levels must be an integer of at least 2"):
            bov.run("FakeQuantize", x, x, x, x, x, levels=bad)
    with pytest.raises(InputError, match="same element type"):
        bov.run("FakeQuantize", x, x, x, x, x.astype(np.float64), levels=256)
    with pytest.raises(InputError, match="float element type"):
        bov.run("FakeQuantize", *[x.astype(np.int32)] * 5, levels=256)
    for dtype in ("float16", "float64"):
        assert bov.run("FakeQuantize", *[x.astype(dtype)] * 5, levels=256).dtype == dtype


def test_rounding_is_half_to_even_as_openvino():
    """x on a level's midpoint: OpenVINO's reference rounds with nearbyint (half to even), as bcast; so does the CPU
    plugin (here its scale is 1 and its shift 4: exact)."""
    x = np.array([[0.5, 1.5, 2.5, 3.5, -0.5]], np.float32)  # (x - 0) / 4 * 4: the ties themselves
    ranges = [np.float32(-4), np.float32(4), np.float32(-4), np.float32(4)]
    mine = bov.run("FakeQuantize", x, *ranges, levels=9)  # a level per unit
    np.testing.assert_array_equal(mine, [[0, 2, 2, 4, 0]])
    np.testing.assert_array_equal(oracle.run("FakeQuantize", [x, *ranges], device="evaluate", levels=9), mine)
    np.testing.assert_array_equal(oracle.run("FakeQuantize", [x, *ranges], levels=9), mine)


@pytest.mark.parametrize("argv, code, says", [
    (["shape", "1,3,4,4", "1,3,1,1", "3,1,1", "[]", "1"], 0, "(1,3,4,4)"),
    (["explain", "1,1,4,4", "1,3,1,1", "[]", "[]", "[]"], 1, "openvino-fake-quantize-range-grows"),
    (["explain", "1,3,4,4", "[]", "[]", "[]", "1,3,1,1"], 0, "openvino-cpu-fake-quantize-output-ranges"),
    (["shape", "1,3,4,4", "3", "3", "3", "3", "--auto-broadcast", "pdpd", "--axis", "1"], 0, "(1,3,4,4)"),
    (["explain", "1,3,4,4", "1,3,1,1", "[]", "[]", "[]", "--auto-broadcast", "none"], 1, "all shapes must be equal"),
])
def test_the_command_line(argv, code, says, capsys):
    """``bcast shape|explain ... --framework openvino --op FakeQuantize``: five shapes, the records about it alone
    (the two-input rules' other records never read its five shapes)."""
    from bcast.cli import main

    assert main([*argv, "--framework", "openvino", "--op", "FakeQuantize"]) == code
    out = capsys.readouterr()
    assert says in out.out + out.err and "Traceback" not in out.err
