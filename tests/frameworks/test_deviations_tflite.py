"""TFLite's deviation records (src/bcast/frameworks/tflite/deviations.py) against their proofs
(src/bcast/frameworks/tflite/proofs.py), run on LiteRT's interpreter (``ai-edge-litert``).

``test_proof_holds`` requires the verdict ``present`` on the installed (locked) version; cases that abort
the interpreter run in child processes inside the proofs.
"""

from __future__ import annotations

import pytest

from support import deviations

FRAMEWORK = "tflite"


@pytest.mark.parametrize("dev_id", deviations.ids(FRAMEWORK))
def test_proof_holds(dev_id):
    """The record's proof, run on the installed runtime, finds the deviation still present."""
    deviations.proof_holds(FRAMEWORK, dev_id)


def test_the_records_are_this_frameworks():
    """Every record of this framework's modules names one of its runtimes, and its check lives beside it."""
    deviations.records_are_the_frameworks(FRAMEWORK)
