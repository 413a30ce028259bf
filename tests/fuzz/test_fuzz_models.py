"""Fuzz: the ONNX model loader, lint and rewrite on damaged and malicious model files.

Bytes: the example models, small generated ones and the onnx wheel's light squeezenet,
truncated, bit-flipped, with bytes inserted, deleted or overwritten, or random bytes.
Structure: a valid small model with one hostile edit (attribute values of the wrong type,
huge or negative; missing, duplicate or cyclic inputs; nodes out of order; unknown ops and
domains; opset 0, negative or huge; dims 2**62, negative, garbage dim_params; tensors whose
dims their data do not fill; Expand/Reshape shapes of 2**62 entries; subgraphs).

Every case runs ``bcast.lint`` for every target and ``bcast.rewrite`` for every target, on
the file: each is a normal result or one :class:`~bcast.core.errors.InputError` line.  The CLI
cases run ``bcast lint`` / ``bcast rewrite`` in-process: exit 0, 1 or 2, one ``error:`` line
for 2, never a traceback, and no file left in the output folder but the model written.
The structured cases also measure the Python heap (tracemalloc): nothing near the size that a
2**62 dim declares is allocated.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import tracemalloc

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from support.fuzz_harness import fuzz, only_documented
from support.onnx_models import REPEATED, add_repeated, light, model

onnx = pytest.importorskip("onnx")
from onnx import AttributeProto, TensorProto, helper, numpy_helper  # noqa: E402

import bcast  # noqa: E402
from bcast.cli import main  # noqa: E402
from bcast.core.errors import InputError  # noqa: E402
from bcast.models.lint import TARGETS as LINT_TARGETS  # noqa: E402
from bcast.models.rewrite import TARGETS as REWRITE_TARGETS  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
#: The Python heap one structured case may take (a 2**62 dim materialized would be far past it).
HEAP_LIMIT = 64 * 2**20


# --------------------------------------------------------------------------- seed models


def _small_models() -> list:
    """Small valid models that reach every part of lint: each broadcasting rule, the legacy forms,
    Expand's shape input, the ncnn batch walk (Transpose, Unsqueeze, Squeeze), a subgraph."""
    w = np.ones((3, 4), np.float32)
    body = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "body", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    cond = np.array(True)
    return [
        model([("Add", ["x", "w"], ["y"])], {"x": [1, 2, 3, 4]}, ["y"], inits={"w": w}),
        model([("Mul", ["x", "w"], ["m"]), ("PRelu", ["m", "s"], ["y"])], {"x": [1, 5, 3, 4]}, ["y"],
              inits={"w": w, "s": np.ones(5, np.float32)}),
        model([("Gemm", ["a", "b", "c"], ["y"], {"transA": 1})], {"a": [3, 2], "b": [3, 4], "c": [4]}, ["y"],
              opset=13),
        model([("Expand", ["x", "s"], ["y"])], {"x": [3, 1]}, ["y"], inits={"s": np.array([2, 3, 4], np.int64)}),
        model([("Reshape", ["x", "s"], ["r"]), ("Where", ["c", "r", "x"], ["y"])], {"x": [2, 6], "c": [2, 1]},
              ["y"], inits={"s": np.array([2, 6], np.int64)}),
        model([("Add", ["a", "b"], ["y"], {"broadcast": 1, "axis": 1})], {"a": [2, 3, 4, 5], "b": [3, 4]}, ["y"],
              opset=6),
        model([("Transpose", ["x"], ["t"], {"perm": [1, 0, 2]}), ("Unsqueeze", ["t"], ["u"], {"axes": [0]}),
               ("Squeeze", ["u"], ["q"], {"axes": [0]}), ("Add", ["q", "w"], ["y"])], {"x": [1, 3, 4]}, ["y"],
              opset=11, inits={"w": w}),
        model([("Sum", ["x", "w", "x"], ["y"]), ("Max", ["y", "w"], ["z"])], {"x": ["N", 3, 4]}, ["z"],
              inits={"w": w}),
        model([helper.make_node("If", ["cond"], ["y"], then_branch=body, else_branch=body),
               ("Add", ["y", "x"], ["z"])], {"x": [2]}, ["z"], inits={"cond": cond}),
        # the README's ncnn-garbage Mul inside an If branch, inside a Loop body; a local function's call;
        # a rank-0 comparison (y.mean() > -100)
        readme_if(nested=True),
        _function_model(),
        model([("ReduceMean", ["x"], ["m"], {"keepdims": 0}), ("Greater", ["m", "c"], ["y"])], {"x": [1, 3]}, ["y"],
              inits={"c": np.float32(-100)}),
    ]


