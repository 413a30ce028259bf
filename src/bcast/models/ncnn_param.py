"""``bcast lint model.param``: every two-blob BinaryOp of an ncnn model, checked under ncnn's rule.

An ncnn model is a ``.param`` text (magic ``7767517``, the layer and blob counts, then one layer a
line: ``type name nbottom ntop bottoms... tops... id=value...``, an array as ``-233NN=n,v1,...``;
Tencent/ncnn src/net.cpp ``load_param``) and a ``.bin`` of weights beside it.  The file holds no
shapes, so each blob's shape comes from, in order:

``ncnn``
    ncnn itself (the ``ncnn`` module installed, the ``.bin`` beside the ``.param`` and a shape
    for every Input): the net is loaded, fed arrays of the ``--input`` shapes, and every blob a
    BinaryOp reads or writes is extracted (in a child process: a garbage BinaryOp reads out of
    bounds); its real Mat shape is the answer.
``input``
    the ``--input NAME=SHAPE`` the user gave for an Input blob;
``hint``
    the shape hint ncnn's own ``load_param`` reads (param 30, ``-23330=4n,dims,w,h,c,...``, four
    ints a top blob, as ncnnoptimize writes them);
``derived``
    bcast's propagation through the layers whose shape effect is plain: Input and MemoryData (their
    w/h/d/c params), Split, element-wise layers (:data:`SAME_SHAPE`), BinaryOp itself (its result,
    or the garbage shape ncnn writes), Reshape with its explicit w/h/d/c (0: the input's, one -1:
    inferred).  Any other layer's outputs are ``unknown``: never guessed.

Shapes are numpy order (``ncnn.Mat(ndarray)`` reads a (c,h,w) array as the blob [w,h,c]); a
finding writes both.  Each BinaryOp pair ncnn cannot do (it returns 0 and garbage) is ``unsupported``;
a pair ncnn computes with another alignment than numpy's broadcast of the same blobs (or that numpy
refuses) is ``differs``; a pair whose shape is not known is ``unknown``.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ..core._format import format_shape
from ..core.errors import BroadcastError, InputError
from ..core.shapes import parse_shape
from ..frameworks.deviations import notes_for
from ..frameworks.ncnn.deviations import NcnnRuntime
from ..frameworks.ncnn.op_types import OP_TYPES
from ..rules import infer
from ..rules.ncnn import NCNN, garbage_shape
from .findings import Finding, Report
from ._files import open_regular

__all__ = ["MAGIC", "MAX_BYTES", "MAX_LAYERS", "Layer", "ParamReport", "format_report", "lint_param", "parse_inputs",
           "read_param", "run_blobs"]

MAGIC = "7767517"
#: A .param is text: more than this is not one bcast reads (ncnn's largest real models are ~100 KB).
MAX_BYTES = 64 << 20
#: Layers, and blobs, a .param may declare.
MAX_LAYERS = 1_000_000
#: The elements bcast feeds ncnn at most, all Inputs together (float32: 256 MiB).
MAX_FED = 1 << 26
#: Layers that output a blob of their (first) input's shape: element-wise activations and the like.
SAME_SHAPE = frozenset((
    "AbsVal", "BNLL", "BatchNorm", "Bias", "Clip", "Dropout", "ELU", "Erf", "Exp", "GELU", "HardSigmoid",
    "HardSwish", "Log", "Mish", "Noop", "Power", "PReLU", "ReLU", "SELU", "Sigmoid", "Softplus", "Swish", "TanH",
    "Threshold", "UnaryOp",
))
_ABSENT = -233  # ncnn's "not given" for Reshape's w/h/d/c


@dataclass(frozen=True)
class Layer:
    """One layer line: its type, name, bottom and top blob names, params (id -> int, float or list)."""

    type: str
    name: str
    bottoms: tuple[str, ...]
    tops: tuple[str, ...]
    params: dict
    line: int


# --------------------------------------------------------------------------- reading


def _read(path: str, what: str, limit: int) -> bytes:
    """A regular file's bytes (at most ``limit``), refused before reading when it is not one."""
    fd, info = open_regular(path)
    problem = f"larger than {limit >> 20} MiB: not {what} bcast reads" if info.st_size > limit else None
    if problem:
        os.close(fd)
        raise InputError(f"{path}: {problem}")
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{path}: the file grew while bcast read it")
    return data


