"""Regenerate the quantized OpenVINO IRs of ``quantized/``:
``python tests/models/convert_corpus/ir/make_quantized_ir.py``.

Each ``quantized/<model>.xml`` / ``.bin`` is what a user of NNCF ships: ``openvino.convert_model`` of
``tests/models/convert_corpus/<model>.onnx``, ``nncf.quantize`` of it calibrated on three random inputs
(seed 0, default preset: FakeQuantize nodes on the activations, int8 weights behind a Convert and a
per-channel Multiply), ``openvino.save_model(..., compress_to_fp16=False)``: every corpus model NNCF puts a
FakeQuantize in.  ``quantized/<model>_w.xml``: the ``_b1`` models quantized with NNCF's weight compression
off, whose weights keep a FakeQuantize with per-channel ranges (``(C,1,1,1)``, ``(C,1)``), as POT wrote them.
Made with nncf 3.4.0 and openvino 2026.4.1 (nncf is not in the test lock: the suite reads the files, it
never quantizes).
The ``quantized/edited_*`` IRs are those IRs edited by hand here (:data:`EDITS`: a FakeQuantize's range
made not to broadcast, its auto_broadcast changed), each marked by an XML comment, for lint's findings
on FakeQuantize nodes.  tests/models/test_lint_ir.py runs them all on OpenVINO's CPU plugin.
"""

from __future__ import annotations

import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "quantized"
CORPUS = HERE.parent

#: the FakeQuantize the edits change: channel_scale_b1's, on the input x (1,3,5,6), its ranges scalars
_FQ = "x/fq_output_0"
_C3 = (1.0, 3.0, 0.25)

#: edited IR -> (source IR, [(FakeQuantize input port, new shape, values), ("auto_broadcast", mode) or ("levels", n)],
#: what the edit is)
EDITS = {
    "edited_fq_per_channel": ("channel_scale_b1", [(1, (1, 3, 1, 1), [-1.0, -3.0, -0.25]), (2, (3, 1, 1), _C3)],
                              "input_low made (1,3,1,1) and input_high (3,1,1), per channel: both broadcast into X"),
    "edited_fq_channels": ("channel_scale_b1", [(2, (1, 4, 1, 1), (1.0, 3.0, 0.25, 2.0))],
                           "input_high made (1,4,1,1) for X's 3 channels: it does not broadcast"),
    "edited_fq_none": ("channel_scale_b1", [("auto_broadcast", "none")],
                       "auto_broadcast set to none: the scalar ranges are not X's shape"),
    "edited_fq_levels": ("channel_scale_b1", [("levels", 1)],
                         "levels set to 1: the spec takes 2 or more (the CPU plugin computes NaN)"),
    "edited_fq_grows": ("channel_scale_b1", [(4, (2, 1, 1, 1), (1.0, 2.0))],
                        "output_high made (2,1,1,1) for X's batch of 1: bigger than X "
                        "(openvino-fake-quantize-range-grows)"),
    "edited_fq_output_high": ("channel_scale_b1", [(4, (1, 3, 1, 1), _C3)],
                              "output_high made per channel, output_low left per tensor "
                              "(openvino-cpu-fake-quantize-output-ranges)"),
}


def _layer(text: str, **attr) -> re.Match:
    (key, value), = attr.items()
    head = rf'<layer id="{re.escape(value)}"' if key == "id" else rf'<layer id="(\d+)" {key}="{re.escape(value)}"'
    m = re.search(head + r"(?:(?!</layer>).)*</layer>", text, flags=re.S)
    assert m, attr
    return m


def _dims(port: str, shape: tuple) -> str:
    return (f'<port id="{port}" precision="FP32">' + "".join(f"<dim>{d}</dim>" for d in shape) + "</port>"
            if shape else f'<port id="{port}" precision="FP32" />')


def _port(layer: str, port: str, shape: tuple) -> str:
    """``layer``'s text with port ``port`` of those dims."""
    new, n = re.subn(rf'<port id="{port}" precision="FP32"(?: />|>(?:(?!</port>).)*</port>)', _dims(port, shape),
                     layer, count=1, flags=re.S)
    assert n, port
    return new


