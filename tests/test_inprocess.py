"""In-process play (``harness.referee.inprocess``, ``euchre-harness run --in-process``):
the same decisions and the same records as over gRPC, stored like any run, a crashing
bot forfeits, and a bot that does not allow it is refused."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.protocol import DecisionRequest, GameEvent, convert
from harness.referee.arena import Arena
from harness.referee.inprocess import InProcessArena, command_factory, play_many
from harness.referee.outcome import FaultKind, GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules import Action, Observation, RulesConfig
from harness.sdk import Bot, listens_to_events, takes_observations
from harness.storage.results import ResultsStore
from harness.tournament.runner import store_path

REPO = Path(__file__).resolve().parent.parent
ENV = {"EUCHRE_BOT_SEED": "11"}
# The heuristic plays a random action a third of the time: with EUCHRE_BOT_SEED those
# choices, like the random bot's, are the same wherever the game is played.
COMMANDS = {"heuristic": (sys.executable, "-m", "sample_bots.heuristic_bot", "--epsilon", "0.3"),
            "random": (sys.executable, "-m", "sample_bots.random_bot")}


def seatings(players: int) -> list[list[str]]:
    return [(["heuristic", "random"] * 2)[:players], (["random", "heuristic"] * 2)[:players]]

TC = TimeControl(10.0, 60.0)


def over_grpc(config: RulesConfig, seeds: Sequence[int], log_dir: Path) -> list[GameResult]:
    seats = seatings(config.players)

    async def main() -> list[GameResult]:
        async with Arena(log_dir=log_dir) as arena:
            for name, command in COMMANDS.items():
                arena.add(Entrant(name, BotCommand(command, cwd=str(REPO), env=ENV)), 2)
            return [await arena.play(f"g{i}", config, seed, seats[i % 2], time_control=TC)
                    for i, seed in enumerate(seeds)]
    return asyncio.run(main())


def in_process(config: RulesConfig, seeds: Sequence[int]) -> list[GameResult]:
    arena = InProcessArena({name: command_factory(command, ENV)
                            for name, command in COMMANDS.items()})
    seats = seatings(config.players)

    async def main() -> list[GameResult]:
        return [await arena.play(f"g{i}", config, seed, seats[i % 2], time_control=TC)
                for i, seed in enumerate(seeds)]
    return asyncio.run(main())


VOLATILE = ("decision_ms", "started_at")


@pytest.mark.parametrize("form", ["four-handed", "cutthroat"])
def test_in_process_games_are_the_games_played_over_grpc(tmp_path: Path, form: str) -> None:
    config = RulesConfig.from_dict({"form": form, "target": 5})
    seeds = [3, 4]
    grpc_results = over_grpc(config, seeds, tmp_path / "logs")
    local_results = in_process(config, seeds)
    for a, b in zip(grpc_results, local_results, strict=True):
        assert a.termination is Termination.NORMAL and b.termination is Termination.NORMAL
        assert set(a.record) == set(b.record)
        assert {k: v for k, v in a.record.items() if k not in VOLATILE} == \
               {k: v for k, v in b.record.items() if k not in VOLATILE}
        assert len(a.record["decision_ms"]) == len(b.record["decision_ms"]) > 20


def test_run_in_process_stores_the_games_the_report_counts(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--in-process", "--quiet",
         "--set", "games=2", "--set", f"output={tmp_path / 'out'}"],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "in process (no referee, no clock)" in proc.stderr
    with ResultsStore(store_path(tmp_path / "out")) as store:
        rows = list(store.games())
    # the built-in field of four sample bots: 6 pairings x 2 deal sets x 2 seatings
    assert len(rows) == 24
    assert all(r.termination is Termination.NORMAL for r in rows)
    assert all(len(r.record["decision_ms"]) > 0 and r.record["hands"] for r in rows)
    assert "heuristic" in proc.stdout and "24" in proc.stdout
    json.dumps(rows[0].record)  # the stored record is plain JSON, as from the referee


class Exploding(Bot):
    name = "exploding"

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if obs.phase.value == "play":
            raise RuntimeError("boom")
        return legal[0]


def test_a_bot_that_raises_forfeits_with_a_crash() -> None:
    random_bot = command_factory(COMMANDS["random"], ENV)
    results = play_many({"exploding": Exploding, "random": random_bot},
                        ["exploding", "random", "exploding", "random"], RulesConfig(), [5])
    result = results[0]
    assert result.termination is Termination.FORFEIT
    assert result.faults[-1].kind is FaultKind.CRASH
    assert result.faults[-1].bot == "exploding"
    assert "boom" in result.faults[-1].detail


def test_a_bot_that_does_not_allow_in_process_play_is_refused() -> None:
    with pytest.raises(ConfigError, match="does not allow in-process"):
        command_factory((sys.executable, "-m", "sample_bots.faulty_bot"))
    with pytest.raises(ConfigError, match="python -m MODULE"):
        command_factory(("./my-bot",))


class WireReader(Bot):
    """Overrides decide (the DecisionRequest) and on_event, not act: in process it must
    still get the messages, as over the wire."""

    name = "wire-reader"

    def __init__(self) -> None:
        self.requests: list[int] = []
        self.events = 0

    def on_event(self, event: GameEvent) -> None:
        self.events += 1

    def decide(self, request: DecisionRequest, rules: RulesConfig | None) -> Action:
        self.requests.append(request.request_id)
        assert request.time_left_ms > 0
        return convert.action_from_pb(request.legal_actions[0])


class ObservationReader(Bot):
    """Decides from the Observation (act), ignores events: handed the Observation."""

    name = "observation-reader"

    def __init__(self) -> None:
        self.seen: list[Observation] = []

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        self.seen.append(obs)
        return legal[-1]


def test_a_bot_that_reads_the_wire_message_still_gets_it_in_process() -> None:
    wire, plain = WireReader(), ObservationReader()
    assert not takes_observations(wire) and listens_to_events(wire)
    assert takes_observations(plain) and not listens_to_events(plain)
    assert takes_observations(command_factory(COMMANDS["random"], ENV)())  # act too
    results = play_many({"wire": lambda: wire, "plain": lambda: plain},
                        ["wire", "plain", "wire", "plain"], RulesConfig(), [8],
                        rotate=False)
    assert results[0].termination is Termination.NORMAL
    decisions = len(results[0].record["decision_ms"])
    # One bot object sits in two seats: between them, they were asked every decision.
    assert len(wire.requests) + len(plain.seen) == decisions
    assert len(wire.requests) > 10 and wire.events > 4 * len(results[0].record["hands"])
    assert all(obs.legal_actions for obs in plain.seen)


class Garbage(Bot):
    name = "garbage"

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return "pass"  # type: ignore[return-value]


def test_a_bot_that_returns_no_action_crashes_in_process() -> None:
    results = play_many({"garbage": Garbage, "random": command_factory(COMMANDS["random"], ENV)},
                        ["garbage", "random", "garbage", "random"], RulesConfig(), [5],
                        rotate=False)
    fault = results[0].faults[-1]
    assert results[0].termination is Termination.FORFEIT
    assert fault.kind is FaultKind.CRASH and fault.bot == "garbage"
    assert "not an Action" in fault.detail
