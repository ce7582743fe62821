"""Connection limits of the live pages' HTTP server, so that no client can stall the
games by holding connections open.

The server runs in the referee's own process and event loop. :class:`GuardedSite`
accepts the connections itself, one at a time, and asks :class:`ConnectionGuard`, which
holds them to these limits (the same for ``serve`` and ``ladder``):

* at most :data:`MAX_CONNECTIONS` open HTTP connections, and at most
  :data:`MAX_PER_CLIENT` from one client address (of an IPv6 client, its /64) that are
  waiting for a request (its connections whose request is being answered, such as open
  event streams, do not count: viewers behind one proxy share its address);
* the process keeps :data:`FD_RESERVE` open files free for bots and the store: a
  connection that would eat into that reserve (counting every file the process has
  open) is refused too;
* a request's head (request line and headers) must be complete within
  :data:`HEADER_TIMEOUT_S` of the connection opening or of the request's first byte;
  an unread request body is read for at most :data:`BODY_TIMEOUT_S`;
* a connection idle between requests is closed after :data:`IDLE_TIMEOUT_S`, which also
  bounds the time a client may take to read a response.

A refused connection gets ``503 Service Unavailable`` and is closed at once, before
the next is accepted, so refusing costs no more than one file for a moment; a
connection over a time limit is cut. Should the process run out of files all the same,
accepting pauses for a second. Event streams, once answered, are held open (at
most :data:`~harness.web.feed.MAX_STREAMS`) and send to a client that reads too
slowly only for :data:`~harness.web.feed.WRITE_TIMEOUT_S`. Each refusal is logged
as a warning, which the long-running commands fold into one line per interval
(:mod:`harness.web.logfold`).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import resource
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from harness.referee.peer import caller_of

__all__ = ["BODY_TIMEOUT_S", "FD_RESERVE", "HEADER_TIMEOUT_S", "IDLE_TIMEOUT_S",
           "MAX_CONNECTIONS", "MAX_PER_CLIENT", "ConnectionGuard", "GuardedSite", "client_of",
           "open_files"]

log = logging.getLogger("euchre.http")

HEADER_TIMEOUT_S = 5.0
BODY_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 15.0
MAX_CONNECTIONS = 256
MAX_PER_CLIENT = 32
FD_RESERVE = 256
_RECOUNT_S = 0.25  # how long a count of the process's open files is trusted
_ACCEPTS = 32  # connections accepted in one go before other work runs
_PAUSE_S = 1.0  # accepting pauses this long when the process is out of files
_REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
            b"Content-Length: 31\r\nRetry-After: 10\r\nConnection: close\r\n\r\n"
            b"too many connections; try later")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def client_of(peer: object) -> str:
    """Who a connection is from, as the cap per client counts it: the address of the
    socket address ``peer`` (of an IPv6 client, its /64: :func:`caller_of`)."""
    return caller_of(str(peer[0])) if isinstance(peer, tuple) else str(peer)


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
    return soft if soft != resource.RLIM_INFINITY else 1 << 20  # as good as unlimited


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
        self.open = 0
        """HTTP connections open now."""
        self.waiting: collections.Counter[str] = collections.Counter()
        """Per client address, its connections waiting for a request."""
        self.refused = 0
        self._count_files = count_files
        self._files: int | None = None  # the last count, at _counted_at, with _open_then
        self._counted_at = -_RECOUNT_S
        self._open_then = 0

    def middleware(self) -> Any:
        """An aiohttp middleware that tells a connection when its request's head has
        been read (its time limits stop) and when the handler is done (the idle limit
        starts)."""

        @web.middleware
        async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
            transport = request.transport
            connection = None if transport is None else transport.get_protocol()
            if not isinstance(connection, _Guarded):
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
            return "the cap of open HTTP connections is reached"
        if self.waiting[client] >= self.max_per_client:
            return "the cap of one address's HTTP connections waiting for a request is reached"
        files = self._open_files()
        if files is not None and files + self.fd_reserve >= _file_limit():
            return "the files kept free for bots and the store would be used"
        return None

    def admit(self, client: str) -> bool:
        """Count a new connection from ``client``, or refuse it (logged)."""
        why = self.refusal(client)
        if why is not None:
            self.refused += 1
            log.warning("live page: refused an HTTP connection: %s", why)
            return False
        self.open += 1
        self.wait(client, +1)
        return True

    def wait(self, client: str, change: int) -> None:
        """Count ``change`` more connections of ``client`` waiting for a request."""
        self.waiting[client] += change
        if self.waiting[client] <= 0:
            del self.waiting[client]

    def _open_files(self) -> int | None:
        """The process's open files: counted at most every few hundred milliseconds,
        the HTTP connections opened since added."""
        now = time.monotonic()
        if now - self._counted_at >= _RECOUNT_S:
            self._files, self._counted_at, self._open_then = (self._count_files(), now,
                                                              self.open)
        return None if self._files is None else self._files + self.open - self._open_then


class _Guarded(asyncio.Protocol):
    """One admitted HTTP connection: aiohttp's protocol inside, with the time limits."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol, client: str) -> None:
        self._guard = guard
        self._inner = inner
        self.client = client
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0
        self._waiting = True  # for a request's head (no handler runs)
        self._head_started = True  # the first request's clock starts at the opening
        self._lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._inner.connection_made(transport)
        self._arm(self._guard.header_timeout)

    def data_received(self, data: bytes) -> None:
        if self._waiting and not self._head_started:  # a new request begins
            self._head_started = True
            self._arm(self._guard.header_timeout, keep_earlier=True)
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.release()
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def release(self) -> None:
        """The connection is gone: uncount it (once)."""
        self._disarm()
        if not self._lost:
            self._lost = True
            self._guard.open -= 1
            if self._waiting:
                self._guard.wait(self.client, -1)

    def busy(self) -> None:
        """A request's head is read and its handler runs: no time limit."""
        if self._waiting and not self._lost:
            self._guard.wait(self.client, -1)
        self._waiting = False
        self._disarm()

    def idle(self) -> None:
        """The handler is done: the response must be read, and the next request begun,
        within the idle limit."""
        if not self._waiting and not self._lost:
            self._guard.wait(self.client, +1)
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


