"""ncnn's deviation records (src/bcast/frameworks/ncnn/deviations*.py) against their proofs
(src/bcast/frameworks/ncnn/proofs*.py).

``test_proof_holds`` runs each record's proof on the installed runtime (the locked versions, in the
suite) and requires the verdict ``present``: the day the runtime is fixed, it fails with the proof's
verdict (``gone``: fixed in that version; ``changed``: it does something else) and asks for the record
to be revisited.  Cases that kill the process run in a child process inside the proofs.
"""

from __future__ import annotations

import pathlib

import pytest

import bcast.conformance.drift as proofs
from bcast.frameworks.deviations import BY_ID, DEVIATIONS

FRAMEWORK = "ncnn"
HOME = pathlib.Path(proofs.__file__).resolve().parent.parent / "frameworks" / FRAMEWORK


def _home(dev_id: str) -> str:
    """The source file that holds the record."""
    for path in sorted(HOME.glob("deviations*.py")):
        if f'id="{dev_id}"' in path.read_text(encoding="utf-8"):
            return f"src/bcast/frameworks/{FRAMEWORK}/{path.name}"
    raise AssertionError(f"no file of {HOME} holds {dev_id}")


@pytest.mark.parametrize("dev_id", [d.id for d in DEVIATIONS if d.framework == FRAMEWORK])
def test_proof_holds(dev_id):
    """The record's proof, run on the installed runtime, finds the deviation still present (or gone on a
    version from the record's fixed_in on)."""
    d = BY_ID[dev_id]
    v = proofs.prove(dev_id)
    if v.verdict == "skipped":
        pytest.skip(v.detail)
    assert v.ok, (
        f"deviation {dev_id!r} is {v.verdict} in {d.package} {v.installed} (proven on {', '.join(d.proven_on)}): "
        f"{v.detail}. Revisit its entry in {_home(dev_id)} (and bcast's note for it).")


def test_the_records_are_this_frameworks():
    """Every record of this framework's modules names one of its runtimes, and its check lives beside it."""
    mine = [d for d in DEVIATIONS if d.framework == FRAMEWORK]
    assert mine
    for d in mine:
        assert d.test == f"tests/frameworks/test_deviations_{FRAMEWORK}.py::test_proof_holds[{d.id}]"
        assert d.check is None or d.check.__module__.startswith(f"bcast.frameworks.{FRAMEWORK}.deviations"), d.id
        assert _home(d.id)
