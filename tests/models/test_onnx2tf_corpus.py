"""The conversion corpus as onnx2tf 1.29.24 converts it (tests/models/onnx2tf_corpus, made by its
make_onnx2tf.py): what each converted model computes in LiteRT against onnxruntime on the ONNX model,
and what ``bcast lint --layout channels-last`` says of it.

onnx2tf transposes the activations to NHWC, as ``--layout`` models, but it also transposes many
constants itself, where the shapes tell it how (a conv bias, an SE scale, a PRelu slope): lint's
findings on those nodes are false alarms for onnx2tf.  The table pins what was measured, so that a
change in either side shows:

=================== ========== ==========
onnx2tf 1.29.24     flagged    not flagged
=================== ========== ==========
same values              49         44
other values              8          2
fails to convert         15          2
=================== ========== ==========

The 23 flagged models onnx2tf gets wrong: Max/Min with a (C,1,1) constant (``[1,4,4,3] vs
[3,1,1]``), rank-5 tables, a Mean of differently laid-out inputs, each node lint calls ``differs`` on
shapes whose dims coincide (onnx2tf guesses the transposition from the sizes), and four If models
whose branch reads an outer constant (onnx2tf fails there with a KeyError of its own, whatever the
broadcast).  The 4 not flagged: a Loop (onnx2tf's control flow, no broadcast) and key_padding_mask (a
(B,1,1,T) mask with a softmax).  Modelling onnx2tf's own transpositions is the next step: until then
``--layout`` is the converter that leaves constants alone, and the README says so.
"""

from __future__ import annotations

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

# model: (what onnx2tf's .tflite computes: same / different values, or failed to convert; lint flags it)
OUTCOMES = {
    "attention_mask_b1": ("same", True),
    "attention_mask_b2": ("same", True),
    "attention_qk_b1": ("different", True),
    "attention_qk_b2": ("different", True),
    "batch_stats_b1": ("same", False),
    "batch_stats_b2": ("same", False),
    "batch_stats_conv_b1": ("same", False),
    "batch_stats_conv_b2": ("same", False),
    "batch_table_b1": ("same", True),
    "batch_table_b2": ("same", True),
    "channel_scale_b1": ("same", True),
    "channel_scale_b2": ("same", True),
    "channel_vec_2d_b1": ("same", False),
    "channel_vec_2d_b2": ("same", False),
    "clamp_max_min_b1": ("failed", True),
    "clamp_max_min_b2": ("failed", True),
    "cls_token_batch_b1": ("same", True),
    "cls_token_batch_b2": ("same", True),
    "compare_inputs_b1": ("same", False),
    "compare_inputs_b2": ("same", False),
    "conv_bias_4d_b1": ("same", True),
    "conv_bias_4d_b2": ("same", True),
    "cube_b1": ("same", False),
    "cube_b2": ("same", False),
    "divide_by_max_b1": ("same", False),
    "divide_by_max_b2": ("same", False),
    "expand_mask_b1": ("same", False),
    "expand_mask_b2": ("same", False),
    "film_b1": ("same", False),
    "film_b2": ("same", False),
    "film_shared_b1": ("same", False),
    "film_shared_b2": ("same", False),
    "gelu_tanh_export_b1": ("same", True),
    "gelu_tanh_export_b2": ("same", True),
    "gn_by_hand_b1": ("same", True),
    "gn_by_hand_b2": ("same", True),
    "hw_bias_b1": ("same", True),
    "hw_bias_b2": ("same", True),
    "hw_bias_plain_b1": ("same", True),
    "hw_bias_plain_b2": ("same", True),
    "if_branch_b1": ("failed", True),
    "if_branch_b2": ("failed", True),
    "if_constant_b1": ("failed", True),
    "if_constant_b2": ("failed", True),
    "if_inlined_b1": ("failed", True),
    "if_inlined_b2": ("failed", True),
    "instance_norm_hand_b1": ("same", False),
    "instance_norm_hand_b2": ("same", False),
    "key_padding_mask_b1": ("different", False),
    "key_padding_mask_b2": ("different", False),
    "l2_normalize_b1": ("same", False),
    "l2_normalize_b2": ("same", False),
    "last_axis_scale_b1": ("same", True),
    "last_axis_scale_b2": ("same", True),
    "layernorm_conv_b1": ("different", True),
    "layernorm_conv_b2": ("different", True),
    "layernorm_hand_b1": ("same", True),
    "layernorm_hand_b2": ("same", True),
    "linear_stem_b1": ("different", True),
    "linear_stem_b2": ("different", True),
    "listed_weights_b1": ("same", True),
    "listed_weights_b2": ("same", True),
    "loop_refine_b1": ("failed", False),
    "loop_refine_b2": ("failed", False),
    "max3_branches_b1": ("failed", True),
    "max3_branches_b2": ("failed", True),
    "mean_heads_b1": ("failed", True),
    "mean_heads_b2": ("failed", True),
    "mlp_bias_b1": ("same", False),
    "mlp_bias_b2": ("same", False),
    "nchw_prelu_b1": ("same", True),
    "nchw_prelu_b2": ("same", True),
    "nhwc_bias_b1": ("same", True),
    "nhwc_bias_b2": ("same", True),
    "nhwc_prelu_11c_b1": ("same", True),
    "nhwc_prelu_11c_b2": ("same", True),
    "nhwc_prelu_c_b1": ("same", True),
    "nhwc_prelu_c_b2": ("same", True),
    "nhwc_prelu_square_b1": ("same", True),
    "nhwc_prelu_square_b2": ("same", True),
    "outer_product_b1": ("same", False),
    "outer_product_b2": ("same", False),
    "pos_embedding_2d_b1": ("same", True),
    "pos_embedding_2d_b2": ("same", True),
    "pos_embedding_b1": ("same", True),
    "pos_embedding_b2": ("same", True),
    "pow_tensor_b1": ("different", True),
    "pow_tensor_b2": ("different", True),
    "rank0_compare_b1": ("same", False),
    "rank0_compare_b2": ("same", False),
    "rank5_conv_table_b1": ("same", True),
    "rank5_conv_table_b2": ("failed", True),
    "rank5_scale_b1": ("same", True),
    "rank5_scale_b2": ("same", True),
    "rank5_table_b1": ("failed", True),
    "rank5_table_b2": ("failed", True),
    "rank6_b1": ("same", False),
    "rank6_b2": ("same", False),
    "scalar_affine_b1": ("same", False),
    "scalar_affine_b2": ("same", False),
    "se_block_b1": ("same", False),
    "se_block_b2": ("same", False),
    "se_linear_b1": ("same", False),
    "se_linear_b2": ("same", False),
    "seq_first_b1": ("same", True),
    "seq_first_b2": ("same", True),
    "seq_first_conv_b1": ("same", True),
    "seq_first_conv_b2": ("same", True),
    "seq_first_linear_b1": ("same", True),
    "seq_first_linear_b2": ("same", True),
    "sqrt_pow_b1": ("same", False),
    "sqrt_pow_b2": ("same", False),
    "square_b1": ("same", False),
    "square_b2": ("same", False),
    "square_const_node_b1": ("same", False),
    "square_const_node_b2": ("same", False),
    "token_scale_conv_b1": ("same", True),
    "token_scale_conv_b2": ("same", True),
    "where_leaky_b1": ("same", False),
    "where_leaky_b2": ("same", False),
}


