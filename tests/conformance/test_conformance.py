"""bcast conformance: the matrix against the installed runtimes, its JSON, text and HTML report.

One run of the default matrix (seed examples + 24 random cases per rule) is shared by the tests;
the HTML page is checked in a real headless Chromium (a screenshot whose matrix colors are there)
and, everywhere, by parsing it.
"""

import io
import json
import os
import shutil
import subprocess
import zlib
from html.parser import HTMLParser

import pytest

import bcast
from bcast.conformance import matrix as conformance
from bcast.cli import main
from bcast.conformance.html import VERDICT_COLORS, render_html, write_html


@pytest.fixture(scope="module")
def report():
    return conformance.run()


def test_every_check_agrees_or_is_explained(report):
    s = report["summary"]
    assert report["ok"] and s["unexplained"] == 0, [d for d in report["disagreements"] if not d["explained"]]
    assert s["checks"] == s["agree"] + s["explained"] + s["unexplained"] + s["not_applicable"]
    assert s["agree"] > 800 and s["explained"] > 20  # the registry's deviations do show up
    assert s["cases"] == len(report["cases"]) == sum(1 for r in bcast.testing.seeds.rows()) + 24 * len(bcast.RULES)


def test_columns_come_from_the_op_tables(report):
    cols = {c["id"]: c for c in report["columns"]}
    assert list(cols) == list(conformance.COLUMNS)
    assert cols["openvino"]["rules"] == ["numpy", "unidirectional", "none", "pdpd", "bidirectional", "explicit",
                                          "openvino-select", "openvino-prelu", "openvino-broadcast-pdpd"]
    assert cols["onnxruntime"]["rules"] == ["numpy", "unidirectional", "none", "bidirectional", "onnx-legacy",
                                             "onnx-gemm"]
    assert cols["ncnn"]["rules"] == ["ncnn"]
    cells = {(c["rule"], c["column"]): c for c in report["cells"]}
    assert cells["paddle", "openvino"]["status"] == "not-applicable"  # no runtime runs Paddle's rule
    assert (cells["onnx-legacy", "onnxruntime"]["op"], cells["onnx-legacy", "onnxruntime"]["opset"]) == ("Add", 6)
    assert cells["none", "reference"]["op"] == "Max" and cells["none", "openvino"]["op_attrs"] == {
        "auto_broadcast": "none"}


def test_disagreements_name_their_deviation(report):
    by_dev = {}
    for d in report["disagreements"]:
        assert d["explained"] and d["deviations"]
        for dev in d["deviations"]:
            by_dev.setdefault(dev, set()).add(d["column"])
    assert by_dev["onnxruntime-no-legacy-opsets"] == {"onnxruntime"}
    assert by_dev["openvino-prelu-unchecked"] == {"openvino", "openvino-cpu"}
    assert "ncnn" in by_dev["ncnn-garbage"]
    crash = [c for c in report["cases"] for chk in c["checks"].values() if chk.get("runtime") is None
             and chk["verdict"] == "explained"]
    assert crash and all(c["shapes"] == [[], []] for c in crash)  # Broadcast of a scalar to []: not run


def test_refusals_agree_both_ways(report):
    both = [chk for c in report["cases"] for chk in c["checks"].values() if chk.get("why") == "both refuse"]
    assert len(both) > 50


def test_json_is_documented_and_serializable(report):
    data = json.loads(json.dumps(report))
    assert set(data) == {"seed", "random_cases_per_rule", "rules", "columns", "cells", "cases", "disagreements",
                         "summary", "ok", "failures"}
    assert set(data["columns"][0]) == {"id", "runtime", "title", "compares", "version", "status", "reason", "rules"}
    assert set(data["cells"][0]) == {"rule", "column", "op", "opset", "op_attrs", "status", "cases", "agree",
                                     "explained", "unexplained", "not_applicable"}
    case = data["cases"][0]
    assert set(case) == {"id", "rule", "source", "shapes", "attrs", "bcast", "checks"}
    chk = next(iter(case["checks"].values()))
    assert {"op", "verdict", "why", "runtime", "bcast_run", "deviations"} <= set(chk)


