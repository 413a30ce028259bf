"""Proof by conversion: convert a model the way a user does, run it, compare with onnxruntime.

Paths (each returns an :class:`Outcome`):

- ``ncnn``: ``pnnx model.onnx inputshape=...`` (the PyPI ``pnnx`` wheel's
  converter binary, called directly: the wheel's Python package imports torch,
  the binary needs none of it for ``.onnx`` input), then the ``.ncnn.param`` /
  ``.ncnn.bin`` run in the ncnn Python bindings exactly as pnnx's generated
  ``*_ncnn.py`` does (its ``batch_index`` per input and output) with the
  options a user gets by default: ``ncnn.Net()``'s own (packing layout, fp16
  storage where the CPU has it, pnnx's default ``fp16=1`` weights), one thread.
- ``openvino``: ``openvino.Core().read_model(model.onnx)`` (its ONNX
  frontend), compiled for ``CPU`` with default properties (f32 inference
  precision on x86 without AMX/avx512-bf16) and run.

An outcome is ``ok`` (every output has onnxruntime's shape and values within
the tolerance), ``wrong values``, ``wrong shape`` or ``fails`` (conversion or
loading fails, or the converter writes no model).  The tolerance: ``|a - b| <=
atol + rtol * |b|`` with rtol 2e-2 and atol 2e-2 (fp16 storage and weights on
ncnn: an fp16 value carries a relative error up to 2**-11 per rounding), the
same for OpenVINO.  A wrong broadcast moves whole rows: its errors are of the
size of the values, far past that.

Run as a script for the table: ``python tests/support/convert_harness.py [MODEL.onnx ...]``.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "models", "convert_corpus"))
RTOL = ATOL = 2e-2
OUTCOMES = ("ok", "wrong values", "wrong shape", "fails")


@dataclass
class Outcome:
    kind: str  # one of OUTCOMES
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def corpus() -> list:
    return sorted(glob.glob(os.path.join(CORPUS, "*.onnx")))


def pnnx_binary() -> str | None:
    """The pnnx converter of the installed PyPI wheel (found without importing the package, which needs torch)."""
    spec = importlib.util.find_spec("pnnx")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "pnnx")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def have(path: str) -> bool:
    """Whether a path can be run here: 'ncnn' needs pnnx and ncnn, 'openvino' openvino; both onnxruntime."""
    mods = {"ncnn": ("ncnn",), "openvino": ("openvino",)}[path] + ("onnxruntime", "onnx")
    if any(importlib.util.find_spec(m) is None for m in mods):
        return False
    return path != "ncnn" or pnnx_binary() is not None


def _input_shapes(model_path: str) -> dict:
    import onnx
    m = onnx.load(model_path)
    inits = {i.name for i in m.graph.initializer}
    return {v.name: tuple(d.dim_value for d in v.type.tensor_type.shape.dim)
            for v in m.graph.input if v.name not in inits}


def feeds_for(model_path: str, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(s).astype(np.float32) for n, s in _input_shapes(model_path).items()}


def run_ort(model_path: str, feeds: dict) -> list:
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    s = ort.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
    return [np.asarray(o, np.float32) for o in s.run(None, feeds)]


def compare(got: list, want: list) -> Outcome:
    if len(got) != len(want):
        return Outcome("wrong shape", f"{len(got)} outputs, onnxruntime {len(want)}")
    for k, (a, b) in enumerate(zip(got, want)):
        a = np.asarray(a, np.float32)
        if a.shape != b.shape:
            return Outcome("wrong shape", f"output {k}: {a.shape}, onnxruntime {b.shape}")
        bad = ~(np.abs(a - b) <= ATOL + RTOL * np.abs(b))
        if bad.any():
            worst = float(np.nanmax(np.where(np.isfinite(a), np.abs(a - b), np.inf)))
            return Outcome("wrong values", f"output {k}: {int(bad.sum())} of {a.size} off, worst {worst:.3g}")
    return Outcome("ok")


# --------------------------------------------------------------------------- ncnn through pnnx


_INPUT = re.compile(r'ex\.input\("(in\d+)", ncnn\.Mat\((\w+)\.numpy\(\)(?:, batch_index=(\d+))?\)')
_OUTPUT = re.compile(r'_, (out\d+) = ex\.extract\("(out\d+)"\)\s*\n\s*'
                     r'out\.append\(torch\.from_numpy\(\w+\.numpy\((?:batch_index=(\d+))?\)')


def _external_files(model_path: str) -> list:
    """The external data files a model's initializers name (relative to its folder, as ONNX has them)."""
    import onnx
    m = onnx.load(model_path, load_external_data=False)
    out = set()
    for t in m.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            out.update(e.value for e in t.external_data if e.key == "location")
    return sorted(out)


