"""bcast.result_shape per call against np.broadcast_shapes, measured side by side.

Run:  python benchmarks/bench_result_shape.py

Prints, for a few small shape pairs, the median time per call of each and the
ratio bcast / numpy (< 1 means bcast is faster).  The target is "not slower"
for two small shapes under the numpy rule.  Also times the full path
(``bcast.infer``, which builds a Plan) for context.
Timings interleave the candidates, repeat, and take medians: the machine is
shared and noisy, so only ratios from one run are meaningful.
"""

from __future__ import annotations

import statistics
import sys
import timeit

import numpy as np

import bcast

PAIRS = [
    ((2, 3), (3,)),
    ((8, 1, 6, 1), (7, 1, 5)),
    ((16, 256, 56, 56), (256, 1, 1)),
    ((3,), (3,)),
]


def main(argv=None) -> int:
    number, repeat = 20000, 15
    rows = []
    worst = 0.0
    for a, b in PAIRS:
        # interleave: one round of each per repeat, so drift hits both alike
        t_np, t_bc, t_inf = [], [], []
        for _ in range(repeat):
            t_np.append(timeit.timeit(lambda a=a, b=b: np.broadcast_shapes(a, b), number=number) / number)
            t_bc.append(timeit.timeit(lambda a=a, b=b: bcast.result_shape(a, b), number=number) / number)
            t_inf.append(timeit.timeit(lambda a=a, b=b: bcast.infer(a, b), number=number // 10) / (number // 10))
        m_np, m_bc, m_inf = (statistics.median(t) for t in (t_np, t_bc, t_inf))
        ratio = m_bc / m_np
        worst = max(worst, ratio)
        rows.append((a, b, m_np, m_bc, ratio, m_inf))
    print(f"{'shapes':<34} {'np.broadcast_shapes us':>22} {'bcast.result_shape us':>21} {'ratio':>6} "
          f"{'bcast.infer (Plan) us':>21}")
    for a, b, m_np, m_bc, ratio, m_inf in rows:
        label = f"{bcast.format_shape(a)} {bcast.format_shape(b)}"
        print(f"{label:<34} {m_np*1e6:22.3f} {m_bc*1e6:21.3f} {ratio:6.2f} {m_inf*1e6:21.3f}")
    print(f"result_shape / np.broadcast_shapes, worst pair: {worst:.2f} (target <= 1.00: "
          f"{'met' if worst <= 1.0 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
