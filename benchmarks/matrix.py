"""bcast's benchmark matrix: cases generated from axes, not picked by hand.

Run:  python benchmarks/matrix.py [--quick] [--sample N] [--seed S] [--only axis=v,...]
                                  [--rounds R] [--max-bytes B] [--json FILE [--force]] [--journal FILE]

A case is one point of the product of the axes (``--list-axes`` prints them):

- **op**: ONNX ops run through ``bcast.onnx.run``; onnxruntime and OpenVINO read
  the same one-node ONNX model (opset 17, static shapes).  ``Sum3``, ``Mean3``,
  ``Max3`` are Sum, Mean, Max of three inputs (the third of the pattern's second
  shape).
- **dtype**: float16 ... bool, where ONNX's type constraint of the op takes it.
  No bfloat16: numpy has none without ml_dtypes, which is not a dependency of bcast
  (nor of this benchmark).
- **size**: the output's element count, 2^10 ... 2^26 (``--quick``: 2^10 and
  2^14 only, and 3 rounds).
- **pattern**: how the inputs broadcast (same shape, scalar, channel, row, ...),
  each scaled so that the output has exactly the bucket's element count.
- **out**: ``yes`` (a preallocated output: ``out=``, onnxruntime's io_binding,
  OpenVINO's output tensor) or ``no``.

``--only`` keeps the cases whose axes take the given values (``--only
op=Add,Mul,dtype=float16``: a bare value adds to the axis named before it).  A case
whose inputs and outputs (bcast's and each peer's buffers: ``Case.nbytes``) would
exceed ``--max-bytes`` is skipped and said so; ``--sample N`` then keeps N of the
cases that fit, drawn with a fixed seed.

Each case times bcast, numpy (where numpy computes the same op), onnxruntime and
OpenVINO at 1 and 2 threads (spinning off, see peers.py), interleaved round by
round in an order drawn anew each round, a timing of short calls after 5 ms of untimed
calls of the same candidate (:func:`interleaved` says why); medians.  The ratio is bcast / the best peer (best of
onnxruntime and OpenVINO at either thread count); ratios mean something only
within one run.  A peer that refuses an (op, dtype) or is not installed is
reported, never a crash; a peer whose result differs from bcast's is reported
and left out of the best peer.  Output: the table of cases, a summary per size bucket
and per dtype (geomean and worst ratio) against the issue's target (geomean <= 1.0,
worst <= 1.5: ``met`` / ``NOT met``), the ten worst cases; ``--json`` writes every
figure.  ``benchmarks/run.py`` runs the headline table, then this matrix.

What a case costs, and why it is no less.  The two ``out`` variants of a point (same op, dtype, size,
pattern) run back to back on the same inputs, reference result (bcast's) and peer sessions; each variant
times its own calls (``run`` or ``run_into``) in its own rounds.  Every candidate's first call is untimed:
its warm-up and its agreement check against bcast's result (equal first, the tolerance only on a block of
2^20 elements that is not); a second untimed call sizes the repeats.  Then 7 rounds.  Fewer rounds would not
give the same medians: on 296 cases (every size) the ratio from the first 5 rounds' medians is within 1% of
the 7 rounds' in geomean per file, 1-2% for the median case, but up to 27% off for a single case (2^22),
enough to move a bucket's worst (on 364 cases at 2^26, 5 rounds: 95% of ratios within 11%, the worst 65%
off).  Only calls that cannot decide the verdict take fewer: numpy's and a peer's far slower than bcast,
where a call lasts 0.01 s (:data:`SLOW_S`).  What is left at 2^26 is the candidates' own calls (nine of each:
the first, the sizing call, 7 rounds; Pow and numpy's float16 loops take 0.3-1 s a call) and each peer's
first call (onnxruntime 1.3 s, then 0.25 s, then 0.064 s a call on Where int64).  :data:`CASE_S` was
measured before :data:`SLOW_S`: at 2^26 it overestimates the cases it spares (Pow, float16).
``--list-axes`` prints the estimate of a full run and of the cases its options choose (:data:`CASE_S`); a
run prints its progress every 100 cases to stderr.  A full run outlasts many sessions' patience: with
``--journal FILE`` each case's row is written to FILE as it is measured, and the same command run again
measures only the cases FILE lacks (same versions, bcast sources, rounds, seed and cores, else it refuses), then prints
the summary of them all.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import random
import resource
import statistics
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from collections.abc import Callable, Collection

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import bcast  # noqa: E402
import bcast.onnx  # noqa: E402
from bcast.run import _kernels  # noqa: E402
import peers  # noqa: E402

# --------------------------------------------------------------------------- the axes

FLOATS = ("float16", "float32", "float64")
INTS = ("int8", "uint8", "int32", "int64")
NUMERIC = FLOATS + INTS
DTYPES = NUMERIC + ("bool",)

# op -> the dtypes its ONNX type constraint (opset 17) takes, among DTYPES
OPS: dict[str, tuple[str, ...]] = {
    "Add": NUMERIC, "Sub": NUMERIC, "Mul": NUMERIC, "Div": NUMERIC,
    "Max": NUMERIC, "Min": NUMERIC,
    "Pow": FLOATS + ("int32", "int64"),
    "Greater": NUMERIC, "Less": NUMERIC, "Equal": DTYPES,
    "Where": DTYPES,
    "Sum": FLOATS, "Mean": FLOATS,
    "Sum3": FLOATS, "Mean3": FLOATS, "Max3": NUMERIC,  # three inputs
}
COMPARISONS = ("Greater", "Less", "Equal")
#: The issue's target, per size bucket and per dtype: bcast / best peer.
TARGET_GEOMEAN, TARGET_WORST = 1.0, 1.5
SIZES = (10, 14, 18, 22, 26)  # log2 of the output's element count
QUICK_SIZES = (10, 14)
OUTS = ("no", "yes")
AXES = ("op", "dtype", "size", "pattern", "out")  # a case's axes, as Case.axes names them
#: Outputs a case holds at its peak, by dtype: measured (ru_maxrss less the 132 MiB of a 2^10 case, less the
#: inputs, over the output's bytes) on Add (Where for bool) of two 2^26 arrays of one shape, then ~10% added:
#: int8/uint8 8.1, int32 8.5, int64 9.3, float64 12.4, bool 12.0, float32 15.7, float16 50.5 (the peers
#: compute float16 in float32 buffers of their own).
COPIES = {"int8": 10, "uint8": 10, "int32": 10, "int64": 11, "float64": 14, "bool": 14, "float32": 17,
          "float16": 56}
#: --max-bytes' default: every 2^26 case fits (the largest, float64 Sum3 of one shape, 8.5 GiB by Case.nbytes;
#: measured 7.3 GiB for float64 Add) on the 24 GiB machine the figures come from.
MAX_BYTES = 10 * 2**30


def _split(k: int, parts: int) -> list[int]:
    """``k`` split into ``parts`` exponents as even as can be (larger ones last)."""
    base, extra = divmod(k, parts)
    return [base + (1 if i >= parts - extra else 0) for i in range(parts)]


def _p(*exps: int) -> tuple[int, ...]:
    return tuple(2 ** e for e in exps)


def _same(k):
    r, c = _split(k, 2)
    return [_p(r, c), _p(r, c)]


def _scalar(k):
    r, c = _split(k, 2)
    return [_p(r, c), ()]


def _channel(k):  # (N,C,H,W) + (C,1,1): an SE scale, a conv bias
    n, c, h, w = _split(k, 4)
    return [_p(n, c, h, w), _p(c, 0, 0)]


def _row(k):  # (R,C) + (C,)
    r, c = _split(k, 2)
    return [_p(r, c), _p(c)]


def _column(k):  # (R,C) + (R,1)
    r, c = _split(k, 2)
    return [_p(r, c), _p(r, 0)]


def _outer(k):  # (R,1) + (C,): neither input has the output's shape
    r, c = _split(k, 2)
    return [_p(r, 0), _p(c)]


def _middle(k):  # (A,M,B) + (M,1)
    a, m, b = _split(k, 3)
    return [_p(a, m, b), _p(m, 0)]


def _bias5d(k):  # (N,C,D,H,W) + (C,1,1,1)
    n, c, d, h, w = _split(k, 5)
    return [_p(n, c, d, h, w), _p(c, 0, 0, 0)]


def _attention(k):  # (B,H,T,T) + (B,1,1,T)
    b, h, t1, t2 = _split(k, 4)
    t = (t1 + t2) // 2
    b += t1 + t2 - 2 * t
    return [_p(b, h, t, t), _p(b, 0, 0, t)]


def _stretched(k):  # (X,1,Z,1) + (Y,1,W): both inputs stretched on two axes each
    x, y, z, w = _split(k, 4)
    return [_p(x, 0, z, 0), _p(y, 0, w)]


PATTERNS: dict[str, Callable[[int], list[tuple[int, ...]]]] = {
    "same": _same, "scalar": _scalar, "channel": _channel, "row": _row, "column": _column,
    "outer": _outer, "middle": _middle, "bias5d": _bias5d, "attention": _attention, "stretched": _stretched,
}


def onnx_op(op: str) -> str:
    """The ONNX op of a matrix op: ``Sum3`` is Sum (of three inputs)."""
    return op[:-1] if op.endswith("3") else op


def shapes(op: str, pattern: str, k: int) -> list[tuple[int, ...]]:
    """The input shapes of ``op`` under ``pattern`` at an output of 2**k elements.
    Where takes (cond, x, y) = (b, a, b) of the pattern's pair (a, b); Sum3 (a, b, b)."""
    a, b = PATTERNS[pattern](k)
    if op == "Where":
        return [b, a, b]
    return [a, b, b] if op.endswith("3") else [a, b]