def convert_pnnx(model_path: str, workdir: str, timeout: float = 120) -> tuple:
    """Run pnnx on a copy of the model in ``workdir``: (returncode, log, param, bin, the generated _ncnn.py)."""
    shapes = _input_shapes(model_path)
    # the model under its own name, its external data files beside it, as a user converts it in place: pnnx
    # reads external data only from MODEL.onnx.data (load_onnx.cpp), whatever the tensors' location says
    name = os.path.basename(model_path)
    here = os.path.dirname(os.path.abspath(model_path))
    if os.path.abspath(workdir) != here:
        shutil.copyfile(model_path, os.path.join(workdir, name))
        for loc in _external_files(model_path):  # torch's default exporter writes the weights to MODEL.onnx.data
            shutil.copyfile(os.path.join(here, loc), os.path.join(workdir, loc))
    shape_arg = ",".join("[" + ",".join(map(str, s)) + "]" for s in shapes.values())
    proc = subprocess.run([pnnx_binary(), name, f"inputshape={shape_arg}"], cwd=workdir, capture_output=True,
                          text=True, errors="replace", timeout=timeout)
    stem = name[:-5] if name.endswith(".onnx") else name
    param, binf, py = (os.path.join(workdir, stem + n) for n in (".ncnn.param", ".ncnn.bin", "_ncnn.py"))
    return proc.returncode, proc.stdout + proc.stderr, param, binf, py


def run_ncnn(model_path: str, feeds: dict, workdir: str | None = None) -> tuple:
    """(Outcome, pnnx's log) of the pnnx -> ncnn path."""
    own = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix="bcast-pnnx-")
    try:
        try:
            rc, log, param, binf, py = convert_pnnx(model_path, workdir)
        except subprocess.TimeoutExpired:
            return Outcome("fails", "pnnx timed out"), ""
        if rc != 0 or not all(map(os.path.exists, (param, binf, py))):
            return Outcome("fails", f"pnnx exit {rc}" + (" (killed by a signal)" if rc < 0 else "")), log
        try:
            return _run_ncnn(model_path, feeds, param, binf, py), log
        except RuntimeError as e:  # the bindings refuse the input (a rank ncnn's Mat cannot hold)
            return Outcome("fails", f"ncnn: {e}"), log
    finally:
        if own:
            shutil.rmtree(workdir, ignore_errors=True)


def _run_ncnn(model_path, feeds, param, binf, py) -> Outcome:
    import ncnn
    with open(py) as f:
        script = f.read()
    ins = _INPUT.findall(script)
    outs = _OUTPUT.findall(script)
    names = list(feeds)
    if len(ins) != len(names) or not outs:
        return Outcome("fails", "pnnx's _ncnn.py lists other inputs/outputs")
    with ncnn.Net() as net:
        net.opt.num_threads = 1
        if net.load_param(param) != 0:
            return Outcome("fails", "ncnn cannot load the .param")
        if net.load_model(binf) != 0:
            return Outcome("fails", "ncnn cannot load the .bin")
        with net.create_extractor() as ex:
            for (blob, _, bi), name in zip(ins, names):
                a = np.ascontiguousarray(feeds[name], np.float32)
                ex.input(blob, ncnn.Mat(a, batch_index=int(bi or 233)).clone())
            got = []
            for _, blob, bi in outs:
                ret, mat = ex.extract(blob)
                if ret != 0:
                    return Outcome("fails", f"ncnn extract {blob}: {ret}")
                got.append(np.array(mat.numpy(batch_index=int(bi or 233))).copy())
    return compare(got, run_ort(model_path, feeds))


