"""A bot for the box tests: plays random legal actions, except that at its first decision
it does what ``BOX_BOT_MODE`` says:

* ``play``: nothing special;
* ``hog``: allocates 4 GiB, 64 MiB at a time (each written), then answers;
* ``spin``: burns CPU and never answers;
* ``sleep``: sleeps ``BOX_BOT_SLEEP`` seconds (using no CPU), then answers, at every
  decision;
* ``leftover``: starts a detached grandchild that outlives it (a new session, ignoring
  SIGTERM and SIGHUP, sleeping forever), then exits at once: its game ends with a crash.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time

from harness.protocol import DecisionRequest, convert
from harness.rules.actions import Action
from harness.rules.config import RulesConfig
from harness.sdk import Bot, run

MODE = os.environ.get("BOX_BOT_MODE", "play")


class BoxBot(Bot):
    name = "box-bot"

    def __init__(self) -> None:
        self.decisions = 0
        self.rng = random.Random(1)

    def decide(self, request: DecisionRequest, rules: RulesConfig | None) -> Action:
        self.decisions += 1
        if MODE == "hog" and self.decisions == 1:
            chunks = []
            for _ in range(64):  # 64 x 64 MiB = 4 GiB
                chunks.append(bytearray(b"x" * (64 << 20)))
            print(f"allocated {len(chunks) * 64} MiB", flush=True)
        elif MODE == "spin" and self.decisions == 1:
            while True:
                pass
        elif MODE == "sleep":
            time.sleep(float(os.environ.get("BOX_BOT_SLEEP", "0.5")))
        elif MODE == "leftover" and self.decisions == 1:
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    signal.signal(signal.SIGTERM, signal.SIG_IGN)
                    signal.signal(signal.SIGHUP, signal.SIG_IGN)
                    print(f"leftover {os.getpid()} running", flush=True)
                    while True:
                        time.sleep(1)
                os._exit(0)
            time.sleep(0.2)
            os._exit(9)
        return convert.action_from_pb(self.rng.choice(request.legal_actions))


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    run(BoxBot())
