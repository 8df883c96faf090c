"""One record of a kind per target, kept on the target and made once.

The suite's per-target records (the schema ledger, the holds) live as attributes of
the target object they describe, so every check's context of a process finds the same
one; :func:`kept_on` makes it on first use, under a lock, since checks run on many
threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["kept_on"]

_R = TypeVar("_R")
_MAKING = threading.Lock()


def kept_on(target: object, attribute: str, kind: type[_R], make: Callable[[], _R]) -> _R:
    """The ``kind`` record kept on ``target`` as ``attribute``; ``make()`` it the first
    time (once, whatever the threads asking)."""
    record = getattr(target, attribute, None)
    if isinstance(record, kind):
        return record
    with _MAKING:
        record = getattr(target, attribute, None)
        if not isinstance(record, kind):
            record = make()
            setattr(target, attribute, record)
        return record
