"""Regenerate the OpenVINO IRs of this folder: ``python tests/models/convert_corpus/ir/make_ir_corpus.py``.

Each ``<model>.xml`` / ``.bin`` is OpenVINO's own converter's output (``openvino.convert_model`` of
``tests/models/convert_corpus/<model>.onnx``, ``openvino.save_model(..., compress_to_fp16=False)``), for
every corpus model (:data:`MODELS`: the broadcast patterns of some); those of :data:`BUILT` alone are
converted from ONNX models this script builds (an Expand of a graph input: the corpus's Expands are of
constants, which the converter folds; two inputs of different ranks: the converter equalises the ranks
of constants).  The ``edited_*`` IRs are those IRs edited by hand here (:data:`EDITS`: an attribute
changed, shapes that do not broadcast), for lint's invalid paths; each carries an XML comment saying so.
tests/models/test_lint_ir.py runs them all on OpenVINO's CPU plugin.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE.parent

#: corpus model -> the broadcast pattern it stands for
MODELS = {
    "hw_bias_plain_b2": "Add of a constant (1,1,H,W) table: trailing alignment, batch stretched",
    "channel_scale_b1": "Conv then per-channel Multiply/Add (C,1,1) constants",
    "key_padding_mask_b2": "two inputs, (N,h,q,k) + (N,1,1,k): a computed mask",
    "compare_inputs_b1": "Less of two inputs (1,4) vs (1,1): both stretch at batch 1",
    "compare_inputs_b2": "Less of two inputs (2,4) vs (2,1): batch 2 does not stretch",
    "film_b2": "Unsqueezed input (N,C,1,1) times a Conv output",
    "seq_first_b2": "sequence-first (S,N,E) + a (S,1,E) table",
    "rank6_b2": "rank 6 Add",
    "rank5_scale_b1": "rank 5 Conv then per-channel Multiply",
    "rank0_compare_b1": "Greater against a rank 0 value, then Multiply",
    "where_leaky_b2": "Select of cond, x and a scaled x",
    "clamp_max_min_b1": "Maximum/Minimum against scalars",
    "divide_by_max_b2": "Divide by a reduced (N,1,1) maximum",
    "nchw_prelu_b1": "PReLU with a (C,1,1) slope",
    "nhwc_prelu_c_b1": "PReLU with a (W,) slope, W != C: numpy into data",
    "nhwc_prelu_square_b1": "PReLU with a (C,) slope, C == W: OpenVINO's per-channel reading",
    "attention_qk_b1": "scaled scores plus a constant mask",
    "if_branch_b1": "If on a computed condition: a Multiply and an Add in its bodies",
    "loop_refine_b1": "Loop: a Multiply in its body",
}

_IN_LAYER = r"({}(?:(?!</layer>).)*?)"  # a layer's text, up to what follows (not past its end)
_C11 = r"<dim>3</dim>\s*<dim>1</dim>\s*<dim>1</dim>"

#: models this script builds (not of the corpus) -> their pattern
BUILT = {"expand_input": "Expand of an input: a Broadcast-3 bidirectional node",
         "add_row_input": "Add of two inputs (2,3,4) + (3,4): ranks differ in the IR",
         "add_ones_input": "Add of two inputs (2,3,4) + (1,1)"}

#: edited IR -> (source IR, [(regex, replacement)], what the edit is)
EDITS = {
    "edited_add_none": ("hw_bias_plain_b2", [(r'auto_broadcast="numpy"', 'auto_broadcast="none"')],
                        "the Add's auto_broadcast set to none: (2,2,4,5) and (1,1,4,5) are not equal"),
    "edited_add_pdpd": ("hw_bias_plain_b2", [(r'auto_broadcast="numpy"', 'auto_broadcast="pdpd"')],
                        "the Add's auto_broadcast set to pdpd (axis -1): (1,1,4,5) into (2,2,4,5) is valid"),
    "edited_add_pdpd_axis1": ("hw_bias_plain_b2", [
        (r'auto_broadcast="numpy"', 'auto_broadcast="pdpd" auto_broadcast.auto_broadcast_axis="1"')],
                              "pdpd with axis 1: (1,1,4,5) from axis 1 runs past (2,2,4,5)'s end"),
    "edited_row_pdpd": ("add_row_input", [(r'auto_broadcast="numpy"', 'auto_broadcast="pdpd"')],
                        "pdpd without its axis: OpenVINO's reader takes axis 0, where (3,4) does not fit (2,3,4)"),
    "edited_row_pdpd_last": ("add_row_input", [
        (r'auto_broadcast="numpy"', 'auto_broadcast="pdpd" auto_broadcast.auto_broadcast_axis="-1"')],
        "pdpd with axis -1: (3,4) from axis 1 of (2,3,4)"),
    "edited_ones_pdpd": ("add_ones_input", [
        (r'auto_broadcast="numpy"', 'auto_broadcast="pdpd" auto_broadcast.auto_broadcast_axis="2"')],
        "pdpd with axis 2: (1,1) from axis 2 of (2,3,4), a trailing 1 past the end (openvino-pdpd-trailing-ones)"),
    "edited_if_body_none": ("if_branch_b1", [(r'(name="t" type="Multiply" version="opset1">\s*<data auto_broadcast=")'
                                              r'numpy', r"\g<1>none")],
                            "the Multiply of If's then_body set to auto_broadcast none: (1,3,4,4) and (1,3,1,1)"),
    "edited_shapes": ("hw_bias_plain_b2", [(r'shape="2,2,4,5"', 'shape="2,2,4,6"'),
                                           (r"<dim>5</dim>", "<dim>6</dim>", 1),
                                           (r"(<layer id=\"2\".*?<port id=\"0\".*?<dim>)5(</dim>)", r"\g<1>6\2")],
                      "the input x made (2,2,4,6): it does not broadcast with the (1,1,4,5) table"),
    "edited_prelu_slope": ("nchw_prelu_b1", [('shape="3, 1, 1" offset="36" size="12"',
                                              'shape="2" offset="36" size="8"'),
                                             (_IN_LAYER.format('name="w4"') + _C11, r"\g<1><dim>2</dim>"),
                                             (_IN_LAYER.format('type="PReLU"') + _C11, r"\g<1><dim>2</dim>")],
                           "PReLU's slope made (2,) for 3 channels: it fits neither per channel nor numpy"),
}


def _built(path: pathlib.Path) -> None:
    """The ONNX models this script builds: an Expand of an input, an Add of two inputs of different ranks (the
    converter equalises the ranks of constants, not of inputs)."""
    import numpy as np
    import onnx
    from onnx import TensorProto as T, helper, numpy_helper

    def save(name, node, inputs, inits=()):
        g = helper.make_graph([node], name, [helper.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info("y", T.FLOAT, None)], list(inits))
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path / f"{name}.onnx")

    shape = numpy_helper.from_array(np.array([2, 3, 4], np.int64), "shape")
    save("expand_input", helper.make_node("Expand", ["x", "shape"], ["y"], name="expand"), [("x", [2, 3, 1])],
         [shape])
    save("add_row_input", helper.make_node("Add", ["x", "r"], ["y"], name="add"), [("x", [2, 3, 4]), ("r", [3, 4])])
    save("add_ones_input", helper.make_node("Add", ["x", "o"], ["y"], name="add"), [("x", [2, 3, 4]), ("o", [1, 1])])


def main() -> None:
    import openvino as ov

    for old in HERE.glob("*.xml"):
        old.unlink()
        old.with_suffix(".bin").unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        sources = {p.stem: p for p in sorted(CORPUS.glob("*.onnx"))}  # every corpus model (MODELS: their patterns)
        _built(pathlib.Path(tmp))
        sources.update({name: pathlib.Path(tmp) / f"{name}.onnx" for name in BUILT})
        for name, onnx_path in sources.items():
            ov.save_model(ov.convert_model(onnx_path), HERE / f"{name}.xml", compress_to_fp16=False)
    for name, (source, subs, what) in EDITS.items():
        text = (HERE / f"{source}.xml").read_text(encoding="utf-8")
        for sub in subs:
            pattern, repl, count = (*sub, 0) if len(sub) == 2 else sub
            text, n = re.subn(pattern, repl, text, count=count, flags=re.S)
            assert n, (name, pattern)
        text = text.replace('<?xml version="1.0"?>\n', f'<?xml version="1.0"?>\n<!-- EDITED BY HAND from {source}.xml '
                            f"(make_ir_corpus.py): {what} -->\n", 1)
        (HERE / f"{name}.xml").write_text(text, encoding="utf-8")
        shutil.copyfile(HERE / f"{source}.bin", HERE / f"{name}.bin")


if __name__ == "__main__":
    main()
