"""translation's op table is derived from the frameworks' tables, and recipes reach the runtimes through
the oracle adapters' public functions only."""

import ast
import pathlib

import bcast.translation as translation
from bcast.frameworks.ncnn import op_types
from bcast.frameworks.openvino.from_onnx import FROM_ONNX
from bcast.translation.ops import OPS


def test_ncnn_and_openvino_names_come_from_their_frameworks():
    for o in OPS:
        if o.ncnn_name is not None:
            assert op_types.FROM_ONNX[o.onnx] == o.ncnn_name and op_types.OP_TYPES[o.ncnn] == o.ncnn_name
        else:
            assert o.onnx not in op_types.FROM_ONNX
        assert FROM_ONNX.get(o.onnx, o.openvino) == o.openvino


def test_ncnn_op_types_are_the_op_tables():
    from bcast.frameworks.ncnn.ops import OPS as NCNN_OPS

    assert tuple(o.name for o in NCNN_OPS) == op_types.OP_TYPES


def private_imports(source: str) -> list:
    """The private names (and private framework modules) a translation module imports from outside its package."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level >= 2:
            module = node.module or ""
            out += [f"{module}.{a.name}" for a in node.names if a.name.startswith("_")]
            if module.startswith("frameworks") and module.rpartition(".")[2].startswith("_"):
                out.append(module)
    return out


def test_translation_imports_no_private_name_of_another_package():
    found = private_imports("from ..frameworks.openvino.oracle import _factory, node")
    assert found == ["frameworks.openvino.oracle._factory"]
    for path in pathlib.Path(translation.__file__).parent.glob("*.py"):
        assert private_imports(path.read_text(encoding="utf-8")) == [], path.name


def test_every_module_of_the_package_is_small():
    for path in pathlib.Path(translation.__file__).parent.glob("*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 700, path.name
