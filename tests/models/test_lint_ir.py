"""``bcast lint model.xml``: OpenVINO IRs made by OpenVINO's own converter (tests/models/convert_corpus/ir/,
make_ir_corpus.py), and hand-edited ones, linted; each verdict against what OpenVINO's CPU plugin
computes.

The oracle (:func:`cpu_outcome`) reads the IR with OpenVINO, makes every broadcasting node's inputs
and output outputs of the model, compiles it on CPU (f32) and runs it on random inputs: ``refused``
(the reader refuses it), ``not compiled`` (the CPU plugin fails to compile or run it), ``right``
(every broadcasting node's output equals ``bcast.openvino.run`` of the op on the inputs the CPU
plugin fed it, under the node's own attributes), ``wrong`` (one does not, or its op's spec computes
nothing on those shapes).  Lint is right when it finds nothing exactly where the outcome is ``right``.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import numpy as np
import pytest

import bcast
from bcast.cli import main
from bcast.core.errors import BroadcastError, InputError
from bcast.frameworks.openvino.ops import OPS
from bcast.models import ir_model
from bcast.models.lint_ir import lint_ir, lint_ir_report

CORPUS = pathlib.Path(__file__).resolve().parent / "convert_corpus" / "ir"

#: IR -> (the kinds lint reports, OpenVINO's CPU outcome).  ``edited_*``: edited by hand (make_ir_corpus.EDITS).
EXPECTED = {
    **{p.stem: ([], "right") for p in CORPUS.parent.glob("*.onnx")},  # every corpus model, converted
    **{f"{name}_b{b}": (["values", "values"], "right") for name in ("clamp_max_min", "max3_branches") for b in (1, 2)},
    "add_ones_input": ([], "right"),
    "add_row_input": ([], "right"),
    "attention_qk_b1": ([], "right"),
    "channel_scale_b1": ([], "right"),
    "clamp_max_min_b1": (["values", "values"], "right"),  # Maximum/Minimum f32: openvino-cpu-minmax-nan
    "compare_inputs_b1": ([], "right"),
    "compare_inputs_b2": ([], "right"),
    "divide_by_max_b2": ([], "right"),
    "expand_input": ([], "right"),
    "film_b2": ([], "right"),
    "hw_bias_plain_b2": ([], "right"),
    "if_branch_b1": ([], "right"),  # bodies: their nodes are linted; the plugin's outputs for them are not compared
    "loop_refine_b1": ([], "right"),
    "key_padding_mask_b2": ([], "right"),
    "nchw_prelu_b1": ([], "right"),
    "nhwc_prelu_c_b1": ([], "right"),
    "nhwc_prelu_square_b1": ([], "right"),
    "rank0_compare_b1": ([], "right"),
    "rank5_scale_b1": ([], "right"),
    "rank6_b2": ([], "right"),
    "seq_first_b2": ([], "right"),
    "where_leaky_b2": ([], "right"),
    "edited_add_none": (["invalid"], "refused"),
    "edited_add_pdpd": ([], "right"),
    "edited_add_pdpd_axis1": (["invalid"], "refused"),
    "edited_prelu_slope": (["invalid"], "not compiled"),
    "edited_row_pdpd": (["invalid"], "refused"),
    "edited_row_pdpd_last": ([], "right"),
    "edited_if_body_none": (["invalid"], "refused"),
    "edited_ones_pdpd": (["differs"], "refused"),  # openvino-pdpd-trailing-ones: valid pdpd, OpenVINO refuses
    "edited_shapes": (["invalid"], "refused"),
}


QUANTIZED = CORPUS / "quantized"
#: quantized IR (make_quantized_ir.py: NNCF 3.4.0 on every corpus model it puts a FakeQuantize in; ``_w``: its
#: weights' per-channel FakeQuantize kept) -> (kinds, CPU outcome), where not ([], "right"); ``edited_*`` by hand
QUANTIZED_EXPECTED = {
    **{name: (["values", "values"], "right")  # Maximum/Minimum f32: openvino-cpu-minmax-nan
       for name in ("clamp_max_min_b1", "clamp_max_min_b1_w", "clamp_max_min_b2", "max3_branches_b1",
                    "max3_branches_b1_w", "max3_branches_b2")},
    "edited_fq_per_channel": ([], "right"),  # (1,3,1,1) and (3,1,1) ranges
    "edited_fq_channels": (["invalid"], "refused"),  # (1,4,1,1) for 3 channels
    "edited_fq_none": (["invalid"], "refused"),  # none with scalar ranges
    "edited_fq_levels": (["invalid"], "wrong"),  # levels 1: the CPU plugin computes NaN
    "edited_fq_grows": (["invalid"], "wrong"),  # output_high (2,1,1,1), X (1,3,5,6): openvino-fake-quantize-range-grows
    "edited_fq_output_high": (["differs"], "wrong"),  # openvino-cpu-fake-quantize-output-ranges
}
QUANTIZED_IRS = sorted(p.stem for p in QUANTIZED.glob("*.xml"))


@pytest.mark.parametrize("name", QUANTIZED_IRS)
def test_lint_of_quantized_irs_matches_what_openvino_computes(name):
    """Every FakeQuantize and every other broadcasting node of the quantized IRs, linted and run: no false
    positive, no false negative; the .xml's port dims give the same verdicts."""
    pytest.importorskip("openvino")
    kinds, outcome = QUANTIZED_EXPECTED.get(name, ([], "right"))
    xml = QUANTIZED / f"{name}.xml"
    report = lint_ir_report(xml)
    assert [f.kind for f in report.findings] == kinds, [str(f) for f in report.findings]
    assert any(n.op == "FakeQuantize" for n in ir_model.read(xml).nodes)
    assert cpu_outcome(xml) == outcome
    assert report.ok == (outcome == "right")
    assert [f.kind for f in lint_ir(xml, reader="xml")] == kinds


