"""WebNN's deviation records: none.  A record says where a runtime departs from its own specification and
is proven by running that runtime; no WebNN runtime runs here, so bcast has the specification only and
records nothing (:mod:`bcast.frameworks._spec`)."""

from __future__ import annotations

from .._deviation import Deviation, Runtime

__all__ = ["DEVIATIONS", "RUNTIME", "WebNNRuntime"]


class WebNNRuntime(Runtime):
    """The WebNN implementations a record would be about (none is recorded)."""

    WEBNN = "webnn"


#: The records: none (nothing of WebNN's runs here to prove one).
DEVIATIONS: tuple[Deviation, ...] = ()
#: The framework's runtime enum (compare --framework keeps the records of its members).
RUNTIME = WebNNRuntime
