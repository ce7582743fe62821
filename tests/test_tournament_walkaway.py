"""Walking away from a tournament un-plays nothing: a remote bot process dialing a
``run``'s referee over real gRPC closes its stream whenever it loses table 0 of a deal
set. Coming back at once, every game is played or forfeited and every one is stored and
rated; leaving for good, the tables it is not there for are its forfeits, stored even
though its no-shows stop the run, and the run's count is what the store holds."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from configs import HEURISTIC, bot, remote, toml_config

from harness.errors import StartupFailuresError
from harness.referee.outcome import FaultKind, Termination
from harness.results.rating import fit_ratings
from harness.storage.results import GameRow, ResultsStore
from harness.tournament.config import TournamentConfig, load_config
from harness.tournament.runner import RunState, TournamentRunner, store_path

ROOT = Path(__file__).resolve().parent.parent


def _config(tmp_path: Path, games: int) -> TournamentConfig:
    """The walker (a random bot) against the heuristic bot, which beats it in most games:
    the walker loses a table 0, and walks away, in all but a vanishing share of runs."""
    path = tmp_path / "walk.toml"
    path.write_text(toml_config("walk", output=tmp_path / "out", games=games, concurrency=1,
                                tc="5+30", max_startup_failures=2,
                                rules={"form": "two-handed", "target": 2},
                                bots=(bot("local", HEURISTIC), remote("far", "far-token-1"))))
    return load_config(path)


def _play(config: TournamentConfig, back_after: float) -> tuple[RunState, str, str]:
    """Run the tournament with the walking-away bot as ``far``; the run's state, the
    error that stopped it ("" if none) and what the bot said."""
    async def scenario() -> tuple[RunState, str, str]:
        address: list[str] = []
        runner = TournamentRunner(config, on_listen=address.append, startup_timeout=6.0)
        task = asyncio.ensure_future(runner.run())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120.0
        while not address:
            assert loop.time() < deadline and not task.done(), task
            await asyncio.sleep(0.02)
        bot = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "tests" / "walkaway_bot.py"), "--address", address[0],
            "--token", "far-token-1", "--streams", "1", "--back-after", str(back_after),
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        error = ""
        try:
            await asyncio.wait_for(task, 120.0)
        except StartupFailuresError as e:
            error = str(e)
        finally:
            bot.kill()
            _, said = await bot.communicate()
        return runner.state, error, said.decode(errors="replace")

    return asyncio.run(scenario())


def _stored(config: TournamentConfig) -> list[GameRow]:
    with ResultsStore(store_path(Path(config.output))) as store:
        return list(store.games(config.id))


def _far_lost(row: GameRow) -> bool:
    return row.ranking[row.seats.index("far")] != 1


def test_a_bot_that_walks_away_and_comes_back_has_every_game_stored_and_rated(
        tmp_path: Path) -> None:
    config = _config(tmp_path, games=8)
    state, error, said = _play(config, back_after=0.1)
    rows = _stored(config)
    assert error == "" and state.finished, (error, said[-2000:])
    assert "walked away after" in said, said[-2000:]
    assert sorted(r.game_key for r in rows) == sorted(g.key for g in config.make_format().games())
    assert state.done == len(rows) == 16
    ratings = fit_ratings(rows)
    assert ratings is not None and ratings.games["far"] == len(rows)
    far_score = sum(0.0 if _far_lost(r) else 1.0 for r in rows) / len(rows)
    assert ratings.score["far"] == pytest.approx(far_score, abs=1e-12)


@pytest.mark.waits
def test_a_bot_that_walks_away_for_good_forfeits_its_tables_and_they_stay_stored(
        tmp_path: Path) -> None:
    config = _config(tmp_path, games=20)
    state, error, said = _play(config, back_after=3600.0)
    rows = _stored(config)
    assert "walked away after" in said, said[-2000:]
    left = said.split("walked away after ", 1)[1].split()[0]
    assert "far" in error and "it had played, so its forfeits are stored" in error, error
    by_key = {r.game_key: r for r in rows}
    assert left in by_key and _far_lost(by_key[left])  # the game it lost, counted
    # (A slow first start may cost it a game before it ever played: not counted here.)
    no_shows = [r for r in rows if r.finished_at > by_key[left].finished_at
                and any(f.bot == "far" and f.kind is FaultKind.STARTUP_FAILURE
                        for f in r.faults)]
    assert len(no_shows) == 2, [r.record.get("detail") for r in rows]  # then the run stops
    assert all(r.termination is Termination.FORFEIT and _far_lost(r) for r in no_shows)
    # The other table of the set it walked away from: a forfeit charged to it (a no-show,
    # or a disconnect if the game began before its stream was seen to close).
    other = by_key[left.rsplit("/", 1)[0] + "/t1"]
    assert other.termination is Termination.FORFEIT and _far_lost(other)
    assert [f.bot for f in other.faults] == ["far"]
    # What the run counted is what the store holds, and the ratings count it all.
    assert state.done == len(rows)
    ratings = fit_ratings(rows)
    assert ratings is not None and ratings.games["far"] == len(rows)
