"""Regenerate the conversion corpus: small ONNX models with the broadcasts real networks use.

    python tests/models/convert_corpus/make_corpus.py        # writes tests/models/convert_corpus/*.onnx

Each model is built with ``onnx.helper`` in the form PyTorch's ONNX exporter
(opset 17) gives the pattern: ``x ** 2`` is ``Pow(x, 2.0)``, ``x.mean(-1,
keepdim=True)`` is ``ReduceMean(axes=[-1], keepdims=1)``, ``nn.Linear`` on a
2-D input is ``Gemm``, on 3-D ``MatMul`` + ``Add``, a ``(C,)`` parameter times
an NCHW tensor is a plain ``Mul`` with the numpy alignment, and so on.  Only
onnx and numpy are needed; the weights come from a fixed seed, so the files are
reproducible byte for byte.  ``ir_version`` is 8: pnnx's bundled onnxruntime
reads at most IR 13, and the files stay readable by every runtime here.

Every pattern is written at batch 1 and batch 2 (the ``_b1`` / ``_b2``
suffix): pnnx decides where the batch axis is per model, and a batch of 1 is
where a broadcast across the batch axis hides.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
IR_VERSION = 8


class _G:
    """A graph under construction: nodes, initializers, fresh names."""

    def __init__(self, seed: int) -> None:
        self.nodes, self.inits, self.n = [], [], 0
        self.rng = np.random.default_rng(seed)

    def name(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def const(self, value, stem="c") -> str:
        name = self.name(stem)
        self.inits.append(nh.from_array(np.asarray(value, np.float32 if np.asarray(value).dtype.kind == "f"
                                                   else np.int64), name))
        return name

    def weight(self, *shape, scale=0.5, positive=False) -> str:
        w = self.rng.standard_normal(shape).astype(np.float32) * scale
        return self.const(np.abs(w) + 0.5 if positive else w, "w")

    def ints(self, *values) -> str:
        return self.const(np.array(values, np.int64), "i")

    def op(self, op_type: str, *inputs, **attrs) -> str:
        out = self.name(op_type.lower() + "_")
        self.nodes.append(h.make_node(op_type, list(inputs), [out], name=out.rstrip("_") + "_n", **attrs))
        return out


def _model(g: _G, inputs: dict, outputs: list) -> onnx.ModelProto:
    ins = [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs.items()]
    outs = [h.make_tensor_value_info(*o) if isinstance(o, tuple) else h.make_tensor_value_info(o, T.FLOAT, None)
            for o in outputs]
    m = h.make_model(h.make_graph(g.nodes, "corpus", ins, outs, g.inits),
                     opset_imports=[h.make_opsetid("", OPSET)], producer_name="bcast-corpus")
    m.ir_version = IR_VERSION
    return onnx.shape_inference.infer_shapes(m, strict_mode=True)


# --------------------------------------------------------------------------- the patterns
# Each takes the batch size and returns (graph, inputs {name: shape}, outputs).


def se_block(b):
    """Squeeze-and-excitation: x * sigmoid(fc(pool(x))), the gate (B,C,1,1) on (B,C,H,W)."""
    g = _G(1)
    p = g.op("GlobalAveragePool", "x")
    z = g.op("Relu", g.op("Conv", p, g.weight(2, 4, 1, 1), g.weight(2)))
    s = g.op("Sigmoid", g.op("Conv", z, g.weight(4, 2, 1, 1), g.weight(4)))
    return g, {"x": [b, 4, 3, 3]}, [g.op("Mul", "x", s)]


def layernorm_hand(b):
    """LayerNorm written out: (x - mean) / sqrt(var + eps) * gamma (C,) + beta (C,) on (B,T,C)."""
    g = _G(2)
    mu = g.op("ReduceMean", "x", axes=[-1], keepdims=1)
    d = g.op("Sub", "x", mu)
    var = g.op("ReduceMean", g.op("Mul", d, d), axes=[-1], keepdims=1)
    n = g.op("Div", d, g.op("Sqrt", g.op("Add", var, g.const(1e-5))))
    return g, {"x": [b, 5, 6]}, [g.op("Add", g.op("Mul", n, g.weight(6)), g.weight(6))]


def layernorm_conv(b):
    """The same hand LayerNorm over the channels of a conv feature map (B,C,H,W), gamma (C,1,1)."""
    g = _G(3)
    x = g.op("Conv", "x", g.weight(4, 3, 1, 1), g.weight(4))
    mu = g.op("ReduceMean", x, axes=[1], keepdims=1)
    d = g.op("Sub", x, mu)
    var = g.op("ReduceMean", g.op("Pow", d, g.const(2.0)), axes=[1], keepdims=1)
    n = g.op("Div", d, g.op("Sqrt", g.op("Add", var, g.const(1e-6))))
    return g, {"x": [b, 3, 4, 5]}, [g.op("Add", g.op("Mul", n, g.weight(4, 1, 1)), g.weight(4, 1, 1))]


def channel_scale(b):
    """A conv's output times a (C,1,1) scale plus a (C,1,1) shift (a folded BatchNorm, by hand)."""
    g = _G(4)
    x = g.op("Conv", "x", g.weight(4, 3, 3, 3), g.weight(4), pads=[1, 1, 1, 1])
    return g, {"x": [b, 3, 5, 6]}, [g.op("Add", g.op("Mul", x, g.weight(4, 1, 1)), g.weight(4, 1, 1))]


