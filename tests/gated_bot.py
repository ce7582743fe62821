"""A random bot that holds a run back at a gate, so that a test can catch the run in its
middle however fast the machine is.

``python tests/gated_bot.py COUNT_FILE LIMIT OPEN_FILE``: every game this bot starts, in
any of its processes, adds a byte to ``COUNT_FILE``; once ``LIMIT`` games have started,
the next game's start waits (and with it the bot's moves) until ``OPEN_FILE`` exists.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from harness.rules.config import RulesConfig
from harness.sdk import run
from sample_bots.random_bot import RandomBot


class GatedBot(RandomBot):
    name = "gated"

    def __init__(self, count: Path, limit: int, gate: Path) -> None:
        super().__init__()
        self.count, self.limit, self.gate = count, limit, gate

    def on_game_start(self, rules: RulesConfig, seat: int, names: Sequence[str]) -> None:
        fd = os.open(self.count, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            os.write(fd, b".")  # one append: processes never lose each other's counts
        finally:
            os.close(fd)
        while self.count.stat().st_size > self.limit and not self.gate.exists():
            time.sleep(0.05)  # holds this process's every game; the test kills it


def main(argv: Sequence[str]) -> None:
    count, limit, gate = argv
    run(GatedBot(Path(count), int(limit), Path(gate)))


if __name__ == "__main__":
    main(sys.argv[1:])
