"""What bcast knows about each framework, one package per framework, and the registry of them.

Each package holds its op table (``<package>.ops``: ``ops()``, ``plan()``, ``run()``, the
:class:`~bcast.frameworks._interface.Framework` interface), its deviation records with their
proofs, its oracle adapters, its lint and rewrite targets.  :data:`FRAMEWORKS` is the one place
that lists them: adding a framework is adding its package and one line there.  Nothing here
imports a framework's modules until asked (an op table needs numpy; the registry does not).
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import TYPE_CHECKING, cast

from ..core._format import brief
from ..core.errors import InputError
from ._interface import PARTS, Framework

if TYPE_CHECKING:  # mypy checks here that every op table implements the interface (never run)
    from .ncnn import ops as _ncnn
    from .onnx import ops as _onnx
    from .openvino import ops as _openvino

    _IMPLEMENTED: tuple[Framework, ...] = (_onnx, _openvino, _ncnn)

__all__ = ["FRAMEWORKS", "Framework", "PARTS", "framework", "names", "part"]

#: Every framework bcast knows: its name (as the command line's ``--framework`` takes it) and the
#: package that holds all bcast knows about it.
FRAMEWORKS: dict[str, str] = {
    "onnx": "bcast.frameworks.onnx",
    "openvino": "bcast.frameworks.openvino",
    "ncnn": "bcast.frameworks.ncnn",
}


def names() -> tuple[str, ...]:
    """The registered frameworks' names, in the registry's order.

    >>> names()
    ('onnx', 'openvino', 'ncnn')
    """
    return tuple(FRAMEWORKS)


def _package(name: object) -> str:
    if not isinstance(name, str) or name not in FRAMEWORKS:
        raise InputError(f"unknown framework {brief(name)}; the frameworks are: {', '.join(FRAMEWORKS)}")
    return FRAMEWORKS[name]


def framework(name: str) -> Framework:
    """The op table of framework ``name`` (its ``ops``, ``plan``, ``run``); loads it (and numpy).

    >>> framework("ncnn").plan("ADD", (4, 3, 2), (4, 3)).shape
    (4, 3, 2)
    """
    return cast(Framework, importlib.import_module(f"{_package(name)}.ops"))


def part(name: str, what: str) -> ModuleType | None:
    """The module ``what`` of framework ``name`` (``part("ncnn", "oracle")``), or None when the
    framework has none; it is loaded only when it exists."""
    module = f"{_package(name)}.{what}"
    if importlib.util.find_spec(module) is None:
        return None
    return importlib.import_module(module)