@dataclass(frozen=True)
class Case:
    op: str
    dtype: str
    size: int  # log2 of the output's element count
    pattern: str
    out: str  # "yes" / "no"

    @property
    def axes(self) -> dict[str, str]:
        return {"op": self.op, "dtype": self.dtype, "size": f"2^{self.size}", "pattern": self.pattern,
                "out": self.out}

    def input_dtypes(self) -> list[np.dtype]:
        d = np.dtype(self.dtype)
        return [np.dtype(bool), d, d] if self.op == "Where" else [d] * len(shapes(self.op, self.pattern, 0))

    def out_dtype(self) -> np.dtype:
        return np.dtype(bool) if self.op in COMPARISONS else np.dtype(self.dtype)

    def nbytes(self) -> int:
        """What the case holds at its peak: the inputs plus :data:`COPIES` outputs of its dtype
        (bcast's out=, the reference, a fresh result, and the peers' own buffers: each onnxruntime
        session's arena and result, each OpenVINO infer request's output tensor and its copy)."""
        ins = sum(math.prod(s) * d.itemsize for s, d in zip(shapes(self.op, self.pattern, self.size),
                                                            self.input_dtypes()))
        return ins + COPIES[self.dtype] * 2 ** self.size * self.out_dtype().itemsize


def all_cases(sizes=SIZES) -> list[Case]:
    return [Case(op, dt, k, pat, out)
            for op, dtypes in OPS.items() for dt in dtypes
            for k, pat, out in itertools.product(sizes, PATTERNS, OUTS)]