def test_the_quantized_folder():
    assert len(QUANTIZED_IRS) == 126 and set(QUANTIZED_EXPECTED) <= set(QUANTIZED_IRS)
    for name in QUANTIZED_IRS:
        assert name.startswith("edited_") == ("EDITED BY HAND" in (QUANTIZED / f"{name}.xml").read_text(
            encoding="utf-8").splitlines()[1])
    assert sum(p.stat().st_size for p in QUANTIZED.iterdir()) < 1_400_000


def test_the_table_is_the_folder():
    assert sorted(EXPECTED) == sorted(p.stem for p in CORPUS.glob("*.xml"))
    for p in CORPUS.glob("edited_*.xml"):
        assert "EDITED BY HAND" in p.read_text(encoding="utf-8").splitlines()[1]
    assert sum(p.stat().st_size for p in CORPUS.iterdir() if p.is_file()) < 700_000


# --------------------------------------------------------------------------- the oracle


def _key(output) -> tuple:
    node = output.get_node()
    if node.get_type_name() == "Result":
        output = node.input_value(0)
    return output.get_node().get_friendly_name(), output.get_index()


def _inputs(model, rng) -> dict:
    feed = {}
    for p in model.inputs:
        dtype = p.get_element_type().to_dtype()
        shape = tuple(p.get_shape())
        if dtype == np.bool_:
            feed[p.get_any_name()] = rng.random(shape) < 0.5
        elif dtype.kind == "f":
            feed[p.get_any_name()] = rng.standard_normal(shape).astype(dtype)
        else:
            feed[p.get_any_name()] = rng.integers(-5, 6, shape).astype(dtype)
    return feed


def _expected(op, arrays: list):
    """``bcast.openvino.run`` of the node on the CPU plugin's inputs, under the node's own attributes."""
    name = op.get_type_name()
    a = op.get_attributes()
    if name == "Broadcast":
        mode = a.get("mode", "numpy")
        version = int(op.get_type_info().version_id.replace("opset", ""))
        return bcast.openvino.run("Broadcast", arrays[0], *[np.asarray(x).astype(np.int64) for x in arrays[1:]],
                                  mode=mode, version=version)
    if name == "PRelu":
        return bcast.openvino.run("PRelu", *arrays)
    kw = {"auto_broadcast": a.get("auto_broadcast", "numpy")}
    if name == "FakeQuantize":
        kw["levels"] = a["levels"]
    if kw["auto_broadcast"] == "pdpd":
        kw["axis"] = a.get("auto_broadcast.auto_broadcast_axis", 0)
    if name == "Divide":
        kw["python_division"] = a.get("m_pythondiv", True)
    return bcast.openvino.run(name, *arrays, **kw)


