"""The README's ``--json`` key lists are the real ones: each documented ``{"a", "b": [{"c"}]}`` is
parsed from the README and compared, key for key and level by level, with what the command prints,
so the README cannot drift from the code."""

import io
import json
import pathlib
import re

import pytest

from bcast.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _documented(anchor: str, nth: int = 0) -> str:
    """The ``{...}`` the README documents right after ``anchor`` (its ``nth`` one), as one line."""
    start = README.index(anchor)
    for _ in range(nth + 1):
        start = README.index("`{", start) + 1
    depth = 0
    for end in range(start, len(README)):
        depth += {"{": 1, "}": -1}.get(README[end], 0)
        if depth == 0:
            return " ".join(README[start:end + 1].split())
    raise AssertionError(f"unbalanced braces after {anchor!r}")


def parse(text: str):
    """``{"a", "b": [{"c"}], "d": {"e"}, k: {"f"}, "g": "literal"}`` -> a dict of key -> spec: None (any
    value), a dict (an object), a list of one dict (a list of objects); a bare name (``k``) is any key."""
    tokens = re.findall(r'"[^"]*"|[A-Za-z_][A-Za-z_0-9]*|[{}\[\]:,]', text)
    pos = 0

    def take(expected=None):
        nonlocal pos
        tok = tokens[pos]
        assert expected is None or tok == expected, (expected, tok, text)
        pos += 1
        return tok

    def value():
        if tokens[pos] == "{":
            return obj()
        if tokens[pos] == "[":
            take("[")
            inner = obj()
            take("]")
            return [inner]
        take()  # a literal: "untranslatable"
        return None

    def obj():
        take("{")
        out = {}
        while True:
            key = take()
            key = key.strip('"') if key.startswith('"') else "*"
            out[key] = None
            if tokens[pos] == ":":
                take(":")
                out[key] = value()
            if take() == "}":
                return out

    return obj()


def check(spec, real, where):
    """``real`` has exactly ``spec``'s keys, and its documented nested objects too."""
    if real is None or spec is None:
        return 0
    if isinstance(spec, list):
        assert isinstance(real, list), (where, real)
        return sum(check(spec[0], item, where + "[]") for item in real)
    assert isinstance(real, dict), (where, real)
    if set(spec) == {"*"}:  # {column: {...}}
        return sum(check(spec["*"], v, f"{where}.{k}") for k, v in real.items())
    assert sorted(real) == sorted(spec), f"{where}: the README says {sorted(spec)}, --json prints {sorted(real)}"
    return 1 + sum(check(spec[k], real[k], f"{where}.{k}") for k in spec)


def run(argv):
    out = io.StringIO()
    try:
        main(argv, out=out)
    except SystemExit:
        pass
    return json.loads(out.getvalue())


# (what the README documents: an anchor phrase before it and which `{` after it; the command; where in
# its JSON that object is)
CASES = {
    "compare": ("### `bcast compare", 0, ["compare", "2,3,4,5", "3,4", "--axis", "1", "--json"], []),
    "shape ok": ("### `bcast shape", 0, ["shape", "N,3", "M,1", "--json"], []),
    "shape ncnn deviation": ("### `bcast shape", 0, ["shape", "2,3,4", "3,4", "--rule", "ncnn", "--json"], []),
    "shape error": ("### `bcast shape", 0, ["shape", "2,3", "4", "--json"], []),
    "shape error detail": ("### `bcast shape", 1, ["shape", "2,3", "4", "--json"], ["error"]),
    "explain ok": ("### `bcast shape", 0, ["explain", "2,3", "3", "--json"], []),
    "explain error": ("### `bcast shape", 0, ["explain", "2,3,4", "3,4", "--rule", "ncnn", "--json"], []),
    "translate": ("### `bcast translate", 0, ["translate", "2,3", "3,1", "--rule", "pdpd", "--axis", "1", "--to",
                                              "openvino", "--json"], []),
    "translate untranslatable": ("### `bcast translate", 0, ["translate", "2,3,4,5,6", "6", "--to", "ncnn",
                                                             "--json"], []),
    "translate untranslatable error": ("### `bcast translate", 1, ["translate", "2,3,4,5,6", "6", "--to", "ncnn",
                                                                   "--json"], ["error"]),
    "translate not broadcastable": ("### `bcast translate", 0, ["translate", "2,3", "4", "--to", "onnx", "--json"], []),
    "lint": ("`--json` gives `{\"model\", \"target\", \"opset\"", 0,
             ["lint", "examples/legacy_add.onnx", "--json"], []),
    "lint finding": ("`--json` gives `{\"model\", \"target\", \"opset\"", 1,
                     ["lint", "examples/legacy_add.onnx", "--json"], ["findings", 0]),
    "rewrite": ("`--json` gives `{\"model\", \"target\", \"out\"", 0,
                ["rewrite", "examples/scale_prelu.onnx", "--target", "onnx2ncnn", "-o", "{tmp}/o.onnx", "--json"], []),
    "rules": ("### `bcast rules`", 0, ["rules", "--json"], [0]),
    "deviations": ("### `bcast rules`", 1, ["deviations", "--json"], [0]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_documented_json_keys_are_the_real_ones(name, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    anchor, nth, argv, path = CASES[name]
    spec = parse(_documented(anchor, nth))
    real = run([a.format(tmp=tmp_path) for a in argv])
    for step in path:
        real = real[step]
    assert check(spec, real, name) >= 1


def test_conformance_json_keys(monkeypatch):
    pytest.importorskip("onnx")
    monkeypatch.chdir(ROOT)
    real = run(["conformance", "--rules", "numpy,ncnn", "--cases", "2", "--json", "--allow-missing"])
    anchor = "### `bcast conformance`"
    assert check(parse(_documented(anchor, 0)), real, "conformance")
    for nth, key in ((1, "columns"), (2, "cells"), (3, "cases"), (4, "disagreements")):
        assert real[key], key
        assert check([parse(_documented(anchor, nth))], real[key], key), key


def test_deviations_check_json_keys(monkeypatch):
    from bcast.conformance import drift as proofs

    monkeypatch.setattr(proofs, "check", lambda ids=None, _check=proofs.check: _check(["ncnn-garbage"]))
    real = run(["deviations", "--check", "--json"])
    assert check(parse(_documented("`--check --json` prints")), real, "deviations --check")


def test_the_parser_reads_nesting():
    assert parse('{"a", "b": [{"c"}], "d": {k: {"e"}}, "f": "x"}') == {
        "a": None, "b": [{"c": None}], "d": {"*": {"e": None}}, "f": None}