def _number(text: str, where: str):
    """A param value as ncnn's ParamDict reads it: a float when it has '.' or 'e', else an int."""
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        raise InputError(f"{where}: {text!r} is not a number") from None


def _params(tokens: list[str], where: str) -> dict:
    out: dict = {}
    for tok in tokens:
        key, eq, value = tok.partition("=")
        if not eq:
            raise InputError(f"{where}: {tok!r} is not a param (id=value)")
        try:
            pid = int(key)
        except ValueError:
            raise InputError(f"{where}: {tok!r}: the param id {key!r} is not a number") from None
        if value.startswith('"'):  # a string (ncnn's ParamDict type 7: pnnx writes Reshape's "0w,-1" so)
            if len(value) < 2 or not value.endswith('"') or not 0 <= pid < 32:
                raise InputError(f"{where}: {tok[:40]!r} is not a param (a string param is id=\"...\")")
            out[pid] = value[1:-1]
            continue
        if pid <= -23300:  # an array: -23300-id=n,v1,...,vn
            pid = -pid - 23300
            n, *items = value.split(",")
            count = _number(n, where)
            if not isinstance(count, int) or count != len(items):
                raise InputError(f"{where}: array param {tok[:40]!r} says {n} values and has {len(items)}")
            val: object = [_number(v, where) for v in items]
        else:
            val = _number(value, where)
        if not 0 <= pid < 32:
            raise InputError(f"{where}: param id {key} out of ncnn's range (0-31, arrays -23300 to -23331)")
        out[pid] = val
    return out


def _count(token: str) -> bool:
    """A count as ncnn scans it: ASCII digits (str.isdigit also takes '²')."""
    return token.isascii() and token.isdigit()


