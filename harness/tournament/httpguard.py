"""Connection limits of the live pages' HTTP server, so that no client can stall the
games by holding connections open.

The server runs in the referee's own process and event loop. Every accepted connection
passes :class:`ConnectionGuard` first, which holds it to these limits (the same for
``serve`` and ``ladder``):

* at most :data:`MAX_CONNECTIONS` open HTTP connections, and at most
  :data:`MAX_PER_CLIENT` from one client address;
* the process keeps :data:`FD_RESERVE` open files free for bots and the store: a
  connection that would eat into that reserve (counting every file the process has
  open) is refused too;
* a request's head (request line and headers) must be complete within
  :data:`HEADER_TIMEOUT_S` of the connection opening or of the request's first byte;
  an unread request body is read for at most :data:`BODY_TIMEOUT_S`;
* a connection idle between requests is closed after :data:`IDLE_TIMEOUT_S`, which also
  bounds the time a client may take to read a response.

A refused connection gets ``503 Service Unavailable`` and is closed at once; a
connection over a time limit is cut. Event streams, once answered, are held open (at
most :data:`~harness.tournament.feed.MAX_STREAMS`) and send to a client that reads too
slowly only for :data:`~harness.tournament.feed.WRITE_TIMEOUT_S`. Each refusal is logged
as a warning, which the long-running commands fold into one line per interval
(:mod:`harness.logfold`).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import resource
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

__all__ = ["BODY_TIMEOUT_S", "FD_RESERVE", "HEADER_TIMEOUT_S", "IDLE_TIMEOUT_S",
           "MAX_CONNECTIONS", "MAX_PER_CLIENT", "ConnectionGuard", "GuardedSite",
           "open_files"]

log = logging.getLogger("euchre.http")

HEADER_TIMEOUT_S = 5.0
BODY_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 15.0
MAX_CONNECTIONS = 256
MAX_PER_CLIENT = 32
FD_RESERVE = 256
_RECOUNT_S = 0.25  # how long a count of the process's open files is trusted
_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
            b"Content-Length: 31\r\nRetry-After: 10\r\nConnection: close\r\n\r\n"
            b"too many connections; try later")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def open_files() -> int | None:
    """How many files this process has open, or None where that cannot be read."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(folder))
        except OSError:
            continue
    return None


def _file_limit() -> int:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


