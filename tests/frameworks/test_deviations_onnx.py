"""onnx's deviation records (src/bcast/frameworks/onnx/deviations*.py) against their proofs
(src/bcast/frameworks/onnx/proofs*.py).

``test_proof_holds`` runs each record's proof on the installed runtime (the locked versions, in the
suite) and requires the verdict ``present``: the day the runtime is fixed, it fails with the proof's
verdict (``gone``: fixed in that version; ``changed``: it does something else) and asks for the record
to be revisited.  Cases that kill the process run in a child process inside the proofs.
"""

from __future__ import annotations

import numpy as np
import pytest

import bcast.conformance.drift as proofs
from bcast.frameworks.deviations import BY_ID
from support import deviations

FRAMEWORK = "onnx"


@pytest.mark.parametrize("dev_id", deviations.ids(FRAMEWORK))
def test_proof_holds(dev_id):
    """The record's proof, run on the installed runtime, finds the deviation still present (or gone on a
    version from the record's fixed_in on)."""
    deviations.proof_holds(FRAMEWORK, dev_id)


def test_the_records_are_this_frameworks():
    """Every record of this framework's modules names one of its runtimes, and its check lives beside it."""
    deviations.records_are_the_frameworks(FRAMEWORK)


# -- the verdicts, on a runtime made to behave otherwise (onnxruntime's Where: a record of values) ----------


def _where_record():
    pytest.importorskip("onnxruntime")
    return "onnxruntime-where-negative-zero"


def test_verdict_gone_when_the_runtime_follows_the_spec(monkeypatch):
    """A runtime that now does what the spec says: gone, "fixed in" the installed version."""
    from bcast.frameworks._deviation import installed_version
    from bcast.frameworks.onnx import onnxruntime as oracle

    dev = _where_record()
    monkeypatch.setattr(oracle, "run", lambda op, inputs, **kw: [np.where(*inputs)])
    v = proofs.prove(dev)
    assert v.verdict == "gone" and v.detail.startswith(f"fixed in {installed_version('onnxruntime')}"), v


def test_verdict_gone_as_recorded(monkeypatch):
    """A record with fixed_in: gone on that version or a later one is what it says, and a pass."""
    import dataclasses

    from bcast.frameworks._deviation import installed_version
    from bcast.frameworks.onnx import onnxruntime as oracle

    dev = _where_record()
    here = installed_version("onnxruntime")
    monkeypatch.setattr(oracle, "run", lambda op, inputs, **kw: [np.where(*inputs)])
    for fixed_in, ok in ((here, True), ("0.1", True), ("999.0", False)):
        monkeypatch.setitem(BY_ID, dev, dataclasses.replace(BY_ID[dev], fixed_in=fixed_in))
        v = proofs.prove(dev)
        assert v.verdict == "gone" and v.ok is ok and v.fixed_in == fixed_in, (fixed_in, v)
        assert proofs.exit_status([v]) == (0 if ok else 1)
        assert ("gone (as recorded)" in proofs.format_table([v])) is ok
    assert proofs.version_key("1.32.0") > proofs.version_key("1.31.1") > proofs.version_key("1.9")


def test_verdict_changed_when_the_runtime_does_something_else(monkeypatch):
    from bcast.frameworks.onnx import onnxruntime as oracle

    dev = _where_record()
    monkeypatch.setattr(oracle, "run", lambda op, inputs, **kw: [np.full(4, 7.0)])
    v = proofs.prove(dev)
    assert v.verdict == "changed", v
    monkeypatch.setattr(oracle, "run", lambda op, inputs, **kw: 1 / 0)
    v = proofs.prove(dev)
    assert v.verdict == "changed" and "ZeroDivisionError" in v.detail, v


def test_proofs_hold_under_python_O():
    """The proofs' expectations are no ``assert`` statements: ``python -O`` keeps them."""
    import subprocess
    import sys

    code = ("import bcast.conformance.drift as p, bcast.frameworks.onnx.reference as r\n"
            "r.run = lambda op, inputs, **kw: [inputs[0][:0]]\n"
            "print(p.prove('reference-gemm-any-rank').verdict)")
    pytest.importorskip("onnx")
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "changed", out
