"""``bcast lint --layout``: the broadcasts a channels-last conversion breaks (bcast.models.layout).

Each case is one broadcasting node with an activation (a graph input) and a constant (an initializer or
a Constant node).  Its verdict is checked three ways: lint's finding; numpy, on the transposed
activation and the untransposed constant; and TFLite's interpreter (ai-edge-litert), which runs the
node as a converter to NHWC leaves it: it refuses the node exactly where lint says ``unsupported``,
computes other values exactly where lint says ``differs``, and with the constant in the shape lint's
fix gives, computes the original node's values, transposed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

import bcast  # noqa: E402
from bcast import InputError  # noqa: E402
from bcast.models.layout import parse_layout  # noqa: E402
from bcast.models.lint import lint  # noqa: E402

NHWC = (0, 2, 3, 1)

# op, activation shape, constant shape, layout, lint's kind (None: no finding), how the constant is given
CASES = [
    ("Add", (1, 3, 4, 5), (3, 1, 1), "NCHW:NHWC", "unsupported", "init"),  # a conv bias
    ("Mul", (2, 8, 6, 6), (1, 8, 1, 1), "NCHW:NHWC", "unsupported", "init"),  # an SE scale of rank 4
    ("Add", (1, 4, 4, 4), (4, 1, 1), "NCHW:NHWC", "differs", "init"),  # H == W == C: no error, wrong values
    ("Add", (1, 2, 4, 4), (4, 4), "NCHW:NHWC", "unsupported", "init"),  # attention mask (T,T) on (B,H,T,T)
    ("Add", (1, 4, 4, 4), (4, 4), "NCHW:NHWC", "differs", "init"),  # ... with as many heads as T
    ("Add", (1, 2, 3, 4), (3, 4), "NCHW:NHWC", "unsupported", "const"),  # a Constant node's output
    ("Sub", (1, 3, 4, 5), (), "NCHW:NHWC", None, "init"),  # a scalar: every layout
    ("Div", (2, 3, 4, 5), (2, 1, 1, 1), "NCHW:NHWC", None, "init"),  # per batch: N stays in place
    ("Add", (1, 3, 4, 5), (1, 1, 1, 1), "NCHW:NHWC", None, "init"),
    ("Add", (1, 6, 5), (6, 1), "NCW:NWC", "unsupported", "init"),  # 1-D conv bias
    ("Add", (1, 6, 5), (6, 1), "channels-last", "unsupported", "init"),
    ("Add", (1, 2, 3, 4, 5), (2, 1, 1, 1), "channels-last", "unsupported", "init"),  # 3-D conv bias
    ("Add", (1, 2, 3, 4, 5), (2, 1, 1, 1), "NCHW:NHWC", None, "init"),  # no layout of rank 5 given
    ("Max", (1, 3, 4, 5), (5,), "NCHW:NHWC", "unsupported", "init"),  # a row (W,) meets C
    ("Max", (1, 5, 4, 5), (5,), "NCHW:NHWC", "differs", "init"),  # ... of C's size: W meets C
]


def _model(op, act, const, how):
    x = h.make_tensor_value_info("x", T.FLOAT, list(act))
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    rng = np.random.default_rng(len(act) * 10 + len(const))
    value = rng.uniform(1, 2, const).astype(np.float32)
    tensor = nh.from_array(value, "c")
    nodes, inits = [], []
    if how == "const":
        nodes.append(h.make_node("Constant", [], ["c"], value=tensor))
    else:
        inits.append(tensor)
    nodes.append(h.make_node(op, ["x", "c"], ["y"], name="n"))
    g = h.make_graph(nodes, "g", [x], [y], initializer=inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), value


def _perm(layout, rank):
    return parse_layout(layout)[rank].perm


@pytest.mark.parametrize("op,act,const,layout,kind,how", CASES)
def test_lint_layout_verdict(op, act, const, layout, kind, how):
    model, _ = _model(op, act, const, how)
    found = lint(model, layout=layout)
    assert [f.kind for f in found] == ([kind] if kind else [])
    assert lint(model) == []  # without the layout change the node is fine
    assert bcast.lint(model, layout=layout) == found
    if kind:
        perm = _perm(layout, len(act))
        want = tuple(((1,) * (len(act) - len(const)) + const)[k] for k in perm)
        assert f"give c the shape ({','.join(map(str, want))})" in found[0].fix


@pytest.mark.parametrize("op,act,const,layout,kind,how", [c for c in CASES if len(c[1]) == 4])
def test_the_verdict_is_what_numpy_and_tflite_compute(op, act, const, layout, kind, how):
    """The node as the converter leaves it: the activation transposed, the constant not."""
    oracle = pytest.importorskip("bcast.frameworks.tflite.oracle")
    pytest.importorskip("ai_edge_litert")
    from bcast.frameworks._oracle import RuntimeRefused

    perm = _perm(layout, 4)
    _, c = _model(op, act, const, how)
    x = np.random.default_rng(1).uniform(1, 2, act).astype(np.float32)
    f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Max": np.maximum}[op]
    want = np.transpose(f(x, c), perm)
    xt = np.ascontiguousarray(np.transpose(x, perm))
    tfl = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "DIV", "Max": "MAXIMUM"}[op]
    try:
        got = oracle.run(tfl, xt, c)
    except RuntimeRefused:
        got = None
    if kind == "unsupported":
        assert got is None
        with pytest.raises(ValueError):
            np.broadcast_shapes(xt.shape, c.shape)
    elif kind == "differs":
        assert got is not None and got.shape == want.shape and not np.allclose(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6)
    if kind:  # the fix: the constant aligned at rank 4, then permuted
        fixed = np.ascontiguousarray(np.transpose(c.reshape((1,) * (4 - c.ndim) + c.shape), perm))
        np.testing.assert_allclose(oracle.run(tfl, xt, fixed), want, rtol=1e-6)


def test_two_activations_move_together_and_constants_of_other_ranks_are_seen():
    a = h.make_tensor_value_info("a", T.FLOAT, [1, 3, 4, 5])
    b = h.make_tensor_value_info("b", T.FLOAT, [1, 3, 1, 1])
    v = h.make_tensor_value_info("v", T.FLOAT, [5])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    nodes = [h.make_node("Add", ["a", "b"], ["s"], name="both"), h.make_node("Mul", ["s", "v"], ["y"], name="vec")]
    model = h.make_model(h.make_graph(nodes, "g", [a, b, v], [y]), opset_imports=[h.make_opsetid("", 17)])
    found = lint(model, layout="NCHW:NHWC")
    # a graph input of rank 1 is not transposed: the (W,) vector meets C
    assert [(f.node, f.kind) for f in found] == [("vec", "unsupported")]


@pytest.mark.parametrize("text,why", [
    ("NCHW", "is not FROM:TO"), ("NCHW:NHW", "is not FROM:TO"), ("NCHH:NHCH", "each once"),
    ("NCHW:NHWC,NCWH:NWHC", "two layouts of rank 4"), ("", "give FROM:TO"), ("N:N", "is not FROM:TO"),
])
def test_bad_layouts_are_one_line_errors(text, why):
    with pytest.raises(InputError, match=why):
        parse_layout(text)


def test_parse_layout():
    got = parse_layout("nchw:nhwc, NCW:NWC")
    assert {r: (x.text, x.perm) for r, x in got.items()} == {4: ("NCHW:NHWC", NHWC), 3: ("NCW:NWC", (0, 2, 1))}
    assert sorted(parse_layout("channels-last")) == [3, 4, 5]


def test_cli_layout(tmp_path, capsys):
    from bcast.cli import main

    model, _ = _model("Add", (1, 3, 4, 5), (3, 1, 1), "init")
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    assert main(["lint", str(path), "--layout", "NCHW:NHWC"]) == 1
    text = capsys.readouterr().out
    assert "layout NCHW:NHWC" in text and "give c the shape (1,1,1,3)" in text
    assert main(["lint", str(path), "--layout", "NCHW:NHWC", "--json"]) == 1
    assert [f["kind"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["unsupported"]
    assert main(["lint", str(path), "--layout", "NCHW"]) == 2
    assert "--layout: 'NCHW' is not FROM:TO" in capsys.readouterr().err


def test_every_corpus_model_under_channels_last():
    """The conversion corpus (real networks' broadcasts) under channels-last: no error, and each finding is
    one of the two kinds on a node whose constant has a dim other than 1 on an axis the layout moves."""
    import pathlib

    corpus = sorted((pathlib.Path(__file__).parent / "convert_corpus").glob("*.onnx"))
    assert len(corpus) > 100
    flagged = 0
    for path in corpus:
        plain = lint(str(path))
        for f in lint(str(path), layout="channels-last"):
            if f in plain:
                continue  # (the target's own findings: values records)
            assert f.kind in ("unsupported", "differs"), (path.name, f)
            assert "keeps its layout" in f.reason and "give " in f.fix
            flagged += 1
    assert flagged > 0
