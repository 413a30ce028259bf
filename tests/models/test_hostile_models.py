"""Hostile ONNX models: what bcast refuses with one line before it reads too much, and what it
lints in bounded memory.

Every row of the tables is a hostile case that bcast must refuse (``REFUSED`` counts them for
the report); the absurd-dims cases are linted normally, with the Python heap measured.
"""

from __future__ import annotations

import os
import time
import tracemalloc

import numpy as np
import pytest

from support.onnx_models import REPEATED, add_repeated, model

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import bcast  # noqa: E402
from bcast.models import onnx_model as models  # noqa: E402
from bcast.core.errors import InputError  # noqa: E402
from bcast.run.execute import memory_budget_set  # noqa: E402

HEAP_LIMIT = 64 * 2**20  # a 2**62 dim materialized would be far past it


def refused(path_or_model, match: str = "") -> str:
    with pytest.raises(InputError) as e:
        bcast.lint(path_or_model)
    text = str(e.value)
    assert "\n" not in text and match in text, text
    return text


def _save(m, path) -> str:
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return str(path)


def _add_model():
    return model([("Add", ["x", "w"], ["y"])], {"x": [2, 6]}, ["y"])


# --------------------------------------------------------------------------- external data


def _external(folder, location, *, offset="0", length="24", dims=(6,), name="w"):
    """An Add model whose input ``w`` is external data at ``location``."""
    w = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(dims), data_location=TensorProto.EXTERNAL)
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = w.external_data.add()
            e.key, e.value = k, v
    m = _add_model()
    m.graph.initializer.append(w)
    return _save(m, os.path.join(folder, "m.onnx"))


@pytest.fixture
def folder(tmp_path):
    """``tmp_path/model`` (the model's folder) with data files, links in and out, a FIFO, a sparse file."""
    inner = tmp_path / "model"
    inner.mkdir()
    (tmp_path / "outside.bin").write_bytes(b"\0" * 24)
    (inner / "w.bin").write_bytes(b"\0" * 24)
    (inner / "short.bin").write_bytes(b"\0" * 8)
    (inner / "sub").mkdir()
    os.mkfifo(inner / "fifo")
    os.symlink(tmp_path / "outside.bin", inner / "link_out.bin")
    os.symlink("link_out.bin", inner / "chain_out.bin")  # a chain: link -> link -> outside
    os.symlink("/dev/zero", inner / "zero")
    os.symlink("w.bin", inner / "link_in.bin")
    os.symlink("loop", inner / "loop")
    with open(inner / "sparse.bin", "wb") as f:
        f.truncate(2**40)  # 1 TiB, no disk used
    return inner


EXTERNAL = [  # (location, offset, length, dims), what the message says
    (("../outside.bin",), "leaves the model's folder"),
    (("sub/../../outside.bin",), "leaves the model's folder"),
    (("..\\outside.bin",), "leaves the model's folder"),
    (("/etc/passwd",), "absolute path"),
    (("C:\\weights.bin",), "absolute path"),
    (("\\\\server\\share\\w.bin",), "absolute path"),
    (("link_out.bin",), "symlink out of the model's folder"),
    (("chain_out.bin",), "symlink out of the model's folder"),
    (("zero",), "symlink out of the model's folder"),
    (("link_in.bin",), "symbolic link"),  # onnx refuses every link, even inside the folder
    (("loop",), "no such file"),
    (("sub",), "not a regular file"),
    (("fifo",), "not a regular file"),  # must not block
    (("nothere.bin",), "no such file"),
    (("w.bin\0.txt",), "NUL character"),
    (("",), "names no location"),
    (("short.bin",), "run past the file"),
    (("w.bin", "-1"), "run past the file"),
    (("w.bin", str(2**70), "1"), "run past the file"),
    (("w.bin", "0", str(2**64)), "run past the file"),
    (("w.bin", "0", "-1"), "must be non-negative"),
    (("w.bin", "0x10"), "not integers"),
    (("sparse.bin", "0", None), "over the memory budget"),  # no length: the whole 1 TiB file
    (("sparse.bin", "0", str(2**40)), "over the memory budget"),
    (("sparse.bin", "0", None, (2**62,)), "over the memory budget"),
]


