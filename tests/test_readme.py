"""The README's command examples are real: each `$ bcast ...` block without an
ellipsis prints exactly what the README shows."""

import io
import pathlib
import re
import shlex

import pytest

from bcast.cli import main

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def _examples():
    text = README.read_text(encoding="utf-8")
    for block in re.findall(r"```\n(.*?)```", text, re.S):
        if not block.startswith("$ bcast") or "..." in block:
            continue
        for chunk in re.split(r"^(?=\$ )", block, flags=re.M):
            if chunk.strip():
                command, _, expected = chunk.partition("\n")
                yield command[2:], expected


EXAMPLES = list(_examples())


def test_readme_has_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("command, expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example(command, expected, monkeypatch):
    monkeypatch.chdir(README.parent)  # the examples read models in examples/
    out = io.StringIO()
    main(shlex.split(command)[1:], out=out)
    assert out.getvalue().rstrip("\n") == expected.rstrip("\n")


def test_quick_start_has_two_command_lines():
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Quick start\n+```\n(.*?)```", text, re.S).group(1)
    lines = [line for line in block.splitlines() if line.strip()]
    assert len(lines) == 2
    assert "bcast compare" in lines[0] and "pytest" in lines[1] and ".[test]" in lines[1]
    assert "-c tests/constraints.txt" in lines[1]  # the locked oracle versions, so a fresh machine passes


def test_ci_runs_the_quick_start_test_line():
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "## Quick start" in ci and 'bash -c "$line"' in ci


def test_ci_runs_ruff_and_mypy_from_the_locked_extra():
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "\nruff check src tests\n" in ci and "\nmypy\n" in ci
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extra = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert any(r.startswith("ruff") for r in extra) and any(r.startswith("mypy") for r in extra)


def test_lock_pins_every_oracle():
    """Every package of the test extra (and the converter installed beside it) is pinned to one version."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    lock = {}
    for line in (README.parent / "tests" / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line!r}"
            lock[re.sub(r"[-_.]+", "-", name).lower()] = version
    extra = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    for req in extra + ["pnnx"]:
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", req).group(0)).lower()
        assert name in lock, name


def test_every_rule_is_in_the_readme_table():
    import bcast

    text = README.read_text(encoding="utf-8")
    for name in bcast.RULES:
        assert f"| `{name}` |" in text, name


def test_elided_examples_match_line_by_line():
    """Blocks with '...' elide lines: every line shown must appear in the real output, in order
    (a line ending in '...' is a prefix)."""
    text = README.read_text(encoding="utf-8")
    checked = 0
    for block in re.findall(r"```\n(.*?)```", text, re.S):
        if not block.startswith("$ bcast") or "..." not in block:
            continue
        command, _, expected = block.partition("\n")
        out = io.StringIO()
        main(shlex.split(command[2:])[1:], out=out)
        real = out.getvalue().splitlines()
        pos = 0
        for line in expected.splitlines():
            if line.strip() == "...":
                continue
            prefix = line[:-3] if line.endswith("...") else None
            while pos < len(real) and not (real[pos].startswith(prefix) if prefix else real[pos] == line):
                pos += 1
            assert pos < len(real), f"README line not in the output of {command!r}: {line!r}"
            pos += 1
        checked += 1
    assert checked >= 1


def test_python_examples_run_as_shown():
    """The README's ``>>>`` examples are doctests (ELLIPSIS on: ``...`` elides)."""
    import doctest

    text = README.read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if ">>>" in b]
    assert blocks
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"README block {i}", str(README), 0))
    assert runner.summarize(verbose=False).failed == 0


def test_layout_names_every_module_of_the_package():
    """README's Layout block names every subpackage and module of src/bcast (a module by its file name,
    a package as ``name/``; the rules are "one module per rule"), so it cannot fall behind the tree."""
    block = re.search(r"## Layout\n.*?```\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    package = README.parent / "src" / "bcast"
    missing = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if rel.parts[0] == "rules" and path.name not in ("_base.py", "_cache.py"):
            continue
        name = f"{rel.parent.name}/" if path.name == "__init__.py" and len(rel.parts) > 1 else path.name
        if name not in block:
            missing.append(rel.as_posix())
    assert missing == []
