"""A bot's log file with a size cap that keeps the start and the end of its output.

The first half of the cap is the head: written once, never touched again. After it the
file keeps the most recent output in two segments of a quarter of the cap each; when the
newer one fills up, the older one is cut out and replaced by one marker line that says
how many bytes were left out. So the file never grows past the cap and that line, the start of the
output (usually the reason a bot failed to start) is always there, and the last quarter
to half of the cap before the end is always there too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO

DEFAULT_LOG_LIMIT = 10 * 1024 * 1024  # bytes per bot log file
MIN_LOG_LIMIT = 4096


class CappedLog:
    """Append-only writes to ``path`` with the cap described above. The file may exist
    already (a restarted bot appends to its log); what it holds counts towards the cap."""

    def __init__(self, path: Path, limit: int = DEFAULT_LOG_LIMIT) -> None:
        if limit < MIN_LOG_LIMIT:
            raise ValueError(f"a bot log limit is at least {MIN_LOG_LIMIT} bytes; got {limit}")
        self.path = path
        self.head = limit // 2
        self.segment = limit // 4
        self.omitted = 0
        self._file: IO[bytes] | None = open(path, "a+b")  # noqa: SIM115 - closed in close()
        self._size = self._file.seek(0, 2)
        # Older and newer tail segments: [prev, cur) and [cur, size). Output already in
        # the file past the head counts as the older one.
        self._prev: int | None = self.head if self._size > self.head else None
        self._cur = max(self._size, self.head)

    @property
    def closed(self) -> bool:
        return self._file is None

    def write(self, data: bytes) -> None:
        f = self._file
        if f is None or not data:
            return
        view = memoryview(data)
        while view:
            # Fill the head, then the newer segment, never past its end: the file stays
            # within the cap (plus one marker line) however large the writes.
            room = (self.head - self._size if self._size < self.head
                    else self.segment - (self._size - self._cur))
            piece, view = view[:room], view[room:]
            f.write(piece)
            self._size += len(piece)
            if self._size >= self.head and self._size - self._cur >= self.segment:
                self._rotate(f)
        f.flush()

    def _rotate(self, f: IO[bytes]) -> None:
        if self._prev is None:  # the first full segment: keep it as the older one
            self._prev, self._cur = self._cur, self._size
            return
        f.flush()
        f.seek(self._cur)
        newer = f.read()
        self.omitted += self._cur - self._prev
        f.truncate(self.head)
        marker = f"\n--- [bot log capped: {self.omitted} bytes left out here] ---\n".encode()
        f.write(marker)
        f.write(newer)
        self._prev = self.head + len(marker)
        self._size = self._prev + len(newer)
        self._cur = self._size

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


START_MARK = "--- start: "  # the line that opens each start of a bot in its log
_ERROR_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\.)?\w*(?:Error|Exception|Exit)\b(?::|$)")


def last_attempt(path: Path, window: int = 64 * 1024) -> str:
    """The output of the latest start of a bot in its log ``path`` (a log is appended to
    across starts and runs): the text after the last start line within the last
    ``window`` bytes ("" if the file cannot be read)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - window))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    at = text.rfind("\n" + START_MARK)
    if at < 0 and not text.startswith(START_MARK):
        return text
    rest = text[at + 1:] if at >= 0 else text
    return rest.split("\n", 1)[1] if "\n" in rest else ""


def last_words(output: str, lines: int = 3) -> str:
    """What to quote of a bot's output to say why it stopped, on one line: the line that
    names the error of a traceback (Python's last line, Node's ``Error: Cannot find
    module ...``), else its last ``lines`` non-empty lines joined by " | "."""
    kept = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in kept if _ERROR_LINE.match(line)]
    if errors:
        return errors[-1]
    return " | ".join(kept[-lines:])


_QUOTES = ("; its log ", "; no output in its log ")


def log_tail(path: Path) -> str:
    """``its log PATH ends: WORDS`` (the :func:`last_words` of the latest start), or
    ``no output in its log PATH``: what a start-up failure quotes of the bot's log, kept
    in its own field (:attr:`~harness.errors.BotStartupError.log_tail`,
    :attr:`~harness.referee.outcome.Fault.log_tail`)."""
    words = last_words(last_attempt(path))
    return f"its log {path} ends: {words}" if words else f"no output in its log {path}"


def without_log_quote(detail: str) -> str:
    """A detail stored by an earlier version, which appended the log's quote to a
    start-up failure's reason (``...; its log PATH ends: ...``), without that quote: for
    pages anyone may read (a bot's output may hold secrets). Details stored now never
    hold the quote; it is the fault's ``log_tail``."""
    cut = min((i for i in (detail.find(q) for q in _QUOTES) if i >= 0), default=len(detail))
    return detail[:cut]
