"""The research loop end to end: OpenSpiel's ISMCTS through the registered game in
cutthroat and two-handed, the same ISMCTS exported as a harness bot, and a PettingZoo
policy that plays the same moves in the environment, in process and over gRPC."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.envs import euchre_v0
from harness.envs.adapter import PolicyBot, SpielBot
from harness.referee.arena import Arena
from harness.referee.inprocess import command_factory, play_many
from harness.referee.outcome import GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules import RulesConfig
from sample_bots import ismcts_bot as ismcts_example
from sample_bots.policy_bot import policy

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("form", ["cutthroat", "two-handed"])
def test_ismcts_plays_through_the_registered_game(form: str) -> None:
    returns = ismcts_example.play_hands(form, hands=2, simulations=10, seed=1)
    assert len(returns) == 2 and all(-4.0 <= r <= 4.0 for r in returns)


def test_ismcts_plays_as_a_harness_bot() -> None:
    bot = SpielBot(lambda game: ismcts_example.ismcts_bot(game, 8, 3), name="ismcts")
    random_bot = command_factory((sys.executable, "-m", "sample_bots.random_bot"),
                                 {"EUCHRE_BOT_SEED": "2"})
    result = play_many({"ismcts": lambda: bot, "random": random_bot}, ["ismcts", "random"],
                       RulesConfig.from_dict({"form": "two-handed", "target": 2}), [4])[0]
    assert result.termination is Termination.NORMAL and result.faults == ()
    mine = [a for h in result.record["hands"] for s, a in h["actions"] if s == 0]
    assert len(mine) >= 5


def env_actions(form: str, seed: int) -> tuple[int, list[list[list[Any]]]]:
    """The policy in every seat of the environment: the game seed and each hand's
    recorded actions."""
    env = euchre_v0.env(form=form, target=3)
    env.reset(seed=seed)
    game_seed = env.game_seed
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else policy(obs))
    assert env.game is not None
    return game_seed, [h["actions"] for h in env.game.to_record()["hands"]]


def test_a_policy_plays_the_same_in_the_environment_in_process_and_over_grpc(
        tmp_path: Path) -> None:
    form = "cutthroat"
    game_seed, expected = env_actions(form, 5)
    config = RulesConfig.from_dict({"form": form, "target": 3})
    local = play_many({"p": lambda: PolicyBot(policy)}, ["p"] * 3, config, [game_seed])[0]
    assert [h["actions"] for h in local.record["hands"]] == expected

    async def over_grpc() -> GameResult:
        async with Arena(log_dir=tmp_path) as arena:
            arena.add(Entrant("p", BotCommand(
                (sys.executable, "-m", "sample_bots.policy_bot"), cwd=str(REPO))), 3)
            return await arena.play("g", config, game_seed, ["p"] * 3,
                                    time_control=TimeControl(10.0, 60.0))
    remote = asyncio.run(over_grpc())
    assert remote.termination is Termination.NORMAL
    assert [h["actions"] for h in remote.record["hands"]] == expected
    assert sum(len(a) for a in expected) > 20