def last_axis_scale(b):
    """A (W,) vector on NCHW: numpy puts it on the last axis (the one ncnn's 1-D rule does not)."""
    g = _G(5)
    return g, {"x": [b, 3, 4, 5]}, [g.op("Mul", g.op("Relu", "x"), g.weight(5))]


def hw_bias(b):
    """An (H,W) map added to every channel of (B,C,H,W), after a conv."""
    g = _G(6)
    x = g.op("Conv", "x", g.weight(3, 2, 1, 1), g.weight(3))
    return g, {"x": [b, 2, 4, 5]}, [g.op("Add", x, g.weight(4, 5))]


def hw_bias_plain(b):
    """An (H,W) map on (B,C,H,W) with no conv in the model."""
    g = _G(7)
    return g, {"x": [b, 2, 4, 5]}, [g.op("Add", "x", g.weight(4, 5))]


def attention_mask(b):
    """Scores (B,heads,T,T) plus a causal mask (T,T), then softmax."""
    g = _G(8)
    mask = np.triu(np.full((4, 4), -1e4, np.float32), 1)
    return g, {"x": [b, 2, 4, 4]}, [g.op("Softmax", g.op("Add", "x", g.const(mask)), axis=-1)]


def attention_qk(b):
    """q k^T / sqrt(d) + a (1,1,T,T) mask: scores from two projections of one input (B,T,D)."""
    g = _G(9)
    q = g.op("MatMul", "x", g.weight(6, 6))
    k = g.op("MatMul", "x", g.weight(6, 6))
    s = g.op("MatMul", q, g.op("Transpose", k, perm=[0, 2, 1]))
    s = g.op("Mul", s, g.const(np.float32(1 / np.sqrt(6))))
    mask = np.triu(np.full((1, 5, 5), -1e4, np.float32), 1)
    return g, {"x": [b, 5, 6]}, [g.op("Softmax", g.op("Add", s, g.const(mask)), axis=-1)]


def key_padding_mask(b):
    """Scores (B,heads,T,T) plus a per-example mask (B,1,1,T), both graph inputs."""
    g = _G(10)
    return g, {"x": [b, 2, 4, 4], "m": [b, 1, 1, 4]}, [g.op("Softmax", g.op("Add", "x", "m"), axis=-1)]


def pos_embedding(b):
    """Tokens (B,T,C) plus a learned (1,T,C) positional embedding."""
    g = _G(11)
    x = g.op("Add", g.op("MatMul", "x", g.weight(4, 6)), g.weight(6))
    return g, {"x": [b, 5, 4]}, [g.op("Add", x, g.weight(1, 5, 6))]


