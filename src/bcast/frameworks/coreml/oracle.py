"""Oracle: coremltools' MIL builder, which types a program on any machine (its runtime, ``predict``,
runs only on macOS).

:func:`infer_shape` builds a one-op MIL program (``mb.program``) whose inputs have the given shapes
(a rank-0 input is a constant scalar: a program's inputs are tensors) and returns the output shape
its type inference gives, or raises :class:`RuntimeRefused` with coremltools' message.
:func:`convert_refuses` runs the converter's own check of the program (``ct.convert`` to an ML
program, no passes, no compilation), which is where Core ML's rank limit is enforced.

coremltools is imported on first use: ``pip install 'bcast[coreml]'``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Sequence
from typing import Any

from .._oracle import RuntimeRefused, last_line
from .ops import op as _op

__all__ = ["RuntimeRefused", "convert_refuses", "infer_shape", "infer_shapes", "version"]

RUNTIME = "coremltools"


@contextlib.contextmanager
def _quiet():
    """coremltools' import and builder log and warn (torch missing, the passes run): silenced."""
    err = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stderr(err):
        warnings.simplefilter("ignore")
        previous = logging.root.manager.disable
        logging.disable(logging.WARNING)
        try:
            yield
        finally:
            logging.disable(previous)


def _ct():
    from ...core._require import require

    with _quiet():
        require("coremltools", "the Core ML oracle")
        import coremltools as ct
        from coremltools.converters.mil import Builder as mb
        from coremltools.converters.mil.mil import types
    return ct, mb, types


def version() -> str:
    """The installed coremltools' version, e.g. ``9.0``."""
    return str(_ct()[0].__version__)


def _program(op: str, shapes: Sequence[tuple], dtypes: Sequence[str] | None = None):
    """The one-op program of ``op`` on inputs of ``shapes``, and its output var."""
    import numpy as np

    ct, mb, types = _ct()
    from coremltools.converters.mil.mil import Function, Program

    o = _op(op)
    if dtypes is None:
        first = "bool" if o.types == ("bool",) else "fp32"
        dtypes = ["bool" if o.name == "select" and i == 0 else first for i in range(len(shapes))]
    mil = {"fp32": types.fp32, "bool": types.bool, "int32": types.int32, "fp16": types.fp16}
    specs = {f"x{i}": mb.placeholder(shape=tuple(s), dtype=mil[d]) for i, (s, d) in enumerate(zip(shapes, dtypes))
             if len(s)}
    consts = {"bool": np.bool_(True), "int32": np.int32(1), "fp16": np.float16(1), "fp32": np.float32(1)}
    with Function(specs) as func:  # as mb.program builds one (its decorator wants named parameters)
        args = [func.inputs[f"x{i}"] if len(s) else mb.const(val=consts[d])
                for i, (s, d) in enumerate(zip(shapes, dtypes))]
        out = getattr(mb, o.name)(**dict(zip(o.inputs, args)))
        func.set_outputs([out])
    func.opset_version = func.get_max_opset_version_and_op()[0]
    prog = Program()
    prog.add_function("main", func)
    return ct, prog, out


def infer_shape(op: str, shapes: Sequence[Any], dtypes: Sequence[str] | None = None) -> tuple:
    """The output shape MIL's type inference gives ``op`` on inputs of ``shapes`` (``dtypes``: MIL's
    ``fp32`` (default), ``fp16``, ``int32``, ``bool``; select's cond and the logical ops' inputs are
    bool); :class:`RuntimeRefused` with coremltools' message where it refuses.

    >>> infer_shape("add", [(2, 1), (3,)])  # doctest: +SKIP
    (2, 3)
    """
    shapes = [tuple(int(d) for d in s) for s in shapes]
    try:
        with _quiet():
            _, _, out = _program(op, shapes, dtypes)
    except (ValueError, TypeError, AssertionError, IndexError) as e:
        raise RuntimeRefused(RUNTIME, last_line(e)) from None
    return tuple(int(d) for d in out.shape)


def infer_shapes(op: str, cases: Sequence[Sequence[Any]]) -> list:
    """:func:`infer_shape` of each case (a list of shapes): its shape or its :class:`RuntimeRefused`."""
    out: list = []
    for shapes in cases:
        try:
            out.append(infer_shape(op, shapes))
        except RuntimeRefused as e:
            out.append(e)
    return out


def convert_refuses(op: str, shapes: Sequence[Any]) -> str | None:
    """The converter's refusal of the one-op program (``ct.convert`` to an ML program with no passes;
    nothing is compiled), or None where it converts it."""
    ct, prog, _ = _program(op, [tuple(s) for s in shapes])
    try:
        with _quiet():
            ct.convert(prog, convert_to="mlprogram", pass_pipeline=ct.PassPipeline.EMPTY,
                       skip_model_load=True)
    except ValueError as e:
        return last_line(e)
    return None