def parse_only(text: str) -> dict[str, set[str]]:
    """``op=Add,Mul,dtype=float16`` -> {"op": {"Add", "Mul"}, "dtype": {"float16"}}."""
    chosen: dict[str, set[str]] = {}
    axis = None
    for token in filter(None, (t.strip() for t in text.split(","))):
        if "=" in token:
            axis, token = (s.strip() for s in token.split("=", 1))
            if axis not in ("op", "dtype", "size", "pattern", "out"):
                raise ValueError(f"unknown axis {axis!r}; the axes are op, dtype, size, pattern, out")
        elif axis is None:
            raise ValueError(f"{token!r} names no axis: write axis=value")
        if axis == "size" and not token.startswith("2^"):
            token = f"2^{token}"
        chosen.setdefault(axis, set()).add(token)
    return chosen


def select(cases: list[Case], only: dict[str, set[str]], sample: int | None, seed: int,
           max_bytes: float | None = None) -> list[Case]:
    """The cases ``only`` keeps that fit in ``max_bytes``; ``sample`` of them drawn with ``seed``
    (drawn among the cases that fit: a sample is never thinned afterwards)."""
    kept = [c for c in cases if all(c.axes[a] in vs for a, vs in only.items())]
    if max_bytes is not None:
        kept = [c for c in kept if c.nbytes() <= max_bytes]
    if sample is not None and sample < len(kept):
        kept = random.Random(seed).sample(kept, sample)
    return kept


# --------------------------------------------------------------------------- inputs and candidates


def make_inputs(case: Case, rng: np.random.Generator) -> list[np.ndarray]:
    """Inputs that every candidate computes alike: floats in [0.5, 2) (Pow stays
    real, Div stays finite), integers in [1, 4) (Div by zero never, numpy's
    floor division equals ONNX's truncation), bool half true.

    Made fast at 2^26 elements (they are made once per point, see :func:`run_point`): a float is one of 256
    values 0.5 + i * 3/512 (exact in float16 too) picked by a random uint8, an integer drawn in its own dtype, a
    bool a random bool: one array of the input's size, where ``rng.uniform`` then ``astype`` made two.
    Measured, Add middle 2^26 (median of 3, memory already mapped): float64 0.23 -> 0.15 s, float16 0.29 ->
    0.14 s, int64 0.47 -> 0.13 s, int8 0.15 -> 0.08 s; the first 512 MiB a process maps costs ~1.2 s more
    (page faults), with either."""
    xs = []
    for s, d in zip(shapes(case.op, case.pattern, case.size), case.input_dtypes()):
        if d.kind == "b":
            xs.append(rng.integers(0, 2, s, dtype=bool))
        elif d.kind == "f":
            xs.append(np.linspace(0.5, 2.0, 256, endpoint=False, dtype=d)[rng.integers(0, 256, s, dtype=np.uint8)])
        else:
            xs.append(rng.integers(1, 4, s, dtype=d))
    return [np.asarray(x) for x in xs]


def _np_where(c, x, y, out=None):
    if out is None:
        return np.where(c, x, y)
    np.copyto(out, y)
    np.copyto(out, x, where=c)
    return out


def _np_fold(f):
    def run(*xs, out=None):
        out = f(xs[0], xs[1], out=out)
        for x in xs[2:]:
            f(out, x, out=out)
        return out

    return run


def _np_mean(*xs, out=None):
    out = _np_fold(np.add)(*xs, out=out)
    return np.divide(out, out.dtype.type(len(xs)), out=out)


def numpy_op(case: Case) -> Callable | None:
    """numpy's own computation of the op, or None where numpy has none."""
    ufuncs = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Max": np.maximum, "Min": np.minimum,
              "Pow": np.power, "Greater": np.greater, "Less": np.less, "Equal": np.equal, "Sum": np.add}
    if case.op in ufuncs:
        return ufuncs[case.op]
    if case.op == "Div":
        return np.divide if case.dtype in FLOATS else np.floor_divide  # inputs are positive
    return {"Where": _np_where, "Mean": _np_mean, "Mean3": _np_mean, "Sum3": _np_fold(np.add),
            "Max3": _np_fold(np.maximum)}[case.op]


