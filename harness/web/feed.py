"""The server-sent event streams of the live pages, shared by all their clients.

One :class:`Feed` per stream address: while the stream has clients, a single producer
task follows the changes, builds the message once per change (bursts are merged: at
most one build per :data:`MIN_INTERVAL_S`) and every open stream sends that same text.
The cost of a change does not grow with the number of clients, and a feed nobody
watches builds nothing. :func:`serve_stream` answers one client; a site holds at most
:data:`MAX_STREAMS` open streams, and answers more with ``503 Service Unavailable``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

__all__ = ["HEADERS", "KEEPALIVE_S", "MAX_STREAMS", "MIN_INTERVAL_S", "WRITE_TIMEOUT_S", "Feed",
           "StreamLimit", "serve_stream"]

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 0.5
KEEPALIVE_S = 15.0
MAX_STREAMS = 100
"""Event streams one live page's server holds open at once."""
WRITE_TIMEOUT_S = 10.0
"""A stream whose client has not taken a message within this long is cut."""
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}

Build = Callable[[], Awaitable[object]]
Changes = Callable[[], AsyncIterator[object]]


class _Run:
    """One producer's life: the latest message, its version, and whether it ended."""

    def __init__(self) -> None:
        self.data: str | None = None
        self.version = 0
        self.ended = False
        self.clients = 0
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def publish(self, data: str | None = None) -> None:
        if data is not None:
            self.data = data
        self.version += 1
        event, self.changed = self.changed, asyncio.Event()
        event.set()


class Feed:
    """The messages of one event stream: ``build()`` after each item ``changes()``
    yields (and once at the start), as compact JSON, sent only when it differs from the
    last. When ``changes()`` ends, so do the streams."""

    def __init__(self, build: Build, changes: Changes) -> None:
        self._build = build
        self._changes = changes
        self._run: _Run | None = None

    @contextlib.asynccontextmanager
    async def joined(self) -> AsyncIterator[_Run]:
        """The running producer (started for the first client; stopped when the last
        one leaves)."""
        run = self._run
        if run is None or run.ended:
            run = self._run = _Run()
            run.task = asyncio.ensure_future(self._produce(run))
        run.clients += 1
        try:
            yield run
        finally:
            run.clients -= 1
            if run.clients == 0 and run.task is not None:
                run.task.cancel()
                if self._run is run:
                    self._run = None

    async def _produce(self, run: _Run) -> None:
        dirty = asyncio.Event()
        dirty.set()

        async def follow() -> None:
            async for _ in self._changes():
                dirty.set()

        follower = asyncio.ensure_future(follow())
        await asyncio.sleep(0)  # subscribed before the first build
        try:
            while True:
                waiter = asyncio.ensure_future(dirty.wait())
                await asyncio.wait([waiter, follower], return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if not dirty.is_set():
                    break  # the changes ended
                dirty.clear()
                data = json.dumps(await self._build(), separators=(",", ":"))
                if data != run.data:
                    run.publish(data)
                await asyncio.sleep(MIN_INTERVAL_S)
        except Exception:
            log.exception("the live page's view could not be built")
        finally:
            follower.cancel()
            run.ended = True
            run.publish()


class StreamLimit:
    """How many event streams a site holds open; at most ``limit``."""

    def __init__(self, limit: int = MAX_STREAMS) -> None:
        self.limit = limit
        self.open = 0

    def take(self) -> None:
        """Count one more stream, or raise ``503`` at the limit."""
        if self.open >= self.limit:
            raise web.HTTPServiceUnavailable(
                text=f"too many live viewers (at most {self.limit}); try again later",
                headers={**HEADERS, "Retry-After": "10"})
        self.open += 1

    def release(self) -> None:
        self.open -= 1


async def serve_stream(request: web.Request, feed: Feed, limit: StreamLimit,
                       closing: asyncio.Event) -> web.StreamResponse:
    """Answer one client of ``feed``: the latest message now and each new one after,
    a keep-alive comment every :data:`KEEPALIVE_S` of quiet, until the client leaves,
    the feed ends or ``closing`` is set. A client that has not taken a message within
    :data:`WRITE_TIMEOUT_S` (it stopped reading) is cut off."""
    limit.take()
    try:
        response = web.StreamResponse(headers={**HEADERS,
                                               "Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(data: bytes) -> None:
            async with asyncio.timeout(WRITE_TIMEOUT_S):
                await response.write(data)

        await send(b"retry: 2000\n\n")
        async with feed.joined() as run:
            sent: str | None = None
            while not closing.is_set():
                changed = run.changed  # taken before any write: no change is missed
                if run.data is not None and run.data != sent:
                    sent = run.data
                    await send(f"data: {sent}\n\n".encode())
                if run.ended:
                    break
                if not await _wait(changed, closing):
                    await send(b": keep-alive\n\n")
    except ConnectionResetError:
        pass  # the client left
    except TimeoutError:  # the client does not read
        if request.transport is not None:
            request.transport.abort()
    finally:
        limit.release()
    return response


async def _wait(changed: asyncio.Event, closing: asyncio.Event) -> bool:
    """Wait for ``changed``, ``closing`` or :data:`KEEPALIVE_S`; whether either is set."""
    waits = [asyncio.ensure_future(changed.wait()), asyncio.ensure_future(closing.wait())]
    done, pending = await asyncio.wait(waits, timeout=KEEPALIVE_S,
                                       return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    return bool(done)
