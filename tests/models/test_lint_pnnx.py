"""bcast.frameworks.ncnn.lint_pnnx: pnnx's batch axis and its verdicts on hand-built models (no converter
needed; the corpus test, test_convert_corpus.py, checks them against real conversions)."""

import math

import numpy as np
import pytest

pytest.importorskip("onnx")

from support.onnx_models import model  # noqa: E402

from bcast import lint  # noqa: E402
from bcast.frameworks.ncnn.lint_pnnx import solve_batch  # noqa: E402
from bcast.models.onnx_model import Shapes  # noqa: E402

W = np.float32


def _batch(m):
    return solve_batch(m, Shapes(m))


def test_no_batched_layer_no_batch_axis():
    m = model([("MatMul", ["x", "w"], ["y"]), ("Add", ["y", "b"], ["z"])], {"x": [2, 8, 8]}, ["z"],
              inits={"w": np.ones((8, 8), W), "b": np.ones((8, 8), W)})
    assert _batch(m) == {}  # pnnx's 233: the blob is the whole (2,8,8) tensor
    assert lint(m, "ncnn") == []


def test_conv_gives_batch_axis_0_forward_and_backward_transpose_moves_it():
    m = model([("Relu", ["x"], ["r"]), ("Conv", ["r", "k"], ["c"]), ("Transpose", ["c"], ["t"], {"perm": [2, 0, 1, 3]}),
               ("ReduceMean", ["t"], ["v"], {"axes": [-1], "keepdims": 0})],
              {"x": [2, 3, 4, 4]}, ["v"], inits={"k": np.ones((5, 3, 1, 1), W)})
    b = _batch(m)
    assert (b["x"], b["r"], b["c"], b["t"], b["v"]) == (0, 0, 0, 1, 1)


def test_one_d_tensors_have_none():
    m = model([("Conv", ["x", "k"], ["c"]), ("Flatten", ["c"], ["f"], {"axis": 0}), ("Squeeze", ["f"], ["s"], {})],
              {"x": [1, 2, 1, 1]}, ["s"], opset=11, inits={"k": np.ones((3, 2, 1, 1), W)})
    assert "s" not in _batch(m)


def test_reduction_over_the_batch_axis_only_when_the_batch_is_larger_than_1():
    for batch, found in ((1, 0), (3, 1)):
        m = model([("Conv", ["x", "k"], ["c"]), ("ReduceMean", ["c"], ["m"], {"axes": [0], "keepdims": 1}),
                   ("Sqrt", ["m"], ["r"]), ("Sub", ["c", "r"], ["y"])], {"x": [batch, 2, 3, 3]}, ["y"],
                  inits={"k": np.ones((2, 2, 1, 1), W)})
        f = lint(m, "ncnn")
        assert len(f) == found and all("ReduceMean" in x.reason and "over the batch axis" in x.reason for x in f)


def test_batch_1_input_against_the_batch_is_fine():
    # ncnn's batched Mat broadcasts an operand of batch 1 (a FiLM style vector shared by the batch)
    m = model([("Conv", ["x", "k"], ["c"]), ("Mul", ["c", "s"], ["y"])], {"x": [2, 2, 3, 3], "s": [1, 2, 1, 1]}, ["y"],
              inits={"k": np.ones((2, 2, 1, 1), W)})
    assert _batch(m)["s"] == 0 and lint(m, "ncnn") == []


def test_constant_varying_along_the_batch_axis():
    m = model([("Conv", ["x", "k"], ["c"]), ("Add", ["c", "w"], ["y"])], {"x": [2, 2, 3, 3]}, ["y"],
              inits={"k": np.ones((2, 2, 1, 1), W), "w": np.ones((2, 2, 3, 3), W)})
    (f,) = lint(m, "ncnn")
    assert f.kind == "unsupported" and "varies along" in f.reason


def test_pow_square_and_positive_bases_are_fine():
    def pow_model(producer, e):
        return model([(producer, ["x"], ["p"]), ("Pow", ["p", "e"], ["y"])], {"x": [1, 4]}, ["y"],
                     inits={"e": np.array(e, W)})

    assert lint(pow_model("Relu", 2.0), "ncnn") == []  # UnaryOp square
    assert lint(pow_model("Sigmoid", 3.0), "ncnn") == []  # base > 0
    assert [f.kind for f in lint(pow_model("Relu", 3.0), "ncnn")] == ["differs"]  # Relu gives 0: POW's garbage
    assert "none that bcast knows" in lint(pow_model("Relu", 0.5), "ncnn")[0].fix


