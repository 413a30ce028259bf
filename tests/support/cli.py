"""The command line run in-process, as the tests call it."""

from __future__ import annotations

import contextlib
import io

from bcast.cli import main


def cli(*argv: str) -> tuple:
    """``main(argv)``: (exit status, stdout).  stderr is left to pytest's capture (``capsys``)."""
    out = io.StringIO()
    try:
        code = main(list(argv), out=out)
    except SystemExit as e:
        code = e.code
    return code, out.getvalue()


def run_cli(*argv: str) -> tuple:
    """``main(argv)``: (exit status, stdout, stderr); argparse's help and version go to sys.stdout, its
    errors to sys.stderr, so both are redirected."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv), out=out)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()