def _function_model():
    fn = helper.make_function("my", "Scale", ["a", "b"], ["o"], [helper.make_node("Mul", ["a", "b"], ["o"])],
                              [helper.make_opsetid("", 17)])
    g = helper.make_graph([helper.make_node("Scale", ["x", "w"], ["y"], domain="my")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, 4, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, 4, 5])],
                          [numpy_helper.from_array(np.ones((4, 5), np.float32), "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("my", 1)],
                             functions=[fn])


from support.onnx_models import readme_if  # noqa: E402

SMALL = _small_models()
SEEDS = [m.SerializeToString() for m in SMALL] + [
    open(os.path.join(EXAMPLES, f), "rb").read() for f in sorted(os.listdir(EXAMPLES)) if f.endswith(".onnx")]
SQUEEZENET = open(light("squeezenet"), "rb").read()


# --------------------------------------------------------------------------- the invariant


def _one_line(e: InputError) -> None:
    text = str(e)
    assert text and len(text.splitlines()) == 1, text
    assert len(text) < 2000, len(text)


def check_model_file(path: str, out_dir: str) -> None:
    """lint for every target, rewrite for every target: a result or one InputError line; rewrite leaves
    nothing in ``out_dir`` but the file it says it wrote."""
    for target in LINT_TARGETS:
        try:
            bcast.lint(path, target)
        except InputError as e:
            _one_line(e)
            return  # the loader refused the file: every other call would refuse it the same way
    for target in REWRITE_TARGETS:
        out = os.path.join(out_dir, f"out_{target}.onnx")
        try:
            report = bcast.rewrite(path, target, out, force=True)
        except InputError as e:
            _one_line(e)
            report = None
        left = set(os.listdir(out_dir))
        assert left <= {f"out_{t}.onnx" for t in REWRITE_TARGETS}, left  # never a temp file
        if report is not None and report.out:
            with only_documented():
                bcast.lint(report.out, "onnx")  # what rewrite wrote is a whole model
        if os.path.exists(out):
            os.unlink(out)


def check_cli(path: str, out_dir: str) -> None:
    """``bcast lint`` and ``bcast rewrite`` on the file: exit 0/1/2, exactly one ``error:`` line for 2."""
    out = os.path.join(out_dir, "cli.onnx")
    for argv in (["lint", path, "--target", "ncnn"], ["lint", path, "--json"],
                 ["rewrite", path, "--target", "onnx", "-o", out, "--force"]):
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(stderr):
            code = main(argv, out=stdout)
        err = stderr.getvalue()
        assert code in (0, 1, 2), (argv, code)
        if code == 2:
            assert err.count("\n") == 1 and err.startswith(f"bcast {argv[0]}: error: "), err
        else:
            assert "Traceback" not in err
        assert set(os.listdir(out_dir)) <= {"cli.onnx"}
    if os.path.exists(out):
        os.unlink(out)


@contextlib.contextmanager
def _folder():
    with tempfile.TemporaryDirectory(prefix="bcast-fuzz-") as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        yield d, out


def _check_bytes(data: bytes, *, cli: bool = False) -> None:
    with _folder() as (d, out):
        path = os.path.join(d, "model.onnx")
        with open(path, "wb") as f:
            f.write(data)
        check_model_file(path, out)
        if cli:
            check_cli(path, out)


# --------------------------------------------------------------------------- byte mutations

seeds = st.sampled_from(SEEDS)


@given(data=st.sampled_from(SEEDS + [SQUEEZENET]), cut=st.floats(0, 1))
@example(data=SEEDS[0], cut=0.0)  # the empty file
@fuzz("model loader (truncation)", examples=100)
def test_truncated(data, cut):
    _check_bytes(data[:int(len(data) * cut)])


def test_truncated_at_every_offset():
    """Every prefix of a small model: refused (or, at the very end, the model)."""
    data = SEEDS[0]
    with _folder() as (d, out):
        path = os.path.join(d, "m.onnx")
        for cut in range(len(data)):
            with open(path, "wb") as f:
                f.write(data[:cut])
            with only_documented():
                bcast.lint(path)


@given(data=seeds, flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 7)), min_size=1,
                                  max_size=8))
