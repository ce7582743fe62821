"""Repeated warnings and errors folded into one line per interval with a count.

A long-running server must not write a line (or a traceback) per event when the same
error repeats: a client that makes it fail thousands of times a second would fill the
disk with stderr. :class:`FoldingHandler` sits in front of a real handler. A record of
level WARNING or above passes the first time its *kind* is seen (its logger, level,
the first line of its message, numbers and hexadecimal ids aside, and its exception's
type); further records of that kind
are only counted, and at the end of each :data:`INTERVAL_S` one line says how many
there were. A kind that keeps repeating is thus written once in full and then as one
line per interval; one that was quiet for a whole interval is written in full again. At
most :data:`MAX_KINDS` kinds are followed at once; records of any further kind are
counted together. Records below WARNING (``-v``) pass untouched.

:func:`install` puts it in front of the root logger's handlers.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
from collections.abc import Callable

__all__ = ["INTERVAL_S", "MAX_KINDS", "FoldingHandler", "install"]

INTERVAL_S = 60.0
MAX_KINDS = 50
_KEY_CHARS = 120
_NUMBERS = re.compile(r"[0-9a-fA-F]*[0-9][0-9a-fA-F]*")
_OTHERS: tuple[str, int, str, str] = ("", logging.WARNING, "", "")

Kind = tuple[str, int, str, str]


def _first_line(record: logging.LogRecord) -> str:
    try:
        return record.getMessage().split("\n", 1)[0]
    except Exception:  # a message whose arguments do not format
        return str(record.msg).split("\n", 1)[0]


def kind_of(record: logging.LogRecord) -> Kind:
    """What makes two records "the same": logger, level, first message line (its first
    120 characters, with numbers and hexadecimal ids, such as addresses, ports and
    session ids, made alike) and exception type."""
    first = _NUMBERS.sub("#", _first_line(record)[:_KEY_CHARS])
    error = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
    return record.name, record.levelno, first, error


@dataclasses.dataclass
class _Seen:
    label: str
    level: int
    name: str
    count: int = 0  # folded (not shown) since the interval began


class FoldingHandler(logging.Handler):
    """Passes records to ``target``, folding repeats (see the module's docstring).
    ``clock`` is for tests."""

    def __init__(self, target: logging.Handler, *, interval: float = INTERVAL_S,
                 max_kinds: int = MAX_KINDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(level=logging.NOTSET)
        self.target = target
        self.interval = interval
        self.max_kinds = max_kinds
        self._clock = clock
        self._started = clock()
        self._seen: dict[Kind, _Seen] = {}
        self._timer: threading.Timer | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING:
            self.target.handle(record)
            return
        self._roll()
        kind = kind_of(record)
        seen = self._seen.get(kind)
        if seen is None and len(self._seen) >= self.max_kinds:
            seen = self._seen.setdefault(
                _OTHERS, _Seen("warnings and errors of other kinds", logging.WARNING,
                               "logging"))
        if seen is None:
            self._seen[kind] = _Seen(_first_line(record), record.levelno, record.name)
            self.target.handle(record)
            return
        seen.count += 1
        self._wake_at_end()

    def _roll(self, *, now: float | None = None) -> None:
        """At the end of an interval (or at ``now``, if given), say how often each kind
        repeated; keep following only the kinds that repeated."""
        end = self._clock() if now is None else now
        if now is None and end - self._started < self.interval:
            return
        for seen in self._seen.values():
            if seen.count:
                self.target.handle(logging.LogRecord(
                    seen.name, seen.level, __file__, 0, "%d more like this in the last %.0f s: %s",
                    (seen.count, end - self._started, seen.label), None))
        self._seen = {k: dataclasses.replace(s, count=0) for k, s in self._seen.items()
                      if s.count and k != _OTHERS}
        self._started = end

    def _wake_at_end(self) -> None:
        """Make sure the counts are written when the interval ends even if no record
        comes then."""
        if self._timer is not None:
            return
        delay = max(0.0, self._started + self.interval - self._clock()) + 0.01

        def fire() -> None:
            with self.lock:  # type: ignore[union-attr]  # Handler.createLock made it
                self._timer = None
                self._roll()
                if any(seen.count for seen in self._seen.values()):
                    self._wake_at_end()  # woke a little early

        self._timer = threading.Timer(delay, fire)
        self._timer.daemon = True
        self._timer.start()

    def flush(self) -> None:
        self.target.flush()

    def close(self) -> None:
        """Write the counts not written yet, then close."""
        with self.lock:  # type: ignore[union-attr]
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._roll(now=self._clock())  # the interval ends now
        super().close()


def install(interval: float = INTERVAL_S) -> None:
    """Fold repeats on every handler of the root logger (call after
    ``logging.basicConfig``); idempotent."""
    root = logging.getLogger()
    root.handlers = [h if isinstance(h, FoldingHandler) else FoldingHandler(h, interval=interval)
                     for h in root.handlers]
