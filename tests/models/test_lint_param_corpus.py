"""``bcast lint MODEL.param`` on the conversion corpus as pnnx really converts it (pnnx 20261020, the lock's), each
model fed as pnnx's own generated script feeds it (the batch axis out), against what ncnn computes
(tests/support/convert_harness.py: the converted model run in the ncnn wheel against onnxruntime).

The table pins both per model.  Where they part, the cause lies outside a .param's two-blob BinaryOps, which
is all this lint reads (the ONNX-side ``lint --target ncnn`` flags each of these from the model pnnx starts
from, tests/models/test_convert_corpus.py):

- other values, lint ok (13): cube, sqrt_pow (POW of a scalar: ncnn's fast-math pow on bases <= 0),
  nhwc_prelu_* (ncnn's PReLU takes the slope per channel), max3_branches (pnnx keeps the first two inputs of a
  Max of three), batch_stats_conv_b2 (a mean over the batch axis, taken per item);
- ncnn fails, lint ok (4): compare_inputs, where_leaky (``torch.gt``: a layer ncnn has not);
- ncnn fails, lint unknown or a one-line error (10): mean_heads and rank0_compare (ncnn loads nothing, so no
  blob shape is known), rank5_table and rank6 (an input of rank 5 or 6: no ncnn blob holds it), loop_refine (a
  pnnx.Expression layer);
- pnnx fails (6): the If models and listed_weights: no .param at all.

Every model ncnn computes right has no blocking finding (the two SE blocks: an advisory ``differs``, pnnx's
(C,) gate on (C,H,W) in ncnn's per-channel alignment, which it means); both models whose BinaryOp ncnn computes
as garbage (batch_table_b2, cls_token_batch_b2: the output's shape is wrong) are ``unsupported``.
"""

from __future__ import annotations

import os

import pytest

from bcast.core.errors import InputError
from bcast.models.ncnn_param import lint_param
from support import convert_harness as H