def edit(text: str, weights: bytearray, changes: list) -> str:
    """The IR's text with :data:`EDITS`' changes to the FakeQuantize :data:`_FQ`: a range Const given a new shape
    and values (appended to ``weights``), or its auto_broadcast set."""
    import numpy as np

    for change in changes:
        fq = _layer(text, name=_FQ)
        if change[0] in ("auto_broadcast", "levels"):
            layer = re.sub(rf'{change[0]}="[^"]*"', f'{change[0]}="{change[1]}"', fq.group(0), count=1)
            text = text.replace(fq.group(0), layer)
            continue
        port, shape, values = change
        edge = rf'<edge from-layer="(\d+)" from-port="0" to-layer="{fq.group(1)}" to-port="{port}" />'
        source = re.search(edge, text)
        assert source, port
        const = _layer(text, id=source.group(1))
        data = np.asarray(values, "<f4").reshape(shape).tobytes()
        layer = re.sub(r'shape="[^"]*" offset="\d+" size="\d+"', f'shape="{", ".join(map(str, shape))}" '
                       f'offset="{len(weights)}" size="{len(data)}"', const.group(0))
        text = text.replace(const.group(0), _port(layer, "0", shape))
        fq = _layer(text, name=_FQ)
        text = text.replace(fq.group(0), _port(fq.group(0), str(port), shape))
        weights += data
    return text


def quantize(name: str, weights: bool) -> bool:
    """Quantize corpus model ``name`` into ``quantized/<name>.xml`` (``<name>_w.xml`` with ``weights``: NNCF's
    ``compress_weights`` off, so that the weights keep their per-channel FakeQuantize, as POT's IRs had them).
    Keep it where it has a FakeQuantize (with ``weights``: one whose ranges are per channel); say whether."""
    import logging

    import nncf
    import numpy as np
    import openvino as ov
    from nncf.quantization.advanced_parameters import AdvancedQuantizationParameters

    nncf.set_log_level(logging.ERROR)
    model = ov.convert_model(CORPUS / f"{name}.onnx")
    rng = np.random.default_rng(0)
    inputs = [(tuple(p.get_partial_shape().to_shape()), p.get_element_type().to_dtype()) for p in model.inputs]
    data = [[rng.standard_normal(s).astype(t) for s, t in inputs] for _ in range(3)]
    params = AdvancedQuantizationParameters(backend_params={"compress_weights": False}) if weights else None
    q = nncf.quantize(model, nncf.Dataset(data), subset_size=3, advanced_parameters=params)
    fqs = [op for op in q.get_ordered_ops() if op.get_type_name() == "FakeQuantize"]
    if weights:
        fqs = [op for op in fqs if any(op.input(i).get_shape() != [] for i in range(1, 5))]
    if fqs:
        ov.save_model(q, OUT / f"{name}{'_w' * weights}.xml", compress_to_fp16=False)
    return bool(fqs)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.xml"):
        old.unlink()
        old.with_suffix(".bin").unlink(missing_ok=True)
    for onnx_path in sorted(CORPUS.glob("*.onnx")):
        quantize(onnx_path.stem, weights=False)  # every model NNCF puts a FakeQuantize in
        if onnx_path.stem.endswith("_b1"):
            quantize(onnx_path.stem, weights=True)
    for name, (source, changes, what) in EDITS.items():
        weights = bytearray((OUT / f"{source}.bin").read_bytes())
        text = edit((OUT / f"{source}.xml").read_text(encoding="utf-8"), weights, changes)
        text = text.replace('<?xml version="1.0"?>\n', f'<?xml version="1.0"?>\n<!-- EDITED BY HAND from {source}.xml '
                            f"(make_quantized_ir.py): {what} -->\n", 1)
        (OUT / f"{name}.xml").write_text(text, encoding="utf-8")
        (OUT / f"{name}.bin").write_bytes(bytes(weights))

if __name__ == "__main__":
    main()
