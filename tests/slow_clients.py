"""Slow HTTP clients, for the tests that attack the live pages.

    python tests/slow_clients.py HOST PORT COUNT STATUS_FILE [ADDRESSES]

holds COUNT connections to HOST:PORT (from the local address 127.0.0.1, or spread over
ADDRESSES loopback addresses 127.0.1.1, 127.0.1.2, ...), each sending the head of a
request one byte every :data:`BYTE_EVERY_S` seconds and never finishing it. A
connection the server closes (or refuses) is dialed again after :data:`REDIAL_S`. Twice
a second it writes its counts to STATUS_FILE as JSON (``dialed``, ``open`` now,
``closed`` by the server, ``failed`` dials, ``answered``: connections the server sent
something on before closing; ``dialing_s``: the seconds from the first dial to the
COUNT-th, which a loaded machine stretches). Runs until SIGTERM. It raises its own
open-file limit to the hard limit first, and exits with status 3 if that is too low for
COUNT connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import signal
import sys
import time
from pathlib import Path

BYTE_EVERY_S = 5.0
REDIAL_S = 5.0
HEAD = b"GET /api/ladder HTTP/1.1\r\nHost: localhost\r\nX-Slow: "


class Counts:
    def __init__(self, count: int) -> None:
        self.dialed = self.open = self.closed = self.failed = self.answered = 0
        self.dialing_s = 0.0
        self._count = count
        self._first: float | None = None

    def dial(self) -> None:
        now = time.monotonic()
        if self._first is None:
            self._first = now
        self.dialed += 1
        if self.dialed == self._count:
            self.dialing_s = now - self._first

    def write(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({k: v for k, v in vars(self).items()
                                   if not k.startswith("_")}))
        tmp.replace(path)


async def slow_client(host: str, port: int, source: str, counts: Counts) -> None:
    while True:
        try:
            reader, writer = await asyncio.open_connection(host, port,
                                                           local_addr=(source, 0))
        except OSError:
            counts.failed += 1
            await asyncio.sleep(REDIAL_S)
            continue
        counts.dial()
        counts.open += 1
        try:
            sent = 0
            while True:
                byte = HEAD[sent:sent + 1] or b"a"
                writer.write(byte)
                sent += 1
                try:
                    data = await asyncio.wait_for(reader.read(4096), BYTE_EVERY_S)
                except TimeoutError:
                    continue
                if data:
                    counts.answered += 1
                    await reader.read()  # to the close
                break
        except OSError:
            pass
        finally:
            counts.open -= 1
            counts.closed += 1
            writer.close()
        await asyncio.sleep(REDIAL_S)


async def main(host: str, port: int, count: int, status: Path, addresses: int) -> None:
    counts = Counts(count)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    sources = ["127.0.0.1"] if addresses <= 1 else [f"127.0.1.{n % 250 + 1}"
                                                     for n in range(addresses)]
    tasks = [asyncio.ensure_future(slow_client(host, port, sources[n % len(sources)], counts))
             for n in range(count)]
    while not stop.is_set():
        counts.write(status)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)
    for task in tasks:
        task.cancel()
    counts.write(status)


if __name__ == "__main__":
    host, port, count, status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    addresses = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < count + 64:
        sys.exit(3)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(main(host, port, count, Path(status), addresses))
