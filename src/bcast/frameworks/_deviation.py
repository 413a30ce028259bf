"""What a deviation record is: :class:`Deviation` (one runtime's departure from its spec, with the
``check`` that says where it bears on a query), the :class:`Runtime` enum its ``runtime`` is a member of,
the :class:`Outcome` a check reads, and the :class:`Note` it makes.

Each framework's records live in its own package (``bcast.frameworks.<name>.deviations``), each
``check`` beside its record, with an enum of that framework's runtimes derived from :class:`Runtime`;
:mod:`bcast.frameworks.deviations` assembles them into the registry.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..core._format import format_shape
from ..core.errors import BroadcastError
from ..core.plan import Plan
from ..rules import infer

__all__ = ["Deviation", "Note", "Outcome", "Runtime", "attempt", "installed_version", "verdict"]


class Runtime(str, Enum):
    """A program whose departures from its spec are recorded: a runtime, or one part of one (its CPU
    plugin, its reference evaluator, a converter).  Each framework derives its own enum from this one
    (in its ``deviations`` module); a member's value is the name the notes and the JSON print."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @property
    def package(self) -> str:
        """The distribution whose version the records are about: ``onnx`` for ``onnx.reference...``."""
        return str(self.value).split()[0].split(".")[0]

    @property
    def framework(self) -> str:
        """The framework whose package defines this runtime (``bcast.frameworks.<framework>.deviations``)."""
        return type(self).__module__.split(".")[-2]


@dataclass(frozen=True)
class Outcome:
    """What a rule made of one query: a plan or an error, with the query (and
    the op it was for, with that op's other attributes, when the caller knows)."""

    rule: str
    shapes: tuple
    attrs: dict
    plan: Plan | None = None
    error: BroadcastError | None = None
    op: str | None = None
    op_attrs: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.plan is not None

    @classmethod
    def of(cls, result: Plan | BroadcastError, op: str | None = None, op_attrs: dict | None = None) -> Outcome:
        extra: dict[str, Any] = {"op": op, "op_attrs": dict(op_attrs or {})}
        if isinstance(result, Plan):
            return cls(result.rule, result.inputs, dict(result.attrs), plan=result, **extra)
        return cls(result.rule, result.shapes, dict(result.attrs), error=result, **extra)


#: A record's check: a sentence about one query where the record bears on it, else None.
Check = Callable[[Outcome], str | None]


@dataclass(frozen=True, kw_only=True)
class Deviation:
    """One runtime's departure from its spec.

    ``proven_on``: the versions of the runtime's package (``package``) its
    proof found it on, oldest first; ``version`` is the newest of them.
    ``fixed_in``: the version where the proof found it gone, if any (the record
    stays: it still holds for the versions before).  Its proof is registered
    under ``id`` with the framework's proofs (``bcast.frameworks.<framework>.proofs*``);
    ``bcast deviations --check`` runs it on the installed version.

    ``check(outcome)`` returns a sentence about one query where the record
    bears on it, else None; a ``check`` of None marks a deviation of values
    that no shape predicts.  ``only_ops``: the ops (as the op tables spell
    them) the record is about; empty for a record about a rule, whatever the op.
    ``kills_process``: the runtime's behaviour kills the process (conformance runs no such case).
    ``needs_omitted_attr``: the deviation needs an attribute left out (a builder's default): a
    model that writes every attribute out avoids it.
    """

    id: str
    runtime: Runtime
    proven_on: tuple[str, ...]
    rules: tuple[str, ...]
    ops: str
    condition: str
    behaviour: str
    spec: str
    check: Check | None = field(default=None, repr=False, compare=False)
    only_ops: tuple[str, ...] = ()
    fixed_in: str | None = None
    kills_process: bool = False
    needs_omitted_attr: bool = False

    @property
    def version(self) -> str:
        """The newest version the record was proven on."""
        return self.proven_on[-1]

    @property
    def package(self) -> str:
        """The distribution whose version the record is about: ``onnx`` for ``onnx.reference...``."""
        return self.runtime.package

    @property
    def framework(self) -> str:
        """The framework whose package holds the record."""
        return self.runtime.framework

    @property
    def installed(self) -> str | None:
        """The version of ``package`` installed here, or None."""
        return installed_version(self.package)

    @property
    def test(self) -> str:
        """The test that runs the proof on the locked versions."""
        return f"tests/frameworks/test_deviations_{self.framework}.py::test_proof_holds[{self.id}]"

    def drift(self) -> str:
        """Empty where the installed version is one the record was proven on (or none is installed),
        else e.g. ``proven on 1.31.1, 1.32.0; installed 1.33.0``."""
        here = self.installed
        if here is None or here in self.proven_on:
            return ""
        fixed = f"; fixed in {self.fixed_in}" if self.fixed_in else ""
        return f"proven on {', '.join(self.proven_on)}{fixed}; installed {here}"

    def label(self) -> str:
        """The runtime and its version, as the notes print them: "onnxruntime 1.32.0", or with the
        installed version where the record was not proven on it ("onnxruntime (proven on ...; installed ...)")."""
        drift = self.drift()
        return f"{self.runtime} ({drift})" if drift else f"{self.runtime} {self.version}"

    def concerns(self, op: str | None) -> bool:
        """Whether a query about ``op`` (None: an op not known) may meet this record."""
        return not self.only_ops or op in self.only_ops

    def to_dict(self) -> dict:
        """The record as ``bcast deviations --json`` prints it (the CLI adds the name of its proof)."""
        return {
            "id": self.id, "runtime": str(self.runtime), "version": self.version, "proven_on": list(self.proven_on),
            "fixed_in": self.fixed_in, "package": self.package, "installed": self.installed,
            "rules": list(self.rules), "ops": self.ops, "only_ops": list(self.only_ops),
            "condition": self.condition, "behaviour": self.behaviour, "spec": self.spec, "test": self.test,
        }


@functools.cache
def installed_version(package: str) -> str | None:
    """The installed version of distribution ``package`` (read from its metadata: nothing is imported)."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Note:
    """One deviation that bears on one query, and what it means there: a note, as explain, compare and
    lint print it (a lint finding, :class:`bcast.models.findings.Finding`, is a verdict on a node that
    carries these)."""

    deviation: Deviation
    note: str

    def to_dict(self) -> dict:
        d = self.deviation
        return {"id": d.id, "runtime": str(d.runtime), "version": d.version, "note": self.note,
                "proven_on": list(d.proven_on), "fixed_in": d.fixed_in, "installed": d.installed}


def attempt(rule: str, *shapes: Any, **attrs: Any) -> Plan | BroadcastError:
    """What ``rule`` makes of ``shapes``: its plan, or the error it raises."""
    try:
        return infer(*shapes, rule=rule, **attrs)
    except BroadcastError as e:
        return e


def verdict(result: Plan | BroadcastError) -> str:
    """A result as a note says it: its shape, or "an error"."""
    return format_shape(result.shape) if isinstance(result, Plan) else "an error"
