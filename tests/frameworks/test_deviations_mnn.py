"""mnn's deviation records (src/bcast/frameworks/mnn/deviations*.py) against their proofs
(src/bcast/frameworks/mnn/proofs*.py).

``test_proof_holds`` runs each record's proof on the installed runtime (the locked versions, in the
suite) and requires the verdict ``present``: the day the runtime is fixed, it fails with the proof's
verdict (``gone``: fixed in that version; ``changed``: it does something else) and asks for the record
to be revisited.  Cases that kill the process run in a child process inside the proofs.
"""

from __future__ import annotations

import pytest

from support import deviations

FRAMEWORK = "mnn"


@pytest.mark.parametrize("dev_id", deviations.ids(FRAMEWORK))
def test_proof_holds(dev_id):
    """The record's proof, run on the installed runtime, finds the deviation still present (or gone on a
    version from the record's fixed_in on)."""
    deviations.proof_holds(FRAMEWORK, dev_id)


def test_the_records_are_this_frameworks():
    """Every record of this framework's modules names one of its runtimes, and its check lives beside it."""
    deviations.records_are_the_frameworks(FRAMEWORK)
