"""What a user downloads: the sdist carries what its tests need, the license and the docs, and the
project refers to nothing outside itself."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tracked_text_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, timeout=60, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    for name in out.decode().split("\0"):
        path = ROOT / name
        if name and path.is_file() and path.suffix in {".py", ".md", ".toml", ".txt", ".cfg", ".in", ""}:
            yield name, path


def test_nothing_refers_outside_the_project():
    """The design lives in docs/; no file points at the workspace's shared folder, which users do not have."""
    outside = "/".join(("..", "shared"))  # spelled so that this file does not name it
    bad = [name for name, path in _tracked_text_files() if outside in path.read_text(errors="replace")]
    assert bad == []


def test_license_and_metadata():
    text = (ROOT / "pyproject.toml").read_text()
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert 'license = "MIT"' in text and 'license-files = ["LICENSE"]' in text  # PEP 639, not the table form
    assert "Programming Language :: Python :: 3." in text
    assert (ROOT / "docs" / "design.md").is_file()


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    if importlib.util.find_spec("build") is None:
        pytest.skip("needs the 'build' package (in the test extra)")
    out = tmp_path_factory.mktemp("sdist")
    r = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (archive,) = out.glob("bcast-*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(out, filter="data")
    (tree,) = [p for p in out.iterdir() if p.is_dir()]
    return tree


def test_sdist_carries_tests_docs_examples(sdist):
    for name in ("LICENSE", "README.md", "docs/design.md", "tests/support/fuzz_harness.py", "tests/conftest.py",
                 "tests/constraints.txt", "conftest.py", "examples/scale_prelu.onnx", "examples/make_models.py"):
        assert (sdist / name).is_file(), name
    pkg_info = (sdist / "PKG-INFO").read_text()
    assert "License-Expression: MIT" in pkg_info and "License-File: LICENSE" in pkg_info


def test_sdist_suite_collects(sdist):
    """The unpacked sdist's tests collect (they once failed: No module named 'fuzz_harness')."""
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                       cwd=sdist, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    counts = dict(line.rsplit(": ", 1) for line in r.stdout.splitlines() if line.startswith("tests/"))
    assert int(counts.get("tests/fuzz/test_fuzz_exec.py", 0)) > 0 and int(counts.get("tests/test_packaging.py", 0)) > 0