def test_prelu_per_channel_slope_is_fine_nhwc_is_not():
    def prelu(shape, slope):
        return model([("PRelu", ["x", "s"], ["y"])], {"x": shape}, ["y"], inits={"s": np.ones(slope, W)})

    assert lint(prelu([1, 3, 4, 4], (3, 1, 1)), "ncnn") == []
    assert lint(prelu([1, 3, 4, 4], (1,)), "ncnn") == []
    assert [f.kind for f in lint(prelu([1, 4, 4, 3], (3,)), "ncnn")] == ["differs"]


def test_comparison_has_no_ncnn_layer_rank_0_included():
    m = model([("ReduceMean", ["x"], ["m"], {"keepdims": 0}), ("Greater", ["m", "t"], ["y"])], {"x": [2, 3]}, ["y"],
              inits={"t": np.array(-100, W)})
    (f,) = lint(m, "ncnn")
    assert f.kind == "unsupported" and "torch.gt" in f.reason


def _if_model(cond_const: bool, outer_init: bool):
    from onnx import TensorProto as T
    from onnx import helper as h

    shape = [1, 3, 2, 2]
    w = "w" if outer_init else "wl"
    then_nodes = [] if outer_init else [h.make_node("Constant", [], ["wl"], value_float=2.0)]
    then_g = h.make_graph(then_nodes + [h.make_node("Mul", ["x", w], ["t"])], "then", [],
                          [h.make_tensor_value_info("t", T.FLOAT, shape)])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"])], "else", [],
                          [h.make_tensor_value_info("e", T.FLOAT, shape)])
    nodes = [] if cond_const else [("Cast", ["x0"], ["flag"], {"to": T.BOOL})]
    inits = {"w": np.ones((3, 1, 1), W)}
    if cond_const:
        inits["flag"] = np.array(True)
    m = model(nodes, {"x": shape, **({} if cond_const else {"x0": []})}, [], inits=inits)
    m.graph.node.append(h.make_node("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g))
    m.graph.output.append(h.make_tensor_value_info("y", T.FLOAT, shape))
    return m


def test_if_that_pnnx_cannot_inline_is_a_finding():
    assert lint(_if_model(True, False), "ncnn") == []
    (f,) = lint(_if_model(True, True), "ncnn")
    assert f.op_type == "If" and f.kind == "unsupported" and "initializers (w)" in f.reason
    (f,) = lint(_if_model(False, False), "ncnn")
    assert "condition is computed" in f.reason
    assert lint(_if_model(False, False), "onnx") == []


def test_loop_is_a_finding():
    import os

    from support import convert_harness as H

    (f,) = lint(os.path.join(H.CORPUS, "loop_refine_b1.onnx"), "ncnn")
    assert f.op_type == "Loop" and f.kind == "unsupported" and "Loop layer" in f.reason


def test_lazy_batch_solve_gives_the_full_solves_verdicts(monkeypatch):
    """Context.binary_batch skips the graph solve where the verdict cannot depend on it: same findings as
    with the solve forced, on the corpus and the light model zoo."""
    import glob
    import os

    from support import convert_harness as H
    from support import onnx_models as OM

    from bcast.frameworks.ncnn import lint_pnnx

    paths = H.corpus() + sorted(glob.glob(os.path.join(OM.LIGHT, "light_*.onnx")))
    lazy = [[f.to_dict() for f in lint(p, "ncnn")] for p in paths]
    from bcast.models import lint as linter

    monkeypatch.setattr(lint_pnnx.Context, "binary_batch",
                        lambda self, site: tuple(self.batch.get(n) for n in site.inputs))
    monkeypatch.setattr(linter, "_CHECKS", linter.BoundedCache())
    assert [[f.to_dict() for f in lint(p, "ncnn")] for p in paths] == lazy


@pytest.mark.parametrize("attrs, b", [({}, [1, 3, 4, 5]), ({"broadcast": 1, "axis": 1}, [3, 4])])
def test_opset_1_to_6_models_are_unconvertible_and_the_onnx_rewrite_is_the_fix(attrs, b, tmp_path):
    """pnnx 20261020 crashes (signal 11) on an opset-6 model, even a same-shape Add: the ncnn target says so
    (found outside the corpus: examples/legacy_add.onnx was 'ok' under ncnn while pnnx crashed on it)."""
    m = model([("Add", ["A", "B"], ["C"], attrs)], {"A": [1, 3, 4, 5], "B": b}, {"C": [1, 3, 4, 5]}, opset=6)
    (f,) = lint(m, "ncnn")
    assert f.kind == "unsupported" and "opset 6" in f.reason and "--target onnx" in f.fix
    from support import convert_harness as h

    if h.pnnx_binary() is None:
        pytest.skip("pnnx is not installed")
    import onnx

    path = tmp_path / "legacy.onnx"
    onnx.save(m, path)
    rc, log, param, _, _ = h.convert_pnnx(str(path), str(tmp_path))
    assert rc != 0 or not __import__("os").path.exists(param), log[-500:]  # the crash this finding predicts
    from bcast import rewrite

    upgraded = rewrite(m, "onnx").model
    assert lint(upgraded, "ncnn") == []  # after the fix, pnnx converts it
    onnx.save(upgraded, tmp_path / "up.onnx")
    out = tmp_path / "up"
    out.mkdir()
    rc, log, param, _, _ = h.convert_pnnx(str(tmp_path / "up.onnx"), str(out))
    assert rc == 0 and __import__("os").path.exists(param), log[-500:]


# ------------------------------------------------------- found on models nobody on the team wrote (v-convert)


def _variadic(op, shapes):
    names = [f"a{k}" for k in range(len(shapes))]
    return model([(op, names, ["y"])], dict(zip(names, shapes)), ["y"])


@pytest.mark.parametrize("op, shapes, kind, words", [
    # pnnx maps Max/Min to aten::max/min (pass_onnx.cpp) with the first two inputs: ONNX's test_max_example
    ("Max", [[3], [3], [3]], "differs", "first two"),
    ("Min", [[2, 3], [3], [2, 1]], "differs", "first two"),
    # a 1-input Max/Min is torch.max(x): a Reduction over every axis, one value (test_max_one_input)
    ("Max", [[2, 3]], "differs", "Reduction"),
    ("Min", [[3]], "differs", "Reduction"),
    # pnnx 20261020 crashes (signal 11) on a 1-input Sum (test_sum_one_input)
    ("Sum", [[2, 3]], "unsupported", "crashes"),
    # no aten mapping for Mean: pnnx writes a `Mean` layer ncnn has not (test_mean_two_inputs, test_mean_example)
    ("Mean", [[2, 3], [2, 3]], "unsupported", "Mean layer"),
    ("Mean", [[3], [3], [3]], "unsupported", "Mean layer"),
])
def test_variadic_ops_as_pnnx_converts_them(op, shapes, kind, words):
    m = _variadic(op, shapes)
    (f,) = lint(m, "ncnn")
    assert f.kind == kind and words in f.reason, f.reason
    assert lint(m, "onnx") == [] and {f.kind for f in lint(m, "openvino")} <= {"values"}


@pytest.mark.parametrize("op, shapes", [("Sum", [[2, 3], [3], [2, 1]]),  # pnnx unrolls Sum into Adds
                                        ("Max", [[2, 3], [3]]), ("Min", [[2, 3], [2, 1]])])
def test_variadic_ops_pnnx_converts_right(op, shapes):
    assert lint(_variadic(op, shapes), "ncnn") == []


def _listed(order):
    """A conv model whose graph.input lists the initializers too (IR 3, as onnx's light model zoo does), in
    ``order`` ('x' the real input, 'w'/'b' the initializers)."""

    m = model([("Conv", ["x", "w", "b"], ["y"])], {"x": [1, 3, 4, 4]}, ["y"],
              inits={"w": np.ones((2, 3, 1, 1), W), "b": np.ones(2, W)}, ir_version=3, opset=8)
    by = {v.name: v for v in m.graph.input}
    del m.graph.input[:]
    m.graph.input.extend(by[n] for n in order)
    return m


@pytest.mark.parametrize("order, wrong", [
    (["x", "w", "b"], False), (["x"], False), (["w", "x", "b"], False), (["x", "b", "w"], False),
    (["w", "b", "x"], True), (["b", "w", "x"], True),
])
def test_initializers_listed_ahead_of_the_inputs_make_pnnx_drop_the_input(order, wrong):
    """pass_onnx/eliminate_initializer_input.cpp removes them by their first positions one after another: the
    later positions have moved, and it removes the model's own inputs (light_squeezenet, light_vgg19, ...)."""
    m = _listed(order)
    found = lint(m, "ncnn")
    if not wrong:
        assert found == []
        return
    (f,) = found
    assert f.kind == "unsupported" and "eliminate_initializer_input" in f.reason and "'x'" in f.reason, f.reason
    assert lint(m, "onnx") == [] and lint(m, "openvino") == []


LIGHT = ("densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet", "squeezenet", "vgg19",
         "zfnet512", "bvlc_alexnet")


def _light(name):
    import importlib.util
    import os

    spec = importlib.util.find_spec("onnx")
    path = os.path.join(os.path.dirname(spec.origin), "backend", "test", "data", "light", f"light_{name}.onnx")
    if not os.path.exists(path):
        pytest.skip(f"the onnx wheel here has no {path}")
    return path


def test_onnx_light_model_zoo_verdicts():
    """The onnx wheel's light models (opset 9, IR 3, initializers listed in graph.input): pnnx 20261020 fails on
    exactly the four whose graph.input starts with initializers (seen by converting all nine)."""
    fails = {"densenet121", "inception_v1", "squeezenet", "vgg19"}
    for name in LIGHT:
        found = [f for f in lint(_light(name), "ncnn") if f.kind in ("unsupported", "differs", "invalid")]
        assert bool(found) == (name in fails), (name, found)


def test_light_squeezenet_really_fails_under_pnnx_and_converts_with_the_fix(tmp_path):
    from support import convert_harness as H

    if not H.have("ncnn"):
        pytest.skip("pnnx/ncnn not installed")
    import onnx

    path = _light("squeezenet")
    assert H.observe(path, "ncnn").kind == "fails"
    m = onnx.load(path)
    inits = {t.name for t in m.graph.initializer}
    keep = [v for v in m.graph.input if v.name not in inits]
    del m.graph.input[:]
    m.graph.input.extend(keep)  # the finding's fix: the initializers out of graph.input
    fixed = str(tmp_path / "squeezenet.onnx")
    onnx.save(m, fixed)
    assert lint(fixed, "ncnn") == []
    # pnnx converts it now; its values still differ, from the opset-9 Softmax (not a broadcasting node, not
    # lint's): ncnn's output is ~1 everywhere, onnxruntime's 1/1000
    assert H.observe(fixed, "ncnn").kind != "fails"


@pytest.mark.parametrize("ir, opset, fails", [(13, 26, False), (8, 17, False), (14, 17, True), (13, 27, True),
                                              (13, 28, True), (14, 28, True)])
def test_models_newer_than_pnnxs_onnxruntime_are_unconvertible(ir, opset, fails, tmp_path):
    """pnnx 20261020 folds constants with its bundled onnxruntime 1.30 (IR <= 13, ai.onnx opset <= 26) and
    crashes (signal 11) on a newer model, whatever its ops: onnx 1.23's make_model writes IR 14 and opset 28
    by default (onnx's own test_mod_broadcast is one)."""
    m = model([("Add", ["x", "b"], ["y"])], {"x": [3, 4, 5]}, ["y"], inits={"b": np.ones(5, W)}, opset=opset,
              ir_version=ir)
    found = lint(m, "ncnn")
    assert bool(found) == fails, found
    if fails:
        (f,) = found
        assert f.kind == "unsupported" and "onnxruntime 1.30" in f.reason, f.reason
        assert lint(m, "onnx") == [] and lint(m, "openvino") == []
    from support import convert_harness as H

    if H.have("ncnn"):
        import onnx

        path = str(tmp_path / "m.onnx")
        onnx.save(m, path)
        assert (H.observe(path, "ncnn").kind == "fails") == fails


# ------------------------------------- torch 2.13's exporter (dynamo=False) writes Constant nodes, not initializers


def _const(name, value):
    from onnx import helper as h, numpy_helper as nh

    return h.make_node("Constant", [], [name], value=nh.from_array(np.asarray(value, W), name + "_v"))


@pytest.mark.parametrize("exponent, flagged", [(2.0, False), (3.0, True), (0.5, True)])
def test_pow_exponent_from_a_constant_node(exponent, flagged):
    """``(p * 2) ** 2`` (YOLO's wh): the exponent is a Constant node; pnnx makes Pow 2 a UnaryOp square."""
    m = model([_const("e", exponent), ("Pow", ["x", "e"], ["y"])], {"x": [1, 3, 4]}, ["y"])
    assert bool(lint(m, "ncnn")) == flagged


def test_nodes_pnnx_folds_are_not_findings():
    """pnnx's fold_constants computes what depends on constants and on static shapes alone (ViT's
    ``head_dim ** 0.5`` of two Constant nodes; ``cls.expand(x.shape[0], -1, -1)``'s Shape -> Equal -> Where)."""
    m = model([_const("a", 8.0), _const("b", 0.5), ("Pow", ["a", "b"], ["s"]), ("Div", ["x", "s"], ["y"])],
              {"x": [1, 3, 4]}, ["y"])
    assert lint(m, "ncnn") == []
    m = model([("Shape", ["x"], ["s"]), _const("m", [-1.0, -1.0]), ("Cast", ["m"], ["mi"], {"to": 7}),
               ("Equal", ["s", "mi"], ["q"]), ("Where", ["q", "s", "mi"], ["w"]), ("Expand", ["x", "w"], ["y"])],
              {"x": [2, 3]}, ["y"])
    assert [f.op_type for f in lint(m, "ncnn") if f.kind in ("unsupported", "differs", "invalid")] == []
    m = model([("Equal", ["x", "x"], ["q"])], {"x": [2, 3]}, ["q"])  # computed: still no ncnn layer
    assert [f.op_type for f in lint(m, "ncnn")] == ["Equal"]


_GELU_C = math.sqrt(2 / math.pi)


def _gelu_tanh(k=0.044715, c=_GELU_C):
    nodes = [_const("three", 3.0), _const("k", k), _const("c", c), _const("half", 0.5), _const("one", 1.0),
             ("Pow", ["x", "three"], ["p"]), ("Mul", ["p", "k"], ["pk"]), ("Add", ["x", "pk"], ["a"]),
             ("Mul", ["a", "c"], ["ac"]), ("Tanh", ["ac"], ["t"]), ("Add", ["t", "one"], ["t1"]),
             ("Mul", ["x", "half"], ["xh"]), ("Mul", ["xh", "t1"], ["y"])]
    return model(nodes, {"x": [1, 6, 8]}, ["y"])


def test_tanh_gelu_pow_is_fused_by_pnnx():
    """GPT-2's gelu_new as torch exports it: pnnx's pass_level2/F_gelu.cpp fuses it into a GELU layer, so its
    Pow(x, 3) never becomes a BinaryOp POW (seen converting torch 2.13's export: ncnn computes it right)."""
    assert lint(_gelu_tanh(), "ncnn") == []
    (f,) = lint(_gelu_tanh(k=0.05), "ncnn")  # not the pattern: the Pow stays a POW
    assert f.op_type == "Pow" and "BinaryOp POW" in f.reason


def test_concat_with_a_constant_that_spans_the_batch():
    """``torch.cat((cls.expand(B, -1, -1), tokens), 1)``: torch 2.13's exporter folds the expand into a (B,1,D)
    initializer; pnnx writes it as a MemoryData blob that keeps axis 0 while the tokens' blob has no batch axis:
    ncnn's output is (2,6,8,8) for onnxruntime's (2,5,8).  At batch 1 it is fine."""
    import os

    from support import convert_harness as H

    (f,) = lint(os.path.join(H.CORPUS, "cls_token_batch_b2.onnx"), "ncnn")
    assert f.op_type == "Concat" and f.kind == "unsupported" and "(2,1,8)" in f.reason, f.reason
    assert lint(os.path.join(H.CORPUS, "cls_token_batch_b1.onnx"), "ncnn") == []
    assert lint(os.path.join(H.CORPUS, "cls_token_batch_b2.onnx"), "openvino") == []


@pytest.mark.parametrize("shape_from", ["input", "constant", "shape_of"])
def test_expand_shape_pnnx_cannot_fold(shape_from, tmp_path):
    """onnx's test_expand_dim_changed: Expand's shape a graph input (int64): pnnx crashes (signal 11), with
    or without the input types given; a constant shape or one from Shape ops is folded and fine."""
    from onnx import TensorProto as T
    from onnx import helper as h

    if shape_from == "input":
        m = model([("Expand", ["x", "s"], ["y"])], {"x": [3, 1]}, ["y"])
        m.graph.input.append(h.make_tensor_value_info("s", T.INT64, [3]))
    elif shape_from == "constant":
        m = model([("Expand", ["x", "s"], ["y"])], {"x": [3, 1]}, ["y"], inits={"s": np.array([2, 3, 6])})
    else:
        m = model([("Shape", ["z"], ["s"]), ("Expand", ["x", "s"], ["y"])], {"x": [3, 1], "z": [2, 3, 6]}, ["y"])
    found = [f for f in lint(m, "ncnn") if f.kind in ("unsupported", "differs", "invalid")]
    assert [f.op_type for f in found] == (["Expand"] if shape_from == "input" else [])
    if found:
        assert "cannot fold it" in found[0].reason