@pytest.mark.parametrize("args, match", EXTERNAL, ids=[repr(a) for a, _ in EXTERNAL])
def test_external_data_refused(folder, args, match):
    location, *rest = args
    kw = dict(zip(("offset", "length", "dims"), rest))
    start = time.perf_counter()
    refused(_external(str(folder), location, **kw), match)
    assert time.perf_counter() - start < 5  # the FIFO did not block, nothing big was read


def test_external_data_over_the_budget_in_total(folder):
    """Two tensors of 400 bytes each under a budget of 600: refused before either is read."""
    (folder / "big.bin").write_bytes(b"\0" * 400)
    path = _external(str(folder), "big.bin", length="400", dims=(2, 50))
    m = onnx.load(path, load_external_data=False)
    extra = onnx.TensorProto()
    extra.CopyFrom(m.graph.initializer[0])
    extra.name = "w2"
    m.graph.initializer.append(extra)
    m.graph.node.append(helper.make_node("Add", ["y", "w2"], ["z"]))
    _save(m, path)
    with memory_budget_set(600):
        refused(path, "its external data (800 B) is over the memory budget of 600 B")
    bcast.lint(path)


def test_external_data_not_loaded_in_a_model_proto(folder):
    m = onnx.load(_external(str(folder), "w.bin"), load_external_data=False)
    refused(m, "external data that are not loaded")


# --------------------------------------------------------------------------- the file itself


def _sparse(path, size):
    with open(path, "wb") as f:
        f.truncate(size)
    return str(path)


FILES = {  # name -> (make it in tmp_path, what the message says)
    "missing": (lambda p: str(p / "nothere.onnx"), "no such file"),
    "empty": (lambda p: _sparse(p / "empty.onnx", 0), "no graph"),
    "folder": (lambda p: str(p), "not a regular file"),
    "fifo": (lambda p: (os.mkfifo(p / "f.onnx"), str(p / "f.onnx"))[1], "not a regular file"),
    "/dev/zero": (lambda p: "/dev/zero", "not a regular file"),
    "symlink to /dev/zero": (lambda p: (os.symlink("/dev/zero", p / "z.onnx"), str(p / "z.onnx"))[1],
                             "not a regular file"),
    "2 GiB sparse": (lambda p: _sparse(p / "big.onnx", 2**31), "protobuf's 2 GiB limit"),
    "1 TiB sparse": (lambda p: _sparse(p / "huge.onnx", 2**40), "protobuf's 2 GiB limit"),
    "NUL in the name": (lambda p: str(p / "a\0b.onnx"), "NUL character"),
}


@pytest.mark.parametrize("name", list(FILES))
def test_files_that_are_not_read(tmp_path, name):
    make, match = FILES[name]
    path = make(tmp_path)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        refused(path, match)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert time.perf_counter() - start < 5 and peak < HEAP_LIMIT


def test_file_over_the_memory_budget_is_not_read(tmp_path):
    path = _sparse(tmp_path / "m.onnx", 2**20)
    with memory_budget_set("64KiB"):
        refused(path, "its 1.0 MiB are over the memory budget of 64.0 KiB")


def test_unreadable_file(tmp_path, monkeypatch):
    path = _save(_add_model(), tmp_path / "m.onnx")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(models.os, "open", denied)  # root reads a mode-000 file: ask the OS to say no
    refused(path, "cannot read it (Permission denied)")


def test_names_that_are_not_utf8(tmp_path):
    """protobuf hands back a string field that is not UTF-8 as bytes (was: TypeError in lint --json)."""
    data = _add_model().SerializeToString().replace(b"\x12\x01y", b"\x12\x01\xf9", 1)  # the node's output "y"
    refused(_save(onnx.ModelProto.FromString(data), tmp_path / "m.onnx"), "not UTF-8 text (b'\\xf9')")