def read_param(path: str) -> tuple[str, list[Layer]]:
    """The text and the layers of the ``.param`` at ``path``; a one-line :class:`InputError` for
    anything that is not one (checked as ncnn's ``load_param`` checks it, and bounded)."""
    data = _read(path, "an ncnn .param", MAX_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not an ncnn .param (not text; a binary .param.bin is not read)") from None
    lines = text.splitlines()
    if not lines or lines[0].strip() != MAGIC:
        raise InputError(f"{path}: not an ncnn .param (the first line is not the magic number {MAGIC})")
    head = lines[1].split() if len(lines) > 1 else []
    if len(head) != 2 or not all(_count(h) for h in head):
        raise InputError(f"{path}: line 2 must be the layer and blob counts")
    n_layers, n_blobs = map(int, head)
    if n_layers > MAX_LAYERS or n_blobs > MAX_LAYERS:
        raise InputError(f"{path}: {n_layers} layers, {n_blobs} blobs: more than {MAX_LAYERS} is not a model "
                         "bcast reads")
    layers: list[Layer] = []
    produced: set[str] = set()
    for i, raw in enumerate(lines[2:], start=3):
        tokens = raw.split()
        if not tokens:
            continue
        where = f"{path} line {i}"
        if tokens[0].startswith("pnnx."):
            raise InputError(f"{where}: a {tokens[0]} layer: this is pnnx's own graph (.pnnx.param), not an ncnn "
                             "model; lint the .ncnn.param pnnx wrote beside it")
        if len(tokens) < 4 or not _count(tokens[2]) or not _count(tokens[3]):
            raise InputError(f"{where}: a layer is 'type name nbottom ntop bottoms... tops... params'")
        nb, nt = int(tokens[2]), int(tokens[3])
        if 4 + nb + nt > len(tokens):
            raise InputError(f"{where}: {nb} bottoms and {nt} tops declared, {len(tokens) - 4} names given")
        names = tokens[4:4 + nb + nt]
        if any(len(n) > 255 for n in (tokens[1], *names)):
            raise InputError(f"{where}: a name longer than ncnn's 255 characters")
        tops = tuple(names[nb:])
        again = [t for t in tops if t in produced]
        if again:
            raise InputError(f"{where}: blob {again[0]!r} is produced twice")
        produced.update(tops)
        layers.append(Layer(tokens[0], tokens[1], tuple(names[:nb]), tops, _params(tokens[4 + nb + nt:], where), i))
    if len(layers) != n_layers:
        raise InputError(f"{path}: line 2 declares {n_layers} layers, the file has {len(layers)}")
    return text, layers


def parse_inputs(items, layers: list[Layer]) -> dict[str, tuple[int, ...]]:
    """``--input NAME=SHAPE`` values -> {Input blob name: shape}; a one-line error naming what is wrong."""
    inputs = {t for layer in layers if layer.type == "Input" for t in layer.tops}
    out: dict[str, tuple[int, ...]] = {}
    for item in items or ():
        name, eq, text = str(item).partition("=")
        if not eq or not name:
            raise InputError(f"--input {item!r}: write NAME=SHAPE, e.g. in0=1,3,224,224")
        if name not in inputs:
            raise InputError(f"--input {item!r}: {name!r} is not an Input blob of the model (they are: "
                             f"{', '.join(sorted(inputs)) or 'none'})")
        shape = parse_shape(text)
        if not 1 <= len(shape) <= 4 or not all(type(d) is int and d > 0 for d in shape):
            raise InputError(f"--input {item!r}: an ncnn blob has rank 1 to 4 and static dims of 1 or more "
                             "(numpy order, as ncnn.Mat(ndarray) reads it)")
        out[name] = tuple(int(d) for d in shape)  # type: ignore[arg-type]  # static ints, checked above
    return out


# --------------------------------------------------------------------------- shapes


def _whdc(params: dict, absent: int) -> tuple:
    return tuple(params.get(k, absent) for k in (0, 1, 11, 2))


def _positive(shape: tuple | None) -> tuple | None:
    """The shape if every dim is an int of 1 or more (anything else in a file is not a shape: unknown)."""
    ok = shape is not None and all(type(d) is int and d > 0 for d in shape)
    return shape if ok else None


def _from_whdc(w, h, d, c) -> tuple | None:
    """numpy order of the blob of ncnn dims w/h/d/c (0: absent), as MemoryData and Input make it."""
    return _positive(_whdc_shape(w, h, d, c))


def _whdc_shape(w, h, d, c) -> tuple | None:
    if d:
        return (c, d, h, w)
    if c:
        return (c, h, w)
    if h:
        return (h, w)
    return (w,) if w else None


def _reshape(params: dict, src: tuple | None) -> tuple | None:
    """ncnn's Reshape (permute=0) with explicit w/h/d/c: 0 takes the input's dim, one -1 is inferred."""
    if params.get(3, 0):
        return None
    w, h, d, c = _whdc(params, _ABSENT)
    keys = "w" if h == _ABSENT else "wh" if c == _ABSENT else "whc" if d == _ABSENT else "whdc"
    dims = [{"w": w, "h": h, "d": d, "c": c}[k] for k in keys]
    if _ABSENT in dims or any(v < -1 for v in dims) or dims.count(-1) > 1:
        return None
    if any(v in (0, -1) for v in dims):
        if src is None:
            return None
        have = dict(zip("cdhw"[4 - len(src):] if len(src) == 4 else ("w", "hw", "chw")[len(src) - 1], src))
        dims = [have.get(k, 1) if v == 0 else v for k, v in zip(keys, dims)]
        if -1 in dims:
            total, rest = int(np.prod(src)), int(np.prod([v for v in dims if v != -1]))
            if rest <= 0 or total % rest:
                return None
            dims[dims.index(-1)] = total // rest
    return _positive(tuple(dims[::-1]))


def _binary(layer: Layer) -> bool:
    return layer.type == "BinaryOp" and len(layer.bottoms) == 2 and not layer.params.get(1, 0)


def _derive(layers: list[Layer], given: dict) -> dict[str, tuple[tuple | None, str]]:
    """blob -> (shape or None, where it came from), by the ``input``/``hint``/``derived`` paths."""
    shapes: dict[str, tuple[tuple | None, str]] = {}

    def get(name):
        return shapes.get(name, (None, "unknown"))[0]

    for layer in layers:
        hint = layer.params.get(30)
        outs: list = [None] * len(layer.tops)
        origin = "derived"
        if layer.type == "Input" and layer.tops and layer.tops[0] in given:
            outs[0], origin = given[layer.tops[0]], "input"
        elif layer.type in ("Input", "MemoryData"):
            outs[0] = _from_whdc(*_whdc(layer.params, 0)) if layer.tops else None
        elif layer.type == "Split" and layer.bottoms:
            outs = [get(layer.bottoms[0])] * len(layer.tops)
        elif (layer.type in SAME_SHAPE or layer.type == "BinaryOp" and not _binary(layer)) and layer.bottoms:
            outs[:1] = [get(layer.bottoms[0])]
        elif layer.type == "Reshape" and layer.bottoms:
            outs[:1] = [_reshape(layer.params, get(layer.bottoms[0]))]
        elif _binary(layer):
            a, b = map(get, layer.bottoms)
            if a is not None and b is not None:
                outs[:1] = [_check(layer, a, b)[1]]
        if isinstance(hint, list) and len(hint) == 4 * len(layer.tops) and origin != "input":
            for j in range(len(layer.tops)):
                dims, w, h, c = hint[4 * j:4 * j + 4]
                if dims in (1, 2, 3):
                    outs[j], origin = _positive(((w,), (h, w), (c, h, w))[dims - 1]), "hint"
        for t, s in zip(layer.tops, outs):
            shapes[t] = (s, origin if s is not None else "unknown")
    return shapes


# --------------------------------------------------------------------------- ncnn itself, in a child process


#: The child's program: numpy and ncnn only (no bcast import: it starts fast).  Set as every ncnn run of
#: bcast is (bcast.frameworks.ncnn.oracle): fp32 kernels, no packing, one thread.
_CHILD = """
import pickle, sys
import numpy as np
import ncnn
text, bin_path, feeds, names, values = pickle.load(sys.stdin.buffer)
net = ncnn.Net()
opt = net.opt
opt.use_packing_layout = False
opt.num_threads = 1
opt.use_fp16_storage = opt.use_fp16_packed = opt.use_fp16_arithmetic = False
opt.use_bf16_storage = False
out = {}
if net.load_param_mem(text) == 0 and net.load_model(bin_path) == 0:
    ex = net.create_extractor()
    for k, v in feeds.items():
        ex.input(k, ncnn.Mat(v).clone())
    for name in names:
        ret, mat = ex.extract(name)
        if ret == 0:
            arr = np.array(mat).copy()
            out[name] = arr if values else arr.shape
pickle.dump(out, sys.stdout.buffer)
sys.stdout.buffer.flush()
"""


def _limit_memory(budget: int) -> None:  # pragma: no cover (runs in the child, before exec)
    """The child's address space: the memory budget and 2 GiB for Python, numpy and ncnn (a .param's
    MemoryData or Reshape may ask for anything: ncnn's allocation fails, the child dies, bcast says so)."""
    try:
        import resource

        limit = budget + (2 << 30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass



def run_blobs(param_text: str, bin_path: str, feeds: dict, names: list[str], *, values: bool = False,
              timeout: float = 120) -> dict:
    """Run ncnn on the net (``param_text``, the weights at ``bin_path``) fed ``feeds`` (name -> array) and
    extract ``names`` in a child process: name -> numpy shape of its Mat (with ``values``: the array);
    a blob ncnn did not produce is left out.  :class:`RuntimeError` when the child dies."""
    from ..run._budget import memory_budget

    job = pickle.dumps((param_text, bin_path, {k: np.ascontiguousarray(v, np.float32) for k, v in feeds.items()},
                        list(names), values))
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD], input=job, capture_output=True, timeout=timeout,
                              env=dict(os.environ, OMP_NUM_THREADS="1"),
                              preexec_fn=partial(_limit_memory, memory_budget()) if os.name == "posix" else None)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"ncnn did not finish in {timeout} s") from None
    if proc.returncode != 0:
        raise RuntimeError(f"ncnn's process died (exit status {proc.returncode})")
    try:
        return pickle.load(io.BytesIO(proc.stdout))
    except Exception:
        raise RuntimeError("ncnn's process wrote no result") from None


