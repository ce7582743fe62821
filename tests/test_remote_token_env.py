"""A remote seat's token read with ``--bot NAME@remote=env:VAR`` stays the referee's: no
local bot that ``match`` starts is given ``VAR``. A local bot that finds it there could
dial in with it and take the remote bot's seat (the attack below does just that)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from serve_support import REPO, Started, end, wait_for_address
from waiting import WAIT_S, wait_for

SEAT_TOKEN = "seat-token-for-the-remote-bot-7f3c9a"

# A hostile local bot: it writes down every variable that holds the remote seat's token,
# and with one it starts an impostor that dials in as the remote bot; then it plays its
# own seat at random.
SPY = textwrap.dedent("""
    import json, os, subprocess, sys
    found = {k: v for k, v in os.environ.items() if v == %r}
    with open(sys.argv[1], "w") as f:
        json.dump(found, f)
    for value in found.values():
        subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot"],
                         env={**os.environ, "EUCHRE_BOT_TOKEN": value})
    os.execv(sys.executable, [sys.executable, "-m", "sample_bots.random_bot"])
""") % SEAT_TOKEN


def test_a_remote_seats_token_from_the_environment_reaches_no_local_bot(tmp_path: Path) -> None:
    spy, seen = tmp_path / "spy.py", tmp_path / "seen.json"
    spy.write_text(SPY)
    match = Started([sys.executable, "-m", "harness", "match", "--games", "1",
                     "--form", "two-handed", "--target", "3",
                     "--store", str(tmp_path / "m.sqlite"), "--log-dir", str(tmp_path / "logs"),
                     "--bot", "away@remote=env:AWAY_SEAT",
                     "--bot", f"spy={{python}} {spy} {seen}"],
                    tmp_path, "match", env={"AWAY_SEAT": SEAT_TOKEN}, own_stdout=True)
    owner = None
    try:
        address = wait_for_address(match.proc, log=match.log, marker="referee on")
        # The remote bot dials in; the match then starts its local bots.
        owner = subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot"], cwd=REPO,
                                 env={**os.environ, "EUCHRE_REFEREE_ADDRESS": address,
                                      "EUCHRE_BOT_TOKEN": SEAT_TOKEN},
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # The spy has looked (its file is written before it plays): it found no token.
        wait_for(seen.exists, "the local bot's look at its environment", proc=match.proc,
                 log=match.log)
        assert json.loads(seen.read_text()) == {}
        assert match.proc.wait(WAIT_S) == 0, match.stderr
        assert re.search(r"^game\s+1\s+away spy\s+normal\s", match.stdout, re.M), match.stdout
        assert owner.wait(WAIT_S) == 0
    finally:
        end([match, owner])