def test_reproducible_and_filtered():
    a = conformance.run(rules=["pdpd", "ncnn"], runtimes=["openvino"], cases=6, seed=5)
    b = conformance.run(rules=["pdpd", "ncnn"], runtimes=["openvino"], cases=6, seed=5)
    assert a == b
    assert {c["status"] for c in a["columns"] if c["runtime"] != "openvino"} == {"skipped"}
    assert {c["rule"] for c in a["cases"]} == {"pdpd", "ncnn"}
    cells = {(c["rule"], c["column"]): c["status"] for c in a["cells"]}
    assert cells["ncnn", "ncnn"] == "skipped" and cells["ncnn", "openvino"] == "not-applicable"


def test_missing_runtime_is_skipped(monkeypatch):
    real = conformance.importlib.util.find_spec
    monkeypatch.setattr(conformance.importlib.util, "find_spec", lambda m: None if m == "ncnn" else real(m))
    r = conformance.run(rules=["ncnn", "numpy"], cases=2)
    col = next(c for c in r["columns"] if c["id"] == "ncnn")
    assert (col["status"], col["reason"]) == ("skipped", "not installed") and r["ok"] and r["failures"] == []
    # only ncnn runs the ncnn rule: with ncnn missing nothing is checked, and that is no pass
    r = conformance.run(rules=["ncnn"], cases=2)
    assert not r["ok"] and r["summary"]["unexplained"] == 0
    assert r["failures"] == ["nothing checked: no selected runtime runs the rules ncnn"]
    # a runtime asked for by name and not installed fails the run, unless missing runtimes are allowed
    r = conformance.run(rules=["numpy"], runtimes=["ncnn", "reference"], cases=2)
    assert not r["ok"] and r["failures"] == ["ncnn is not installed (pip install ncnn)"]
    assert conformance.run(rules=["numpy"], runtimes=["ncnn", "reference"], cases=2, allow_missing=True)["ok"]


def test_no_runtime_installed_is_a_failure_not_a_pass(monkeypatch):
    """A CI job must not pass having checked nothing: exit 1 and a FAILED line, unless --allow-missing."""
    monkeypatch.setattr(conformance.importlib.util, "find_spec", lambda m: None)
    out = io.StringIO()
    assert main(["conformance", "--rules", "numpy", "--cases", "2"], out) == 1
    assert out.getvalue().rstrip().endswith(
        "FAILED: nothing checked: no selected runtime is installed (pip install onnxruntime 'bcast[onnx]' openvino "
        "ncnn 'bcast[tflite]' 'bcast[torch]' 'bcast[paddle]' 'bcast[mnn]' 'bcast[coreml]' jax)")
    out = io.StringIO()
    assert main(["conformance", "--rules", "numpy", "--cases", "2", "--json"], out) == 1
    d = json.loads(out.getvalue())
    assert d["ok"] is False and d["failures"][0].startswith("nothing checked")
    assert main(["conformance", "--rules", "numpy", "--cases", "2", "--allow-missing"], io.StringIO()) == 0
    page = render_html(conformance.run(rules=["numpy"], cases=2))
    assert "<b>FAILED</b>: nothing checked: no selected runtime is installed" in page
    assert "unexplained disagreement" not in page and "Every disagreement is explained" not in page


