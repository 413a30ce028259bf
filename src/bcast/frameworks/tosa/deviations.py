"""TOSA's deviation records: none.  A record says where a runtime departs from its own specification and
is proven by running that runtime; no TOSA runtime runs here, so bcast has the specification only and
records nothing (:mod:`bcast.frameworks._spec`)."""

from __future__ import annotations

from .._deviation import Deviation, Runtime

__all__ = ["DEVIATIONS", "RUNTIME", "TosaRuntime"]


class TosaRuntime(Runtime):
    """The TOSA implementations a record would be about (none is recorded)."""

    TOSA = "tosa"


#: The records: none (nothing of TOSA's runs here to prove one).
DEVIATIONS: tuple[Deviation, ...] = ()
#: The framework's runtime enum (compare --framework keeps the records of its members).
RUNTIME = TosaRuntime
