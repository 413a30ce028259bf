"""docs/design.md is true of the code: its layer diagram lists every module, and no import (at module
level or inside a function) reaches up a layer but the two the document names; its rules and
commands are the real ones."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "bcast"
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")

#: (importer, imported): the upward imports design.md names as known
KNOWN_UPWARD = {("plan", "explain"), ("deviations", "proofs")}


def _layers() -> dict:
    block = re.search(r"## Layers \(today\) and where they go\n+```\n(.*?)```", DESIGN, re.S).group(1)
    layer = {}
    for depth, line in enumerate(reversed(block.strip("\n").splitlines())):  # 0: the bottom line
        for name in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", re.sub(r"\([^)]*\)", "", line)):
            assert name not in layer, f"{name} twice in design.md's layers"
            layer[name] = depth
    return layer


def _imports() -> dict:
    """Top-level module of bcast -> the top-level modules of bcast it imports, anywhere in its code."""
    found = {}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        top = rel.parts[0].removesuffix(".py")
        package = rel.parts[:-1]
        deps = found.setdefault(top, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.level:
                base = list(package[: len(package) - (node.level - 1)])
                names = [base + node.module.split(".")] if node.module else [base + [a.name] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bcast."):
                names = [node.module.split(".")[1:]]
            elif isinstance(node, ast.Import):
                names = [a.name.split(".")[1:] for a in node.names if a.name.startswith("bcast.")]
            deps.update(n[0] for n in names if n and n[0] != top)
    return found


def test_every_module_is_in_the_layers():
    layer = _layers()
    modules = {p.name.removesuffix(".py") for p in SRC.iterdir()
               if (p.suffix == ".py" or (p / "__init__.py").exists())} - {"__init__"}
    assert sorted(modules - set(layer)) == [], "modules design.md's layers do not list"
    assert sorted(set(layer) - modules) == [], "design.md's layers list modules that do not exist"


def test_no_import_reaches_up_but_the_known_ones():
    layer = _layers()
    upward = {(m, d) for m, deps in _imports().items() if m in layer
              for d in deps if d in layer and layer[d] > layer[m]}
    assert upward == KNOWN_UPWARD


def test_the_rules_and_commands_it_names_are_the_real_ones():
    import bcast
    from bcast.cli import build_parser

    table = re.search(r"## Rules \(the names are the public contract\)\n(.*?)\n## ", DESIGN, re.S).group(1)
    named = set(re.findall(r"`([a-z][a-z-]*)`", table))
    assert set(bcast.RULES) <= named, set(bcast.RULES) - named
    commands = set(build_parser()._subparsers._group_actions[0].choices)
    surface = re.search(r"Command line `bcast`.*?```\n(.*?)```", DESIGN, re.S).group(1)
    assert set(re.findall(r"\bbcast ([a-z]+)", surface)) == commands
