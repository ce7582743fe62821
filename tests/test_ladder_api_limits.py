"""The ladder's operator answers over real gRPC when they are large: a ListGames limit
beyond the cap returns the newest 1000 games (no error, no traceback in the log), and the
standings of 500 bots (well over 64 KiB) come back whole."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest

from harness.ladder.registry import Registry
from harness.ladder.runtime import LadderRuntime
from harness.ladder.service import MAX_GAMES
from harness.ladder.settings import LadderSettings
from harness.protocol import ladder as lp
from harness.referee.outcome import Termination, TimeControl
from harness.rules.config import RulesConfig
from harness.storage.ladder import LadderStore
from harness.storage.results import GameRow, ResultsStore

BOTS = 500
GAMES = MAX_GAMES + 100
OWNER = "o" * 150  # long but allowed (at most 200 characters): 500 rows are > 64 KiB


def _settings(tmp_path: Path) -> LadderSettings:
    return LadderSettings(store=tmp_path / "ladder.sqlite", log_dir=tmp_path / "logs",
                          rules=RulesConfig(target=3), time_control=TimeControl.parse("5+30"),
                          concurrency=1, poll_seconds=0.2)


def _fill_store(settings: LadderSettings) -> None:
    """Register BOTS bots and store GAMES finished games between the first two."""
    with LadderStore(settings.store) as store:
        registry = Registry(store)
        for i in range(BOTS):
            registry.register(f"bot{i:03d}", OWNER)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with ResultsStore(settings.store) as results:
        results.ensure_tournament(settings.ladder_id, "ladder", {"kind": "ladder"})
        for i in range(GAMES):
            results.record_game(GameRow(
                tournament_id=settings.ladder_id, game_key=f"old-{i:05d}", form="two_handed",
                seed=i, seats=("bot000", "bot001"), termination=Termination.NORMAL,
                scores=(10, i % 10), ranking=(1, 2), hands=7, started_at=now,
                finished_at=now, duration_s=1.0, record={}))


async def _listening(address: list[str], ladder: asyncio.Future[None]) -> None:
    """Until the ladder says where it listens (its own error, if it fails first)."""
    while not address:
        if ladder.done():
            ladder.result()
            raise AssertionError("the ladder stopped before it listened")
        await asyncio.sleep(0.02)


def test_large_operator_answers_are_capped_or_sent_whole(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = _settings(tmp_path)
    _fill_store(settings)
    caplog.set_level(logging.WARNING)

    async def scenario() -> tuple[list[int], str, int, int]:
        stop = asyncio.Event()
        address: list[str] = []
        runtime = LadderRuntime(settings, stop=stop, on_listen=address.append)
        ladder = asyncio.ensure_future(runtime.run())
        try:
            await asyncio.wait_for(_listening(address, ladder), 120)
            async with grpc.aio.insecure_channel(address[0]) as channel:
                stub = lp.LadderServiceStub(channel)
                counts = []
                for limit in (2**32 - 1, 100_000, MAX_GAMES + 1, 5, 0):
                    answer = await stub.ListGames(lp.ListGamesRequest(limit=limit),
                                                  timeout=60)
                    counts.append(len(answer.games))
                newest = await stub.ListGames(lp.ListGamesRequest(limit=1), timeout=60)
                standings = await stub.GetStandings(lp.GetStandingsRequest(), timeout=60)
                return (counts, newest.games[0].game_key, len(standings.standings),
                        standings.ByteSize())
        finally:
            stop.set()
            await asyncio.wait_for(ladder, 60.0)
            runtime.close()

    counts, newest, rows, size = asyncio.run(scenario())
    assert counts == [MAX_GAMES, MAX_GAMES, MAX_GAMES, 5, 20]
    assert newest == f"old-{GAMES - 1:05d}"
    assert rows == BOTS and size > 64 * 1024
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