def cpu_outcome(xml: pathlib.Path, seed: int = 0) -> str:
    ov = pytest.importorskip("openvino")
    core = ov.Core()
    try:
        model = core.read_model(str(xml))
    except RuntimeError:
        return "refused"
    sites = [op for op in model.get_ordered_ops() if op.get_type_name() in OPS]
    wanted = [op.output(0) for op in sites]
    wanted += [v for op in sites for v in op.input_values() if v.get_node().get_type_name() != "Constant"]
    model.add_outputs(wanted)
    try:
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        result = compiled(_inputs(model, np.random.default_rng(seed)))
    except RuntimeError:
        return "not compiled"
    # the compiled model's outputs are the model's, in order (its nodes are the plugin's own)
    values = {_key(out): result[compiled.outputs[i]] for i, out in enumerate(model.outputs)}
    for op in sites:
        arrays = [v.get_node().get_data() if v.get_node().get_type_name() == "Constant" else values[_key(v)]
                  for v in op.input_values()]
        try:
            want = _expected(op, arrays)
        except (BroadcastError, InputError):
            return "wrong"  # the CPU plugin ran a node its op's spec computes nothing for
        got = values[_key(op.output(0))]
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True):
            return "wrong"
    return "right"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_lint_matches_what_openvino_computes(name):
    pytest.importorskip("openvino")
    kinds, outcome = EXPECTED[name]
    xml = CORPUS / f"{name}.xml"
    report = lint_ir_report(xml)
    assert [f.kind for f in report.findings] == kinds, [str(f) for f in report.findings]
    assert cpu_outcome(xml) == outcome
    assert report.ok == (outcome == "right")  # no false positive, no false negative
    read_by_openvino = outcome != "refused"
    assert report.reader.startswith("openvino ") == read_by_openvino, report.reader


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_without_openvino_the_port_dims_give_the_same_verdicts(name, monkeypatch):
    monkeypatch.setitem(sys.modules, "openvino", None)  # import openvino raises ImportError
    report = lint_ir_report(CORPUS / f"{name}.xml")
    assert report.reader == "the .xml's port dims (the openvino module is not installed)"
    assert [f.kind for f in report.findings] == EXPECTED[name][0]
    assert [f.kind for f in lint_ir(CORPUS / f"{name}.xml", reader="xml")] == EXPECTED[name][0]


def test_a_finding_has_the_node_its_rule_and_the_records_that_bear_on_it():
    (f,) = lint_ir(CORPUS / "edited_prelu_slope.xml")
    assert (f.node, f.op_type, f.opset, f.input_shapes, f.rule) == ("prelu_5", "PRelu", 1, ((1, 3, 4, 5), (2,)),
                                                                    "openvino-prelu")
    assert [d.deviation.id for d in f.deviations] == ["openvino-prelu-unchecked"]
    (f,) = lint_ir(CORPUS / "edited_row_pdpd.xml")  # pdpd without its axis: axis 0, as OpenVINO reads it
    assert f.rule == "pdpd" and "--axis 0" in f.fix
    (f,) = lint_ir(CORPUS / "edited_if_body_none.xml")  # a node of a body: its path
    assert (f.node, f.path, f.rule) == ("if_6/then_body/t", ("if_6", "then_body", "t"), "none")


def test_the_bodies_are_read_by_both_readers():
    for reader in ("auto", "xml"):
        ir = ir_model.read(CORPUS / "if_branch_b1.xml", reader=reader)
        assert [(n.label, n.shapes) for n in ir.nodes] == [("if_6/then_body/t", ((1, 3, 4, 4), (1, 3, 1, 1))),
                                                           ("if_6/else_body/e", ((1, 3, 4, 4), (1, 1, 1, 1)))]
        ir = ir_model.read(CORPUS / "loop_refine_b1.xml", reader=reader)
        assert [(n.label, n.op) for n in ir.nodes] == [("y/body/acc_out", "Multiply")]