def pos_embedding_2d(b):
    """Tokens (B,T,C) plus a (T,C) table."""
    g = _G(12)
    return g, {"x": [b, 5, 6]}, [g.op("Add", "x", g.weight(5, 6))]


def rank5_scale(b):
    """A 3-D conv feature map (B,C,D,H,W) times a (C,1,1,1) scale."""
    g = _G(13)
    x = g.op("Conv", "x", g.weight(3, 2, 1, 1, 1), g.weight(3))
    return g, {"x": [b, 2, 2, 3, 4]}, [g.op("Mul", x, g.weight(3, 1, 1, 1))]


def rank5_table(b):
    """(B,C,D,H,W) plus a (D,H,W) table, no conv."""
    g = _G(14)
    return g, {"x": [b, 2, 2, 3, 4]}, [g.op("Add", "x", g.weight(2, 3, 4))]


def batch_stats(b):
    """Minibatch statistics: x - x.mean(0, keepdim=True) on (B,C), a broadcast across the batch axis."""
    g = _G(15)
    x = g.op("Gemm", "x", g.weight(6, 4), g.weight(6), transB=1)
    return g, {"x": [b, 4]}, [g.op("Sub", x, g.op("ReduceMean", x, axes=[0], keepdims=1))]


def batch_stats_conv(b):
    """(B,C,H,W) conv output minus its mean over the batch (1,C,H,W)."""
    g = _G(16)
    x = g.op("Conv", "x", g.weight(3, 2, 1, 1), g.weight(3))
    return g, {"x": [b, 2, 3, 3]}, [g.op("Sub", x, g.op("ReduceMean", x, axes=[0], keepdims=1))]


def seq_first(b):
    """A sequence-first (T,B,C) tensor plus a (T,1,C) constant."""
    g = _G(17)
    return g, {"x": [6, b, 4]}, [g.op("Add", "x", g.weight(6, 1, 4))]


def seq_first_linear(b):
    """Linear on (T,B,C), then a (T,1,C) constant."""
    g = _G(18)
    x = g.op("Add", g.op("MatMul", "x", g.weight(4, 4)), g.weight(4))
    return g, {"x": [6, b, 4]}, [g.op("Add", x, g.weight(6, 1, 4))]


def square(b):
    """x ** 2 (Pow with a constant exponent), after a conv."""
    g = _G(19)
    x = g.op("Conv", "x", g.weight(2, 2, 1, 1), g.weight(2))
    return g, {"x": [b, 2, 3, 3]}, [g.op("Pow", x, g.const(np.float32(2.0)))]


def cube(b):
    """x ** 3 on (B,C)."""
    g = _G(20)
    return g, {"x": [b, 5]}, [g.op("Pow", "x", g.const(np.float32(3.0)))]


def where_leaky(b):
    """torch.where(x > 0, x, 0.1 * x): a comparison and Where."""
    g = _G(21)
    c = g.op("Greater", "x", g.const(np.float32(0.0)))
    return g, {"x": [b, 3, 4]}, [g.op("Where", c, "x", g.op("Mul", "x", g.const(np.float32(0.1))))]


def compare_inputs(b):
    """(x < y) as float: a comparison of two inputs, (B,C) against (B,1)."""
    g = _G(22)
    return g, {"x": [b, 4], "y": [b, 1]}, [g.op("Cast", g.op("Less", "x", "y"), to=T.FLOAT)]


def nhwc_prelu_11c(b):
    """A tf2onnx-style NHWC PRelu: (B,H,W,C) with a (1,1,C) slope."""
    g = _G(23)
    return g, {"x": [b, 3, 4, 5]}, [g.op("PRelu", "x", g.weight(1, 1, 5))]


def nhwc_prelu_c(b):
    """NHWC PRelu with a (C,) slope."""
    g = _G(24)
    return g, {"x": [b, 3, 4, 5]}, [g.op("PRelu", "x", g.weight(5))]


