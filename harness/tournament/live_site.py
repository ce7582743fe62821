"""The live page of ``serve``: read-only HTTP (aiohttp) in the referee's own event loop.

Routes, all ``GET``:

* ``/`` and ``/t/{id}``: the index of tournaments and one tournament's page
  (:mod:`harness.web.live_pages` draws them);
* ``/events`` and ``/t/{id}/events``: their server-sent event streams, one JSON message
  as soon as a stream opens and another whenever the data changes (bursts are merged:
  at most one message per :data:`MIN_INTERVAL_S`). The message is built once per change
  for every client (:mod:`harness.web.feed`); at most :data:`MAX_STREAMS` streams
  are open at once, more are answered ``503``;
* ``/api/tournaments`` and ``/api/t/{id}``: the same JSON once;
* ``/t/{id}/replay?game=KEY``: a stored game's replay page, drawn on request;
* ``/t/{id}/report.html`` and ``/t/{id}/replays/FILE``: the report and replay pages (and
  the viewer.css and viewer.js they share) of
  the tournament's folder, once they are written.

What is shown is what the results already show (names, standings, games): never a
configuration, a command line, a token or an error text (see
:meth:`~harness.tournament.service.TournamentService.public_progress`). In a tournament
with remote bots that plays duplicate groups, a game is not shown (not among the recent
games, and its replay is ``404``) until every table of its group is stored: the tables
replay the same deals, so a bot playing one table must not read another's hands.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import web

from harness.competition.seatings import group_of
from harness.storage.results import GameRow, ResultsStore
from harness.tournament.config import TournamentConfig
from harness.tournament.runner import store_path
from harness.tournament.service import TournamentService
from harness.web.feed import HEADERS, KEEPALIVE_S, MAX_STREAMS, MIN_INTERVAL_S, Feed
from harness.web.live_pages import index_page, tournament_page
from harness.web.report import REPLAY_DIR
from harness.web.site import Held, LiveSite, game_view, html, latest_shown, replay_page

__all__ = ["HEADERS", "KEEPALIVE_S", "MAX_STREAMS", "MIN_INTERVAL_S", "LiveServer",
           "tournament_view"]

RECENT_GAMES = 10
RATE_WINDOW = 20  # the rate is measured over this many latest games
_PAGE_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*\.(html|css|js)")

def _group_holdback(config: TournamentConfig | None, store: ResultsStore,
                    tournament_id: str) -> Held:
    """What a tournament's pages hold back: with remote bots and duplicate groups, the
    games of the groups not every table of which is stored yet."""
    if config is None or not config.duplicate or not any(b.remote for b in config.bots):
        return lambda rows: ()
    tables = config.make_format().tables

    def held(rows: list[GameRow]) -> set[str]:
        group = {r.game_key: group_of(r.game_key) + "/t" for r in rows}  # its tables' keys
        stored = store.count_keys(tournament_id, group.values())
        return {key for key, tables_of in group.items() if stored[tables_of] < tables}

    return held


def _rate(rows: list[GameRow]) -> float | None:
    """Games per minute over ``rows`` (by their finishing times), or None."""
    if len(rows) < 2:
        return None
    times = sorted(dt.datetime.fromisoformat(r.finished_at).timestamp() for r in rows)
    span = times[-1] - times[0]
    return 60.0 * (len(rows) - 1) / span if span > 0 else None


def tournament_view(service: TournamentService, tournament_id: str) -> dict[str, Any]:
    """What a tournament's page shows (see :mod:`harness.web.live_pages`). Reads the store:
    call it from a worker thread."""
    view = service.public_progress(tournament_id)
    view["id"] = view.pop("tournament_id")
    folder = service.folder(tournament_id)
    rate: list[GameRow] = []
    recent: list[GameRow] = []
    path = store_path(folder)
    if path.exists():
        with ResultsStore(path) as store:
            rate = store.latest_games(tournament_id, RATE_WINDOW)
            held = _group_holdback(service.config_of(tournament_id), store, tournament_id)
            recent = latest_shown(store, tournament_id, RECENT_GAMES, held)
    view["rate"] = _rate(rate)
    view["recent"] = [game_view(r, f"/t/{tournament_id}/replay?game=") for r in recent]
    view["report"] = (f"/t/{tournament_id}/report.html"
                      if (folder / "report.html").is_file() else None)
    return view


def _summary(view: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "name", "status", "games_done", "games_total", "detail")
    out = {k: view[k] for k in keys}
    out["leader"] = view["standings"][0]["name"] if view["standings"] else None
    return out


class LiveServer(LiveSite):
    """The live pages of one :class:`TournamentService`, served on ``host:port``."""

    def __init__(self, service: TournamentService, host: str, port: int, *,
                 max_streams: int = MAX_STREAMS) -> None:
        self.service = service
        self._cache: dict[str, tuple[int, asyncio.Future[dict[str, Any]]]] = {}
        self._index_feed = Feed(self.index, self._changes)
        self._feeds: dict[str, Feed] = {}
        super().__init__(host, port, [
            web.get("/", self._index), web.get("/events", self._index_events),
            web.get("/api/tournaments", self._index_json),
            web.get("/t/{id}", self._tournament), web.get("/t/{id}/events", self._events),
            web.get("/api/t/{id}", self._tournament_json),
            web.get("/t/{id}/replay", self._replay),
            web.get("/t/{id}/report.html", self._report),
            web.get("/t/{id}/" + REPLAY_DIR + "/{file}", self._report_replay),
        ], max_streams=max_streams)

    # ------------------------------------------------------------------ data

    async def view(self, tournament_id: str) -> dict[str, Any]:
        """A tournament's view, built again only when it has changed (once, however
        many ask for it at the same time)."""
        version = self.service.version_of(tournament_id)
        cached = self._cache.get(tournament_id)
        if cached is None or cached[0] != version or (
                cached[1].done() and cached[1].exception() is not None):
            built = asyncio.ensure_future(
                asyncio.to_thread(tournament_view, self.service, tournament_id))
            cached = self._cache[tournament_id] = (version, built)
        return await asyncio.shield(cached[1])

    async def index(self) -> list[dict[str, Any]]:
        return [_summary(await self.view(tid)) for tid in self.service.tournament_ids()]

    async def _changes(self) -> AsyncIterator[int]:
        seen = self.service.changes
        while True:
            seen = await self.service.wait_change(seen)
            yield seen

    def _tournament_id(self, request: web.Request) -> str:
        tid = request.match_info["id"]
        if not self.service.known(tid):
            raise web.HTTPNotFound(text=f"no tournament {tid!r} on this referee")
        return tid

    # ------------------------------------------------------------------ pages

    async def _index(self, request: web.Request) -> web.Response:
        return html(index_page("/events"))

    async def _tournament(self, request: web.Request) -> web.Response:
        tid = self._tournament_id(request)
        return html(tournament_page(tid, f"/t/{tid}/events"))

    async def _index_json(self, request: web.Request) -> web.Response:
        return web.json_response(await self.index(), headers=HEADERS)

    async def _tournament_json(self, request: web.Request) -> web.Response:
        return web.json_response(await self.view(self._tournament_id(request)),
                                 headers=HEADERS)

    async def _replay(self, request: web.Request) -> web.Response:
        tid = self._tournament_id(request)
        key = request.query.get("game", "")
        path = store_path(self.service.folder(tid))

        def find() -> GameRow | None:
            if not path.exists():
                return None
            with ResultsStore(path) as store:
                row = store.game(tid, key)
                held = _group_holdback(self.service.config_of(tid), store, tid)
                return None if row is None or key in held([row]) else row

        return await replay_page(find, f"no game {key!r} in tournament {tid!r} (a game of "
                                       "a duplicate group is shown once the group is over)")

    async def _report(self, request: web.Request) -> web.FileResponse:
        return self._file(self.service.folder(self._tournament_id(request)) / "report.html")

    async def _report_replay(self, request: web.Request) -> web.FileResponse:
        folder = self.service.folder(self._tournament_id(request))
        name = request.match_info["file"]
        if not _PAGE_FILE.fullmatch(name):
            raise web.HTTPNotFound()
        return self._file(folder / REPLAY_DIR / name)

    @staticmethod
    def _file(path: Path) -> web.FileResponse:
        if not path.is_file():
            raise web.HTTPNotFound(text=f"{path.name} is not written yet: the report is "
                                        "written when the tournament ends")
        return web.FileResponse(path, headers=HEADERS)

    # ------------------------------------------------------------------ streams

    async def _index_events(self, request: web.Request) -> web.StreamResponse:
        return await self.stream(request, self._index_feed)

    async def _events(self, request: web.Request) -> web.StreamResponse:
        tid = self._tournament_id(request)
        feed = self._feeds.get(tid)
        if feed is None:
            feed = self._feeds[tid] = Feed(lambda: self.view(tid), self._changes)
        return await self.stream(request, feed)