def test_dynamic_dims_from_openvinos_reader(tmp_path):
    """An IR converted with a dynamic batch: OpenVINO's intervals and unknown dims reach the rules."""
    ov = pytest.importorskip("openvino")
    onnx_path = CORPUS.parent / "key_padding_mask_b2.onnx"
    m = ov.convert_model(str(onnx_path), input=[("x", ov.PartialShape([-1, 2, 4, 4])),
                                                ("m", ov.PartialShape([ov.Dimension(1, 8), 1, 1, 4]))])
    ov.save_model(m, tmp_path / "dyn.xml", compress_to_fp16=False)
    (f,) = lint_ir(tmp_path / "dyn.xml")
    assert f.kind == "unproven" and [str(d) for d in f.input_shapes[1]] == ["1..8", "1", "1", "4"]
    (g,) = lint_ir(tmp_path / "dyn.xml", reader="xml")  # the port dims: -1 for every dynamic dim
    assert g.kind == "unproven" and [str(d) for d in g.input_shapes[1]] == ["?", "1", "1", "4"]


# --------------------------------------------------------------------------- hostile files


def _corpus_xml(name: str = "hw_bias_plain_b2") -> str:
    return (CORPUS / f"{name}.xml").read_text(encoding="utf-8")


#: name -> (the .xml's text, or a function of the folder making the files; what the one-line error says)
REFUSED = {
    "doctype": ('<?xml version="1.0"?><!DOCTYPE net [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
                "<net version=\"11\"><layers>&b;</layers></net>", "DOCTYPE"),
    "not xml": ("\x00\x01binary", "not an OpenVINO IR, or a truncated one"),
    "truncated": (_corpus_xml()[:900], "truncated"),
    "root": ("<model><layers/></model>", "its root is <model>"),
    "no layers": ('<net version="11"></net>', "no <layers>"),
    "layer without type": ('<net><layers><layer id="0"/></layers></net>', "without id or type"),
    "two ids": ('<net><layers><layer id="0" type="Relu"/><layer id="0" type="Relu"/></layers></net>', "two layers"),
    "edge to nothing": (_corpus_xml().replace('to-layer="2" to-port="0"', 'to-layer="9" to-port="0"'), "no such"),
    "bad dim": (_corpus_xml().replace("<dim>5</dim>", "<dim>five</dim>", 1), "dim 'five' is not an integer"),
    "negative dim": (_corpus_xml().replace("<dim>5</dim>", "<dim>-5</dim>", 1), "out of range"),
    "long port": (_corpus_xml().replace("<dim>5</dim>", "<dim>1</dim>" * 70, 1), "more than 64 dims"),
    "const outside the bin": ((CORPUS / "expand_input.xml").read_text(encoding="utf-8").replace(
        'offset="0" size="24"', 'offset="1000000" size="24"'), "lies outside"),
}


def _write(folder: pathlib.Path, text: str, bin_from: str = "expand_input") -> pathlib.Path:
    xml = folder / "m.xml"
    xml.write_text(text, encoding="utf-8") if text.isprintable() or "\n" in text else xml.write_bytes(text.encode())
    (folder / "m.bin").write_bytes((CORPUS / f"{bin_from}.bin").read_bytes())
    return xml


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_malformed_ir_is_refused_with_one_line(name, tmp_path):
    text, match = REFUSED[name]
    with pytest.raises(InputError) as e:
        lint_ir(_write(tmp_path, text))
    assert "\n" not in str(e.value) and match in str(e.value), str(e.value)


def test_not_a_regular_file_is_refused_before_reading(tmp_path):
    fifo = tmp_path / "fifo.xml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        lint_ir(fifo)  # a FIFO with no writer: refused, not waited on
    xml = _write(tmp_path, _corpus_xml())
    with pytest.raises(InputError, match="not a regular file"):
        lint_ir(xml, bin=fifo)
    with pytest.raises(InputError, match="not a regular file"):
        lint_ir(tmp_path)  # a folder


def test_limits(tmp_path, monkeypatch):
    xml = _write(tmp_path, _corpus_xml())
    os.remove(tmp_path / "m.bin")
    with pytest.raises(InputError, match=r"m\.bin: no such file \(an IR's weights lie beside its \.xml"):
        lint_ir(xml)
    _write(tmp_path, _corpus_xml())
    monkeypatch.setattr(ir_model, "MAX_ELEMENTS", 20)
    with pytest.raises(InputError, match="more than 20 XML elements"):
        lint_ir(xml)
    monkeypatch.setattr(ir_model, "MAX_XML_BYTES", 100)
    with pytest.raises(InputError, match="over the 100 B bcast reads of an IR's xml"):
        lint_ir(xml)