@pytest.mark.parametrize("old, new", [(b"then_branch", b"then\xffbranch"), (b"Scale", b"Sc\xffle")])
def test_subgraph_attribute_and_function_names_that_are_not_utf8(tmp_path, old, new):
    """A finding's path names the attribute that holds a subgraph and the function a node calls: one of them not
    UTF-8 was a TypeError in lint (found by the model fuzzer at 3,000 cases, a bit flip in an If's attribute name)."""
    branch = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "body", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch),
             helper.make_node("Scale", ["y"], ["z"], domain="local")]
    fn = helper.make_function("local", "Scale", ["a"], ["b"], [helper.make_node("Mul", ["a", "a"], ["b"])],
                              [helper.make_opsetid("", 17)])
    g = helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
                          [numpy_helper.from_array(np.array(True), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                          functions=[fn])
    data = m.SerializeToString()
    assert old in data
    head, _, tail = data.rpartition(old)  # the last one: the attribute's name, the function's (not the node's op)
    refused(_save(onnx.ModelProto.FromString(head + new + tail), tmp_path / "m.onnx"), "not UTF-8 text")


# --------------------------------------------------------------------------- node counts and nesting


def _many_nodes(count: int) -> bytes:
    """A model file of ``count`` Relu nodes, written as bytes (a million in a fraction of a second)."""
    node = helper.make_node("Relu", ["x"], ["x"]).SerializeToString()
    one = helper.make_graph([], "g", [], []).SerializeToString()
    field = b"\x0a" + _varint(len(node)) + node
    graph = field * count + one
    head = helper.make_model(helper.make_graph([], "g", [], [])).SerializeToString()
    return head.split(b"\x3a", 1)[0] + b"\x3a" + _varint(len(graph)) + graph


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def test_more_than_max_nodes_refused_before_parsing(tmp_path, monkeypatch):
    """MAX_NODES + 1 nodes (a tenth of the real limit here, for time): counted from the bytes and refused,
    without parsing (~300 bytes a node) or shape inference (~1.1 KB a node)."""
    monkeypatch.setattr(models, "MAX_NODES", models.MAX_NODES // 10)
    path = tmp_path / "many.onnx"
    path.write_bytes(_many_nodes(models.MAX_NODES + 1))
    assert models._count_nodes(path.read_bytes()) == models.MAX_NODES + 1
    tracemalloc.start()
    start = time.perf_counter()
    try:
        refused(str(path), f"more than {models.MAX_NODES:,} nodes")
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 2 * path.stat().st_size + HEAP_LIMIT  # the file's bytes, nothing per node
    assert time.perf_counter() - start < 10


def test_nodes_in_subgraphs_count(monkeypatch):
    monkeypatch.setattr(models, "MAX_NODES", 10)
    body = helper.make_graph([helper.make_node("Relu", ["x"], ["x"])] * 10, "body", [],
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)])
    m = model([helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=body)], {"c": []}, ["y"])
    refused(m, "more than 10 nodes")


def _delimited(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def test_deep_nesting_is_refused_by_the_parser(tmp_path):
    """If nodes nested 200 deep (written as bytes: onnx's helpers cannot make it): protobuf's depth limit
    refuses the file with one line; nothing in bcast recurses."""
    graph = b""
    for _ in range(200):
        attr = _delimited(1, b"then_branch") + _delimited(6, graph) + b"\xa0\x01\x05"  # name, g, type GRAPH
        graph = _delimited(1, b"\x22\x02If" + _delimited(5, attr))  # GraphProto.node: op_type If, the attribute
    data = b"\x08\x08" + _delimited(7, graph) + _delimited(8, b"\x10\x11")  # ir 8, the graph, opset 17
    path = tmp_path / "deep.onnx"
    path.write_bytes(data)
    refused(str(path), "not an ONNX model")


def test_a_chain_of_nodes_lints_in_linear_time(tmp_path):
    """A bounded version of the million-node measurement (benchmarks/many_nodes.py has the full one)."""
    nodes = [helper.make_node("Add", [f"v{i}", "x"], [f"v{i + 1}"]) for i in range(3000)]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1, 4]),
                                           helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("v3000", TensorProto.FLOAT, None)])
    path = _save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "chain.onnx")
    start = time.perf_counter()
    report = bcast.models.lint.lint_report(path)
    assert (report.nodes, report.checked, report.findings) == (3000, 3000, [])
    assert time.perf_counter() - start < 5