# --------------------------------------------------------------------------- the checks


def _check(layer: Layer, a: tuple, b: tuple):
    """(the BroadcastError or the plan of ncnn's rule, the shape ncnn outputs or None)."""
    try:
        plan = infer(a, b, rule="ncnn", names=("A", "B"))
    except BroadcastError as e:
        if e.kind == "dims" and e.alignment is not None:
            return e, garbage_shape(e.shapes, e.alignment, e.out_rank)
        return e, None
    return plan, plan.shape


def _both(shape: tuple) -> str:
    return f"{format_shape(shape)} ({NCNN.shape(shape)} as w,h,d,c)"


_ORIGIN = {"ncnn": "ncnn's run of the model", "input": "--input", "hint": "the .param's shape hints",
           "derived": "bcast's propagation", "unknown": "unknown"}


def _finding(layer: Layer, shapes: dict) -> Finding | None:
    code = layer.params.get(0, 0)
    op = OP_TYPES[code] if isinstance(code, int) and 0 <= code < len(OP_TYPES) else None
    (a, oa), (b, ob) = (shapes.get(n, (None, "unknown")) for n in layer.bottoms)
    origins = sorted({_ORIGIN[o] for o in (oa, ob)})
    src = f" (shapes from {' and '.join(origins)})"

    def make(kind, out, reason, fix, notes=()):
        return Finding(layer.name, f"BinaryOp {op or code}", 0, layer.bottoms, (a, b), layer.tops[0] if layer.tops
                       else "", out, kind, "ncnn", "ncnn", reason + src, fix, tuple(notes), (layer.name,))

    if op is None:
        return make("invalid", None, f"op_type {code!r} is not one of ncnn's 0-{len(OP_TYPES) - 1}",
                    "write a BinaryOp op_type ncnn has")
    if a is None or b is None:
        missing = list(dict.fromkeys(n for n, s in zip(layer.bottoms, (a, b)) if s is None))
        return make("unknown", None, f"the shape of {', '.join(map(repr, missing))} is not known: the BinaryOp "
                    "cannot be checked", "give every Input's shape (--input NAME=SHAPE), and install ncnn with the "
                    ".bin beside the .param so that bcast runs it")
    result, out = _check(layer, a, b)
    names = f"A = {layer.bottoms[0]} {_both(a)} and B = {layer.bottoms[1]} {_both(b)}"
    runtimes = tuple(NcnnRuntime)
    if isinstance(result, BroadcastError):
        notes = [n for n in notes_for(result, op) if n.deviation.runtime in runtimes]
        garbage = f" ({NCNN.shape(out)} as w,h,d,c)" if out is not None else ""
        return make("unsupported", out, f"ncnn's BinaryOp {op} on {names}: {result.reason}{garbage}",
                    "Reshape the blobs so that ncnn's rule holds (equal ranks, dims equal or 1)", notes)
    try:
        numpy_plan = infer(a, b, rule="numpy")
    except BroadcastError:
        numpy_plan = None
    moved = [] if numpy_plan is None else [i for i in (0, 1) if numpy_plan.aligned_shape(i) != result.aligned_shape(i)]
    if numpy_plan is None or moved:
        how = ("numpy cannot broadcast them" if numpy_plan is None else
               "; ".join(f"ncnn reads {'AB'[i]} as {format_shape(result.aligned_shape(i))}, numpy as "
                         f"{format_shape(numpy_plan.aligned_shape(i))}" for i in moved))
        notes = [n for n in notes_for(result, op) if n.deviation.runtime in runtimes]
        return make("differs", out, f"ncnn's BinaryOp {op} on {names} aligns them otherwise than numpy's broadcast "
                    f"of the same blobs ({how}): it computes {op} on other elements. Right if the model means "
                    "ncnn's alignment (pnnx writes a per-channel vector so: an SE gate of (C,) on (C,H,W)), wrong if "
                    "it means numpy's (advisory: a .param does not say which)",
                    "if numpy's alignment is meant, Reshape the lower-rank blob to the higher rank, 1s where numpy "
                    "puts them", notes)
    return None


