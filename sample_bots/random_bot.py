"""``random``: plays a uniformly random legal action at every decision."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence

from harness.rules.actions import Action
from harness.rules.observation import Observation
from harness.sdk import Bot, run


class RandomBot(Bot):
    name = "random"
    version = "1.0"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return self.rng.choice(legal)


def main() -> None:
    seed = os.environ.get("EUCHRE_BOT_SEED")
    run(RandomBot(int(seed) if seed else None))


if __name__ == "__main__":
    main()