def test_openvino_refusing_what_no_broadcasting_node_explains_is_one_line(tmp_path):
    pytest.importorskip("openvino")
    text = _corpus_xml().replace('element_type="f32" shape="1, 1, 4, 5" offset="0" size="80"',
                                 'element_type="f32" shape="1, 1, 4, 5" offset="0" size="8000"')
    with pytest.raises(InputError, match="OpenVINO refuses the IR .*no broadcasting node explains it") as e:
        lint_ir(_write(tmp_path, text, "hw_bias_plain_b2"))
    assert "\n" not in str(e.value)


# --------------------------------------------------------------------------- the command line


def _run(argv):
    import io

    out = io.StringIO()
    try:
        code = main(argv, out=out)
    except SystemExit as e:
        code = e.code
    return code, out.getvalue()


def test_cli_picks_the_format_by_extension(tmp_path, capsys):
    code, out = _run(["lint", str(CORPUS / "where_leaky_b2.xml")])
    assert code == 0 and "(OpenVINO IR v11, shapes from openvino " in out and "target openvino" in out, out
    assert out.rstrip().endswith("checked 3 broadcasting nodes of 7: ok")
    code, out = _run(["lint", str(CORPUS / "edited_add_none.xml"), "--json"])
    d = json.loads(out)
    assert code == 1 and (d["format"], d["target"], d["ok"]) == ("openvino-ir", "openvino", False)
    assert d["reader"].startswith("the .xml's port dims (openvino refused the IR: ")
    assert [f["kind"] for f in d["findings"]] == ["invalid"]
    xml = tmp_path / "elsewhere.xml"
    xml.write_bytes((CORPUS / "expand_input.xml").read_bytes())
    code, out = _run(["lint", str(xml), "--bin", str(CORPUS / "expand_input.bin")])
    assert code == 0, out
    capsys.readouterr()
    for argv, message in (([str(xml), "--target", "onnx"], "linted for target openvino only"),
                          (["examples/legacy_add.onnx", "--bin", str(xml)], "--bin: the weights of an OpenVINO IR")):
        code, out = _run(["lint", *argv])
        err = capsys.readouterr().err
        assert (code, out) == (2, "") and err.count("\n") == 1 and message in err, err


# --------------------------------------------------------------------------- the .xml alone


def _net(layer_type: str, data: str, a_dims: str, b_dims: str, a_shape: str = "2,3,4") -> bytes:
    """An IR of two Parameters into one layer."""
    return (f'<net version="11"><layers>'
            f'<layer id="0" name="a" type="Parameter" version="opset1"><data shape="{a_shape}" element_type="f32"/>'
            f'<output><port id="0" precision="FP32">{a_dims}</port></output></layer>'
            f'<layer id="1" name="b" type="Parameter" version="opset1"><data shape="" element_type="f32"/>'
            f'<output><port id="0" precision="FP32">{b_dims}</port></output></layer>'
            f'<layer id="2" name="n" type="{layer_type}" version="opset1"><data {data}/><input>'
            f'<port id="0" precision="FP32">{a_dims}</port><port id="1" precision="FP32">{b_dims}</port></input>'
            f'</layer></layers><edges><edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>'
            f'<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/></edges></net>').encode()


def _dims(*ds) -> str:
    return "".join(f"<dim>{d}</dim>" for d in ds)


