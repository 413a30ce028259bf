"""Proof by conversion: lint's verdict for ``ncnn`` (pnnx -> ncnn) and ``openvino`` equals what converting and
running each corpus model really gives (tests/support/convert_harness.py, tests/models/convert_corpus/).

- ``test_lint_matches_recorded_outcomes``: lint against the outcomes recorded in
  ``convert_corpus/observed.json`` (no converter needed: runs everywhere).
- ``test_lint_matches_conversion``: converts and runs every model now, one test per model and path (pnnx +
  ncnn, OpenVINO; skipped where they are not installed), checks the record is
  still what happens, and that lint predicts each outcome: zero false positives,
  zero false negatives.  The recorded outcomes' confusion table is printed (``pytest -s``).
"""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("onnx")

from support import convert_harness as H  # noqa: E402

from bcast import lint  # noqa: E402

sys.path.insert(0, H.CORPUS)  # make_corpus, the script that writes the corpus

PATHS = ("ncnn", "openvino")


def _table(path, rows) -> str:
    return f"{path}: {len(rows)} models\n" + H.confusion(rows)


def _mismatches(rows) -> list:
    return [(os.path.basename(m), "lint ok" if p else "lint finding", "observed ok" if o else "observed wrong")
            for m, p, o in rows if p != o]


def test_corpus_has_the_patterns_at_both_batches():
    import make_corpus

    files = sorted(os.path.basename(m) for m in H.corpus())
    assert files == sorted(n + ".onnx" for n in make_corpus.names())
    assert len(files) >= 30 and sum(os.path.getsize(m) for m in H.corpus()) < 200_000
    assert set(H.recorded()["ncnn"]) == set(files) == set(H.recorded()["openvino"])


def test_corpus_script_regenerates_the_files():
    import make_corpus

    for p in make_corpus.PATTERNS[:6]:
        for b in make_corpus.BATCHES:
            with open(os.path.join(H.CORPUS, f"{p.__name__}_b{b}.onnx"), "rb") as f:
                saved = f.read()
            m = make_corpus.build(p, b)
            m.doc_string = (p.__doc__ or "").strip()
            assert m.SerializeToString() == saved, p.__name__


@pytest.mark.parametrize("path", PATHS)
def test_lint_matches_recorded_outcomes(path, capsys):
    record = H.recorded()[path]
    rows = []
    for m in H.corpus():
        predicted, _ = H.predicted_ok(m, path)
        rows.append((m, predicted, record[os.path.basename(m)] == "ok"))
    with capsys.disabled():
        print("\n" + _table(path + " (recorded)", rows))
    assert _mismatches(rows) == []
    assert any(not o for _, _, o in rows) and any(o for _, _, o in rows)  # both verdicts occur


@pytest.mark.parametrize("path, name", [(p, os.path.basename(m)) for p in PATHS for m in H.corpus()],
                         ids=lambda v: v.removesuffix(".onnx"))  # one test a model: pytest -n spreads them
def test_lint_matches_conversion(path, name):
    if not H.have(path):
        pytest.skip(f"{path}: its converter/runtime is not installed (pnnx: pip install --no-deps pnnx==20261020)")
    m = os.path.join(H.CORPUS, name)
    o = H.observe(m, path)
    assert _mismatches([(m, H.predicted_ok(m, path)[0], o.ok)]) == []
    assert o.kind == H.recorded()[path][name], (name, o.detail)  # else the record is stale


def test_findings_name_the_converter_behaviour():
    """The ncnn findings say what pnnx/ncnn do, one model per behaviour."""
    def reasons(name):
        return " | ".join(f.reason for f in lint(os.path.join(H.CORPUS, name), "ncnn"))

    assert "torch.gt, a layer ncnn does not have" in reasons("where_leaky_b1.onnx")
    assert "torch.gt" in reasons("rank0_compare_b2.onnx")  # rank 0: no IndexError
    assert "BinaryOp POW" in reasons("cube_b1.onnx") and reasons("square_b1.onnx") == ""
    assert "ncnn's PReLU applies it per channel" in reasons("nhwc_prelu_11c_b2.onnx")
    assert "ReduceMean" in reasons("batch_stats_conv_b2.onnx") and reasons("film_shared_b2.onnx") == ""
    assert reasons("batch_stats_conv_b1.onnx") == ""  # a batch of 1: nothing to broadcast across
    assert "5-D blob" in reasons("rank5_table_b1.onnx") and reasons("rank5_scale_b1.onnx") == ""
    for fine in ("hw_bias_plain_b2.onnx", "linear_stem_b1.onnx", "attention_mask_b2.onnx", "seq_first_b2.onnx"):
        assert reasons(fine) == "", fine  # pnnx inserts the reshape (onnx2ncnn's raw BinaryOp would not)
    assert lint(os.path.join(H.CORPUS, "hw_bias_plain_b2.onnx"), "onnx2ncnn")


