"""Models: load and save ONNX files safely, their shapes, and ``lint`` / ``rewrite`` of every
broadcasting node (the targets come from ``bcast.frameworks``).  Needs the onnx package."""