def nchw_prelu(b):
    """nn.PReLU(C) on NCHW: the slope (C,1,1)."""
    g = _G(25)
    x = g.op("Conv", "x", g.weight(3, 2, 1, 1), g.weight(3))
    return g, {"x": [b, 2, 4, 5]}, [g.op("PRelu", x, g.weight(3, 1, 1))]


def linear_stem(b):
    """A Linear stem on (B,T,F), then a (T,C) constant: no conv, pnnx keeps the batch axis (233)."""
    g = _G(26)
    x = g.op("Add", g.op("MatMul", "x", g.weight(8, 8)), g.weight(8))
    return g, {"x": [b, 8, 8]}, [g.op("Add", x, g.weight(8, 8))]


def mlp_bias(b):
    """Gemm then a (C,) bias and a (C,) scale on (B,C)."""
    g = _G(27)
    x = g.op("Gemm", "x", g.weight(6, 4), g.weight(6), transB=1)
    return g, {"x": [b, 4]}, [g.op("Mul", g.op("Add", x, g.weight(6)), g.weight(6))]


def rank0_compare(b):
    """x * (x.mean() > -100): a rank-0 comparison (ReduceMean keepdims=0 -> Greater)."""
    g = _G(28)
    m = g.op("ReduceMean", "x", keepdims=0)
    c = g.op("Cast", g.op("Greater", m, g.const(np.float32(-100.0))), to=T.FLOAT)
    return g, {"x": [b, 3, 4]}, [g.op("Mul", "x", c)]


def outer_product(b):
    """a (B,T,1) times b (B,1,T) from two projections (an outer product by broadcasting)."""
    g = _G(29)
    u = g.op("Unsqueeze", g.op("Gemm", "x", g.weight(5, 4), transB=1), g.ints(2))
    v = g.op("Unsqueeze", g.op("Gemm", "x", g.weight(5, 4), transB=1), g.ints(1))
    return g, {"x": [b, 4]}, [g.op("Mul", u, v)]


def scalar_affine(b):
    """x * 0.5 + 1.0 with scalar constants."""
    g = _G(30)
    return g, {"x": [b, 3, 4, 4]}, [g.op("Add", g.op("Mul", "x", g.const(np.float32(0.5))), g.const(np.float32(1.0)))]


def clamp_max_min(b):
    """Max/Min against per-channel (C,1,1) bounds after a conv."""
    g = _G(31)
    x = g.op("Conv", "x", g.weight(3, 3, 1, 1), g.weight(3))
    return g, {"x": [b, 3, 4, 4]}, [g.op("Min", g.op("Max", x, g.weight(3, 1, 1)), g.weight(3, 1, 1, positive=True))]


def l2_normalize(b):
    """x / ||x|| over the last axis (torch.linalg.vector_norm: ReduceL2), (B,T,C) by (B,T,1).

    (Not ReduceSum-13 with its axes as an input: pnnx 20261020 turns that into a Reduction over no axis, a
    wrong result that has nothing to do with broadcasting and that no broadcast lint can see.)"""
    g = _G(32)
    n = g.op("ReduceL2", "x", axes=[-1], keepdims=1)
    return g, {"x": [b, 4, 6]}, [g.op("Div", "x", g.op("Add", n, g.const(np.float32(1e-6))))]


def gn_by_hand(b):
    """GroupNorm by hand: reshape (B,G,C/G*H*W), normalize, reshape back, (C,1,1) affine."""
    g = _G(33)
    x = g.op("Conv", "x", g.weight(4, 2, 1, 1), g.weight(4))
    r = g.op("Reshape", x, g.ints(b, 2, 18))
    mu = g.op("ReduceMean", r, axes=[-1], keepdims=1)
    d = g.op("Sub", r, mu)
    var = g.op("ReduceMean", g.op("Mul", d, d), axes=[-1], keepdims=1)
    n = g.op("Div", d, g.op("Sqrt", g.op("Add", var, g.const(np.float32(1e-5)))))
    y = g.op("Reshape", n, g.ints(b, 4, 3, 3))
    return g, {"x": [b, 2, 3, 3]}, [g.op("Add", g.op("Mul", y, g.weight(4, 1, 1)), g.weight(4, 1, 1))]


