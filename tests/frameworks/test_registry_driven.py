"""What is read from the framework registry (bcast.frameworks): the deviation records' order, the lint and
rewrite targets (declared by each framework package, listed without loading a target), compare's filter by
framework, and the runtimes each lint target's checks speak for."""

import importlib
import subprocess
import sys

import pytest

import bcast

from bcast.frameworks import FRAMEWORKS, names, part, targets
from bcast.frameworks.deviations import DEVIATIONS


def test_deviation_records_come_framework_by_framework_in_the_registry_order():
    frameworks = [d.framework for d in DEVIATIONS]
    recorded = [n for n in names() if getattr(part(n, "deviations"), "DEVIATIONS", ())]  # spec-only ones have none
    assert sorted(set(frameworks), key=frameworks.index) == recorded == ["onnx", "openvino", "ncnn", "tflite", "torch",
                                                                          "paddle", "mnn", "coreml", "jax"]
    assert frameworks == sorted(frameworks, key=list(names()).index)  # each framework's records together
    expected = [d for name in names() for d in getattr(part(name, "deviations"), "DEVIATIONS", ())]
    assert list(DEVIATIONS) == expected


@pytest.mark.parametrize("kind", ["lint", "rewrite"])
def test_targets_are_declared_by_the_framework_packages(kind):
    found = targets(kind)
    expected = {"lint": ("onnx", "coreml", "ncnn", "nnapi", "onnx2ncnn", "onnx2tf", "openvino", "tensorrt", "tflite",
                         "tosa", "webnn"),
                "rewrite": ("onnx", "ncnn", "onnx2ncnn", "onnx2tf", "openvino", "tensorrt", "tosa")}
    assert tuple(found) == expected[kind]  # onnx (the default) first, then by name
    declared = {t: f"{p}.{kind}_{m}" for p in FRAMEWORKS.values()
                for t, m in importlib.import_module(p).TARGETS.items()
                if importlib.util.find_spec(f"{p}.{kind}_{m}") is not None}
    assert found == declared
    assert found["ncnn"] == f"bcast.frameworks.ncnn.{kind}_pnnx"


def test_the_command_line_lists_the_targets_without_loading_them():
    code = ("import sys, bcast.cli as c; "
            "print(c.REWRITE_TARGETS == ('onnx', 'ncnn', 'onnx2ncnn', 'onnx2tf', 'openvino', 'tensorrt', 'tosa') "
            "and set(c.REWRITE_TARGETS) < set(c.LINT_TARGETS), "
            "[m for m in sys.modules if m.split('.')[0] in ('numpy', 'onnx') or '.lint_' in m or '.rewrite_' in m])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "[]"]


def test_the_loaded_targets_are_the_declared_ones():
    pytest.importorskip("onnx")
    from bcast.models.target import found

    for kind in ("lint", "rewrite"):
        modules = found(kind)
        assert {n: m.__name__ for n, m in modules.items()} == targets(kind)
        assert all(m.TARGET == n for n, m in modules.items())


@pytest.mark.parametrize("name", names())
def test_each_framework_names_its_runtime_enum(name):
    if part(name, "deviations") is None:  # a framework with no runtime here (stablehlo: spec only)
        pytest.skip(f"{name} has no deviation records")
    runtime = part(name, "deviations").RUNTIME
    assert all(type(d.runtime) is runtime for d in DEVIATIONS if d.framework == name)
    assert {r.framework for r in runtime} == {name}


def test_compare_by_framework_keeps_that_frameworks_records():
    from bcast.views.comparison import compare_ops

    # shapes on which records of several frameworks bear (ncnn's garbage shape, onnx's reference Mean)
    for name in names():
        records = part(name, "deviations")
        runtime = () if records is None else records.RUNTIME  # a framework without records shows none
        seen = compare_ops(name, (2, 3, 4), (3, 4))["deviations"] + compare_ops(name, (2, 1), (4, 2, 1))["deviations"]
        assert all(d["runtime"] in {str(r) for r in runtime} for d in seen)
    ncnn = compare_ops("ncnn", (2, 3, 4), (3, 4), op="ADD")["deviations"]
    assert [d["id"] for d in ncnn] == ["ncnn-garbage"]
    # OpenVINO's Broadcast (bidirectional) plans by a rule that onnx's records also bear on: those are left out
    openvino = compare_ops("openvino", (2, 3), (3,), op="Broadcast")
    assert not [d for d in openvino["deviations"] if d["id"].startswith(("onnx", "reference"))]


def test_each_lint_target_declares_the_runtimes_it_speaks_for():
    pytest.importorskip("onnx")
    from bcast.models import lint
    from bcast.models.target import found

    for name, module in found("lint").items():
        checks = module.Checks
        records = part(module.__name__.split(".")[2], "deviations")
        if records is None:  # a spec-only framework (tensorrt, tosa, webnn, nnapi): no runtime to speak for
            assert checks.runtimes == checks.decisive_runtimes == (), name
            continue
        assert checks.runtimes and all(isinstance(r, records.RUNTIME) for r in checks.runtimes), name
        assert set(checks.decisive_runtimes) <= set(checks.runtimes), name
        # every runtime's records decide, but the Core ML MIL builder's (the builder types, the device computes)
        assert bool(checks.decisive_runtimes) == (name != "coreml"), name
    assert [r.value for r in found("lint")["onnx"].Checks.decisive_runtimes] == ["onnxruntime"]
    assert not hasattr(lint, "_RUNTIMES") and not hasattr(lint, "_DECISIVE")


def test_a_deviation_note_is_not_a_lint_finding():
    """Two classes, two names: the deviation record matched to a query is a Note (JSON keys unchanged)."""
    from bcast.frameworks import _deviation, deviations

    assert not hasattr(_deviation, "Finding") and not hasattr(deviations, "Finding")
    (note,) = deviations.applicable((2, 3, 4), (3, 4), rule="ncnn")
    assert type(note) is deviations.Note is _deviation.Note
    assert list(note.to_dict()) == ["id", "runtime", "version", "note", "proven_on", "fixed_in", "installed"]


def test_compare_has_a_row_per_registered_framework():
    """Plain ``compare`` ends with each framework's element-wise op on the shapes, in the registry's order; an
    op that does not take the shapes is n/a, not an error."""
    from bcast.views.comparison import framework_op

    rows = bcast.compare((2, 3), (3,))["frameworks"]
    assert [r["framework"] for r in rows] == list(names())
    equal_rank = ("tensorrt", "tosa")  # their layers take no rank broadcasting: (3,) has another rank
    no_broadcast = ("stablehlo",)  # its add: no implicit broadcasting at all
    assert all(r["op"] == framework_op(r["framework"]) and r["ok"] for r in rows
               if r["framework"] not in ("ncnn", *equal_rank, *no_broadcast))
    assert not any(r["ok"] for r in rows if r["framework"] in (*equal_rank, *no_broadcast))
    assert all(r["ok"] is None for r in bcast.compare((2, 3), (3,), (3,), (3,), (3,))["frameworks"]
               if r["framework"] in ("onnx", "ncnn"))


def test_conformance_columns_come_from_the_framework_packages():
    from bcast.conformance import columns

    found = columns.columns()
    declared = [c.id for n in names() for c in getattr(part(n, "column"), "COLUMNS", ())]
    assert list(found) == declared and {"onnxruntime", "reference", "openvino", "openvino-cpu", "ncnn"} <= set(found)
    assert all(found[c].runtime in columns.runtimes() for c in found)
