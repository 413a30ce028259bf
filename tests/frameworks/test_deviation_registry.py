"""The deviation registry (src/bcast/frameworks/deviations.py): the records of every framework
(``bcast.frameworks.<name>.deviations``), assembled, with their proofs (``bcast.frameworks.<name>.proofs*``).

Every record has a proof in its framework's proof modules, registered under its id with the shape cases
it runs; each framework's tests/frameworks/test_deviations_<name>.py runs them.
``test_registry_names_these_proofs_and_checks_fire`` ties the two together: every record has a proof,
and every record's ``check`` fires (through :func:`bcast.frameworks.deviations.applicable`) on the very
cases its proof runs -- a record about some ops (``only_ops``) with the op named, and only then.  A
record of values (no ``check``, e.g. ncnn-fast-math) has no shape case; its proof runs the values.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import json
import re

import pytest

import bcast.conformance.drift as proofs
from support.cli import cli
from bcast.frameworks import FRAMEWORKS, _deviation
from bcast.frameworks.deviations import BY_ID, DEVIATIONS, Deviation, Runtime, applicable

DEV = BY_ID


def _ids(findings) -> list:
    return [f.deviation.id for f in findings]


def _rule_attrs(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if k not in ("op", "op_attrs")}


def test_registry_names_these_proofs_and_checks_fire():
    """Every record has a proof and shape cases where its check fires (a record about an op fires only
    when the op is named); a record without a check is about values, not shapes (e.g. ncnn-fast-math):
    it has no shape cases and its proof runs the values themselves."""
    registered = proofs.proofs()
    assert set(registered) == set(DEV), "one proof per registry record, and no other"
    problems = []
    for d in DEVIATIONS:
        module, _, name = proofs.proof_name(d.id).rpartition(".")
        if getattr(importlib.import_module(module), name, None) is not registered[d.id]:
            problems.append(f"{d.id}: proof {name!r} is not the registered function")
        if not module.startswith(f"bcast.frameworks.{d.framework}.proofs"):
            problems.append(f"{d.id}: its proof is not among its framework's ({module})")
        cases = proofs.cases(d.id)
        if d.check is None:
            if cases:
                problems.append(f"{d.id}: a deviation of values (no check) has no shape cases")
            continue
        if not cases:
            problems.append(f"{d.id}: no shape cases for its check")
        for shapes, attrs in cases:
            rule = attrs["rule"]
            if rule not in d.rules:
                problems.append(f"{d.id}: case rule {rule!r} is not one of its rules {d.rules}")
            if d.only_ops and attrs.get("op") not in d.only_ops:
                problems.append(f"{d.id}: case {shapes} names no op of {d.only_ops}")
            found = [f for f in applicable(*shapes, **attrs) if f.deviation.id == d.id]
            if not found:
                problems.append(f"{d.id}: check does not fire for {shapes} {attrs}")
            elif not found[0].note:
                problems.append(f"{d.id}: empty note for {shapes} {attrs}")
            if d.only_ops and d.id in _ids(applicable(*shapes, **_rule_attrs(attrs))):
                problems.append(f"{d.id}: fires for {shapes} {attrs} with no op named")
    # every public function of the proof modules is a registered proof
    for m in proofs.modules():
        module = importlib.import_module(m)
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__ and not name.startswith("_") and fn not in registered.values():
                problems.append(f"{m}.{name} proves no record")
    assert not problems, "\n".join(problems)


def _key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[.+-]", version))


def test_records_say_on_which_versions_they_were_proven():
    for d in DEVIATIONS:
        assert d.proven_on and isinstance(d.proven_on, tuple), d.id
        assert list(d.proven_on) == sorted(set(d.proven_on), key=_key), f"{d.id}: oldest first, no repeats"
        assert d.version == d.proven_on[-1]
        assert d.fixed_in is None or d.fixed_in not in d.proven_on, d.id
        assert d.package in ("onnx", "onnxruntime", "openvino", "ncnn", "ai-edge-litert", "MNN", "coremltools", "torch",
                             "paddlepaddle", "jax"), d.package
        j = d.to_dict()
        assert j["version"] == d.version and j["proven_on"] == list(d.proven_on) and j["fixed_in"] == d.fixed_in
        assert j["test"] == f"tests/frameworks/test_deviations_{d.framework}.py::test_proof_holds[{d.id}]"
        assert proofs.proof_name(d.id).startswith(f"bcast.frameworks.{d.framework}.proofs")


def test_records_are_keyword_records_of_their_frameworks():
    """Records take keyword fields only and cannot change; the registry is every framework's records,
    framework by framework, ids unique; a record's runtime is a member of its framework's Runtime enum."""
    d = DEVIATIONS[0]
    with pytest.raises(TypeError):
        Deviation(d.id, d.runtime, d.proven_on, d.rules, d.ops, d.condition, d.behaviour, d.spec)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.id = "x"  # type: ignore[misc]
    assert len(BY_ID) == len(DEVIATIONS) == 64
    expected = []
    for name in FRAMEWORKS:
        if importlib.util.find_spec(f"bcast.frameworks.{name}.deviations") is not None:  # stablehlo: none
            expected += importlib.import_module(f"bcast.frameworks.{name}.deviations").DEVIATIONS
    assert list(DEVIATIONS) == expected
    for d in DEVIATIONS:
        assert isinstance(d.runtime, Runtime) and type(d.runtime) is not Runtime, d.id
        assert d.framework in FRAMEWORKS and type(d.runtime).__module__.startswith(f"bcast.frameworks.{d.framework}.")
        assert str(d.runtime) == f"{d.runtime}" == d.runtime.value == d.to_dict()["runtime"]
        assert d.package == d.runtime.package


def test_kills_process_marks_the_records_conformance_does_not_run():
    """What conformance needs to know of a record is a field: the records whose runtime dies."""
    killers = {d.id for d in DEVIATIONS if d.kills_process}
    assert {"openvino-cpu-scalar-to-scalar", "openvino-broadcast-empty-data", "ncnn-empty-blob"} <= killers
    assert all(re.search(r"kill|SIGFPE|SIGSEGV|segmentation fault|crash|dies", BY_ID[i].behaviour) for i in killers)
    omitted = {d.id for d in DEVIATIONS if d.needs_omitted_attr}
    assert omitted == {"openvino-python-pdpd-axis0", "openvino-ir-pdpd-axis0"}


def test_verdict_skipped_when_the_runtime_is_missing(monkeypatch):
    import bcast.conformance.drift as p

    monkeypatch.setattr(p, "installed_version", lambda package: None)
    v = proofs.prove("ncnn-garbage")
    assert v.verdict == "skipped" and "ncnn is not installed" in v.detail
    # nothing checked at all is not a pass
    verdicts = [proofs.prove(d) for d in ("ncnn-garbage", "reference-mean-in-place")]
    assert proofs.exit_status(verdicts) == 1
    assert "nothing could be checked" in proofs.format_table(verdicts)
    assert _deviation.installed_version("numpy")  # only the proofs' view was patched


# -- bcast deviations --check ------------------------------------------------------



def test_check_command_is_green_on_the_installed_versions():
    """``bcast deviations --check``: every record is present on the installed (locked) runtimes."""
    rc, text = cli("deviations", "--check")
    assert rc == 0, text
    header = text.splitlines()[0].split()
    assert header == ["record", "runtime", "proven", "on", "installed", "verdict"], header
    for d in DEVIATIONS:
        row = next(line for line in text.splitlines() if line.startswith(d.id + " "))
        assert d.package in row and (d.installed or "-") in row, row
        assert "present" in row or "skipped" in row, row
    assert re.search(r"\d+ present, 0 gone, 0 changed, \d+ skipped of 64 records", text), text


def test_check_command_json(monkeypatch):
    import bcast.conformance.drift as p

    monkeypatch.setattr(p, "check", lambda ids=None: [
        p.Verdict("ncnn-garbage", "ncnn", "ncnn", ("1.0",), "1.1", "gone", "fixed in 1.1: returns -100"),
        p.Verdict("reference-mean-in-place", "onnx.reference.ReferenceEvaluator", "onnx", ("1.23.2",), None,
                  "skipped", "onnx is not installed")])
    rc, text = cli("deviations", "--check", "--json")
    assert rc == 1
    data = json.loads(text)
    assert data["ok"] is False
    assert [r["verdict"] for r in data["records"]] == ["gone", "skipped"]
    assert set(data["records"][0]) >= {"id", "runtime", "package", "proven_on", "installed", "verdict", "detail"}
    rc, text = cli("deviations", "--check")
    assert rc == 1 and "ncnn-garbage (gone): fixed in 1.1" in text and "onnx is not installed" in text


def test_check_command_with_no_runtime_is_no_pass(monkeypatch, capsys):
    """Nothing checked is not a pass: every record listed as skipped, a line says so, exit 1."""
    import bcast.conformance.drift as p

    monkeypatch.setattr(p, "installed_version", lambda package: None)
    rc, text = cli("deviations", "--check")
    assert rc == 1, text
    assert sum(" skipped" in line for line in text.splitlines()) == len(DEVIATIONS) + 1  # the rows, the counts
    assert "nothing could be checked" in text
    rc, text = cli("deviations", "--check", "--json")
    data = json.loads(text)
    assert rc == 1 and data["ok"] is False and len(data["records"]) == len(DEVIATIONS)


def test_deviations_help_says_what_check_does(capsys):
    rc, _ = cli("deviations", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert rc == 0
    for words in ("--check", "proven on", "installed", "present", "gone", "changed", "skipped",
                  "exit status: 0", "2 bad input", "no record could be checked"):
        assert words in text, words


def test_deviations_lists_every_record_with_its_proof():
    rc, text = cli("deviations", "--json")
    data = json.loads(text)
    assert rc == 0 and [r["id"] for r in data] == [d.id for d in DEVIATIONS]
    assert all(r["proof"] == proofs.proof_name(r["id"]) and list(r)[-1] == "proof" for r in data)
    rc, text = cli("deviations")
    assert f"    proven by: {proofs.proof_name('ncnn-garbage')}" in text


# -- the notes name the installed version where a record was not proven on it --------


@pytest.fixture
def newer_onnxruntime(monkeypatch):
    """onnxruntime 9.9.9 installed, as far as the records can tell (its proofs are not run)."""
    real = _deviation.installed_version
    monkeypatch.setattr(_deviation, "installed_version", lambda p: "9.9.9" if p == "onnxruntime" else real(p))
    d = DEV["onnxruntime-prelu-bidirectional"]
    return f"proven on {', '.join(d.proven_on)}; installed 9.9.9"


def test_explain_and_compare_print_the_installed_version_of_an_unproven_one(newer_onnxruntime):
    d = DEV["onnxruntime-prelu-bidirectional"]
    assert d.drift() == newer_onnxruntime and d.installed == "9.9.9"
    rc, text = cli("explain", "3,1", "1,4", "--rule", "unidirectional")
    assert f"onnxruntime ({newer_onnxruntime}) [onnxruntime-prelu-bidirectional]" in text, text
    assert "onnx.reference.ReferenceEvaluator 1.23.2 [reference-prelu-bidirectional]" in text  # proven on it
    rc, text = cli("compare", "3,1", "1,4")
    assert f"onnx-legacy: onnxruntime ({newer_onnxruntime}) [onnxruntime-no-legacy-opsets]" in text, text
    rc, text = cli("explain", "3,1", "1,4", "--rule", "unidirectional", "--json")
    (f,) = [f for f in json.loads(text)["deviations"] if f["id"] == d.id]
    assert f["installed"] == "9.9.9" and f["proven_on"] == list(d.proven_on) and f["version"] == d.version
    rc, text = cli("deviations")
    assert "    installed: 9.9.9 (not proven on it: bcast deviations --check)" in text


def test_proven_versions_print_plainly():
    d = DEV["onnxruntime-prelu-bidirectional"]
    if d.installed not in d.proven_on:
        pytest.skip(f"onnxruntime {d.installed} is not a locked version")
    assert d.drift() == "" and d.label() == f"onnxruntime {d.version}"


def test_conformance_prints_the_installed_version_of_an_unproven_one(newer_onnxruntime):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("hypothesis")
    from bcast.conformance import matrix as conformance

    report = conformance.run(rules=["onnx-legacy"], runtimes=["onnxruntime"], cases=2)
    text = conformance.format_text(report)
    assert f"onnxruntime-no-legacy-opsets (onnxruntime; {newer_onnxruntime}): " in text, text
    devs = [d for c in report["cases"] for chk in c["checks"].values() for d in chk["deviations"]]
    assert devs and all(d["installed"] == "9.9.9" for d in devs if d["runtime"] == "onnxruntime"), devs
    from bcast.conformance.html import _drift

    assert _drift(devs[0]) == "; " + newer_onnxruntime


def test_no_record_id_is_written_outside_the_records():
    """What conformance, lint and translate need of a record is a field (``kills_process``,
    ``needs_omitted_attr``, the runtime enum), so none of them names a record by its id."""
    import pathlib

    import bcast

    root = pathlib.Path(bcast.__file__).parent
    for rel in ("conformance/matrix.py", "models/lint.py", "translation/search.py"):
        text = (root / rel).read_text(encoding="utf-8")
        assert not [d.id for d in DEVIATIONS if f'"{d.id}"' in text], rel
