"""The package's architecture holds: every module sits in one layer of docs/design.md's diagram, no import
reaches up a layer, no two modules import each other through any chain, and no source module is over
700 lines.  Imports are read from the source, at module level and inside functions (an import inside a
function is still a dependency); only ``if TYPE_CHECKING:`` blocks are left out, since they never run."""

from __future__ import annotations

import ast
import fnmatch
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
MAX_LINES = 700



def modules() -> dict[str, tuple[pathlib.Path, bool]]:
    """Dotted name -> (file, is a package) for every module of the package."""
    found = {}
    for path in (SRC / "bcast").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(name: str, mods: dict) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its code but ``if TYPE_CHECKING:``."""
    path, package = mods[name]
    here = name.split(".") if package else name.split(".")[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking(child):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name.split(".")[0] == "bcast")
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = here[: len(here) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.split(".")[0] == "bcast":
                    for a in child.names:
                        found.add(f"{target}.{a.name}" if f"{target}.{a.name}" in mods else target)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in mods and m != name}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {m: imports(m, mods) for m in mods}


def layers() -> list[tuple[str, list[str]]]:
    """docs/design.md's layer diagram, top first: (layer, the module patterns it holds)."""
    block = re.search(r"## Layers\n.*?```\n(.*?)```", DESIGN, re.S).group(1)
    out = []
    for line in block.strip("\n").splitlines():
        name, _, patterns = line.strip().partition(" ")
        out.append((name, [p.strip() for p in patterns.split(",") if p.strip()]))
    return out


def layer_of(module: str, table: list) -> tuple[int, str] | None:
    """The index (0 = top) and name of the layer whose most specific pattern matches ``module``."""
    rel = "bcast" if module == "bcast" else module.removeprefix("bcast.")
    best = None
    for index, (name, patterns) in enumerate(table):
        for p in patterns:
            if fnmatch.fnmatchcase(rel, p):
                weight = len(p.replace("*", ""))
                if best is None or weight > best[0]:
                    best = (weight, index, name)
    return None if best is None else best[1:]


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_every_module_is_in_one_layer():
    table = layers()
    assert [m for m in sorted(modules()) if layer_of(m, table) is None] == []


def test_no_import_reaches_up_a_layer():
    table = layers()
    upward = set()
    for m, deps in graph().items():
        for d in deps:
            if layer_of(d, table)[0] < layer_of(m, table)[0]:
                upward.add((m, d))
    assert sorted(upward) == []


def test_no_import_cycle():
    g = graph()
    assert cycles(g) == []


def test_no_module_over_700_lines():
    sizes = {m: len(path.read_text(encoding="utf-8").splitlines()) for m, (path, _) in modules().items()}
    over = {m for m, n in sizes.items() if n > MAX_LINES}
    assert {m: sizes[m] for m in over} == {}


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
