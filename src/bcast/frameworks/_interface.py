"""The interface every framework implements: what ``bcast.frameworks.<name>.ops`` provides.

A framework's op table module (public name ``bcast.<name>``) is its plug-in.  It names its ops,
plans each on shapes (which rule the op broadcasts by, with the op's attributes mapped onto the
rule's) and runs each on arrays as the framework computes it.  The registry
(:data:`bcast.frameworks.FRAMEWORKS`) says where each framework's package lives; the other parts a
framework may have are modules found by name under its package (:func:`bcast.frameworks.part`).

Modules satisfy :class:`Framework` structurally (``typing.Protocol``): nothing is subclassed or
registered in the module itself; mypy checks each registered op table against it
(:mod:`bcast.frameworks`), and ``isinstance(module, Framework)`` checks that the three are there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..core.plan import Plan

__all__ = ["Framework", "PARTS"]


@runtime_checkable
class Framework(Protocol):
    """One framework's op table: ``ops()``, ``plan()``, ``run()``.

    ``op`` is one of ``ops()`` (a framework may accept other spellings too: ncnn's op numbers,
    any case).  ``shapes`` are in numpy order, each anything :func:`bcast.core.shapes.as_shape`
    takes; for an op whose input is a shape (ONNX's Expand, OpenVINO's Broadcast) its "shape" is
    the input's values.  ``attrs`` are the op's attributes in the framework's own names (ONNX's
    ``opset``, ``broadcast``, ``axis``, ``transA``; OpenVINO's ``auto_broadcast``, ``axis``; ncnn's
    ``ncnn_order``).  A bad op, arity or attribute is an :class:`~bcast.core.errors.InputError`
    naming the choices; shapes the op does not broadcast are a
    :class:`~bcast.core.errors.BroadcastError`.
    """

    def ops(self) -> tuple[str, ...]:
        """The names of the framework's ops, in the framework's spelling and its table's order."""
        ...

    def plan(self, op: str, *shapes: Any, **attrs: Any) -> Plan:
        """The :class:`~bcast.core.plan.Plan` of ``op`` on inputs of ``shapes``: the rule the op
        broadcasts by, its attributes mapped onto the rule's (no arrays, no values)."""
        ...

    def run(self, op: str, *arrays: Any, **attrs: Any) -> Any:
        """``op`` computed on numpy arrays as the framework computes it (its broadcasting, types and
        kernels); ``out=`` where the framework takes it."""
        ...


#: The parts a framework's package may hold besides its op table, each a module of that name
#: (``bcast.frameworks.<name>.<part>``): its deviation records with their proofs, its oracle
#: adapters (the installed runtime, run the way bcast checks it), its columns of ``bcast conformance``
#: (:mod:`bcast.conformance.columns`).  Lint and rewrite targets are
#: modules named ``lint_<target>`` / ``rewrite_<target>`` (ncnn's ``lint_pnnx``).
PARTS = ("ops", "deviations", "proofs", "oracle", "column")
