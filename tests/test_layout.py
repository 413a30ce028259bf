"""The suite's own layout: tests/ mirrors the package (one folder per layer of src/bcast), helpers live in
tests/support/, every test module has a name of its own, and test ids are the same in every process."""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "src" / "bcast"
#: Folders of tests/ that are no layer of the package: the shared helpers and the fuzz suite (it crosses layers).
NOT_LAYERS = {"support", "fuzz"}


def _python_files():
    return [p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts]


def test_every_folder_of_tests_is_a_layer_of_the_package():
    layers = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()} | {"cli"}  # and bcast.cli
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert folders - NOT_LAYERS <= layers, sorted(folders - NOT_LAYERS - layers)


def test_test_modules_have_names_of_their_own():
    """pytest imports each test module by its file name (rootdir import mode): two of one name would clash."""
    names = collections.Counter(p.name for p in _python_files() if p.name.startswith("test_"))
    assert [n for n, k in names.items() if k > 1] == []


def test_helpers_live_in_support():
    """A module of tests/ that is not a test module (or conftest.py) is a helper of tests/support/, or a
    corpus's own script beside its models (a folder named ``*_corpus``)."""
    stray = [p.relative_to(TESTS).as_posix() for p in _python_files()
             if not p.name.startswith("test_") and p.name != "conftest.py"
             and "support" not in p.parts and not any(part.endswith("_corpus") for part in p.parts)]
    assert stray == []


def test_an_id_that_holds_a_memory_address_is_refused(tmp_path):
    """pytest -n needs the same ids in every worker: an id made from an object's repr is a collection error."""
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_x.py").write_text("import pytest\n\nV = object()\n\n\n"
                                        "@pytest.mark.parametrize('v', [V], ids=[repr(V)])\n"
                                        "def test_v(v):\n    pass\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "-p", "no:bcast", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 4 and "memory address" in r.stderr + r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
