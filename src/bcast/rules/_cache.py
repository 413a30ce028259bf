"""The plan cache: :func:`bcast.infer` remembers its plans, keyed on (rule, shapes, attrs).

:class:`BoundedCache` is the bounded mapping it is made of; each instance holds one kind of value,
its type parameter (:data:`PLANS`: plans; lint's: a node's rows; an op table's: runners).

Plans are frozen values, so one plan can serve every call that asks the same
question.  A key is made only from values whose type it records and whose
equality means "the same question": shapes that are tuples of plain ints or
strings (the command-line syntax), attributes that are ints, bools, strings,
None or tuples of ints, names that are a tuple of strings.  Anything else
(lists, floats, numpy integers, symbols) is not cached: :func:`plan_key`
returns None and the rule runs as before.  Only plans are cached, never
errors, so a bad request always raises afresh.

The cache is bounded (:data:`MAX_PLANS`): when full, the oldest plan goes.

>>> from bcast import infer
>>> infer((2, 3), (3,)) is infer((2, 3), (3,))
True
>>> plan_key("numpy", ((2, 3), [3]), None, "permissive", {}) is None  # a list: not cached
True
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ..core.plan import Plan

__all__ = ["MAX_PLANS", "BoundedCache", "PLANS", "plan_key"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: How many plans the cache holds at most.
MAX_PLANS = 4096

_ATOMS = frozenset({int, bool, str, type(None)})


def _shape_ok(s: Any) -> bool:
    if type(s) is str:
        return True
    if type(s) is not tuple:
        return False
    for d in s:
        if type(d) is not int:
            return False
    return True


def _attrs_key(attrs: dict[str, Any]) -> tuple | None:
    items = []
    for name in sorted(attrs):
        value = attrs[name]
        kind = type(value)
        if kind not in _ATOMS and not (kind is tuple and _shape_ok(value)):
            return None
        items.append((name, kind, value))  # the type too: 1 and True are different questions
    return tuple(items)


def plan_key(rule: Any, shapes: tuple, names: Any, policy: Any, attrs: dict[str, Any]) -> tuple | None:
    """The cache key of one :func:`bcast.infer` call, or None when it is not cacheable."""
    if type(rule) is not str or type(policy) is not str:
        return None
    for s in shapes:
        if not _shape_ok(s):
            return None
    if names is not None and (type(names) is not tuple or not all(type(n) is str for n in names)):
        return None
    attrs_key = _attrs_key(attrs) if attrs else ()
    if attrs_key is None:
        return None
    return rule, policy, names, shapes, attrs_key


class BoundedCache(Generic[K, V]):
    """A bounded mapping key -> one kind of value (``V``); reads take no lock, inserts do.

    >>> c = BoundedCache[str, str](2)
    >>> for k in "abc":
    ...     c.put(k, k.upper())
    >>> c.get("a"), c.get("c"), len(c)
    (None, 'C', 2)
    """

    def __init__(self, maxsize: int = MAX_PLANS) -> None:
        self.maxsize = maxsize
        self._data: dict[K, V] = {}
        self._lock = threading.Lock()
        self.get: Callable[[K], V | None] = self._data.get

    def put(self, key: K, value: V) -> None:
        with self._lock:
            data = self._data
            while len(data) >= self.maxsize:
                del data[next(iter(data))]  # the oldest
            data[key] = value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


#: The cache :func:`bcast.infer` uses.
PLANS: BoundedCache[tuple, Plan] = BoundedCache()
