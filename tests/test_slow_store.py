"""Nothing blocks the loop that times the bots: with a store whose every game write takes
two seconds (made slow on purpose, in this process), a real bot over real gRPC that answers
each decision in about 20 ms never gets a time fault under a 0.5 s limit and a 1 s bank,
in a tournament run and on a ladder, while other games end and are stored beside its own;
and on a ladder whose every bench takes two seconds to write, while another bot faults on
purpose to be benched again and again.

Were the writes on the loop, a decision in flight while another game is stored would be
read two seconds late and charged to the bot: more than its 0.5 s and its 1 s bank
together. The limit is ten times what the bot needs so that a loaded machine's jitter
stays out of the bank: with a 50 ms limit, at a load average of 15 to 20, the bot's
20 ms answers, late by its scheduling, once ran through a bank of 0.5 s and, beside a
second copy of the suite, through one of 1 s."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from configs import bot, toml_config
from waiting import wait_until

from harness.competition.policies import QuarantinePolicy
from harness.ladder import runtime as ladder_runtime
from harness.ladder.runtime import LadderRuntime
from harness.ladder.settings import LadderSettings
from harness.referee.outcome import FaultKind, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules.config import Form, RulesConfig
from harness.storage.ladder import BenchRow, LadderStore
from harness.storage.results import GameRow, ResultsStore
from harness.tournament import runner as tournament_runner
from harness.tournament.config import load_config
from harness.tournament.runner import TournamentRunner, store_path

REPO = Path(__file__).resolve().parent.parent
WRITE_SECONDS = 2.0
TC = "0.5+1"
PROMPT = (sys.executable, "-m", "sample_bots.faulty_bot", "--mode", "late", "--after", "1",
          "--delay", "0.02")  # answers each decision (but its first) 20 ms late


class SlowStore(ResultsStore):
    """A results store whose game writes take :data:`WRITE_SECONDS` (a slow disk)."""

    def record_game(self, game: GameRow) -> bool:
        time.sleep(WRITE_SECONDS)
        return super().record_game(game)


class SlowBenchStore(LadderStore):
    """A ladder store whose every new bench takes :data:`WRITE_SECONDS` to write."""

    def add_bench(self, bench: BenchRow) -> bool:
        time.sleep(WRITE_SECONDS)
        return super().add_bench(bench)


def _timeouts(rows: list[GameRow]) -> list[str]:
    return [f"{row.game_key}: {f.bot} {f.detail}" for row in rows for f in row.faults
            if f.kind is FaultKind.TIMEOUT]


@pytest.mark.waits
def test_a_slow_store_never_costs_a_tournament_bot_its_clock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tournament_runner, "ResultsStore", SlowStore)
    command = " ".join(("{python}", *PROMPT[1:]))
    path = tmp_path / "t.toml"
    path.write_text(toml_config(
        "slow", output=tmp_path / "out", games=3, concurrency=2, tc=TC,
        rules={"form": "two-handed", "target": 5},
        bots=(bot("prompt-a", command), bot("prompt-b", command))))
    config = load_config(path)
    state = asyncio.run(asyncio.wait_for(TournamentRunner(config).run(), 240))
    assert state.finished and state.done == 6
    with ResultsStore(store_path(tmp_path / "out")) as store:
        rows = list(store.games(config.id))
    assert len(rows) == 6
    assert _timeouts(rows) == []
    assert all(not row.faults for row in rows), [f for row in rows for f in row.faults]


def _ladder(tmp_path: Path, bots: dict[str, tuple[str, ...]],
            **extra: Any) -> LadderSettings:
    """A two-handed ladder of these house bots (name: command, two seats each), two
    sets at a time, under :data:`TC`."""
    return LadderSettings(
        store=tmp_path / "ladder.sqlite", log_dir=tmp_path / "logs",
        rules=RulesConfig(form=Form.TWO_HANDED, target=5),
        time_control=TimeControl.parse(TC), concurrency=2, poll_seconds=0.2,
        house=tuple((Entrant(name, BotCommand(command, cwd=str(REPO))), 2)
                    for name, command in bots.items()), **extra)


def _play_ladder(settings: LadderSettings, enough: Callable[[LadderRuntime], bool],
                 what: str) -> list[GameRow]:
    """Run the ladder until ``enough`` (at most 180 s), stop it; its stored games."""
    async def scenario() -> tuple[list[GameRow], LadderRuntime]:
        stop = asyncio.Event()
        runtime = LadderRuntime(settings, stop=stop)
        ladder = asyncio.ensure_future(runtime.run())
        try:
            await wait_until(lambda: ladder.done() or enough(runtime), what, 180,
                             interval=0.1)
            assert not ladder.done(), ladder
        finally:
            stop.set()
            await asyncio.wait_for(ladder, 60)
        return list(runtime.results.games(settings.ladder_id)), runtime

    rows, runtime = asyncio.run(scenario())
    runtime.close()
    return rows


@pytest.mark.waits
def test_a_slow_store_never_costs_a_ladder_bot_its_clock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ladder_runtime, "ResultsStore", SlowStore)
    settings = _ladder(tmp_path, {"prompt-a": PROMPT, "prompt-b": PROMPT})
    rows = _play_ladder(
        settings, lambda runtime: runtime.results.count_games(settings.ladder_id) >= 6,
        "6 stored games")
    assert len(rows) >= 6
    assert _timeouts(rows) == []


@pytest.mark.waits
def test_a_bot_benched_again_and_again_never_costs_another_bot_its_clock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot can choose when it is benched (it faults on purpose), and each bench is a
    write to the store: written on the loop, every bench of ``illegal`` would stop the
    clocks of the prompt bots' game in flight for the length of the write."""
    monkeypatch.setattr(ladder_runtime, "LadderStore", SlowBenchStore)
    illegal = (sys.executable, "-m", "sample_bots.faulty_bot", "--mode", "illegal")
    settings = _ladder(tmp_path, {"prompt-a": PROMPT, "prompt-b": PROMPT, "illegal": illegal},
                       quarantine=QuarantinePolicy(bench_faults=1, bench_window=1,
                                                   bench_seconds=0.2, bench_growth=1.0,
                                                   bench_max_seconds=0.2))

    def enough(runtime: LadderRuntime) -> bool:
        return (len(runtime.quarantine.history("illegal")) >= 2
                and sum(1 for row in runtime.results.games(settings.ladder_id)
                        if "illegal" not in row.seats) >= 4)

    rows = _play_ladder(settings, enough, "2 benches and 4 prompt games")
    with LadderStore(settings.store) as store:
        benches = len(store.benches("illegal"))
    rows = [row for row in rows if "illegal" not in row.seats]  # the prompt bots' own
    assert benches >= 2 and len(rows) >= 4
    assert _timeouts(rows) == []
    assert all(not row.faults for row in rows), [f for row in rows for f in row.faults]
