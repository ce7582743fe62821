"""What a bot gains by leaving the ladder: nothing. A registered bot process that closes
both its streams whenever it loses table 0 of a deal set, and dials again 0.1 s later,
plays over real gRPC against a house bot for 30 sets: every game it finished is rated,
every table it was away for is its forfeit, and its rated score is exactly its score
over the stored games, live and after a restart."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from harness.competition.seatings import group_of
from harness.ladder.matchmaking import SetStatus
from harness.ladder.quarantine import QuarantinePolicy
from harness.ladder.registry import Registry
from harness.ladder.runtime import LadderRuntime
from harness.ladder.settings import LadderSettings
from harness.referee.outcome import FaultKind, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.results.elo import Ratings
from harness.rules.config import RulesConfig
from harness.storage.ladder import LadderStore
from harness.storage.results import GameRow

REPO = Path(__file__).resolve().parent.parent
SETS = 30
HOUSE = Entrant("house-random", BotCommand((sys.executable, "-m", "sample_bots.random_bot"),
                                           cwd=str(REPO)))


def _settings(tmp_path: Path) -> LadderSettings:
    return LadderSettings(
        store=tmp_path / "ladder.sqlite", log_dir=tmp_path / "logs",
        rules=RulesConfig(target=2), time_control=TimeControl.parse("5+30"),
        concurrency=1, house=((HOUSE, 2),), poll_seconds=0.05,
        # never benched: every set it walks away from must be played out to the end
        quarantine=QuarantinePolicy(bench_faults=1000, bench_window=1000))


def _score(row: GameRow, bot: str) -> float:
    return 1.0 if row.ranking[row.seats.index(bot)] == 1 else 0.0


def test_walking_away_after_every_lost_first_table_gains_nothing(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    with LadderStore(settings.store) as store:
        _, token = Registry(store).register("walker", "ann", concurrency=2)

    async def scenario() -> tuple[Ratings, list[GameRow], dict[str, SetStatus], str]:
        stop = asyncio.Event()
        address: list[str] = []
        runtime = LadderRuntime(settings, stop=stop, on_listen=address.append)
        ladder = asyncio.ensure_future(runtime.run())
        walker = None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 240.0
        try:
            while not address:
                assert loop.time() < deadline and not ladder.done(), ladder
                await asyncio.sleep(0.02)
            walker = await asyncio.create_subprocess_exec(
                sys.executable, str(REPO / "tests" / "walkaway_bot.py"), "--address",
                address[0], "--token", token.reveal(), cwd=REPO,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            while sum(1 for s in runtime.sets.sets()
                      if "walker" in s.base and s.status is not SetStatus.IN_PROGRESS) < SETS:
                assert loop.time() < deadline, f"too few sets: {runtime.sets.sets()}"
                assert not ladder.done(), ladder
                await asyncio.sleep(0.05)
            stop.set()
            await asyncio.wait_for(ladder, 60.0)
            assert runtime.ratings.refresh(force=True) is not None
            live = runtime.ratings.current
            assert live is not None
            rows = list(runtime.results.games(settings.ladder_id))
            sets = {s.key: s.status for s in runtime.sets.sets()}
        finally:
            stop.set()
            stderr = b""
            if walker is not None:
                walker.kill()
                _, stderr = await walker.communicate()
            runtime.close()
        return live, rows, sets, stderr.decode(errors="replace")

    live, rows, sets, walker_said = asyncio.run(scenario())
    mine = [r for r in rows if "walker" in r.seats]
    tables: dict[str, list[GameRow]] = defaultdict(list)
    for row in mine:
        tables[group_of(row.game_key)].append(row)
    lost_first = [k for k, games in tables.items() for g in games
                  if g.game_key.endswith("/t0") and _score(g, "walker") == 0.0]
    assert len(lost_first) >= 5, (len(lost_first), walker_said[-2000:])
    assert walker_said.count("walked away after") >= 5, walker_said[-2000:]

    # Every table of every set it walked away from is stored: played, or its forfeit.
    assert SetStatus.IN_PROGRESS not in sets.values()
    for key in lost_first:
        assert sorted(g.game_key[-2:] for g in tables[key]) == ["t0", "t1"] or \
            key == max(tables), (key, [g.game_key for g in tables[key]])
    charged = [r for r in mine if r.termination is Termination.FORFEIT
               and any(f.bot == "walker" and f.kind in (FaultKind.DISCONNECT,
                                                       FaultKind.STARTUP_FAILURE)
                       for f in r.faults)]
    assert charged, "the walker never forfeited a table it left"
    assert all(f.bot == "walker" for r in mine for f in r.faults)
    left = [r for r in charged if "left before table" in str(r.record.get("detail"))]
    assert all(r.game_key.endswith("/t1") and _score(r, "walker") == 0.0 for r in left)

    # Its rated score is its score over the games it finished plus the forfeits charged
    # to it: every stored game, nothing more, nothing less; the opponents' too.
    assert live.games["walker"] == len(mine)
    assert live.score["walker"] == pytest.approx(
        sum(_score(r, "walker") for r in mine) / len(mine), abs=1e-12)
    assert live.games["house-random"] == len(rows) == len(mine)

    # A restart rebuilds the same ratings from the store.
    rebuilt = LadderRuntime(settings)
    try:
        rebuilt.restore()
        again = rebuilt.ratings.current
    finally:
        rebuilt.close()
    assert again is not None
    assert again.games == live.games and again.score == live.score
