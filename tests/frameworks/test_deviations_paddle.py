"""PaddlePaddle's deviation records (src/bcast/frameworks/paddle/deviations.py) against their proofs
(src/bcast/frameworks/paddle/proofs.py): each proof runs on the installed paddlepaddle (a case that kills
the process in a child process) and must find its deviation still present (see
tests/frameworks/test_deviations_ncnn.py)."""

from __future__ import annotations

import pytest

from support import deviations

FRAMEWORK = "paddle"


@pytest.mark.parametrize("dev_id", deviations.ids(FRAMEWORK))
def test_proof_holds(dev_id):
    """The record's proof, run on the installed runtime, finds the deviation still present."""
    deviations.proof_holds(FRAMEWORK, dev_id)


def test_the_records_are_this_frameworks():
    """Every record of this framework's modules names one of its runtimes, and its check lives beside it."""
    deviations.records_are_the_frameworks(FRAMEWORK)