# --------------------------------------------------------------------------- absurd dims, linted in bounded memory


def _expand(shape_init=None, *, const=None):
    m = model([("Expand", ["x", "s"], ["y"])], {"x": [2, 1]}, ["y"], inits={"s": np.array([2, 3], np.int64)})
    if shape_init is not None:
        del m.graph.initializer[0].dims[:]
        m.graph.initializer[0].dims.extend(shape_init)
    if const is not None:
        del m.graph.initializer[:]
        t = helper.make_tensor("c", TensorProto.INT64, [2], [2, 3])
        del t.dims[:]
        t.dims.extend(const)
        m.graph.node.insert(0, helper.make_node("Constant", [], ["s"], value=t))
    return m


def _dims(where, value):
    m = _add_model()
    m.graph.initializer.append(numpy_helper.from_array(np.ones(6, np.float32), "w"))
    if where == "input":
        m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = value
    elif where == "value_info":
        m.graph.value_info.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, [value, 6]))
    else:  # an initializer that declares 2**62 elements and holds 6 floats, or none
        init = m.graph.initializer[0]
        init.dims[0] = value
        if where == "initializer without data":
            init.ClearField("raw_data")
    return m


ABSURD = {
    "input dim 2**62": (_dims("input", 2**62), None),
    "input dim -7": (_dims("input", -7), None),
    "value_info dim 2**62": (_dims("value_info", 2**62), None),
    "initializer of 2**62 elements, no data": (_dims("initializer without data", 2**62), "invalid"),
    "initializer of 2**62 elements, 6 floats": (_dims("initializer", 2**62), "invalid"),
    "initializer dim -6": (_dims("initializer", -6), "invalid"),
    "Expand shape 2**62": (model([("Expand", ["x", "s"], ["y"])], {"x": [2, 1]}, ["y"],
                                 inits={"s": np.array([2**62, 3], np.int64)}), "invalid"),
    # was: ValueError from numpy_helper.to_array (dims that the data do not fill)
    "Expand shape initializer dims (2**62,)": (_expand([2**62]), "invalid"),
    "Expand shape initializer dims (4,) of 2 values": (_expand([4]), "unproven"),  # 4 unknown dims
    # was: MemoryError ((UNKNOWN,) * 2**62: onnx infers a shape input of 2**62 entries)
    "Expand shape Constant dims (2**62,)": (_expand(const=[2**62]), "invalid"),
    "Expand shape Constant dims (2**31,)": (_expand(const=[2**31]), "invalid"),
}


@pytest.mark.parametrize("name", list(ABSURD))
def test_absurd_dims_are_linted_in_bounded_memory(name):
    m, kind = ABSURD[name]
    tracemalloc.start()
    try:
        for target in bcast.models.lint.TARGETS:
            findings = bcast.lint(m, target)
            if target == "onnx2ncnn" and not kind and findings:  # a computed axis 0 of 2**62: no batch of 1
                assert "takes axis 0 of every computed tensor" in findings[0].reason, findings
                continue
            assert [f.kind for f in findings][:1] == ([kind] if kind else []), (target, findings)
        bcast.rewrite(m, "ncnn")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < HEAP_LIMIT


def test_the_invalid_shape_input_says_why():
    (f,) = bcast.lint(_expand(const=[2**62]))
    assert f.reason == "shape input 's' has 4611686018427387904 entries: a rank of more than 64"


# --------------------------------------------------------------------------- the count for the report

