"""Helpers shared by the test modules (import them as ``support.<module>`` from any depth of tests/:
tests/conftest.py puts tests/ on sys.path).

- ``onnx_models``: hand-built ONNX models, onnxruntime runs, the wheel's light model-zoo graphs;
- ``onnx_node_cases``: ONNX's own node tests, collected once;
- ``openvino_shapes``: random shape cases for OpenVINO's broadcast modes;
- ``fuzz_harness``, ``fuzz_inputs``: the fuzz suite's runner (per-case time limit, figures) and inputs;
- ``convert_harness``: converts and runs the corpus (tests/models/convert_corpus/) with pnnx + ncnn and OpenVINO.
- ``shapes``: seeded random shapes for the differential loops (property tests use ``bcast.strategies``);
- ``arrays``: inputs broadcast through a Plan (``through_plan``, bcast's own views);
- ``cli``: the command line in-process (``cli``: status and stdout; ``run_cli``: and stderr).
- ``eager``: the differential tests of the eager frameworks' op tables (torch, paddle) against their runtimes.
"""
