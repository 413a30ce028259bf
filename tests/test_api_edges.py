"""The Python API takes what its neighbours take: shapes where infer takes shapes, array-likes
where numpy takes them, no shape where np.broadcast_shapes takes none; and the lazily loaded
names are visible to dir(), help() and type checkers."""

import ast
import pathlib
import pydoc
import subprocess
import sys

import numpy as np
import pytest

import bcast

INIT = pathlib.Path(bcast.__file__)


def test_translate_takes_shapes_as_infer_does():
    """Was: TypeError (translate wanted a Plan)."""
    by_shapes = bcast.translate((2, 3, 4), (3, 4), to="ncnn")
    assert by_shapes.text() == bcast.translate(bcast.infer((2, 3, 4), (3, 4)), to="ncnn").text()
    r = bcast.translate("2,3,4,5", [3, 4], rule="paddle", axis=1, to="numpy")
    assert r.text() == "np.add(a, b.reshape(3, 4, 1))"
    assert bcast.translate("N,3", "M,3", to="numpy").plan.constraints  # the plan it rests on
    with pytest.raises(bcast.BroadcastError):
        bcast.translate((2, 3), (4,), to="onnx")
    with pytest.raises(bcast.InputError, match="a Plan carries its rule and attributes; got rule, axis"):
        bcast.translate(bcast.infer((2, 3), (3,)), to="onnx", rule="pdpd", axis=1)
    with pytest.raises(bcast.InputError, match="not a Plan among shapes"):
        bcast.translate(bcast.infer((2, 3), (3,)), (3,), to="onnx")


def test_apply_takes_array_likes_as_numpy_does():
    """Was: InputError 'expected an array, got list'."""
    got = bcast.apply(np.add, [1, 2, 3], [[1], [2]])
    want = np.add([1, 2, 3], [[1], [2]])
    assert got.dtype == want.dtype and np.array_equal(got, want)
    got = bcast.apply(np.multiply, (1.5, 2.0), np.ones((2, 1), np.float32), rule="numpy")
    assert np.array_equal(got, np.multiply((1.5, 2.0), np.ones((2, 1), np.float32)))
    x = bcast.apply(np.add, np.arange(6).reshape(2, 3), [10, 20], rule="pdpd", axis=0)
    assert x.tolist() == [[10, 11, 12], [23, 24, 25]]
    assert [v.shape for v in bcast.broadcast_arrays([1, 2], [[3], [4]])] == [(2, 2), (2, 2)]
    for bad in ([[1], [2, 3]], "ab", None, {1: 2}):
        with pytest.raises(bcast.InputError, match="expected an array"):
            bcast.apply(np.add, bad, 1)


def test_no_shape_is_rank_0_as_in_numpy():
    """Was: InputError 'numpy takes 1 or more shapes, got 0'."""
    assert bcast.result_shape() == np.broadcast_shapes() == ()
    plan = bcast.infer()
    assert (plan.shape, plan.inputs, plan.constraints) == ((), (), ())
    assert str(plan) == "numpy: no input -> ()"
    with pytest.raises(bcast.InputError, match="takes 2 shapes"):
        bcast.infer(rule="pdpd")


LAZY = ("apply", "broadcast_arrays", "translate", "TranslationError", "lint", "rewrite", "MemoryBudgetError",
        "memory_budget", "set_memory_budget", "threads", "set_threads", "onnx", "openvino", "ncnn", "tensorrt", "tosa",
        "webnn", "nnapi", "translation")


def test_dir_lists_the_lazily_loaded_names_without_loading_them():
    code = (f"import sys, bcast; d = dir(bcast); print(sorted(set({LAZY!r}) - set(d)), "
            "[m for m in ('numpy', 'onnx') if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "[] []", r.stderr


def test_dir_lists_no_import_helper():
    """Was: dir(bcast) listed typing's TYPE_CHECKING beside the API."""
    assert "TYPE_CHECKING" not in dir(bcast)


def test_all_and_help_name_them():
    assert {"apply", "translate", "lint", "rewrite", "broadcast_arrays"} <= set(bcast.__all__)
    assert not {"onnx", "openvino", "ncnn"} & set(bcast.__all__)  # `import *` must not shadow the onnx package
    text = pydoc.render_doc(bcast, renderer=pydoc.plaintext)
    for name in ("apply", "translate", "lint", "rewrite", "broadcast_arrays"):
        assert f"\n    {name}(" in text, name


def test_import_star_and_help_work_without_onnx():
    code = ("import sys; sys.modules['onnx'] = None\n"
            "from bcast import *\nimport bcast, pydoc\npydoc.render_doc(bcast)\n"
            "try:\n    lint('m.onnx')\nexcept InputError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "pip install 'bcast[onnx]'" in r.stdout, r.stderr


def test_type_checkers_see_every_lazy_name():
    """Every lazy name is imported in the `if TYPE_CHECKING:` block, and those imports resolve."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    seen = {a.asname or a.name for n in block.body for a in n.names}
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert set(LAZY) - seen - defined == set()
    namespace = {"__name__": "bcast._check", "__package__": "bcast"}
    exec(compile(ast.Module(block.body, []), str(INIT), "exec"), namespace)  # noqa: S102
    for name in seen & set(LAZY):
        assert namespace[name] is getattr(bcast, name), name
