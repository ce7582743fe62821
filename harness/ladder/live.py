"""The live page of a running ladder: read-only HTTP (aiohttp) in the ladder's own event
loop, as ``serve --http-port`` serves its tournaments (:mod:`harness.tournament.live`).

Routes, all ``GET``:

* ``/``: the ladder's page (:func:`harness.web.live.ladder_page` draws it);
* ``/events``: its server-sent event stream, one JSON message as soon as the stream
  opens and another after each event of the ladder's feed
  (:class:`~harness.ladder.events.LadderEvents`: a game finished, the ratings moved, a
  bot connected or was benched) that changed what the page shows; bursts are merged;
* ``/api/ladder``: the same JSON once;
* ``/replay?game=KEY``: a stored game's replay page, drawn on request.

The JSON is ``id``, ``standings`` (as ``ctl standings --json`` shows them: ``name``,
``owner``, ``rated``, ``elo``, ``ci95``, ``games``, ``score``, ``sweep``, ``bound``,
``retired``, ``benched``, ``inherited_from``) and ``recent`` (the latest games, newest
first, as on a tournament's page). Tokens, commands and fault texts are never part of
it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from harness.ladder.runtime import LadderRuntime
from harness.ladder.service import recent_games, standings
from harness.protocol.ladder import standing_to_dict
from harness.tournament.live import (
    HEADERS,
    KEEPALIVE_S,
    MIN_INTERVAL_S,
    LiveSite,
    game_view,
    html,
    replay_page,
)
from harness.web.live import ladder_page

__all__ = ["RECENT_GAMES", "LadderLiveServer", "ladder_view"]

RECENT_GAMES = 20


def ladder_view(runtime: LadderRuntime) -> dict[str, Any]:
    """What the ladder's page shows. Reads the store: call it from a worker thread,
    after :meth:`LadderRuntime.refresh_ratings` in the loop."""
    return {"id": runtime.settings.ladder_id,
            "standings": [standing_to_dict(s) for s in standings(runtime)],
            "recent": [game_view(r, "/replay?game=")
                       for r in recent_games(runtime, RECENT_GAMES)]}


class LadderLiveServer(LiveSite):
    """The live page of one :class:`LadderRuntime`, served on ``host:port``."""

    def __init__(self, runtime: LadderRuntime, host: str, port: int) -> None:
        self.runtime = runtime
        super().__init__(host, port, [
            web.get("/", self._page), web.get("/events", self._events),
            web.get("/api/ladder", self._json), web.get("/replay", self._replay),
        ])

    async def view(self) -> dict[str, Any]:
        self.runtime.refresh_ratings()  # games not fitted yet, if a refit is due
        return await asyncio.to_thread(ladder_view, self.runtime)

    # ------------------------------------------------------------------ pages

    async def _page(self, request: web.Request) -> web.Response:
        return html(ladder_page(self.runtime.settings.ladder_id, "/events"))

    async def _json(self, request: web.Request) -> web.Response:
        return web.json_response(await self.view(), headers=HEADERS)

    async def _replay(self, request: web.Request) -> web.Response:
        key = request.query.get("game", "")
        ladder_id = self.runtime.settings.ladder_id
        return await replay_page(lambda: self.runtime.results.game(ladder_id, key),
                                 f"no game {key!r} on this ladder")

    # ------------------------------------------------------------------ stream

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """Send the view now and again after each event of the ladder's feed, until the
        client leaves, the ladder stops or the server stops."""
        response = web.StreamResponse(headers={**HEADERS,
                                               "Content-Type": "text/event-stream"})
        await response.prepare(request)
        changed = asyncio.Event()

        async def follow() -> None:
            async for _ in self.runtime.events.watch():
                changed.set()

        follower = asyncio.ensure_future(follow())
        await asyncio.sleep(0)  # subscribed before the first view is built
        sent = ""
        try:
            await response.write(b"retry: 2000\n\n")
            while not self._closing.is_set() and not follower.done():
                changed.clear()
                data = json.dumps(await self.view(), separators=(",", ":"))
                if data != sent:
                    await response.write(f"data: {data}\n\n".encode())
                    sent = data
                if await self._wait(changed, follower):
                    await asyncio.sleep(MIN_INTERVAL_S)
                else:
                    await response.write(b": keep-alive\n\n")
        except ConnectionResetError:
            pass  # the client left
        finally:
            follower.cancel()
        return response

    async def _wait(self, changed: asyncio.Event, follower: asyncio.Future[None]) -> bool:
        """Wait for an event, the feed's or the server's end, or :data:`KEEPALIVE_S`;
        whether something happened."""
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(changed.wait()),
                                            asyncio.ensure_future(self._closing.wait())]
        done, pending = await asyncio.wait([*waits, follower], timeout=KEEPALIVE_S,
                                           return_when=asyncio.FIRST_COMPLETED)
        for task in waits:
            if task in pending:
                task.cancel()
        return bool(done)