def peer_runners(case: Case, inputs: list[np.ndarray]) -> tuple[dict, dict[str, str]]:
    """name -> (run, run_into) of each peer that builds the case; and name -> why not, for the
    others.  A peer that builds but fails to run is found by its first call (:func:`_first_calls`)."""
    found, refused = {}, {}
    builders = {"ort": peers.ort_op, "ov": peers.ov_onnx_op}
    for (short, build), threads in itertools.product(builders.items(), (1, 2)):
        name = f"{short}{threads}"
        try:
            runners = build(onnx_op(case.op), inputs, threads=threads, out_shape=_out_shape(case),
                            out_dtype=case.out_dtype())
        except ImportError:
            refused[name] = "not installed"
            continue
        except Exception as e:  # noqa: BLE001 - a runtime that refuses the case is a finding, not a crash
            refused[name] = _refusal(e)
            continue
        found[name] = runners
    return found, refused


def _out_shape(case: Case) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes(case.op, case.pattern, case.size)))


def _refusal(e: Exception) -> str:
    return f"refused ({type(e).__name__}: {' '.join(str(e).split())[:100]})"


#: A timing of calls shorter than this starts after untimed calls of the same candidate for this long (see
#: :func:`interleaved`); longer calls carry the switch from another runtime (~0.5 ms) as a small part of
#: themselves.
SETTLE_S = 5e-3
#: Calls this long are timed in :data:`SLOW_ROUNDS` rounds, not the case's, where their figure cannot
#: decide the verdict: numpy's (timed beside the peers, it is not one: a case's ratio is bcast / the best of
#: onnxruntime and OpenVINO), and a peer's whose median after those rounds is :data:`FAR` times bcast's or
#: more (its share of the ratio is then under 1 / FAR, far from the targets).  At 2^26 numpy's float16 loops
#: and every power take 0.3-1 s a call: measured, a float16 Mean of three inputs 30.7 s a point (its two out
#: variants; numpy's 18 calls 13.7 s of it) -> 20.4 s, a float32 Pow by rows 35.0 s -> 25.7 s (at 0.25 s).
#: From 0.01 s (most calls at 2^26: 10-150 ms, OpenVINO's often 3-6x bcast's): 12 sampled 2^26 cases
#: (``--only size=26 --sample 12 --seed 5``) 59.4 s -> 47.1 s, each ratio within 0.06 of the 0.25 s run's.
SLOW_S = 0.01
SLOW_ROUNDS = 3
FAR = 2.0


