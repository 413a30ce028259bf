"""What other modules need of TFLite's op table without loading it (nor numpy): the TFLite builtin of
each ONNX op that broadcasts alike, and the kernels' rank limit (:mod:`bcast.frameworks.tflite.ops`)."""

__all__ = ["FROM_ONNX", "KERNEL_MAX_RANK"]

#: The TFLite builtin of each ONNX op that broadcasts alike (what ``bcast translate --to tflite`` writes):
#: Where is SELECT_V2 (numpy's rule, as ONNX's), Expand's broadcast-to is BROADCAST_TO.
FROM_ONNX = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "DIV", "Max": "MAXIMUM", "Min": "MINIMUM",
             "Pow": "POW", "Where": "SELECT_V2", "Expand": "BROADCAST_TO"}

#: The highest rank at which each kernel broadcasts inputs of different shapes (inputs of one shape
#: have no limit).  ``BroadcastBinaryOpSimple`` and ``BroadcastSelectSimple`` hold ``kMaxRank = 8``
#: (``TFLITE_CHECK_LE(dims_count, kMaxRank)``); SELECT_V2's ``Prepare`` refuses an output of rank
#: above 8.  Measured on ai-edge-litert 2.3.0 (tests/frameworks/test_tflite_run.py).
KERNEL_MAX_RANK = 8
