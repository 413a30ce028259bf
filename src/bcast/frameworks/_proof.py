"""What the proofs share: the registry of proofs and their cases, the verdict
exceptions, and small helpers (bcast's own answer on a case, a child process
for runs that kill theirs).

A proof is a function of the record id, registered with :func:`proof` under
that id with the shape cases it runs, in its framework's proof modules
(``bcast.frameworks.<name>.proofs`` and ``proofs_*``, which
:mod:`bcast.conformance.drift` imports).  The record itself names no proof.  It returns normally while the runtime
still deviates as recorded; it raises :class:`Gone` (through :func:`_fixed`)
where the runtime now does what its spec says, :class:`Skipped` where it
cannot run here; any failed expectation (an ``AssertionError``, raised by
:func:`_expect` or ``numpy.testing``) means the runtime does something else.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable

import numpy as np

from ..rules import infer
from ..core.errors import BroadcastError
from .deviations import BY_ID, applicable
from ._oracle import RuntimeRefused, exit_status

#: record id -> its proof (a function of the record id)
PROOFS: dict[str, Callable[[str], None]] = {}
#: record id -> the (shapes, query) cases its proof runs: the query is infer's rule and attributes, and for
#: a record about some ops (only_ops) the op and its other attributes, as :func:`.deviations.applicable`
#: takes them.  A deviation of values (no check) has no shape case.
CASES: dict[str, list] = {}


class Gone(Exception):
    """The runtime no longer deviates as recorded: it does what its spec says."""


class Skipped(Exception):
    """The proof cannot run here (a runtime it needs is not installed)."""


def proof(dev_id: str, cases=()):
    """Register the decorated function as the proof of record ``dev_id``, with its shape cases."""
    if dev_id not in BY_ID:
        raise ValueError(f"no deviation record {dev_id!r}")

    def register(fn):
        if dev_id in PROOFS:
            raise ValueError(f"two proofs of {dev_id!r}")
        PROOFS[dev_id] = fn
        CASES[dev_id] = list(cases)
        return fn

    return register


def _need(module: str):
    """Import ``module`` (a runtime), or skip the proof: it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise Skipped(f"{module} is not installed ({e})") from None


def _fixed(dev_id: str, module, what: str):
    """The runtime no longer deviates as the record says."""
    raise Gone(what)


def _expect(ok, msg=None) -> None:
    """An expectation of the proof (an ``assert`` that ``python -O`` keeps): else the runtime changed."""
    if not ok:
        raise AssertionError(msg if msg is not None else "an expectation of the proof does not hold")


def _changed(msg: str, **_) -> None:
    raise AssertionError(msg)


@contextlib.contextmanager
def _raises(exc_type, match: str | None = None):
    """Like ``pytest.raises``: the block must raise ``exc_type`` (with a message that ``match`` searches)."""
    try:
        yield
    except exc_type as e:
        if match is not None and not re.search(match, str(e)):
            raise AssertionError(f"expected {exc_type.__name__} matching {match!r}, got: {e}") from None
    else:
        raise AssertionError(f"expected {exc_type.__name__}" + (f" matching {match!r}" if match else "")
                             + ", nothing was raised")


def _case(dev_id: str, i: int = 0):
    return CASES[dev_id][i]


def _rule_attrs(attrs: dict) -> dict:
    """A case's query without the op: what infer takes."""
    return {k: v for k, v in attrs.items() if k not in ("op", "op_attrs")}


def _ids(findings) -> list:
    return [f.deviation.id for f in findings]


def _findings(dev_id: str, i: int = 0) -> list:
    """The record's findings on its case ``i`` (one, where its check fires)."""
    shapes, attrs = _case(dev_id, i)
    return [f for f in applicable(*shapes, **attrs) if f.deviation.id == dev_id]


def _plan(dev_id: str, i: int = 0):
    shapes, attrs = _case(dev_id, i)
    return infer(*shapes, **_rule_attrs(attrs))


def _expect_error(dev_id: str, i: int = 0):
    shapes, attrs = _case(dev_id, i)
    with _raises(BroadcastError):
        infer(*shapes, **_rule_attrs(attrs))


def _aligned(plan, arrays):
    """Every input viewed at the output shape, the way bcast's plan places it."""
    return [np.broadcast_to(x.reshape(plan.aligned_shape(i)), plan.shape) for i, x in enumerate(arrays)]


def _run_child(code: str):
    """``code`` in a child Python that imports this very bcast (runs that kill their process)."""
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60, env=env
    )


#: How a child died, in a proof's words (``SIGABRT``).
_signal_name = exit_status


def _refusal(fn, *args, **kwargs):
    """``fn``'s result, or the message of the RuntimeRefused it raises."""
    try:
        return fn(*args, **kwargs)
    except RuntimeRefused as e:
        return e.message