def interleaved(cands: dict[str, Callable], *, rounds: int, first: Collection[str] = (),
                min_s: float = 2e-3, spare: Collection[str] = (),
                peers: Collection[str] = ()) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Median seconds per call of each candidate, interleaved round by round
    (in an order drawn anew each round), and every round's figure; each timing repeats a
    call enough to last ``min_s``, after untimed calls for :data:`SETTLE_S` where a call is
    shorter than that.  ``first``: the candidates whose first, untimed call the caller made
    (its warm-up); any other is called once here first.  Where a call lasts :data:`SLOW_S`, ``spare``
    (no yardstick of the ratio) and ``peers`` :data:`FAR` times slower than ``bcast`` stop after
    :data:`SLOW_ROUNDS` rounds.

    Why the untimed call and the drawn order: a call right after another runtime's is slower
    than the same call after itself (caches refilled, the other's threads still awake).
    Measured on a 2^22 float32 channel Add: bcast 0.42 ms after itself, 0.91 after OpenVINO
    at 2 threads, 0.56 after onnxruntime; onnxruntime at 2 threads 0.34 after itself, 0.77
    after OpenVINO.  A rotating order keeps each candidate's predecessor fixed (bcast always
    followed OpenVINO), so that cost fell on one candidate alone; now each timing is of calls
    after the candidate's own, and the order still changes round by round.  One untimed call
    is not enough: OpenVINO's threads stay busy for milliseconds after its call (2^22 float32
    channel Add: bcast 0.72 ms right after OpenVINO, 0.58 after one call of its own, 0.49 after three,
    0.45 after ten; onnxruntime 0.58, 0.51, 0.40, 0.25), hence untimed calls for 5 ms."""
    names = list(cands)
    order = random.Random(len(names))
    inner, settle, slow = {}, {}, {}
    for n, f in cands.items():  # warm up (unless done), and size the repeats
        if n not in first:
            f()
        # a second untimed call even where the first was long: onnxruntime's second call of a case can still
        # be 4x its steady time (Where int64 2^26 into out=: 1.32 s, 0.25 s, then 0.064 s a call)
        t0 = time.perf_counter()
        f()
        once = time.perf_counter() - t0
        inner[n] = max(1, min(10_000, int(min_s / max(once, 1e-7))))
        settle[n] = once < SETTLE_S
        slow[n] = once >= SLOW_S
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        if r == SLOW_ROUNDS:  # the slow calls whose figure cannot decide the verdict stop here
            base = statistics.median(times["bcast"]) if "bcast" in times else math.inf
            names = [n for n in names if not slow[n]
                     or not (n in spare or n in peers and statistics.median(times[n]) >= FAR * base)]
        for n in order.sample(names, len(names)):
            f, reps = cands[n], inner[n]
            if settle[n]:
                until = time.perf_counter() + SETTLE_S
                f()
                while time.perf_counter() < until:
                    f()
            t0 = time.perf_counter()
            for _ in range(reps):
                f()
            times[n].append((time.perf_counter() - t0) / reps)
    return {n: statistics.median(t) for n, t in times.items()}, times


#: Elements per block of the agreement check: no full-size float64 temporaries (1 MiB of bool, 8 MiB of
#: float64 per block).
AGREE_BLOCK = 2**20


def _agrees(got, want) -> bool:
    """``got`` equals ``want`` (floats: within rtol = atol = 1e-5, float16 2e-3, NaN equal to NaN, an
    infinity equal to itself).  Checked block by block: equal values first, the tolerance only on a block
    that is not equal, and the NaNs and infinities only on its elements outside the tolerance.  Measured on
    five 2^26 float64 results: 7.8 s as one ``np.allclose`` of float64 copies; blocks of equal results ~0.1 s
    each.  A 2^26 float16 Mean of three inputs (its peers round once where bcast rounds each step: no block
    is equal): its ten checks took 8.4 s with ``np.allclose`` on float64 blocks, 4.4 s so (0.38 s a check, most
    of it numpy's float16 conversion)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    g, w = got.reshape(-1), want.reshape(-1)
    tol = 2e-3 if want.dtype == np.float16 else 1e-5
    wide = np.float32 if want.dtype == np.float16 else np.float64  # (every float16 is a float32)
    bufs = None  # the tolerance's work arrays, made once (fresh pages for each block cost more than the check)
    for i in range(0, w.size, AGREE_BLOCK):
        a, b = g[i:i + AGREE_BLOCK], w[i:i + AGREE_BLOCK]
        if np.array_equal(a, b):
            continue
        if want.dtype.kind != "f":
            return False
        if bufs is None:
            bufs = np.empty((4, min(AGREE_BLOCK, w.size)), wide), np.empty(min(AGREE_BLOCK, w.size), bool)
        (x, y, d, t), near = bufs[0][:, :a.size], bufs[1][:a.size]
        np.copyto(x, a), np.copyto(y, b)
        with np.errstate(invalid="ignore"):
            np.abs(np.subtract(x, y, out=d), out=d)
            np.abs(y, out=t)
            t *= tol
            t += tol
            np.less_equal(d, t, out=near)  # (NaN, and inf - inf, are not near)
        if not near.all():
            far = ~near
            a, b = x[far], y[far]
            if not np.all((a == b) | (np.isnan(a) & np.isnan(b))):
                return False
    return True


def point(case: Case) -> tuple[str, str, int, str]:
    """The point of a case: its axes but ``out``.  The out variants of a point share inputs, reference
    result and peers' sessions (:func:`run_point`)."""
    return case.op, case.dtype, case.size, case.pattern


def point_rng(case: Case, seed: int) -> np.random.Generator:
    """The random generator of a case's inputs: from the seed and the case's point only (not ``out``: both
    variants of a point get the same inputs, and not what else runs)."""
    axes = {k: v for k, v in case.axes.items() if k != "out"}
    return np.random.default_rng([seed, zlib.crc32(repr(sorted(axes.items())).encode())])


def run_point(cases: list[Case], *, rounds: int, rng: np.random.Generator) -> list[dict]:
    """The rows of ``cases``, the out variants of one point: inputs, the reference result (bcast's) and the
    peers' sessions are made once for them; each variant then checks and times its own calls (``run`` or
    ``run_into``) in its own interleaved rounds.  A row's ``wall_s``: its share of the setup (``setup_s``)
    plus its own checks and rounds."""
    assert len({point(c) for c in cases}) == 1, cases
    t0 = time.perf_counter()
    first = cases[0]
    inputs = make_inputs(first, rng)
    # bcast's result, kept as it is: an output bcast recycles is reused only once no array holds it (a copy
    # here took 1.2 s at 2^26 int64: the pages of a fresh 512 MiB array)
    want = np.asarray(bcast.onnx.run(onnx_op(first.op), *inputs))
    _kernels.wait()  # a compiled loop this call asked for is compiled in the background: time it ready
    # again, into its own result (no new output): a ready loop may ask for a faster form of itself for these
    # values (integer Pow of small exponents, int64 Div within 2^53), compiled in the background too; timed
    # while it compiled, a round of int64 Pow 2^10 took 0.23 ms instead of 0.012 (numba's compile holds the GIL)
    bcast.onnx.run(onnx_op(first.op), *inputs, out=want)
    _kernels.wait()
    peer, refused = peer_runners(first, inputs)
    setup = (time.perf_counter() - t0) / len(cases)
    rows = []
    for case in cases:
        t0 = time.perf_counter()
        row = _run_variant(case, inputs, want, peer, dict(refused), rounds)
        row["setup_s"], row["wall_s"] = setup, setup + time.perf_counter() - t0
        rows.append(row)
    return rows


def _first_calls(cands: dict[str, Callable], want, refused: dict[str, str]) -> list[str]:
    """Each candidate's first call (its warm-up, untimed): the names of the candidates whose result differs
    from ``want`` (bcast's: every candidate computes the same thing).  A peer whose call raises goes from
    ``cands`` to ``refused``."""
    disagree = []
    for name, g in list(cands.items()):
        try:
            got = g()
        except Exception as e:  # noqa: BLE001 - a runtime that refuses the case is a finding, not a crash
            if name in ("bcast", "numpy"):
                raise
            refused[name] = _refusal(e)
            del cands[name]
            continue
        if name != "bcast" and not _agrees(got, want):
            disagree.append(name)
        del got
    return disagree


def _run_variant(case: Case, inputs: list[np.ndarray], want: np.ndarray, peer: dict, refused: dict[str, str],
                 rounds: int) -> dict:
    into = case.out == "yes"
    out = np.empty(_out_shape(case), case.out_dtype()) if into else None
    op = onnx_op(case.op)
    cands: dict[str, Callable] = {}
    cands["bcast"] = (lambda: bcast.onnx.run(op, *inputs, out=out)) if into else \
        (lambda: bcast.onnx.run(op, *inputs))
    f = numpy_op(case)
    if f is not None:
        cands["numpy"] = (lambda: f(*inputs, out=out)) if into else (lambda: f(*inputs))
    for name, (run, run_into) in peer.items():
        cands[name] = (lambda g=run_into: g(out)) if into else run
    disagree = _first_calls(cands, want, refused)
    t, per_round = interleaved(cands, rounds=rounds, first=list(cands), spare=("numpy",),
                               peers=[n for n in cands if n not in ("bcast", "numpy")])
    # a peer that computes something else (OpenVINO saturates uint8 Sub) is no yardstick
    best = min((n for n in t if n.startswith(("ort", "ov")) and n not in disagree), key=t.__getitem__,
               default=None)
    return {**case.axes, "shapes": [list(s) for s in shapes(case.op, case.pattern, case.size)],
            "seconds": t, "rounds_s": per_round, "refused": refused, "disagree": disagree, "best_peer": best,
            "ratio": t["bcast"] / t[best] if best else None,
            "vs_numpy": t["bcast"] / t["numpy"] if "numpy" in t else None}


# --------------------------------------------------------------------------- the cost of a run

PROGRESS_EVERY = 100  # cases between two progress lines (stderr)

#: Wall seconds a case takes at 7 rounds, out variants run as pairs, by size (log2) and the bytes of one
#: element of its dtype (bool: 1).  Measured on the 2-core machine the figures come from (each row's
#: ``wall_s``, its setup counted half, as in a pair): 2^10 to 2^18 from samples of 40 cases; 2^22 from every
#: (op, dtype, out) of the channel pattern (192 cases); 2^26 from 36 sampled cases, extrapolated to every
#: (op, dtype, out) by their calls at 2^22 times 16 (a case took ~20 times the sum of its candidates' medians).
#: A full run: ~3.8 h, of which 2^26 ~3.3 h (Pow ~1 h of it, numpy's calls ~0.9 h).
CASE_S: dict[int, dict[int, float]] = {
    10: {1: 0.10, 2: 0.11, 4: 0.08, 8: 0.08},
    14: {1: 0.11, 2: 0.17, 4: 0.08, 8: 0.10},
    18: {1: 0.14, 2: 0.21, 4: 0.11, 8: 0.13},
    22: {1: 0.35, 2: 0.59, 4: 0.40, 8: 0.70},
    26: {1: 1.4, 2: 10.0, 4: 4.5, 8: 10.0},
}


def estimate(cases: list[Case]) -> float:
    """Seconds ``cases`` should take at 7 rounds, from :data:`CASE_S`."""
    return sum(CASE_S[c.size][np.dtype(c.dtype).itemsize] for c in cases)


# --------------------------------------------------------------------------- output

COLS = ("bcast", "numpy", "ort1", "ort2", "ov1", "ov2")


def _label(row: dict) -> str:
    shp = "·".join(bcast.format_shape(tuple(s)) for s in row["shapes"])
    return f"{row['op']} {row['dtype']} {row['size']} {row['pattern']} out={row['out']} {shp}"


def print_row(row: dict) -> None:
    t = row["seconds"]
    cells = " ".join(f"{t[c] * 1e3:9.4f}" if c in t else f"{'-':>9}" for c in COLS)
    ratio = f"{row['ratio']:6.2f}" if row["ratio"] is not None else f"{'-':>6}"
    grouped: dict[str, list[str]] = {}
    for n, why in row["refused"].items():
        grouped.setdefault(why, []).append(n)
    notes = [f"{', '.join(ns)} {why}" for why, ns in grouped.items()]
    notes += [f"{n} DISAGREES with bcast (not counted as a peer)" for n in row["disagree"]]
    tail = "  " + "; ".join(notes) if notes else ""
    print(f"{_label(row):<72} {cells} {row['best_peer'] or '-':>5} {ratio}{tail}", flush=True)


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _met(g: dict) -> bool:
    return g["geomean"] <= TARGET_GEOMEAN and g["worst"] <= TARGET_WORST


def summary(rows: list[dict]) -> dict:
    """Per size bucket and per dtype: count, geomean and worst of bcast / best peer, and whether
    the target is met (geomean <= TARGET_GEOMEAN, worst <= TARGET_WORST)."""
    out: dict[str, dict] = {}
    for axis in ("size", "dtype"):
        groups: dict[str, list[float]] = {}
        for r in rows:
            if r["ratio"] is not None:
                groups.setdefault(r[axis], []).append(r["ratio"])
        out[axis] = {k: {"cases": len(v), "geomean": _geomean(v), "worst": max(v)} for k, v in groups.items()}
        for g in out[axis].values():
            g["met"] = _met(g)
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    out["all"] = {"cases": len(ratios), "geomean": _geomean(ratios), "worst": max(ratios)} if ratios else {}
    out["every_bucket_met"] = bool(ratios) and all(g["met"] for axis in ("size", "dtype") for g in out[axis].values())
    return out


def verdict_line(s: dict) -> str:
    """One line: whether every size bucket and every dtype meets the target."""
    missed = [k for axis in ("size", "dtype") for k, g in s[axis].items() if not g["met"]]
    if not s["all"]:
        return "matrix verdict: no case had a peer to compare with: nothing met"
    if not missed:
        return (f"matrix verdict: every bucket met (geomean <= {TARGET_GEOMEAN:.2f}x and worst <= "
                f"{TARGET_WORST:.2f}x in every size bucket and every dtype)")
    return f"matrix verdict: NOT every bucket met ({len(missed)} not: {', '.join(missed)})"


def print_summary(rows: list[dict], skipped: list[Case], no_peer: int) -> dict:
    s = summary(rows)
    target = f"<= {TARGET_GEOMEAN:.1f} / {TARGET_WORST:.1f}"
    print("\n## summary: bcast / best peer; target: geomean <= "
          f"{TARGET_GEOMEAN:.1f}x and worst <= {TARGET_WORST:.1f}x per bucket")
    for axis in ("size", "dtype"):
        print(f"{'by ' + axis:<12} {'cases':>6} {'geomean':>8} {'worst':>7} {'target':>12}  verdict")
        for k in sorted(s[axis], key=lambda v: (len(v), v)):
            g = s[axis][k]
            print(f"{k:<12} {g['cases']:>6} {g['geomean']:8.2f} {g['worst']:7.2f} {target:>12}  "
                  f"{'met' if g['met'] else 'NOT met'}")
    if s["all"]:
        print(f"{'all':<12} {s['all']['cases']:>6} {s['all']['geomean']:8.2f} {s['all']['worst']:7.2f}")
    if no_peer:
        print(f"({no_peer} case(s) had no peer to compare with: see their notes above)")
    if skipped:
        print(f"({len(skipped)} case(s) skipped: inputs + outputs over --max-bytes)")
    worst = sorted((r for r in rows if r["ratio"] is not None), key=lambda r: -r["ratio"])[:10]
    print("\n## the ten worst cases: bcast / best peer")
    for r in worst:
        print(f"{r['ratio']:6.2f}  {_label(r)}  (bcast {r['seconds']['bcast'] * 1e3:.4f} ms, "
              f"{r['best_peer']} {r['seconds'][r['best_peer']] * 1e3:.4f} ms)")
    print("\n" + verdict_line(s))
    return s


def write_json(path: str, data: dict) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file, then a rename)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".matrix-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