@pytest.mark.parametrize("argv, message", [
    (["--runtimes", "tensorrt"], "unknown runtime 'tensorrt'"),
    (["--rules", "nope"], "unknown rule 'nope'"),
    (["--cases", "-1"], "cases must be an integer from 0 to 10000"),
])
def test_cli_bad_input(argv, message, capsys):
    assert main(["conformance", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--html", ""], "--html '': give a file name"),
    (["--rules", ""], "--rules '' names nothing"),
    (["--rules", " , "], "--rules ' , ' names nothing"),
    (["--runtimes", ""], "--runtimes '' names nothing"),
])
def test_cli_empty_options_are_refused(argv, message, capsys):
    """Was: silently ignored (--html "" wrote nothing, --rules "" / --runtimes "" checked nothing, exit 0)."""
    assert main(["conformance", "--cases", "1", *argv], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bcast conformance: error: ") and message in err, err


def test_cli_html_to_a_folder_is_refused_before_the_run(tmp_path, capsys, monkeypatch):
    """Was: a traceback after the whole run, with the temporary file written in the folder's parent."""
    monkeypatch.setattr(conformance, "run", lambda **k: pytest.fail("ran the matrix"))
    (tmp_path / "out").mkdir()
    for target in (tmp_path / "out", f"{tmp_path / 'out'}/", tmp_path / "nowhere" / "r.html"):
        assert main(["conformance", "--html", str(target)], io.StringIO()) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(("bcast conformance: error: --html ",
                                                         "bcast conformance: error: cannot write ")), err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["out"]


def test_cli_cases_zero_runs_the_seed_examples_only(capsys):
    """Was: hypothesis's InvalidArgument traceback (max_examples=0)."""
    out = io.StringIO()
    assert main(["conformance", "--rules", "numpy", "--runtimes", "reference", "--cases", "0", "--json"], out) == 0
    d = json.loads(out.getvalue())
    assert d["summary"]["cases"] == sum(1 for r in bcast.testing.seeds.rows() if r[1] == "numpy") > 0
    assert {c["source"] for c in d["cases"]} != {"random"} and all(c["source"] != "random" for c in d["cases"])


def test_cli_text_json_and_html(tmp_path):
    out = io.StringIO()
    html = tmp_path / "report.html"
    assert main(["conformance", "--rules", "unidirectional", "--cases", "8", "--html", str(html)], out) == 0
    text = out.getvalue()
    assert text.startswith("bcast conformance: ")
    assert "unidirectional" in text and "explained:\n  onnxruntime-prelu-bidirectional (onnxruntime)" in text
    assert html.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left
    out = io.StringIO()
    assert main(["conformance", "--rules", "unidirectional", "--cases", "8", "--json"], out) == 0
    assert json.loads(out.getvalue())["rules"] == ["unidirectional"]


def test_unexplained_disagreement_exits_1_and_stands_out(monkeypatch):
    monkeypatch.setattr(conformance, "notes_for", lambda *a, **k: [])  # an empty registry
    out = io.StringIO()
    assert main(["conformance", "--rules", "none", "--runtimes", "reference", "--cases", "4"], out) == 1
    assert "\nUNEXPLAINED (" in out.getvalue() and "Max" in out.getvalue()


# -- the HTML page ----------------------------------------------------------------------------------


class _Page(HTMLParser):
    """The matrix cells (rule, background color, link) and every case panel's rows."""

    def __init__(self):
        super().__init__()
        self.cells, self.panels, self.external = [], {}, []
        self._row_rule = None
        self._panel, self._depth = None, 0
        self._in_rule = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("link", "img", "script", "iframe") and (a.get("src") or a.get("href")):
            self.external.append(a)
        if tag == "th" and a.get("class") == "rulename":
            self._in_rule = True
        if tag == "td" and "style" in a and self._row_rule:
            self.cells.append([self._row_rule, a["style"], None])
        if tag == "a" and a.get("data-cell") and self.cells:
            self.cells[-1][2] = a["data-cell"]
        if tag == "details":
            self._depth += 1
        if tag == "details" and a.get("class") == "cell":
            self._panel, self._depth = a["id"], 1
            self.panels[self._panel] = 0
        if tag == "tr" and self._panel:
            self.panels[self._panel] += 1

    def handle_endtag(self, tag):
        if tag == "details":
            self._depth -= 1
            if not self._depth:
                self._panel = None

    def handle_data(self, data):
        if self._in_rule:
            self._row_rule, self._in_rule = data, False


def test_html_page_parses_into_the_matrix_and_its_cases(report):
    page = render_html(report)
    p = _Page()
    p.feed(page)
    assert not p.external and "http://" not in page and "https://" not in page
    assert len(p.cells) == len(report["rules"]) * len(report["columns"])
    for (rule, style, link), cell in zip(p.cells, report["cells"]):
        assert rule == cell["rule"]
        assert VERDICT_COLORS[cell["status"]][0] in style
        if cell["status"] in ("agree", "explained", "unexplained"):
            assert p.panels[link] == cell["cases"] + 1  # a header row and one row per case
    assert {c["status"] for c in report["cells"]} >= {"agree", "explained", "not-applicable"}


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_html_never_replaces_a_device_or_a_fifo(kind, tmp_path, capsys):
    """Was: --html /dev/null renamed the page over /dev/null (as root: /dev/null became a regular file).
    The device here is a null device made in tmp_path, so that a regression never touches /dev/null."""
    import stat

    target = str(tmp_path / kind)
    if kind == "fifo":
        os.mkfifo(target)
    else:
        try:
            os.mknod(target, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except (PermissionError, AttributeError):
            pytest.skip("making a device node needs root")
    before = os.lstat(target)
    assert main(["conformance", "--html", target, "--rules", "numpy", "--cases", "0"], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err == (f"bcast conformance: error: --html {target}: not a regular file (a device, a FIFO...); "
                   "give a file name\n")
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)


def test_a_runtime_not_selected_is_not_called_missing(monkeypatch):
    """Was: with no runtime installed, `--runtimes ncnn` called every column "not installed" and said
    `pip install onnxruntime onnx openvino ncnn` where only ncnn was asked for."""
    monkeypatch.setattr(conformance, "_versions", lambda: {})
    report = conformance.run(runtimes=["ncnn"], cases=0)
    reasons = {c["id"]: c["reason"] for c in report["columns"]}
    assert reasons == {**{cid: "not selected" for cid in reasons if cid != "ncnn"}, "ncnn": "not installed"}
    assert report["failures"] == ["ncnn is not installed (pip install ncnn)",
                                  "nothing checked: no selected runtime is installed (pip install ncnn)"]


def test_html_is_written_atomically(tmp_path, report):
    target = tmp_path / "r.html"
    target.write_text("old")
    write_html(report, str(target))
    assert target.read_text().startswith("<!DOCTYPE html>") and len(os.listdir(tmp_path)) == 1
    with pytest.raises(bcast.InputError, match="cannot write"):
        write_html(report, str(tmp_path / "missing" / "r.html"))


def _png_pixels(path):
    """RGB rows of an 8-bit RGB/RGBA PNG (filters undone), with zlib only."""
    import numpy as np

    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += n + 12
    w, h, depth, color = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big"), header[8], header[9]
    assert depth == 8 and color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * bpp)
    out = np.zeros((h, w * bpp), np.int32)
    prev = np.zeros(w * bpp, np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        cur = line.copy()
        if f == 1:
            for x in range(bpp, w * bpp):
                cur[x] = (line[x] + cur[x - bpp]) & 255
        elif f == 2:
            cur = (line + prev) & 255
        elif f == 3:
            for x in range(w * bpp):
                cur[x] = (line[x] + ((cur[x - bpp] if x >= bpp else 0) + prev[x]) // 2) & 255
        elif f == 4:
            for x in range(w * bpp):
                a, b, c = (cur[x - bpp] if x >= bpp else 0), prev[x], (prev[x - bpp] if x >= bpp else 0)
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                cur[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out[y], prev = cur, cur
    return out.reshape(h, w, bpp)[:, :, :3]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium: the HTML is checked by parsing it instead")
def test_html_in_headless_chromium(report, tmp_path):
    np = pytest.importorskip("numpy")
    page, shot = tmp_path / "report.html", tmp_path / "shot.png"
    write_html(report, str(page))
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900", f"--screenshot={shot}",
           page.as_uri()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    pixels = _png_pixels(shot)
    assert pixels.shape[:2] == (900, 1280)

    def count(hex_color):
        rgb = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)])
        return int((np.abs(pixels - rgb).sum(axis=2) <= 6).sum())

    # The matrix is drawn: large areas of the agree and explained colors, and the page is not one color.
    assert count(VERDICT_COLORS["agree"][0]) > 20000
    assert count(VERDICT_COLORS["explained"][0]) > 5000
    assert count(VERDICT_COLORS["unexplained"][0]) < 500  # only the legend's chip
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50


def test_columns_speak_for_runtimes_of_the_registry():
    """A column names the runtimes whose records explain it as members of the frameworks' Runtime enums."""
    from bcast.frameworks.deviations import DEVIATIONS, Runtime

    known = {d.runtime for d in DEVIATIONS}
    for c in conformance.COLUMNS.values():
        assert c.deviation_runtimes and all(isinstance(r, Runtime) and r in known for r in c.deviation_runtimes), c
