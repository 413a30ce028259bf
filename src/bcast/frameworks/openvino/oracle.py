"""OpenVINO as an oracle: one op, built on Parameters, inferred, compiled or evaluated.

Three questions, each answered by OpenVINO itself:

- :func:`infer_shape` -- the op's own shape inference on static-shaped
  Parameters: the output shape, or :class:`RuntimeRefused` with the last line
  of OpenVINO's message (``Argument shapes are inconsistent.``);
- :func:`run` with ``device="CPU"`` -- the op compiled on the CPU plugin and
  run.  Models have dynamic dims (rank fixed) and are cached by (op, element
  types, ranks, attributes), so a thousand cases cost one compile per kind;
- :func:`run_many` -- many cases of one op in one model (static shapes),
  compiled once: a thousand cases cost about a second.  Where the model
  fails, it is split until the failing cases are found;
- :func:`run` with ``device="evaluate"`` -- ``Model.evaluate``, the core's
  reference implementation, no plugin: what the CPU plugin cannot run (pdpd
  with most ops, reference/openvino.md) it can.

Ops are named as OpenVINO names them (``Add``, ``Select``, ``PRelu``,
``Broadcast``...) and take OpenVINO's attributes, written as
:func:`bcast.openvino.run` takes them: ``auto_broadcast`` and ``axis``
(pdpd); ``python_division`` (Divide); ``mode``, ``axis`` and ``version``
(Broadcast, whose ``target_shape`` and ``axes_mapping`` inputs are integer
arrays, given as values: Constants in the model).  The pdpd axis is always
set, -1 by default (OpenVINO's Python builders would leave it at 0).

OpenVINO is imported when first used; it is an optional dependency.

>>> from bcast.frameworks.openvino import oracle as ov_oracle          # doctest: +SKIP
>>> ov_oracle.infer_shape("Add", [(2, 3, 4, 5), (3, 4)], auto_broadcast="pdpd", axis=1)  # doctest: +SKIP
(2, 3, 4, 5)
>>> ov_oracle.infer_shape("Add", [(2, 3), (3, 1)], auto_broadcast="pdpd", axis=1)  # doctest: +SKIP
Traceback (most recent call last):
...
bcast.frameworks._oracle.RuntimeRefused: openvino refused: Argument shapes are inconsistent.
"""

from __future__ import annotations

from functools import lru_cache, cache
from collections.abc import Sequence

from .._oracle import RuntimeRefused, last_line
from .ops import OPS

__all__ = ["RuntimeRefused", "compile_cpu", "infer_shape", "node", "run", "run_many", "version", "DEVICES"]

DEVICES = ("CPU", "evaluate")


def version() -> str:
    """The installed OpenVINO's version string."""
    return _ov().__version__


# --------------------------------------------------------------------------- lazy imports


@cache
def _ov():
    from ...core._require import require

    return require("openvino", "the OpenVINO oracle")


@cache
def _factory(opset: str):
    from openvino.utils.node_factory import NodeFactory

    return NodeFactory(opset)


@cache
def _core():
    return _ov().Core()


def node(op: str, inputs: Sequence, attrs: dict):
    """One node of ``op`` on ``inputs`` (output ports): an op of :data:`bcast.openvino.OPS` with its
    attributes as :func:`run` takes them (``auto_broadcast``, ``axis``, ``mode``...), any other op of
    opset16 (``Reshape``, ``Unsqueeze``, ``MatMul``...) with OpenVINO's own attribute names."""
    opset = "opset16"
    if op in OPS:
        opset, attrs = _node_attrs(op, attrs)
    return _factory(opset).create(op, list(inputs), attrs)


def compile_cpu(model):
    """``model`` compiled on the CPU plugin, f32 throughout (else the plugin may compute MatMul in a
    lower precision)."""
    return _core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})


def _element_type(dtype):
    import numpy as np

    ov = _ov()
    dtype = np.dtype(dtype)
    return ov.Type.boolean if dtype == np.bool_ else ov.Type(dtype)


# --------------------------------------------------------------------------- building one op


def _is_broadcast(op: str) -> bool:
    return op == "Broadcast"


def _node_attrs(op: str, attrs: dict) -> tuple[str, dict]:
    """The opset and the attribute dict (OpenVINO's keys) for ``op``."""
    attrs = dict(attrs)
    if _is_broadcast(op):
        version = attrs.pop("version", 3)
        mode = attrs.pop("mode", "numpy")
        axis = attrs.pop("axis", -1)
        out = {"mode": mode}
        if mode == "pdpd":
            out["mode.mode.axis" if version == 3 else "mode.auto_broadcast_axis"] = axis
        _no_more(op, attrs)
        return f"opset{version}", out
    out = {}
    if "auto_broadcast" in attrs or op != "PRelu":
        mode = attrs.pop("auto_broadcast", "numpy")
        axis = attrs.pop("axis", -1)
        out["auto_broadcast"] = mode
        if mode == "pdpd":
            out["auto_broadcast.auto_broadcast_axis"] = axis
    if "python_division" in attrs:
        out["m_pythondiv"] = bool(attrs.pop("python_division"))
    if "levels" in attrs:  # FakeQuantize
        out["levels"] = int(attrs.pop("levels"))
    _no_more(op, attrs)
    return "opset16", out


