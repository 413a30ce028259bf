"""Random shapes for the seeded differential tests (fixed seeds, so the cases are the same on every run).

Property tests draw shapes with :mod:`bcast.strategies` (hypothesis); these loops draw from a numpy
``Generator`` because each case runs a real runtime and the cases must be reproducible by seed."""

from __future__ import annotations


def random_shapes(rng, n, *, max_rank=4, sizes=(0, 1, 2, 3, 4), p=(0.06, 0.24, 0.25, 0.25, 0.2),
                  keep_rank=0.4, perturb=0.07) -> list:
    """``n`` shapes that mostly broadcast, sometimes not: suffixes of one base shape (the whole of it with
    probability ``keep_rank``) with dims turned to 1 or perturbed to another size (a conflict unless the
    other side is 1); one draw in six is ``n`` independent shapes."""

    def draw(rank):
        return [int(x) for x in rng.choice(sizes, size=rank, p=p)]

    if rng.random() < 1 / 6:
        return [tuple(draw(int(rng.integers(0, max_rank + 1)))) for _ in range(n)]
    base_rank = int(rng.integers(0, max_rank + 1))
    base = draw(base_rank)
    out = []
    for _ in range(n):
        r = base_rank if rng.random() < keep_rank else int(rng.integers(0, base_rank + 1))
        s = base[base_rank - r:]
        for k in range(r):
            u = rng.random()
            if u < 0.3:
                s[k] = 1
            elif u < 0.3 + perturb:
                s[k] = int(rng.choice([v for v in sizes if v not in (1, s[k])]))
        out.append(tuple(s))
    return out


# ncnn's BinaryOp: ranks 1-4, dims from small sets so that 1s, ties and mismatches occur.
NCNN_SIZE_SETS = ((1, 2, 3), (1, 2, 4, 5, 8))


def ncnn_shape(rng) -> tuple:
    sizes = NCNN_SIZE_SETS[rng.integers(len(NCNN_SIZE_SETS))]
    return tuple(int(d) for d in rng.choice(sizes, size=rng.integers(1, 5)))


def ncnn_related_shape(rng, a: tuple) -> tuple:
    """A shape likely to pair with ``a``: a leading run, a 1-D first/last dim, or ``a`` with 1s."""
    kind = rng.integers(6)  # 3 of 6: an unrelated shape
    if kind == 0:
        return a[: rng.integers(1, len(a) + 1)]
    if kind == 1:
        return (a[0],) if rng.integers(2) else (a[-1],)
    if kind == 2:
        return tuple(1 if rng.integers(2) else d for d in a)
    return ncnn_shape(rng)


def ncnn_shape_pairs(rng, n: int) -> list:
    """``n`` pairs, roughly half of them valid under ncnn's rules; either side may be the lower rank."""
    pairs = []
    for _ in range(n):
        a = ncnn_shape(rng)
        b = ncnn_related_shape(rng, a)
        pairs.append((a, b) if rng.integers(2) else (b, a))
    return pairs
