"""``random``: plays a uniformly random legal action at every decision.

With ``EUCHRE_BOT_SEED`` its choices restart from that seed (and its seat) at every game,
so a game's moves depend on the deal and seat only, not on which games the process
played before: a tournament gives the same results however its games are spread over
bot processes or cluster workers."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Mapping, Sequence

from harness.protocol import DecisionRequest, convert
from harness.rules.actions import Action
from harness.rules.config import RulesConfig
from harness.rules.observation import Observation
from harness.sdk import Bot, run


class RandomBot(Bot):
    name = "random"
    version = "1.0"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def on_game_start(self, rules: RulesConfig, seat: int, names: Sequence[str]) -> None:
        if self.seed is not None:
            self.rng = random.Random(f"{self.seed}:{seat}")

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.rng.choice(legal)

    def decide(self, request: DecisionRequest, rules: RulesConfig | None) -> Action:
        # A random player needs no observation: skip decoding it (the SDK's default
        # builds the full Observation for choose()).
        return convert.action_from_pb(self.rng.choice(request.legal_actions))

    def act(self, obs: Observation) -> Action:
        # The same choice from the Observation (in-process play): the legal actions are
        # in the same order, so the same draw picks the same action.
        return self.rng.choice(obs.legal_actions)


def in_process_bot(argv: Sequence[str], env: Mapping[str, str]) -> RandomBot:
    """The bot for in-process play (harness.referee.inprocess)."""
    seed = env.get("EUCHRE_BOT_SEED", os.environ.get("EUCHRE_BOT_SEED"))
    return RandomBot(int(seed) if seed else None)


def main() -> None:
    run(in_process_bot(sys.argv[1:], {}))


if __name__ == "__main__":
    main()