#: The flagged models whose findings have an exact rewrite (every other flagged model keeps its findings).
FIXABLE = {"ncnn": {f"{p}_b{b}.onnx" for p in ("cube", "nhwc_prelu_11c", "nhwc_prelu_c", "nhwc_prelu_square")
                    for b in (1, 2)},
           "openvino": {"nhwc_prelu_square_b1.onnx", "nhwc_prelu_square_b2.onnx"}}


def _rewritten(path, tmp_path):
    """{model name: (rewrite report, written path)} for every corpus model."""
    from bcast import rewrite

    out = {}
    for m in H.corpus():
        name = os.path.basename(m)
        r = rewrite(m, path, str(tmp_path / f"{path}_{name}"))
        out[name] = (m, r)
    return out


@pytest.mark.parametrize("path", PATHS)
def test_rewrite_fixes_every_fixable_model_and_leaves_the_rest(path, tmp_path):
    pytest.importorskip("onnxruntime")
    record = H.recorded()[path]
    fixed = set()
    for name, (m, r) in _rewritten(path, tmp_path).items():
        if record[name] == "ok":
            # nothing to fix: the model is left alone (a `values` finding only says where a kernel may differ)
            assert r.changes == [] and [f for f in r.findings if f.kind in H.PREDICTS_WRONG] == [], name
            continue
        if not [f for f in r.findings if f.kind in H.PREDICTS_WRONG]:
            fixed.add(name)
            feeds = H.feeds_for(m)
            assert H.compare(H.run_ort(r.out, feeds), H.run_ort(m, feeds)).ok, name  # the same function
        else:
            assert r.changes == [], name
    assert fixed == FIXABLE[path]


@pytest.mark.parametrize("path", PATHS)
def test_rewritten_models_convert_and_compute_right(path, tmp_path):
    if not H.have(path):
        pytest.skip(f"{path}: its converter/runtime is not installed")
    from bcast import rewrite

    for name in sorted(FIXABLE[path]):
        out = str(tmp_path / name)
        rewrite(os.path.join(H.CORPUS, name), path, out)
        o = H.observe(out, path)
        assert o.ok, (name, o)


def test_harness_carries_external_data(tmp_path):
    """torch 2.13's default exporter (dynamo) writes the weights beside the model (MODEL.onnx.data): the pnnx
    path must convert the model with them (it lost them: pnnx crashed on every such export)."""
    if not H.have("ncnn"):
        pytest.skip("pnnx/ncnn not installed")
    import onnx

    m = onnx.load(os.path.join(H.CORPUS, "channel_scale_b2.onnx"))
    path = str(tmp_path / "ext.onnx")
    onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location="ext.onnx.data",
              size_threshold=0)
    assert H._external_files(path) == ["ext.onnx.data"]
    assert H.observe(path, "ncnn").kind == H.recorded()["ncnn"]["channel_scale_b2.onnx"] == "ok"
    assert lint(path, "ncnn") == []
    # pnnx reads external data only from MODEL.onnx.data (load_onnx.cpp): any other name, no weights
    other = str(tmp_path / "other.onnx")
    onnx.save(m, other, save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
              size_threshold=0)
    assert H.observe(other, "ncnn").kind != "ok"
    (f,) = lint(other, "ncnn")
    assert f.kind == "unsupported" and "'other.onnx.data'" in f.reason, f.reason
    assert lint(other, "openvino") == [] and H.observe(other, "openvino").ok
