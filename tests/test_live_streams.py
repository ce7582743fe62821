"""The live pages' safety, in process over real HTTP (aiohttp server and client): the
event streams share one view built per change and are capped (more clients get 503),
and the games of a deal set (a ladder's) or of a duplicate group (a tournament with
remote bots) stay hidden until every table is played, since the tables replay the same
deals. Games are real games of the rules engine, stored as the ladder and the runner
store them."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import json
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from configs import HEURISTIC, bot, remote, toml_config
from playwright.sync_api import Browser
from test_live_page import browser as browser  # the module's Chromium (a fixture)
from test_stats_report import random_row
from test_web_pages import Tab

from harness.competition.seatings import ScheduledGame
from harness.ladder import live_site as ladder_live
from harness.ladder.live_site import LadderLiveServer
from harness.ladder.matchmaking import DealSet, SetProgress
from harness.ladder.runtime import LadderRuntime
from harness.ladder.settings import LadderSettings
from harness.protocol import ladder as lp
from harness.referee.arena import Arena
from harness.rules import Form
from harness.storage.results import GameRow, ResultsStore
from harness.tournament import live_site as tournament_live
from harness.tournament.live_site import LiveServer
from harness.tournament.runner import store_path
from harness.tournament.service import CONFIG_FILE, TournamentService
from harness.web.feed import MAX_STREAMS

WAIT_S = 60.0
SEATS = ("ann", "bob", "ann", "bob")


def deal_set(index: int) -> DealSet:
    key = f"ladder/{index:09d}"
    games = tuple(ScheduledGame(key=f"{key}/t{t}", seats=SEATS[t:] + SEATS[:t], seed=index,
                                group=key, table=t, sides=(("ann",), ("bob",)))
                  for t in range(2))
    return DealSet(index=index, key=key, seed=index, base=SEATS, games=games)


def stored_game(tournament_id: str, game: ScheduledGame, form: Form) -> GameRow:
    row = random_row(form, game.seed, game.seats, game.key)
    record = {**row.record, "tournament": {"id": tournament_id, "key": game.key,
                                           "group": game.group, "table": game.table}}
    return dataclasses.replace(row, tournament_id=tournament_id, record=record)


async def read_message(response: aiohttp.ClientResponse) -> Any:
    """The next ``data:`` message of an event stream."""
    while True:
        line = await asyncio.wait_for(response.content.readline(), WAIT_S)
        assert line, "the stream ended"
        if line.startswith(b"data: "):
            return json.loads(line[len(b"data: "):])


async def fetch(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with session.get(url) as response:
        return response.status, await response.text()


class LiveLadder:
    """A ladder runtime (not playing: the test stores its games and sets) and its live
    page on a free loopback port."""

    def __init__(self, tmp_path: Path) -> None:
        self.runtime = LadderRuntime(LadderSettings(store=tmp_path / "ladder.sqlite",
                                                    log_dir=tmp_path / "logs"))
        self.runtime.results.ensure_tournament("ladder", "ladder", {"kind": "ladder"})
        self.server = LadderLiveServer(self.runtime, "127.0.0.1", 0)
        self.url = ""

    async def __aenter__(self) -> LiveLadder:
        self.url = (await self.server.start()).rstrip("/")
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.runtime.events.close()
        await self.server.stop()
        self.runtime.close()

    def play(self, progress: SetProgress, table: int) -> GameRow:
        """Store one table of a set as the ladder does, and publish it."""
        row = stored_game("ladder", progress.deal_set.games[table], Form.FOUR_HANDED)
        self.runtime.results.record_game(row)
        progress.finish(table)
        self.runtime.events.publish(lp.WatchLadderResponse(game_finished=lp.GameFinished()))
        return row


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``test`` in an event loop of its own thread (Playwright's runs in this one)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, test()).result()


def test_the_ladder_streams_share_one_view_per_change_and_refuse_clients_over_the_cap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    builds = 0
    build = ladder_live.ladder_view

    def counted(runtime: LadderRuntime) -> dict[str, Any]:
        nonlocal builds
        builds += 1
        return build(runtime)

    monkeypatch.setattr(ladder_live, "ladder_view", counted)

    async def test() -> None:
        async with LiveLadder(tmp_path) as ladder, aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0)) as session:
            streams = [await session.get(f"{ladder.url}/events")
                       for _ in range(MAX_STREAMS + 5)]
            try:
                refused = [s for s in streams if s.status == 503]
                served = [s for s in streams if s.status == 200]
                assert len(refused) == 5 and len(served) == MAX_STREAMS
                assert "too many" in await refused[0].text()
                first = await asyncio.gather(*(read_message(s) for s in served))
                assert all(m == first[0] and m["recent"] == [] for m in first)
                assert builds <= 2  # one build for all of them
                before = builds
                progress = SetProgress(deal_set(1))
                ladder.runtime.sets.start(progress.deal_set)
                ladder.play(progress, 0)
                ladder.play(progress, 1)
                ladder.runtime.sets.finish(progress)
                ladder.runtime.events.publish(lp.WatchLadderResponse(
                    rating_changed=lp.RatingChanged()))
                updates = await asyncio.gather(*(read_message(s) for s in served))
                assert all(len(m["recent"]) == 2 for m in updates)
                assert builds - before <= 4  # three events, merged; not one per client
            finally:
                for s in streams:
                    s.close()

    run(test)


def test_the_ladder_page_holds_back_a_deal_set_until_it_is_over(tmp_path: Path) -> None:
    async def test() -> None:
        async with LiveLadder(tmp_path) as ladder, aiohttp.ClientSession() as session:
            done = SetProgress(deal_set(1))
            ladder.runtime.sets.start(done.deal_set)
            ladder.play(done, 0)
            ladder.play(done, 1)
            ladder.runtime.sets.finish(done)
            playing = SetProgress(deal_set(2))
            ladder.runtime.sets.start(playing.deal_set)
            t0 = ladder.play(playing, 0)  # table 1 is being played

            async def shown() -> list[str]:
                status, body = await fetch(session, f"{ladder.url}/api/ladder")
                assert status == 200
                return [g["key"] for g in json.loads(body)["recent"]]

            async with session.get(f"{ladder.url}/events") as stream:
                streamed = await read_message(stream)
            assert [g["key"] for g in streamed["recent"]] == await shown() == [
                "ladder/000000001/t1", "ladder/000000001/t0"]
            status, body = await fetch(session, f"{ladder.url}/replay?game={t0.game_key}")
            assert status == 404 and "no game" in body and "hand" not in body.lower()
            assert (await fetch(session, f"{ladder.url}/replay?game=ladder/000000001/t0")
                    )[0] == 200

            ladder.play(playing, 1)
            ladder.runtime.sets.finish(playing)  # complete: now both tables are public
            assert (await shown())[:2] == ["ladder/000000002/t1", "ladder/000000002/t0"]
            for key in ("ladder/000000002/t0", "ladder/000000002/t1"):
                status, page = await fetch(session, f"{ladder.url}/replay?game={key}")
                assert status == 200 and key in page

            cut = SetProgress(deal_set(3))
            ladder.runtime.sets.start(cut.deal_set)
            ladder.play(cut, 0)
            assert "ladder/000000003/t0" not in await shown()
            cut.cut_short("bob benched")
            ladder.runtime.sets.finish(cut)  # cut short is over too
            assert (await shown())[0] == "ladder/000000003/t0"

    run(test)


def test_a_page_refused_for_too_many_viewers_follows_the_ladder_once_there_is_room(
        tmp_path: Path, browser: Browser) -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def call(coroutine: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(WAIT_S)

    async def opened() -> LiveLadder:
        ladder = LiveLadder(tmp_path)
        ladder.server.streams.limit = 0  # full: the page's stream is refused
        return await ladder.__aenter__()

    def connection_is(text: str) -> None:
        page.wait_for_function(
            f"() => document.getElementById('connection').textContent === {text!r}",
            timeout=WAIT_S * 1000)

    ladder = call(opened())
    tab = Tab(browser)
    page = tab.page
    try:
        page.goto(ladder.url + "/")
        connection_is("reconnecting...")
        assert page.evaluate("document.querySelector('main').dataset.updates") == "0"
        loop.call_soon_threadsafe(setattr, ladder.server.streams, "limit", 1)
        connection_is("live")  # asked again, without a reload
        page.wait_for_function(
            "() => Number(document.querySelector('main').dataset.updates) > 0",
            timeout=WAIT_S * 1000)
        assert [e for e in tab.errors if e.startswith("uncaught")] == []
    finally:
        page.close()
        call(ladder.__aexit__())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(WAIT_S)
        loop.close()


REMOTE_DUPLICATE = toml_config("dup", games=1, rules={"form": "two-handed"},
                               bots=(bot("ann", HEURISTIC),
                                     remote("far", "far-token-for-a-test")))


@contextlib.asynccontextmanager
async def live_serve(root: Path) -> AsyncIterator[str]:
    """A tournament service (running nothing: the test stores the games) with its live
    pages on a free loopback port; yields their address."""
    service = TournamentService(Arena(log_dir=root / "logs"), root / "out")
    server = LiveServer(service, "127.0.0.1", 0)
    url = (await server.start()).rstrip("/")
    try:
        yield url
    finally:
        await server.stop()


def test_a_remote_tournament_page_holds_back_a_duplicate_group_until_every_table_is_stored(
        tmp_path: Path) -> None:
    folder = tmp_path / "out" / "dup"
    folder.mkdir(parents=True)
    (folder / CONFIG_FILE).write_text(REMOTE_DUPLICATE)
    games = [ScheduledGame(key=f"rr/0/0/t{t}", seats=seats, seed=7, group="rr/0/0", table=t,
                           sides=((seats[0],), (seats[1],)))
             for t, seats in enumerate((("ann", "far"), ("far", "ann")))]

    def store(game: ScheduledGame) -> None:
        with ResultsStore(store_path(folder)) as results:
            results.ensure_tournament("dup", "dup", {})
            results.record_game(stored_game("dup", game, Form.TWO_HANDED))

    async def shown(session: aiohttp.ClientSession, url: str) -> list[str]:
        status, body = await fetch(session, f"{url}/api/t/dup")
        assert status == 200, body
        return [g["key"] for g in json.loads(body)["recent"]]

    async def test() -> None:
        async with aiohttp.ClientSession() as session:
            store(games[0])  # table 1 is being played
            async with live_serve(tmp_path) as url:
                assert await shown(session, url) == []
                status, body = await fetch(session, f"{url}/t/dup/replay?game=rr/0/0/t0")
                assert status == 404 and "no game" in body
                store(games[1])
                status, _ = await fetch(session, f"{url}/t/dup/replay?game=rr/0/0/t0")
                assert status == 200
            async with live_serve(tmp_path) as url:
                assert await shown(session, url) == ["rr/0/0/t1", "rr/0/0/t0"]
                for game in games:
                    status, page = await fetch(
                        session, f"{url}/t/dup/replay?game={game.key}")
                    assert status == 200 and game.key in page

    run(test)


def test_serve_streams_share_one_view_and_refuse_clients_over_the_cap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "out" / "dup"
    folder.mkdir(parents=True)
    (folder / CONFIG_FILE).write_text(REMOTE_DUPLICATE)
    builds = 0
    build = tournament_live.tournament_view

    def counted(service: TournamentService, tournament_id: str) -> dict[str, Any]:
        nonlocal builds
        builds += 1
        return build(service, tournament_id)

    monkeypatch.setattr(tournament_live, "tournament_view", counted)

    async def test() -> None:
        async with live_serve(tmp_path) as url, aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0)) as session:
            addresses = [f"{url}/events", f"{url}/t/dup/events"] * ((MAX_STREAMS + 5) // 2 + 1)
            streams = [await session.get(a) for a in addresses[:MAX_STREAMS + 5]]
            try:
                assert [s.status for s in streams].count(503) == 5
                served = [s for s in streams if s.status == 200]
                messages = await asyncio.gather(*(read_message(s) for s in served))
                assert {m[0]["id"] if isinstance(m, list) else m["id"]
                        for m in messages} == {"dup"}
                assert builds == 1  # the index and the tournament's page share it
            finally:
                for s in streams:
                    s.close()

    run(test)
