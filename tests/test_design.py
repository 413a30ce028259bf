"""docs/design.md is true of the code: its rules and commands are the real ones (its layer diagram is
checked by tests/test_architecture.py)."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "bcast"
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")

def test_the_rules_and_commands_it_names_are_the_real_ones():
    import bcast
    from bcast.cli import build_parser

    table = re.search(r"## Rules \(the names are the public contract\)\n(.*?)\n## ", DESIGN, re.S).group(1)
    named = set(re.findall(r"`([a-z][a-z-]*)`", table))
    assert set(bcast.RULES) <= named, set(bcast.RULES) - named
    commands = set(build_parser()._subparsers._group_actions[0].choices)
    surface = re.search(r"Command line `bcast`.*?```\n(.*?)```", DESIGN, re.S).group(1)
    assert set(re.findall(r"\bbcast ([a-z]+)", surface)) == commands
