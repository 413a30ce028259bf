"""The suite's root: doctests of src/bcast run only against this very tree.

pytest collects the doctests of ``src/bcast`` (``--doctest-modules``), importing each module as
``bcast.<name>``.  When the ``bcast`` that Python imports is another copy (the unpacked sdist
installed with ``pip install '.[test]'``, not ``-e``), that would be an "import file mismatch"
error per module: the doctests are then left out, and tests/ runs against the installed copy.
"""

from pathlib import Path

_SRC = (Path(__file__).parent / "src" / "bcast").resolve()


def pytest_ignore_collect(collection_path, config):
    path = Path(collection_path).resolve()
    if path != _SRC and _SRC not in path.parents:
        return None
    import bcast

    return True if Path(bcast.__file__).resolve().parent != _SRC else None