def _no_more(op, attrs):
    if attrs:
        raise TypeError(f"openvino oracle, {op}: unknown attributes {sorted(attrs)}")


def _constant(values, dtype="int64"):
    import numpy as np

    if isinstance(values, np.ndarray):  # FakeQuantize's ranges: their shape and type kept
        return _ov().op.Constant(values)
    # ov.op.Constant takes empty arrays too (opset.constant refuses them)
    return _ov().op.Constant(np.asarray(list(values), dtype=dtype).reshape(-1))


def _build(op: str, shapes: Sequence, dtypes: Sequence, attrs: dict, constants: Sequence = ()):
    """Parameters of ``shapes`` (a ``None`` dim is dynamic) and ``dtypes``, then the op on them
    and on ``constants`` (Broadcast's target_shape and axes_mapping).  Returns (params, node)."""
    import numpy as np

    ov = _ov()
    opset, node_attrs = _node_attrs(op, attrs)
    params = [ov.op.Parameter(_element_type(t), ov.PartialShape([-1 if d is None else d for d in s]))
              for s, t in zip(shapes, dtypes)]
    inputs = [p.output(0) for p in params] + [_constant(c).output(0) for c in constants]
    if _is_broadcast(op) and opset == "opset1" and len(inputs) == 2:
        # Broadcast-1 built from two inputs: the dummy axes input that v1 itself adds
        inputs.append(ov.op.Constant(np.array(0, dtype=np.uint8)).output(0))
    return params, _factory(opset).create(op, inputs, node_attrs)


def _split(op: str, items: Sequence) -> tuple[list, list]:
    """Broadcast's inputs after data are values (Constants), and FakeQuantize's ranges are Constants (as in
    every quantized IR: the CPU plugin runs other code for ranges that are not); every other input is a tensor."""
    return (list(items[:1]), list(items[1:])) if op in ("Broadcast", "FakeQuantize") else (list(items), [])


def _default_dtypes(op: str, n: int) -> list:
    """float32 tensors; Select's cond boolean."""
    return (["bool"] if op == "Select" else []) + ["float32"] * (n - (op == "Select"))


# --------------------------------------------------------------------------- shape inference


def infer_shape(op: str, shapes: Sequence, dtypes: Sequence | None = None, **attrs) -> tuple:
    """OpenVINO's shape inference of ``op`` on Parameters of ``shapes``.

    Parameters
    ----------
    op : str
        An OpenVINO op name (``Add``, ``Select``, ``PRelu``, ``Broadcast``...).
    shapes : sequence
        One static shape per tensor input.  For ``Broadcast``: the data's
        shape, then the *values* of target_shape and axes_mapping.
    dtypes : sequence, optional
        Element types of the tensor inputs (numpy dtypes; default float32,
        Select's cond boolean).
    **attrs
        As for :func:`run`.

    Returns the output shape; raises :class:`RuntimeRefused` where OpenVINO
    refuses to build the op.
    """
    tensors, constants = _split(op, shapes)
    dtypes = list(dtypes) if dtypes is not None else _default_dtypes(op, len(tensors))
    if op == "FakeQuantize":  # the ranges' values do not matter to shape inference
        import numpy as np

        constants = [np.zeros(tuple(s), dtypes[0]) for s in constants]
    try:
        _, node = _build(op, [tuple(s) for s in tensors], dtypes, attrs, constants)
    except RuntimeError as e:  # OpenVINO's Python API raises RuntimeError on a failed check
        raise RuntimeRefused("openvino", last_line(e)) from None
    ps = node.get_output_partial_shape(0)
    if not ps.is_static:
        raise AssertionError(f"static inputs gave a dynamic output shape {ps}")
    return tuple(int(d) for d in ps.to_shape())


# --------------------------------------------------------------------------- running


