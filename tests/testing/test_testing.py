"""bcast.testing.assertions.assert_broadcast / assert_plans_equal, and the pytest plugin."""

import subprocess
import sys

import pytest

import bcast
from bcast.testing.assertions import assert_broadcast, assert_plans_equal, plan_differences

pytest_plugins = ["pytester"]


def test_passes_and_returns_the_plan():
    plan = assert_broadcast((8, 1, 6, 1), (7, 1, 5), expected=(8, 7, 6, 5))
    assert plan.stretched == ((1, 3), (1,))
    assert assert_broadcast("2,3", "3").shape == (2, 3)  # no expected: broadcasts to anything
    assert assert_broadcast([4, 3, 2], [3, 2], rule="ncnn", ncnn_order=True, expected=[4, 3, 2]).rule == "ncnn"


def test_arrays_stand_for_their_shapes():
    np = pytest.importorskip("numpy")
    assert_broadcast(np.ones((2, 3)), np.ones(3), expected=(2, 3))
    with pytest.raises(AssertionError, match=r"A \(2,3\), B \(3,\) -> \(2,3\), expected \(3,3\)"):
        assert_broadcast(np.ones((2, 3)), np.ones(3), expected=(3, 3))


def test_wrong_shape_shows_the_difference_and_the_table():
    with pytest.raises(AssertionError) as info:
        assert_broadcast((2, 3, 4, 5), (3, 1), rule="pdpd", axis=1, expected=(2, 3, 1, 5))
    text = str(info.value)
    assert text.splitlines()[:2] == [
        "pdpd [axis=1]: A (2,3,4,5), B (3,1) -> (2,3,4,5), expected (2,3,1,5)",
        "  axis 2 (from right -2): 4, expected 1",
    ]
    assert "  B                3   1*" in text and "  out          2   3   4   5" in text


def test_rank_difference():
    with pytest.raises(AssertionError, match="rank 2, expected 3"):
        assert_broadcast((2, 3), (3,), expected=(1, 2, 3))


def test_refused_when_a_shape_was_expected():
    with pytest.raises(AssertionError) as info:
        assert_broadcast((2, 3), (4,), expected=(2, 3))
    text = str(info.value)
    assert text.startswith("numpy: not broadcastable, expected (2,3)\n  dims must be equal or one of them 1")
    assert "                   ^" in text  # the failing column is marked


def test_expected_refusal():
    err = assert_broadcast((2, 1), (2, 3), rule="unidirectional", expected=bcast.BroadcastError, reason="never A to B")
    assert err.dims == (1, 3)
    with pytest.raises(AssertionError, match=r"broadcasts to \(2,3\), expected a BroadcastError"):
        assert_broadcast((2, 1), (3,), expected=bcast.BroadcastError)
    with pytest.raises(AssertionError, match="does not contain 'rank'"):
        assert_broadcast((2, 3), (4,), expected=bcast.BroadcastError, reason="rank")


def test_malformed_requests_are_input_errors():
    with pytest.raises(bcast.InputError):
        assert_broadcast((2, 3), (3,), rule="nope")
    with pytest.raises(bcast.InputError):
        assert_broadcast((2, 3), (3,), expected="2,-1")


def test_plans_equal_lists_each_field():
    got = bcast.infer((2, 3, 4), (2, 3), rule="ncnn")
    want = bcast.infer((2, 3, 4), (1, 4))
    assert plan_differences(got, want) == [
        "rule: ncnn; expected numpy",
        "inputs: A (2,3,4), B (2,3); expected A (2,3,4), B (1,4)",
        "attrs: {'ncnn_order': False, 'ncnn_batch': 'keep', 'alignment': 'inner axes'}; expected {}",
        "axis_maps: ((0, 1, 2), (0, 1)); expected ((0, 1, 2), (1, 2))",
        "stretched: none; expected B axes (0,)",
    ]
    assert plan_differences(got, got) == []
    with pytest.raises(AssertionError, match="Plans differ:"):
        assert_plans_equal(got, want)


PLUGIN_TEST = """
import bcast

def test_plans():
    assert bcast.infer((2, 1), (3,)) == bcast.infer((2, 1), (1,))

def test_other_values_keep_pytest_report():
    assert (2, 3) == (2, 4)
"""


def test_pytest_plugin_explains_failed_plan_comparisons(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the same whether or not the entry point is installed
    pytester.makepyfile(PLUGIN_TEST)
    result = pytester.runpytest("-p", "bcast.testing.pytest_plugin", "-p", "no:cacheprovider", "-vv")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*Plans differ:",
        "*  inputs: A (2,1), B (3,); expected A (2,1), B (1,)",
        "*  shape: axis 1 (from right -1): 3, expected 1",
        "*got:",
        "*numpy: A (2,1), B (3,) -> (2,3)",
        "*expected:",
    ])
    result.stdout.fnmatch_lines(["*At index 1 diff: 3 != 4*"])  # pytest's own report


def test_the_entry_point_is_declared():
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path

    meta = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["pytest11"] == {"bcast": "bcast.testing.pytest_plugin"}


def test_the_plugin_loads_nothing_heavy():
    code = "import sys, bcast.testing.pytest_plugin; print([m for m in ('numpy', 'hypothesis') if m in sys.modules])"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "[]", r.stderr
