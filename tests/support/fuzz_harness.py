"""The fuzz suite's harness: one decorator for every fuzz test, and the figures it records.

Every fuzz test is a hypothesis test whose body is wrapped by :func:`fuzz`::

    @given(text=st.text())
    @fuzz("shape parser", examples=300)
    def test_parse(text): ...

``fuzz`` gives the test its settings (``examples`` cases in the suite; the environment
variable ``BCAST_FUZZ_EXAMPLES`` raises every target to that many for a campaign, see the
README), stops any single case that runs past ``BCAST_FUZZ_CASE_SECONDS`` (10 s; nothing may
hang; :func:`time_limit`), and counts the cases and the longest one per target.  ``tests/conftest.py`` prints the
table at the end of the run and writes it as JSON to ``$BCAST_FUZZ_REPORT`` when that is set.

:func:`only_documented` is the invariant: inside it, only bcast's documented errors may escape
(``BroadcastError``, ``InputError`` and its ``MemoryBudgetError``, ``TranslationError``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import threading
import time

from hypothesis import HealthCheck, settings

#: target -> [cases, seconds in all, longest case in seconds]
REPORT: dict[str, list] = {}

CAMPAIGN = int(os.environ.get("BCAST_FUZZ_EXAMPLES", "0") or 0)
CASE_SECONDS = float(os.environ.get("BCAST_FUZZ_CASE_SECONDS", "10"))


class CaseTimeout(AssertionError):
    """A single fuzz case ran past its time limit: a hang, as far as the suite is concerned."""


#: After the first alarm, the next ones come this often (seconds) until one gets through.
RETRY_SECONDS = 0.05


@contextlib.contextmanager
def time_limit(seconds: float = CASE_SECONDS):
    """Raise CaseTimeout in the main thread if the block runs past ``seconds``.

    Python drops an exception raised where it cannot propagate (a gc callback, as hypothesis
    installs, a ``__del__``, a weakref callback): it prints "Exception ignored in" and the block
    runs on.  So the alarm re-arms itself every :data:`RETRY_SECONDS` until one raise gets
    through, and a block that still ends past ``seconds`` (the main thread stuck in C code, every
    raise dropped) fails when it ends: the limit holds either way.
    """
    message = f"a single fuzz case ran past {seconds:g} s"
    start = time.monotonic()
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
    else:
        def alarm(signum, frame):
            signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS)  # in case this raise is dropped
            raise CaseTimeout(message)

        old = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    took = time.monotonic() - start
    if took > seconds:
        raise CaseTimeout(f"{message} ({took:.1f} s)")


def fuzz(target: str, *, examples: int = 100, **overrides):
    """Decorator (under ``@given``): settings, a per-case time limit, and the figures for ``target``."""

    def decorate(test):
        @functools.wraps(test)
        def case(*args, **kwargs):
            start = time.perf_counter()
            try:
                with time_limit():
                    return test(*args, **kwargs)
            finally:
                took = time.perf_counter() - start
                row = REPORT.setdefault(target, [0, 0.0, 0.0])
                row[0] += 1
                row[1] += took
                row[2] = max(row[2], took)

        options = dict(
            max_examples=max(CAMPAIGN, examples),
            deadline=None,
            database=None,
            derandomize=not CAMPAIGN,  # the suite is reproducible; a campaign explores
            suppress_health_check=list(HealthCheck),
        )
        options.update(overrides)
        return settings(**options)(case)

    return decorate


def documented_errors() -> tuple:
    import bcast
    from bcast.translation.search import TranslationError

    return (bcast.BroadcastError, bcast.InputError, TranslationError)


@contextlib.contextmanager
def only_documented(*also):
    """Swallow bcast's documented errors (and ``also``); anything else escapes and fails the test."""
    try:
        yield
    except documented_errors() + tuple(also):
        pass
