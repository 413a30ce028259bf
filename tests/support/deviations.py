"""What the three per-framework deviation test modules share (tests/frameworks/test_deviations_<fw>.py):
the file that holds a record, the proof run as a test, and the check that a framework's records are its own."""

from __future__ import annotations

import pathlib

import pytest

import bcast.conformance.drift as proofs
from bcast.frameworks.deviations import BY_ID, DEVIATIONS

FRAMEWORKS = pathlib.Path(proofs.__file__).resolve().parent.parent / "frameworks"


def ids(framework: str) -> list[str]:
    """The ids of ``framework``'s records, in the registry's order."""
    return [d.id for d in DEVIATIONS if d.framework == framework]


def home(framework: str, dev_id: str) -> str:
    """The source file that holds the record."""
    for path in sorted((FRAMEWORKS / framework).glob("deviations*.py")):
        if f'id="{dev_id}"' in path.read_text(encoding="utf-8"):
            return f"src/bcast/frameworks/{framework}/{path.name}"
    raise AssertionError(f"no deviations module of {framework} holds {dev_id}")


def proof_holds(framework: str, dev_id: str) -> None:
    """The record's proof, run on the installed runtime, finds the deviation still present (or gone on a
    version from the record's fixed_in on); skipped where the runtime is missing."""
    d = BY_ID[dev_id]
    v = proofs.prove(dev_id)
    if v.verdict == "skipped":
        pytest.skip(v.detail)
    assert v.ok, (
        f"deviation {dev_id!r} is {v.verdict} in {d.package} {v.installed} (proven on {', '.join(d.proven_on)}): "
        f"{v.detail}. Revisit its entry in {home(framework, dev_id)} (and bcast's note for it).")


def records_are_the_frameworks(framework: str) -> None:
    """Every record of this framework's modules names its test, its check lives beside it, and a file
    of the framework holds it."""
    mine = [d for d in DEVIATIONS if d.framework == framework]
    assert mine
    for d in mine:
        assert d.test == f"tests/frameworks/test_deviations_{framework}.py::test_proof_holds[{d.id}]"
        assert d.check is None or d.check.__module__.startswith(f"bcast.frameworks.{framework}.deviations"), d.id
        assert home(framework, d.id)