@fuzz("model loader (bit flips)", examples=300)
def test_bit_flips(data, flips):
    b = bytearray(data)
    for where, bit in flips:
        b[int(where * len(b))] ^= 1 << bit
    _check_bytes(bytes(b))


_edit = st.tuples(st.sampled_from(["insert", "delete", "set"]), st.floats(0, 1, exclude_max=True),
                  st.integers(0, 255))


@given(data=seeds, edits=st.lists(_edit, min_size=1, max_size=6))
@fuzz("model loader (byte edits)", examples=300)
def test_byte_edits(data, edits):
    b = bytearray(data)
    for kind, where, value in edits:
        i = int(where * len(b))
        if kind == "insert":
            b.insert(i, value)
        elif kind == "delete" and b:
            del b[i]
        elif b:
            b[i] = value
    _check_bytes(bytes(b))


@given(data=st.binary(max_size=400) | st.builds(lambda s, tail: s[:20] + tail, seeds, st.binary(max_size=200)))
@fuzz("model loader (random bytes)", examples=200)
def test_random_bytes(data):
    _check_bytes(data)


@given(data=seeds, flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 7)), max_size=4))
@example(data=SEEDS[3], flips=[(0.6875, 4), (0.125, 7)])  # was: TypeError in lint --json (an output name not UTF-8)
@fuzz("cli lint/rewrite (mutated files)", examples=80)
def test_cli_on_mutated_files(data, flips):
    b = bytearray(data)
    for where, bit in flips:
        b[int(where * len(b))] ^= 1 << bit
    _check_bytes(bytes(b), cli=True)


# --------------------------------------------------------------------------- structured mutations

_HUGE = st.sampled_from([2**62, 2**63 - 1, -1, -(2**62), 0, 1, 65, 10**6])
_INT = st.integers(-(2**63), 2**63 - 1) | _HUGE
_TEXT = st.text(max_size=12) | st.sampled_from(["", "N+1", "\x00", "batch size", "?", "-1", "é" * 40])
_ATTR_NAMES = ["axis", "broadcast", "transA", "transB", "perm", "axes", "alpha", "value", "then_branch",
               "consumed_inputs", "to", "keepdims"]
_DATA_TYPES = [t for t in TensorProto.DataType.values()]


def _value(draw):
    """An attribute value of any type: huge ints, NaN, text, lists, a tensor, a graph."""
    kind = draw(st.sampled_from(["int", "float", "string", "ints", "floats", "strings", "tensor", "graph"]))
    if kind == "int":
        return draw(_INT)
    if kind == "float":
        return draw(st.floats(allow_nan=True, allow_infinity=True))
    if kind == "string":
        return draw(_TEXT).encode("utf-8", "surrogatepass")
    if kind == "ints":
        return draw(st.lists(_INT, min_size=1, max_size=5))
    if kind == "floats":
        return draw(st.lists(st.floats(allow_nan=True), min_size=1, max_size=3))
    if kind == "strings":
        return [t.encode("utf-8", "surrogatepass") for t in draw(st.lists(_TEXT, min_size=1, max_size=3))]
    if kind == "tensor":
        return numpy_helper.from_array(np.arange(draw(st.integers(0, 4)), dtype=np.int64), "t")
    return helper.make_graph([], "empty", [], [])


def _nodes(m, draw):
    return draw(st.integers(0, len(m.graph.node) - 1)) if m.graph.node else None


def mut_attribute(m, draw):
    """Any node gets an attribute of any name and type (wrong types, huge ints, negative axes)."""
    k = _nodes(m, draw)
    if k is None:
        return
    node = m.graph.node[k]
    name = draw(st.sampled_from(_ATTR_NAMES))
    keep = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(keep)
    node.attribute.append(helper.make_attribute(name, _value(draw)))


def mut_attribute_type(m, draw):
    """An attribute keeps its value field but says another type (UNDEFINED, GRAPH...)."""
    attrs = [a for n in m.graph.node for a in n.attribute]
    if attrs:
        a = draw(st.sampled_from(attrs))
        a.type = draw(st.sampled_from(list(AttributeProto.AttributeType.values())))


