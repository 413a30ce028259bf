"""The conformance report as one self-contained HTML page (``bcast conformance --html FILE``).

The page holds everything (inline CSS, a few lines of inline JS, no external
resource, nothing fetched): the matrix of rules x runtimes, each cell colored
by its verdict -- agree, explained deviation, unexplained, not applicable,
skipped -- and linked to its cases, each shown with its shapes, attributes,
bcast's answer, the runtime's answer, and the deviation record that explains
a disagreement.  Without JS every cell's cases are a ``<details>`` below the
matrix; the script opens the one a click names.

>>> page = render_html({"seed": 0, "random_cases_per_rule": 0, "rules": [], "columns": [], "cells": [],
...                     "cases": [], "disagreements": [], "ok": True, "summary": {"cases": 0, "checks": 0,
...                     "agree": 0, "explained": 0, "unexplained": 0, "not_applicable": 0}})
>>> page.startswith("<!DOCTYPE html>") and "http" not in page.split("</head>")[0]
True
"""

from __future__ import annotations

import os
import stat
import tempfile
from html import escape

__all__ = ["render_html", "write_html", "VERDICT_COLORS"]

#: Background and text colors of each verdict (cells and case rows).
VERDICT_COLORS = {
    "agree": ("#2f9e5a", "#ffffff"),
    "explained": ("#f0b429", "#3b2a00"),
    "unexplained": ("#d63b3b", "#ffffff"),
    "not-applicable": ("#eef1f4", "#8a96a3"),
    "skipped": ("#dde3e8", "#5b6875"),
}

LABELS = {"agree": "agree", "explained": "explained deviation", "unexplained": "unexplained",
          "not-applicable": "not applicable", "skipped": "runtime not installed"}

