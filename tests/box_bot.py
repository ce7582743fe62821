"""A bot for the box tests: plays random legal actions, except that at its first decision
it does what ``BOX_BOT_MODE`` says:

* ``play``: nothing special;
* ``hog``: allocates 4 GiB, 64 MiB at a time (each written), then answers;
* ``spin``: burns CPU and never answers;
* ``sleep``: sleeps ``BOX_BOT_SLEEP`` seconds (using no CPU), then answers, at every
  decision;
* ``leftover``: starts a process that would outlive it (a new session, ignoring SIGTERM
  and SIGHUP, sleeping an hour), then exits at once: its game ends with a crash;
* ``ponder``: "thinks ahead" while the others play: a thread burns ``BOX_BOT_SLEEP``
  seconds of CPU after each of its replies, and the next decision waits until it is done
  (so that all of it lands between two replies, however loaded the machine);
* ``spinner``: from its first decision on, a thread burns CPU without end;
* ``work``: burns ``BOX_BOT_SLEEP`` seconds of CPU at every decision, then answers.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time

from harness.protocol import DecisionRequest, convert
from harness.rules.actions import Action
from harness.rules.config import RulesConfig
from harness.sdk import Bot, run

# The mode and the sleep may also be the first two arguments (for `match`, which has no
# per-bot environment).
ARGS = [a for a in sys.argv[1:] if not a.startswith("-")][:2]
LEFTOVER = ("import os, signal, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
            "print('leftover', os.getpid(), 'running', flush=True)\n"
            "time.sleep(3600)\n")
MODE = ARGS[0] if ARGS else os.environ.get("BOX_BOT_MODE", "play")
SLEEP = float(ARGS[1]) if len(ARGS) > 1 else float(os.environ.get("BOX_BOT_SLEEP", "0.5"))


def burn(seconds: float) -> None:
    """Use ``seconds`` of this thread's CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class BoxBot(Bot):
    name = "box-bot"

    def __init__(self) -> None:
        self.decisions = 0
        self.rng = random.Random(1)
        self.pondering: threading.Thread | None = None

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
            time.sleep(SLEEP)
        elif MODE == "ponder":
            if self.pondering is not None:
                self.pondering.join()
            self.pondering = threading.Thread(target=burn, args=(SLEEP,), daemon=True)
            self.pondering.start()
        elif MODE == "spinner" and self.decisions == 1:
            threading.Thread(target=burn, args=(float("inf"),), daemon=True).start()
        elif MODE == "work":
            burn(SLEEP)
        elif MODE == "leftover" and self.decisions == 1:
            leftover = subprocess.Popen(
                [sys.executable, "-c", LEFTOVER], stdout=subprocess.PIPE,
                start_new_session=True)
            assert leftover.stdout is not None
            print(leftover.stdout.readline().decode().strip(), flush=True)
            os._exit(9)  # leave it behind
        return convert.action_from_pb(self.rng.choice(request.legal_actions))


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    run(BoxBot())