def channel_vec_2d(b):
    """(B,C) features times a (B,1) per-example weight computed from them (a gate)."""
    g = _G(34)
    w = g.op("Sigmoid", g.op("Gemm", "x", g.weight(1, 4), transB=1))
    return g, {"x": [b, 4]}, [g.op("Mul", "x", w)]


def rank6(b):
    """A rank-6 tensor (B,2,2,2,2,3) plus a (3,) bias."""
    g = _G(35)
    return g, {"x": [b, 2, 2, 2, 2, 3]}, [g.op("Add", "x", g.weight(3))]


def pow_tensor(b):
    """x ** y with an exponent per channel (C,1,1) on a positive base (sigmoid)."""
    g = _G(36)
    x = g.op("Sigmoid", g.op("Conv", "x", g.weight(3, 2, 1, 1), g.weight(3)))
    return g, {"x": [b, 2, 3, 3]}, [g.op("Pow", x, g.weight(3, 1, 1, positive=True))]


def conv_bias_4d(b):
    """A conv's output plus a (1,C,1,1) bias parameter (full rank, batch dim 1)."""
    g = _G(37)
    x = g.op("Conv", "x", g.weight(3, 2, 1, 1))
    return g, {"x": [b, 2, 4, 4]}, [g.op("Add", x, g.weight(1, 3, 1, 1))]


def nhwc_prelu_square(b):
    """NHWC PRelu with a (C,) slope where H == W == C: the slope's length matches axis 1 too."""
    g = _G(38)
    return g, {"x": [b, 4, 4, 4]}, [g.op("PRelu", "x", g.weight(4))]


def seq_first_conv(b):
    """Conv1d on (B,C,T), transposed to sequence-first (T,B,C), plus a (T,1,C) constant."""
    g = _G(39)
    x = g.op("Transpose", g.op("Conv", "x", g.weight(4, 3, 1), g.weight(4)), perm=[2, 0, 1])
    return g, {"x": [b, 3, 6]}, [g.op("Add", x, g.weight(6, 1, 4))]


def token_scale_conv(b):
    """A conv feature map flattened to tokens (B,HW,C) by Reshape + Transpose, times a (C,) scale."""
    g = _G(40)
    x = g.op("Conv", "x", g.weight(4, 2, 1, 1), g.weight(4))
    t = g.op("Transpose", g.op("Reshape", x, g.ints(b, 4, 9)), perm=[0, 2, 1])
    return g, {"x": [b, 2, 3, 3]}, [g.op("Mul", t, g.weight(4))]


def se_linear(b):
    """The SE block as torchvision writes it: pool, flatten, two Linear (Gemm), view (B,C,1,1), Mul."""
    g = _G(41)
    f = g.op("Flatten", g.op("GlobalAveragePool", "x"), axis=1)
    z = g.op("Relu", g.op("Gemm", f, g.weight(2, 4), g.weight(2), transB=1))
    s = g.op("Sigmoid", g.op("Gemm", z, g.weight(4, 2), g.weight(4), transB=1))
    return g, {"x": [b, 4, 3, 3]}, [g.op("Mul", "x", g.op("Reshape", s, g.ints(b, 4, 1, 1)))]


def instance_norm_hand(b):
    """x - x.mean((2,3), keepdim=True) after a conv: (B,C,H,W) minus (B,C,1,1)."""
    g = _G(42)
    x = g.op("Conv", "x", g.weight(3, 2, 1, 1), g.weight(3))
    return g, {"x": [b, 2, 4, 4]}, [g.op("Sub", x, g.op("ReduceMean", x, axes=[2, 3], keepdims=1))]


def nhwc_bias(b):
    """A conv's output permuted to NHWC (B,H,W,C) plus a (C,) bias."""
    g = _G(43)
    x = g.op("Transpose", g.op("Conv", "x", g.weight(3, 2, 1, 1)), perm=[0, 2, 3, 1])
    return g, {"x": [b, 2, 4, 5]}, [g.op("Add", x, g.weight(3))]


