"""Lint and rewrite targets are declared by the framework packages and loaded by bcast.models.target.found,
and each is one module of one framework: its TARGET, its Checks (lint) or rewrite (rewrite)."""

import ast
import pathlib

import pytest

pytest.importorskip("onnx")

from bcast.models import lint, rewrite  # noqa: E402
from bcast.models.target import Row, Target, found  # noqa: E402

SRC = pathlib.Path(lint.__file__).resolve().parent.parent


def test_every_lint_target_is_a_framework_module_with_its_checks():
    modules = found("lint")
    assert tuple(modules) == lint.TARGETS == ("onnx", "coreml", "ncnn", "nnapi", "onnx2ncnn", "onnx2tf", "openvino",
                                              "tensorrt", "tflite", "tosa", "webnn")
    for name, module in modules.items():
        assert module.__name__.startswith("bcast.frameworks.")
        assert module.__name__.rpartition(".")[2].startswith("lint_")
        assert issubclass(module.Checks, Target) and module.Checks.name == name == module.TARGET


def test_every_rewrite_target_is_a_framework_module():
    modules = found("rewrite")
    assert tuple(modules) == rewrite.TARGETS == ("onnx", "ncnn", "onnx2ncnn", "onnx2tf", "openvino", "tensorrt", "tosa")
    for name, module in modules.items():
        assert module.__name__.rpartition(".")[2].startswith("rewrite_") and module.TARGET == name
        assert callable(module.rewrite)


def test_lint_and_rewrite_import_no_framework_target():
    """(each target's Checks names its runtimes: lint maps no target name to anything.)"""
    for module in (lint, rewrite):
        tree = ast.parse(pathlib.Path(module.__file__).read_text(encoding="utf-8"))
        imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not [m for m in imported if m.startswith(("..frameworks.ncnn", "..frameworks.openvino"))]
        assert not [m for m in imported if "lint_" in m or "rewrite_" in m]


def test_checks_return_rows_and_child_graphs_keep_the_runtimes():
    from onnx import TensorProto as T
    from onnx import helper

    from bcast.models.onnx_model import Shapes

    x = helper.make_tensor_value_info("x", T.FLOAT, [1, 3, 2, 3])
    s = helper.make_tensor_value_info("s", T.FLOAT, [3])
    y = helper.make_tensor_value_info("y", T.FLOAT, None)
    g = helper.make_graph([helper.make_node("PRelu", ["x", "s"], ["y"], name="act")], "g", [x, s], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
    shapes = Shapes(m)
    checks = lint.checker("openvino", shapes, m.graph)
    (site,) = [s for _, _, s in lint.sites(m, shapes) if s is not None]
    (row,) = checks.check(site)
    assert isinstance(row, Row) and row.kind == "differs" and row.rule == "openvino-prelu"
    inner = checks.child(shapes, m.graph, True)
    assert (inner.runtimes, inner.decisive_runtimes) == (checks.runtimes, checks.decisive_runtimes) != ((), ())