def _feeds(session):
    rng = np.random.default_rng(0)
    feeds = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feeds[i.name] = (rng.integers(0, 3, shape).astype(np.int64) if "int64" in i.type
                         else rng.uniform(0.5, 2, shape).astype(np.float32))
    return feeds


def _converted_outcome(name: str) -> str:
    from ai_edge_litert.interpreter import Interpreter

    path = CONVERTED / f"{name}.tflite"
    if not path.exists():
        return "failed"
    session = ort.InferenceSession(str(CORPUS / f"{name}.onnx"), providers=["CPUExecutionProvider"])
    feeds = _feeds(session)
    want = session.run(None, feeds)
    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    for det in it.get_input_details():
        src = feeds[det["name"].removeprefix("serving_default_").rsplit(":", 1)[0]]
        if src.ndim in NHWC and np.transpose(src, NHWC[src.ndim]).shape == tuple(det["shape"]):
            src = np.transpose(src, NHWC[src.ndim])  # onnx2tf takes 3-D to 5-D inputs channels-last
        it.set_tensor(det["index"], np.ascontiguousarray(src.astype(det["dtype"])))
    it.invoke()
    got = [it.get_tensor(o["index"]) for o in it.get_output_details()]
    for w in want:
        forms = [w] + ([np.transpose(w, NHWC[w.ndim])] if w.ndim in NHWC else [])
        if not any(g.shape == v.shape and np.allclose(g, v, rtol=1e-4, atol=1e-4) for g in got for v in forms):
            return "different"
    return "same"


def test_the_table_covers_the_corpus():
    assert sorted(OUTCOMES) == sorted(p.stem for p in CORPUS.glob("*.onnx"))
    assert sorted(p.stem for p in CONVERTED.glob("*.tflite")) == sorted(
        m for m, (outcome, _) in OUTCOMES.items() if outcome != "failed")


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_what_onnx2tf_computes_and_what_lint_says(name):
    outcome, flagged = OUTCOMES[name]
    assert _converted_outcome(name) == outcome
    found = [f for f in lint(str(CORPUS / f"{name}.onnx"), layout="channels-last") if f.reason.startswith("after ")]
    assert bool(found) == flagged
