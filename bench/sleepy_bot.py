"""A sample bot that sleeps ``SLEEPY_BOT_MS`` milliseconds (default 10) before every
decision: a stand-in for a bot that thinks, costing time but no CPU.

``python bench/sleepy_bot.py [random|heuristic]`` plays as that sample bot (default
random). ``bench/cluster.py`` and ``bench/interrupt.py`` use it, and the tests make it the
house bot of their standing ladders: house bots play each other for as long as a ladder
runs, and at full speed a test's ladder would take a whole core while the test waits for
something else. ``python -m bench.sleepy_bot`` (from the repository's root) also plays in
process (``run --in-process``), where its sleep holds the loop as a thinking bot would."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.protocol import DecisionRequest
from harness.rules.actions import Action
from harness.rules.config import RulesConfig
from harness.rules.observation import Observation
from harness.sdk import Bot, run
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.random_bot import RandomBot

KINDS: dict[str, type[Bot]] = {"random": RandomBot, "heuristic": HeuristicBot}


def sleepy(kind: str, delay_s: float) -> Bot:
    """The sample bot ``kind``, sleeping ``delay_s`` before each decision."""

    class Sleepy(KINDS[kind]):  # type: ignore[misc,valid-type]
        name = "sleepy"

        def decide(self, request: DecisionRequest, rules: RulesConfig | None) -> Action:
            time.sleep(delay_s)
            action: Action = super().decide(request, rules)
            return action

        def act(self, obs: Observation) -> Action:
            time.sleep(delay_s)
            action: Action = super().act(obs)
            return action

    bot: Bot = Sleepy()
    return bot


def in_process_bot(argv: Sequence[str], env: Mapping[str, str]) -> Bot:
    """The bot for in-process play (harness.referee.inprocess)."""
    ms = env.get("SLEEPY_BOT_MS", os.environ.get("SLEEPY_BOT_MS", "10"))
    return sleepy(argv[0] if argv else "random", float(ms) / 1000)


if __name__ == "__main__":
    kinds = [arg for arg in sys.argv[1:] if arg in KINDS]
    run(in_process_bot(kinds, os.environ))