# --------------------------------------------------------------------------- OpenVINO


def run_openvino(model_path: str, feeds: dict) -> Outcome:
    import openvino as ov
    core = ov.Core()
    try:
        model = core.read_model(model_path)
        compiled = core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": 1})
        res = compiled.infer_new_request({k: v for k, v in feeds.items()})
        got = [np.asarray(res[o]) for o in compiled.outputs]
    except Exception as e:  # noqa: BLE001 - any failure to read/compile/run is the outcome
        return Outcome("fails", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200])
    return compare(got, run_ort(model_path, feeds))


def observe(model_path: str, path: str, seed: int = 0) -> Outcome:
    feeds = feeds_for(model_path, seed)
    if path == "ncnn":
        return run_ncnn(model_path, feeds)[0]
    if path == "openvino":
        return run_openvino(model_path, feeds)
    raise ValueError(path)


# --------------------------------------------------------------------------- lint's prediction


PREDICTS_WRONG = ("unsupported", "differs", "invalid")


def predicted_ok(model_path: str, target: str) -> tuple:
    """(lint's verdict: True = no unsupported/differs/invalid finding, the findings that decide)."""
    from bcast import lint
    found = [f for f in lint(model_path, target=target) if f.kind in PREDICTS_WRONG]
    return not found, found


def confusion(rows) -> str:
    """rows: (name, predicted_ok, observed_ok). A 2x2 table: predicted (rows) x observed (columns)."""
    t = {(p, o): 0 for p in (True, False) for o in (True, False)}
    for _, p, o in rows:
        t[(bool(p), o)] += 1
    return ("                    observed ok  observed wrong\n"
            f"  lint: ok          {t[(True, True)]:>11}  {t[(True, False)]:>14}\n"
            f"  lint: finding     {t[(False, True)]:>11}  {t[(False, False)]:>14}")


RECORD = os.path.join(CORPUS, "observed.json")


def recorded() -> dict:
    """The outcomes observed when the corpus was last run: {path: {model file name: outcome kind}}."""
    import json
    with open(RECORD) as f:
        return json.load(f)["outcomes"]


def record(models=None) -> dict:
    """Run every path here on every model and write RECORD (atomically)."""
    import json
    from importlib.metadata import version
    outcomes = {p: {os.path.basename(m): observe(m, p).kind for m in models or corpus()}
                for p in ("ncnn", "openvino")}
    data = {"versions": {k: version(k) for k in ("pnnx", "ncnn", "openvino", "onnxruntime", "onnx")},
            "outcomes": outcomes}
    tmp = RECORD + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, RECORD)
    return data


def main(argv) -> int:
    if argv[:1] == ["--record"]:
        record()
        print(f"wrote {RECORD}")
        return 0
    models = argv or corpus()
    for path in ("ncnn", "openvino"):
        if not have(path):
            print(f"{path}: not available here")
            continue
        rows = []
        for m in models:
            o = observe(m, path)
            try:
                p = predicted_ok(m, path)[0]
            except Exception:  # noqa: BLE001 - a crash of lint is a row of the table too
                p = None
            rows.append((m, p, o.ok))
            flag = "" if p == o.ok else "   <-- MISMATCH"
            print(f"{path:8} {os.path.basename(m):28} observed {o.kind:12} lint {'ok' if p else 'finding':8}"
                  f" {o.detail[:60]}{flag}")
        print(confusion(rows))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(HERE, "..", "..", "src"))
    sys.exit(main(sys.argv[1:]))
