"""The benchmark matrix's harness (benchmarks/matrix.py): its generator and one
tiny end-to-end run.  Nothing here times anything or asserts a ratio: speed
lives in the benchmark, not in the suite."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import bcast

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "matrix.py")


def _load_matrix():
    spec = importlib.util.spec_from_file_location("bench_matrix", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path  # the script puts benchmarks/ and src/ first for itself
    return module


matrix = _load_matrix()

# pattern -> what its pair (a, b) must look like against the output shape
PATTERN_CHECKS = {
    "same": lambda a, b, out: a == b == out,
    "scalar": lambda a, b, out: a == out and b == (),
    "channel": lambda a, b, out: len(out) == 4 and a == out and b == (out[1], 1, 1),
    "row": lambda a, b, out: len(out) == 2 and a == out and b == (out[1],),
    "column": lambda a, b, out: len(out) == 2 and a == out and b == (out[0], 1),
    "outer": lambda a, b, out: a == (out[0], 1) and b == (out[1],),
    "middle": lambda a, b, out: len(out) == 3 and a == out and b == (out[1], 1),
    "bias5d": lambda a, b, out: len(out) == 5 and a == out and b == (out[1], 1, 1, 1),
    "attention": lambda a, b, out: len(out) == 4 and a == out and b == (out[0], 1, 1, out[3]) and out[2] == out[3],
    "stretched": lambda a, b, out: a == (out[0], 1, out[2], 1) and b == (out[1], 1, out[3]),
}


def test_every_pattern_is_checked():
    assert set(PATTERN_CHECKS) == set(matrix.PATTERNS)


@pytest.mark.parametrize("pattern", sorted(PATTERN_CHECKS))
def test_every_pattern_at_every_size_has_that_size_and_that_broadcast(pattern):
    for k in matrix.SIZES:
        a, b = matrix.PATTERNS[pattern](k)
        out = np.broadcast_shapes(a, b)
        assert math.prod(out) == 2**k, (pattern, k, a, b)
        assert bcast.infer(a, b).shape == out, (pattern, k)
        assert PATTERN_CHECKS[pattern](a, b, out), (pattern, k, a, b, out)
        if pattern not in ("same", "scalar"):
            assert 1 not in out, (pattern, k, out)  # every stretched axis really stretches
        cond, x, y = matrix.shapes("Where", pattern, k)
        assert bcast.infer(cond, x, y).shape == out == np.broadcast_shapes(cond, x, y)


def test_cases_cover_the_axes_and_respect_the_ops_dtypes():
    cases = matrix.all_cases()
    assert {c.op for c in cases} == set(matrix.OPS)
    assert {c.dtype for c in cases} == set(matrix.DTYPES)
    assert {c.size for c in cases} == set(matrix.SIZES)
    assert {c.pattern for c in cases} == set(matrix.PATTERNS)
    assert {c.out for c in cases} == {"yes", "no"}
    assert not [c for c in cases if c.dtype == "bool" and c.op in ("Add", "Sum", "Pow", "Greater")]
    assert len(cases) == len(set(cases))


def test_only_and_sample():
    only = matrix.parse_only("op=Add,Mul,dtype=float16,size=10")
    assert only == {"op": {"Add", "Mul"}, "dtype": {"float16"}, "size": {"2^10"}}
    kept = matrix.select(matrix.all_cases(), only, None, 0)
    assert len(kept) == 2 * len(matrix.PATTERNS) * 2
    first = matrix.select(matrix.all_cases(), {}, 25, 3)
    assert len(first) == 25 and first == matrix.select(matrix.all_cases(), {}, 25, 3)
    with pytest.raises(ValueError):
        matrix.parse_only("colour=red")
    with pytest.raises(ValueError):
        matrix.parse_only("Add")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_quick_end_to_end(tmp_path):
    report = tmp_path / "matrix.json"
    args = ["--quick", "--only", "op=Add,Where,dtype=float32,size=10,pattern=row,out=yes", "--rounds", "1",
            "--json", str(report)]
    done = _run(*args)
    assert done.returncode == 0, done.stderr
    assert "## summary" in done.stdout and "## the ten worst cases" in done.stdout
    data = json.loads(report.read_text())
    assert [(c["op"], c["dtype"], c["size"], c["pattern"], c["out"]) for c in data["cases"]] == [
        ("Add", "float32", "2^10", "row", "yes"), ("Where", "float32", "2^10", "row", "yes")]
    for case in data["cases"]:
        assert "bcast" in case["seconds"] and "numpy" in case["seconds"]
        assert not case["disagree"]
    again = _run(*args)  # never over an existing file without --force
    assert again.returncode == 2 and "--force" in again.stderr
    assert json.loads(report.read_text()) == data


def test_a_case_over_the_memory_budget_is_skipped():
    done = _run("--quick", "--only", "op=Add,dtype=float64,size=14,pattern=same,out=no", "--max-bytes", "1000")
    assert done.returncode == 0, done.stderr
    assert "0 case(s)" in done.stdout and "skipped" in done.stdout


def test_three_input_ops_and_less():
    assert {"Less", "Sum3", "Mean3", "Max3"} <= set(matrix.OPS)
    for pattern in matrix.PATTERNS:
        a, b = matrix.PATTERNS[pattern](14)
        assert matrix.shapes("Sum3", pattern, 14) == [a, b, b]
    case = matrix.Case("Max3", "int8", 10, "row", "no")
    assert matrix.onnx_op(case.op) == "Max" and len(case.input_dtypes()) == 3
    assert matrix.Case("Less", "float32", 10, "row", "no").out_dtype() == np.dtype(bool)
    xs = [np.full((2, 3), v, np.float32) for v in (1.0, 2.0, 6.0)]
    assert (matrix.numpy_op(matrix.Case("Mean3", "float32", 10, "same", "no"))(*xs) == 3.0).all()


def test_a_sample_is_drawn_among_the_cases_that_fit():
    limit = 64 * 2**20
    fitting = [c for c in matrix.all_cases() if c.nbytes() <= limit]
    sample = matrix.select(matrix.all_cases(), {}, 40, 1, limit)
    assert len(sample) == 40 and all(c.nbytes() <= limit for c in sample)
    assert set(sample) <= set(fitting)


def test_bucket_verdicts():
    rows = [{"size": "2^10", "dtype": "int8", "ratio": r} for r in (0.5, 1.2)] + \
        [{"size": "2^14", "dtype": "int8", "ratio": 1.6}, {"size": "2^14", "dtype": "f32", "ratio": None}]
    s = matrix.summary(rows)
    assert s["size"]["2^10"]["met"] and not s["size"]["2^14"]["met"] and not s["dtype"]["int8"]["met"]
    assert not s["every_bucket_met"]
    assert matrix.verdict_line(s).startswith("matrix verdict: NOT every bucket met (2 not: 2^14, int8)")
    good = matrix.summary(rows[:2])
    assert good["every_bucket_met"] and "every bucket met" in matrix.verdict_line(good)


def test_run_py_runs_the_matrix_with_its_options():
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--sections", "matrix",
                           "--quick", "--only", "op=Sum3,dtype=float32,size=10,pattern=row,out=yes", "--rounds", "1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Sum3 float32 2^10 row out=yes" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("matrix verdict:")
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--sections", "small",
                          "--sample", "3"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "matrix options" in bad.stderr


# --------------------------------------------------------------------------- what makes a full run fit in a session


def _old_agrees(got, want) -> bool:  # the check as it was: one np.allclose of float64 copies
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind == "f":
        tol = 2e-3 if want.dtype == np.float16 else 1e-5
        return bool(np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, equal_nan=True))
    return bool(np.array_equal(got, want))


def test_the_blockwise_agreement_check_gives_the_verdicts_of_one_allclose(monkeypatch):
    monkeypatch.setattr(matrix, "AGREE_BLOCK", 7)  # many blocks, the last one short
    base = np.linspace(0.5, 2.0, 60).reshape(6, 10)
    pairs = [(base, base), (base + 1e-7, base), (base + 1e-3, base), (base[:, :5], base)]
    last = base.copy()
    last[-1, -1] += 1
    pairs.append((last, base))
    nan = base.copy()
    nan[2, 3] = np.nan
    pairs += [(nan, nan), (nan, base)]
    half = base.astype(np.float16)
    pairs += [(half + np.float16(1e-3), half), (half + np.float16(1e-2), half), (base.astype(np.float32), half)]
    ints = np.arange(60, dtype=np.int32).reshape(6, 10)
    pairs += [(ints, ints), (ints + (ints == 59), ints), (ints.astype(np.int64), ints), (ints > 3, ints > 3),
              (np.float64(2.0), np.asarray(2.0)), (np.float64(2.1), np.asarray(2.0))]
    verdicts = [matrix._agrees(g, w) for g, w in pairs]
    assert verdicts == [_old_agrees(g, w) for g, w in pairs]
    assert True in verdicts and False in verdicts


@pytest.mark.parametrize("dtype", matrix.DTYPES)
def test_inputs_keep_their_stated_ranges_and_are_the_same_for_both_out_variants(dtype):
    op = "Where" if dtype == "bool" else "Add"
    no, yes = (matrix.Case(op, dtype, 14, "row", out) for out in ("no", "yes"))
    xs = matrix.make_inputs(no, matrix.point_rng(no, 7))
    again = matrix.make_inputs(yes, matrix.point_rng(yes, 7))
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(xs, again))
    assert [x.shape for x in xs] == matrix.shapes(op, "row", 14)
    assert [x.dtype for x in xs] == no.input_dtypes()
    other = matrix.make_inputs(no, matrix.point_rng(no, 8))
    assert not all(np.array_equal(a, b) for a, b in zip(xs, other))
    for x in xs:
        if x.dtype == bool:
            assert 0.3 < x.mean() < 0.7
        elif x.dtype.kind == "f":
            assert 0.5 <= x.min() and x.max() < 2.0 and (x.size < 2**12 or len(np.unique(x)) > 200)
        else:
            assert set(np.unique(x)) == {1, 2, 3}


def test_the_out_variants_of_a_point_share_one_setup_and_time_their_own_calls(monkeypatch):
    built = []
    real = matrix.peer_runners

    def counting(case, inputs):
        built.append(case)
        return real(case, inputs)

    monkeypatch.setattr(matrix, "peer_runners", counting)
    cases = [matrix.Case("Add", "float32", 10, "row", out) for out in ("no", "yes")]
    rows = matrix.run_point(cases, rounds=2, rng=np.random.default_rng(0))
    assert len(built) == 1
    assert [r["out"] for r in rows] == ["no", "yes"]
    for r in rows:
        assert {"bcast", "numpy"} <= set(r["seconds"]) and not r["disagree"]
        assert all(len(v) == 2 for v in r["rounds_s"].values())
        assert 0 < r["setup_s"] < r["wall_s"]


def test_a_first_call_made_by_the_caller_is_the_warm_up(monkeypatch):
    calls = {"warm": 0, "cold": 0}

    def count(name):
        def f():
            calls[name] += 1
        return f

    cands = {"warm": count("warm"), "cold": count("cold")}
    medians, rounds = matrix.interleaved(cands, rounds=3, first=["warm"], min_s=0)
    # the sizing call, then each round untimed calls (short calls: for SETTLE_S) and the timed one
    assert calls["warm"] > 1 + 3 * 2 and calls["cold"] > 2 + 3 * 2
    assert set(medians) == set(rounds) == {"warm", "cold"} and all(len(v) == 3 for v in rounds.values())
    monkeypatch.setattr(matrix, "SETTLE_S", 0.0)  # every call "long": no untimed call in a round
    calls.update(warm=0, cold=0)
    matrix.interleaved(cands, rounds=3, first=["warm"], min_s=0)
    assert calls == {"warm": 1 + 3, "cold": 2 + 3}


def test_a_peer_that_builds_but_fails_to_run_is_reported_not_a_crash(monkeypatch):
    def broken(op, inputs, **kw):
        def fail(*args):
            raise RuntimeError("no kernel for this")
        return fail, fail

    monkeypatch.setattr(matrix.peers, "ort_op", broken)
    cases = [matrix.Case("Add", "float32", 10, "row", out) for out in ("no", "yes")]
    for row in matrix.run_point(cases, rounds=1, rng=np.random.default_rng(0)):
        assert row["refused"]["ort1"] == row["refused"]["ort2"] == "refused (RuntimeError: no kernel for this)"
        assert "ort1" not in row["seconds"] and "bcast" in row["seconds"]


def test_progress_lines_and_the_estimate(monkeypatch, capsys):
    monkeypatch.setattr(matrix, "PROGRESS_EVERY", 1)
    matrix.run(["--quick", "--only", "op=Add,dtype=int8,size=10,pattern=row", "--rounds", "1"])
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" case(s)")[0] for line in err] == ["[matrix] 1 of 2", "[matrix] 2 of 2"]
    assert all("min by the cost table" in line for line in err)
    everything = matrix.select(matrix.all_cases(), {}, None, 0, matrix.MAX_BYTES)
    assert matrix.estimate(everything) > matrix.estimate(everything[:100]) > 0
    matrix.run(["--list-axes", "--only", "size=10"])
    out = capsys.readouterr().out
    small = matrix.select(matrix.all_cases(), {"size": {"2^10"}}, None, 0)
    assert "a full run: ~" in out and f"\n{len(small)} case(s) chosen" in out


def test_a_journal_lets_a_run_go_on_where_it_stopped(monkeypatch, tmp_path, capsys):
    journal = tmp_path / "matrix.jsonl"
    args = ["--quick", "--only", "op=Add,dtype=int8,size=10,pattern=row,scalar", "--rounds", "1",
            "--journal", str(journal)]
    measured: list = []
    real = matrix.run_point
    monkeypatch.setattr(matrix, "run_point", lambda cases, **kw: measured.extend(cases) or real(cases, **kw))
    first = matrix.run(args)
    lines = journal.read_text().splitlines()
    assert json.loads(lines[0])["journal"] == 1 and len(lines) == 1 + 4 and len(measured) == 4
    # killed while writing the last row: that row is dropped and measured again, the rest are kept
    journal.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:30])
    measured.clear()
    again = matrix.run(args)
    last = json.loads(lines[-1])
    assert [c.axes for c in measured] == [{a: last[a] for a in matrix.AXES}]
    assert "(3 case(s) from the journal" in capsys.readouterr().out
    assert again["all"]["cases"] == first["all"]["cases"] == 4
    assert len(journal.read_text().splitlines()) == 5
    measured.clear()
    matrix.run(args)  # nothing left to measure
    assert measured == []
    with pytest.raises(SystemExit, match="not a journal of this run"):  # other rounds: other figures
        matrix.run([*args[:-4], "--rounds", "2", "--journal", str(journal)])
