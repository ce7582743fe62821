"""A progress line with ETA on stderr.

On a terminal it redraws one line in place; elsewhere (CI logs, pipes) it prints a line
at most every ``interval`` seconds and a final line, so logs stay short. The rate and the
ETA count only the games played by this run (not those resumed from the store), and the
faults so far are shown by kind.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Protocol, TextIO


class RunView(Protocol):
    """What :meth:`Progress.show` reads of a run's state."""

    @property
    def done(self) -> int: ...
    @property
    def resumed(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def faults(self) -> Mapping[str, int]: ...


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    def __init__(self, total: int | None, *, label: str = "games", stream: TextIO | None = None,
                 interval: float = 10.0, enabled: bool = True) -> None:
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval = interval
        self.enabled = enabled
        self.done = 0
        self.start_done = 0
        self.started = time.monotonic()
        self._last_print = 0.0
        self.status = ""
        self.faults: dict[str, int] = {}

    def resume_from(self, done: int) -> None:
        """Games already finished before this run (they do not count towards the rate)."""
        self.done = self.start_done = done

    def show(self, state: RunView) -> None:
        """Follow a run: its games done (of which ``resumed`` came from the store), its
        status and its faults so far."""
        self.start_done = state.resumed
        self.faults = {k: v for k, v in state.faults.items() if v}
        self.done = state.done
        self.advance(0, state.status)

    def advance(self, n: int = 1, status: str = "") -> None:
        self.done += n
        if status:
            self.status = status
        now = time.monotonic()
        if self.tty or now - self._last_print >= self.interval:
            self._emit(now)

    def line(self, now: float | None = None) -> str:
        now = now or time.monotonic()
        elapsed = now - self.started
        ran = self.done - self.start_done
        rate = ran / elapsed if elapsed > 0 else 0.0
        if self.total:
            width = 24
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            eta = _clock((self.total - self.done) / rate) if rate > 0 else "?"
            text = (f"[{bar}] {self.done}/{self.total} {self.label} {frac:4.0%}  "
                    f"{rate:.1f}/s  elapsed {_clock(elapsed)}  eta {eta}")
        else:
            text = f"{self.done} {self.label}  {rate:.1f}/s  elapsed {_clock(elapsed)}"
        if self.faults:
            counts = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items()))
            text += f"  faults: {counts}"
        return f"{text}  {self.status}".rstrip()

    def _emit(self, now: float) -> None:
        if not self.enabled:
            return
        self._last_print = now
        if self.tty:
            self.stream.write("\r\x1b[2K" + self.line(now))
        else:
            self.stream.write(self.line(now) + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own above the progress line (always shown, even when the
        progress line is not)."""
        if self.tty and self.enabled:
            self.stream.write("\r\x1b[2K" + text + "\n" + self.line())
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r\x1b[2K" + self.line() + "\n")
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
