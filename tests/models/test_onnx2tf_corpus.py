"""The conversion corpus as onnx2tf 1.29.24 converts it (tests/models/onnx2tf_corpus, made by its
make_onnx2tf.py): what each converted model computes in LiteRT against onnxruntime on the ONNX model,
what ``bcast lint --layout channels-last`` says of it, and what ``bcast lint --target onnx2tf`` says.

onnx2tf transposes the activations to NHWC, as ``--layout`` models, but it also transposes many
constants itself, where the shapes tell it how (a conv bias, an SE scale, a PRelu slope): lint
``--layout``'s findings on those nodes are false alarms for onnx2tf.  The table pins what was
measured, so that a change in either side shows:

=================== ========== ========== ================ ================
onnx2tf 1.29.24     --layout   --layout   --target onnx2tf --target onnx2tf
                    flagged    not        finding          none
=================== ========== ========== ================ ================
same values              51         44            0               95
other values              6          2            8                0
fails to convert         15          2            9                8
=================== ========== ========== ================ ================

The 21 flagged models onnx2tf gets wrong: Max/Min with a (C,1,1) constant (``[1,4,4,3] vs
[3,1,1]``), rank-5 tables, a Mean of differently laid-out inputs, each node lint calls ``differs`` on
shapes whose dims coincide (onnx2tf guesses the transposition from the sizes), and four If models
whose branch reads an outer constant (onnx2tf fails there with a KeyError of its own, whatever the
broadcast).  The 4 not flagged: a Loop (onnx2tf's control flow, no broadcast) and key_padding_mask (a
(B,1,1,T) mask added to (B,C,T,T) scores: onnx2tf puts the mask on H, not W, because H == W; the
Softmax after it is right: a broadcast issue, which ``--layout`` cannot see, both operands being
activations).

``--target onnx2tf`` (bcast.frameworks.tflite.lint_onnx2tf, a model of onnx2tf's own transpositions
read from its source) flags every model onnx2tf gets wrong for a broadcast and none it converts
right; the 8 it does not flag are the If and Loop models (``CONTROL_FLOW``), whose failures are
onnx2tf's control flow, not a broadcast.
"""

from __future__ import annotations

import itertools
import pathlib

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("ai_edge_litert")

from bcast.models.lint import lint  # noqa: E402

HERE = pathlib.Path(__file__).parent
CONVERTED = HERE / "onnx2tf_corpus"
CORPUS = HERE / "convert_corpus"
NHWC = {3: (0, 2, 1), 4: (0, 2, 3, 1), 5: (0, 2, 3, 4, 1)}

