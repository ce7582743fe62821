"""A random bot that sleeps ``SLEEPY_BOT_MS`` milliseconds (default 10) before every
decision: a stand-in for a bot that thinks, costing time but no CPU. For
``bench/cluster.py``."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.protocol import DecisionRequest
from harness.rules.actions import Action
from harness.rules.config import RulesConfig
from harness.sdk import run
from sample_bots.random_bot import RandomBot


class SleepyBot(RandomBot):
    name = "sleepy"

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s

    def decide(self, request: DecisionRequest, rules: RulesConfig | None) -> Action:
        time.sleep(self.delay_s)
        return super().decide(request, rules)


if __name__ == "__main__":
    run(SleepyBot(float(os.environ.get("SLEEPY_BOT_MS", "10")) / 1000))
