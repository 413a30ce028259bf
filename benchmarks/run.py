"""bcast's benchmark: the headline table of ratios, then the generated matrix, measured side by side in one run.

Run:  python benchmarks/run.py [--quick] [--sections large,small,shape,lint,memory,threshold,matrix]
                               [matrix options: --sample N --seed S --only axis=v,... --rounds R
                                --max-bytes B --json FILE --force --journal FILE]

``--only`` with section names only (``--only threshold``) picks sections, as
``--sections`` does; with ``axis=value`` it is the matrix's (benchmarks/matrix.py).
Every other option goes to the matrix, ``--quick`` to both.

Sections (each row prints its target and ``met`` / ``NOT met``):

- **large**: big broadcast ops, bcast against numpy, onnxruntime and
  OpenVINO at 1 and 2 threads, with and without a preallocated output
  (``out=``; onnxruntime's io_binding, OpenVINO's output tensor).  Each
  runtime's model is built once with static shapes and warmed up.  Target:
  bcast <= 1.0x the best peer (any runtime, any thread count).  ``copy`` is
  ``np.copyto(out, a)`` of the largest input: about the memory-bandwidth floor;
  ``copy2`` the same copy by numpy's loop (np.positive) in bcast's threads: the
  floor of anything computed by numpy's loops with all threads.
- **small**: one op on tiny arrays, per call, against ``np.add``: target
  <= 3x for ``bcast.apply``, ``bcast.onnx.run``, ``bcast.openvino.run`` and ``bcast.ncnn.run``.
- **shape**: ``bcast.result_shape`` against ``np.broadcast_shapes``, target
  <= 1.0x on the worst pair (benchmarks/bench_result_shape.py's pairs).
- **lint**: ``bcast.lint`` of the largest light model-zoo graph of the onnx wheel
  (densenet121), for every target, against ``onnx.shape_inference.infer_shapes``, target <= 3x.
- **memory**: the peak of the memory numpy allocates (tracemalloc) while
  running a large op without ``out=``, against inputs + output: target <= +5%.
- **threshold**: where threads start to pay (bcast.run.parallel.MIN_ELEMENTS).
- **matrix**: benchmarks/matrix.py, every case of its axes (ops x dtypes x sizes x
  patterns x out=) against the best of onnxruntime and OpenVINO; per size bucket
  and per dtype its geomean and worst ratio against the issue's target (geomean
  <= 1.0x, worst <= 1.5x), ``met`` / ``NOT met``, and a last line saying whether
  every bucket is met.

The machine may be shared and noisy: candidates are interleaved round by
round (each round runs every candidate, in an order drawn anew, each timing
after 5 ms of untimed calls of its own) and the table
gives medians over the rounds, so only the ratios within one run mean
anything.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import bcast  # noqa: E402
from bcast.run import _kernels, _recycle  # noqa: E402
import bcast.ncnn  # noqa: E402
import bcast.onnx  # noqa: E402
import bcast.openvino  # noqa: E402
import matrix  # noqa: E402
import peers  # noqa: E402

RESULTS: list = []  # (section, what, value text, target text, met)


def target(section: str, what: str, value: float, limit: float, unit: str = "x") -> None:
    RESULTS.append((section, what, f"{value:.2f}{unit}", f"<= {limit:.2f}{unit}", value <= limit))


# --------------------------------------------------------------------------- timing


def interleaved(cands: dict[str, Callable], *, rounds: int, inner: int, budget_s: float | None = None) -> dict:
    """Median seconds per call of every candidate, interleaved round by round, in an order drawn
    anew each round; each timing after untimed calls of the same candidate for 5 ms (a call right
    after another runtime's is slower: see benchmarks/matrix.py's ``interleaved``)."""
    names = list(cands)
    for f in cands.values():  # warm up: first runs page in, compile, spin up pools
        f()
        f()
    times: dict[str, list] = {n: [] for n in names}
    start = time.perf_counter()
    draw = random.Random(len(names))
    for r in range(rounds):
        for n in draw.sample(names, len(names)):
            f = cands[n]
            until = time.perf_counter() + 5e-3
            f()
            while time.perf_counter() < until:
                f()
            t0 = time.perf_counter()
            for _ in range(inner):
                f()
            times[n].append((time.perf_counter() - t0) / inner)
        if budget_s is not None and r >= 4 and time.perf_counter() - start > budget_s:
            break
    return {n: statistics.median(t) for n, t in times.items()}


# --------------------------------------------------------------------------- large ops


@dataclass
class Case:
    """One large op: how bcast, numpy and the peers compute it."""

    name: str
    inputs: list
    bcast: Callable  # bcast(*inputs, out=None)
    numpy: Callable  # numpy(*inputs, out=None)
    onnx_op: str | None  # the peers' op, on peer_inputs
    peer_inputs: list | None = None  # the inputs as the peers take them (default: inputs)
    ov_attrs: dict = field(default_factory=dict)

    @property
    def shape(self):
        return self.bcast(*self.inputs).shape


def _rng_inputs():
    rng = np.random.default_rng(0)

    def f32(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    return rng, f32


def _np_sum(*xs, out=None):
    out = np.add(xs[0], xs[1], out=out)
    for x in xs[2:]:
        np.add(out, x, out=out)
    return out


def _np_where(c, x, y, out=None):
    if out is None:
        return np.where(c, x, y)
    np.copyto(out, y)
    np.copyto(out, x, where=c)
    return out


def cases(quick: bool) -> list[Case]:
    rng, f32 = _rng_inputs()
    n = 4 if quick else 16
    a4 = f32(n, 256, 56, 56)
    ch = f32(256, 1, 1)
    m = f32(4096, 4096)
    row = f32(4096)
    pd = f32(256, 56)  # pdpd: B (256, 56) at axis 1 of A (n, 256, 56, 56)
    nc_a, nc_b = f32(256, 112, 112), f32(256, 1, 1)  # ncnn: [w,h,c] blob and per-channel [1,1,c]
    cond = rng.random((n, 1, 56, 56)) < 0.5
    sp = f32(n, 1, 56, 56)
    col = f32(56)
    return [
        Case("Add (N,256,56,56)+(256,1,1)", [a4, ch],
             lambda a, b, out=None: bcast.onnx.run("Add", a, b, out=out),
             lambda a, b, out=None: np.add(a, b, out=out), "Add"),
        Case("Add (4096,4096)+(4096,)", [m, row],
             lambda a, b, out=None: bcast.onnx.run("Add", a, b, out=out),
             lambda a, b, out=None: np.add(a, b, out=out), "Add"),
        Case("pdpd Add (N,256,56,56)+(256,56) axis=1", [a4, pd],
             lambda a, b, out=None: bcast.openvino.run("Add", a, b, auto_broadcast="pdpd", axis=1, out=out),
             lambda a, b, out=None: np.add(a, b[:, :, None], out=out), "Add",
             peer_inputs=[a4, pd[:, :, None]], ov_attrs={"auto_broadcast": "numpy"}),
        Case("ncnn ADD (256,112,112)+(256,1,1)", [nc_a, nc_b],
             lambda a, b, out=None: bcast.ncnn.run("ADD", a, b, out=out),
             lambda a, b, out=None: np.add(a, b, out=out), "Add"),
        Case("Where (N,1,56,56)?(N,256,56,56):(256,1,1)", [cond, a4, ch],
             lambda c, x, y, out=None: bcast.onnx.run("Where", c, x, y, out=out),
             _np_where, "Where"),
        Case("Sum (N,256,56,56),(256,1,1),(N,1,56,56),(56,)", [a4, ch, sp, col],
             lambda *xs, out=None: bcast.onnx.run("Sum", *xs, out=out),
             _np_sum, "Sum"),
    ]


def _peers(case: Case, shape) -> dict:
    """name -> (run, run_into) of every peer that is installed."""
    inputs = case.peer_inputs or case.inputs
    found = {}
    for threads in (1, 2):
        try:
            found[f"ort{threads}"] = peers.ort_op(case.onnx_op, inputs, threads=threads, out_shape=shape)
        except ImportError:
            pass
        try:
            found[f"ov{threads}"] = peers.ov_op(case.onnx_op, inputs, threads=threads, attrs=case.ov_attrs)
        except ImportError:
            pass
    return found


def bench_large(quick: bool) -> list:
    rows = []
    threads = _threads_api()
    for case in cases(quick):
        shape = case.shape
        expected = case.numpy(*case.inputs)
        peer = _peers(case, shape)
        outs = {name: np.empty(shape, np.float32) for name in ["numpy", "bcast", "bcast1", "copy", "copy2", *peer]}
        big = max(case.inputs, key=lambda x: x.size)
        for mode in ("out=", "new"):
            into = mode == "out="
            cands = {
                "numpy": _call(case.numpy, case.inputs, outs["numpy"] if into else None),
                "bcast": _call(case.bcast, case.inputs, outs["bcast"] if into else None),
            }
            if threads is not None:
                one = _call(case.bcast, case.inputs, outs["bcast1"] if into else None)
                cands["bcast1"] = _with_threads(threads, 1, one)
            for name, (run, run_into) in peer.items():
                cands[name] = (lambda f=run_into, o=outs[name]: f(o)) if into else run
            if big.shape == shape:
                cands["copy"] = lambda o=outs["copy"], big=big: np.copyto(o, big)
                if threads is not None:  # numpy's loops in bcast's threads: the floor of any numpy-based op
                    cands["copy2"] = lambda o=outs["copy2"], big=big: \
                        bcast.run.parallel.run_chunked(np.positive, [big], o)
            for name, f in cands.items():  # every candidate computes the same thing
                if not name.startswith("copy"):
                    got = f()
                    if not np.allclose(got, expected, rtol=1e-6, atol=1e-6):
                        raise AssertionError(f"{case.name}: {name} disagrees with numpy")
            t = interleaved(cands, rounds=5 if quick else 15, inner=3, budget_s=8 if quick else 25)
            best_name = min((n for n in t if n.startswith(("ort", "ov"))), key=t.get, default=None)
            rows.append((case.name, mode, t, best_name))
            if best_name is not None:
                target("large", f"{case.name} [{mode}] bcast / best peer ({best_name})",
                       t["bcast"] / t[best_name], 1.0)
    _print_large(rows)
    return rows


def _call(f, inputs, out):
    if out is None:
        return lambda: f(*inputs)
    return lambda: f(*inputs, out=out)


def _threads_api():
    """bcast.set_threads, where this version of bcast has it."""
    return getattr(bcast, "set_threads", None)


def _with_threads(set_threads, n, f):
    def run():
        previous = set_threads(n)
        try:
            return f()
        finally:
            set_threads(previous)

    return run


def _print_large(rows) -> None:
    cols = ["bcast", "bcast1", "numpy", "ort1", "ort2", "ov1", "ov2", "copy", "copy2"]
    print("\n## large ops: median ms per call (ratios: bcast / best peer); bcast1 = bcast with 1 thread; "
          "copy2 = a copy by numpy in bcast's threads")
    print(f"{'op':<48} {'out':<4} " + " ".join(f"{c:>7}" for c in cols) + f" {'best':>5} {'ratio':>6}")
    for name, mode, t, best in rows:
        cells = " ".join(f"{t[c] * 1e3:7.2f}" if c in t else f"{'-':>7}" for c in cols)
        ratio = f"{t['bcast'] / t[best]:6.2f}" if best else f"{'-':>6}"
        print(f"{name:<48} {mode:<4} {cells} {best or '-':>5} {ratio}")


# --------------------------------------------------------------------------- small ops


def bench_small(quick: bool) -> None:
    a, b = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    ia, ib = np.arange(3, dtype=np.int64), np.ones(3, np.int64)
    cands = {
        "np.add": lambda: np.add(a, b),
        "bcast.apply(np.add)": lambda: bcast.apply(np.add, a, b),
        'bcast.apply("add")': lambda: bcast.apply("add", a, b),
        'bcast.onnx.run("Add")': lambda: bcast.onnx.run("Add", a, b),
        'bcast.onnx.run("Add") int64': lambda: bcast.onnx.run("Add", ia, ib),
        'bcast.openvino.run("Add")': lambda: bcast.openvino.run("Add", a, b),
        'bcast.ncnn.run("ADD")': lambda: bcast.ncnn.run("ADD", a, b),
    }
    t = interleaved(cands, rounds=7 if quick else 21, inner=2000)
    base = t["np.add"]
    print("\n## small ops: one call on (3,) arrays, median us per call, ratio to np.add")
    for name, s in t.items():
        print(f"{name:<30} {s * 1e6:8.3f} us {s / base:6.2f}x")
    for name in ("bcast.apply(np.add)", 'bcast.apply("add")', 'bcast.onnx.run("Add")', 'bcast.openvino.run("Add")',
                 'bcast.ncnn.run("ADD")'):
        target("small", f"{name} / np.add", t[name] / base, 3.0)


# --------------------------------------------------------------------------- shape queries


def bench_shape(quick: bool) -> None:
    from bench_result_shape import PAIRS

    worst = 0.0
    print("\n## shape queries: median us per call")
    for x, y in PAIRS:
        t = interleaved({
            "np.broadcast_shapes": lambda x=x, y=y: np.broadcast_shapes(x, y),
            "bcast.result_shape": lambda x=x, y=y: bcast.result_shape(x, y),
        }, rounds=7 if quick else 15, inner=5000)
        ratio = t["bcast.result_shape"] / t["np.broadcast_shapes"]
        worst = max(worst, ratio)
        print(f"{bcast.format_shape(x) + ' ' + bcast.format_shape(y):<34} np {t['np.broadcast_shapes'] * 1e6:7.3f}"
              f"  bcast {t['bcast.result_shape'] * 1e6:7.3f}  {ratio:5.2f}x")
    target("shape", "result_shape / np.broadcast_shapes (worst pair)", worst, 1.0)


# --------------------------------------------------------------------------- lint


def largest_light_model():
    """The onnx wheel's largest light model-zoo graph (most nodes: densenet121), with its path."""
    import glob

    import onnx

    paths = glob.glob(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", "*.onnx"))
    models = [(onnx.load(p), p) for p in paths]
    return max(models, key=lambda mp: len(mp[0].graph.node))


def bench_lint(quick: bool) -> None:
    from onnx import shape_inference

    from bcast.models.lint import TARGETS, lint

    model, path = largest_light_model()
    cases = {"infer_shapes": lambda: shape_inference.infer_shapes(model)}
    cases.update({f"lint {t}": (lambda t=t: lint(model, t)) for t in TARGETS})
    t = interleaved(cases, rounds=3 if quick else 9, inner=1)
    base = t["infer_shapes"]
    print(f"\n## lint of {os.path.basename(path)} ({len(model.graph.node)} nodes, a ModelProto): "
          f"infer_shapes {base * 1e3:.1f} ms")
    for name in cases:
        if name != "infer_shapes":
            print(f"{name:<16} {t[name] * 1e3:6.1f} ms  {t[name] / base:5.2f}x")
    worst = max(t[n] for n in cases if n != "infer_shapes") / base
    target("lint", "bcast.lint / onnx.shape_inference.infer_shapes (worst target)", worst, 3.0)


# --------------------------------------------------------------------------- memory


def bench_memory(quick: bool) -> None:
    print("\n## peak memory: what numpy allocates during one op without out= (tracemalloc), "
          "over the output's size")
    for case in cases(quick):
        if case.onnx_op not in ("Add", "Sum", "Where") or "ncnn" in case.name or "pdpd" in case.name:
            continue
        inputs = sum(x.nbytes for x in case.inputs)
        case.bcast(*case.inputs)  # warm: the op's compiled loop is asked for, compiled in the background
        _kernels.wait()  # (whose allocations tracemalloc would count)
        _recycle.release()  # a fresh output, not one recycled from an earlier call
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            result = case.bcast(*case.inputs)
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
        extra = (inputs + peak) / (inputs + result.nbytes) - 1
        print(f"{case.name:<48} inputs {inputs / 2**20:7.1f} MiB, output {result.nbytes / 2**20:7.1f} MiB, "
              f"peak allocated {peak / 2**20:7.1f} MiB: {extra * 100:+.1f}%")
        RESULTS.append(("memory", f"{case.name}: peak / (inputs + output)", f"{extra * 100:+.1f}%", "<= +5.0%",
                        extra <= 0.05))
        del result


# --------------------------------------------------------------------------- the thread threshold


def bench_threshold(quick: bool) -> None:
    """bcast.apply(np.add) of (n/64, 64) + (64,) float32 with 1 thread and with all:
    where threads start to pay is bcast.run.parallel.MIN_ELEMENTS."""
    from bcast.run import parallel

    print(f"\n## thread threshold: bcast.apply(np.add) (n/64,64)+(64,) float32, us; all threads / 1 thread "
          f"(bcast.run.parallel.MIN_ELEMENTS = {parallel.MIN_ELEMENTS})")
    previous = parallel.MIN_ELEMENTS
    parallel.MIN_ELEMENTS = 1  # split everything here, to see where it pays
    try:
        for log2 in (16, 18, 19, 20, 21, 22, 23):
            a = np.ones((2 ** log2 // 64, 64), np.float32)
            b, out = np.ones(64, np.float32), np.empty_like(a)
            def add(a=a, b=b, out=out):
                return bcast.apply(np.add, a, b, out=out)

            t = interleaved({"1": _with_threads(bcast.set_threads, 1, add), "all": add},
                            rounds=5 if quick else 11, inner=max(1, 2 ** 20 // a.size))
            print(f"n = 2**{log2:<3} 1 thread {t['1'] * 1e6:9.1f}  all {t['all'] * 1e6:9.1f}  "
                  f"{t['all'] / t['1']:5.2f}x")
    finally:
        parallel.MIN_ELEMENTS = previous


# --------------------------------------------------------------------------- main

SECTIONS = {"large": bench_large, "small": bench_small, "shape": bench_shape, "lint": bench_lint,
            "memory": bench_memory, "threshold": bench_threshold, "matrix": None}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="Any other option is the matrix's: python benchmarks/matrix.py --help")
    parser.add_argument("--quick", action="store_true", help="smaller arrays, fewer rounds (a smoke run)")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help="sections, comma-separated: " + ", ".join(SECTIONS))
    parser.add_argument("--only", help="section names (as --sections), or the matrix's axis=value filter")
    args, rest = parser.parse_known_args(argv)
    sections = args.sections
    if args.only is not None:
        names = [s.strip() for s in args.only.split(",") if s.strip()]
        if names and all(n in SECTIONS for n in names):
            sections = args.only
        else:
            rest += ["--only", args.only]
    chosen = [s.strip() for s in sections.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {', '.join(unknown)}; the sections are {', '.join(SECTIONS)}")
    matrix_argv = (["--quick"] if args.quick else []) + rest
    if "matrix" in chosen:
        matrix.parser().parse_args(matrix_argv)  # a bad matrix option fails now, not after the headline table
    elif rest:
        parser.error(f"{' '.join(rest)}: matrix options, but the matrix section is not chosen")
    threads = getattr(bcast, "threads", None)
    print(f"bcast {bcast.__version__}, numpy {np.__version__}, onnxruntime {peers.ort_version()}, "
          f"OpenVINO {peers.ov_version()}; {len(os.sched_getaffinity(0))} usable cores; "
          f"bcast threads: {threads() if callable(threads) else 'n/a'}")
    for s in chosen:
        if s != "matrix":
            SECTIONS[s](args.quick)
    if any(s != "matrix" for s in chosen):
        print("\n## targets")
        for section, what, value, limit, met in RESULTS:
            verdict = "n/a" if met is None else ("met" if met else "NOT met")
            print(f"{section:<7} {what:<92} {value:>10} {limit:>9}  {verdict}")
    if "matrix" in chosen:
        print("\n# the matrix (benchmarks/matrix.py " + " ".join(matrix_argv) + ")", flush=True)
        summary = matrix.run(matrix_argv)
        if summary is not None:  # the buckets' table is in the matrix's summary above; the verdict last
            print("\n" + matrix.verdict_line(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
