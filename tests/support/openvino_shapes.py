"""Random shapes for OpenVINO's broadcasting rules, shared by the OpenVINO test files.

Fixed seeds; ranks 0-4, dims drawn from {0, 1, 2, 3}, and about half of the
cases derived from the other operand so that a fair share is accepted.
:func:`random_cases` gives ``(rule, shapes, attrs)`` triples for one kind of
query: ``numpy``, ``none``, ``pdpd``, ``bidirectional``, ``broadcast-numpy``,
``broadcast-pdpd``, ``explicit``, ``select-numpy``, ``select-pdpd``,
``select-none``.
"""

from __future__ import annotations

import random

SEED = 20260417
N_RANDOM = 500
DIMS = (0, 1, 2, 3)


def rshape(rng, lo=0, hi=4):
    return tuple(rng.choice(DIMS) for _ in range(rng.randint(lo, hi)))


def soften(rng, dims, p=0.3):
    """Replace some dims by 1 (still broadcastable into the original)."""
    return tuple(1 if rng.random() < p else d for d in dims)


def numpy_pair(rng):
    a = rshape(rng)
    r = rng.random()
    if r < 0.5:
        k = rng.randint(0, len(a))
        b = soften(rng, a[len(a) - k:])
        if rng.random() < 0.3:
            b = rshape(rng, 0, 4 - len(b)) + b if len(b) < 4 else b
        if rng.random() < 0.3:
            a = soften(rng, a)
    else:
        b = rshape(rng)
    return (a, b) if rng.random() < 0.5 else (b, a)


def pdpd_operand(rng, big):
    """A shape and axis for placing into ``big`` by pdpd: mostly a softened
    contiguous run of ``big`` (sometimes with trailing 1s), else random."""
    n = len(big)
    r = rng.random()
    if r < 0.5:
        s = rng.randint(0, n)
        length = rng.randint(0, n - s)
        small = soften(rng, big[s:s + length])
        if rng.random() < 0.3:
            small += (1,) * rng.randint(1, 2)
        if rng.random() < 0.1 and small:  # an occasional mismatch
            i = rng.randrange(len(small))
            small = small[:i] + (rng.choice(DIMS),) + small[i + 1:]
        axis = -1 if s == n - len(small) and rng.random() < 0.5 else s
    elif r < 0.75:
        small = rshape(rng, 0, n)
        axis = rng.choice([-1] + list(range(n - len(small) + 1)))
    else:
        small = rshape(rng)
        axis = rng.choice([-2, -1] + list(range(n + 2)))
    return small, axis


def random_cases(kind, n=N_RANDOM, seed=SEED):
    rng = random.Random(f"{seed}-{kind}")
    cases = []
    for _ in range(n):
        if kind in ("numpy", "bidirectional", "broadcast-numpy"):
            a, b = numpy_pair(rng)
            if kind == "numpy":
                cases.append(("numpy", (a, b), {}))
            elif kind == "bidirectional":
                cases.append(("bidirectional", (a, b), {}))
            else:  # data b into target a, mostly; numpy_pair swaps half of them
                cases.append(("unidirectional", (a, b), {}))
        elif kind == "none":
            a = rshape(rng)
            b = a if rng.random() < 0.5 else (soften(rng, a) if rng.random() < 0.5 else rshape(rng))
            cases.append(("none", (a, b), {}))
        elif kind == "pdpd":
            a = rshape(rng)
            if rng.random() < 0.15:
                a = soften(rng, a)
            b, axis = pdpd_operand(rng, a)
            cases.append(("pdpd", (a, b), {"axis": axis}))
        elif kind == "broadcast-pdpd":
            target = rshape(rng)
            data, axis = pdpd_operand(rng, target)
            if rng.random() < 0.2 and data:  # a data dim facing a target dim of 1
                target = tuple(1 if rng.random() < 0.4 else d for d in target)
            cases.append(("openvino-broadcast-pdpd", (data, target), {"axis": axis}))
        elif kind == "explicit":
            cases.append(("explicit",) + explicit_case(rng))
        elif kind.startswith("select-"):
            mode = kind[len("select-"):]
            then = rshape(rng)
            if mode == "numpy":
                cond, then = numpy_pair(rng)
                else_ = numpy_pair(rng)[0] if rng.random() < 0.3 else soften(rng, then[rng.randint(0, len(then)):])
                cases.append(("openvino-select", (cond, then, else_), {"auto_broadcast": "numpy"}))
            elif mode == "none":
                cond = then if rng.random() < 0.7 else rshape(rng)
                else_ = then if rng.random() < 0.7 else soften(rng, then)
                cases.append(("openvino-select", (cond, then, else_), {"auto_broadcast": "none"}))
            else:
                else_, axis = pdpd_operand(rng, then)
                if rng.random() < 0.5:
                    axis = -1
                    cond = soften(rng, then[rng.randint(0, len(then)):])
                else:
                    cond = soften(rng, then[axis:axis + len(else_)]) if axis >= 0 else else_
                cases.append(("openvino-select", (cond, then, else_), {"auto_broadcast": "pdpd", "axis": axis}))
        else:  # pragma: no cover
            raise AssertionError(kind)
    return cases


def explicit_case(rng):
    """(shapes, attrs) for Broadcast explicit: valid sorted unique mappings, and invalid ones."""
    target = rshape(rng)
    rt = len(target)
    k = rng.randint(0, rt)
    axes = sorted(rng.sample(range(rt), k))
    data = soften(rng, tuple(target[a] for a in axes))
    r = rng.random()
    if r < 0.1 and data:  # a mismatching dim
        i = rng.randrange(len(data))
        data = data[:i] + (rng.choice(DIMS),) + data[i + 1:]
    elif r < 0.5:
        pass  # valid
    elif r < 0.6 and k >= 2:  # unsorted
        while axes == sorted(axes):
            rng.shuffle(axes)
    elif r < 0.7:  # out of range
        if axes:
            axes[rng.randrange(len(axes))] = rt + rng.randint(0, 2)
        else:
            axes, data = [rt + rng.randint(0, 1)], (1,)
    elif r < 0.75:  # negative
        if axes:
            axes[rng.randrange(len(axes))] = -rng.randint(1, 3)
        else:
            axes, data = [-1], (1,)
    elif r < 0.85:  # wrong length
        if rng.random() < 0.5 and axes:
            data = data[:-1]
        else:
            extra = rng.randint(0, rt) if rt else 0
            axes = sorted(axes + [extra])
            data = soften(rng, tuple(target[a] if a < rt else 1 for a in axes))[:-1] if rng.random() < 0.5 else data
    elif rt >= 1:  # duplicates (sorted)
        a = rng.randrange(rt)
        axes = sorted(axes + [a])
        data = soften(rng, tuple(target[x] for x in axes), p=0.5)
    return (data, target), {"axes_mapping": tuple(axes)}