SHORT = {"agree": "agree", "explained": "explained", "unexplained": "unexplained", "not-applicable": "n/a"}

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2630;background:#f7f9fb}
header{background:#1d2630;color:#fff;padding:18px 28px}
header h1{margin:0 0 4px;font-size:22px;font-weight:600}
header p{margin:0;color:#c4ced8}
main{padding:18px 28px 40px}
.summary{display:flex;gap:12px;flex-wrap:wrap;margin:0 0 16px}
.stat{background:#fff;border-radius:8px;padding:10px 16px;box-shadow:0 1px 3px rgba(0,0,0,.08);min-width:110px}
.stat b{display:block;font-size:22px}
.legend{display:flex;gap:14px;flex-wrap:wrap;margin:10px 0 16px;font-size:13px}
.chip{display:inline-block;width:14px;height:14px;border-radius:3px;vertical-align:-2px;margin-right:5px}
table.matrix{border-collapse:separate;border-spacing:4px;background:#fff;border-radius:10px;padding:8px;
 box-shadow:0 1px 3px rgba(0,0,0,.08)}
.matrix th{font-weight:600;text-align:left;padding:6px 10px;font-size:13px}
.matrix thead th{text-align:center;vertical-align:bottom}
.matrix thead small{display:block;font-weight:400;color:#6b7885}
.matrix td{padding:0;border-radius:6px;min-width:120px;text-align:center}
.matrix td a,.matrix td span{display:block;padding:9px 10px;color:inherit;text-decoration:none;border-radius:6px}
.matrix td a:hover{outline:3px solid #1d2630}
.matrix td small{display:block;font-size:11px;opacity:.85}
.rulename{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
h2{font-size:17px;margin:26px 0 10px}
details.cell{background:#fff;border-radius:8px;margin:8px 0;box-shadow:0 1px 3px rgba(0,0,0,.08)}
details.cell>summary{cursor:pointer;padding:10px 14px;font-weight:600}
details.cell[open]>summary{border-bottom:1px solid #e3e8ed}
table.cases{border-collapse:collapse;width:100%;font-size:13px;table-layout:fixed}
.cases col.v{width:110px}.cases col.c{width:13%}.cases col.s{width:15%}.cases col.a{width:11%}
.cases col.r{width:12%}
.cases th{background:#f0f3f6;text-align:left;padding:6px 8px;position:sticky;top:0}
.cases td{border-top:1px solid #edf0f3;padding:5px 8px;vertical-align:top}
.cases code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
.verdict{display:inline-block;border-radius:10px;padding:1px 8px;font-size:12px;white-space:nowrap}
.dev b{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-weight:600}
.dev{color:#4a3800}
.muted{color:#7a8794}
.alert{background:#fde8e8;border-left:5px solid #d63b3b;padding:10px 14px;border-radius:6px}
.good{background:#e6f6ec;border-left:5px solid #2f9e5a;padding:10px 14px;border-radius:6px}
"""

JS = """
document.querySelectorAll('a[data-cell]').forEach(function(a){a.addEventListener('click',function(e){
 var d=document.getElementById(a.getAttribute('data-cell'));if(!d)return;e.preventDefault();d.open=true;
 d.scrollIntoView({behavior:'smooth',block:'start'});history.replaceState(null,'','#'+d.id);});});
if(location.hash){var d=document.getElementById(location.hash.slice(1));if(d&&d.tagName==='DETAILS')d.open=true;}
"""


def _shape(s) -> str:
    if s is None:
        return ""
    return "(" + ",".join(str(d) for d in s) + (",)" if len(s) == 1 else ")")


def _chip(verdict: str, text: str | None = None) -> str:
    bg, fg = VERDICT_COLORS[verdict]
    return f'<span class="verdict" style="background:{bg};color:{fg}">{escape(text or LABELS[verdict])}</span>'


def _cell_id(rule: str, column: str) -> str:
    return f"cell-{rule}--{column}"


def _cell(cell: dict) -> str:
    bg, fg = VERDICT_COLORS[cell["status"]]
    style = f' style="background:{bg};color:{fg}"'
    if cell["status"] in ("not-applicable", "skipped"):
        return f'<td{style} title="{escape(LABELS[cell["status"]])}"><span>–</span></td>'
    sub = []
    if cell["explained"]:
        sub.append(f"{cell['explained']} explained")
    if cell["unexplained"]:
        sub.append(f"{cell['unexplained']} unexplained")
    if cell["not_applicable"]:
        sub.append(f"{cell['not_applicable']} n/a")
    detail = f"<small>{escape(cell['op'])} · {escape(', '.join(sub) or 'all agree')}</small>"
    target = _cell_id(cell["rule"], cell["column"])
    return (f'<td{style}><a href="#{target}" data-cell="{target}" title="{escape(LABELS[cell["status"]])}">'
            f'<b>{cell["agree"]}/{cell["cases"]}</b>{detail}</a></td>')


def _answer(d: dict | None) -> str:
    if not d:
        return '<span class="muted">not run</span>'
    if d["ok"]:
        return f"<code>{escape(_shape(d['shape']))}</code>"
    what = "crashed" if d.get("crashed") else "refuses"
    return f'{what}<br><span class="muted">{escape((d.get("error") or "")[:160])}</span>'


def _drift(d: dict) -> str:
    """"; proven on ...; installed ..." where the installed version is not one the record was proven on."""
    here, proven = d.get("installed"), d.get("proven_on") or []
    return f"; proven on {', '.join(proven)}; installed {here}" if here and proven and here not in proven else ""


def _case_row(case: dict, chk: dict) -> str:
    shapes = " ".join(_shape(s) for s in case["shapes"])
    attrs = ", ".join(f"{k}={v}" for k, v in case["attrs"].items() if v is not None) or "—"
    devs = "".join(f'<div class="dev"><b>{escape(d["id"])}</b> ({escape(d["runtime"])}{escape(_drift(d))}): '
                   f'{escape(d["note"])}</div>' for d in chk.get("deviations", []))
    if chk["verdict"] == "agree" and devs:
        devs = f'<details><summary class="muted">registry records here</summary>{devs}</details>'
    bcast_answer = chk.get("bcast_run") or case["bcast"]
    return (f"<tr><td>{_chip(chk['verdict'], SHORT[chk['verdict']])}</td><td><code>{escape(case['id'])}</code><br>"
            f"<span class=\"muted\">{escape(case['source'])}</span></td><td><code>{escape(shapes)}</code></td>"
            f"<td><code>{escape(attrs)}</code></td><td>{_answer(bcast_answer)}</td><td>{_answer(chk.get('runtime'))}"
            f"</td><td>{escape(chk.get('why', ''))}{devs}</td></tr>")


_ORDER = {"unexplained": 0, "explained": 1, "agree": 2, "not-applicable": 3}


def _cell_details(cell: dict, cases: list, column: dict) -> str:
    mine = [(c, c["checks"][cell["column"]]) for c in cases if c["rule"] == cell["rule"]
            and cell["column"] in c["checks"]]
    mine.sort(key=lambda cc: _ORDER[cc[1]["verdict"]])
    op = cell["op"] + (f"-{cell['opset']}" if cell["opset"] else "")
    extra = ", ".join(f"{k}={v}" for k, v in cell["op_attrs"].items())
    rows = "".join(_case_row(c, chk) for c, chk in mine)
    return (f'<details class="cell" id="{_cell_id(cell["rule"], cell["column"])}"><summary>{_chip(cell["status"])} '
            f'<span class="rulename">{escape(cell["rule"])}</span> × {escape(column["title"])} — '
            f'{escape(op)}{escape(f" [{extra}]" if extra else "")}: {cell["agree"]} agree, {cell["explained"]} '
            f'explained, {cell["unexplained"]} unexplained</summary><table class="cases"><colgroup><col class="v">'
            f'<col class="c"><col class="s"><col class="a"><col class="r"><col class="r"><col></colgroup>'
            f'<thead><tr><th>verdict</th>'
            f'<th>case</th><th>shapes</th><th>attributes</th><th>bcast</th><th>{escape(column["id"])}</th>'
            f'<th>why / deviation record</th></tr></thead><tbody>{rows}</tbody></table></details>')


def render_html(report: dict) -> str:
    """The report (:func:`bcast.conformance.matrix.run`) as one HTML page."""
    s = report["summary"]
    cols = report["columns"]
    cells = {(c["rule"], c["column"]): c for c in report["cells"]}
    stats = "".join(f'<div class="stat"><b>{s[k]}</b>{label}</div>' for k, label in (
        ("cases", "cases"), ("checks", "checks"), ("agree", "agree"), ("explained", "explained deviations"),
        ("unexplained", "unexplained")))
    legend = "".join(f'<span><i class="chip" style="background:{VERDICT_COLORS[v][0]}"></i>{escape(LABELS[v])}</span>'
                     for v in VERDICT_COLORS)
    head = "".join(f'<th>{escape(c["title"])}<small>{escape(c["version"] or c["reason"] or "")}</small></th>'
                   for c in cols)
    body = "".join(f'<tr><th class="rulename">{escape(r)}</th>' + "".join(_cell(cells[r, c["id"]]) for c in cols)
                   + "</tr>" for r in report["rules"])
    verdict = "".join(f'<p class="alert"><b>FAILED</b>: {escape(f)}</p>' for f in report.get("failures", ()))
    if s["unexplained"]:
        verdict += (f'<p class="alert"><b>{s["unexplained"]} unexplained disagreement'
                    f'{"s" * (s["unexplained"] != 1)}</b>: a bug in bcast, or a deviation the registry lacks.</p>')
    elif report["ok"]:
        verdict = '<p class="good">Every disagreement is explained by the deviation registry.</p>'

    details = "".join(_cell_details(cells[r, c["id"]], report["cases"], c) for r in report["rules"] for c in cols
                      if cells[r, c["id"]]["status"] not in ("not-applicable", "skipped"))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>bcast conformance</title><style>{CSS}</style></head><body>"
        f"<header><h1>bcast conformance</h1><p>{s['cases']} cases: the seed documents' examples and "
        f"{report['random_cases_per_rule']} random cases per rule (seed {report['seed']}), each run through bcast "
        "and every installed runtime.</p></header><main>"
        f'<div class="summary">{stats}</div>{verdict}<div class="legend">{legend}</div>'
        f'<table class="matrix"><thead><tr><th>rule</th>{head}</tr></thead><tbody>{body}</tbody></table>'
        '<p class="muted">Each cell: cases that agree / cases checked. Click a cell for its cases.</p>'
        f"<h2>Cases</h2>{details}</main><script>{JS}</script></body></html>\n"
    )


def check_html_path(path: str) -> str:
    """``path`` as a file the page can go to, or an InputError: not empty, not a folder, in a folder that is."""
    from ..core.errors import InputError

    if not isinstance(path, str) or not path.strip():
        raise InputError(f"--html {path!r}: give a file name")
    if os.path.isdir(path) or path.endswith(("/", os.sep)):
        raise InputError(f"--html {path}: is a folder; give a file name, e.g. {os.path.join(path, 'report.html')}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"cannot write {path}: no such folder {folder}")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        # the page would replace it (a rename): /dev/null, a FIFO, a socket, as rewrite -o refuses them
        raise InputError(f"--html {path}: not a regular file (a device, a FIFO...); give a file name")
    return folder


def write_html(report: dict, path: str) -> None:
    """Write the page to ``path`` atomically (a temporary file beside it, then a rename)."""
    from ..core.errors import InputError

    folder = check_html_path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".bcast-", suffix=".html", dir=folder)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(render_html(report))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's file is private; a report is an ordinary file
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        raise InputError(f"cannot write {path}: {e.strerror}") from None
    except BaseException:
        os.unlink(tmp)
        raise