def mut_inputs(m, draw):
    """A node input renamed: missing, empty, its own output (a cycle), a later node's output, a graph output."""
    k = _nodes(m, draw)
    if k is None or not m.graph.node[k].input:
        return
    node = m.graph.node[k]
    names = [o for n in m.graph.node for o in n.output] + ["missing", "", node.output[0] if node.output else "x"]
    i = draw(st.integers(0, len(node.input) - 1))
    node.input[i] = draw(st.sampled_from(names))
    if draw(st.booleans()):
        node.input.append(draw(st.sampled_from(names)))  # one more input than the op takes


def mut_outputs(m, draw):
    """Duplicate or empty node outputs, a node with none."""
    k = _nodes(m, draw)
    if k is None:
        return
    node = m.graph.node[k]
    choice = draw(st.sampled_from(["dup", "empty", "none", "input"]))
    if choice == "none":
        del node.output[:]
    elif node.output:
        node.output[0] = {"dup": m.graph.node[0].output[0] if m.graph.node[0].output else "y", "empty": "",
                          "input": m.graph.input[0].name if m.graph.input else "x"}[choice]


def mut_order(m, draw):
    """The nodes in another order (not topological)."""
    nodes = list(m.graph.node)
    order = draw(st.permutations(range(len(nodes))))
    del m.graph.node[:]
    m.graph.node.extend(nodes[i] for i in order)


def mut_op(m, draw):
    """Another op type or domain: unknown ops, a broadcasting op with the wrong number of inputs."""
    k = _nodes(m, draw)
    if k is None:
        return
    node = m.graph.node[k]
    node.op_type = draw(st.sampled_from(["Add", "Expand", "Gemm", "PRelu", "Where", "Sum", "Squeeze", "Transpose",
                                         "Unsqueeze", "NoSuchOp", "", "Constant", "If"]))
    node.domain = draw(st.sampled_from(["", "", "ai.onnx", "com.microsoft", "evil.x"]))


def mut_opset(m, draw):
    m.opset_import[0].version = draw(st.sampled_from([0, -1, 1, 5, 6, 7, 99, 2**62, -(2**63)]) | st.integers(-3, 30))
    if draw(st.booleans()):
        m.ir_version = draw(st.sampled_from([0, -1, 3, 11, 2**62]))


def _dim_edit(dim, draw):
    kind = draw(st.sampled_from(["value", "param", "clear"]))
    if kind == "value":
        dim.dim_value = draw(_HUGE)
    elif kind == "param":
        dim.dim_param = draw(_TEXT)
    else:
        dim.Clear()


def mut_dims(m, draw):
    """A graph input/output/value_info dim: 2**62, negative, a garbage dim_param; rank 0 or 100."""
    values = [v for v in (*m.graph.input, *m.graph.output, *m.graph.value_info) if v.type.HasField("tensor_type")]
    if not values:
        return
    v = draw(st.sampled_from(values))
    shape = v.type.tensor_type.shape
    if shape.dim and draw(st.booleans()):
        _dim_edit(shape.dim[draw(st.integers(0, len(shape.dim) - 1))], draw)
    elif draw(st.booleans()):
        for _ in range(draw(st.sampled_from([1, 70, 100]))):
            shape.dim.add().dim_value = 1
    else:
        v.type.tensor_type.ClearField("shape")


def mut_initializer(m, draw):
    """An initializer's dims that its data do not fill (2**62 with no data), another data type, no data."""
    if not m.graph.initializer:
        return
    t = m.graph.initializer[draw(st.integers(0, len(m.graph.initializer) - 1))]
    kind = draw(st.sampled_from(["dims", "type", "nodata", "huge"]))
    if kind in ("dims", "huge"):
        del t.dims[:]
        t.dims.extend(draw(st.lists(_HUGE, max_size=3)) if kind == "dims" else [2**62])
    elif kind == "type":
        t.data_type = draw(st.sampled_from(_DATA_TYPES))
    else:
        t.ClearField("raw_data")


def mut_constant(m, draw):
    """A Constant node (Expand/Reshape's shape) whose declared dims do not match its data, or 2**62 entries."""
    dims = draw(st.sampled_from([[2**62], [4], [0], [2, 2], [-1], [2**31]]))
    t = helper.make_tensor("c", TensorProto.INT64, [2], [2, 3])
    del t.dims[:]
    t.dims.extend(dims)
    shape_user = next((n for n in m.graph.node if n.op_type in ("Expand", "Reshape")), None)
    name = "cshape"
    m.graph.node.insert(0, helper.make_node("Constant", [], [name], value=t))
    if shape_user is not None and len(shape_user.input) > 1:
        shape_user.input[1] = name


