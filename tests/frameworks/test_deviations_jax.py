"""jax's deviation records (src/bcast/frameworks/jax/deviations.py) against their proofs
(src/bcast/frameworks/jax/proofs.py), run on the installed jax (skipped without it)."""

from __future__ import annotations

import pytest

from support import deviations

FRAMEWORK = "jax"


@pytest.mark.parametrize("dev_id", deviations.ids(FRAMEWORK))
def test_proof_holds(dev_id):
    """The record's proof, run on the installed jax, finds the deviation still present."""
    deviations.proof_holds(FRAMEWORK, dev_id)


def test_the_records_are_this_frameworks():
    """Every record of this framework's modules names one of its runtimes, and its check lives beside it."""
    deviations.records_are_the_frameworks(FRAMEWORK)