# model: (what onnx2tf's .tflite computes: same / different values, or failed to convert; lint --layout flags it;
#         lint --target onnx2tf has a finding)
OUTCOMES = {
    "attention_mask_b1": ("same", True, False),
    "attention_mask_b2": ("same", True, False),
    "attention_qk_b1": ("different", True, True),
    "attention_qk_b2": ("different", True, True),
    "batch_stats_b1": ("same", False, False),
    "batch_stats_b2": ("same", False, False),
    "batch_stats_conv_b1": ("same", False, False),
    "batch_stats_conv_b2": ("same", False, False),
    "batch_table_b1": ("same", True, False),
    "batch_table_b2": ("same", True, False),
    "channel_scale_b1": ("same", True, False),
    "channel_scale_b2": ("same", True, False),
    "channel_vec_2d_b1": ("same", False, False),
    "channel_vec_2d_b2": ("same", False, False),
    "clamp_max_min_b1": ("failed", True, True),
    "clamp_max_min_b2": ("failed", True, True),
    "cls_token_batch_b1": ("same", True, False),
    "cls_token_batch_b2": ("same", True, False),
    "compare_inputs_b1": ("same", False, False),
    "compare_inputs_b2": ("same", False, False),
    "conv_bias_4d_b1": ("same", True, False),
    "conv_bias_4d_b2": ("same", True, False),
    "cube_b1": ("same", False, False),
    "cube_b2": ("same", False, False),
    "divide_by_max_b1": ("same", False, False),
    "divide_by_max_b2": ("same", False, False),
    "expand_mask_b1": ("same", False, False),
    "expand_mask_b2": ("same", False, False),
    "film_b1": ("same", False, False),
    "film_b2": ("same", False, False),
    "film_shared_b1": ("same", False, False),
    "film_shared_b2": ("same", False, False),
    "gelu_tanh_export_b1": ("same", True, False),
    "gelu_tanh_export_b2": ("same", True, False),
    "gn_by_hand_b1": ("same", True, False),
    "gn_by_hand_b2": ("same", True, False),
    "hw_bias_b1": ("same", True, False),
    "hw_bias_b2": ("same", True, False),
    "hw_bias_plain_b1": ("same", True, False),
    "hw_bias_plain_b2": ("same", True, False),
    "if_branch_b1": ("failed", True, False),
    "if_branch_b2": ("failed", True, False),
    "if_constant_b1": ("failed", True, False),
    "if_constant_b2": ("failed", True, False),
    "if_inlined_b1": ("failed", True, False),
    "if_inlined_b2": ("failed", True, False),
    "instance_norm_hand_b1": ("same", False, False),
    "instance_norm_hand_b2": ("same", False, False),
    "key_padding_mask_b1": ("different", False, True),
    "key_padding_mask_b2": ("different", False, True),
    "l2_normalize_b1": ("same", False, False),
    "l2_normalize_b2": ("same", False, False),
    "last_axis_scale_b1": ("same", True, False),
    "last_axis_scale_b2": ("same", True, False),
    "layernorm_conv_b1": ("different", True, True),
    "layernorm_conv_b2": ("different", True, True),
    "layernorm_hand_b1": ("same", True, False),
    "layernorm_hand_b2": ("same", True, False),
    "linear_stem_b1": ("same", True, False),
    "linear_stem_b2": ("same", True, False),
    "listed_weights_b1": ("same", True, False),
    "listed_weights_b2": ("same", True, False),
    "loop_refine_b1": ("failed", False, False),
    "loop_refine_b2": ("failed", False, False),
    "max3_branches_b1": ("failed", True, True),
    "max3_branches_b2": ("failed", True, True),
    "mean_heads_b1": ("failed", True, True),
    "mean_heads_b2": ("failed", True, True),
    "mlp_bias_b1": ("same", False, False),
    "mlp_bias_b2": ("same", False, False),
    "nchw_prelu_b1": ("same", True, False),
    "nchw_prelu_b2": ("same", True, False),
    "nhwc_bias_b1": ("same", True, False),
    "nhwc_bias_b2": ("same", True, False),
    "nhwc_prelu_11c_b1": ("same", True, False),
    "nhwc_prelu_11c_b2": ("same", True, False),
    "nhwc_prelu_c_b1": ("same", True, False),
    "nhwc_prelu_c_b2": ("same", True, False),
    "nhwc_prelu_square_b1": ("same", True, False),
    "nhwc_prelu_square_b2": ("same", True, False),
    "outer_product_b1": ("same", False, False),
    "outer_product_b2": ("same", False, False),
    "pos_embedding_2d_b1": ("same", True, False),
    "pos_embedding_2d_b2": ("same", True, False),
    "pos_embedding_b1": ("same", True, False),
    "pos_embedding_b2": ("same", True, False),
    "pow_tensor_b1": ("different", True, True),
    "pow_tensor_b2": ("different", True, True),
    "rank0_compare_b1": ("same", False, False),
    "rank0_compare_b2": ("same", False, False),
    "rank5_conv_table_b1": ("same", True, False),
    "rank5_conv_table_b2": ("failed", True, True),
    "rank5_scale_b1": ("same", True, False),
    "rank5_scale_b2": ("same", True, False),
    "rank5_table_b1": ("failed", True, True),
    "rank5_table_b2": ("failed", True, True),
    "rank6_b1": ("same", False, False),
    "rank6_b2": ("same", False, False),
    "scalar_affine_b1": ("same", False, False),
    "scalar_affine_b2": ("same", False, False),
    "se_block_b1": ("same", False, False),
    "se_block_b2": ("same", False, False),
    "se_linear_b1": ("same", False, False),
    "se_linear_b2": ("same", False, False),
    "seq_first_b1": ("same", True, False),
    "seq_first_b2": ("same", True, False),
    "seq_first_conv_b1": ("same", True, False),
    "seq_first_conv_b2": ("same", True, False),
    "seq_first_linear_b1": ("same", True, False),
    "seq_first_linear_b2": ("same", True, False),
    "sqrt_pow_b1": ("same", False, False),
    "sqrt_pow_b2": ("same", False, False),
    "square_b1": ("same", False, False),
    "square_b2": ("same", False, False),
    "square_const_node_b1": ("same", False, False),
    "square_const_node_b2": ("same", False, False),
    "token_scale_conv_b1": ("same", True, False),
    "token_scale_conv_b2": ("same", True, False),
    "where_leaky_b1": ("same", False, False),
    "where_leaky_b2": ("same", False, False),
}