#: (layer type, its <data> attributes, A's port dims, B's, A's Parameter shape) -> (attrs read, shapes read, kinds)
XML_ALONE = [
    (("Add", 'auto_broadcast="pdpd"', _dims(2, 3, 4), _dims(3, 4)),  # no axis: 0, as OpenVINO's reader takes it
     ({"auto_broadcast": "pdpd", "axis": 0}, ((2, 3, 4), (3, 4)), ["invalid"])),
    (("Add", 'auto_broadcast="pdpd" axis="1"', _dims(2, 3, 4), _dims(3, 4)),  # "axis": not a spelling OpenVINO reads
     ({"auto_broadcast": "pdpd", "axis": 0}, ((2, 3, 4), (3, 4)), ["invalid"])),
    (("Multiply", 'auto_broadcast="pdpd" auto_broadcast.auto_broadcast_axis="-1"', _dims(2, 3, 4), _dims(3, 4)),
     ({"auto_broadcast": "pdpd", "axis": -1}, ((2, 3, 4), (3, 4)), [])),
    (("Add", 'auto_broadcast="numpy"', _dims(-1, 3, 4), _dims(3, 4)),  # -1: a dynamic dim
     ({"auto_broadcast": "numpy"}, ((bcast.core.dims.UNKNOWN, 3, 4), (3, 4)), [])),
    (("Add", 'auto_broadcast="numpy"', _dims(-1, 3, 4), _dims(5, 4)),
     ({"auto_broadcast": "numpy"}, ((bcast.core.dims.UNKNOWN, 3, 4), (5, 4)), ["invalid"])),
    (("Add", 'auto_broadcast="numpy"', _dims(2, -1), _dims(2, 3)),  # broadcasts only if A[1] is 3 or 1
     ({"auto_broadcast": "numpy"}, ((2, bcast.core.dims.UNKNOWN), (2, 3)), ["unproven"])),
    (("Add", 'auto_broadcast="numpy"', "", _dims(3, 4), "..."),  # a Parameter of dynamic rank: no dims, not a scalar
     ({"auto_broadcast": "numpy"}, (None, (3, 4)), ["unknown"])),
    (("Select", 'auto_broadcast="none"', _dims(2, 3), _dims(2, 3)),  # two inputs of three: the rule refuses
     ({"auto_broadcast": "none"}, ((2, 3), (2, 3)), ["invalid"])),
    (("PReLU", "", _dims(1, 3, 4, 4), _dims(3)), ({}, ((1, 3, 4, 4), (3,)), [])),  # the IR's spelling of PRelu
    (("Add", 'auto_broadcast="bogus"', _dims(2, 3), _dims(3)),
     ({"auto_broadcast": "bogus"}, ((2, 3), (3,)), ["invalid"])),
]


@pytest.mark.parametrize("layer, expected", XML_ALONE, ids=[f"{r[0][0]} {r[0][1]} {i}" for i, r in
                                                             enumerate(XML_ALONE)])
def test_the_xml_alone(layer, expected, tmp_path):
    attrs, shapes, kinds = expected
    (node,) = ir_model.parse(_net(*layer), "m.xml").nodes
    assert (node.attrs, node.shapes) == (attrs, shapes)
    xml = tmp_path / "m.xml"
    xml.write_bytes(_net(*layer))
    assert [f.kind for f in lint_ir(xml, reader="xml")] == kinds


def test_mutated_irs_are_a_report_or_one_line(tmp_path):
    """Truncated, bit-flipped and digit-edited corpus IRs (seeded): lint gives a report or one InputError line,
    never another exception (a run of 300 such mutations: 218 refused, 82 reports)."""
    import random

    rng = random.Random(1)
    names = sorted(EXPECTED)
    outcomes = set()
    for _ in range(40):
        name = rng.choice(names)
        data = bytearray((CORPUS / f"{name}.xml").read_bytes())
        (tmp_path / "m.bin").write_bytes((CORPUS / f"{name}.bin").read_bytes())
        how = rng.randrange(3)
        if how == 0:
            data = data[:rng.randrange(len(data))]
        elif how == 1:
            for _ in range(rng.randrange(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        else:
            digits = [j for j, b in enumerate(data) if 48 <= b <= 57]
            for _ in range(rng.randrange(1, 3)):
                data[rng.choice(digits)] = rng.choice(b"0123456789-")
        (tmp_path / "m.xml").write_bytes(bytes(data))
        try:
            lint_ir_report(tmp_path / "m.xml")
            outcomes.add("report")
        except InputError as e:
            assert "\n" not in str(e), str(e)
            outcomes.add("refused")
    assert outcomes == {"report", "refused"}


def test_numpy_alone_lints_an_ir():
    """Neither onnx nor openvino: the command line lints an IR from its .xml (a fresh process)."""
    import subprocess

    code = ("import sys; sys.modules['onnx'] = sys.modules['openvino'] = None; from bcast.cli import main; "
            f"code = main(['lint', {str(CORPUS / 'edited_ones_pdpd.xml')!r}]); "
            "assert not [m for m in sys.modules if m.startswith(('onnx', 'openvino')) and sys.modules[m]]; "
            "sys.exit(code)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr == "", r.stderr[-2000:]
    assert "shapes from the .xml's port dims (the openvino module is not installed)" in r.stdout
    assert "differs (openvino, pdpd)" in r.stdout