REFUSED = len(EXTERNAL) + 2 + len(FILES) + 1 + 1 + 1 + 1 + 1 + 1  # every refused case above


# --------------------------------------------------------------------------- repeated fields (MAX_ENTRIES)

#: the lowered limit these tests run under (the real one is 10,000,000: a few MiB of hostile bytes each)
ENTRIES = 2000


def _bomb(kind: str, n: int) -> bytes:
    """A valid model (Relu x -> y) with ``n`` of one repeated field, serialized."""
    m = model([("Relu", ["x"], ["y"])], {"x": [2, 3]}, ["y"])
    add_repeated(m, kind, n)
    return m.SerializeToString()


BOMBS = REPEATED  # kind -> the field the error names


@pytest.mark.parametrize("kind", sorted(BOMBS))
def test_repeated_field_bombs_refused_before_parsing(tmp_path, monkeypatch, kind):
    """Each repeated field that parsing and lint pay for, over a lowered limit: refused with one line naming
    the field, from the bytes (the file is cut short: the parser would call it "not an ONNX model")."""
    monkeypatch.setattr(models, "MAX_ENTRIES", ENTRIES)
    data = _bomb(kind, ENTRIES)
    path = tmp_path / "bomb.onnx"
    path.write_bytes(data[:-1])
    text = refused(str(path), f"more than {ENTRIES:,} fields to parse")
    assert "bcast.models.onnx_model.MAX_ENTRIES" in text and BOMBS[kind] in text, text
    few = tmp_path / "few.onnx"  # a tenth of it is a model like any other
    few.write_bytes(_bomb(kind, ENTRIES // 20))
    assert isinstance(bcast.lint(str(few)), list)


def test_nodes_in_subgraphs_counted_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "MAX_NODES", 500)
    path = tmp_path / "sub.onnx"
    path.write_bytes(_bomb("subgraph_nodes", 300)[:-1])  # 600 nodes in the If's branches, the main graph's 2
    refused(str(path), "more than 500 nodes")
    assert models._count_nodes(_bomb("subgraph_nodes", 300)) == 501  # stopped past the limit


def test_numbers_written_packed_count_one_each(tmp_path, monkeypatch):
    """``dims`` is not declared packed, yet parsers take it packed (a byte a number): counted one each."""
    monkeypatch.setattr(models, "MAX_ENTRIES", ENTRIES)
    t = _delimited(1, b"\x01" * (ENTRIES + 10)) + b"\x10\x01" + _delimited(8, b"w")  # dims packed, FLOAT, "w"
    data = _bomb("initializers", 0) + _delimited(7, _delimited(5, t))  # a second graph field: protobuf merges it
    path = tmp_path / "packed.onnx"
    path.write_bytes(data)
    assert len(onnx.ModelProto.FromString(data).graph.initializer[0].dims) == ENTRIES + 10
    refused(str(path), "the most: TensorProto.dims (2,010)")


def test_the_walk_stops_at_the_limit(monkeypatch):
    """Counting a file ten times over the limit costs the limit's worth: the walk stops there."""
    from bcast.models import _size as _model_size

    data = _bomb("value_info", 10 * ENTRIES)
    full = _model_size.count(data, onnx.ModelProto.DESCRIPTOR, max_entries=10**9, max_nodes=10**9)
    cut = _model_size.count(data, onnx.ModelProto.DESCRIPTOR, max_entries=ENTRIES, max_nodes=10**9)
    assert cut.over and cut.entries == ENTRIES + 1 and not full.over and full.entries > 10 * ENTRIES
    assert full.by_field["GraphProto.value_info"] == 10 * ENTRIES and full.nodes == 1


def test_small_files_are_not_walked(monkeypatch):
    """A file of fewer bytes than the limits cannot pass them (a field takes a byte, a node two)."""
    from bcast.models import _size as _model_size

    def walked(*args, **kwargs):
        raise AssertionError("walked")

    monkeypatch.setattr(_model_size, "count", walked)
    assert models._count(_bomb("value_info", 10)).entries == 0