def _feeds(session):
    rng = np.random.default_rng(0)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feeds[i.name] = (rng.integers(0, 3, shape).astype(np.int64) if "int64" in i.type
                         else rng.uniform(0.5, 2, shape).astype(np.float32))
    return feeds


def _converted_outcome(name: str, models: pathlib.Path = CORPUS, converted: pathlib.Path = CONVERTED) -> str:
    from ai_edge_litert.interpreter import Interpreter

    path = converted / f"{name}.tflite"
    if not path.exists():
        return "failed"
    session = ort.InferenceSession(str(models / f"{name}.onnx"), providers=["CPUExecutionProvider"])
    feeds = _feeds(session)
    want = session.run(None, feeds)
    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    inputs = it.get_input_details()
    # onnx2tf takes 3-D to 5-D inputs channels-last where it can; an input whose channels-last shape is its own
    # (linear_stem's (1,8,8)) does not say which it did: both are tried (onnx2tf kept linear_stem's as it is).
    choices = []
    for det in inputs:
        src = feeds[det["name"].removeprefix("serving_default_").rsplit(":", 1)[0]]
        last = np.transpose(src, NHWC[src.ndim]) if src.ndim in NHWC else src
        if last.shape != tuple(det["shape"]):
            choices.append([src])
        else:
            choices.append([last, src] if src.shape == last.shape else [last])
    for feed in itertools.product(*choices):
        for det, src in zip(inputs, feed):
            it.set_tensor(det["index"], np.ascontiguousarray(src.astype(det["dtype"])))
        it.invoke()
        got = [it.get_tensor(o["index"]) for o in it.get_output_details()]
        if all(any(g.shape == v.shape and np.allclose(g, v, rtol=1e-4, atol=1e-4) for g in got
                   for v in [w] + ([np.transpose(w, NHWC[w.ndim])] if w.ndim in NHWC else []))
               for w in want):
            return "same"
    return "different"


def test_the_table_covers_the_corpus():
    assert sorted(OUTCOMES) == sorted(p.stem for p in CORPUS.glob("*.onnx"))
    assert sorted(p.stem for p in CONVERTED.glob("*.tflite")) == sorted(
        m for m, (outcome, _, _) in OUTCOMES.items() if outcome != "failed")


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_what_onnx2tf_computes_and_what_lint_says(name):
    outcome, flagged, _ = OUTCOMES[name]
    assert _converted_outcome(name) == outcome
    found = [f for f in lint(str(CORPUS / f"{name}.onnx"), layout="channels-last") if f.reason.startswith("after ")]
    assert bool(found) == flagged


#: The models onnx2tf fails on for its control flow, whatever the broadcasts (If: a KeyError on the outer
#: initializer a branch reads; Loop): ``--target onnx2tf`` does not model them.
CONTROL_FLOW = {m for m in OUTCOMES if m.startswith(("if_", "loop_refine"))}


def test_the_onnx2tf_column_is_the_outcome():
    """Every model onnx2tf converts right has no finding, every other one has, but the control flow."""
    for name, (outcome, _, finding) in OUTCOMES.items():
        assert finding == (outcome != "same" and name not in CONTROL_FLOW), name


def test_what_lint_target_onnx2tf_says():
    got = {name: bool(lint(str(CORPUS / f"{name}.onnx"), target="onnx2tf")) for name in sorted(OUTCOMES)}
    assert got == {name: finding for name, (_, _, finding) in OUTCOMES.items()}


PROBES = HERE / "onnx2tf_corpus" / "probes"

