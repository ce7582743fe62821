"""A deterministic bot that works ``BUSY_BOT_LOOPS`` loop iterations (default 200,000,
a few milliseconds of CPU) before every decision, then plays a seeded random legal
action: the same CPU work at every decision of every run. For ``bench/sandbox.py``,
which copies it into a box's folder (a box sees only that folder and the harness)."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence

from harness.protocol import DecisionRequest, convert
from harness.rules.actions import Action
from harness.rules.config import RulesConfig
from harness.sdk import Bot, run


class BusyBot(Bot):
    name = "busy"

    def __init__(self, loops: int) -> None:
        self.loops = loops
        self.rng = random.Random(7)

    def on_game_start(self, rules: RulesConfig, seat: int, names: Sequence[str]) -> None:
        self.rng = random.Random(f"busy:{seat}")  # every game played the same way

    def decide(self, request: DecisionRequest, rules: RulesConfig | None) -> Action:
        total = 0
        for i in range(self.loops):
            total += i * i
        return convert.action_from_pb(self.rng.choice(request.legal_actions))


if __name__ == "__main__":
    run(BusyBot(int(os.environ.get("BUSY_BOT_LOOPS", "200000"))))
