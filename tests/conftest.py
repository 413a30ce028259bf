"""The suite's shared setup: helpers importable from any depth, ids that are the same in every process
(``pytest -n`` needs them), and the fuzz suite's figures (summed over the workers under ``pytest -n``)."""

import json
import os
import re
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))  # tests at any depth import the helpers of tests/support/ as support.<module>
pytest.register_assert_rewrite("support")  # a helper's failed assert shows its values, as a test's does

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@pytest.fixture(autouse=True)
def _no_compile_under_way():
    """A test starts once every compiled loop an earlier test asked for is ready: numba compiles them in a
    background thread (bcast.run._kernels), whose allocations tracemalloc would count and whose CPU a
    timing-sensitive test would share.  Free when nothing is being compiled."""
    kernels = sys.modules.get("bcast.run._kernels")
    if kernels is not None:
        kernels.wait()
    yield


def pytest_collection_modifyitems(config, items):
    unstable = [item.nodeid for item in items if _ADDRESS.search(item.nodeid)]
    if unstable:  # pytest -n refuses a run whose workers collect different ids
        raise pytest.UsageError("test ids that hold a memory address differ from process to process; give them "
                                "ids: " + ", ".join(unstable[:5]))


def _fuzz_report():
    harness = sys.modules.get("support.fuzz_harness")
    return harness.REPORT if harness is not None else {}


def pytest_sessionfinish(session):
    """An xdist worker hands its fuzz figures to the controller (pytest_testnodedown below)."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["bcast_fuzz_report"] = json.dumps(_fuzz_report())


_FROM_WORKERS: dict = {}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    for target, (cases, total, longest) in json.loads(node.workeroutput.get("bcast_fuzz_report", "{}")).items():
        row = _FROM_WORKERS.setdefault(target, [0, 0.0, 0.0])
        row[0] += cases
        row[1] += total
        row[2] = max(row[2], longest)


def pytest_terminal_summary(terminalreporter):
    """The fuzz suite's figures: cases run and the longest single case, per target."""
    rows = sorted({**_fuzz_report(), **_FROM_WORKERS}.items())
    if not rows:
        return
    terminalreporter.section("fuzz cases per target")
    for target, (cases, total, longest) in rows:
        terminalreporter.write_line(f"{target:<40} {cases:>8} cases   longest {longest * 1000:9.1f} ms   "
                                    f"total {total:7.2f} s")
    path = os.environ.get("BCAST_FUZZ_REPORT")
    if path:
        report = {t: {"cases": c, "seconds": round(s, 3), "longest_ms": round(m * 1000, 1)} for t, (c, s, m) in rows}
        with open(path, "w") as f:
            json.dump(report, f, indent=1)