# model: (what ncnn computes: ok / wrong values / wrong shape / fails; lint: ok, advisory, a blocking kind,
# error, no param)
OUTCOMES = {
    "attention_mask_b1": ("ok", "ok"),
    "attention_mask_b2": ("ok", "ok"),
    "attention_qk_b1": ("ok", "ok"),
    "attention_qk_b2": ("ok", "ok"),
    "batch_stats_b1": ("ok", "ok"),
    "batch_stats_b2": ("ok", "ok"),
    "batch_stats_conv_b1": ("ok", "ok"),
    "batch_stats_conv_b2": ("wrong values", "ok"),
    "batch_table_b1": ("ok", "ok"),
    "batch_table_b2": ("wrong shape", "unsupported"),
    "channel_scale_b1": ("ok", "ok"),
    "channel_scale_b2": ("ok", "ok"),
    "channel_vec_2d_b1": ("ok", "ok"),
    "channel_vec_2d_b2": ("ok", "ok"),
    "clamp_max_min_b1": ("ok", "ok"),
    "clamp_max_min_b2": ("ok", "ok"),
    "cls_token_batch_b1": ("ok", "ok"),
    "cls_token_batch_b2": ("wrong shape", "unsupported"),
    "compare_inputs_b1": ("fails", "ok"),
    "compare_inputs_b2": ("fails", "ok"),
    "conv_bias_4d_b1": ("ok", "ok"),
    "conv_bias_4d_b2": ("ok", "ok"),
    "cube_b1": ("wrong values", "ok"),
    "cube_b2": ("wrong values", "ok"),
    "divide_by_max_b1": ("ok", "ok"),
    "divide_by_max_b2": ("ok", "ok"),
    "expand_mask_b1": ("ok", "ok"),
    "expand_mask_b2": ("ok", "ok"),
    "film_b1": ("ok", "ok"),
    "film_b2": ("ok", "ok"),
    "film_shared_b1": ("ok", "ok"),
    "film_shared_b2": ("ok", "ok"),
    "gelu_tanh_export_b1": ("ok", "ok"),
    "gelu_tanh_export_b2": ("ok", "ok"),
    "gn_by_hand_b1": ("ok", "ok"),
    "gn_by_hand_b2": ("ok", "ok"),
    "hw_bias_b1": ("ok", "ok"),
    "hw_bias_b2": ("ok", "ok"),
    "hw_bias_plain_b1": ("ok", "ok"),
    "hw_bias_plain_b2": ("ok", "ok"),
    "if_branch_b1": ("fails", "no param"),
    "if_branch_b2": ("fails", "no param"),
    "if_constant_b1": ("fails", "no param"),
    "if_constant_b2": ("fails", "no param"),
    "if_inlined_b1": ("ok", "ok"),
    "if_inlined_b2": ("ok", "ok"),
    "instance_norm_hand_b1": ("ok", "ok"),
    "instance_norm_hand_b2": ("ok", "ok"),
    "key_padding_mask_b1": ("ok", "ok"),
    "key_padding_mask_b2": ("ok", "ok"),
    "l2_normalize_b1": ("ok", "ok"),
    "l2_normalize_b2": ("ok", "ok"),
    "last_axis_scale_b1": ("ok", "ok"),
    "last_axis_scale_b2": ("ok", "ok"),
    "layernorm_conv_b1": ("ok", "ok"),
    "layernorm_conv_b2": ("ok", "ok"),
    "layernorm_hand_b1": ("ok", "ok"),
    "layernorm_hand_b2": ("ok", "ok"),
    "linear_stem_b1": ("ok", "ok"),
    "linear_stem_b2": ("ok", "ok"),
    "listed_weights_b1": ("fails", "no param"),
    "listed_weights_b2": ("fails", "no param"),
    "loop_refine_b1": ("fails", "error"),
    "loop_refine_b2": ("fails", "error"),
    "max3_branches_b1": ("wrong values", "ok"),
    "max3_branches_b2": ("wrong values", "ok"),
    "mean_heads_b1": ("fails", "unknown"),
    "mean_heads_b2": ("fails", "unknown"),
    "mlp_bias_b1": ("ok", "ok"),
    "mlp_bias_b2": ("ok", "ok"),
    "nchw_prelu_b1": ("ok", "ok"),
    "nchw_prelu_b2": ("ok", "ok"),
    "nhwc_bias_b1": ("ok", "ok"),
    "nhwc_bias_b2": ("ok", "ok"),
    "nhwc_prelu_11c_b1": ("wrong values", "ok"),
    "nhwc_prelu_11c_b2": ("wrong values", "ok"),
    "nhwc_prelu_c_b1": ("wrong values", "ok"),
    "nhwc_prelu_c_b2": ("wrong values", "ok"),
    "nhwc_prelu_square_b1": ("wrong values", "ok"),
    "nhwc_prelu_square_b2": ("wrong values", "ok"),
    "outer_product_b1": ("ok", "ok"),
    "outer_product_b2": ("ok", "ok"),
    "pos_embedding_2d_b1": ("ok", "ok"),
    "pos_embedding_2d_b2": ("ok", "ok"),
    "pos_embedding_b1": ("ok", "ok"),
    "pos_embedding_b2": ("ok", "ok"),
    "pow_tensor_b1": ("ok", "ok"),
    "pow_tensor_b2": ("ok", "ok"),
    "rank0_compare_b1": ("fails", "unknown"),
    "rank0_compare_b2": ("fails", "unknown"),
    "rank5_conv_table_b1": ("ok", "ok"),
    "rank5_conv_table_b2": ("ok", "ok"),
    "rank5_scale_b1": ("ok", "ok"),
    "rank5_scale_b2": ("ok", "ok"),
    "rank5_table_b1": ("fails", "error"),
    "rank5_table_b2": ("fails", "error"),
    "rank6_b1": ("fails", "error"),
    "rank6_b2": ("fails", "error"),
    "scalar_affine_b1": ("ok", "ok"),
    "scalar_affine_b2": ("ok", "ok"),
    "se_block_b1": ("ok", "advisory"),
    "se_block_b2": ("ok", "advisory"),
    "se_linear_b1": ("ok", "ok"),
    "se_linear_b2": ("ok", "ok"),
    "seq_first_b1": ("ok", "ok"),
    "seq_first_b2": ("ok", "ok"),
    "seq_first_conv_b1": ("ok", "ok"),
    "seq_first_conv_b2": ("ok", "ok"),
    "seq_first_linear_b1": ("ok", "ok"),
    "seq_first_linear_b2": ("ok", "ok"),
    "sqrt_pow_b1": ("wrong values", "ok"),
    "sqrt_pow_b2": ("wrong values", "ok"),
    "square_b1": ("ok", "ok"),
    "square_b2": ("ok", "ok"),
    "square_const_node_b1": ("ok", "ok"),
    "square_const_node_b2": ("ok", "ok"),
    "token_scale_conv_b1": ("ok", "ok"),
    "token_scale_conv_b2": ("ok", "ok"),
    "where_leaky_b1": ("fails", "ok"),
    "where_leaky_b2": ("fails", "ok"),
}


def test_the_table_covers_the_corpus():
    assert sorted(OUTCOMES) == sorted(os.path.basename(m)[:-5] for m in H.corpus())


def _verdict(report) -> str:
    if report.ok:
        return "advisory" if report.findings else "ok"
    return next(f.kind for f in report.findings if f.kind not in ("differs", "values"))


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_lint_of_pnnxs_param_against_ncnn(tmp_path, name):
    if not H.have("ncnn"):
        pytest.skip("pnnx and ncnn are needed (pip install --no-deps pnnx==20261020)")
    model = os.path.join(H.CORPUS, f"{name}.onnx")
    feeds = H.feeds_for(model)
    outcome, _ = H.run_ncnn(model, feeds, str(tmp_path))
    param, script = tmp_path / f"{name}.ncnn.param", tmp_path / f"{name}_ncnn.py"
    if not param.exists() or not script.exists():
        assert OUTCOMES[name] == (outcome.kind, "no param")
        return
    inputs = []
    for (blob, _, bi), arr in zip(H._INPUT.findall(script.read_text()), feeds.values()):
        shape = list(arr.shape)
        if bi and int(bi) != 233:
            del shape[int(bi)]
        inputs.append(f"{blob}=" + ",".join(map(str, shape)))
    try:
        verdict = _verdict(lint_param(str(param), inputs))
    except InputError as e:
        assert "\n" not in str(e)
        verdict = "error"
    assert (outcome.kind, verdict) == OUTCOMES[name]