def divide_by_max(b):
    """x / x.max(): a rank-0 computed scalar (ReduceMax keepdims=0) divides the tensor."""
    g = _G(44)
    x = g.op("Sigmoid", "x")
    return g, {"x": [b, 3, 4]}, [g.op("Div", x, g.op("ReduceMax", x, keepdims=0))]


def expand_mask(b):
    """A (1,1,T) mask expanded to (B,H,T) by Expand, then added."""
    g = _G(45)
    mask = g.op("Expand", g.weight(1, 1, 4), g.ints(b, 3, 4))
    return g, {"x": [b, 3, 4]}, [g.op("Add", "x", mask)]


def film(b):
    """FiLM conditioning: a conv's output times a per-example (B,C) input unsqueezed to (B,C,1,1)."""
    g = _G(46)
    x = g.op("Conv", "x", g.weight(3, 2, 1, 1), g.weight(3))
    gamma = g.op("Unsqueeze", "s", g.ints(2, 3))
    return g, {"x": [b, 2, 4, 4], "s": [b, 3]}, [g.op("Mul", x, gamma)]


def film_shared(b):
    """A conv's output times a (1,C,1,1) style input shared by the whole batch (an input, not a constant)."""
    g = _G(47)
    x = g.op("Conv", "x", g.weight(3, 2, 1, 1), g.weight(3))
    return g, {"x": [b, 2, 4, 4], "s": [1, 3, 1, 1]}, [g.op("Mul", x, "s")]


def batch_table(b):
    """A conv's output plus a (B,C,H,W) constant: a table with one entry per batch item (varies along it)."""
    g = _G(48)
    x = g.op("Conv", "x", g.weight(2, 2, 1, 1), g.weight(2))
    return g, {"x": [b, 2, 3, 3]}, [g.op("Add", x, g.weight(b, 2, 3, 3))]


def rank5_conv_table(b):
    """A 3-D conv's output (B,C,D,H,W) plus a (1,C,D,H,W) constant (rank 5 on both sides)."""
    g = _G(49)
    x = g.op("Conv", "x", g.weight(2, 2, 1, 1, 1), g.weight(2))
    return g, {"x": [b, 2, 2, 3, 3]}, [g.op("Add", x, g.weight(1, 2, 2, 3, 3))]


def sqrt_pow(b):
    """relu(x) ** 0.5 (torch.pow with a fractional exponent) on a base that is often 0."""
    g = _G(50)
    return g, {"x": [b, 6]}, [g.op("Pow", g.op("Relu", "x"), g.const(np.float32(0.5)))]


def _if(g, cond, b):
    """If(cond) then x * w (C,1,1) else x + 1, on x (B,3,4,4)."""
    shape = [b, 3, 4, 4]
    w, one = g.weight(3, 1, 1), g.const(np.float32(1.0))
    then_g = h.make_graph([h.make_node("Mul", ["x", w], ["t"])], "then", [],
                          [h.make_tensor_value_info("t", T.FLOAT, shape)])
    else_g = h.make_graph([h.make_node("Add", ["x", one], ["e"])], "else", [],
                          [h.make_tensor_value_info("e", T.FLOAT, shape)])
    out = g.name("if_")
    g.nodes.append(h.make_node("If", [cond], [out], name="if_n", then_branch=then_g, else_branch=else_g))
    return out


def if_branch(b):
    """An If on a condition computed from the input (Cast of a ReduceMax to bool): a data-dependent branch."""
    g = _G(51)
    cond = g.op("Cast", g.op("ReduceMax", g.op("Relu", "x"), keepdims=0), to=T.BOOL)
    return g, {"x": [b, 3, 4, 4]}, [_if(g, cond, b)]


def if_constant(b):
    """An If on a constant condition (an export-time flag): pnnx inlines the branch."""
    g = _G(52)
    cond = g.name("flag")
    g.inits.append(nh.from_array(np.array(True), cond))
    return g, {"x": [b, 3, 4, 4]}, [_if(g, cond, b)]