@dataclass
class ParamReport(Report):
    """A lint run on a .param: :class:`Report`, and where the blob shapes came from."""

    shapes_from: str = ""
    layers: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No finding that says ncnn computes garbage or cannot be checked: ``differs`` (ncnn's own alignment,
        which a .param may mean: pnnx writes per-channel vectors so) and ``values`` are advisory here."""
        return all(f.kind in ("differs", "values") for f in self.findings)

    def to_dict(self, model: str | None = None) -> dict:
        d = super().to_dict(model)
        d.pop("opset")
        return {**d, "format": "ncnn .param", "shapes_from": self.shapes_from}


def lint_param(path, inputs=(), target: str | None = None, *, run_ncnn: bool = True) -> ParamReport:
    """Lint the ncnn model at ``path`` (a ``.param``; its ``.bin`` beside it), Input shapes from ``inputs``
    (``NAME=SHAPE`` strings, :func:`parse_inputs`).  ``target``: ncnn (or None); any other is refused.
    ``run_ncnn=False``: the shapes of the other paths only, even where ncnn could run."""
    if target not in (None, "ncnn"):
        raise InputError(f"target {target!r} for an ncnn .param: the target of a .param is ncnn (the runtime the "
                         "model is for); other targets read ONNX models")
    path = os.fspath(path)
    text, layers = read_param(path)
    given = parse_inputs(inputs, layers)
    shapes = _derive(layers, given)
    bin_path = os.path.splitext(path)[0] + ".bin"
    wanted = list(dict.fromkeys(n for layer in layers if _binary(layer) for n in (*layer.bottoms, *layer.tops)))
    ins = [t for layer in layers if layer.type == "Input" for t in layer.tops]
    why_not = None
    if not run_ncnn:
        why_not = "run_ncnn=False"
    elif importlib.util.find_spec("ncnn") is None:
        why_not = "ncnn is not installed"
    elif not os.path.isfile(bin_path):
        why_not = f"no {os.path.basename(bin_path)} beside the .param"
    elif any(n not in given for n in ins):
        why_not = "not every Input has a --input shape"
    elif sum(int(np.prod(given[n])) for n in ins) > MAX_FED:
        why_not = f"the --input shapes hold more than {MAX_FED} elements"
    elif wanted:
        _read(bin_path, "an ncnn .bin", MAX_BYTES * 64)  # a regular file, bounded (ncnn reads it itself)
        rng = np.random.default_rng(0)
        try:
            real = run_blobs(text, bin_path, {n: rng.random(given[n], np.float32) for n in ins}, wanted)
            shapes.update({n: (tuple(s), "ncnn") for n, s in real.items()})
            if not real:
                why_not = "ncnn did not load the model or compute any of its blobs"
        except RuntimeError as e:
            why_not = str(e)
    seen = {o for layer in layers if _binary(layer) for o in (shapes.get(n, (None, "unknown"))[1]
                                                              for n in layer.bottoms)}
    how = ", ".join(sorted(_ORIGIN[o] for o in seen)) or "none needed (no two-blob BinaryOp)"
    if why_not:
        how += f" (ncnn not run: {why_not})"
    report = ParamReport("ncnn", 0, len(layers), 0, shapes_from=how, layers=layers)
    for layer in layers:
        if _binary(layer):
            report.checked += 1
            f = _finding(layer, shapes)
            if f is not None:
                report.findings.append(f)
    return report


def format_report(report: ParamReport, model: str) -> str:
    """The text ``bcast lint`` prints for a .param."""
    head = (f"{model} (ncnn .param, target ncnn, shapes from {report.shapes_from}): checked "
            f"{report.checked} BinaryOp{'' if report.checked == 1 else 's'} of {report.nodes} layers")
    out = [f"{head}: " + (f"{len(report.findings)} finding{'' if len(report.findings) == 1 else 's'}"
                          if report.findings else "ok")]
    for f in report.findings:
        ins = ", ".join(f"{n} {'?' if s is None else format_shape(s)}" for n, s in zip(f.inputs, f.input_shapes))
        out += ["", f"{f.node}: {f.op_type}({ins}) -> {f.output} "
                    f"{'?' if f.output_shape is None else format_shape(f.output_shape)}",
                f"  {f.kind} (ncnn): {f.reason}", f"  fix: {f.fix}"]
        out += [f"  note: {d.deviation.label()} [{d.deviation.id}]: {d.note}" for d in f.deviations]
    return "\n".join(out)


def to_json(report: ParamReport, model: str) -> str:
    return json.dumps(report.to_dict(model), indent=2, ensure_ascii=False)
