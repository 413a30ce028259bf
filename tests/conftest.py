import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # tests at any depth import the helpers of tests/support/


def pytest_terminal_summary(terminalreporter):
    """The fuzz suite's figures: cases run and the longest single case, per target."""
    import json

    harness = sys.modules.get("support.fuzz_harness")
    if harness is None or not harness.REPORT:
        return
    rows = sorted(harness.REPORT.items())
    terminalreporter.section("fuzz cases per target")
    for target, (cases, total, longest) in rows:
        terminalreporter.write_line(f"{target:<40} {cases:>8} cases   longest {longest * 1000:9.1f} ms   total {total:7.2f} s")
    path = os.environ.get("BCAST_FUZZ_REPORT")
    if path:
        report = {t: {"cases": c, "seconds": round(s, 3), "longest_ms": round(m * 1000, 1)} for t, (c, s, m) in rows}
        with open(path, "w") as f:
            json.dump(report, f, indent=1)
