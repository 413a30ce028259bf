"""TensorRT's deviation records: none.  A record says where a runtime departs from its own specification and
is proven by running that runtime; no TensorRT runtime runs here, so bcast has the specification only and
records nothing (:mod:`bcast.frameworks._spec`)."""

from __future__ import annotations

from .._deviation import Deviation, Runtime

__all__ = ["DEVIATIONS", "RUNTIME", "TensorRTRuntime"]


class TensorRTRuntime(Runtime):
    """The TensorRT implementations a record would be about (none is recorded)."""

    TENSORRT = "tensorrt"


#: The records: none (nothing of TensorRT's runs here to prove one).
DEVIATIONS: tuple[Deviation, ...] = ()
#: The framework's runtime enum (compare --framework keeps the records of its members).
RUNTIME = TensorRTRuntime
