"""What bcast knows about each framework, one package per framework, and the registry of them.

Each package holds its op table (``<package>.ops``: ``ops()``, ``plan()``, ``run()``, the
:class:`~bcast.frameworks._interface.Framework` interface), its deviation records with their
proofs, its oracle adapters, its lint and rewrite targets (the package's ``TARGETS``,
:func:`targets`).  :data:`FRAMEWORKS` is the one place that lists them: adding a framework is
adding its package and one line there.  Nothing here
imports a framework's modules until asked (an op table needs numpy; the registry does not).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from ..core._format import brief
from ..core.errors import InputError
from ..core.plan import Plan
from ._interface import PARTS, Framework

if TYPE_CHECKING:  # mypy checks here that every op table implements the interface (never run)
    from .jax import ops as _jax
    from .ncnn import ops as _ncnn
    from .onnx import ops as _onnx
    from .openvino import ops as _openvino
    from .tflite import ops as _tflite
    from .tensorrt import ops as _tensorrt
    from .tosa import ops as _tosa
    from .webnn import ops as _webnn
    from .torch import ops as _torch
    from .paddle import ops as _paddle
    from .nnapi import ops as _nnapi
    from .mnn import ops as _mnn
    from .coreml import ops as _coreml
    from .stablehlo import ops as _stablehlo

    _IMPLEMENTED: tuple[Framework, ...] = (_onnx, _openvino, _ncnn, _tflite, _tensorrt, _tosa, _webnn, _torch, _paddle,
                                           _nnapi, _mnn, _coreml, _stablehlo, _jax)

__all__ = ["FRAMEWORKS", "Framework", "PARTS", "framework", "names", "op_name", "part", "plan", "takes_sizes",
           "targets"]

#: Every framework bcast knows: its name (as the command line's ``--framework`` takes it) and the
#: package that holds all bcast knows about it.
FRAMEWORKS: dict[str, str] = {
    "onnx": "bcast.frameworks.onnx",
    "openvino": "bcast.frameworks.openvino",
    "ncnn": "bcast.frameworks.ncnn",
    "tflite": "bcast.frameworks.tflite",
    "tensorrt": "bcast.frameworks.tensorrt",
    "tosa": "bcast.frameworks.tosa",
    "webnn": "bcast.frameworks.webnn",
    "torch": "bcast.frameworks.torch",
    "paddle": "bcast.frameworks.paddle",
    "nnapi": "bcast.frameworks.nnapi",
    "mnn": "bcast.frameworks.mnn",
    "coreml": "bcast.frameworks.coreml",
    "stablehlo": "bcast.frameworks.stablehlo",
    "jax": "bcast.frameworks.jax",
}


def names() -> tuple[str, ...]:
    """The registered frameworks' names, in the registry's order.

    >>> names()[:4], len(names())
    (('onnx', 'openvino', 'ncnn', 'tflite'), 14)
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


def op_name(name: str, op: Any) -> Any:
    """``op`` as framework ``name``'s table spells it (``ops()``), the spelling deviation records name ops by
    (their ``only_ops``): the op itself, else the one op that differs only in case, else ``op`` as given.

    >>> op_name("mnn", "Greater"), op_name("onnx", "Where"), op_name("ncnn", 8)
    ('GREATER', 'Where', 8)
    """
    table = framework(name).ops()
    if not isinstance(op, str) or op in table:
        return op
    same = [o for o in table if o.casefold() == op.strip().casefold()]
    return same[0] if len(same) == 1 else op


def takes_sizes(name: str, op: Any) -> bool:
    """Whether framework ``name``'s ``op`` is an ``expand`` of the eager frameworks (torch's and Paddle's
    ``expand`` / ``broadcast_to``), whose second shape is the sizes, where -1 keeps the tensor's dim; False for
    any other op, and for a name no table has (planning it says so).

    >>> takes_sizes("torch", "expand"), takes_sizes("torch", "add"), takes_sizes("onnx", "Expand")
    (True, False, False)
    """
    find = getattr(part(name, "ops"), "op", None)
    if find is None:
        return False
    try:
        o = find(op_name(name, op))
    except InputError:
        return False
    from ._eager import EagerOp

    return isinstance(o, EagerOp) and o.kind == "expand"


def part(name: str, what: str) -> ModuleType | None:
    """The module ``what`` of framework ``name`` (``part("ncnn", "oracle")``), or None when the
    framework has none; it is loaded only when it exists."""
    module = f"{_package(name)}.{what}"
    if importlib.util.find_spec(module) is None:
        return None
    return importlib.import_module(module)


def targets(kind: str) -> dict[str, str]:
    """The ``kind`` (``lint`` or ``rewrite``) targets of the registered frameworks: target name -> the
    module that implements it, ``onnx`` first (the default target), then by name.

    A framework package declares its targets in its ``__init__`` (``TARGETS``: target name -> the
    name its modules carry, ``{"ncnn": "pnnx"}``); a target of ``kind`` is one whose module
    ``<package>.<kind>_<name>`` exists.  Only the framework packages' ``__init__`` modules are
    imported (they import nothing), never a target's module: the command line lists the targets
    without loading onnx.

    >>> targets("rewrite")
    {'onnx': 'bcast.frameworks.onnx.rewrite_onnx', 'ncnn': 'bcast.frameworks.ncnn.rewrite_pnnx', \
'onnx2ncnn': 'bcast.frameworks.ncnn.rewrite_onnx2ncnn', 'onnx2tf': 'bcast.frameworks.tflite.rewrite_onnx2tf', \
'openvino': 'bcast.frameworks.openvino.rewrite_openvino', 'tensorrt': 'bcast.frameworks.tensorrt.rewrite_tensorrt', \
'tosa': 'bcast.frameworks.tosa.rewrite_tosa'}
    """
    found = {}
    for package in FRAMEWORKS.values():
        declared: dict[str, str] = getattr(importlib.import_module(package), "TARGETS", {})
        for target, module in declared.items():
            if importlib.util.find_spec(f"{package}.{kind}_{module}") is not None:
                found[target] = f"{package}.{kind}_{module}"
    return dict(sorted(found.items(), key=lambda item: (item[0] != "onnx", item[0])))


def plan(name: str, op: str, *shapes: Any, **attrs: Any) -> Plan:
    """``framework(name).plan(op, *shapes, **attrs)``, where a call its signature refuses (too many
    shapes, an attribute it does not take) is an InputError that says so, as every other bad request.

    >>> plan("ncnn", "ADD", (2, 3), (2, 3), (2, 3))
    Traceback (most recent call last):
    ...
    bcast.core.errors.InputError: ncnn ADD: takes 1 to 2 shapes, got 3
    """
    fw = framework(name)
    signature = inspect.signature(fw.plan)
    params = list(signature.parameters.values())[1:]  # after op
    try:
        signature.bind(op, *shapes, **attrs)
    except TypeError:
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        least = sum(p.default is p.empty for p in positional)
        if not any(p.kind is p.VAR_POSITIONAL for p in params) and not least <= len(shapes) <= len(positional):
            raise InputError(f"{name} {op}: takes {least} to {len(positional)} shapes, got {len(shapes)}") from None
        known = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        unknown = ", ".join(k for k in attrs if k not in known)
        takes = ", ".join(known) or "none"
        raise InputError(f"{name} {op}: no attribute {unknown} (its attributes: {takes})") from None
    return fw.plan(op, *shapes, **attrs)