class ConnectionGuard:
    """Counts the open connections and enforces the limits of the module's docstring.
    ``count_files`` is for tests."""

    def __init__(self, *, max_connections: int = MAX_CONNECTIONS,
                 max_per_client: int = MAX_PER_CLIENT, fd_reserve: int = FD_RESERVE,
                 header_timeout: float = HEADER_TIMEOUT_S, idle_timeout: float = IDLE_TIMEOUT_S,
                 count_files: Callable[[], int | None] = open_files) -> None:
        self.max_connections = max_connections
        self.max_per_client = max_per_client
        self.fd_reserve = fd_reserve
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self.per_client: collections.Counter[str] = collections.Counter()
        self.refused = 0
        self._count_files = count_files
        self._files: int | None = None  # the last count, at _counted_at, with _open_then
        self._counted_at = -_RECOUNT_S
        self._open_then = 0
        self._connections: dict[asyncio.BaseTransport, _Guarded] = {}

    @property
    def open(self) -> int:
        """HTTP connections open now."""
        return len(self._connections)

    def protocol(self, inner: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """A protocol factory for ``loop.create_server`` that guards ``inner``'s."""
        return lambda: _Guarded(self, inner)

    def middleware(self) -> Any:
        """An aiohttp middleware that tells the guard when a request's head has been
        read (its time limits stop) and when its handler is done (the keep-alive limit
        starts)."""

        @web.middleware
        async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
            connection = self._connections.get(request.transport)  # type: ignore[arg-type]
            if connection is None:
                return await handler(request)
            connection.busy()
            try:
                return await handler(request)
            finally:
                connection.idle()

        return guard

    def refusal(self, client: str) -> str | None:
        """Why a new connection from ``client`` is refused, or None to accept it."""
        if self.open >= self.max_connections:
            return f"{self.max_connections} HTTP connections are open"
        if self.per_client[client] >= self.max_per_client:
            return f"{self.max_per_client} HTTP connections from one address are open"
        files = self._open_files()
        if files is not None and files + self.fd_reserve >= _file_limit():
            return (f"{files} files are open, and {self.fd_reserve} of the open-file limit "
                    f"are kept for bots and the store")
        return None

    def _open_files(self) -> int | None:
        """The process's open files: counted at most every few hundred milliseconds,
        the HTTP connections opened since added."""
        now = time.monotonic()
        if now - self._counted_at >= _RECOUNT_S:
            self._files, self._counted_at, self._open_then = (self._count_files(), now,
                                                              self.open)
        return None if self._files is None else self._files + self.open - self._open_then

    def admit(self, connection: _Guarded, transport: asyncio.BaseTransport) -> bool:
        why = self.refusal(connection.client)
        if why is not None:
            self.refused += 1
            log.warning("live page: refused an HTTP connection: %s", why)
            return False
        self._connections[transport] = connection
        self.per_client[connection.client] += 1
        return True

    def forget(self, connection: _Guarded, transport: asyncio.BaseTransport) -> None:
        if self._connections.pop(transport, None) is connection:
            self.per_client[connection.client] -= 1
            if self.per_client[connection.client] <= 0:
                del self.per_client[connection.client]


class _Guarded(asyncio.Protocol):
    """One HTTP connection: aiohttp's protocol inside, behind the guard's limits."""

    def __init__(self, guard: ConnectionGuard, inner: Callable[[], asyncio.Protocol]) -> None:
        self._guard = guard
        self._make_inner = inner
        self._inner: asyncio.Protocol | None = None
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        self._waiting = True  # for a request's head (no handler runs)
        self._head_started = True  # the first request's clock starts at the opening
        self.client = ""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        peer = transport.get_extra_info("peername")
        self.client = str(peer[0]) if isinstance(peer, tuple) and peer else str(peer or "")
        if not self._guard.admit(self, transport):
            transport.write(_REFUSAL)
            transport.close()
            return
        self._inner = self._make_inner()
        self._inner.connection_made(transport)
        self._arm(self._guard.header_timeout)

    def data_received(self, data: bytes) -> None:
        if self._inner is None:
            return
        if self._waiting and not self._head_started:  # a new request begins
            self._head_started = True
            self._arm(self._guard.header_timeout, keep_earlier=True)
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return None if self._inner is None else self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._transport is not None:
            self._guard.forget(self, self._transport)
        if self._inner is not None:
            self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def busy(self) -> None:
        """A request's head is read and its handler runs: no time limit."""
        self._waiting = False
        self._disarm()

    def idle(self) -> None:
        """The handler is done: the response must be read, and the next request begun,
        within the keep-alive limit."""
        self._waiting, self._head_started = True, False
        self._arm(self._guard.idle_timeout)

    def _arm(self, seconds: float, *, keep_earlier: bool = False) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        if keep_earlier and self._timer is not None and self._deadline <= deadline:
            return
        self._disarm()
        self._deadline = deadline
        self._timer = loop.call_at(deadline, self._expire)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        if self._transport is not None and self._waiting:
            self._transport.abort()  # close() would wait for a client that does not read


class GuardedSite(web.BaseSite):
    """An aiohttp site on ``host:port`` whose connections pass ``guard``."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int,
                 guard: ConnectionGuard, *, backlog: int = 128) -> None:
        super().__init__(runner, backlog=backlog)
        self._host = host
        self._port = port
        self._guard = guard

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            self._guard.protocol(server), self._host, self._port, backlog=self._backlog)
