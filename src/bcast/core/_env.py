"""The environment variables that switch a part of the executor on or off (``BCAST_RECYCLE``,
``BCAST_KERNELS``): read the same way everywhere, and a value that is not a switch is an
``InputError`` when bcast loads the executor, not silently "on"."""

from __future__ import annotations

import os

from ._format import brief
from .errors import InputError

_OFF = ("0", "false", "off", "no")
_ON = ("1", "true", "on", "yes")


def switch(name: str) -> bool:
    """Whether ``name`` is on: unset or empty is on; 0/false/off/no and 1/true/on/yes (any case)."""
    value = os.environ.get(name, "").strip().lower()
    if value in _OFF:
        return False
    if not value or value in _ON:
        return True
    raise InputError(f"{name} must be 0 (off) or 1 (on), got {brief(os.environ[name])}")