def if_inlined(b):
    """An If on a constant flag whose branches hold their own Constant nodes: pnnx inlines the then-branch."""
    g = _G(53)
    shape = [b, 3, 4, 4]
    w = nh.from_array(g.rng.standard_normal((3, 1, 1)).astype(np.float32), "wv")
    then_g = h.make_graph([h.make_node("Constant", [], ["w"], value=w), h.make_node("Mul", ["x", "w"], ["t"])],
                          "then", [], [h.make_tensor_value_info("t", T.FLOAT, shape)])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"])], "else", [],
                          [h.make_tensor_value_info("e", T.FLOAT, shape)])
    cond = g.name("flag")
    g.inits.append(nh.from_array(np.array(True), cond))
    g.nodes.append(h.make_node("If", [cond], ["y"], name="if_n", then_branch=then_g, else_branch=else_g))
    return g, {"x": shape}, ["y"]


def loop_refine(b):
    """A Loop of 3 steps that halves its state (an iterative refinement), the step a Constant of the body."""
    g = _G(54)
    shape = [b, 3, 2, 2]
    body = h.make_graph([h.make_node("Constant", [], ["half"], value_float=0.5),
                         h.make_node("Mul", ["acc_in", "half"], ["acc_out"]),
                         h.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
                        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
                         h.make_tensor_value_info("acc_in", T.FLOAT, shape)],
                        [h.make_tensor_value_info("cond_out", T.BOOL, []),
                         h.make_tensor_value_info("acc_out", T.FLOAT, shape)])
    trips, cond = g.const(np.int64(3)), g.name("go")
    g.inits.append(nh.from_array(np.array(True), cond))
    g.nodes.append(h.make_node("Loop", [trips, cond, "x"], ["y"], name="loop_n", body=body))
    return g, {"x": shape}, [("y", T.FLOAT, shape)]


def max3_branches(b):
    """Max of three branches in one node (Keras' Maximum()([a, b, c]) through tf2onnx): a conv, its ReLU, a
    (C,1,1) floor."""
    g = _G(60)
    x = g.op("Conv", "x", g.weight(3, 3, 1, 1), g.weight(3))
    return g, {"x": [b, 3, 4, 4]}, [g.op("Max", x, g.op("Relu", g.op("Neg", x)), g.weight(3, 1, 1))]


def mean_heads(b):
    """The mean of two heads in one Mean node (an ensemble), a (C,1,1) bias on one."""
    g = _G(61)
    x = g.op("Conv", "x", g.weight(3, 3, 1, 1), g.weight(3))
    y = g.op("Add", g.op("Conv", "x", g.weight(3, 3, 1, 1)), g.weight(3, 1, 1))
    return g, {"x": [b, 3, 4, 4]}, [g.op("Mean", x, y)]


def listed_weights(b):
    """A conv + (C,1,1) scale whose graph.input lists the initializers ahead of x (older exporters, onnx's
    light model zoo): legal ONNX, initializers as overridable inputs."""
    g = _G(62)
    x = g.op("Conv", "x", g.weight(3, 3, 1, 1), g.weight(3))
    return g, {"x": [b, 3, 4, 4]}, [g.op("Mul", x, g.weight(3, 1, 1))]


listed_weights.listed = True


def _constant(g, value) -> str:
    """A Constant node, the form torch's exporter (dynamo=False) gives a Python number."""
    out = g.name("const_")
    g.nodes.append(h.make_node("Constant", [], [out], name=out.rstrip("_") + "_n",
                               value=nh.from_array(np.asarray(value, np.float32), out + "v")))
    return out


