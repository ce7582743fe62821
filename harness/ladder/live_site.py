"""The live page of a running ladder: read-only HTTP (aiohttp) in the ladder's own event
loop, as ``serve --http-port`` serves its tournaments (:mod:`harness.tournament.live_site`).

Routes, all ``GET``:

* ``/``: the ladder's page (:func:`harness.web.live_pages.ladder_page` draws it);
* ``/events``: its server-sent event stream, one JSON message as soon as the stream
  opens and another after each event of the ladder's feed
  (:class:`~harness.ladder.events.LadderEvents`: a game finished, the ratings moved, a
  bot connected or was benched) that changed what the page shows; bursts are merged.
  The message is built once per change for every client (:mod:`harness.web.feed`);
  at most :data:`~harness.web.feed.MAX_STREAMS` streams are open at once, more
  are answered ``503``;
* ``/api/ladder``: the same JSON once;
* ``/replay?game=KEY``: a stored game's replay page, drawn on request.

The JSON is ``id``, ``standings`` (as ``ctl standings --json`` shows them: ``name``,
``owner``, ``rated``, ``elo``, ``ci95``, ``games``, ``score``, ``sweep``, ``bound``,
``retired``, ``benched``, ``inherited_from``) and ``recent`` (the latest games, newest
first, as on a tournament's page). Tokens, commands and fault texts are never part of
it. The games of a deal set are held back until the set is over (complete or cut
short): they are not among the recent games and their replay is ``404``, since the
set's tables replay the same deals and a bot must not read the hands it is playing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Hashable
from typing import Any

from aiohttp import web

from harness.competition.seatings import group_of
from harness.ladder.runtime import LadderRuntime
from harness.ladder.service import standings, standings_key
from harness.protocol.ladder import standing_to_dict
from harness.storage.results import GameRow
from harness.web.feed import HEADERS, MAX_STREAMS, Feed
from harness.web.live_pages import ladder_page
from harness.web.site import LiveSite, game_view, html, latest_shown, replay_page

__all__ = ["RECENT_GAMES", "LadderLiveServer", "ladder_json", "ladder_view"]

RECENT_GAMES = 20


def _unfinished(runtime: LadderRuntime, rows: list[GameRow]) -> set[str]:
    """The keys of those ``rows`` whose deal set is not over yet."""
    over = runtime.sets.finished(group_of(r.game_key) for r in rows)
    return {r.game_key for r in rows if group_of(r.game_key) not in over}


def _view_key(runtime: LadderRuntime) -> tuple[Hashable, ...]:
    """What the page is drawn from: the standings' inputs, the latest stored game and
    the sets' state (a set that ends lets its games show)."""
    return ("view", standings_key(runtime),
            runtime.results.last_game_id(runtime.settings.ladder_id), runtime.sets.state())


def _build_view(runtime: LadderRuntime) -> tuple[dict[str, Any], bytes]:
    recent = latest_shown(runtime.results, runtime.settings.ladder_id, RECENT_GAMES,
                          lambda rows: _unfinished(runtime, rows))
    view = {"id": runtime.settings.ladder_id,
            "standings": [standing_to_dict(s) for s in standings(runtime)],
            "recent": [game_view(r, "/replay?game=") for r in recent]}
    return view, json.dumps(view).encode()


def ladder_view(runtime: LadderRuntime) -> dict[str, Any]:
    """What the ladder's page shows, built once per change of what it is drawn from
    (:mod:`harness.ladder.memo`; treat it as read-only). Reads the store: call it from a
    worker thread, after :meth:`LadderRuntime.refresh_ratings` in the loop."""
    return runtime.memo.get(_view_key(runtime), lambda: _build_view(runtime))[0]


def ladder_json(runtime: LadderRuntime) -> bytes:
    """:func:`ladder_view` as JSON bytes, encoded once per change."""
    return runtime.memo.get(_view_key(runtime), lambda: _build_view(runtime))[1]


class LadderLiveServer(LiveSite):
    """The live page of one :class:`LadderRuntime`, served on ``host:port``."""

    def __init__(self, runtime: LadderRuntime, host: str, port: int, *,
                 max_streams: int = MAX_STREAMS) -> None:
        self.runtime = runtime
        self._feed = Feed(self.view, self._changes)
        super().__init__(host, port, [
            web.get("/", self._page), web.get("/events", self._events),
            web.get("/api/ladder", self._json), web.get("/replay", self._replay),
        ], max_streams=max_streams)

    async def view(self) -> dict[str, Any]:
        await self.runtime.refresh_ratings()  # games not fitted yet, if a refit is due
        return await asyncio.to_thread(ladder_view, self.runtime)

    async def _changes(self) -> AsyncIterator[object]:
        async for event in self.runtime.events.watch():
            yield event

    # ------------------------------------------------------------------ pages

    async def _page(self, request: web.Request) -> web.Response:
        return html(ladder_page(self.runtime.settings.ladder_id, "/events"))

    async def _json(self, request: web.Request) -> web.Response:
        await self.runtime.refresh_ratings()  # games not fitted yet, if a refit is due
        body = await asyncio.to_thread(ladder_json, self.runtime)
        return web.Response(body=body, content_type="application/json", headers=HEADERS)

    async def _replay(self, request: web.Request) -> web.Response:
        key = request.query.get("game", "")
        ladder_id = self.runtime.settings.ladder_id

        def find() -> GameRow | None:
            row = self.runtime.results.game(ladder_id, key)
            return None if row is None or _unfinished(self.runtime, [row]) else row

        return await replay_page(find, f"no game {key!r} on this ladder (the games of a "
                                       "deal set are shown once the set is over)")

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """The view now and again after each event of the ladder's feed, until the
        client leaves, the ladder stops or the server stops."""
        return await self.stream(request, self._feed)