# --------------------------------------------------------------------------- the journal


def _journal_head(rounds: int, seed: int) -> dict:
    """What a journal's rows were measured with: a journal is continued only by a run of the same, bcast's
    own code included (its version does not change with every commit: the digest of its sources does)."""
    return {"journal": 1, "versions": {"bcast": bcast.__version__, "numpy": np.__version__,
                                       "onnxruntime": peers.ort_version(), "openvino": peers.ov_version()},
            "bcast_sources": _source_digest(), "rounds": rounds, "seed": seed,
            "cores": len(os.sched_getaffinity(0))}


def _source_digest() -> str:
    """A digest of bcast's Python sources (the package that runs), and of this benchmark's."""
    h = hashlib.sha256()
    root = os.path.dirname(os.path.abspath(bcast.__file__))
    files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py")]
    for path in sorted(files) + [os.path.abspath(__file__)]:
        with open(path, "rb") as f:
            h.update(os.path.relpath(path, root).encode() + b"\0" + f.read())
    return h.hexdigest()[:16]


def read_journal(path: str, head: dict) -> dict[tuple, dict]:
    """The rows of the journal at ``path`` by case (:func:`_case_key`); {} when there is none.  A journal
    written with other versions, sources, rounds, seed or cores is refused (its rows are not this run's); a last
    line cut short (the run was killed while writing it) is dropped from the file."""
    if not os.path.exists(path):
        return {}
    with open(path, "rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):  # a row cut short: dropped, so that the next one starts a line
            data = data[:data.rfind(b"\n") + 1]
            f.truncate(len(data))
    lines = data.decode().splitlines()
    if not lines:
        return {}
    try:
        first = json.loads(lines[0])
    except ValueError:
        first = None
    if first != head:
        raise SystemExit(f"matrix: {path} is not a journal of this run (its first line: {lines[0][:200]}; this "
                         f"run: {json.dumps(head)}); remove it or name another --journal")
    rows: dict[tuple, dict] = {}
    for n, line in enumerate(lines[1:], 2):
        try:
            row = json.loads(line)
            rows[_case_key(row)] = row
        except (ValueError, TypeError, KeyError):
            raise SystemExit(f"matrix: {path}, line {n}: not a row of the journal") from None
    return rows


def _case_key(axes: dict) -> tuple:
    return tuple(axes[a] for a in AXES)


def _append(path: str, line: dict) -> None:
    """One line added to the journal, flushed to the disk before the next case starts."""
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")
        f.flush()
        os.fsync(f.fileno())


# --------------------------------------------------------------------------- main


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="sizes 2^10 and 2^14 only, 3 rounds (a smoke run)")
    p.add_argument("--sample", type=int, help="keep N of the cases that fit --max-bytes, drawn with --seed")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", default="", help="axis=value[,value...][,axis=value...]")
    p.add_argument("--rounds", type=int, help="rounds per case (default 7; 3 with --quick)")
    p.add_argument("--max-bytes", type=float, default=MAX_BYTES,
                   help="skip a case whose inputs + outputs (bcast's and every peer's) exceed this "
                        f"(default {MAX_BYTES / 2**30:.0f} GiB)")
    p.add_argument("--json", help="write every figure to this file")
    p.add_argument("--force", action="store_true", help="let --json replace an existing file")
    p.add_argument("--journal", help="append each case's row to this file as it is measured; a run given a "
                                      "journal that exists measures only the cases it lacks (a long run "
                                      "stopped midway goes on where it stopped)")
    p.add_argument("--list-axes", action="store_true", help="print the axes and the number of cases")
    return p