#: Small probes of lint_onnx2tf's rules (made by onnx2tf_corpus/make_probes.py): probe: (what onnx2tf's .tflite
#: computes, whether lint --target onnx2tf has a finding, the rule).  Where the two disagree the model is wrong:
#: pinned as such, so that a better model shows.
PROBE_OUTCOMES = {
    "max_c11": ("failed", True, "1: Max.py reconciles nothing: [1,4,5,3] vs [3,1,1]"),
    "max_1c11": ("same", False, "1's fix: the constant at the activation's rank, onnx2tf transposes it"),
    "pow_1c11": ("same", False, "1's fix, for Pow"),
    "mask_square": ("different", True, "4: H == W, the (1,1,1,W) mask put on H"),
    "mask_rect": ("same", False, "4: H != W, right"),
    "matmul_table3": ("same", False, "a MatMul's result has no before_op_output_shape_trans: the (1,T,T) constant "
                      "is not transposed either"),
    "matmul_squared_table3": ("same", True, "MISSED BY THE MODEL: attention_qk's pattern (a square (1,T,T) result of "
                              "an op other than MatMul, a (1,T,T) constant) without its Transpose and scalar: onnx2tf "
                              "converts it right, lint flags it (rule 2a)"),
    "matmul_table2": ("same", False, "a (T,T) constant (rank 2) stays as it is, as the MatMul's result does"),
}


def test_the_probe_table_covers_the_probes():
    assert {m for m, (outcome, finding, _) in PROBE_OUTCOMES.items()
            if finding != (outcome != "same")} == {"matmul_squared_table3"}  # the model's one known false alarm
    assert sorted(PROBE_OUTCOMES) == sorted(p.stem for p in PROBES.glob("*.onnx"))
    assert sorted(p.stem for p in PROBES.glob("*.tflite")) == sorted(
        m for m, (outcome, _, _) in PROBE_OUTCOMES.items() if outcome != "failed")


@pytest.mark.parametrize("name", sorted(PROBE_OUTCOMES))
def test_what_onnx2tf_computes_on_each_probe_and_what_lint_says(name):
    outcome, finding, rule = PROBE_OUTCOMES[name]
    assert _converted_outcome(name, PROBES, PROBES) == outcome, rule
    assert bool(lint(str(PROBES / f"{name}.onnx"), target="onnx2tf")) == finding, rule


REWRITTEN = CONVERTED / "rewritten"
# `bcast rewrite --target onnx2tf` (every input at its output's rank, the ONNX values unchanged) of corpus models
# onnx2tf got wrong or right, converted again by onnx2tf 1.29.24 (the .onnx and .tflite in onnx2tf_corpus/rewritten):
# model: (before the rewrite, after it, what `lint --target onnx2tf` finds after it)
REWRITE_OUTCOMES = {
    "clamp_max_min_b1": ("failed", "same", False),  # Max/Min of (C,1,1): now (1,C,1,1), which onnx2tf transposes
    "max3_branches_b1": ("failed", "same", False),
    "pow_tensor_b1": ("different", "same", False),
    "conv_bias_4d_b1": ("same", "same", False),
    "channel_scale_b1": ("same", "same", False),
    "attention_qk_b1": ("different", "different", True),  # still flagged: the rewrite cannot fix it (blocked)
    "layernorm_conv_b1": ("different", "different", False),  # a false negative of the onnx2tf model, pinned
}


def test_the_rewrite_table_covers_the_rewritten_models():
    assert sorted(p.stem for p in REWRITTEN.glob("*.tflite")) == sorted(REWRITE_OUTCOMES)
    assert sorted(p.stem for p in REWRITTEN.glob("*.onnx")) == sorted(REWRITE_OUTCOMES)


@pytest.mark.parametrize("name", sorted(REWRITE_OUTCOMES))
def test_what_onnx2tf_computes_after_rewrite_target_onnx2tf(name):
    import onnx

    import bcast

    before, after, flagged = REWRITE_OUTCOMES[name]
    assert OUTCOMES[name][0] == before
    # the committed model is what the rewrite writes today (its graph: the file's producer fields aside)
    done = bcast.rewrite(str(CORPUS / f"{name}.onnx"), "onnx2tf").model
    kept = onnx.load(str(REWRITTEN / f"{name}.onnx"))
    assert done.graph.SerializeToString() == kept.graph.SerializeToString()
    # ... onnx2tf's conversion of it computes the original model's values (or not), as pinned
    assert _converted_outcome(name, CORPUS, REWRITTEN) == after
    assert bool(lint(str(REWRITTEN / f"{name}.onnx"), target="onnx2tf")) == flagged
