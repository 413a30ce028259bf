"""ONNX's backend node tests (shipped in the onnx wheel), collected once per
test session: ``collect_testcases`` builds every case in Python and takes
seconds, and two test modules read them (frameworks/test_onnx_rules.py, frameworks/test_onnx_run.py)."""

from __future__ import annotations

import warnings
from functools import lru_cache


@lru_cache(maxsize=1)
def all_node_cases() -> tuple:
    """Every node test case onnx ships (``onnx.backend.test.case.node``)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(collect_testcases(None))


def opset_of(model) -> int:
    """The ai.onnx opset a node test's model imports."""
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
