"""The live pages' connection guard (harness.web.httpguard), in process over real
sockets: slow request heads, idle keep-alive connections and endless bodies are cut;
connections over the caps (overall, per client address, the open-file reserve) are
refused with a 503 at once; a request being answered, such as an event stream, is not
cut, unless its client stops reading. The attack on real ``ladder`` and ``serve``
processes is in test_http_slow_clients.py."""

from __future__ import annotations

import asyncio
import itertools
import resource
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from harness.web import feed as feed_module
from harness.web.feed import Feed
from harness.web.httpguard import ConnectionGuard, open_files
from harness.web.site import LiveSite

WAIT_S = 30.0
REQUEST = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
Stream = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def _hello(request: web.Request) -> web.Response:
    return web.Response(text="hello")


async def _stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse()
    await response.prepare(request)
    for _ in range(300):
        await response.write(b"tick\n")
        await asyncio.sleep(0.1)
    return response


@asynccontextmanager
async def site(guard: ConnectionGuard) -> AsyncIterator[int]:
    """A live site guarded by ``guard`` on a free loopback port; yields the port."""
    live = LiveSite("127.0.0.1", 0, [web.get("/", _hello), web.get("/stream", _stream)],
                    guard=guard)
    url = await live.start()
    try:
        yield int(url.rstrip("/").rsplit(":", 1)[1])
    finally:
        await live.stop()


async def dial(port: int, source: str = "127.0.0.1") -> Stream:
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


async def until_closed(reader: asyncio.StreamReader,
                       meanwhile: Callable[[], Awaitable[None]] | None = None) -> bytes:
    """Everything the server sends until it closes the connection (failing after
    :data:`WAIT_S`); ``meanwhile`` runs between reads (the client keeps talking)."""
    received = b""
    async with asyncio.timeout(WAIT_S):
        while True:
            try:
                data = await asyncio.wait_for(reader.read(4096), 0.1)
            except TimeoutError:
                if meanwhile is not None:
                    await meanwhile()
                continue
            except ConnectionResetError:
                return received
            if not data:
                return received
            received += data


async def answered(stream: Stream, request: bytes = REQUEST) -> bytes:
    """Send ``request`` and read the status line and headers of the answer."""
    reader, writer = stream
    writer.write(request)
    async with asyncio.timeout(WAIT_S):
        return await reader.readuntil(b"\r\n\r\n")


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(test())  # type: ignore[arg-type]


def test_a_request_head_that_never_ends_is_cut() -> None:
    async def test() -> None:
        async with site(ConnectionGuard(header_timeout=0.5)) as port:
            reader, writer = await dial(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            sent = 0

            async def one_more_byte() -> None:
                nonlocal sent
                writer.write(b"a")
                sent += 1

            # aiohttp's own idle limit is 15 s: a close much earlier is the guard's.
            assert await until_closed(reader, one_more_byte) == b""
            assert sent < 100
            writer.close()

    run(test)


def test_an_idle_keep_alive_connection_is_closed_and_a_busy_stream_is_not() -> None:
    async def test() -> None:
        guard = ConnectionGuard(header_timeout=0.3, idle_timeout=0.5)
        async with site(guard) as port:
            idle = await dial(port)
            assert (await answered(idle)).startswith(b"HTTP/1.1 200")
            assert b"hello" in await until_closed(idle[0])  # the body, then the close
            idle[1].close()

            reader, writer = await dial(port)
            await answered((reader, writer), b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            ticks = b""
            async with asyncio.timeout(WAIT_S):
                while ticks.count(b"tick") < 15:  # 1.5 s: past both time limits
                    ticks += await reader.read(4096)
                    assert ticks, "the stream was cut"
            assert guard.open == 1
            writer.close()

    run(test)


def test_a_request_body_that_never_ends_is_cut() -> None:
    async def test() -> None:
        async with site(ConnectionGuard(header_timeout=0.3, idle_timeout=0.5)) as port:
            reader, writer = await dial(port)
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nab")

            async def one_more_byte() -> None:
                writer.write(b"c")

            assert (await until_closed(reader, one_more_byte)).startswith(b"HTTP/1.1 200")
            writer.close()

    run(test)


def test_connections_over_the_caps_are_refused_at_once() -> None:
    async def test() -> None:
        guard = ConnectionGuard(max_connections=3, max_per_client=2)
        async with site(guard) as port:
            first, second = await dial(port), await dial(port)
            refused = await dial(port)
            assert (await until_closed(refused[0])).startswith(b"HTTP/1.1 503")
            # One busy with a request no longer counts against its address's cap.
            await answered(first, b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
            third = await dial(port)
            assert (await answered(third)).startswith(b"HTTP/1.1 200")
            other = await dial(port, "127.0.0.2")  # over the cap of all connections
            assert (await until_closed(other[0])).startswith(b"HTTP/1.1 503")
            assert guard.open == 3 and guard.refused == 2

            first[1].close()
            async with asyncio.timeout(WAIT_S):
                while guard.open > 2:
                    await asyncio.sleep(0.05)
            other = await dial(port, "127.0.0.2")
            assert (await answered(other)).startswith(b"HTTP/1.1 200")
            for _, writer in (second, third, other):
                writer.close()

    run(test)


def test_the_open_file_reserve_is_kept_for_bots_and_the_store() -> None:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    files = open_files()
    assert files is not None and 3 <= files < soft  # this process's, counted for real

    async def test() -> None:
        crowded = ConnectionGuard(fd_reserve=64, count_files=lambda: soft - 64)
        async with site(crowded) as port:
            reader, writer = await dial(port)
            assert (await until_closed(reader)).startswith(b"HTTP/1.1 503")
            writer.close()
        roomy = ConnectionGuard(fd_reserve=64, count_files=lambda: soft - 66)
        async with site(roomy) as port:
            stream = await dial(port)
            assert (await answered(stream)).startswith(b"HTTP/1.1 200")
            stream[1].close()

    run(test)


def test_an_event_stream_whose_client_stops_reading_is_cut(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed_module, "MIN_INTERVAL_S", 0.0)
    monkeypatch.setattr(feed_module, "WRITE_TIMEOUT_S", 0.5)
    counter = itertools.count()

    async def build() -> object:  # a big message, new every time
        return {"n": next(counter), "pad": "x" * 200_000}

    async def changes() -> AsyncIterator[object]:
        while True:
            await asyncio.sleep(0.01)
            yield None

    async def test() -> None:
        guard = ConnectionGuard()
        live: LiveSite
        feed = Feed(build, changes)

        async def events(request: web.Request) -> web.StreamResponse:
            return await live.stream(request, feed)

        live = LiveSite("127.0.0.1", 0, [web.get("/events", events)], guard=guard)
        port = int((await live.start()).rstrip("/").rsplit(":", 1)[1])
        try:
            client = socket.socket()
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            client.connect(("127.0.0.1", port))
            client.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")  # and never reads
            async with asyncio.timeout(WAIT_S):
                while live.streams.open == 0:
                    await asyncio.sleep(0.05)
                while live.streams.open or guard.open:
                    await asyncio.sleep(0.05)
            assert next(counter) > 3  # it sent until the client's buffers were full
            client.close()
        finally:
            await live.stop()

    run(test)