def gelu_tanh_export(b):
    """GPT-2's gelu_new, 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x**3))), on a Linear's output, its numbers as
    Constant nodes (torch's exporter): pnnx fuses it into one GELU layer, its x**3 never a POW."""
    g = _G(63)
    y = g.op("Add", g.op("MatMul", "x", g.weight(8, 8)), g.weight(8))
    inner = g.op("Mul", g.op("Add", y, g.op("Mul", g.op("Pow", y, _constant(g, 3.0)), _constant(g, 0.044715))),
                 _constant(g, float(np.sqrt(2 / np.pi))))
    t = g.op("Add", g.op("Tanh", inner), _constant(g, 1.0))
    return g, {"x": [b, 6, 8]}, [g.op("Mul", g.op("Mul", y, _constant(g, 0.5)), t)]


def square_const_node(b):
    """YOLO's ``(p * 2) ** 2`` with the exponent a Constant node, and ViT's ``q / head_dim ** 0.5`` whose Pow of
    two Constant nodes pnnx folds."""
    g = _G(64)
    x = g.op("Conv", "x", g.weight(3, 3, 1, 1), g.weight(3))
    sq = g.op("Pow", g.op("Mul", x, _constant(g, 2.0)), _constant(g, 2.0))
    return g, {"x": [b, 3, 4, 4]}, [g.op("Div", sq, g.op("Pow", _constant(g, 8.0), _constant(g, 0.5)))]

def cls_token_batch(b):
    """A ViT's patch tokens with the class token ``cls.expand(B, -1, -1)`` prepended and a positional embedding
    added, the expand folded to a (B,1,D) constant (torch 2.13's default exporter)."""
    g = _G(65)
    t = g.op("Transpose", g.op("Reshape", g.op("Conv", "x", g.weight(8, 3, 4, 4), g.weight(8), strides=[4, 4]),
                                g.ints(b, 8, 4)), perm=[0, 2, 1])
    cls = g.const(np.repeat(g.rng.standard_normal((1, 1, 8)).astype(np.float32), b, axis=0))
    return g, {"x": [b, 3, 8, 8]}, [g.op("Add", g.op("Concat", cls, t, axis=1), g.weight(1, 5, 8))]


PATTERNS = [se_block, layernorm_hand, layernorm_conv, channel_scale, last_axis_scale, hw_bias, hw_bias_plain,
            attention_mask, attention_qk, key_padding_mask, pos_embedding, pos_embedding_2d, rank5_scale,
            rank5_table, batch_stats, batch_stats_conv, seq_first, seq_first_linear, square, cube, where_leaky,
            compare_inputs, nhwc_prelu_11c, nhwc_prelu_c, nchw_prelu, linear_stem, mlp_bias, rank0_compare,
            outer_product, scalar_affine, clamp_max_min, l2_normalize, gn_by_hand, channel_vec_2d, rank6,
            pow_tensor, conv_bias_4d, nhwc_prelu_square, seq_first_conv, token_scale_conv, se_linear,
            instance_norm_hand, nhwc_bias, divide_by_max, expand_mask, film, film_shared, batch_table,
            rank5_conv_table, sqrt_pow, if_branch, if_constant, if_inlined, loop_refine, max3_branches, mean_heads,
            listed_weights, gelu_tanh_export, square_const_node, cls_token_batch]
BATCHES = (1, 2)


def build(pattern, batch: int) -> onnx.ModelProto:
    g, inputs, outputs = pattern(batch)
    m = _model(g, inputs, outputs)
    if getattr(pattern, "listed", False):  # the initializers listed in graph.input, ahead of the model's inputs
        own = list(m.graph.input)
        del m.graph.input[:]
        m.graph.input.extend(h.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in m.graph.initializer)
        m.graph.input.extend(own)
    return m


def names() -> list:
    return [f"{p.__name__}_b{b}" for p in PATTERNS for b in BATCHES]


def main(out_dir: str = HERE) -> int:
    for p in PATTERNS:
        for b in BATCHES:
            m = build(p, b)
            onnx.checker.check_model(m, full_check=True)
            m.doc_string = (p.__doc__ or "").strip()
            path = os.path.join(out_dir, f"{p.__name__}_b{b}.onnx")
            tmp = path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(m.SerializeToString())
            os.replace(tmp, path)
    print(f"{len(PATTERNS) * len(BATCHES)} models in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
