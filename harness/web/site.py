"""What every live page shares, the tournament's (``serve``) and the ladder's: a read-only
aiohttp site in the running event loop whose connections are held to the limits of
:mod:`harness.web.httpguard` and whose event streams come from :mod:`harness.web.feed`;
recent games as the pages show them, with the games a page must hold back left out; and
a stored game's replay page. The sites themselves (which data, which routes) are
:class:`harness.tournament.live_site.LiveServer` and
:class:`harness.ladder.live_site.LadderLiveServer`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import Any
from urllib.parse import quote

from aiohttp import web

from harness.storage.results import GameRow, ResultsStore
from harness.web.data import game_summary
from harness.web.feed import HEADERS, MAX_STREAMS, Feed, StreamLimit, serve_stream
from harness.web.httpguard import BODY_TIMEOUT_S, IDLE_TIMEOUT_S, ConnectionGuard, GuardedSite
from harness.web.replay import replay_html

__all__ = ["Held", "LiveSite", "game_view", "html", "latest_shown", "replay_page"]

Held = Callable[[list[GameRow]], Collection[str]]
"""Given stored games, the keys of those a public page must not show yet."""


def latest_shown(store: ResultsStore, tournament_id: str, count: int,
                 held: Held) -> list[GameRow]:
    """The ``count`` most recently stored games that ``held`` lets through, newest
    first (``held`` is asked after the games are read)."""
    limit = count
    while True:
        rows = store.latest_games(tournament_id, limit)
        hidden = held(rows)
        kept = [r for r in rows if r.game_key not in hidden]
        if len(kept) >= count or len(rows) < limit:
            return kept[:count]
        limit *= 2


def game_view(row: GameRow, replay_prefix: str) -> dict[str, Any]:
    """A recent game as the live pages show it; its replay page is
    ``replay_prefix`` followed by the quoted game key."""
    g = game_summary(row)
    return {"key": g.key, "seats": list(g.seats), "scores": list(g.scores),
            "winners": list(g.winners), "termination": g.termination, "hands": g.hands,
            "faults": g.faults, "finished_at": row.finished_at,
            "replay": replay_prefix + quote(g.key, safe="")}


class LiveSite:
    """Read-only pages on ``host:port`` in the running event loop: ``routes`` and a
    quiet ``/favicon.ico``; at most ``max_streams`` event streams open at once, and
    every connection held to ``guard``'s limits (:mod:`harness.web.httpguard`).
    ``_closing`` is set when it stops, to end the streams."""

    def __init__(self, host: str, port: int, routes: list[web.RouteDef], *,
                 max_streams: int = MAX_STREAMS, guard: ConnectionGuard | None = None) -> None:
        self.host = host
        self.port = port
        self._closing = asyncio.Event()
        self.streams = StreamLimit(max_streams)
        self.guard = guard or ConnectionGuard()
        app = web.Application(middlewares=[self.guard.middleware()])
        app.on_shutdown.append(self._on_shutdown)
        app.add_routes([*routes, web.get("/favicon.ico", _no_icon)])
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=5.0,
                                     keepalive_timeout=IDLE_TIMEOUT_S,
                                     lingering_time=BODY_TIMEOUT_S)

    async def start(self) -> str:
        """Listen; return the page's address (``http://HOST:PORT/``)."""
        await self._runner.setup()
        await GuardedSite(self._runner, self.host, self.port, self.guard).start()
        host, port = self._runner.addresses[0][:2]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/"

    async def stop(self) -> None:
        await self._runner.cleanup()

    async def stream(self, request: web.Request, feed: Feed) -> web.StreamResponse:
        """Answer an event stream's client with ``feed``'s messages."""
        return await serve_stream(request, feed, self.streams, self._closing)

    async def _on_shutdown(self, app: web.Application) -> None:
        self._closing.set()  # ends the event streams


async def _no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)  # browsers ask; a 404 would be a console error


async def replay_page(find: Callable[[], GameRow | None], missing: str) -> web.Response:
    """The replay page of the stored game ``find`` returns (it runs in a worker
    thread); 404 with ``missing`` when there is none."""

    def page() -> str | None:
        row = find()
        return None if row is None else replay_html(dict(row.record))

    text = await asyncio.to_thread(page)
    if text is None:
        raise web.HTTPNotFound(text=missing)
    return html(text)


def html(text: str) -> web.Response:
    """An HTML page with the live pages' headers."""
    return web.Response(text=text, content_type="text/html", headers=HEADERS)