def run(argv=None) -> dict | None:
    """Run the matrix as the command line says; its summary (:func:`summary`), or None when it
    only listed the axes."""
    ap = parser()
    args = ap.parse_args(argv)
    if args.json and os.path.exists(args.json) and not args.force:
        ap.error(f"{args.json} exists; pass --force to replace it")
    try:
        only = parse_only(args.only)
    except ValueError as e:
        ap.error(str(e))
    cases = all_cases(QUICK_SIZES if args.quick else SIZES)
    if args.list_axes:
        for name, values in (("op", OPS), ("dtype", DTYPES), ("size", [f"2^{k}" for k in SIZES]),
                             ("pattern", PATTERNS), ("out", OUTS)):
            print(f"{name:<8} {', '.join(values)}")
        print(f"{len(all_cases())} cases in all (op x the dtypes it takes x size x pattern x out); "
              f"a full run: ~{estimate(select(all_cases(), {}, None, 0, MAX_BYTES)) / 3600:.1f} h by the cost table")
        chosen = select(cases, only, args.sample, args.seed, args.max_bytes)
        print(f"{len(chosen)} case(s) chosen by these options: ~{estimate(chosen) / 60:.1f} min")
        return None
    wanted = select(cases, only, None, args.seed)
    chosen = select(cases, only, args.sample, args.seed, args.max_bytes)
    skipped = [c for c in wanted if c.nbytes() > args.max_bytes]
    rounds = args.rounds or (3 if args.quick else 7)
    print(f"bcast {bcast.__version__}, numpy {np.__version__}, onnxruntime {peers.ort_version()}, "
          f"OpenVINO {peers.ov_version()}; {len(os.sched_getaffinity(0))} usable cores; "
          f"{len(chosen)} case(s), {rounds} round(s) each")
    print("\n## cases: median ms per call; ratio = bcast / best peer")
    print(f"{'case':<72} " + " ".join(f"{c:>9}" for c in COLS) + f" {'best':>5} {'ratio':>6}")
    rows, start = [], time.perf_counter()
    head = _journal_head(rounds, args.seed)
    done = read_journal(args.journal, head) if args.journal else {}
    if args.journal and (not os.path.exists(args.journal) or not os.path.getsize(args.journal)):
        _append(args.journal, head)
    points: dict[tuple, list[Case]] = {}
    for case in chosen:  # the out variants of a point run together, in the order the first one comes
        points.setdefault(point(case), []).append(case)
    order = [c for variants in points.values() for c in variants]
    earlier = [done[_case_key(c.axes)] for c in order if _case_key(c.axes) in done]
    todo = [c for c in order if _case_key(c.axes) not in done]
    pending: dict[tuple, list[Case]] = {}  # the points with a variant still to measure
    for case in todo:
        pending.setdefault(point(case), []).append(case)
    if earlier:
        print(f"({len(earlier)} case(s) from the journal {args.journal}, measured by an earlier run of the same "
              f"versions; {len(order) - len(earlier)} to measure)")
    for row in earlier:
        print_row(row)
        rows.append(row)
    for variants in pending.values():
        for row in run_point(variants, rounds=rounds, rng=point_rng(variants[0], args.seed)):
            print_row(row)
            rows.append(row)
            if args.journal:
                _append(args.journal, row)
            if len(rows) % PROGRESS_EVERY == 0:
                print(f"[matrix] {len(rows)} of {len(order)} case(s) in {time.perf_counter() - start:.0f} s; "
                      f"the rest: ~{estimate(todo[len(rows) - len(earlier):]) / 60:.0f} min by the cost table",
                      file=sys.stderr, flush=True)
    for c in skipped if args.sample is None else skipped[:0]:  # a sample was drawn among the cases that fit
        print(f"{_label({**c.axes, 'shapes': shapes(c.op, c.pattern, c.size)}):<72} skipped: "
              f"{c.nbytes() / 2**20:.0f} MiB over --max-bytes")
    no_peer = sum(1 for r in rows if r["best_peer"] is None)
    result = print_summary(rows, skipped, no_peer)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10  # KiB on Linux
    print(f"\n{len(rows)} case(s) in {elapsed:.1f} s; peak resident memory {peak:.0f} MiB")
    if args.json:
        write_json(args.json, {"versions": {"bcast": bcast.__version__, "numpy": np.__version__,
                                            "onnxruntime": peers.ort_version(),
                                            "openvino": peers.ov_version()},
                               "rounds": rounds, "cases": rows, "summary": result,
                               "skipped": [c.axes for c in skipped], "seconds": elapsed,
                               "peak_rss_mib": peak})
    return result


def main(argv=None) -> int:
    run(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
