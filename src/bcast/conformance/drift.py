"""The proofs of the deviation registry (:mod:`bcast.frameworks.deviations`), as users run them.

Each record has one proof, registered under its id with the shape cases it
runs, in its framework's proof modules (``bcast.frameworks.<name>.proofs`` and
``proofs_*``).  A proof runs the installed runtime and
gives a :class:`Verdict`:

* ``present``: the runtime still deviates as recorded;
* ``gone``: it now does what its spec says (the record gets ``fixed_in``; on a version from
  ``fixed_in`` on, ``gone`` is what the record expects: the verdict is ``ok``);
* ``changed``: it does something else than the record says (``detail`` says what);
* ``skipped``: it cannot run here (the runtime, or another one the proof needs,
  is not installed).

Runs that kill the process (ncnn on an empty blob, OpenVINO compiling a scalar
Broadcast to [], ...) run in a child process, judged by its return code.

:func:`check` runs them all (``bcast deviations --check``), :func:`format_table`
prints the drift table, :func:`exit_status` says whether it passed.

>>> sorted(set(proofs())) == sorted(d.id for d in DEVIATIONS)
True
>>> proof_name("ncnn-garbage")
'bcast.frameworks.ncnn.proofs.ncnn_computes_garbage_silently'
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from ..frameworks._proof import CASES, PROOFS, Gone, Skipped
from ..frameworks import FRAMEWORKS
from ..frameworks.deviations import BY_ID, DEVIATIONS, installed_version

__all__ = ["Verdict", "VERDICTS", "cases", "check", "exit_status", "format_table", "modules", "proof_name", "proofs",
           "prove", "version_key"]

VERDICTS = ("present", "gone", "changed", "skipped")


@functools.cache
def _loaded() -> tuple[str, ...]:
    """Import every framework's proof modules (``proofs`` and ``proofs_*`` in its package), once."""
    found = []
    for package_name in FRAMEWORKS.values():
        package = importlib.import_module(package_name)
        for info in pkgutil.iter_modules(package.__path__):
            if info.name == "proofs" or info.name.startswith("proofs_"):
                found.append(importlib.import_module(f"{package.__name__}.{info.name}").__name__)
    return tuple(found)


def modules() -> tuple[str, ...]:
    """The modules that hold the proofs, framework by framework."""
    names = {fn.__module__ for fn in proofs().values()}
    return tuple(m for m in _loaded() if m in names)


def proofs() -> dict[str, Callable[[str], None]]:
    """Record id -> its proof (a function of the record id)."""
    _loaded()
    return PROOFS


def cases(dev_id: str) -> list:
    """The (shapes, query) cases the record's proof runs (empty for a deviation of values)."""
    _loaded()
    return CASES[dev_id]


def proof_name(dev_id: str) -> str:
    """The dotted name of the record's proof function."""
    fn = proofs()[dev_id]
    return f"{fn.__module__}.{fn.__name__}"


@dataclass(frozen=True)
class Verdict:
    """What one record's proof found on the installed version."""

    id: str
    runtime: str
    package: str
    proven_on: tuple
    installed: str | None
    verdict: str  # one of VERDICTS
    detail: str = ""

    fixed_in: str | None = None  # the record's

    @property
    def ok(self) -> bool:
        """Present, or gone on a version from the record's ``fixed_in`` on (as recorded)."""
        return self.verdict == "present" or (self.verdict == "gone" and self.as_recorded)

    @property
    def as_recorded(self) -> bool:
        """Gone where the record says it is fixed: the installed version is ``fixed_in`` or later."""
        return bool(self.fixed_in and self.installed and version_key(self.installed) >= version_key(self.fixed_in))

    @property
    def new_version(self) -> bool:
        """Present on an installed version the record does not list yet."""
        return self.verdict == "present" and self.installed not in self.proven_on

    def to_dict(self) -> dict:
        return {"id": self.id, "runtime": self.runtime, "package": self.package,
                "proven_on": list(self.proven_on), "installed": self.installed, "verdict": self.verdict,
                "detail": self.detail, "fixed_in": self.fixed_in, "ok": self.ok, "proof": proof_name(self.id)}


def version_key(version: str) -> tuple:
    """A version's numbers, to order versions: ``"1.32.0"`` -> ``(1, 32, 0)``."""
    return tuple(int(n) for n in re.findall(r"\d+", version))


def prove(dev_id: str) -> Verdict:
    """Run the proof of record ``dev_id`` on the installed runtime."""
    d = BY_ID[dev_id]
    fn = proofs()[dev_id]
    here = installed_version(d.package)

    def verdict(v: str, detail: str = "") -> Verdict:
        return Verdict(d.id, str(d.runtime), d.package, tuple(d.proven_on), here, v, detail, d.fixed_in)

    if here is None:
        return verdict("skipped", f"{d.package} is not installed")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(dev_id)
    except Skipped as e:
        return verdict("skipped", str(e))
    except Gone as e:
        return verdict("gone", f"fixed in {here}: {e}")
    except AssertionError as e:
        return verdict("changed", " ".join(str(e).split()) or "an expectation of the proof does not hold")
    except Exception as e:  # noqa: BLE001 - a runtime failing in a new way is a change too
        return verdict("changed", f"the proof failed: {type(e).__name__}: {' '.join(str(e).split())}")
    return verdict("present")


def check(ids=None) -> list[Verdict]:
    """Every record's verdict (or those of ``ids``), in registry order."""
    want = None if ids is None else set(ids)
    return [prove(d.id) for d in DEVIATIONS if want is None or d.id in want]


def exit_status(verdicts: list[Verdict]) -> int:
    """0: every record that could run is present, or gone as recorded (and at least one could run);
    1: some are gone (where the record does not say so) or changed, or none could run at all."""
    ran = [v for v in verdicts if v.verdict != "skipped"]
    return 0 if ran and all(v.ok for v in ran) else 1


def format_table(verdicts: list[Verdict], width: int = 60) -> str:
    """The drift table: record, runtime, proven on, installed, verdict; then the details of every
    record that is not plainly present, and a summary line."""
    rows = [("record", "runtime", "proven on", "installed", "verdict")]
    for v in verdicts:
        mark = " (new version)" if v.new_version else " (as recorded)" if v.verdict == "gone" and v.ok else ""
        rows.append((v.id, v.package, ", ".join(v.proven_on), v.installed or "-", v.verdict + mark))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    notes = [v for v in verdicts if not v.ok]
    if notes:
        lines.append("")
        for v in notes:
            detail = v.detail if len(v.detail) <= 4 * width else v.detail[:4 * width] + "..."
            lines.append(f"{v.id} ({v.verdict}): {detail}")
    counts = {k: sum(v.verdict == k for v in verdicts) for k in VERDICTS}
    lines.append("")
    lines.append(", ".join(f"{n} {k}" for k, n in counts.items()) + f" of {len(verdicts)} records")
    new = sorted({(v.package, v.installed) for v in verdicts if v.new_version})
    if new:
        lines.append("present on versions the registry does not list yet: "
                     + ", ".join(f"{p} {ver}" for p, ver in new)
                     + " (add them to the proven_on versions in bcast/frameworks/<framework>/)")
    if not any(v.verdict != "skipped" for v in verdicts):
        lines.append("nothing could be checked: no runtime the records are about is installed "
                     "(pip install onnxruntime, onnx, openvino or ncnn: each proves its own records)")
    return "\n".join(lines)
