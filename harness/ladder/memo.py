"""What the running ladder's answers are built from, built once per change.

The standings (``ctl standings``, the live page's JSON and its event stream) list every
bot; on a ladder of a thousand bots building them costs far more than finding out
whether anything they show has changed. :class:`Memo` keeps the last few answers by
a key made of what they were drawn from (the ratings' version, the bots table's change
count, the benches in force, the hosted bots' build states, the latest game and the
sets' state), so a request between two changes costs only those few indexed reads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Final, TypeVar

__all__ = ["Memo"]

T = TypeVar("T")

_KEPT: Final = 8


class Memo:
    """The last :data:`_KEPT` values built, by key (oldest dropped first)."""

    def __init__(self) -> None:
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()  # the loop and the page's worker threads share it
        self.builds = 0  # how many times a value was built, for tests and benchmarks

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The value for ``key``, built by ``build`` (outside the lock: two threads may
        both build it, alike) if it is not kept."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                kept: T = self._values[key]
                return kept
        value = build()
        with self._lock:
            self.builds += 1
            self._values[key] = value
            while len(self._values) > _KEPT:
                self._values.popitem(last=False)
        return value