def mut_subgraph(m, draw):
    """An If node whose branch is a copy of the model's own graph (outer names, nested subgraph)."""
    body = onnx.GraphProto()
    body.CopyFrom(m.graph)
    cond = helper.make_tensor_value_info("c_if", TensorProto.BOOL, [])
    m.graph.input.append(cond)
    out = m.graph.output[0].name if m.graph.output else "y"
    m.graph.node.append(helper.make_node("If", ["c_if"], [out + "_if"], then_branch=body, else_branch=body))


MUTATIONS = [mut_attribute, mut_attribute_type, mut_inputs, mut_outputs, mut_order, mut_op, mut_opset, mut_dims,
             mut_initializer, mut_constant, mut_subgraph]


@given(base=st.integers(0, len(SMALL) - 1), muts=st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3),
       data=st.data())
@fuzz("model structure (mutations)", examples=250)
def test_structured_mutations(base, muts, data):
    m = onnx.ModelProto()
    m.CopyFrom(SMALL[base])
    for mutate in muts:
        mutate(m, data.draw)
    tracemalloc.start()
    try:
        with _folder() as (d, out):
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            check_model_file(path, out)
            with only_documented():
                bcast.lint(m, "ncnn")  # the ModelProto path too
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < HEAP_LIMIT, f"{peak / 2**20:.0f} MiB on the Python heap"


# --------------------------------------------------------------------------- repeated-field bombs


def _reference_entries(msg) -> tuple:
    """``(fields, nodes)`` of a parsed message, counted as :mod:`bcast.models._size` counts them in the bytes:
    every field once (a declared-packed list once), a message of single values only without its insides."""
    fields = nodes = 0
    for fd, value in msg.ListFields():
        if fd.is_repeated and fd.is_packed:
            fields += 1
            continue
        for item in (value if fd.is_repeated else [value]):
            fields += 1
            m = fd.message_type
            if m is not None and any(c.message_type is not None or c.is_repeated for c in m.fields):
                nodes += m.full_name == "onnx.NodeProto"
                f, n = _reference_entries(item)
                fields, nodes = fields + f, nodes + n
    return fields, nodes


@given(base=st.integers(0, len(SMALL) - 1), muts=st.lists(st.sampled_from(MUTATIONS), max_size=2),
       bombs=st.lists(st.tuples(st.sampled_from(sorted(REPEATED) + ["subgraph_nodes"]), st.integers(0, 400)),
                      min_size=1, max_size=3),
       limit=st.integers(20, 3000), data=st.data())
@fuzz("model repeated-field bombs", examples=150)
def test_repeated_field_bombs(base, muts, bombs, limit, data):
    """A model with repeated fields added (initializers, value_info, dims, attributes, node inputs, functions,
    opset imports, metadata, subgraph nodes...): the count from the bytes is the parsed model's own; under a
    drawn limit, lint refuses it before parsing exactly when it is over, with one line."""
    from bcast.models import _size as _model_size, onnx_model as models

    m = onnx.ModelProto()
    m.CopyFrom(SMALL[base])
    for mutate in muts:
        mutate(m, data.draw)
    for kind, n in bombs:
        add_repeated(m, kind, n)
    raw = m.SerializeToString()
    found = _model_size.count(raw, onnx.ModelProto.DESCRIPTOR, max_entries=10**9, max_nodes=10**9)
    assert (found.entries, found.nodes) == _reference_entries(onnx.ModelProto.FromString(raw))
    saved = models.MAX_ENTRIES, models.MAX_NODES
    models.MAX_ENTRIES, models.MAX_NODES = limit, 10**6
    try:
        with _folder() as (d, out):
            path = os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(raw)
            over = found.entries > limit and len(raw) > limit  # files under the limit's bytes are not walked
            if over:
                with pytest.raises(InputError, match=f"more than {limit:,} fields to parse") as e:
                    bcast.lint(path)
                _one_line(e.value)
            else:
                check_model_file(path, out)
    finally:
        models.MAX_ENTRIES, models.MAX_NODES = saved
