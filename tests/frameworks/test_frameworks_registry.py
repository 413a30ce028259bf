"""The framework registry and the plug-in interface: every registered framework implements it."""

import inspect

import pytest

import bcast
from bcast import InputError, Plan
from bcast.frameworks import FRAMEWORKS, Framework, framework, names, part

#: Shapes to try on each op, in turn (each op takes one of these arities and forms).
CANDIDATES = (((2, 3), (2, 3)), ((2, 3), (2, 3), (2, 3)), ((3, 4), (4, 5)), ((2, 3),), ((2, 3),) * 5)
#: Attributes an op requires (no default).
REQUIRED = {("onnx", "BitShift"): {"direction": "LEFT"},
            ("stablehlo", "broadcast_in_dim"): {"broadcast_dimensions": [0, 1]},
            ("jax", "lax.broadcast_in_dim"): {"broadcast_dimensions": [0, 1]}}


def test_registry_names_every_framework_package():
    assert names() == tuple(FRAMEWORKS) == ("onnx", "openvino", "ncnn", "tflite", "tensorrt", "tosa", "webnn", "torch",
                                            "paddle", "nnapi", "mnn", "coreml", "stablehlo", "jax")
    for name, package in FRAMEWORKS.items():
        assert package == f"bcast.frameworks.{name}"
        assert getattr(bcast, name).plan is framework(name).plan  # the public bcast.<name> is the op table


@pytest.mark.parametrize("name", names())
def test_framework_implements_the_interface(name):
    fw = framework(name)
    assert isinstance(fw, Framework)
    for func in (fw.ops, fw.plan, fw.run):
        assert callable(func) and inspect.signature(func)
    ops = fw.ops()
    assert isinstance(ops, tuple) and ops and all(isinstance(op, str) for op in ops)
    assert len(set(ops)) == len(ops)


@pytest.mark.parametrize("name", names())
def test_every_op_plans(name):
    fw = framework(name)
    for op in fw.ops():
        attrs = REQUIRED.get((name, op), {})
        errors = []
        for shapes in CANDIDATES:
            try:
                p = fw.plan(op, *shapes, **attrs)
            except (InputError, bcast.BroadcastError) as e:  # another arity or form: try the next
                errors.append(str(e))
                continue
            assert isinstance(p, Plan) and p.rule in bcast.RULES, (op, p)
            break
        else:
            pytest.fail(f"{name} {op} plans on none of the candidates: {errors}")


@pytest.mark.parametrize("name", names())
def test_bad_op_names_the_choices(name):
    with pytest.raises(InputError) as e:
        framework(name).plan("NoSuchOp", (2, 3), (3,))
    assert framework(name).ops()[0] in str(e.value)


def test_unknown_framework_names_the_choices():
    for bad in ("caffe", None, 3):
        with pytest.raises(InputError, match="the frameworks are: onnx, openvino, ncnn, tflite"):
            framework(bad)
        with pytest.raises(InputError):
            part(bad, "ops")


def test_parts_are_found_by_name():
    assert part("ncnn", "ops") is framework("ncnn")
    assert part("ncnn", "oracle").__name__ == "bcast.frameworks.ncnn.oracle"
    assert part("openvino", "lint_pnnx") is None  # a part a framework does not have


def test_openvino_plan_is_the_rule_run_uses():
    ov = framework("openvino")
    assert ov.plan("Add", (2, 3, 4, 5), (3, 4), auto_broadcast="pdpd", axis=1).shape == (2, 3, 4, 5)
    assert ov.plan("Select", (2, 1), (1, 3), (3,)).rule == "openvino-select"
    assert ov.plan("PRelu", (1, 3, 4, 4), (3,)).rule == "openvino-prelu"
    assert ov.plan("Broadcast", (3,), (2, 3), (1,), mode="explicit").shape == (2, 3)
    with pytest.raises(InputError, match="auto_broadcast must be one of"):
        ov.plan("Add", (2, 3), (3,), auto_broadcast="bad")
    with pytest.raises(InputError, match="takes 2"):
        ov.plan("Add", (2, 3))
    with pytest.raises(bcast.BroadcastError):
        ov.plan("Add", (2, 3), (4,))
