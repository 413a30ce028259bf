"""The columns of ``bcast conformance``: plug-ins, one module per framework.

A column is one way of running a runtime on a rule's cases (onnxruntime's values, OpenVINO's shape
inference...).  Each framework declares its columns in its own package, ``bcast.frameworks.<name>.column``
(``COLUMNS``: a tuple of :class:`Column`), found by name for every registered framework
(:func:`bcast.frameworks.part`): adding a runtime to the matrix is adding that module, nothing here.

A column says which rules it checks through which op (``bind(column_id) -> {rule: Binding}``, read from the
framework's op table) and how it runs them (``adapter(column_id)``, an :class:`Adapter`):
``inputs(case, binding)`` makes a case's inputs (None: the runtime cannot express them),
``expected(binding, inputs, attrs)`` is bcast's answer on them, ``run_all(binding, jobs)`` the runtime's
answers to every job of one rule (an array, a shape, or a
:class:`~bcast.frameworks._oracle.RuntimeRefused`), in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol
from collections.abc import Callable

from ..frameworks import names, part
from ..frameworks.deviations import Runtime

__all__ = ["Adapter", "Binding", "Case", "Column", "arrays", "columns", "runtimes"]


@dataclass(frozen=True)
class Binding:
    """How one column runs one rule: the op and its fixed attributes (and an ONNX op's opset)."""

    column: str
    rule: str
    op: str
    op_attrs: dict = field(default_factory=dict)
    opset: int | None = None


@dataclass
class Case:
    """One case of the matrix: a rule, shapes (numpy order, or ncnn's with ``ncnn_order``), attributes,
    bcast's answer (a Plan or a BroadcastError) and each column's check."""

    id: str
    rule: str
    source: str
    shapes: tuple
    attrs: dict
    result: Any = None  # bcast's Plan or BroadcastError
    checks: dict = field(default_factory=dict)

    @property
    def numpy_shapes(self) -> tuple:
        """The shapes in numpy order (ncnn's are given in [w,h,d,c] with ncnn_order)."""
        return tuple(s[::-1] for s in self.shapes) if self.attrs.get("ncnn_order") else self.shapes


class Adapter(Protocol):
    """How a column runs the cases of one rule (see the module's docstring)."""

    def inputs(self, case: Case, b: Binding) -> tuple[Any, Any] | None: ...

    def expected(self, b: Binding, inputs: Any, attrs: Any) -> Any: ...

    def run_all(self, b: Binding, jobs: list) -> list: ...


@dataclass(frozen=True)
class Column:
    """One column of the matrix: a runtime (``--runtimes`` names it; ``module`` is the Python module whose
    presence and ``__version__`` say it is installed), what of it is compared, the runtimes whose deviation
    records speak for it, which op checks which rule, and the adapter that runs them."""

    id: str
    runtime: str
    module: str
    title: str
    compares: str  # "values" or "shape"
    deviation_runtimes: tuple[Runtime, ...]
    bind: Callable[[str], dict[str, Binding]]
    adapter: Callable[[str], Adapter]


def columns() -> dict[str, Column]:
    """Every column of every registered framework that has a ``column`` module, in the registry's order."""
    out: dict[str, Column] = {}
    for name in names():
        mod = part(name, "column")
        for c in getattr(mod, "COLUMNS", ()):
            out[c.id] = c
    return out


def runtimes() -> dict[str, tuple[str, tuple[str, ...]]]:
    """The runtimes ``--runtimes`` names: runtime -> (its Python module, its column ids)."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for c in columns().values():
        module, ids = out.get(c.runtime, (c.module, ()))
        out[c.runtime] = (module, (*ids, c.id))
    return out


def arrays(case: Case, n: int, dtypes=None) -> list:
    """Inputs of the case's shapes (numpy order): float32 small integers (exact in every runtime),
    deterministic; ``dtypes[i] == "bool"`` gives input ``i`` booleans."""
    import numpy as np

    rng = np.random.default_rng(sum(map(ord, case.id)))
    out = []
    for i, s in enumerate(case.numpy_shapes[:n]):
        if dtypes and dtypes[i] == "bool":
            out.append(rng.integers(0, 2, size=s).astype(bool))
        else:
            out.append(rng.integers(-4, 5, size=s).astype(np.float32))
    return out