class _Listener(asyncio.AbstractServer):
    """Listening sockets whose connections :class:`GuardedSite` accepts itself."""

    def __init__(self, sockets: list[socket.socket], guard: ConnectionGuard,
                 protocol: Callable[[], asyncio.Protocol]) -> None:
        self.sockets = sockets
        self._guard = guard
        self._protocol = protocol
        self._loop = asyncio.get_running_loop()
        self._serving = True
        self._tasks: set[asyncio.Task[None]] = set()
        for sock in sockets:
            self._loop.add_reader(sock.fileno(), self._accept, sock)

    def _accept(self, sock: socket.socket) -> None:
        for _ in range(_ACCEPTS):
            try:
                conn, peer = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as e:  # out of files, most likely
                log.warning("live page: cannot accept a connection (%s); accepting again "
                            "in %.0f s", os.strerror(e.errno or 0), _PAUSE_S)
                self._loop.remove_reader(sock.fileno())
                self._loop.call_later(_PAUSE_S, self._resume, sock)
                return
            client = client_of(peer)
            if not self._guard.admit(client):
                _refuse(conn)
                continue
            task = self._loop.create_task(self._serve(conn, client))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _serve(self, conn: socket.socket, client: str) -> None:
        connection = _Guarded(self._guard, self._protocol(), client)
        try:
            await self._loop.connect_accepted_socket(lambda: connection, conn)
        except (OSError, asyncio.CancelledError):
            connection.release()
            conn.close()

    def _resume(self, sock: socket.socket) -> None:
        if self._serving:
            self._loop.add_reader(sock.fileno(), self._accept, sock)

    def close(self) -> None:
        if not self._serving:
            return
        self._serving = False
        for sock in self.sockets:
            self._loop.remove_reader(sock.fileno())
            sock.close()
        for task in self._tasks:
            task.cancel()

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def is_serving(self) -> bool:
        return self._serving

    async def start_serving(self) -> None:
        return None  # it serves from the start

    async def serve_forever(self) -> None:
        raise NotImplementedError("the live page serves from its site's start to its stop")

    async def wait_closed(self) -> None:
        return None


def _refuse(conn: socket.socket) -> None:
    """Answer 503 if the client can take it now, and close."""
    try:
        conn.setblocking(False)
        conn.send(_REFUSAL)
    except OSError:
        pass
    finally:
        conn.close()


def _listening(host: str, port: int, backlog: int) -> list[socket.socket]:
    """Non-blocking sockets listening on every address of ``host``."""
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(backlog)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class GuardedSite(web.BaseSite):
    """An aiohttp site on ``host:port`` whose connections ``guard`` admits."""

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
        self._server = _Listener(_listening(self._host, self._port, self._backlog),
                                 self._guard, server)
