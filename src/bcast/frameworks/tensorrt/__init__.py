"""TensorRT: its op table (the layer API and the ONNX parser's op set), from NvInfer.h and onnx-tensorrt's
source; spec only (TensorRT needs an NVIDIA GPU: nothing here ran it)."""

#: The lint and rewrite targets this package holds: :func:`bcast.frameworks.targets` reads it.
TARGETS = {"tensorrt": "tensorrt"}