def run(op: str, inputs: Sequence, *, device: str = "CPU", static: bool = False, **attrs):
    """Run ``op`` on ``inputs`` (numpy arrays) with OpenVINO; return the output array.

    Parameters
    ----------
    op : str
        An OpenVINO op name.
    inputs : sequence of arrays
        The op's inputs.  For ``Broadcast``: data, then target_shape and
        (explicit mode) axes_mapping as integer sequences.
    device : ``"CPU"`` or ``"evaluate"``
        The CPU plugin (a cached model with dynamic dims, unless
        ``static=True``), or ``Model.evaluate``, the core's reference
        implementation, on a model of the inputs' static shapes.
    **attrs
        ``auto_broadcast`` (``"numpy"``, ``"pdpd"``, ``"none"``), ``axis``,
        ``python_division``; for Broadcast ``mode``, ``axis``, ``version``.

    Raises :class:`RuntimeRefused` where OpenVINO refuses the shapes or the
    element types, fails to compile, or its evaluate reports failure.
    """
    import numpy as np

    _check_device(device)
    tensors, constants, dtypes = _prepare(op, inputs)
    if device == "evaluate":
        return _evaluate(op, tensors, dtypes, constants, attrs)
    if op == "FakeQuantize":  # its ranges are constants: one model of static shapes
        (result,) = run_many(op, [(inputs, attrs)])
        if isinstance(result, RuntimeRefused):
            raise result
        return result
    shapes = tuple(x.shape if static else (None,) * x.ndim for x in tensors)
    key = (op, dtypes, shapes, constants, tuple(sorted(attrs.items())))
    compiled = _compiled(key)
    try:
        result = compiled(tensors)
    except RuntimeError as e:
        raise RuntimeRefused("openvino CPU", last_line(e)) from None
    return np.asarray(result[compiled.output(0)]).copy()


def run_many(op: str, cases: Sequence, *, device: str = "CPU") -> list:
    """Run many cases of ``op``: ``cases`` is a sequence of ``(inputs, attrs)``.

    Returns one entry per case: the output array, or the :class:`RuntimeRefused`
    (not raised).  On the CPU, every case OpenVINO's shape inference accepts
    becomes one node of a single model of static shapes, compiled and run
    once; a model that fails to compile or run is split in halves until each
    failure is pinned to its case.
    """
    _check_device(device)
    results: list = [None] * len(cases)
    if device == "evaluate":
        for i, (inputs, attrs) in enumerate(cases):
            try:
                results[i] = run(op, inputs, device=device, **attrs)
            except RuntimeRefused as e:
                results[i] = e
        return results
    built = []
    for i, (inputs, attrs) in enumerate(cases):
        tensors, constants, dtypes = _prepare(op, inputs)
        try:
            params, node = _build(op, [x.shape for x in tensors], dtypes, attrs, constants)
        except RuntimeError as e:
            results[i] = RuntimeRefused("openvino", last_line(e))
            continue
        built.append((i, params, node, tensors))
    _run_batch(built, results)
    return results


def _run_batch(built: list, results: list) -> None:
    import numpy as np

    if not built:
        return
    ov = _ov()
    params = [p for _, ps, _, _ in built for p in ps]
    try:
        compiled = _core().compile_model(ov.Model([node for _, _, node, _ in built], params), "CPU")
        outputs = compiled([x for *_, xs in built for x in xs])
    except RuntimeError as e:
        if len(built) == 1:
            results[built[0][0]] = RuntimeRefused("openvino CPU", last_line(e))
            return
        half = len(built) // 2
        _run_batch(built[:half], results)
        _run_batch(built[half:], results)
        return
    for k, (i, *_) in enumerate(built):
        results[i] = np.asarray(outputs[k]).copy()


def _check_device(device: str) -> None:
    if device not in DEVICES:
        raise ValueError(f"openvino oracle: device must be one of {', '.join(DEVICES)}, got {device!r}")


def _prepare(op: str, inputs: Sequence) -> tuple:
    """(tensors as contiguous arrays, constants as int tuples, element type names)."""
    import numpy as np

    given, values = _split(op, inputs)
    tensors = [np.asarray(x, order="C") for x in given]  # (ascontiguousarray makes 0-d arrays 1-d)
    if op == "FakeQuantize":
        return tensors, tuple(np.asarray(c, order="C") for c in values), tuple(x.dtype.name for x in tensors)
    constants = tuple(tuple(int(v) for v in np.asarray(c).reshape(-1)) for c in values)
    return tensors, constants, tuple(x.dtype.name for x in tensors)


@lru_cache(maxsize=512)
def _compiled(key):
    op, dtypes, shapes, constants, attrs = key
    ov = _ov()
    try:
        params, node = _build(op, shapes, dtypes, dict(attrs), constants)
        return _core().compile_model(ov.Model([node], params), "CPU")
    except RuntimeError as e:
        raise RuntimeRefused("openvino CPU", last_line(e)) from None


def _evaluate(op, tensors, dtypes, constants, attrs):
    ov = _ov()
    try:
        params, node = _build(op, [x.shape for x in tensors], dtypes, attrs, constants)
    except RuntimeError as e:
        raise RuntimeRefused("openvino", last_line(e)) from None
    model = ov.Model([node], params)
    out = ov.Tensor(node.get_output_element_type(0), node.get_output_partial_shape(0).to_shape())
    try:
        ok = model.evaluate([out], [ov.Tensor(x) for x in tensors])
    except (RuntimeError, ValueError) as e:  # the reference throws, e.g. "integer division by zero" (ValueError)
        raise RuntimeRefused("openvino evaluate", last_line(e)) from None
    if not ok:
        raise RuntimeRefused("openvino evaluate", f"Evaluation failed on {op}")
    return out.data.copy()
